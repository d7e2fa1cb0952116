/**
 * Offline Solana fixtures: a tiny Borsh ENCODER for the agent_registry_8004 event layouts (IDL
 * v0.5.2, QuantuLabs/8004-solana `idl/agent_registry_8004.json`), deterministic keys and
 * signatures, recorded-shape transactions, and a REPLAY transport for @solana/kit's
 * createSolanaRpcFromTransport that answers getGenesisHash / getSlot / getSignaturesForAddress /
 * getTransaction from an in-memory ledger. Nothing here reaches the network.
 */
import { createHash } from 'node:crypto';
import { getBase58Decoder, type RpcTransport } from '@solana/kit';
import { refreshAfterPass } from '../../src/after-pass.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { runIndexPass } from '../../src/indexer/pass.js';
import { quietLogger } from './indexer-fixtures.js';

export const PROGRAM_ID = '8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ';
export const CORE_PROGRAM = 'CoREENxT6tW1HoK8ypY1SxRMZTcVPm7R94rH4PZNhX7d';
export const MAINNET_GENESIS = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

const b58 = getBase58Decoder();

/** A deterministic 32-byte key (base58) and its bytes. */
export function key(seed: number): { b58: string; bytes: Uint8Array } {
  const bytes = new Uint8Array(createHash('sha256').update(`key:${seed}`).digest());
  return { b58: b58.decode(bytes), bytes };
}

export function sig(seed: number): string {
  const a = createHash('sha256').update(`sig:${seed}:a`).digest();
  const b = createHash('sha256').update(`sig:${seed}:b`).digest();
  return b58.decode(new Uint8Array(Buffer.concat([a, b])));
}

// ------------------------------------------------------------------ Borsh encoder

export class BorshWriter {
  private parts: Buffer[] = [];
  raw(b: Uint8Array): this {
    this.parts.push(Buffer.from(b));
    return this;
  }
  u8(n: number): this {
    return this.raw(Uint8Array.of(n));
  }
  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }
  u16(n: number): this {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(n);
    return this.raw(b);
  }
  u32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return this.raw(b);
  }
  u64(n: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(n);
    return this.raw(b);
  }
  i128(n: bigint): this {
    const u = BigInt.asUintN(128, n);
    const b = Buffer.alloc(16);
    b.writeBigUInt64LE(u & ((1n << 64n) - 1n));
    b.writeBigUInt64LE(u >> 64n, 8);
    return this.raw(b);
  }
  bytes(b: Uint8Array): this {
    return this.u32(b.length).raw(b);
  }
  string(s: string): this {
    return this.bytes(Buffer.from(s, 'utf8'));
  }
  pubkey(k: { bytes: Uint8Array }): this {
    return this.raw(k.bytes);
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export function disc(name: string): Buffer {
  return createHash('sha256').update(`event:${name}`).digest().subarray(0, 8);
}

type Key = { b58: string; bytes: Uint8Array };

export function agentRegistered(asset: Key, collection: Key, owner: Key, uri: string): Buffer {
  return new BorshWriter()
    .raw(disc('AgentRegistered'))
    .pubkey(asset)
    .pubkey(collection)
    .pubkey(owner)
    .bool(false)
    .string(uri)
    .done();
}

export function agentOwnerSynced(asset: Key, oldOwner: Key, newOwner: Key): Buffer {
  return new BorshWriter()
    .raw(disc('AgentOwnerSynced'))
    .pubkey(asset)
    .pubkey(oldOwner)
    .pubkey(newOwner)
    .done();
}

export function uriUpdated(asset: Key, updatedBy: Key, uri: string): Buffer {
  return new BorshWriter().raw(disc('UriUpdated')).pubkey(asset).pubkey(updatedBy).string(uri).done();
}

export function metadataSet(asset: Key, k: string, value: Uint8Array): Buffer {
  return new BorshWriter().raw(disc('MetadataSet')).pubkey(asset).bool(false).string(k).bytes(value).done();
}

export interface FeedbackArgs {
  asset: Key;
  client: Key;
  index: bigint;
  slot: bigint;
  value: bigint;
  decimals: number;
  tag1?: string;
  tag2?: string;
  endpoint?: string;
  uri?: string;
  fileHash?: Uint8Array | null;
}

export function newFeedback(a: FeedbackArgs): Buffer {
  const w = new BorshWriter()
    .raw(disc('NewFeedback'))
    .pubkey(a.asset)
    .pubkey(a.client)
    .u64(a.index)
    .u64(a.slot)
    .i128(a.value)
    .u8(a.decimals)
    .u8(1)
    .u8(90); // score: Some(90)
  if (a.fileHash) w.u8(1).raw(a.fileHash);
  else w.u8(0);
  return w
    .raw(new Uint8Array(32).fill(7)) // seal_hash
    .bool(true) // atom_enabled
    .u8(2) // new_trust_tier
    .u16(8000) // new_quality_score
    .u16(5000) // new_confidence
    .u8(3) // new_risk_score
    .u8(100) // new_diversity_ratio
    .bool(true) // is_unique_client
    .raw(new Uint8Array(32).fill(9)) // new_feedback_digest
    .u64(a.index + 1n) // new_feedback_count
    .string(a.tag1 ?? 'quality')
    .string(a.tag2 ?? '')
    .string(a.endpoint ?? '')
    .string(a.uri ?? '')
    .done();
}

export function feedbackRevoked(asset: Key, client: Key, index: bigint, slot: bigint): Buffer {
  return new BorshWriter()
    .raw(disc('FeedbackRevoked'))
    .pubkey(asset)
    .pubkey(client)
    .u64(index)
    .raw(new Uint8Array(32).fill(7)) // seal_hash
    .u64(slot)
    .u8(90) // original_score
    .bool(true) // atom_enabled
    .bool(true) // had_impact
    .u8(1) // new_trust_tier
    .u16(7000)
    .u16(4000)
    .raw(new Uint8Array(32).fill(11)) // new_revoke_digest
    .u64(1n) // new_revoke_count
    .done();
}

export interface ResponseArgs {
  asset: Key;
  client: Key;
  index: bigint;
  slot: bigint;
  responder: Key;
  uri: string;
  /** The URI's bytes as logged, when they are not UTF-8 (overrides `uri`). */
  uriBytes?: Uint8Array;
  hash?: Uint8Array;
}

/** ResponseAppended (SEAL v1 layout: the answered feedback's seal_hash after response_hash). */
export function responseAppended(a: ResponseArgs): Buffer {
  return new BorshWriter()
    .raw(disc('ResponseAppended'))
    .pubkey(a.asset)
    .pubkey(a.client)
    .u64(a.index)
    .u64(a.slot)
    .pubkey(a.responder)
    .raw(a.hash ?? new Uint8Array(32).fill(0x5a)) // response_hash
    .raw(new Uint8Array(32).fill(7)) // seal_hash
    .raw(new Uint8Array(32).fill(13)) // new_response_digest
    .u64(1n) // new_response_count
    .bytes(a.uriBytes ?? Buffer.from(a.uri, 'utf8'))
    .done();
}

/** The all-zero key: the program's "no wallet" in new_wallet. */
const ZERO_KEY: Key = { b58: '11111111111111111111111111111111', bytes: new Uint8Array(32) };

const optionKey = (w: BorshWriter, k: Key | null) => (k ? w.u8(1).pubkey(k) : w.u8(0));

/** WalletUpdated { asset, old_wallet: Option<pubkey>, new_wallet (null: the all-zero key), updated_by }. */
export function walletUpdated(
  asset: Key,
  oldWallet: Key | null,
  newWallet: Key | null,
  updatedBy: Key,
): Buffer {
  return optionKey(new BorshWriter().raw(disc('WalletUpdated')).pubkey(asset), oldWallet)
    .pubkey(newWallet ?? ZERO_KEY)
    .pubkey(updatedBy)
    .done();
}

/** WalletResetOnOwnerSync { asset, old_wallet: Option<pubkey>, new_wallet (all zero), owner_after_sync }. */
export function walletResetOnOwnerSync(asset: Key, oldWallet: Key | null, ownerAfterSync: Key): Buffer {
  return optionKey(new BorshWriter().raw(disc('WalletResetOnOwnerSync')).pubkey(asset), oldWallet)
    .pubkey(ZERO_KEY)
    .pubkey(ownerAfterSync)
    .done();
}

/** Program logs of one top-level instruction of our program emitting `events` (base64 lines). */
export function programLogs(
  events: Buffer[],
  opts: { cpiData?: Buffer; instruction?: string } = {},
): string[] {
  const lines = [
    `Program ${PROGRAM_ID} invoke [1]`,
    `Program log: Instruction: ${opts.instruction ?? 'Register'}`,
  ];
  if (opts.cpiData) {
    lines.push(
      `Program ${CORE_PROGRAM} invoke [2]`,
      'Program log: Instruction: Create',
      `Program data: ${opts.cpiData.toString('base64')}`,
      `Program ${CORE_PROGRAM} consumed 12000 of 180000 compute units`,
      `Program ${CORE_PROGRAM} success`,
    );
  }
  for (const e of events) lines.push(`Program data: ${e.toString('base64')}`);
  lines.push(`Program ${PROGRAM_ID} consumed 40000 of 200000 compute units`, `Program ${PROGRAM_ID} success`);
  return lines;
}

// ------------------------------------------------------------------ the ledger and its transport

export interface LedgerTx {
  signature: string;
  slot: number;
  /** Unix seconds; null: the node has no block time. */
  blockTime: number | null;
  logs: string[];
  /** A failed transaction (meta.err and the signature's err). */
  failed?: boolean;
}

export interface Replay {
  transport: RpcTransport;
  /** Ledger, any order (the transport serves it newest first, in-slot order reversed). */
  txs: LedgerTx[];
  head: number;
  /** Methods served, in order (for assertions). */
  calls: { method: string; params: unknown }[];
  /** Answer the next n requests with an HTTP 429 (as the kit HTTP transport raises it). */
  fail429(n: number): void;
}

function txResponse(t: LedgerTx, payer: string): unknown {
  return {
    slot: t.slot,
    blockTime: t.blockTime,
    version: 0,
    meta: {
      err: t.failed ? { InstructionError: [0, { Custom: 6001 }] } : null,
      status: t.failed ? { Err: { InstructionError: [0, { Custom: 6001 }] } } : { Ok: null },
      fee: 5000,
      preBalances: [1_000_000_000, 0, 1],
      postBalances: [999_995_000, 0, 1],
      innerInstructions: [],
      logMessages: t.logs,
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: 52000,
    },
    transaction: {
      signatures: [t.signature],
      message: {
        accountKeys: [payer, key(999).b58, PROGRAM_ID],
        header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1 },
        instructions: [{ programIdIndex: 2, accounts: [0, 1], data: '3Bxs4h24hBtQy9rw', stackHeight: null }],
        recentBlockhash: key(998).b58,
        addressTableLookups: [],
      },
    },
  };
}

export function createReplay(txs: LedgerTx[], head: number): Replay {
  let fail = 0;
  const replay: Replay = {
    txs,
    head,
    calls: [],
    fail429(n) {
      fail = n;
    },
    transport: (async ({ payload }: { payload: unknown }) => {
      const { id, method, params } = payload as { id: unknown; method: string; params: unknown[] };
      replay.calls.push({ method, params });
      if (fail > 0) {
        fail--;
        throw Object.assign(new Error('HTTP error (429): Too Many Requests'), {
          context: { statusCode: 429, message: 'Too Many Requests' },
        });
      }
      const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
      switch (method) {
        case 'getGenesisHash':
          return ok(MAINNET_GENESIS);
        case 'getSlot':
          return ok(replay.head);
        case 'getSignaturesForAddress': {
          const [addr, cfg = {}] = params as [string, { before?: string; limit?: number }];
          if (addr !== PROGRAM_ID) return ok([]);
          const order = replay.txs
            .map((t, i) => ({ t, i }))
            .filter(({ t }) => t.slot <= replay.head)
            .sort((a, b) => b.t.slot - a.t.slot || b.i - a.i)
            .map(({ t }) => t);
          let start = 0;
          if (cfg.before) {
            const at = order.findIndex((t) => t.signature === cfg.before);
            start = at < 0 ? order.length : at + 1;
          }
          const page = order.slice(start, start + (cfg.limit ?? 1000));
          return ok(
            page.map((t) => ({
              signature: t.signature,
              slot: t.slot,
              err: t.failed ? { InstructionError: [0, { Custom: 6001 }] } : null,
              memo: null,
              blockTime: t.blockTime,
              confirmationStatus: 'finalized',
            })),
          );
        }
        case 'getTransaction': {
          const [s] = params as [string];
          const t = replay.txs.find((x) => x.signature === s && x.slot <= replay.head);
          return ok(t ? txResponse(t, key(500).b58) : null);
        }
        default:
          return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
      }
    }) as RpcTransport,
  };
  return replay;
}

/**
 * The built-in configuration with Solana alone enabled, its RPC a closed port (a replay transport
 * answers instead), no start block, and `confirmations` slots of margin below the head.
 */
export function solanaOnlyConfig(confirmations: number): Config {
  const base = loadConfig({});
  return {
    ...base,
    chains: base.chains.map((c) =>
      c.network === 'solana'
        ? { ...c, rpcUrl: 'http://127.0.0.1:9/never-used', startBlock: null, confirmations, enabled: true }
        : { ...c, enabled: false },
    ),
  };
}

/**
 * One quiet index pass (the free aggregates refreshed after it) over `txs` as a node whose head is
 * `head` serves them, `pageLimit` signatures a page; throws unless it succeeded. Returns the Solana
 * chain's result.
 */
export async function indexSolanaLedger(
  db: Database,
  config: Config,
  txs: LedgerTx[],
  o: { pageLimit: number; head: number },
) {
  const r = await runIndexPass({
    db,
    config,
    log: quietLogger(),
    progress: 'off',
    afterPass: refreshAfterPass,
    solana: {
      transport: createReplay(txs, o.head).transport,
      pageLimit: o.pageLimit,
      baseDelayMs: 1,
      maxDelayMs: 2,
    },
  });
  if (r.status !== 'ok' || r.failed.length > 0) throw new Error(`pass failed: ${JSON.stringify(r)}`);
  return r.chains.find((c) => c.network === 'solana')!;
}
