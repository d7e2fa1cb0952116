/**
 * The hand-written event decoders (src/indexer/evm-abi-decode.ts) against viem's generic
 * decodeEventLog: the same arguments on random valid logs of every known event, the same refusal
 * on hostile data (short data, offsets and lengths pointing anywhere), and the scanner's decoding
 * skipping such a log with a warning.
 */
import fc from 'fast-check';
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, type AbiEvent, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { decodeKnownEvent } from '../src/indexer/evm-abi-decode.js';
import { IDENTITY_EVENTS, REPUTATION_EVENTS } from '../src/indexer/evm-abi.js';
import { decodeLog, type DecodeContext, type RawLog } from '../src/indexer/evm-decode.js';

const EVENTS: readonly AbiEvent[] = [...IDENTITY_EVENTS, ...REPUTATION_EVENTS];

const hexBytes = (n: number) =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** A random valid value of an ABI type the registries' events use. */
function valueOf(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'address':
      return hexBytes(20);
    case 'uint256':
      return fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
    case 'uint64':
      return fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
    case 'int128':
      return fc.bigInt({ min: -(1n << 127n), max: (1n << 127n) - 1n });
    case 'uint8':
      return fc.integer({ min: 0, max: 255 });
    case 'string':
      return anyText;
    case 'bytes':
      return fc.uint8Array({ maxLength: 100 }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
    case 'bytes32':
      return hexBytes(32);
  }
  throw new Error(`no generator for ${type}`);
}

/** A random valid log of `event`: its topics and data as a node would serve them. */
function logOf(event: AbiEvent): fc.Arbitrary<{ topics: Hex[]; data: Hex }> {
  const args = event.inputs.map((i) => valueOf(i.type));
  return fc.tuple(...args).map((values) => {
    const named = Object.fromEntries(event.inputs.map((inp, i) => [inp.name!, values[i]]));
    const topics = encodeEventTopics({ abi: [event], eventName: event.name, args: named } as never) as Hex[];
    const dataInputs = event.inputs.filter((i) => !i.indexed);
    const data = encodeAbiParameters(
      dataInputs,
      dataInputs.map((i) => named[i.name!]),
    );
    return { topics, data };
  });
}

function viemArgs(event: AbiEvent, topics: Hex[], data: Hex): Record<string, unknown> {
  const d = decodeEventLog({ abi: [event], topics: topics as [Hex, ...Hex[]], data, strict: true });
  return Object.fromEntries(
    Object.entries(d.args as Record<string, unknown>).map(([k, v]) => [
      k,
      typeof v === 'string' ? v.toLowerCase() : v,
    ]),
  );
}

/** Both decoders' outcome: the arguments (strings lower-cased), or 'throws'. */
function outcomes(event: AbiEvent, topics: Hex[], data: Hex): [unknown, unknown] {
  let v: unknown;
  let h: unknown;
  try {
    v = viemArgs(event, topics, data);
  } catch {
    v = 'throws';
  }
  try {
    const a = decodeKnownEvent(topics[0]!.toLowerCase(), topics, data);
    h = Object.fromEntries(
      Object.entries(a).map(([k, x]) => [k, typeof x === 'string' ? x.toLowerCase() : x]),
    );
  } catch {
    h = 'throws';
  }
  return [v, h];
}

describe('hand-written event decoders', () => {
  for (const event of EVENTS) {
    it(`${event.name}: the same arguments as viem's decodeEventLog on random valid logs`, () => {
      fc.assert(
        fc.property(logOf(event), ({ topics, data }) => {
          const [v, h] = outcomes(event, topics, data);
          expect(v).not.toBe('throws');
          expect(h).toEqual(v);
        }),
        { numRuns: 200 },
      );
    });
  }

  const dataEvents = EVENTS.filter((e) => e.inputs.some((i) => !i.indexed));
  for (const event of dataEvents) {
    it(`${event.name}: hostile data (cut short, words overwritten) is refused where viem refuses it`, () => {
      const hostile = logOf(event).chain(({ topics, data }) => {
        const bytes = (data.length - 2) / 2;
        return fc
          .record({
            cut: fc.integer({ min: 0, max: bytes }),
            word: fc.integer({ min: 0, max: Math.max(0, Math.floor(bytes / 32) - 1) }),
            value: fc.oneof(
              fc.bigInt({ min: 0n, max: BigInt(bytes + 64) }),
              fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
            ),
            how: fc.constantFrom('cut', 'word', 'both'),
          })
          .map(({ cut, word, value, how }) => {
            let d = data.slice(2);
            if (how !== 'cut') {
              const w = value.toString(16).padStart(64, '0');
              d = d.slice(0, word * 64) + w + d.slice(word * 64 + 64);
            }
            if (how !== 'word') d = d.slice(0, cut * 2);
            return { topics, data: `0x${d}` as Hex };
          });
      });
      fc.assert(
        fc.property(hostile, ({ topics, data }) => {
          const [v, h] = outcomes(event, topics, data);
          expect(h).toEqual(v);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('a one-word head and nothing after it holds no string: refused, as viem refuses it (found by the property above)', () => {
    for (const event of EVENTS.filter((e) => e.name === 'Registered' || e.name === 'URIUpdated')) {
      const { topics } = fc.sample(logOf(event), { numRuns: 1, seed: 11 })[0]!;
      for (const data of [`0x${'00'.repeat(32)}`, `0x${'00'.repeat(31)}20`] as Hex[])
        expect(outcomes(event, topics, data)).toEqual(['throws', 'throws']);
      // one word more and both read the empty string
      expect(outcomes(event, topics, `0x${'00'.repeat(64)}` as Hex)[1]).toEqual(
        outcomes(event, topics, `0x${'00'.repeat(64)}` as Hex)[0],
      );
    }
  });

  it('the scanner skips an undecodable log with a warning, as before', () => {
    const skipped: string[] = [];
    const ctx: DecodeContext = {
      network: 'base',
      identity: '0x1111111111111111111111111111111111111111',
      reputation: '0x2222222222222222222222222222222222222222',
      skip: (_l, why) => skipped.push(why),
      keyCut: () => undefined,
    };
    const feedback = REPUTATION_EVENTS[0];
    const { topics, data } = fc.sample(logOf(feedback), { numRuns: 1, seed: 7 })[0]!;
    const base = {
      address: ctx.reputation,
      topics,
      blockNumber: '0x10',
      logIndex: '0x0',
      transactionHash: `0x${'ab'.repeat(32)}`,
      removed: false,
    } as unknown as RawLog;
    expect(decodeLog({ ...base, data: data }, ctx)?.kind).toBe('feedback');
    expect(decodeLog({ ...base, data: data.slice(0, 2 + 64 * 5) as Hex }, ctx)).toBeNull();
    // the offset of tag1 pointing past the end
    const badOffset =
      `0x${data.slice(2, 2 + 64 * 3)}${'f'.padStart(64, '0')}${data.slice(2 + 64 * 4)}` as Hex;
    expect(decodeLog({ ...base, data: badOffset }, ctx)).toBeNull();
    expect(decodeLog({ ...base, data: '0x' }, ctx)).toBeNull();
    expect(skipped).toHaveLength(3);
  });
});
