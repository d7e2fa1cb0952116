/**
 * Paid calls under chaos (issues 21 and 30): three `repindex serve` processes started at the same
 * moment on an empty PostgreSQL schema (they migrate it together; dropped afterwards), reached
 * through a TCP proxy, the real x402 rail offline (a local EDR chain, the project's EIP-3009 token,
 * the x402 facilitator library over HTTP). A burst of paid calls spread over the three; during it
 * the database is cut for CHAOS_CUT_SECONDS (every connection dropped, new ones refused) and one
 * process is SIGKILLed.
 *
 * Every call is a client that honours `Retry-After`: on any answer other than 200 it waits the
 * answer's `Retry-After` (5 s with no answer at all, 1 s on a refusal without one) and retries the
 * SAME header, on a live process (a load balancer's choice), until it is served. No operator step:
 * no `reconcile-payments` run, and the processes' own reconciliation is off
 * (PAYMENT_RECONCILE_SECONDS=0); what serves a retry is the retry itself (the chain decision) and
 * the processes' journal replay.
 *
 * Prints: replicas that came up, authorizations sent, authorizations that moved money (read on
 * chain), served 200, charged but never served, double charges (treasury delta vs. authorizations
 * used), 500s, the answers seen, and two recovery figures: for every authorization charged while
 * unserved (its settlement landed, but the request that made it was not answered 200),
 * `recovery_to_first_200_s` (p50, p100) from recovery (the later of its charge and the end of the
 * faults it met: the database restored, or the kill, after which the other replicas answer at once)
 * to its first 200, and the retries after recovery it took; for every authorization a fault met
 * (an answer `503 database_unavailable`, or no answer from the killed process), the same from the
 * end of its faults (`faulted_recovery_to_first_200_s`). Figures only; nothing is asserted.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:chaos
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
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
const SETTLE_TIMEOUT = Number(process.env.CHAOS_SETTLE_TIMEOUT ?? 90);
/** Delay added after each settlement before its answer reaches the service (settles in flight at the cut and the kill). */
const SETTLE_DELAY_MS = Number(process.env.CHAOS_SETTLE_DELAY_MS ?? 1500);
/** How long a client keeps retrying one authorization. */
const CLIENT_DEADLINE_SECONDS = Number(process.env.CHAOS_CLIENT_DEADLINE ?? 150);
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
const t0 = performance.now();
const now = () => (performance.now() - t0) / 1000;

// The facilitator, behind a tap that holds each settle answer SETTLE_DELAY_MS after the money
// moved. The local facilitator settles from one account, so the tap sends it one settle at a time
// (concurrent ones would collide on its transaction nonce: a rig artefact, not a fault under test).
let settleQueue: Promise<unknown> = Promise.resolve();
const chargedAt = new Map<string, number>();
const readBody = (req: IncomingMessage) =>
  new Promise<string>((res) => {
    let s = '';
    req.on('data', (d: Buffer) => (s += d.toString()));
    req.on('end', () => res(s));
  });
const tap = createServer((req, res) => {
  void (async () => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const forward = () =>
      fetch(`${rail.facilitatorUrl}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body,
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
    let up: { status: number; text: string };
    if (req.url === '/settle') {
      const turn = settleQueue.then(forward);
      settleQueue = turn.catch(() => undefined);
      up = await turn;
      // When each authorization was charged (its settlement landed).
      try {
        const nonce = (
          JSON.parse(body ?? '{}') as {
            paymentPayload?: { payload?: { authorization?: { nonce?: string } } };
          }
        ).paymentPayload?.payload?.authorization?.nonce;
        if (nonce && (JSON.parse(up.text) as { success?: boolean }).success)
          chargedAt.set(nonce.toLowerCase(), now());
      } catch {
        // not JSON: nothing to note
      }
      await sleep(SETTLE_DELAY_MS);
    } else {
      up = await forward();
    }
    res.writeHead(up.status, { 'content-type': 'application/json' });
    res.end(up.text);
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
      FEEDBACK_FETCH: '0',
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

/** One answer a client got: when it was sent and answered (s from the start), what it was. */
interface Attempt {
  sent: number;
  at: number;
  status: number | null;
  error: string | null;
  receipt: boolean;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!.toFixed(2));
};

try {
  // Three replicas started at the same moment on an empty database: they migrate it together.
  const started = await Promise.allSettled(['a', 'b', 'c'].map((name) => serve(name)));
  const up = started.filter((s) => s.status === 'fulfilled').length;
  console.log(`[chaos] ${up} of 3 replicas started together on an empty database came up`);
  if (up < 3) throw new Error(`only ${up} of 3 replicas came up`);
  const procs = started.map((s) => (s as PromiseFulfilledResult<ServeProcess>).value);
  const challenge = await (await fetch(`${procs[1]!.url}${PATH}`)).json();
  const signed: Awaited<ReturnType<typeof signPayment>>[] = [];
  for (let i = 0; i < CALLS; i++) signed.push(await signPayment(challenge, rail.payerKey));
  const before = await rail.balanceOf(rail.treasury);
  const price = BigInt((challenge as { accepts: { amount: string }[] }).accepts[0]!.amount);

  const tBurst = now();
  let restoredAt = Infinity;
  let killedAt = Infinity;
  const killed = new Set<number>();
  const cut = (async () => {
    await sleep(CUT_AT * 1000);
    proxy.cut();
    console.log(`[chaos] t=${(now() - tBurst).toFixed(1)}s database cut`);
    await sleep(CUT_SECONDS * 1000);
    proxy.restore();
    restoredAt = now();
    console.log(`[chaos] t=${(restoredAt - tBurst).toFixed(1)}s database restored`);
  })();
  const kill = (async () => {
    await sleep(KILL_AT * 1000);
    killed.add(0);
    procs[0]!.child.kill('SIGKILL');
    killedAt = now();
    console.log(`[chaos] t=${(killedAt - tBurst).toFixed(1)}s process a SIGKILLed`);
  })();

  const attempts: Attempt[][] = signed.map(() => []);
  let fiveHundreds = 0;
  /** One client: the same header until it is served, honouring Retry-After, on a live process. */
  const client = async (i: number) => {
    const deadline = now() + CLIENT_DEADLINE_SECONDS;
    for (let k = 0; now() < deadline; k++) {
      let p = (i + k) % 3;
      while (killed.has(p)) p = (p + 1) % 3;
      const sent = now();
      const r = await fetch(`${procs[p]!.url}${PATH}`, { headers: { 'X-PAYMENT': signed[i]!.header } }).catch(
        () => null,
      );
      const body = r && r.status !== 200 ? ((await r.json().catch(() => ({}))) as { error?: string }) : null;
      if (r?.status === 200) await r.body?.cancel();
      attempts[i]!.push({
        sent,
        at: now(),
        status: r?.status ?? null,
        error: body?.error ?? null,
        receipt: Boolean(r?.headers.get('x-payment-receipt')),
      });
      if (r?.status === 500) fiveHundreds += 1;
      if (r?.status === 200) return;
      const retryAfter = Number(r?.headers.get('retry-after') ?? NaN);
      await sleep((Number.isFinite(retryAfter) ? retryAfter : r ? 1 : 5) * 1000);
    }
  };
  const clients: Promise<void>[] = [];
  for (let i = 0; i < CALLS; i++) {
    const wait = (i * BURST_SECONDS * 1000) / CALLS - (now() - tBurst) * 1000;
    if (wait > 0) await sleep(wait);
    clients.push(client(i));
  }
  await Promise.all([cut, kill]);
  console.log(`[chaos] burst over; waiting for every client`);
  await Promise.all(clients);
  console.log(`[chaos] every client done after ${(now() - tBurst).toFixed(1)} s`);

  // What moved money (the chain), and what each client saw.
  const label = (a: Attempt) =>
    a.status === null
      ? 'no answer (connection lost)'
      : `${a.status}${a.error ? ` ${a.error}` : ''}${a.status !== 200 && a.receipt ? ' (receipt sent)' : ''}`;
  const firstAnswers = new Map<string, number>();
  const retryAnswers = new Map<string, number>();
  for (const as of attempts) {
    as.forEach((a, k) => {
      const m = k === 0 ? firstAnswers : retryAnswers;
      m.set(label(a), (m.get(label(a)) ?? 0) + 1);
    });
  }
  let used = 0;
  let usedUnserved = 0;
  /** Charged while unserved: recovery → first 200, and the retries it took. */
  const charged: number[] = [];
  const chargedRetries: number[] = [];
  /** Every charged authorization a fault kept from its answer, charged then or later. */
  const faulted: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const nonce = nonceOf(signed[i]!.payload);
    const spent = await rail.authorizationUsed(rail.payer, nonce);
    const as = attempts[i]!;
    const ok = as.find((a) => a.status === 200);
    const trail = () => as.map((a) => `${(a.sent - tBurst).toFixed(1)}s ${label(a)}`).join(' → ');
    if (spent) used += 1;
    if (spent && !ok) usedUnserved += 1;
    if (!spent || !ok) {
      console.log(
        `[chaos] authorization ${i}: ${spent ? 'charged' : 'never charged'}, ${ok ? 'served' : 'never served'}: ${trail()}`,
      );
      continue;
    }
    // The faults it met before its first 200, and when each ended.
    const ends = as
      .filter((a) => a.at <= ok.at && a.status !== 200)
      .flatMap((a) =>
        a.status === null
          ? [killedAt]
          : a.status === 503 && a.error === 'database_unavailable'
            ? [restoredAt]
            : [],
      );
    if (ends.length > 0) faulted.push(ok.at - Math.max(...ends));
    // Charged by a request that was not answered 200 (its answer lost to a fault, or its process
    // dead by the time the settlement landed): from recovery (the later of its charge and the end
    // of the faults it met) to its first 200.
    const at = chargedAt.get(nonce.toLowerCase());
    if (at === undefined) continue;
    const charging = as.find((a) => a.sent <= at && at <= a.at);
    if (charging?.status === 200) continue;
    const recovered = Math.max(at, ...ends);
    charged.push(ok.at - recovered);
    chargedRetries.push(as.filter((a) => a.sent >= recovered && a.at <= ok.at).length);
    if (ok.at - recovered > 10) {
      console.log(
        `[chaos] authorization ${i}: ${(ok.at - recovered).toFixed(1)} s from recovery to 200: ${trail()}`,
      );
    }
  }
  const delta = (await rail.balanceOf(rail.treasury)) - before;
  const result = {
    replicas_started_together: 3,
    replicas_up: up,
    calls: CALLS,
    database_cut_seconds: CUT_SECONDS,
    killed_processes: 1,
    settle_timeout_seconds: SETTLE_TIMEOUT,
    moved_money: used,
    served_200: attempts.filter((as) => as.some((a) => a.status === 200)).length,
    charged_never_served: usedUnserved,
    double_charges: Number(delta / price) - used,
    responses_500: fiveHundreds,
    recovery_to_first_200_s: {
      authorizations: charged.length,
      p50: pct(charged, 50),
      p100: pct(charged, 100),
    },
    retries_after_recovery_max: chargedRetries.length ? Math.max(...chargedRetries) : null,
    faulted_recovery_to_first_200_s: {
      authorizations: faulted.length,
      p50: pct(faulted, 50),
      p100: pct(faulted, 100),
    },
    first_answers: Object.fromEntries(firstAnswers),
    retry_answers: Object.fromEntries(retryAnswers),
    last_200_after_burst_start_s: Number(
      (
        Math.max(...attempts.flatMap((as) => as.filter((a) => a.status === 200).map((a) => a.at))) - tBurst
      ).toFixed(1),
    ),
  };
  console.log(`RESULT ${JSON.stringify(result)}`);
} finally {
  await Promise.all(serves.map((p) => p.kill()));
  // CHAOS_LOGS=<folder>: each process's log lines kept there (the run's folder is removed).
  if (process.env.CHAOS_LOGS) {
    mkdirSync(process.env.CHAOS_LOGS, { recursive: true });
    serves.forEach((p, i) => writeFileSync(join(process.env.CHAOS_LOGS!, `serve-${'abc'[i]}.log`), p.out()));
  }
  await proxy.close();
  await new Promise<void>((r) => tap.close(() => r()));
  await rail.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
}
