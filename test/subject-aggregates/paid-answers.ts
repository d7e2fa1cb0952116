/**
 * The paid answers over the maintained aggregates (migration 0050): the same ratings ingested in
 * two orders and batchings give byte-identical paid bodies and snapshot digests; weighted_score
 * never lets junk (self, revoked, out-of-domain) ratings raise a rater's weight; the agent detail
 * pages by keyset. Registered by test/subject-aggregates.test.ts after its property test, on the
 * same database (a second one would pay its warm-up again: about 0.5 s on PGlite).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { AppContext } from '../../src/doors/http/context.js';
import { AGENT_RATINGS_MAX_LIMIT } from '../../src/paid/agent-detail.js';
import type { PaidHandler, RawPaidRequest } from '../../src/paid/handler.js';
import { paidHandlers } from '../../src/paid/index.js';
import { snapshotDigest, walletProfileBody } from '../../src/paid/wallet-profile.js';
import { readSubjectAggregateInputs } from '../../src/read/subject-aggregates.js';
import { RATER_WEIGHT_POLICY, raterWeight, round6 } from '../../src/scoring/index.js';
import { refreshAggregates } from '../../src/store/aggregates-refresh.js';
import { A, ADDRS, AGENTS, NETWORKS, TAGS, historyWriter, type Op } from '../helpers/agg-history.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The two suites over the file's database (its own block counter: the first test restarts it). */
export function paidAnswersSuites(database: () => Database): void {
  let db: Database;
  let seq = 0;
  const { reset, apply } = historyWriter(
    () => db,
    () => ++seq,
  );
  beforeAll(() => {
    db = database();
  });

  describe('bit-identical answers across re-indexings', () => {
    it('the same ratings ingested in two orders and batchings give byte-identical paid bodies and digests', async () => {
      const items: Extract<Op, { kind: 'rate' }>['items'] = [];
      // Values whose float running sums depend on order (0.1-style fractions, long thirds).
      const vals = [
        '62.695416666666666',
        '33.333333333333333333',
        '0.1',
        '0.2',
        '87.5',
        '99.99',
        '1.000000000000001',
      ];
      for (let i = 0; i < 60; i++) {
        items.push({
          network: NETWORKS[i % 2] as string,
          agent: AGENTS[i % 3] as string,
          rater: ADDRS[(i * 7) % 5] as string,
          value: vals[(i * 5) % vals.length] as string,
          time: Date.UTC(2024, 0, 1) + i * 36_000_000,
          tag: TAGS[i % TAGS.length] as string,
          revoked: i % 11 === 0,
        });
      }
      const owners: Op[] = NETWORKS.flatMap((network) =>
        AGENTS.map((agent, k) => ({ kind: 'owner' as const, network, agent, owner: ADDRS[k % 2] as string })),
      );
      const bodies = async () => {
        // The free aggregates too (their means feed the prior that the paid answers shrink toward).
        await db.query(
          `INSERT INTO chains (network, kind) SELECT unnest($1::text[]), 'evm' ON CONFLICT DO NOTHING`,
          [NETWORKS],
        );
        await refreshAggregates(db, () => new Date(0));
        const out: string[] = [];
        for (const q of [
          'SELECT wallet, final_score, shrunk_score FROM agg_wallet ORDER BY wallet',
          'SELECT wallet, network, final_score, shrunk_score FROM agg_wallet_chain ORDER BY wallet, network',
          'SELECT network, mean_value, prior FROM agg_chain ORDER BY network',
          'SELECT network, tag1, mean FROM agg_facet ORDER BY network, tag1',
          "SELECT value FROM agg_meta WHERE meta_key = 'refresh'",
        ]) {
          out.push(JSON.stringify(await db.query(q)));
        }
        for (const w of [ADDRS[0], ADDRS[1]] as string[]) {
          const inputs = await readSubjectAggregateInputs(db, w);
          out.push(JSON.stringify(walletProfileBody(inputs)), snapshotDigest(inputs, 'p'));
        }
        return out;
      };
      await reset();
      seq = 0;
      await apply([...owners, { kind: 'rate', items }]);
      const first = await bodies();
      await reset();
      seq = 0;
      // Reverse order, one rating per statement, owners set last (transfers move what they must).
      const reversed = [...items].reverse();
      await apply(reversed.map((it) => ({ kind: 'rate' as const, items: [it] })));
      await apply(owners);
      const second = await bodies();
      expect(second).toEqual(first);
      await reset();
    }, 300_000);
  });

  describe('paid handlers over the maintained aggregates', () => {
    const W = A(6);
    const R = A(7);
    const Q = A(8);
    const ctx = () =>
      ({ config: loadConfig({ INDEXER_PERIOD_SECONDS: '0' }), db, now: () => new Date() }) as AppContext;
    const call = async (tier: string, params: Record<string, string>, query: Record<string, string> = {}) => {
      const h = paidHandlers[tier] as PaidHandler<unknown>;
      const req: RawPaidRequest = {
        params,
        query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
      };
      const v = await h.validate(ctx(), req);
      if (!v.ok) return { status: v.status, body: v.body as any };
      const r = await h.run(ctx(), v.input, { receipt: null });
      return { status: r.status, body: JSON.parse(JSON.stringify(r.body)) };
    };
    const rate = (
      agent: string,
      rater: string,
      value: string,
      block: number,
      logIndex = 0,
      revoked = false,
    ) =>
      db.query(
        `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                              value, block_number, block_time, revoked)
         VALUES ('base', $1, $2, $3, $4, $5::bigint, 0, 0, $6, $5::bigint, $7, $8)`,
        [
          `0x${block.toString(16).padStart(64, '0')}`,
          logIndex,
          agent,
          rater,
          block,
          value,
          new Date(Date.UTC(2025, 0, 1) + block * 60_000),
          revoked,
        ],
      );

    it("weighted_score: junk (self, revoked, out-of-domain) ratings never raise a rater's weight", async () => {
      await reset();
      for (const [agent, owner] of [
        ['1', W],
        ['2', A(1)],
        ['3', A(2)],
        ['5', R],
      ] as const) {
        await db.query('INSERT INTO agents (network, agent_id, owner) VALUES ($1, $2, $3)', [
          'base',
          agent,
          owner,
        ]);
      }
      await rate('1', R, '100', 1);
      await rate('1', Q, '0', 2);
      await rate('2', R, '90', 3, 0, true); // revoked
      await rate('3', R, '150', 4); // out of domain
      await rate('5', R, '100', 5); // R rating its own agent
      const { status, body } = await call('wallet-lookup', { wallet: W });
      expect(status).toBe(200);
      // R's only ELIGIBLE subject is W, like Q's: equal weights, so the weighted mean is the plain one.
      const w = raterWeight(1);
      expect(body.weighted_score).toBe(round6((w * 100 + w * 0) / (2 * w)));
      expect(body.rater_weight_policy).toBe(RATER_WEIGHT_POLICY);
      await reset();
    });

    it('agent detail pages by keyset and never returns more than the page; the score covers every rating', async () => {
      await reset();
      await db.query("INSERT INTO agents (network, agent_id, owner) VALUES ('base', '1', $1)", [W]);
      const blocks = [5, 5, 9, 12, 12, 12, 20];
      for (let i = 0; i < blocks.length; i++)
        await rate('1', i % 2 ? R : Q, String(10 * i), blocks[i] as number, i);
      const expected = await db.query<{ tx_hash: string }>(
        "SELECT tx_hash, log_index FROM ratings WHERE network = 'base' AND agent_id = '1' ORDER BY block_number, log_index, tx_hash",
      );
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const q: Record<string, string> = { limit: '3' };
        if (after !== null) q.after = after;
        const { status, body } = await call('agent-detail', { network: 'base', agent_id: '1' }, q);
        expect(status).toBe(200);
        expect(body.ratings.length).toBeLessThanOrEqual(3);
        expect(body.pagination.total).toBe(blocks.length);
        expect(body.total_reviews).toBe(blocks.length);
        seen.push(
          ...body.ratings.map((r: { tx_hash: string; log_index: number }) => `${r.tx_hash}/${r.log_index}`),
        );
        after = body.pagination.next_cursor;
        if (after === null) break;
      }
      expect(seen).toEqual(expected.map((r: any) => `${r.tx_hash}/${r.log_index}`));
      const bad = await call('agent-detail', { network: 'base', agent_id: '1' }, { after: 'nope' });
      expect(bad.status).toBe(422);
      const both = await call(
        'agent-detail',
        { network: 'base', agent_id: '1' },
        { after: '5.0.0xab', offset: '2' },
      );
      expect(both.status).toBe(422);
      const all = await call('agent-detail', { network: 'base', agent_id: '1' }, { limit: '0' });
      expect(all.body.pagination.limit).toBe(AGENT_RATINGS_MAX_LIMIT);
      expect(all.body.ratings.length).toBe(blocks.length);
      await reset();
    });
  });
}
