/**
 * The pure side of feedback documents (src/documents/evidence.ts): integrity states, the fields a
 * document is compared on, the proofOfPayment it names and the receipt check. No I/O.
 */
import fc from 'fast-check';
import { keccak256, pad, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  compareWithLog,
  decimalOf,
  ERC20_TRANSFER_TOPIC,
  integrityState,
  judgeTransfer,
  keccakHex,
  parseFeedbackDocument,
  paymentProofOf,
  payeesOf,
  sha256Hex,
  type LoggedRating,
  type PaymentProof,
  type ReceiptLike,
} from '../src/documents/evidence.js';

const enc = (s: string) => new TextEncoder().encode(s);
const ZERO = `0x${'0'.repeat(64)}`;
const RATER = '0x1111111111111111111111111111111111111111';
const OWNER = '0x2222222222222222222222222222222222222222';
const WALLET = '0x3333333333333333333333333333333333333333';
const OTHER = '0x4444444444444444444444444444444444444444';
const TOKEN = '0x5555555555555555555555555555555555555555';
const TX = `0x${'ab'.repeat(32)}`;

const log: LoggedRating = {
  agentId: '7',
  rater: RATER,
  valueRaw: '875',
  valueDecimals: 1,
  tag1: 'quality',
  tag2: 'speed',
  endpoint: 'https://agent.example/mcp',
};

const transferLog = (from: string, to: string, amount: bigint, address = TOKEN) => ({
  address,
  topics: [ERC20_TRANSFER_TOPIC, pad(from as `0x${string}`), pad(to as `0x${string}`)],
  data: pad(toHex(amount)),
});

describe('integrity', () => {
  it('hashes: keccak256 as the chain computes it, sha256 as hex', () => {
    const b = enc('{"a":1}');
    expect(keccakHex(b)).toBe(keccak256(b));
    expect(sha256Hex(b)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('match, mismatch, no_commitment, not_json and changed', () => {
    const bytes = enc('{"agentId":7}');
    const k = keccakHex(bytes);
    expect(integrityState({ feedbackHash: k, keccak: k, firstKeccak: null, isJson: true })).toBe('match');
    expect(
      integrityState({
        feedbackHash: k.toUpperCase().replace('0X', '0x'),
        keccak: k,
        firstKeccak: null,
        isJson: true,
      }),
    ).toBe('match');
    expect(
      integrityState({ feedbackHash: keccakHex(enc('x')), keccak: k, firstKeccak: null, isJson: true }),
    ).toBe('mismatch');
    expect(integrityState({ feedbackHash: ZERO, keccak: k, firstKeccak: null, isJson: true })).toBe(
      'no_commitment',
    );
    expect(integrityState({ feedbackHash: null, keccak: k, firstKeccak: null, isJson: true })).toBe(
      'no_commitment',
    );
    expect(integrityState({ feedbackHash: ZERO, keccak: k, firstKeccak: null, isJson: false })).toBe(
      'not_json',
    );
    expect(
      integrityState({ feedbackHash: k, keccak: k, firstKeccak: keccakHex(enc('old')), isJson: true }),
    ).toBe('changed');
    // the same bytes fetched again stay a match
    expect(integrityState({ feedbackHash: k, keccak: k, firstKeccak: k, isJson: true })).toBe('match');
  });

  it('property: a committed hash matches exactly the bytes it was computed from', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), (a, b) => {
        const ka = keccakHex(a);
        const s = integrityState({ feedbackHash: ka, keccak: keccakHex(b), firstKeccak: null, isJson: true });
        expect(s).toBe(Buffer.from(a).equals(Buffer.from(b)) ? 'match' : 'mismatch');
      }),
    );
  });

  it('parses only a JSON object in strict UTF-8', () => {
    expect(parseFeedbackDocument(enc('{"a":1}'))).toEqual({ a: 1 });
    expect(parseFeedbackDocument(enc('\uFEFF{"a":1}'))).toEqual({ a: 1 });
    expect(parseFeedbackDocument(enc('[1,2]'))).toBeNull();
    expect(parseFeedbackDocument(enc('"text"'))).toBeNull();
    expect(parseFeedbackDocument(enc('<html>'))).toBeNull();
    expect(parseFeedbackDocument(new Uint8Array([0x7b, 0xff, 0x7d]))).toBeNull();
  });
});

describe('fields compared with the log', () => {
  const good = {
    agentRegistry: 'eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
    agentId: 7,
    clientAddress: `eip155:8453:${RATER.toUpperCase().replace('0X', '0x')}`,
    createdAt: '2026-01-01T00:00:00Z',
    value: 875,
    valueDecimals: 1,
    tag1: 'quality',
    tag2: 'speed',
    endpoint: 'https://agent.example/mcp',
  };

  it('a faithful file has no mismatch (CAIP-10 client, scaled value)', () => {
    expect(compareWithLog(good, log)).toEqual([]);
    expect(compareWithLog({ ...good, value: '87.5', valueDecimals: 0 }, log)).toEqual([]);
    expect(compareWithLog({ ...good, agentId: '7' }, log)).toEqual([]);
  });

  it('lists each field that disagrees, and the required ones that are missing', () => {
    const bad = { ...good, agentId: 8, clientAddress: OTHER, value: 900, tag1: 'price', endpoint: 'x' };
    expect(compareWithLog(bad, log).map((m) => m.field)).toEqual([
      'agentId',
      'clientAddress',
      'value',
      'tag1',
      'endpoint',
    ]);
    const m = compareWithLog(bad, log).find((x) => x.field === 'value')!;
    expect(m.log).toBe('87.5');
    expect(compareWithLog({}, log)).toEqual([
      { field: 'agentId', document: null, log: '7' },
      { field: 'clientAddress', document: null, log: RATER },
      { field: 'value', document: null, log: '87.5' },
    ]);
  });

  it('an older file\u2019s score is compared with the logged value; optional fields only when present', () => {
    const older = { agentId: 7, clientAddress: RATER, score: 87.5 };
    expect(compareWithLog(older, log)).toEqual([]);
    expect(compareWithLog({ ...older, score: 80 }, log).map((m) => m.field)).toEqual(['score']);
  });

  it('property: value/valueDecimals equal to the log never mismatch, any other value does', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 18 }),
        fc.integer({ min: 0, max: 6 }),
        (raw, dec, extra) => {
          const l = { ...log, valueRaw: raw.toString(), valueDecimals: dec };
          const base = { agentId: 7, clientAddress: RATER };
          // the same number written with more decimals
          const same = {
            ...base,
            value: (raw * 10n ** BigInt(extra)).toString(),
            valueDecimals: dec + extra,
          };
          expect(compareWithLog(same, l)).toEqual([]);
          const other = { ...base, value: (raw + 1n).toString(), valueDecimals: dec };
          expect(compareWithLog(other, l).map((m) => m.field)).toEqual(['value']);
        },
      ),
    );
  });

  it('hostile text is cut short', () => {
    const m = compareWithLog(
      { agentId: 7, clientAddress: RATER, value: 875, valueDecimals: 1, tag1: 'x'.repeat(10_000) },
      log,
    );
    expect(m[0]!.document!.length).toBeLessThanOrEqual(201);
    expect(decimalOf('1e9')).toBeNull();
    expect(decimalOf('12.50')).toEqual({ num: 1250n, scale: 2 });
  });
});

describe('proofOfPayment', () => {
  const proof: PaymentProof = { fromAddress: RATER, toAddress: OWNER, chainId: 8453, txHash: TX };
  const ok: ReceiptLike = { status: 'success', logs: [transferLog(RATER, OWNER, 1_000_000n)] };

  it('reads the EIP field and the older snake_case one; chain ids as numbers or CAIP-2', () => {
    expect(paymentProofOf({ proofOfPayment: { ...proof, chainId: 'eip155:8453' } })).toEqual(proof);
    expect(paymentProofOf({ proof_of_payment: { ...proof, chainId: '8453' } })).toEqual(proof);
    expect(paymentProofOf({})).toBeNull();
    expect(paymentProofOf({ proofOfPayment: { ...proof, txHash: 'nope' } })).toBe('malformed');
    expect(paymentProofOf({ proofOfPayment: 'paid' })).toBe('malformed');
  });

  it('verified: the rater paid the owner or the agent wallet a token amount', () => {
    expect(judgeTransfer(proof, RATER, payeesOf(OWNER, WALLET), ok)).toEqual({
      state: 'verified',
      reason: null,
      token: TOKEN,
      amount: '1000000',
    });
    const toWallet = { ...proof, toAddress: WALLET };
    const r = { status: 'success' as const, logs: [transferLog(RATER, WALLET, 5n)] };
    expect(judgeTransfer(toWallet, RATER, payeesOf(OWNER, WALLET), r).state).toBe('verified');
  });

  it('mismatch: a proof naming a transfer to someone else, from someone else, or a failed transaction', () => {
    const payees = payeesOf(OWNER, WALLET);
    expect(judgeTransfer({ ...proof, toAddress: OTHER }, RATER, payees, ok)).toMatchObject({
      state: 'mismatch',
      reason: 'to_not_agent',
    });
    // the proof names the owner, but the transaction paid someone else
    const paidOther = { status: 'success' as const, logs: [transferLog(RATER, OTHER, 1_000_000n)] };
    expect(judgeTransfer(proof, RATER, payees, paidOther)).toMatchObject({
      state: 'mismatch',
      reason: 'no_matching_transfer',
    });
    expect(judgeTransfer({ ...proof, fromAddress: OTHER }, RATER, payees, ok).reason).toBe('from_not_rater');
    expect(judgeTransfer(proof, RATER, payees, { ...ok, status: 'reverted' }).reason).toBe('tx_failed');
    // an ERC-721 Transfer (4 topics) or a zero amount is no payment
    const nft = {
      status: 'success' as const,
      logs: [
        { ...transferLog(RATER, OWNER, 1n), topics: [...transferLog(RATER, OWNER, 1n).topics, pad('0x01')] },
      ],
    };
    expect(judgeTransfer(proof, RATER, payees, nft).state).toBe('mismatch');
    const zero = { status: 'success' as const, logs: [transferLog(RATER, OWNER, 0n)] };
    expect(judgeTransfer(proof, RATER, payees, zero).state).toBe('mismatch');
  });

  it('not_found: the chain has no such transaction', () => {
    expect(judgeTransfer(proof, RATER, payeesOf(OWNER, null), null)).toMatchObject({ state: 'not_found' });
  });

  it('payees: the owner and a 20-byte agentWallet, nothing malformed', () => {
    expect(payeesOf(OWNER, WALLET)).toEqual([OWNER, WALLET]);
    expect(payeesOf(null, '0x1234')).toEqual([]);
  });
});
