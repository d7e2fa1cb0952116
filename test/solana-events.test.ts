import { describe, expect, it } from 'vitest';
import { BorshReader } from '../src/indexer/solana/borsh.js';
import { toAgentWallet, toIndexEvents } from '../src/indexer/solana/normalize.js';
import { decodeEvent, eventDiscriminator } from '../src/indexer/solana/program-events.js';
import { extractProgramData } from '../src/indexer/solana/program-logs.js';
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
  responseAppended,
  walletResetOnOwnerSync,
  walletUpdated,
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
    expect([...eventDiscriminator('ResponseAppended')]).toEqual([168, 169, 214, 193, 171, 1, 232, 123]);
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

  it('decodes ResponseAppended (round trip) onto the response event NewFeedback joins', () => {
    const [asset, client, responder] = [key(1), key(5), key(3)];
    const hash = Uint8Array.from({ length: 32 }, (_, i) => i);
    // markup, a NUL, SQL and a byte that is not UTF-8 (0xff), as a hostile program call could log
    const hostile = Buffer.concat([
      Buffer.from(`<img src=x onerror="alert(1)">\u0000'; DROP TABLE ratings; --`, 'utf8'),
      Buffer.of(0xff),
    ]);
    const bytes = responseAppended({
      asset,
      client,
      index: 3n,
      slot: 77n,
      responder,
      uri: '',
      uriBytes: hostile,
      hash,
    });
    const d = decodeEvent(bytes);
    expect(d).toMatchObject({
      ok: true,
      event: {
        name: 'ResponseAppended',
        asset: asset.b58,
        client: client.b58,
        feedbackIndex: 3n,
        slot: 77n,
        responder: responder.b58,
        // the NUL and the invalid byte made storable (U+FFFD), the rest kept as logged
        responseUri: `<img src=x onerror="alert(1)">\uFFFD'; DROP TABLE ratings; --\uFFFD`,
      },
    });
    if (!d.ok || d.event.name !== 'ResponseAppended') return;
    expect([...d.event.responseHash]).toEqual([...hash]);
    expect([...d.event.sealHash]).toEqual(new Array(32).fill(7));
    const fbd = decodeEvent(newFeedback({ asset, client, index: 3n, slot: 7n, value: 1n, decimals: 0 }));
    if (!fbd.ok) throw new Error('NewFeedback did not decode');
    const [fb] = toIndexEvents(fbd.event, pos);
    const [resp] = toIndexEvents(d.event, pos);
    expect(resp).toEqual({
      ...pos,
      kind: 'response',
      agentId: asset.b58,
      rater: client.b58,
      feedbackIndex: '3',
      responder: responder.b58,
      responseUri: `<img src=x onerror="alert(1)">\uFFFD'; DROP TABLE ratings; --\uFFFD`,
      responseHash: `0x${Buffer.from(hash).toString('hex')}`,
    });
    // the keys a response joins its rating on are the rating's own
    expect(fb).toMatchObject({ kind: 'feedback', agentId: asset.b58, rater: client.b58, feedbackIndex: '3' });
  });

  it('refuses a truncated or padded ResponseAppended, and the shorter pre-SEAL layout', () => {
    const full = responseAppended({
      asset: key(1),
      client: key(2),
      index: 0n,
      slot: 1n,
      responder: key(3),
      uri: 'ipfs://r',
    });
    for (const cut of [full.length - 1, full.length - 8, 8 + 32 + 32 + 8 + 8 + 32 + 16, 9])
      expect(decodeEvent(full.subarray(0, cut))).toMatchObject({
        ok: false,
        ignored: false,
        reason: /^ResponseAppended: need/,
      });
    expect(decodeEvent(Buffer.concat([full, Buffer.of(0)]))).toMatchObject({
      ok: false,
      reason: 'ResponseAppended: 1 trailing bytes',
    });
    // 0.5.0 (no seal_hash): 32 bytes short of the layout read here, refused rather than misread
    const sealAt = 8 + 32 + 32 + 8 + 8 + 32 + 32; // discriminator, asset … response_hash
    const preSeal = Buffer.concat([full.subarray(0, sealAt), full.subarray(sealAt + 32)]);
    expect(preSeal.length).toBe(full.length - 32);
    expect(decodeEvent(preSeal)).toMatchObject({ ok: false, ignored: false });
  });

  it('decodes WalletUpdated and WalletResetOnOwnerSync (round trip) onto the agent wallet in force', () => {
    const [asset, w1, w2, owner] = [key(1), key(6), key(7), key(3)];
    const set = decodeEvent(walletUpdated(asset, null, w1, owner));
    expect(set).toEqual({
      ok: true,
      event: {
        name: 'WalletUpdated',
        asset: asset.b58,
        oldWallet: null,
        newWallet: w1.b58,
        updatedBy: owner.b58,
      },
    });
    const moved = decodeEvent(walletUpdated(asset, w1, w2, owner));
    expect(moved).toMatchObject({ ok: true, event: { oldWallet: w1.b58, newWallet: w2.b58 } });
    // transfer_agent clears the wallet with a WalletUpdated to the all-zero key
    const cleared = decodeEvent(walletUpdated(asset, w2, null, owner));
    expect(cleared).toMatchObject({ ok: true, event: { newWallet: '11111111111111111111111111111111' } });
    const reset = decodeEvent(walletResetOnOwnerSync(asset, w2, owner));
    expect(reset).toEqual({
      ok: true,
      event: {
        name: 'WalletResetOnOwnerSync',
        asset: asset.b58,
        oldWallet: w2.b58,
        newWallet: '11111111111111111111111111111111',
        ownerAfterSync: owner.b58,
      },
    });
    if (!set.ok || !moved.ok || !cleared.ok || !reset.ok) return;
    // no normalized IndexEvent: the wallet history is its own row
    expect(toIndexEvents(set.event, pos)).toEqual([]);
    expect(toIndexEvents(reset.event, pos)).toEqual([]);
    expect(toAgentWallet(set.event, pos)).toEqual({
      ...pos,
      kind: 'agent_wallet',
      agentId: asset.b58,
      wallet: w1.b58,
    });
    expect(toAgentWallet(moved.event, pos)).toMatchObject({ wallet: w2.b58 });
    expect(toAgentWallet(cleared.event, pos)).toMatchObject({ wallet: null });
    expect(toAgentWallet(reset.event, pos)).toMatchObject({ wallet: null });
    const reg = decodeEvent(agentRegistered(asset, key(2), owner, 'u'));
    if (reg.ok) expect(toAgentWallet(reg.event, pos)).toBeNull();
  });

  it('refuses a truncated or padded wallet event, and a bad option tag', () => {
    for (const full of [
      walletUpdated(key(1), key(6), key(7), key(3)),
      walletUpdated(key(1), null, key(7), key(3)),
      walletResetOnOwnerSync(key(1), key(6), key(3)),
    ]) {
      const name = full.subarray(0, 8).equals(eventDiscriminator('WalletUpdated'))
        ? 'WalletUpdated'
        : 'WalletResetOnOwnerSync';
      for (const cut of [full.length - 1, full.length - 32, 8 + 32, 9])
        expect(decodeEvent(full.subarray(0, cut))).toMatchObject({
          ok: false,
          ignored: false,
          reason: new RegExp(`^${name}: need`),
        });
      expect(decodeEvent(Buffer.concat([full, Buffer.of(0)]))).toMatchObject({
        ok: false,
        ignored: false,
        reason: `${name}: 1 trailing bytes`,
      });
    }
    const bad = walletUpdated(key(1), key(6), key(7), key(3));
    bad[8 + 32] = 2; // old_wallet's option tag
    expect(decodeEvent(bad)).toMatchObject({ ok: false, reason: /invalid option tag 2/ });
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
