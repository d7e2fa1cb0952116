/**
 * Where the cold start's database time goes, in process: the log server and one index pass (the
 * CLI's own sequence: migrations, runIndexPass with the after-pass refresh) over a database whose
 * every statement is timed by its text. Prints the statements by total time. A diagnostic for
 * bench/README.md, not a figure of the bench (it shares one process with the log server).
 *
 *   BENCH_COLDSTART_SCALE=0.01 npx tsx bench/coldstart/sql-timing.ts        # PGlite in a temp dir
 *   DATABASE_URL=postgres://… BENCH_COLDSTART_SCALE=0.01 npx tsx bench/coldstart/sql-timing.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refreshAfterPass } from '../../src/after-pass.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { runIndexPass } from '../../src/indexer/pass.js';
import { startLogServer } from './log-server.js';
import { statementTimer } from '../sql-timer.js';

const scale = Number(process.env.BENCH_COLDSTART_SCALE ?? 0.01);
const { times, timed } = statementTimer(140);

async function main(): Promise<void> {
  const server = await startLogServer({
    scale,
    span: Math.max(100_000, Math.round(2_000_000 * scale)),
    seed: 34,
    stamp: true,
    rpsFactor: 100,
    limitEvery: 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'coldstart-sql-'));
  const raw = await openDatabase({
    databaseUrl: process.env.DATABASE_URL ?? null,
    dataDir: join(dir, 'data'),
  });
  const db = timed(raw) as Database;
  try {
    const t0 = performance.now();
    await migrate(db);
    const tm = performance.now();
    // Time spent in the trigger functions too (pg_stat_user_functions): the session's own setting
    // on PGlite (one session), the database's default for new connections on PostgreSQL.
    if (raw.kind === 'pglite') await raw.exec(`SET track_functions = 'all'`);
    else {
      const [q] = await raw.query<{ d: string }>('SELECT quote_ident(current_database()) AS d');
      await raw.exec(`ALTER DATABASE ${q!.d} SET track_functions = 'all'`);
    }
    const base = loadConfig({ FEEDBACK_FETCH: '0', REGISTRATION_FETCH: '0', RATER_EVIDENCE: '0' });
    const config = {
      ...base,
      chains: base.chains.map((c) => {
        const s = server.chains.find((x) => x.network === c.network);
        return s ? { ...c, rpcUrl: s.url, startBlock: s.start, confirmations: 12 } : { ...c, enabled: false };
      }),
    };
    const quiet = { info: () => undefined, warn: () => undefined };
    const r = await runIndexPass({ db, config, log: quiet, progress: 'off', afterPass: refreshAfterPass });
    const tp = performance.now();
    console.log(
      `migrations ${((tm - t0) / 1000).toFixed(1)} s, pass ${((tp - tm) / 1000).toFixed(1)} s, status ${r.status}, ` +
        `census ${r.chains.map((c) => c.census?.state).join(',')}`,
    );
    const total = [...times.values()].reduce((a, b) => a + b.ms, 0);
    console.log(`statements: ${(total / 1000).toFixed(1)} s in all`);
    for (const [sql, e] of [...times].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30))
      console.log(`${(e.ms / 1000).toFixed(2).padStart(8)} s ${String(e.n).padStart(7)}×  ${sql}`);
    const [wal] = await raw.query<{ mb: number; sz: number; kept: number }>(
      `SELECT (pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') / 1048576)::float8 AS mb,
              (pg_database_size(current_database()) / 1048576)::float8 AS sz,
              ((SELECT sum(size) FROM pg_ls_waldir()) / 1048576)::float8 AS kept`,
    );
    console.log(
      `WAL written ${wal!.mb.toFixed(0)} MB (${wal!.kept.toFixed(0)} MB of it still in pg_wal), database ${wal!.sz.toFixed(0)} MB`,
    );
    const fns = await raw.query<{ funcname: string; calls: number; total: number; self: number }>(
      `SELECT funcname, calls::int8 AS calls, total_time::float8 AS total, self_time::float8 AS self
         FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 15`,
    );
    if (fns.length > 0) console.log('trigger functions (total, self, calls):');
    for (const f of fns)
      console.log(
        `${(f.total / 1000).toFixed(2).padStart(8)} s ${(f.self / 1000).toFixed(2).padStart(8)} s ${String(f.calls).padStart(7)}×  ${f.funcname}`,
      );
  } finally {
    if (raw.kind !== 'pglite') {
      const [q] = await raw.query<{ d: string }>('SELECT quote_ident(current_database()) AS d');
      await raw.exec(`ALTER DATABASE ${q!.d} RESET track_functions`);
    }
    await raw.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
