/**
 * Paid handlers on the demo scenario, the agent detail (tier agent-detail): every rating with its
 * transaction and exact value, a revoked rating marked, a real zero, paging with truncation,
 * normalized EVM agent ids. Registered by test/paid-handlers.test.ts inside its describe, on its
 * one demo copy (the fixture: test/helpers/paid-demo.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyRating, POLICY_VERSION } from '../../src/scoring/index.js';
import { mean, paidDemoTools, type PaidDemo } from '../helpers/paid-demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The 'agent detail' suite over the file's fixture. */
export function agentDetailSuite(fixture: () => PaidDemo): void {
  let demo: PaidDemo['demo'];
  let stored: PaidDemo['stored'];
  const { call } = paidDemoTools(fixture);
  beforeAll(() => {
    ({ demo, stored } = fixture());
  });

  describe('agent detail', () => {
    const agentCall = (network: string, agentId: string, q: Record<string, string> = {}) =>
      call('agent-detail', { network, agent_id: agentId }, q);

    it('revoked rating: present, marked, with its revoking transaction', async () => {
      const rev = demo.facts.revoked[0]!;
      const { status, body } = await agentCall(rev.network, String(rev.agentId), { limit: '0' });
      expect(status).toBe(200);
      const rows = stored.ratings.filter(
        (r) => r.network === rev.network && r.agent_id === String(rev.agentId),
      );
      expect(body.ratings.length).toBe(rows.length);
      const marked = body.ratings.filter((r: any) => r.revoked);
      expect(marked.length).toBe(rows.filter((r) => r.revoked).length);
      const hit = marked.find((r: any) => r.revoked_tx?.toLowerCase() === rev.txHash.toLowerCase());
      expect(hit).toBeDefined();
      expect(hit.is_revoked).toBe(true);
      expect(body.revoked_count).toBe(rows.filter((r) => r.revoked).length);
    });

    it('every rating with tx, block, log index, rater, facet, exact value; score relative to the current owner', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const id = String(a.agentId);
      const rows = stored.ratings
        .filter((r) => r.network === a.network && r.agent_id === id)
        .sort((x, y) => x.block_number - y.block_number || x.log_index - y.log_index);
      const { body } = await agentCall(a.network, id, { limit: '0' });
      expect(body.current_owner).toBe(demo.facts.multiChainOwner.address.toLowerCase());
      expect(body.indexed_identity).toBe(true);
      expect(body.ratings.map((r: any) => [r.tx_hash, r.block_number, r.log_index])).toEqual(
        rows.map((r) => [r.tx_hash, r.block_number, r.log_index]),
      );
      body.ratings.forEach((r: any, i: number) => {
        expect(r.rater).toBe(rows[i]!.rater);
        expect(r.facet).toBe(rows[i]!.tag1);
        expect(r.value_exact).toBe(rows[i]!.value);
        expect(r.value).toBe(Number(rows[i]!.value));
      });
      const elig = rows.filter((r) => classifyRating(r, r.owner!) === 'eligible');
      expect(body.score).toBe(mean(elig.map((r) => r.value)));
      expect(body.review_count).toBe(elig.length);
      expect(body.policy_version).toBe(POLICY_VERSION);
      expect(body.confidence).not.toBeNull();
      expect(Array.isArray(body.caveats)).toBe(true);
    });

    it('a real zero renders as 0, never null', async () => {
      const z = demo.facts.zeroRating;
      const { body } = await agentCall(z.network, String(z.agentId), { limit: '0' });
      const r = body.ratings.find((x: any) => x.tx_hash.toLowerCase() === z.txHash.toLowerCase());
      expect(r).toBeDefined();
      expect(r.value).toBe(0);
      expect(r.normalized_value).toBe(0);
      expect(Number(r.value_exact)).toBe(0);
    });

    it('paging declares truncation and continues', async () => {
      // the agent with the most ratings
      const counts = new Map<string, number>();
      for (const r of stored.ratings)
        counts.set(`${r.network}/${r.agent_id}`, (counts.get(`${r.network}/${r.agent_id}`) ?? 0) + 1);
      const [key, total] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
      const [network, id] = key.split('/') as [string, string];
      expect(total).toBeGreaterThan(2);
      const full = await agentCall(network, id, { limit: '0' });
      expect(full.body.pagination).toMatchObject({
        total,
        returned: total,
        next_offset: null,
        truncated: false,
      });
      const p1 = await agentCall(network, id, { limit: '2' });
      expect(p1.body.pagination).toMatchObject({
        total,
        returned: 2,
        offset: 0,
        next_offset: 2,
        truncated: true,
      });
      const p2 = await agentCall(network, id, { limit: '2', offset: '2' });
      expect([...p1.body.ratings, ...p2.body.ratings]).toEqual(full.body.ratings.slice(0, 4));
      // the score always covers every rating
      expect(p1.body.score).toBe(full.body.score);
      const dflt = await agentCall(network, id);
      expect(dflt.body.pagination.limit).toBe(200);
      const tail = await agentCall(network, id, { offset: String(total) });
      expect(tail.body.pagination).toMatchObject({ total, returned: 0, next_offset: null });
    });

    it('EVM agent ids are normalized ("007" is "7")', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const plain = await agentCall(a.network, String(a.agentId));
      const padded = await agentCall(a.network.toUpperCase(), `00${a.agentId}`);
      expect(padded.body).toEqual(plain.body);
    });

    it('404 unknown network, 422 bad agent id / paging, 404 agent not indexed', async () => {
      const a = demo.facts.multiChainOwner.agents[0]!;
      const net = await agentCall('nochain', '1');
      expect(net.status).toBe(404);
      expect(net.body.detail.error).toBe('unknown_network');
      expect(net.body.detail.known_networks).toEqual(demo.config.chains.map((c) => c.network));
      expect((await agentCall(a.network, 'abc')).status).toBe(422);
      expect((await agentCall(a.network, '-1')).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: '1001' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: 'x' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { offset: '-1' })).status).toBe(422);
      expect((await agentCall(a.network, String(a.agentId), { limit: '5', max_ratings: '5' })).status).toBe(
        422,
      );
      expect((await agentCall(a.network, String(a.agentId), { foo: '1' })).status).toBe(422);
      const missing = await agentCall(a.network, '987654321');
      expect(missing).toEqual({ status: 404, body: { detail: 'agent not indexed' } });
    });
  });
}
