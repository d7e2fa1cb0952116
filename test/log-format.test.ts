/**
 * Logs (issue 12): one JSON object per line whatever the strings hold, LOG_LEVEL honoured (also
 * through the CLI), one access-log line per request with the route TEMPLATE and the payment
 * outcome and never the payment header, a query string or a key; a chain's final failure once,
 * at warn, with the endpoint stripped of credentials, the cause and the hint; retries at debug.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureLogging, logger, redactUrl, redactUrls } from '../src/log.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { migratedDataDir } from './helpers/db-template.js';
import { startObservedApp, WALLET, type ObservedApp } from './helpers/observed-app.js';
import { payment } from './helpers/x402-stub.js';
import { configFor, deadRpcUrl } from './helpers/indexer-fixtures.js';
import { repindexArgs } from './helpers/repindex-bin.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Every chunk pino writes, as written. */
function capture(level: 'debug' | 'info' | 'warn' | 'error') {
  const chunks: string[] = [];
  configureLogging({ level, pretty: false, destination: { write: (s: string) => void chunks.push(s) } });
  return {
    chunks,
    /** Each chunk must be exactly one JSON line. */
    events(): Record<string, unknown>[] {
      return chunks.map((c) => {
        expect(c.endsWith('\n'), c).toBe(true);
        expect(c.slice(0, -1).includes('\n'), c).toBe(false);
        return JSON.parse(c) as Record<string, unknown>;
      });
    },
  };
}

describe('the log line format', () => {
  it('is one JSON line per event whatever the text holds (hostile chain strings)', () => {
    const out = capture('debug');
    const hostile = [
      'a\nb',
      'x\r\n{"level":"error","msg":"forged"}',
      '\u2028\u2029',
      '"}\n',
      '\u0000\u001b[31m',
      '\\',
    ];
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...hostile)), (s) => {
        out.chunks.length = 0;
        logger('index').warn({ tag1: s, chain: 'base' }, s);
        const events = out.events();
        expect(events).toHaveLength(1);
        expect(events[0]!.msg).toBe(s);
        expect(events[0]!.tag1).toBe(s);
        expect(events[0]!.level).toBe('warn');
        expect(events[0]!.component).toBe('index');
        expect(typeof events[0]!.time).toBe('string');
      }),
      { numRuns: 300 },
    );
  });

  it('honours the level: below it nothing is written', () => {
    const out = capture('warn');
    logger('x').debug('d');
    logger('x').info('i');
    logger('x').warn('w');
    logger('x').error('e');
    expect(out.events().map((e) => e.msg)).toEqual(['w', 'e']);
    const dbg = capture('debug');
    logger('x').debug('d');
    expect(dbg.events().map((e) => [e.level, e.msg])).toEqual([['debug', 'd']]);
  });

  it('strips credentials from URLs', () => {
    expect(
      redactUrl(
        'https://user:pa55word@rpc.example.com/v2/AbCdEfGhIjKlMnOpQrStUvWxYz012345?apikey=s3cr3t&x=1',
      ),
    ).toBe('https://***@rpc.example.com/v2/***?apikey=***&x=***');
    expect(redactUrl('https://base-mainnet.infura.io/v3/0123456789abcdef0123456789abcdef')).toBe(
      'https://base-mainnet.infura.io/v3/***',
    );
    expect(redactUrl('https://mainnet.base.org')).toBe('https://mainnet.base.org/');
    expect(redactUrl('not a url with s3cr3t')).toBe('[not a url]');
    const text = 'HTTP request failed. URL: https://u:p4ss@h.example/v2/AbCdEfGhIjKlMnOpQrStUv?key=k3y body';
    expect(redactUrls(text)).toBe('HTTP request failed. URL: https://***@h.example/v2/***?key=*** body');
  });
});

describe('the access log', () => {
  let t: TestDatabase;
  let app: ObservedApp;
  beforeAll(async () => {
    t = await openTestDatabase();
    app = await startObservedApp(t);
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('one line per request: method, route template, status, ms, client, payment outcome; no header, no query, no key', async () => {
    const out = capture('info');
    const header = payment();
    const secretQuery = 'apikey=QUERYSECRET123';
    const paid = await fetch(`${app.url}/reputation/wallet/${WALLET}?${secretQuery}`, {
      headers: { 'X-PAYMENT': header, Authorization: 'Bearer BEARERSECRET456' },
    });
    expect(paid.status).toBe(200);
    const challenged = await fetch(`${app.url}/v1/reputation/wallet/${WALLET}`);
    expect(challenged.status).toBe(402);
    const refused = await fetch(`${app.url}/reputation/wallet/${WALLET}`, {
      headers: { 'X-PAYMENT': 'not-base64-%%%' },
    });
    expect(refused.status).toBe(402);
    const health = await fetch(`${app.url}/health`);
    expect(health.status).toBe(200);
    const missing = await fetch(`${app.url}/no/such/${encodeURIComponent('"}\n{"forged":1}')}`);
    expect(missing.status).toBe(404);

    const lines = out.events().filter((e) => e.component === 'http');
    expect(lines).toHaveLength(5);
    for (const l of lines) {
      expect(l).toMatchObject({ level: 'info', msg: 'request', client: '127.0.0.1' });
      expect(typeof l.ms).toBe('number');
      expect(l.ms as number).toBeGreaterThanOrEqual(0);
    }
    expect(lines.map((l) => [l.method, l.route, l.status, l.payment ?? null])).toEqual([
      ['GET', '/reputation/wallet/:wallet', 200, 'settled'],
      ['GET', '/reputation/wallet/:wallet', 402, 'challenged'],
      ['GET', '/reputation/wallet/:wallet', 402, 'refused:invalid_payment_header'],
      ['GET', '/health', 200, null],
      ['GET', 'unmatched', 404, null],
    ]);
    const all = out.chunks.join('');
    for (const secret of [
      header,
      header.slice(0, 40),
      'QUERYSECRET123',
      'BEARERSECRET456',
      WALLET,
      'forged',
    ]) {
      expect(all).not.toContain(secret);
    }
  });

  it('LOG_LEVEL=warn silences the access log', async () => {
    const out = capture('warn');
    expect((await fetch(`${app.url}/health`)).status).toBe(200);
    expect(out.chunks).toEqual([]);
  });
});

describe('a chain that cannot be reached', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t?.close());

  it('fails once, at warn, with the endpoint (credentials stripped), the cause and the hint; retries at debug', async () => {
    const dead = await deadRpcUrl();
    const key = 'AbCdEfGhIjKlMnOpQrStUvWx';
    const reg = {
      identityRegistry: '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
      reputationRegistry: '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63',
    } as const;
    const config = configFor([
      { network: 'base', chainId: 8453, rpcUrl: `${dead}/v2/${key}?apikey=QSECRET`, reg },
      {
        network: 'optimism',
        chainId: 10,
        rpcUrl: `http://operator:PWSECRET@127.0.0.1:${new URL(dead).port}/`,
        reg,
      },
    ]);
    const out = capture('debug');
    const report = await runIndexPass({
      db: t.db,
      config,
      afterPass: null,
      progress: 'off',
      scan: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(report.status === 'ok' && [...report.failed].sort()).toEqual(['base', 'optimism']);
    const events = out.events().filter((e) => e.component === 'index');

    const failures = events.filter((e) => e.outcome === 'failed');
    expect(failures.map((e) => e.chain).sort()).toEqual(['base', 'optimism']);
    const base = failures.find((e) => e.chain === 'base')!;
    expect(base.level).toBe('warn');
    expect(base.endpoint).toBe(`${dead}/v2/***?apikey=***`);
    expect(String(base.cause)).toMatch(/ECONNREFUSED/);
    expect(String(base.error)).toMatch(/failed after 3 attempts/);
    for (const needle of ['RPC_URL_BASE', 'CHAINS_FILE', 'INDEXER_PERIOD_SECONDS=0'])
      expect(String(base.hint)).toContain(needle);
    const op = failures.find((e) => e.chain === 'optimism')!;
    expect(String(op.endpoint)).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/$/);
    expect(String(op.hint)).toContain('RPC_URL_OPTIMISM');

    // Nothing else at warn or above about these chains: the failure is said once.
    expect(
      events.filter(
        (e) =>
          e.level !== 'debug' &&
          e.level !== 'info' &&
          e.outcome !== 'failed' &&
          !/pass done/.test(String(e.msg)),
      ),
    ).toEqual([]);
    // The retries are debug lines (2 per failing call at 3 attempts).
    const retries = events.filter((e) => /retry \d+\//.test(String(e.msg)));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    for (const r of retries) expect(r.level).toBe('debug');
    // A summary for the pass.
    const summary = events.find((e) => /^\[index\] pass done/.test(String(e.msg)))!;
    expect(summary).toMatchObject({ chains: 2, ok: 0, failed: ['base', 'optimism'] });

    const all = out.chunks.join('');
    for (const secret of [key, 'QSECRET', 'PWSECRET']) expect(all).not.toContain(secret);
    const rows = await t.db.query<{ last_error: string }>(
      `SELECT last_error FROM chains WHERE network IN ('base', 'optimism')`,
    );
    for (const r of rows)
      for (const secret of [key, 'QSECRET', 'PWSECRET']) expect(r.last_error).not.toContain(secret);

    // At info, the retries are gone and the failure line stays.
    const info = capture('info');
    await runIndexPass({
      db: t.db,
      config,
      afterPass: null,
      progress: 'off',
      scan: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const infoEvents = info.events();
    expect(infoEvents.some((e) => /retry \d+\//.test(String(e.msg)))).toBe(false);
    expect(infoEvents.filter((e) => e.outcome === 'failed')).toHaveLength(2);
  });
});

describe('LOG_LEVEL through the CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = migratedDataDir(mkdtempSync(join(tmpdir(), 'repindex-log-')));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const migrate = (env: Record<string, string>) =>
    spawnSync(process.execPath, repindexArgs(['migrate']), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dir, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });

  it('writes JSON lines at info by default and nothing below warn with LOG_LEVEL=warn', () => {
    const info = migrate({});
    expect(info.status, info.stderr).toBe(0);
    const lines = info.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      component: 'migrate',
      applied: expect.any(Array),
    });
    const warn = migrate({ LOG_LEVEL: 'warn' });
    expect(warn.status, warn.stderr).toBe(0);
    expect(warn.stdout).toBe('');
    const bad = migrate({ LOG_LEVEL: 'loud' });
    expect(bad.status).toBe(78);
    expect(bad.stderr).toContain('LOG_LEVEL');
  }, 300_000);
});
