/**
 * The account-history lookup against a real local node (issue 32): a fresh wallet's first rating
 * has nonce 0, a wallet that sent four transactions before rating has nonce 4; the job reads them
 * with eth_getTransactionByHash through the configured chain (the same client `serve` uses), one
 * call per rater, and the paid rater profile and agent detail serve the class. Runs on PGlite and
 * (with DATABASE_URL) PostgreSQL.
 */
import { createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { paidHandlers } from '../src/paid/index.js';
import type { PaidHandler } from '../src/paid/handler.js';
import { raterEvidenceContextFor, runRaterEvidence } from '../src/raters/job.js';
import type { Config } from '../src/config.js';
import type { AppContext } from '../src/doors/http/context.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';
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
let config: Config;
let agentId: bigint;
let fresh: Address;
let busy: Address;

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  const keys = chain.node.privateKeys;
  ({ agentId } = await registerAgent(chain.reg, keys[1]!, 'https://agent.example/card.json'));
  fresh = privateKeyToAddress(keys[2]!);
  busy = privateKeyToAddress(keys[3]!);
  const wallet = createWalletClient({
    account: privateKeyToAccount(keys[3]! as Hex),
    transport: http(chain.node.rpcUrl),
  });
  for (let i = 0; i < 4; i++) await wallet.sendTransaction({ to: busy, value: 1n, chain: null });
  await giveFeedback(chain.reg, keys[2]!, { agentId, value: 60, tag1: 'quality' });
  await giveFeedback(chain.reg, keys[3]!, { agentId, value: 80, tag1: 'quality' });
  await giveFeedback(chain.reg, keys[3]!, { agentId, value: 90, tag1: 'quality' });
  config = configFor([target(chain, { startBlock: 0, confirmations: 0 })]);
  const report = await runIndexPass({
    db: t.db,
    config,
    log: quietLogger(),
    afterPass: null,
    progress: 'off',
  });
  expect(report.failed).toEqual([]);
}, 120_000);

afterAll(async () => {
  await Promise.all([chain?.close(), t?.close()]);
});

describe(`account history from the chain (${testDbKind})`, () => {
  it('reads the sender and nonce of each rater’s first rating transaction, once', async () => {
    let calls = 0;
    const ctx = raterEvidenceContextFor(t.db, config);
    const real = ctx.lookups.source;
    ctx.lookups.source = async (network, hash) => {
      calls++;
      return real(network, hash);
    };
    const r = await runRaterEvidence(ctx);
    expect(r.lookups).toMatchObject({ leased: 2, fetched: 2, retried: 0, failed: 0 });
    expect(calls).toBe(2);
    const rows = await t.db.query<any>(
      `SELECT rater, state, tx_from, nonce::int AS nonce FROM rater_first_tx ORDER BY rater`,
    );
    expect(rows).toEqual(
      [
        { rater: fresh.toLowerCase(), state: 'fetched', tx_from: fresh.toLowerCase(), nonce: 0 },
        { rater: busy.toLowerCase(), state: 'fetched', tx_from: busy.toLowerCase(), nonce: 4 },
      ].sort((a, b) => (a.rater < b.rater ? -1 : 1)),
    );
    // nothing left to look up
    expect((await runRaterEvidence(ctx)).lookups.leased).toBe(0);
    expect(calls).toBe(2);
  });

  it('the paid answers serve the class: fresh and established', async () => {
    const ctx = { config, db: t.db, now: () => new Date() } as AppContext;
    const run = async (tier: string, params: Record<string, string>) => {
      const h = paidHandlers[tier] as PaidHandler<unknown>;
      const v = await h.validate(ctx, { params, query: {} });
      if (!v.ok) throw new Error(JSON.stringify(v.body));
      return JSON.parse(JSON.stringify((await h.run(ctx, v.input, { receipt: null })).body));
    };
    const p = await run('rater-profile', { wallet: busy });
    expect(p.evidence.account_history).toMatchObject({
      class: 'established',
      nonce_at_first_rating: 4,
      tx_from: busy.toLowerCase(),
    });
    const d = await run('agent-detail', { network: 'base', agent_id: String(agentId) });
    const classes = Object.fromEntries(
      d.ratings.map((r: any) => [r.rater, r.rater_evidence.account_history.class]),
    );
    expect(classes).toEqual({ [fresh.toLowerCase()]: 'fresh', [busy.toLowerCase()]: 'established' });
    // one proven voice: the fresh one weighs at most 3 % of it
    expect(d.weighted_score).toBeCloseTo((85 + 0.03 * 60) / 1.03, 5);
  });
});
