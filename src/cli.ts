/**
 * repindex: the one binary. `serve` (API + hourly indexer), `index --once`, `migrate`, `demo`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError, openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { InProcessRateLimitStore, type RateLimitStore } from './doors/http/rate-limit.js';
import { registerChains } from './indexer/chain-state.js';
import { startHttpServer } from './server.js';

const HELP: Record<string, string> = {
  main: `repindex: a read-only reputation index for ERC-8004 agents

Usage: repindex <command> [options]

Commands:
  serve          serve the HTTP API and run the indexer every INDEXER_PERIOD_SECONDS
  index --once   run one indexing pass over every enabled chain, then exit (non-zero if a chain failed)
  migrate        apply the database migrations, then exit
  demo           offline demo: local EVM chains, a played scenario, indexed and served

Run "repindex <command> --help" for a command's options. Configuration comes from the
environment (see README): DATABASE_URL, DATA_DIR, PORT, HOST, BASE_URL, CHAINS_FILE, ...`,
  serve: `Usage: repindex serve

Serves the API on HOST:PORT (default 127.0.0.1:8080) and, unless INDEXER_PERIOD_SECONDS=0, runs an
indexing pass at start and then every INDEXER_PERIOD_SECONDS. Migrations run first.`,
  index: `Usage: repindex index --once

Runs one pass over every enabled chain: from each chain's checkpoint to head minus its confirmations.
Exits 0 when every chain succeeded, 1 when any failed, 2 when another process holds the index lock.
On the embedded database a running "serve" owns the data directory: stop it first.`,
  migrate: `Usage: repindex migrate

Applies the SQL migrations to DATABASE_URL (or the embedded database in DATA_DIR). Safe to run twice.`,
  demo: `Usage: repindex demo [--no-serve]

Starts three local EVM chains in process (chain ids of base, optimism and arbitrum), deploys the
project's own ERC-8004 registries, plays a deterministic scenario, indexes it with the real indexer
and serves the API on it (PORT, default 8080). Needs no network. --no-serve stops after indexing.
Uses an in-memory database unless DATABASE_URL is set.`,
};

export async function openAndMigrate(config: Config, opts: { readReplica?: boolean } = {}): Promise<Database> {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    // Only the API reads from a replica; the indexer and migrations stay on the primary.
    databaseReadUrl: opts.readReplica ? config.databaseReadUrl : null,
  });
  try {
    await migrate(db);
    await registerChains(db, config.chains);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

async function serveCommand(config: Config): Promise<void> {
  const db = await openAndMigrate(config, { readReplica: true });
  // REDIS_URL: buckets shared by every API process (fail-open to in process while Redis is down).
  const rateLimit: RateLimitStore = config.redisUrl
    ? new (await import('./doors/http/rate-limit-redis.js')).RedisRateLimitStore({ url: config.redisUrl })
    : new InProcessRateLimitStore();
  const server = await startHttpServer({ config, db, now: () => new Date(), rateLimit }, { host: config.host, port: config.port });
  console.log(
    `[serve] listening on ${server.url} (database: ${db.kind}${db.kind === 'pglite' ? ` in ${config.dataDir}` : ''}` +
      `${config.databaseReadUrl ? ', reads on DATABASE_READ_URL' : ''}; rate limit: ${rateLimit.kind})`,
  );
  const { startIndexScheduler } = await import('./indexer/scheduler.js');
  const scheduler = startIndexScheduler({ db, config });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[serve] ${signal}: shutting down`);
    await scheduler.stop();
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
  try {
    const { runIndexPass } = await import('./indexer/pass.js');
    const report = await runIndexPass({ db, config });
    if (report.status === 'locked') {
      console.error('[index] another process is running a pass on this index; nothing done.');
      return 2;
    }
    // A failed chain, or a failed aggregate refresh after the pass, is a failed run.
    return report.failed.length > 0 || report.afterPassError ? 1 : 0;
  } finally {
    await db.close();
  }
}

async function migrateCommand(config: Config): Promise<void> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const applied = await migrate(db);
    console.log(applied.length ? `[migrate] applied ${applied.join(', ')}` : '[migrate] already up to date');
  } finally {
    await db.close();
  }
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
      options: { help: { type: 'boolean', short: 'h' }, once: { type: 'boolean' }, 'no-serve': { type: 'boolean' } },
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
    if (e instanceof DataDirLockedError) {
      console.error(`repindex: ${e.message}`);
      return 75;
    }
    throw e;
  }
  return 64;
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
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
