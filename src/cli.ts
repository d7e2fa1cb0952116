/**
 * repindex: the one binary. `serve` (API + hourly indexer), `index --once`, `migrate`, `demo`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, raterEvidenceConfig, type Config } from './config.js';
// The database, the HTTP server and the indexer are imported by the commands that use them, so that
// `repindex --help` (and a configuration error) answers without loading them.
import type { Database } from './db/database.js';
import type { RateLimitStore } from './doors/http/rate-limit.js';
import { configureLogging, logger } from './log.js';
import type { RunningServer } from './server.js';

/**
 * Exit codes (sysexits.h): 0 ok; 1 a chain failed (index --once); 2 index lock held by another
 * pass; 3 a chain's census ended in a standing mismatch (index --once: the index disagrees with
 * the chain after the repairs; every chain was scanned); 64 usage; 69 the database server cannot be reached; 75 the data directory or the port is
 * held by another process; 78 configuration (a bad variable, a DATABASE_URL naming a missing
 * database or refusing the credentials, a HOST/PORT that cannot be bound).
 */
const EXIT = { usage: 64, unavailable: 69, busy: 75, config: 78 } as const;

/** A start-up failure worth one line (no stack): what failed, which variable, why. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/** Turns a failure to reach or open DATABASE_URL into a one-line StartupError (else rethrows). */
function databaseStartupError(e: unknown, config: Config): never {
  if (!config.databaseUrl || (e as Error | null)?.name === 'DataDirLockedError' || e instanceof StartupError)
    throw e;
  const err = e as NodeJS.ErrnoException & { code?: string };
  let where = 'the server';
  try {
    const u = new URL(config.databaseUrl);
    where = `${u.hostname}:${u.port || '5432'}${u.pathname}`; // never the password
  } catch {
    // keep the generic name
  }
  const code = err?.code ?? '';
  const msg = err?.message ?? String(e);
  if (UNREACHABLE_CODES.has(code) || /timeout|terminated unexpectedly|Connection terminated/i.test(msg)) {
    throw new StartupError(
      `DATABASE_URL: cannot reach the PostgreSQL server at ${where} (${code || msg})`,
      EXIT.unavailable,
    );
  }
  if (code === '3D000')
    throw new StartupError(`DATABASE_URL: the database does not exist (${where}): ${msg}`, EXIT.config);
  if (code === '28P01' || code === '28000') {
    throw new StartupError(
      `DATABASE_URL: the server refused the credentials (${where}): ${msg}`,
      EXIT.config,
    );
  }
  throw e;
}

const HELP: Record<string, string> = {
  main: `repindex: a read-only reputation index for ERC-8004 agents

Usage: repindex <command> [options]

Commands:
  serve          serve the HTTP API and run the indexer every INDEXER_PERIOD_SECONDS
  index --once   run one indexing pass over every enabled chain, then exit (non-zero if a chain failed)
  migrate        apply the database migrations, then exit
  demo           offline demo: local EVM chains, a played scenario, indexed and served
  reconcile-payments  settle or release payment claims whose settlement outcome is unknown, then exit

Run "repindex <command> --help" for a command's options. Configuration comes from the
environment (see README): DATABASE_URL, DATA_DIR, PORT, HOST, BASE_URL, CHAINS_FILE, ...`,
  serve: `Usage: repindex serve

Serves the API on HOST:PORT (default 127.0.0.1:8080) and, unless INDEXER_PERIOD_SECONDS=0, runs an
indexing pass at start and then every INDEXER_PERIOD_SECONDS. Migrations run first. Logs are JSON lines
(LOG_LEVEL); METRICS_PORT serves GET /metrics on a port of its own. Ctrl-C stops a running pass at its
next batch.`,
  index: `Usage: repindex index --once

Runs one pass over every enabled chain: from each chain's checkpoint to head minus its confirmations.
Exits 0 when every chain succeeded, 1 when any failed, 2 when another process holds the index lock,
3 when every chain was scanned but a chain's completeness census still disagrees with the chain
after its repairs (GET /health shows it degraded, with what differs), 130 when Ctrl-C stopped it
(at a batch boundary: what was written stays, the next pass resumes).
On the embedded database a running "serve" owns the data directory: stop it first.`,
  migrate: `Usage: repindex migrate

Applies the SQL migrations to DATABASE_URL (or the embedded database in DATA_DIR). Safe to run twice.`,
  demo: `Usage: repindex demo [--no-serve]

Starts three local EVM chains in process (chain ids of base, optimism and arbitrum), deploys the
project's own ERC-8004 registries, plays a deterministic scenario, indexes it with the real indexer
and serves the API on it (PORT, default 8080). Needs no network. --no-serve stops after indexing.
Uses an in-memory database unless DATABASE_URL is set.`,
  'reconcile-payments': `Usage: repindex reconcile-payments

First records the settlements the journal (PAYMENT_JOURNAL) holds that the database lost. Then
reads, on chain (the RPC of each payment network), the token's authorizationState of every payment
claim left "settling-unknown" or stuck "settling" for over PAYMENT_SETTLE_TIMEOUT_SECONDS:
used → settled (the buyer's retry is served from its receipt);
unused past validBefore → released; unused and still valid → left for a retry. "serve" does the
same every PAYMENT_RECONCILE_SECONDS. Exits 0, or 1 when a claim could not be decided.`,
};

async function openAndMigrate(config: Config, opts: { readReplica?: boolean } = {}): Promise<Database> {
  try {
    return await openAndMigrateRaw(config, opts);
  } catch (e) {
    databaseStartupError(e, config);
  }
}

async function openAndMigrateRaw(config: Config, opts: { readReplica?: boolean }): Promise<Database> {
  const { openDatabase } = await import('./db/database.js');
  const { migrate } = await import('./db/migrate.js');
  const { registerChains } = await import('./store/chain-state.js');
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    // Only the API reads from a replica; the indexer and migrations stay on the primary.
    databaseReadUrl: opts.readReplica ? config.databaseReadUrl : null,
  });
  try {
    // A first start (a new data directory or database) says what it created.
    const applied = await migrate(db);
    if (applied.length > 0) logMigrations(applied);
    await registerChains(db, config.chains);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

async function serveCommand(config: Config): Promise<void> {
  const { ListenError, listenHttp, startMetricsServer } = await import('./server.js');
  const { InProcessRateLimitStore } = await import('./doors/http/rate-limit.js');
  // Loaded before "listening" is logged: from then on, a SIGTERM finds its handler installed.
  const { startIndexScheduler } = await import('./indexer/scheduler.js');
  const { refreshAfterPass } = await import('./after-pass.js');
  const { startReconcileScheduler } = await import('./payments/reconcile.js');
  const { startJournalReplay } = await import('./payments/journal-replay.js');
  const { fetcherContextFor, startDocumentFetcher } = await import('./documents/fetcher.js');
  const { startRegistrationWorker } = await import('./registrations/worker.js');
  const { raterEvidenceContextFor, startRaterEvidence } = await import('./raters/job.js');
  // The port first: a busy port is reported at once, not after the migrations.
  let server;
  try {
    server = await listenHttp({ host: config.host, port: config.port }, config.rateLimit);
  } catch (e) {
    if (e instanceof ListenError) {
      throw new StartupError(`HOST/PORT: ${e.message}`, e.code === 'EADDRINUSE' ? EXIT.busy : EXIT.config);
    }
    throw e;
  }
  let db: Database;
  try {
    db = await openAndMigrate(config, { readReplica: true });
  } catch (e) {
    await server.close();
    throw e;
  }
  // REDIS_URL: buckets shared by every API process (fail-open to in process while Redis is down).
  const rateLimit: RateLimitStore = config.redisUrl
    ? new (await import('./doors/http/rate-limit-redis.js')).RedisRateLimitStore({ url: config.redisUrl })
    : new InProcessRateLimitStore();
  // Payments: every settlement is journaled before it is recorded (PAYMENT_JOURNAL); settlements a
  // lost database write left only in the journal are recorded now (and while running, below);
  // claims being settled or of unknown outcome are decided from the chain (the token's
  // authorizationState through the network's RPC).
  const { openSettlementJournal, replayJournal } = await import('./payments/journal.js');
  const { chainAuthorizationReader } = await import('./payments/authorization-state.js');
  const journal = config.paymentJournal ? openSettlementJournal(config.paymentJournal) : null;
  if (journal) {
    const replayed = await replayJournal(db, journal, new Date(), config.receiptReuseSeconds).catch(
      (e: unknown) => {
        logger('serve').error({ err: (e as Error).message }, 'could not replay the settlement journal');
        return 0;
      },
    );
    if (replayed) logger('serve').warn({ replayed }, `recorded ${replayed} settlement(s) from the journal`);
  }
  const readAuthorization = chainAuthorizationReader(config);
  const { claimRepairs: newClaimRepairs } = await import('./payments/claim-repairs.js');
  const claimRepairs = newClaimRepairs();
  server.attach({ config, db, now: () => new Date(), rateLimit, journal, readAuthorization, claimRepairs });
  const log = logger('serve');
  log.info(
    {
      url: server.url,
      database: db.kind,
      ...(db.kind === 'pglite' ? { data_dir: config.dataDir } : {}),
      read_replica: config.databaseReadUrl !== null,
      rate_limit: rateLimit.kind,
    },
    `listening on ${server.url} (database: ${db.kind}${db.kind === 'pglite' ? ` in ${config.dataDir}` : ''}` +
      `${config.databaseReadUrl ? ', reads on DATABASE_READ_URL' : ''}; rate limit: ${rateLimit.kind})`,
  );
  let metrics: RunningServer | null = null;
  if (config.metricsPort) {
    metrics = await startMetricsServer({
      host: config.metricsHost ?? config.host,
      port: config.metricsPort,
      db,
    });
    log.info({ url: `${metrics.url}/metrics` }, `metrics on ${metrics.url}/metrics`);
  }
  const scheduler = startIndexScheduler({ db, config, pass: { afterPass: refreshAfterPass } });
  const reconciler = startReconcileScheduler({ db, config, journal, readAuthorization });
  // A settlement this process journaled but could not record, and a claim a request had to leave
  // behind: recorded / repaired as soon as the database answers again (and the journal read every
  // minute), not only at the next start or the settle timeout.
  const journalReplay = journal ? startJournalReplay({ db, journal, config, repairs: claimRepairs }) : null;
  // FEEDBACK_FETCH=0: no feedback document is fetched (the queue keeps filling, nothing is lost).
  const documents = config.feedbackFetch.enabled
    ? startDocumentFetcher(fetcherContextFor(db, config), config.feedbackFetch.periodSeconds)
    : null;
  // REGISTRATION_FETCH / LIVENESS_PROBES: registration files, domain proofs and endpoint probes.
  const registrations = startRegistrationWorker(db, config);
  // RATER_EVIDENCE=0: no rater evidence (account-history lookups, cohorts, graph trust) is computed.
  const raterEvidence = raterEvidenceConfig(config);
  const raters = raterEvidence.enabled
    ? startRaterEvidence(raterEvidenceContextFor(db, config), raterEvidence.periodSeconds)
    : null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second Ctrl-C: leave now (every committed batch is already safe).
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(130);
    }
    stopping = true;
    log.info({ signal }, `${signal}: shutting down (a running pass stops at its next batch)`);
    await scheduler.stop();
    await documents?.stop();
    await registrations?.stop();
    await raters?.stop();
    await reconciler.stop();
    await journalReplay?.stop();
    await metrics?.close();
    await server.close();
    await rateLimit.close().catch(() => undefined);
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function indexCommand(config: Config, once: boolean): Promise<number> {
  if (!once) {
    console.error('repindex index: only "--once" is supported (the scheduler runs inside "serve").');
    return 64;
  }
  const db = await openAndMigrate(config);
  // Ctrl-C / SIGTERM: stop at the next batch boundary (the batches written stay committed);
  // a second signal exits at once.
  const abort = new AbortController();
  const onSignal = (signal: string) => {
    if (abort.signal.aborted) process.exit(130);
    logger('index').info({ signal }, `${signal}: stopping at the next batch boundary (again to exit now)`);
    abort.abort();
  };
  const sigint = () => onSignal('SIGINT');
  const sigterm = () => onSignal('SIGTERM');
  process.on('SIGINT', sigint);
  process.on('SIGTERM', sigterm);
  try {
    const { runIndexPass } = await import('./indexer/pass.js');
    const { refreshAfterPass } = await import('./after-pass.js');
    const report = await runIndexPass({ db, config, signal: abort.signal, afterPass: refreshAfterPass });
    if (report.status === 'locked') {
      logger('index').warn('[index] another process is running a pass on this index; nothing done.');
      return 2;
    }
    if (report.stopped) return 130;
    if (config.feedbackFetch.enabled) {
      // The documents the pass queued (and any due job), bounded: later ones wait for the next run.
      const { drainDocuments, fetcherContextFor } = await import('./documents/fetcher.js');
      const r = await drainDocuments(fetcherContextFor(db, config), 50);
      if (r.leased > 0) logger('documents').info(r, 'feedback documents fetched');
    }
    // The registration files the pass queued (and any due), then the due probes, bounded.
    const { runRegistrationStep } = await import('./registrations/worker.js');
    await runRegistrationStep(db, config, { rounds: 50, probeBudgetMs: 30_000 });
    if (raterEvidenceConfig(config).enabled) {
      // The account-history lookups the pass queued (bounded, rate-limited), then the evidence.
      const { raterEvidenceContextFor, runRaterEvidence } = await import('./raters/job.js');
      const r = await runRaterEvidence(raterEvidenceContextFor(db, config), { maxRounds: 50 });
      logger('raters').info(r, 'rater evidence');
    }
    // A failed chain, or a failed aggregate refresh after the pass, is a failed run; a census
    // mismatch that the repairs left standing is a run that must not look fine to a cron job.
    if (report.failed.length > 0 || report.afterPassError) return 1;
    const mismatched = report.chains.filter((c) => c.census?.state === 'mismatch').map((c) => c.network);
    if (mismatched.length > 0) {
      logger('index').warn(
        { chains: mismatched },
        `[index] census mismatch left standing on ${mismatched.join(', ')}: exit code 3 (see GET /health)`,
      );
      return 3;
    }
    return 0;
  } finally {
    process.off('SIGINT', sigint);
    process.off('SIGTERM', sigterm);
    await db.close();
  }
}

async function migrateCommand(config: Config): Promise<void> {
  const { openDatabase } = await import('./db/database.js');
  const { migrate } = await import('./db/migrate.js');
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    let applied: string[];
    try {
      applied = await migrate(db);
    } catch (e) {
      databaseStartupError(e, config);
    }
    logMigrations(applied);
  } finally {
    await db.close();
  }
}

/** One line for the migrations a start or `migrate` applied (the same words for both). */
function logMigrations(applied: string[]): void {
  logger('migrate').info(
    { applied },
    applied.length ? `applied ${applied.join(', ')}` : 'already up to date',
  );
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP.main);
    return command ? 0 : 64;
  }
  if (!(command in HELP) || command === 'main') {
    console.error(`repindex: unknown command "${command}"\n\n${HELP.main}`);
    return 64;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        help: { type: 'boolean', short: 'h' },
        once: { type: 'boolean' },
        'no-serve': { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (e) {
    console.error(`repindex ${command}: ${(e as Error).message}\n\n${HELP[command]}`);
    return 64;
  }
  if (values.help) {
    console.log(HELP[command]);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`repindex: configuration error: ${e.message}`);
      return 78;
    }
    throw e;
  }
  configureLogging({ level: config.logLevel });
  try {
    switch (command) {
      case 'serve':
        await serveCommand(config);
        return -1; // keeps running
      case 'index':
        return await indexCommand(config, values.once === true);
      case 'migrate':
        await migrateCommand(config);
        return 0;
      case 'reconcile-payments': {
        const db = await openAndMigrate(config);
        try {
          const { reconcilePayments } = await import('./payments/reconcile.js');
          const { openSettlementJournal } = await import('./payments/journal.js');
          const journal = config.paymentJournal ? openSettlementJournal(config.paymentJournal) : null;
          const r = await reconcilePayments({ db, config, journal });
          console.log(
            `[payments] ${r.journaled} journaled settlement(s) recorded; ${r.examined} unknown settlement(s) (${r.stale} stuck in settling): ${r.settled} settled, ${r.released} released, ${r.pending} still pending`,
          );
          for (const e of r.errors) console.error(`[payments] undecided: ${e}`);
          return r.errors.length > 0 ? 1 : 0;
        } finally {
          await db.close();
        }
      }
      case 'demo': {
        const { runDemo, DemoDatabaseError } = await import('./demo/run-demo.js');
        try {
          await runDemo({ config, serve: values['no-serve'] !== true });
        } catch (e) {
          if (e instanceof DemoDatabaseError) {
            console.error(`repindex demo: ${e.message}`);
            return 1;
          }
          throw e;
        }
        return values['no-serve'] === true ? 0 : -1;
      }
    }
  } catch (e) {
    if ((e as Error | null)?.name === 'DataDirLockedError') {
      console.error(`repindex: ${(e as Error).message}`);
      return EXIT.busy;
    }
    if (e instanceof StartupError) {
      console.error(`repindex: ${e.message}`);
      return e.exitCode;
    }
    throw e;
  }
  return 64;
}

const isEntry =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isEntry) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (e: unknown) => {
      console.error(`repindex: ${(e as Error).stack ?? String(e)}`);
      process.exit(1);
    },
  );
}
