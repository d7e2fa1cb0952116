import { describe, expect, it } from 'vitest';
import {
  BorshReader,
  decodeEvent,
  eventDiscriminator,
  extractProgramData,
  toIndexEvents,
} from '../src/indexer/solana-events.js';
import {
  CORE_PROGRAM,
  PROGRAM_ID,
  agentOwnerSynced,
  agentRegistered,
  feedbackRevoked,
  key,
  metadataSet,
  newFeedback,
  programLogs,
  BorshWriter,
} from './helpers/solana-fixtures.js';

const pos = { network: 'solana', txHash: 'sig', logIndex: 0, blockNumber: 7, blockTime: null };

describe('solana events (IDL agent_registry_8004 v0.5.2)', () => {
  it('discriminators are sha256("event:<Name>")[0..8] as published in the IDL', () => {
    expect([...eventDiscriminator('AgentRegistered')]).toEqual([191, 78, 217, 54, 232, 100, 189, 85]);
    expect([...eventDiscriminator('AgentOwnerSynced')]).toEqual([101, 228, 184, 252, 20, 185, 70, 249]);
    expect([...eventDiscriminator('NewFeedback')]).toEqual([14, 162, 58, 194, 131, 42, 11, 149]);
    expect([...eventDiscriminator('FeedbackRevoked')]).toEqual([205, 16, 31, 94, 54, 101, 16, 199]);
    expect([...eventDiscriminator('UriUpdated')]).toEqual([170, 199, 78, 167, 49, 84, 102, 11]);
    expect([...eventDiscriminator('MetadataSet')]).toEqual([190, 125, 71, 119, 14, 31, 26, 197]);
  });

  it('Borsh reader: i128 sign, u64 range, bounds and bad tags', () => {
    const b = new BorshWriter()
      .i128(-15n)
      .i128((1n << 126n) + 3n)
      .u64(2n ** 64n - 1n)
      .u8(2)
      .done();
    const r = new BorshReader(b);
    expect(r.i128()).toBe(-15n);
    expect(r.i128()).toBe((1n << 126n) + 3n);
    expect(r.u64()).toBe(2n ** 64n - 1n);
    expect(() => r.bool()).toThrow(/invalid bool/);
    expect(() => new BorshReader(Uint8Array.of(1, 0)).u32()).toThrow(/need 4 bytes/);
    expect(() => new BorshReader(new BorshWriter().u32(1000).done()).string()).toThrow(/need 1000/);
  });

  it('decodes every indexed event and maps it onto normalized events', () => {
    const [asset, col, o1, o2, c1] = [key(1), key(2), key(3), key(4), key(5)];
    const reg = decodeEvent(agentRegistered(asset, col, o1, 'ipfs://x'));
    expect(reg.ok).toBe(true);
    if (!reg.ok) return;
    expect(toIndexEvents(reg.event, pos)).toEqual([
      { ...pos, kind: 'registered', agentId: asset.b58, agentUri: 'ipfs://x', minter: o1.b58 },
      {
        ...pos,
        logIndex: 1,
        kind: 'transfer',
        agentId: asset.b58,
        from: '11111111111111111111111111111111',
        to: o1.b58,
      },
    ]);
    const sync = decodeEvent(agentOwnerSynced(asset, o1, o2));
    expect(sync.ok && toIndexEvents(sync.event, pos)).toEqual([
      { ...pos, kind: 'transfer', agentId: asset.b58, from: o1.b58, to: o2.b58 },
    ]);
    const fb = decodeEvent(
      newFeedback({
        asset,
        client: c1,
        index: 3n,
        slot: 7n,
        value: -12345n,
        decimals: 3,
        tag1: 'a\u0000b',
        fileHash: new Uint8Array(32).fill(0xab),
      }),
    );
    expect(fb.ok && toIndexEvents(fb.event, pos)[0]).toMatchObject({
      kind: 'feedback',
      rater: c1.b58,
      feedbackIndex: '3',
      valueRaw: '-12345',
      valueDecimals: 3,
      value: '-12.345',
      tag1: 'a\uFFFDb',
      feedbackHash: `0x${'ab'.repeat(32)}`,
    });
    const rv = decodeEvent(feedbackRevoked(asset, c1, 3n, 9n));
    expect(rv.ok && toIndexEvents(rv.event, pos)).toEqual([
      { ...pos, kind: 'revocation', agentId: asset.b58, rater: c1.b58, feedbackIndex: '3' },
    ]);
    const md = decodeEvent(metadataSet(asset, 'type', Buffer.from('assistant')));
    expect(md.ok && toIndexEvents(md.event, pos)[0]).toMatchObject({
      kind: 'metadata',
      key: 'type',
      valueHex: '0x617373697374616e74',
      valueText: 'assistant',
    });
  });

  it('refuses truncated, padded and unknown payloads without throwing', () => {
    const fb = newFeedback({ asset: key(1), client: key(2), index: 0n, slot: 1n, value: 1n, decimals: 0 });
    expect(decodeEvent(fb.subarray(0, 60))).toMatchObject({ ok: false, ignored: false });
    expect(decodeEvent(Buffer.concat([fb, Buffer.of(0)]))).toMatchObject({ ok: false, reason: /trailing/ });
    expect(decodeEvent(Buffer.alloc(12, 1))).toMatchObject({ ok: false, reason: /unknown discriminator/ });
    expect(decodeEvent(Buffer.alloc(3))).toMatchObject({ ok: false });
  });

  it('reads only the data lines of the program itself, not CPI callees or callers', () => {
    const ours = agentRegistered(key(1), key(2), key(3), 'u');
    const theirs = newFeedback({
      asset: key(1),
      client: key(2),
      index: 0n,
      slot: 1n,
      value: 1n,
      decimals: 0,
    });
    const logs = [
      ...programLogs([ours], { cpiData: theirs }),
      // another program at top level, then ours called by it (CPI): only ours counts
      `Program ${CORE_PROGRAM} invoke [1]`,
      `Program data: ${theirs.toString('base64')}`,
      `Program ${PROGRAM_ID} invoke [2]`,
      `Program data: ${ours.toString('base64')}`,
      `Program ${PROGRAM_ID} success`,
      `Program data: ${theirs.toString('base64')}`,
      `Program ${CORE_PROGRAM} success`,
      `Program ${PROGRAM_ID} invoke [1]`,
      'Program data: not*base64',
      `Program ${PROGRAM_ID} failed: custom program error: 0x1771`,
    ];
    const { items, truncated } = extractProgramData(logs, PROGRAM_ID);
    expect(truncated).toBe(false);
    expect(items.map((i) => i.index)).toEqual([0, 1, 2]);
    expect(Buffer.from(items[0]!.data!)).toEqual(ours);
    expect(Buffer.from(items[1]!.data!)).toEqual(ours);
    expect(items[2]!.data).toBeNull();
    expect(extractProgramData([...logs, 'Log truncated'], PROGRAM_ID).truncated).toBe(true);
  });
});
