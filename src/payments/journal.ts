/**
 * The settlement journal: a local append-only file (JSON lines) where the paywall writes every
 * settlement the facilitator reports (claim key, payer, tx hash, amount, network, resource,
 * receipt key, time), flushed to disk (fsync) BEFORE it tries to record the settlement in the
 * database. A settlement whose database write is lost (the database stopped between settle and
 * record) is therefore never forgotten: a retry of the same header on this process, `serve` at
 * start, while it runs (as soon as the database answers again, and on a timer: journal-replay.ts)
 * and at every reconciliation, and `repindex reconcile-payments` replay it into the database
 * (`replayJournal`), after which the buyer's retry is served from its receipt.
 *
 * Lines: `{"kind":"settled",…}` when the settlement is known, `{"kind":"recorded",…}` once the
 * database holds it. A torn last line (power loss mid-write) is skipped. The file is only appended
 * to (O_APPEND), so several processes may share one; each reads it whole when it needs it (rare:
 * a retry of a stuck claim, a reconciliation).
 *
 * Compaction (`compact`, run by each reconciliation once the file passes 1 MiB): the file is renamed
 * aside (`<path>.compacting-<pid>-<time>`; appends from then on create a fresh file), a grace
 * period lets an append that had already opened the old file finish, the settlements the aside file
 * holds that are not yet recorded are appended to the fresh file, and the aside file is deleted.
 * Readers read the journal and every aside file, so a crash in between loses nothing.
 */
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Database } from '../db/database.js';
import { recordSettlement, type ClaimKey } from '../store/payments.js';

export interface JournalSettlement {
  network: string;
  payer: string;
  nonce: string;
  resource: string;
  amount: string;
  receipt_key: string;
  tx: string;
  /** ISO time the settlement was reported. */
  at: string;
}

export interface SettlementJournal {
  readonly path: string;
  /** Appends a settlement and flushes it to disk; throws when it could not be made durable. */
  settled(s: JournalSettlement): Promise<void>;
  /** Notes that the database now holds this settlement. */
  recorded(key: ClaimKey): Promise<void>;
  /**
   * Notes that this process could not record a settlement it journaled (its database write
   * failed): the settlement stays pending, and whoever listens (`onUnrecorded`: the running
   * replay, journal-replay.ts) replays it as soon as the database answers again.
   */
  unrecorded(key: ClaimKey): void;
  /** Calls `fn` on every `unrecorded`. */
  onUnrecorded(fn: () => void): void;
  /**
   * Whether this process is recording this settlement right now (journaled, its database write
   * under way): a replay leaves it to that write.
   */
  recording(key: ClaimKey): boolean;
  /** Settlements not (yet) known to be in the database, oldest first. */
  pending(): Promise<JournalSettlement[]>;
  /** The journaled settlement of one claim, if any (recorded or not). */
  find(key: ClaimKey): Promise<JournalSettlement | undefined>;
  /**
   * Rewrites the journal with only its unrecorded settlements once it holds at least `minBytes`;
   * null when it was smaller (or absent).
   */
  compact(opts?: { minBytes?: number; graceMs?: number }): Promise<{ kept: number; before: number } | null>;
}

/** Journal size from which a reconciliation compacts it. */
export const JOURNAL_COMPACT_BYTES = 1 << 20;

const keyOf = (k: { network: string; payer: string; nonce: string }) =>
  `${k.network}|${k.payer.toLowerCase()}|${k.nonce.toLowerCase()}`;

export function openSettlementJournal(path: string): SettlementJournal {
  let dirReady: Promise<unknown> | null = null;
  /** Settlements this process journaled and is recording (claim keys). */
  const inProgress = new Set<string>();
  const listeners: (() => void)[] = [];
  /** Appends a line; `durable` flushes it to disk first (a `recorded` line is only a hint: lost, a
   * replay records the settlement again, idempotently, so it skips the fsync on the paid path). */
  async function append(line: object, durable = true): Promise<void> {
    dirReady ??= mkdir(dirname(path), { recursive: true });
    await dirReady;
    const fh = await open(path, 'a', 0o600);
    try {
      await fh.appendFile(`${JSON.stringify(line)}\n`, 'utf8');
      if (durable) await fh.sync();
    } finally {
      await fh.close();
    }
  }
  /** The journal and the aside files of a compaction that has not finished (or crashed). */
  async function files(): Promise<string[]> {
    const dir = dirname(path);
    const prefix = `${basename(path)}.compacting-`;
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
    }
    return [path, ...names.filter((n) => n.startsWith(prefix)).map((n) => join(dir, n))];
  }
  async function textOf(file: string): Promise<string> {
    try {
      return await readFile(file, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
      return '';
    }
  }
  async function read(
    only?: string,
  ): Promise<{ settled: Map<string, JournalSettlement>; recorded: Set<string> }> {
    let text = '';
    for (const f of only ? [only] : await files()) text += `${await textOf(f)}\n`;
    const settled = new Map<string, JournalSettlement>();
    const recorded = new Set<string>();
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let o: Partial<JournalSettlement> & { kind?: string };
      try {
        o = JSON.parse(line) as typeof o;
      } catch {
        continue; // a torn line
      }
      if (typeof o.network !== 'string' || typeof o.payer !== 'string' || typeof o.nonce !== 'string')
        continue;
      const k = keyOf(o as JournalSettlement);
      if (o.kind === 'recorded') recorded.add(k);
      else if (
        o.kind === 'settled' &&
        typeof o.tx === 'string' &&
        typeof o.receipt_key === 'string' &&
        typeof o.resource === 'string' &&
        typeof o.amount === 'string'
      ) {
        const { kind: _kind, ...s } = o;
        settled.set(k, s as JournalSettlement);
      }
    }
    return { settled, recorded };
  }
  return {
    path,
    async settled(s) {
      // In progress from before the line is on disk: a replay reading it then leaves it alone.
      inProgress.add(keyOf(s));
      try {
        await append({ kind: 'settled', ...s });
      } catch (e) {
        inProgress.delete(keyOf(s));
        throw e;
      }
    },
    recorded([network, payer, nonce]) {
      inProgress.delete(keyOf({ network, payer, nonce }));
      return append({ kind: 'recorded', network, payer, nonce }, false);
    },
    unrecorded([network, payer, nonce]) {
      inProgress.delete(keyOf({ network, payer, nonce }));
      for (const fn of listeners) fn();
    },
    onUnrecorded(fn) {
      listeners.push(fn);
    },
    recording: ([network, payer, nonce]) => inProgress.has(keyOf({ network, payer, nonce })),
    async pending() {
      const { settled, recorded } = await read();
      return [...settled.entries()].filter(([k]) => !recorded.has(k)).map(([, s]) => s);
    },
    async find(key) {
      const [network, payer, nonce] = key;
      return (await read()).settled.get(keyOf({ network, payer, nonce }));
    },
    async compact({ minBytes = JOURNAL_COMPACT_BYTES, graceMs = 1000 } = {}) {
      let size = 0;
      try {
        size = (await stat(path)).size;
      } catch (e) {
        if ((e as { code?: string }).code === 'ENOENT') return null;
        throw e;
      }
      if (size < minBytes) return null;
      const aside = `${path}.compacting-${process.pid}-${Date.now()}`;
      await rename(path, aside);
      // an append that opened the old file just before the rename finishes into it meanwhile
      await new Promise((r) => setTimeout(r, graceMs));
      // this compaction's aside file, and those a crashed one left (older than any compaction runs)
      const leftovers: string[] = [];
      for (const f of (await files()).slice(1)) {
        if (f === aside) continue;
        const m = await stat(f).catch(() => null);
        if (m && Date.now() - m.mtimeMs > 10 * 60_000) leftovers.push(f);
      }
      const settled = new Map<string, JournalSettlement>();
      const recorded = new Set<string>();
      for (const f of [aside, ...leftovers]) {
        const r = await read(f);
        for (const [k, x] of r.settled) settled.set(k, x);
        for (const k of r.recorded) recorded.add(k);
      }
      const keep = [...settled.entries()].filter(([k]) => !recorded.has(k)).map(([, x]) => x);
      for (const x of keep) await append({ kind: 'settled', ...x });
      for (const f of [aside, ...leftovers]) await unlink(f).catch(() => undefined);
      return { kept: keep.length, before: settled.size };
    },
  };
}

/** Writes one journaled settlement into the database (claim `settled`, receipt row; idempotent). */
export async function recordJournaled(
  db: Pick<Database, 'transaction'>,
  s: JournalSettlement,
  expires: Date,
): Promise<void> {
  await recordSettlement(db, {
    claimKey: [s.network, s.payer.toLowerCase(), s.nonce.toLowerCase()],
    receiptKey: s.receipt_key,
    resource: s.resource,
    amount: s.amount,
    tx: s.tx,
    payer: s.payer.toLowerCase(),
    expires,
    runStartedAt: null,
  });
}

/**
 * Replays every settlement the journal holds that the database may not: records each (idempotent)
 * and marks it recorded, except those this process is recording right now (`recording`). Returns
 * how many were replayed; stops at the first database error.
 */
export async function replayJournal(
  db: Pick<Database, 'transaction'>,
  journal: SettlementJournal,
  now: Date,
  receiptReuseSeconds: number,
): Promise<number> {
  let n = 0;
  for (const s of await journal.pending()) {
    if (journal.recording([s.network, s.payer, s.nonce])) continue;
    // The reuse window starts when the buyer can first be served, i.e. now.
    await recordJournaled(db, s, new Date(now.getTime() + receiptReuseSeconds * 1000));
    await journal.recorded([s.network, s.payer, s.nonce]);
    n += 1;
  }
  return n;
}
