/**
 * Feedback documents end to end, on a local chain and a local document server (issue 23): the
 * indexer queues one job per rating naming a URI; the fetcher leases jobs (two owners never hold
 * the same job; an expired lease is taken again), fetches, and stores per rating every integrity
 * state (match, mismatch, no_commitment, not_json, unreachable, changed), the fields that disagree
 * with the log, retries with backoff, ipfs jobs waiting for a gateway, and proofs of payment
 * checked against a real ERC-20 transfer on the chain (verified, a transfer to someone else,
 * not_found, unsupported_chain). Runs on PGlite and (with DATABASE_URL) PostgreSQL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendResponse, giveFeedback, registerAgent } from '../src/demo/registries.js';
import { createApp } from '../src/doors/http/app.js';
import { agentDetailHandler } from '../src/paid/agent-detail.js';
import { walletLookupHandler } from '../src/paid/wallet-profile.js';
import { deployTestToken, mintTestToken, payWithToken } from '../src/demo/token.js';
import {
  chainReceipts,
  drainDocuments,
  fetchHost,
  fetcherOptions,
  runFetchRound,
  type FetcherContext,
} from '../src/documents/fetcher.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { registry } from '../src/metrics.js';
import { leaseDocuments } from '../src/store/documents.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

let chain: LocalChain;
let t: TestDatabase;
let server: Server;
let base: string;
/** path → [content type, body]; the server answers 404 for anything else. */
const docs = new Map<string, [string, string]>();
let status503 = 0;

let owner: Address;
let agentId: bigint;
let token: Address;
const keys: Hex[] = [];
const other: Address = '0x000000000000000000000000000000000000beef';
// The fetcher's clock; jobs are queued at the database's now(), so it starts just after the pass.
let now = new Date();

const ZERO = `0x${'0'.repeat(64)}` as Hex;
const hashOf = (s: string) => keccak256(toHex(s));

function feedbackFile(rater: Address, over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    agentRegistry: `eip155:8453:${chain.reg.identityRegistry}`,
    agentId: Number(agentId),
    clientAddress: `eip155:8453:${rater}`,
    createdAt: '2026-06-30T12:00:00Z',
    value: 90,
    valueDecimals: 0,
    tag1: 'quality',
    ...over,
  });
}

function ctx(over: Partial<FetcherContext> = {}): FetcherContext {
  const config = configFor([target(chain)]);
  const options = fetcherOptions(config);
  options.limits.allowPrivate = true; // the document server is on 127.0.0.1
  options.limits.timeoutMs = 5_000;
  options.maxAttempts = 3;
  options.retryBaseSeconds = 60;
  options.recheckSeconds = 3600;
  return { db: t.db, options, receipts: chainReceipts(config.chains), clock: () => now, ...over };
}

async function docRow(uriPath: string) {
  const [row] = await t.db.query<Record<string, unknown>>(
    `SELECT state, attempts, reason, integrity_state, mismatches, payment_state, payment_reason, payment_proof,
            blob_sha256, blob_keccak256, byte_length, parser_version, next_try_at
       FROM feedback_documents WHERE uri = $1`,
    [`${base}${uriPath}`],
  );
  return row!;
}

/** Gives one rating from keys[i] with the given document (served at /<name>). */
async function rate(i: number, name: string, body: string | null, hash: Hex, value = 90) {
  if (body !== null) docs.set(`/${name}`, ['application/json', body]);
  await giveFeedback(chain.reg, keys[i]!, {
    agentId,
    value,
    tag1: 'quality',
    feedbackURI: name.startsWith('ipfs:') ? name : `${base}/${name}`,
    feedbackHash: hash,
  });
}

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  keys.push(...chain.node.privateKeys);
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/busy.json' && status503-- > 0) {
      res.writeHead(503);
      res.end();
      return;
    }
    const d = docs.get(path);
    if (!d) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': d[0] });
    res.end(d[1]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  owner = privateKeyToAddress(keys[1]!);
  ({ agentId } = await registerAgent(chain.reg, keys[1]!, 'https://agent.example/card.json'));
  token = await deployTestToken(chain.node.rpcUrl, keys[0]!);
  const r2 = privateKeyToAddress(keys[2]!);
  const r3 = privateKeyToAddress(keys[3]!);
  await mintTestToken(chain.node.rpcUrl, keys[0]!, token, r2, 10_000_000n);
  await mintTestToken(chain.node.rpcUrl, keys[0]!, token, r3, 10_000_000n);
  const paid = await payWithToken(chain.node.rpcUrl, keys[2]!, token, owner, 2_500_000n);
  const paidElsewhere = await payWithToken(chain.node.rpcUrl, keys[3]!, token, other, 1_000_000n);
  const proof = (from: Address, to: Address, txHash: Hex, chainId: number | string = 8453) => ({
    proofOfPayment: { fromAddress: from, toAddress: to, chainId, txHash },
  });

  // match + a verified payment (keys[2] paid the owner)
  const matchDoc = feedbackFile(r2, proof(r2, owner, paid));
  await rate(2, 'match.json', matchDoc, hashOf(matchDoc));
  // mismatch: the log commits to other bytes; the proof names the owner but the tx paid someone else
  const mm = feedbackFile(r3, proof(r3, owner, paidElsewhere));
  await rate(3, 'mismatch.json', mm, hashOf('other bytes'));
  // no_commitment, with fields that disagree with the log; a proof to someone else
  const r4 = privateKeyToAddress(keys[4]!);
  await rate(
    4,
    'nocommit.json',
    feedbackFile(r4, { agentId: 999, value: 10, tag1: 'price', ...proof(r4, other, paid) }),
    ZERO,
  );
  // not_json (served as text)
  await giveFeedback(chain.reg, keys[5]!, { agentId, value: 50, feedbackURI: `${base}/text.txt` });
  docs.set('/text.txt', ['text/plain', 'thanks, great agent']);
  // unreachable (404, final)
  await rate(6, 'gone.json', null, ZERO);
  // changed later (matched first)
  const r7 = privateKeyToAddress(keys[7]!);
  const first = feedbackFile(r7, proof(r7, owner, `0x${'12'.repeat(32)}` as Hex)); // no such tx: not_found
  await rate(7, 'changing.json', first, hashOf(first));
  docs.set('/changing.json.first', ['application/json', first]); // kept for the test's own check
  // busy twice, then served (retries); a proof on a chain we do not index
  const r8 = privateKeyToAddress(keys[8]!);
  const busy = feedbackFile(r8, proof(r8, owner, paid, 'eip155:1'));
  await rate(8, 'busy.json', busy, hashOf(busy));
  status503 = 2;
  // ipfs without a gateway
  await rate(9, 'ipfs://bafybeigdyrztfeedback', null, ZERO);
  // responses to the matching rating: by the owner, then by a third party
  await appendResponse(chain.reg, keys[1]!, agentId, r2, 1, 'https://agent.example/thanks.json');
  await appendResponse(chain.reg, keys[9]!, agentId, r2, 1, 'https://elsewhere.example/me-too.json');

  const report = await runIndexPass({
    db: t.db,
    config: configFor([target(chain, { startBlock: 0 })]),
    log: quietLogger(),
    afterPass: null,
    progress: 'off',
  });
  if (report.status !== 'ok' || report.failed.length > 0) throw new Error('index pass failed');
  now = new Date(Date.now() + 1000);
}, 180_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await t?.close();
  await chain?.close();
});

describe('the document queue', () => {
  it('the indexer queued one job per rating that names a URI, idempotently', async () => {
    const rows = await t.db.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM feedback_documents GROUP BY state`,
    );
    expect(rows).toEqual([{ state: 'queued', n: 8 }]);
  });

  it('leases: a second owner gets nothing while the lease holds, everything after it expires', async () => {
    const a = await leaseDocuments(t.db, 'A', now, 100, 60);
    expect(a).toHaveLength(8);
    expect(await leaseDocuments(t.db, 'B', now, 100, 60)).toHaveLength(0);
    const later = new Date(now.getTime() + 61_000);
    const b = await leaseDocuments(t.db, 'B', later, 100, 60);
    expect(b.map((j) => j.tx_hash).sort()).toEqual(a.map((j) => j.tx_hash).sort());
    // give the jobs back as never tried
    await t.db.query(
      `UPDATE feedback_documents SET state = 'queued', attempts = 0, lease_owner = NULL, lease_expires_at = NULL`,
    );
  });

  it('fetches every document and stores each integrity state, the field mismatches and the payment checks', async () => {
    const succeeded = async () =>
      (await registry.getSingleMetric('repindex_feedback_documents_total')!.get()).values.find(
        (v) => v.labels.outcome === 'succeeded',
      )?.value ?? 0;
    const before = await succeeded();
    const r = await drainDocuments(ctx());
    expect((await succeeded()) - before).toBe(r.succeeded);
    expect(r.succeeded).toBeGreaterThanOrEqual(5);
    expect(r.leased).toBeGreaterThanOrEqual(8);

    const match = await docRow('/match.json');
    expect(match).toMatchObject({
      state: 'succeeded',
      integrity_state: 'match',
      payment_state: 'verified',
      parser_version: 'erc8004-feedback/1',
    });
    expect(match.mismatches).toEqual([]);
    expect(match.blob_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((match.payment_proof as Record<string, unknown>).amount).toBe('2500000');
    expect((match.payment_proof as Record<string, unknown>).token).toBe(token.toLowerCase());

    const mm = await docRow('/mismatch.json');
    expect(mm).toMatchObject({
      integrity_state: 'mismatch',
      payment_state: 'mismatch',
      payment_reason: 'no_matching_transfer',
    });

    const nc = await docRow('/nocommit.json');
    expect(nc).toMatchObject({
      integrity_state: 'no_commitment',
      payment_state: 'mismatch',
      payment_reason: 'to_not_agent',
    });
    expect((nc.mismatches as { field: string }[]).map((m) => m.field)).toEqual(['agentId', 'value', 'tag1']);

    expect(await docRow('/text.txt')).toMatchObject({ state: 'succeeded', integrity_state: 'not_json' });
    expect(await docRow('/gone.json')).toMatchObject({
      state: 'failed',
      integrity_state: 'unreachable',
      reason: 'http_error',
    });
    expect(await docRow('/changing.json')).toMatchObject({
      integrity_state: 'match',
      payment_state: 'not_found',
    });

    // busy: retried with backoff, not yet due again
    const busy = await docRow('/busy.json');
    expect(busy).toMatchObject({ state: 'retry', attempts: 1, reason: 'http_error' });
    expect(new Date(busy.next_try_at as string).getTime()).toBe(now.getTime() + 60_000);

    const [ipfs] = await t.db.query<Record<string, unknown>>(
      `SELECT state, attempts, reason FROM feedback_documents WHERE uri LIKE 'ipfs:%'`,
    );
    expect(ipfs).toEqual({ state: 'queued', attempts: 0, reason: 'no_ipfs_gateway' });
  });

  it('retries until the server answers; a proof on a chain the index does not cover is unsupported_chain', async () => {
    now = new Date(now.getTime() + 61_000);
    await runFetchRound(ctx());
    expect(await docRow('/busy.json')).toMatchObject({ state: 'retry', attempts: 2 });
    now = new Date(now.getTime() + 121_000); // the second backoff doubles
    await drainDocuments(ctx());
    expect(await docRow('/busy.json')).toMatchObject({
      state: 'succeeded',
      attempts: 3,
      integrity_state: 'match',
      payment_state: 'unsupported_chain',
    });
  });

  it('a re-check that finds other bytes marks the document changed', async () => {
    docs.set('/changing.json', ['application/json', '{"edited":true}']);
    now = new Date(now.getTime() + 3601_000);
    await drainDocuments(ctx());
    const row = await docRow('/changing.json');
    // what the first (committed) bytes proved is kept: their payment check, their blob hash
    expect(row).toMatchObject({
      state: 'succeeded',
      integrity_state: 'changed',
      reason: 'content_changed',
      payment_state: 'not_found',
    });
    expect(row.blob_keccak256).toBe(hashOf(docs.get('/changing.json.first')![1]));
    // the unchanged ones stay what they were
    expect(await docRow('/match.json')).toMatchObject({ integrity_state: 'match' });
  });

  it('an unreachable job fails after the attempts run out', async () => {
    // a retryable failure forever: the server goes away for this URI
    await t.db.query(
      `UPDATE feedback_documents SET uri = $1, state = 'queued', attempts = 0 WHERE uri = $2`,
      [`${base}/busy.json`.replace(/:\d+\//, ':1/'), `${base}/gone.json`],
    );
    for (let i = 0; i < 4; i++) {
      now = new Date(now.getTime() + 3600_000);
      await drainDocuments(ctx());
    }
    const [row] = await t.db.query<Record<string, unknown>>(
      `SELECT state, attempts, integrity_state, reason FROM feedback_documents WHERE uri LIKE '%:1/busy.json'`,
    );
    expect(row).toMatchObject({
      state: 'failed',
      attempts: 3,
      integrity_state: 'unreachable',
      reason: 'connect_failed',
    });
  });

  it('serves each rating with its document, author class, responses and payment proof; evidence moves no score', async () => {
    const r2 = privateKeyToAddress(keys[2]!).toLowerCase();
    const config = {
      ...configFor([target(chain)]),
      knownRelayers: [privateKeyToAddress(keys[8]!).toLowerCase()],
    };
    const pctx = { config, db: t.db, now: () => now };
    const v = await agentDetailHandler.validate(pctx, {
      params: { network: 'base', agent_id: String(agentId) },
      query: {},
    });
    if (!v.ok) throw new Error(JSON.stringify(v.body));
    const res = await agentDetailHandler.run(pctx, v.input, { receipt: null });
    const body = JSON.parse(JSON.stringify(res.body)) as {
      ratings: Record<string, any>[];
      evidence: Record<string, unknown>;
      policy_version: string;
    };
    const byUri = (suffix: string) => body.ratings.find((r) => String(r.feedback_uri).endsWith(suffix))!;
    const match = byUri('/match.json');
    expect(match.document).toMatchObject({
      state: 'succeeded',
      integrity_state: 'match',
      parser_version: 'erc8004-feedback/1',
      mismatches: [],
    });
    expect(match.document.blob_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(match.document.byte_length).toBeGreaterThan(100);
    expect(match.payment_proof).toMatchObject({
      state: 'verified',
      from_address: r2,
      to_address: owner.toLowerCase(),
      chain_id: 8453,
      token: token.toLowerCase(),
      amount: '2500000',
    });
    expect(match.author_class).toBe('rater-authored');
    expect(match.responses.map((x: any) => [x.responder_class, x.response_uri])).toEqual([
      ['owner', 'https://agent.example/thanks.json'],
      ['third_party', 'https://elsewhere.example/me-too.json'],
    ]);
    expect(byUri('/mismatch.json').payment_proof).toMatchObject({
      state: 'mismatch',
      reason: 'no_matching_transfer',
    });
    expect(byUri('/nocommit.json').document.mismatches.map((m: any) => m.field)).toEqual([
      'agentId',
      'value',
      'tag1',
    ]);
    expect(byUri('/busy.json').author_class).toBe('facilitator-authored');
    expect(byUri('/changing.json').document.integrity_state).toBe('changed');
    expect(byUri('ipfs://bafybeigdyrztfeedback').document).toMatchObject({
      state: 'queued',
      integrity_state: null,
      last_error_code: 'no_ipfs_gateway',
    });
    expect(byUri('ipfs://bafybeigdyrztfeedback').payment_proof).toBeNull();
    // the counts are recomputed from the rows, never typed
    const [expected] = await t.db.query<{ m: number; v: number }>(
      `SELECT count(*) FILTER (WHERE integrity_state = 'match')::int AS m,
              count(*) FILTER (WHERE payment_state = 'verified')::int AS v FROM feedback_documents`,
    );
    expect(body.evidence).toMatchObject({
      ratings_with_matching_document: expected!.m,
      ratings_with_verified_payment: expected!.v,
      moves_score: false,
    });
    expect(expected!.v).toBe(1);

    // the owner's wallet profile carries the same counts (its one agent), beside an unchanged score
    const w = await walletLookupHandler.validate(pctx, { params: { wallet: owner }, query: {} });
    if (!w.ok) throw new Error(JSON.stringify(w.body));
    const wallet = JSON.parse(
      JSON.stringify((await walletLookupHandler.run(pctx, w.input, { receipt: null })).body),
    );
    expect(wallet.evidence).toEqual(body.evidence);
    expect(wallet.policy_version).toBe(body.policy_version);

    // the free coverage figures
    const app = createApp({ config, db: t.db, now: () => now });
    const stats = (await (await app.request('/stats/documents')).json()) as Record<string, any>;
    expect(stats.ratings_with_uri).toBe(8);
    expect(stats.by_integrity).toMatchObject({
      match: 2,
      mismatch: 1,
      no_commitment: 1,
      not_json: 1,
      changed: 1,
    });
    expect(stats.by_payment).toMatchObject({ verified: 1, mismatch: 2, not_found: 1, unsupported_chain: 1 });
    expect(stats.by_responder_class).toEqual({ owner: 1, operator: 0, third_party: 1 });
    expect(stats.by_issuer[0]).toMatchObject({ issuer_host: '127.0.0.1', documents: 7 });
    // /stats/issuers: the same coverage per issuer host, and for the URI without one
    const issuers = (await (await app.request('/stats/issuers')).json()) as Record<string, any>;
    expect(issuers.document_coverage.by_host['127.0.0.1']).toEqual({
      documents: 7,
      fetched: stats.by_issuer[0].fetched,
      matching: 2,
      verified_payments: 1,
    });
    expect(issuers.document_coverage.no_host).toEqual({
      documents: 1,
      fetched: 0,
      matching: 0,
      verified_payments: 0,
    });
  });

  it('fetches politely: never two documents of one host at once', async () => {
    // every job due again (a fresh queue of the same documents)
    await t.db.query(
      `UPDATE feedback_documents SET state = 'queued', attempts = 0, next_try_at = $1::timestamptz, reason = NULL`,
      [now.toISOString()],
    );
    const inFlight = new Map<string, number>();
    let maxPerHost = 0;
    let calls = 0;
    const r = await runFetchRound(
      ctx({
        fetch: async (uri) => {
          const h = fetchHost(uri) ?? uri;
          inFlight.set(h, (inFlight.get(h) ?? 0) + 1);
          maxPerHost = Math.max(maxPerHost, inFlight.get(h)!);
          calls++;
          await new Promise((res) => setTimeout(res, 20));
          inFlight.set(h, inFlight.get(h)! - 1);
          return { ok: false, code: 'http_error', retryable: true };
        },
      }),
    );
    expect(r.leased).toBe(8);
    expect(calls).toBe(8);
    expect(maxPerHost).toBe(1);
    expect(fetchHost('HTTPS://Docs.Example:8443/x')).toBe('docs.example:8443');
    expect(fetchHost('data:application/json,{}')).toBeNull();
  });
});
