/**
 * Registration-file benchmark: what the registration files cost the ingest and the reads.
 *  - ingest: N agents registered with a URI (Registered events, in batches as the pass writes
 *    them), each also getting its fetch job (src/store/registrations.ts `syncRegistrationJobs`);
 *    printed beside the same batches with the job sync timed alone (the share it adds);
 *  - reads, with every job finished and S services per agent: `GET /stats/registrations`'s
 *    statement (the funnel over every row) and one agent's registration (the paid detail's extra
 *    read), p50 / p99.
 *
 *   npx tsx bench/registrations.ts                                  # PGlite in memory
 *   DATABASE_URL=postgres://… npx tsx bench/registrations.ts        # also PostgreSQL (private schema)
 *   BENCH_AGENTS=470000 BENCH_SERVICES=3 npx tsx bench/registrations.ts
 * Prints one `RESULT` line per database.
 */
import type { Database } from '../src/db/database.js';
import type { IndexEvent } from '../src/index-events.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { readAgentRegistration, readRegistrationStats } from '../src/read/registrations.js';
import { syncRegistrationJobs } from '../src/store/registrations.js';
import { onEachDatabase } from './synthetic-index.js';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 100_000);
const SERVICES = Number(process.env.BENCH_SERVICES ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 50);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10;
};

function* registrations(): Generator<IndexEvent[]> {
  for (let from = 0; from < AGENTS; from += BATCH) {
    const events: IndexEvent[] = [];
    for (let i = from; i < Math.min(AGENTS, from + BATCH); i++) {
      events.push({
        kind: 'registered',
        network: 'base',
        txHash: `0x${i.toString(16).padStart(64, '0')}`,
        logIndex: 0,
        blockNumber: 1_000 + i,
        blockTime: null,
        agentId: String(i),
        agentUri: `https://agents${i % 997}.example/${i}.json`,
        minter: '0x00000000000000000000000000000000000000aa',
      });
    }
    yield events;
  }
}

async function run(label: string, db: Database): Promise<void> {
  await db.query(
    `INSERT INTO chains (network, kind, chain_id) VALUES ('base', 'evm', 8453) ON CONFLICT DO NOTHING`,
  );
  let t = performance.now();
  let block = 0;
  for (const events of registrations()) {
    block = events[events.length - 1]!.blockNumber;
    await ingestBatch(db, events, {
      network: 'base',
      lastScannedBlock: block,
      headAtLastSync: block,
      caughtUp: false,
    });
  }
  const ingestSeconds = (performance.now() - t) / 1000;
  // The job sync alone, over the same agents: the URIs move (a URIUpdated each), so every row is rewritten.
  await db.query(`UPDATE agents SET uri_block = uri_block + 1 WHERE network = 'base'`);
  t = performance.now();
  for (let from = 0; from < AGENTS; from += BATCH) {
    const keys = Array.from({ length: Math.min(BATCH, AGENTS - from) }, (_, k) => ({
      network: 'base',
      agentId: String(from + k),
    }));
    await db.transaction((tx) => syncRegistrationJobs(tx, keys));
  }
  const syncSeconds = (performance.now() - t) / 1000;

  // Every job finished, S services each, half alive, a third verified.
  t = performance.now();
  await db.query(
    `UPDATE agent_registrations SET state = 'succeeded', file_state = CASE WHEN (agent_id::int) % 10 = 0 THEN 'invalid' ELSE 'valid' END,
            problems = '[]'::jsonb, name = 'agent ' || agent_id, fetched_at = now(), checked_at = now()`,
  );
  await db.query(
    `INSERT INTO agent_endpoints (network, agent_id, position, service_type, url, probe_kind, host, domain_proof, liveness, next_probe_at)
     SELECT r.network, r.agent_id, s, 'web', 'https://agents' || ((r.agent_id::int) % 997) || '.example/' || s, 'web',
            'agents' || ((r.agent_id::int) % 997) || '.example',
            CASE WHEN (r.agent_id::int + s) % 3 = 0 THEN 'verified' ELSE 'absent' END,
            CASE WHEN (r.agent_id::int + s) % 2 = 0 THEN 'alive' ELSE 'dead' END, now()
       FROM agent_registrations r, generate_series(0, $1::int - 1) AS s`,
    [SERVICES],
  );
  await db.query(`ANALYZE agent_registrations`);
  await db.query(`ANALYZE agent_endpoints`);
  const fillSeconds = (performance.now() - t) / 1000;
  const stats: number[] = [];
  for (let i = 0; i < Math.max(3, Math.ceil(CALLS / 10)); i++) {
    t = performance.now();
    await readRegistrationStats(db);
    stats.push(performance.now() - t);
  }
  const one: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    t = performance.now();
    await readAgentRegistration(db, 'base', String((i * 7919) % AGENTS));
    one.push(performance.now() - t);
  }
  const s = await readRegistrationStats(db);
  const result = {
    database: label,
    agents: AGENTS,
    services_per_agent: SERVICES,
    ingest_registered_per_second: Math.round(AGENTS / ingestSeconds),
    job_sync_seconds: Math.round(syncSeconds * 100) / 100,
    job_sync_share_of_ingest: Math.round((syncSeconds / ingestSeconds) * 1000) / 1000,
    fill_seconds: Math.round(fillSeconds * 10) / 10,
    stats_ms_p50: pct(stats, 50),
    stats_ms_max: pct(stats, 100),
    agent_registration_ms_p50: pct(one, 50),
    agent_registration_ms_p99: pct(one, 99),
    funnel: s.totals.valid_file,
  };
  console.log(
    `${label}: ${AGENTS} registrations ingested at ${result.ingest_registered_per_second}/s ` +
      `(job sync alone ${result.job_sync_seconds} s); /stats/registrations ${result.stats_ms_p50} ms p50 over ` +
      `${AGENTS} files and ${AGENTS * SERVICES} services; one agent's registration ${result.agent_registration_ms_p50} ms p50, ` +
      `${result.agent_registration_ms_p99} ms p99`,
  );
  console.log(`RESULT ${JSON.stringify(result)}`);
}

await onEachDatabase(run);
