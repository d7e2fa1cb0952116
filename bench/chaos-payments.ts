/**
 * Paid calls under chaos (issue 21): three `repindex serve` processes on one PostgreSQL (a fresh
 * schema, dropped afterwards) reached through a TCP proxy, the real x402 rail offline (a local EDR
 * chain, the project's EIP-3009 token, the x402 facilitator library over HTTP). A burst of paid
 * calls spread over the three; during it the database is cut for CHAOS_CUT_SECONDS (every
 * connection dropped, new ones refused) and one process is SIGKILLed. Then the database comes back,
 * `repindex reconcile-payments` runs with the killed process's journal, and every authorization not
 * yet answered 200 is retried with the SAME header on the surviving processes until it is.
 *
 * Prints: authorizations sent, authorizations that moved money (read on chain), served 200,
 * charged but never served, double charges (treasury delta vs. authorizations used), 500s, and the
 * answers seen during the burst. Figures only; nothing is asserted.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:chaos
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { nonceOf, signPayment, startLocalPayments } from '../test/helpers/local-facilitator.js';
import { pgTarget, startPgProxy } from '../test/helpers/pg-proxy.js';
import { startServeProcess, type ServeProcess } from '../test/helpers/serve-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) {
  console.error('bench:chaos needs DATABASE_URL (a PostgreSQL database; a fresh schema is made and dropped)');
  process.exit(64);
}
const CALLS = Number(process.env.CHAOS_CALLS ?? 90);
const BURST_SECONDS = Number(process.env.CHAOS_BURST_SECONDS ?? 20);
const CUT_AT = Number(process.env.CHAOS_CUT_AT ?? 4);
const CUT_SECONDS = Number(process.env.CHAOS_CUT_SECONDS ?? 10);
const KILL_AT = Number(process.env.CHAOS_KILL_AT ?? 16);
const SETTLE_TIMEOUT = Number(process.env.CHAOS_SETTLE_TIMEOUT ?? 5);
const RETRY_BATCH = Number(process.env.CHAOS_RETRY_BATCH ?? 3);
/** Delay added after each settlement before its answer reaches the service (settles in flight at the cut and the kill). */
const SETTLE_DELAY_MS = Number(process.env.CHAOS_SETTLE_DELAY_MS ?? 1500);
const ROOT = join(import.meta.dirname, '..');
const WALLET = '0x7777777777777777777777777777777777777777';
const PATH = `/reputation/wallet/${WALLET}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const schema = `chaos_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: DATABASE_URL });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const u = new URL(DATABASE_URL);
u.searchParams.set('options', `-c search_path=${schema}`);
const schemaUrl = u.toString();
const dir = mkdtempSync(join(tmpdir(), 'repindex-chaos-'));
const serves: ServeProcess[] = [];
const rail = await startLocalPayments();
const proxy = await startPgProxy(pgTarget(DATABASE_URL));

// The facilitator, behind a tap that holds each settle answer SETTLE_DELAY_MS after the money moved.
const readBody = (req: IncomingMessage) =>
  new Promise<string>((res) => {
    let s = '';
    req.on('data', (d: Buffer) => (s += d.toString()));
    req.on('end', () => res(s));
  });
const tap = createServer((req, res) => {
  void (async () => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const up = await fetch(`${rail.facilitatorUrl}${req.url}`, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await up.text();
    if (req.url === '/settle') await sleep(SETTLE_DELAY_MS);
    res.writeHead(up.status, { 'content-type': 'application/json' });
    res.end(text);
  })().catch(() => res.destroy());
});
await new Promise<void>((r) => tap.listen(0, '127.0.0.1', r));
const facilitatorUrl = `http://127.0.0.1:${(tap.address() as AddressInfo).port}`;

async function serve(name: string): Promise<ServeProcess> {
  const p = await startServeProcess({
    name,
    // A user's serve: V8's defaults (not the suite's short-lived flags).
    shortLived: false,
    startTimeoutMs: 120_000,
    env: {
      DATABASE_URL: proxy.urlFor(schemaUrl),
      DATA_DIR: join(dir, name),
      PAYMENT_JOURNAL: join(dir, `${name}.jsonl`),
      LOG_LEVEL: 'info',
      PAYMENT_RECONCILE_SECONDS: '0',
      PAYMENT_SETTLE_TIMEOUT_SECONDS: String(SETTLE_TIMEOUT),
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
      TREASURY_ADDRESS: rail.treasury,
      X402_FACILITATOR_URL: facilitatorUrl,
      X402_ASSET_BASE: rail.token,
      RPC_URL_BASE: rail.node.rpcUrl,
    },
  });
  serves.push(p);
  p.child.on('exit', (code, signal) => {
    if (signal === 'SIGKILL') return;
    const tail = p.out().trim().split('\n').slice(-15).join('\n');
    console.log(`[chaos] serve ${name} exited (${code ?? signal}); its last lines:\n${tail}`);
  });
  return p;
}

const statuses = new Map<string, number>();
const note = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1);
let fiveHundreds = 0;

try {
  const db = await openDatabase({ databaseUrl: schemaUrl, dataDir: 'memory://' });
  await migrate(db);
  await db.close();
  const procs: ServeProcess[] = [];
  for (const name of ['a', 'b', 'c']) procs.push(await serve(name));
  const challenge = await (await fetch(`${procs[1]!.url}${PATH}`)).json();
  const signed: Awaited<ReturnType<typeof signPayment>>[] = [];
  for (let i = 0; i < CALLS; i++) signed.push(await signPayment(challenge, rail.payerKey));
  const before = await rail.balanceOf(rail.treasury);
  const price = BigInt((challenge as { accepts: { amount: string }[] }).accepts[0]!.amount);

  const served = new Set<number>();
  const t0 = performance.now();
  const cut = (async () => {
    await sleep(CUT_AT * 1000);
    proxy.cut();
    console.log(`[chaos] t=${CUT_AT}s database cut`);
    await sleep(CUT_SECONDS * 1000);
    proxy.restore();
    console.log(`[chaos] t=${CUT_AT + CUT_SECONDS}s database restored`);
  })();
  const kill = (async () => {
    await sleep(KILL_AT * 1000);
    procs[0]!.child.kill('SIGKILL');
    console.log(`[chaos] t=${KILL_AT}s process a SIGKILLed`);
  })();
  const send = async (i: number, target: string) => {
    try {
      const r = await fetch(`${target}${PATH}`, { headers: { 'X-PAYMENT': signed[i]!.header } });
      const body = r.status === 200 ? null : ((await r.json().catch(() => ({}))) as { error?: string });
      const receipt =
        r.status !== 200 && r.headers.get('x-payment-receipt') ? ' (settled, receipt sent)' : '';
      note(`${r.status}${body?.error ? ` ${body.error}` : ''}${receipt}`);
      if (r.status === 500) fiveHundreds += 1;
      if (r.status === 200) served.add(i);
    } catch {
      note('no answer (connection lost)');
    }
  };
  const burst = [];
  for (let i = 0; i < CALLS; i++) {
    const wait = (i * BURST_SECONDS * 1000) / CALLS - (performance.now() - t0);
    if (wait > 0) await sleep(wait);
    burst.push(send(i, procs[i % 3]!.url));
  }
  await Promise.all([...burst, cut, kill]);
  console.log(`[chaos] burst over after ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // The killed process's settlements: its journal, replayed by the reconcile job.
  const rec = spawn(process.execPath, [join(ROOT, 'bin', 'repindex.js'), 'reconcile-payments'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: schemaUrl,
      PAYMENT_JOURNAL: join(dir, 'a.jsonl'),
      PAYMENT_SETTLE_TIMEOUT_SECONDS: String(SETTLE_TIMEOUT),
      LOG_LEVEL: 'warn',
      TREASURY_ADDRESS: rail.treasury,
      X402_ASSET_BASE: rail.token,
      RPC_URL_BASE: rail.node.rpcUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let recOut = '';
  rec.stdout.on('data', (d: Buffer) => (recOut += d.toString()));
  await new Promise((r) => rec.on('exit', r));
  console.log(`[chaos] reconcile-payments: ${recOut.trim()}`);

  // Retries of the same headers on the survivors until every one is served.
  const retryStatuses = new Map<string, number>();
  const tRetry = performance.now();
  let rounds = 0;
  while (served.size < CALLS && performance.now() - tRetry < 90_000) {
    rounds += 1;
    // A few retries at once: the local facilitator settles from one account, and concurrent settles
    // collide on its transaction nonce (`invalid_exact_evm_transaction_failed`, nothing charged).
    const todo = signed.map((s, i) => ({ s, i })).filter(({ i }) => !served.has(i));
    for (let k = 0; k < todo.length; k += RETRY_BATCH) {
      await Promise.all(
        todo.slice(k, k + RETRY_BATCH).map(async ({ s, i }) => {
          const target = procs[1 + (i % 2)]!.url;
          const r = await fetch(`${target}${PATH}`, { headers: { 'X-PAYMENT': s.header } }).catch(() => null);
          const body =
            r && r.status !== 200 ? ((await r.json().catch(() => ({}))) as { error?: string }) : null;
          const key = r ? `${r.status}${body?.error ? ` ${body.error}` : ''}` : 'no answer';
          retryStatuses.set(key, (retryStatuses.get(key) ?? 0) + 1);
          if (r?.status === 500) fiveHundreds += 1;
          if (r?.status === 200) served.add(i);
          if (r?.status === 200) await r.body?.cancel();
        }),
      );
    }
    if (served.size < CALLS) await sleep(1000);
  }

  let used = 0;
  let usedUnserved = 0;
  for (let i = 0; i < CALLS; i++) {
    const spent = await rail.authorizationUsed(rail.payer, nonceOf(signed[i]!.payload));
    if (spent) used += 1;
    if (spent && !served.has(i)) usedUnserved += 1;
  }
  const delta = (await rail.balanceOf(rail.treasury)) - before;
  const result = {
    calls: CALLS,
    database_cut_seconds: CUT_SECONDS,
    killed_processes: 1,
    moved_money: used,
    served_200: served.size,
    charged_never_served: usedUnserved,
    double_charges: Number(delta / price) - used,
    responses_500: fiveHundreds,
    burst_answers: Object.fromEntries(statuses),
    retry_rounds: rounds,
    retry_answers: Object.fromEntries(retryStatuses),
    retries_seconds: Number(((performance.now() - tRetry) / 1000).toFixed(1)),
  };
  console.log(`RESULT ${JSON.stringify(result)}`);
} finally {
  await Promise.all(serves.map((p) => p.kill()));
  await proxy.close();
  await new Promise<void>((r) => tap.close(() => r()));
  await rail.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}
