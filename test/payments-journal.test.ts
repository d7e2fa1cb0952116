/**
 * The settlement journal stays small without losing a settlement: compaction keeps exactly the
 * settlements the database does not hold yet, an append racing the compaction survives, and the
 * aside file of a compaction that crashed midway is still read.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSettlementJournal, type JournalSettlement } from '../src/payments/journal.js';
import { tempDir } from './helpers/tmp.js';

const settlement = (i: number): JournalSettlement => ({
  network: 'eip155:8453',
  payer: `0x${'a'.repeat(39)}${i % 10}`,
  nonce: `0x${i.toString(16).padStart(64, '0')}`,
  resource: `/reputation/wallet/0x${'c'.repeat(40)}?i=${i}`,
  amount: '10000',
  receipt_key: `rk${i}`,
  tx: `0x${(i + 1).toString(16).padStart(64, 'f')}`,
  at: new Date(Date.UTC(2026, 10, 25)).toISOString(),
});

describe('settlement journal compaction', () => {
  it('keeps exactly the unrecorded settlements, and only once the file is big enough', async () => {
    const path = join(tempDir(), 'journal.jsonl');
    const j = openSettlementJournal(path);
    expect(await j.compact({ minBytes: 1 })).toBeNull(); // no file yet
    for (let i = 0; i < 60; i++) await j.settled(settlement(i));
    for (let i = 0; i < 60; i++)
      if (i % 3 !== 0) await j.recorded([settlement(i).network, settlement(i).payer, settlement(i).nonce]);
    const pendingBefore = (await j.pending()).map((s) => s.nonce).sort();
    expect(pendingBefore).toHaveLength(20);
    const size = statSync(path).size;
    expect(await j.compact({ minBytes: size + 1, graceMs: 0 })).toBeNull(); // below the threshold
    expect(await j.compact({ minBytes: size, graceMs: 0 })).toEqual({ kept: 20, before: 60 });
    expect(statSync(path).size).toBeLessThan(size / 3);
    expect((await j.pending()).map((s) => s.nonce).sort()).toEqual(pendingBefore);
    expect(await j.find([settlement(3).network, settlement(3).payer, settlement(3).nonce])).toMatchObject({
      tx: settlement(3).tx,
    });
    expect(readdirSync(join(path, '..')).filter((n) => n.includes('compacting'))).toEqual([]);
  });

  it('appends made while a compaction runs are kept: to the fresh file, and to the old one by a writer that opened it before the rename', async () => {
    const path = join(tempDir(), 'journal.jsonl');
    const j = openSettlementJournal(path);
    for (let i = 0; i < 10; i++) await j.settled(settlement(i));
    const late = await open(path, 'a'); // a writer that opened the journal just before the rename
    const compaction = j.compact({ minBytes: 1, graceMs: 200 });
    await new Promise((r) => setTimeout(r, 50));
    await j.settled(settlement(99)); // lands in the fresh file while the old one is aside
    await late.appendFile(`${JSON.stringify({ kind: 'settled', ...settlement(98) })}\n`); // lands in the old one
    await late.close();
    expect(await compaction).toEqual({ kept: 11, before: 11 });
    expect((await j.pending()).map((s) => s.receipt_key).sort()).toEqual(
      [...Array.from({ length: 10 }, (_, i) => `rk${i}`), 'rk98', 'rk99'].sort(),
    );
  });

  it('reads the aside file a crashed compaction left behind', async () => {
    const dir = tempDir();
    const path = join(dir, 'journal.jsonl');
    const j = openSettlementJournal(path);
    await j.settled(settlement(1));
    // as if a compaction renamed the journal aside and the process died before rewriting it
    writeFileSync(join(dir, 'journal.jsonl.compacting-1-1'), readFileSync(path));
    writeFileSync(path, '');
    await j.settled(settlement(2));
    expect((await j.pending()).map((s) => s.receipt_key).sort()).toEqual(['rk1', 'rk2']);
    // a later compaction folds it in once it is clearly abandoned (older than ten minutes)
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(dir, 'journal.jsonl.compacting-1-1'), old, old);
    expect(await j.compact({ minBytes: 1, graceMs: 200 })).toEqual({ kept: 2, before: 2 });
    expect(readdirSync(dir).filter((n) => n.includes('compacting'))).toEqual([]);
    expect((await j.pending()).map((s) => s.receipt_key).sort()).toEqual(['rk1', 'rk2']);
  });
});
