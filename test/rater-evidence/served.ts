/**
 * Rater evidence through the database, the background run (cohorts, independent breadth,
 * reciprocity, verified payments in valued tokens, graph trust, written once per change of its
 * inputs) and the served facts (agent detail, wallet profile, rater profile, the free count and its
 * explorer card; the row and aggregate paths agree). It reads the raters the earlier suites wrote.
 * Registered by test/rater-evidence.test.ts on its one database (the fixture: test/helpers/rater-
 * evidence.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/doors/http/app.js';
import type { AppContext } from '../../src/doors/http/context.js';
import type { IndexEvent } from '../../src/index-events.js';
import { paidHandlers } from '../../src/paid/index.js';
import type { PaidHandler, RawPaidRequest } from '../../src/paid/handler.js';
import { walletProfileBody } from '../../src/paid/wallet-profile.js';
import { refreshRaterEvidence } from '../../src/raters/refresh.js';
import { readSubjectAggregateInputs } from '../../src/read/subject-aggregates.js';
import { readSubjectInputs } from '../../src/read/subject.js';
import { refreshAggregates } from '../../src/store/aggregates-refresh.js';
import { RATER_WEIGHT_POLICY, round6 } from '../../src/scoring/index.js';
import { testDbKind } from '../helpers/db.js';
import {
  H,
  T0,
  USDC_BASE,
  addr,
  type RaterEventTools,
  type RaterFixture,
} from '../helpers/rater-evidence.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

/** The 'the background run and the served evidence (${testDbKind})' suite over the file's database. */
export function servedEvidenceSuite(fixture: () => RaterFixture, tools: RaterEventTools): void {
  let db: RaterFixture['db'];
  let config: RaterFixture['config'];
  const { mint, rate, ingest, verifiedPayment } = tools;
  beforeAll(() => {
    ({ db, config } = fixture());
  });

  describe(`the background run and the served evidence (${testDbKind})`, () => {
    const owner = addr('dd', 1);
    const agent = '777';
    const honest = [1, 2, 3, 4].map((i) => addr('e1', i));
    const payer = addr('e2', 1);
    const farm = [1, 2, 3, 4, 5, 6].map((i) => addr('f1', i));
    const ringOwners = [1, 2, 3].map((i) => addr('a7', i));
    let ctx: AppContext;
    let payTx: string;

    const call = async (tier: string, params: Record<string, string>): Promise<any> => {
      const h = paidHandlers[tier] as PaidHandler<unknown>;
      const req: RawPaidRequest = { params, query: {} };
      const v = await h.validate(ctx, req);
      if (!v.ok) throw new Error(`invalid: ${JSON.stringify(v.body)}`);
      return JSON.parse(JSON.stringify((await h.run(ctx, v.input, { receipt: null })).body));
    };

    beforeAll(async () => {
      const events: IndexEvent[] = [...mint('base', agent, owner, 400)];
      honest.forEach((r, i) => events.push(rate('base', agent, r, 40 + 10 * i, T0 + i * 50 * H, 401 + i)));
      // honest raters rate a second, honest agent too
      events.push(...mint('base', '778', addr('dd', 2), 405));
      honest.forEach((r, i) => events.push(rate('base', '778', r, 70, T0 + (i * 50 + 1) * H, 406 + i)));
      const paying = rate('base', agent, payer, 90, T0 + 300 * H, 420);
      payTx = paying.txHash;
      events.push(paying);
      // a fresh farm: one window, one value
      farm.forEach((r, i) => events.push(rate('base', agent, r, 100, T0 + 400 * H + i * 60_000, 430 + i)));
      // three owners rating each other
      ringOwners.forEach((o, i) => events.push(...mint('base', String(800 + i), o, 440 + i)));
      ringOwners.forEach((o, i) =>
        ringOwners.forEach((p, j) => {
          if (i !== j)
            events.push(
              rate('base', String(800 + j), o, 100, T0 + 500 * H + (i * 3 + j) * 60_000, 450 + i * 3 + j),
            );
        }),
      );
      await ingest('base', events, 500);
      await verifiedPayment(payTx, USDC_BASE, '2500000');
      // every lookup answered: honest raters with history, the farm fresh
      await db.query(
        `UPDATE rater_first_tx SET state = 'fetched', tx_from = rater,
                nonce = CASE WHEN rater LIKE '0xf1%' THEN 0 ELSE 250 END
          WHERE rater = ANY($1)`,
        [[...honest, payer, ...farm, ...ringOwners]],
      );
      await refreshAggregates(db);
      ctx = { config, db, now: () => new Date() } as AppContext;
    });

    it('computes cohorts, breadth, reciprocity, payments and graph trust; reruns only when its inputs move', async () => {
      const r1 = await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [] });
      expect(r1.skipped).toBe(false);
      // the farm, the ring, and the four raters of the lookup test above (agent 902, one window)
      expect(r1.cohorts).toBe(3);
      expect(r1.seeds).toBe(1);
      const ev = Object.fromEntries(
        (await db.query<any>(`SELECT * FROM rater_evidence`)).map((r) => [r.rater, r]),
      );
      expect(ev[farm[0]!]).toMatchObject({
        cohort_id: farm[0],
        cohort_size: 6,
        cohort_reasons: 'first_rating_window',
      });
      expect(ev[ringOwners[0]!]).toMatchObject({ cohort_size: 3, cohort_reasons: 'reciprocal_ring' });
      expect(ev[honest[0]!]).toMatchObject({ subjects: 2, independent_subjects: 2, cohort_id: null });
      expect(ev[payer]).toMatchObject({ verified_ratings: 1, seed: true, graph_trust: 1 });
      expect(Number(ev[payer].paid_micro_usd)).toBe(2_500_000);
      expect(ev[farm[0]!].graph_trust).toBe(0);
      expect(ev[honest[0]!].graph_trust).toBeGreaterThan(0);
      const pairs = await db.query<any>(`SELECT * FROM rater_subject_evidence ORDER BY rater, subject`);
      expect(pairs.filter((p) => p.reciprocal)).toHaveLength(6);
      expect(pairs.find((p) => p.rater === payer)).toMatchObject({ subject: owner, verified_ratings: 1 });
      // nothing moved: skipped; forced: the same rows
      expect((await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [] })).skipped).toBe(true);
      expect(
        (await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [], force: true })).skipped,
      ).toBe(false);
    });

    it('a payment in a token nobody values is a verified fact worth nothing', async () => {
      const other = rate('base', '778', payer, 90, T0 + 310 * H, 470);
      await ingest('base', [other], 470);
      await verifiedPayment(other.txHash, '0x' + '12'.repeat(20), '999000000000000');
      await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [] });
      const [row] = await db.query<any>(
        `SELECT verified_ratings, paid_micro_usd::text AS paid FROM rater_evidence WHERE rater = $1`,
        [payer],
      );
      expect(row).toMatchObject({ verified_ratings: 2, paid: '2500000' });
      // an operator may value it (RATER_VALUED_TOKENS)
      await refreshRaterEvidence(db, {
        knownRelayers: [],
        valuedTokens: [{ chainId: 8453, token: '0x' + '12'.repeat(20), decimals: 18 }],
        force: true,
      });
      const [again] = await db.query<any>(
        `SELECT paid_micro_usd::text AS paid FROM rater_evidence WHERE rater = $1`,
        [payer],
      );
      expect(again.paid).toBe(String(2_500_000 + 999));
      await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [], force: true });
    });

    it('the agent detail serves each rating’s rater evidence and voice weight; weighted_score recomputes from them', async () => {
      const body = await call('agent-detail', { network: 'base', agent_id: agent });
      expect(body.rater_weight_policy).toBe(RATER_WEIGHT_POLICY);
      expect(body.final_score).toBe(round6((40 + 50 + 60 + 70 + 90 + 600) / 11));
      expect(body.rater_evidence.computed_at).toEqual(expect.any(String));
      const byRater = new Map<string, any>(body.ratings.map((r: any) => [r.rater, r.rater_evidence]));
      const f = byRater.get(farm[0]!);
      expect(f.account_history).toMatchObject({ class: 'fresh', nonce_at_first_rating: 0, gas_payer: null });
      expect(f.cohort).toEqual({ id: farm[0], size: 6 });
      expect(f.voice).toMatchObject({ proven: false, cohort_members: 6 });
      const p = byRater.get(payer);
      expect(p.verified_payment).toEqual({ ratings_to_subject: 1, usd_to_subject: '2.5' });
      expect(p.seed).toBe(true);
      expect(p.voice.payment_lift).toBeCloseTo(Math.log10(250) / 3, 12);
      expect(byRater.get(honest[0]!).account_history.class).toBe('established');
      // the weighted mean of the served voices and weights is the served weighted_score
      let num = 0;
      let den = 0;
      for (const r of body.ratings) {
        if (!r.rater_evidence.voice || byRater.get(r.rater) === undefined) continue;
        const w = r.rater_evidence.voice.weight;
        const voices = body.ratings.filter((x: any) => x.rater === r.rater).map((x: any) => x.value);
        num += (w * voices.reduce((a: number, b: number) => a + b, 0)) / voices.length;
        den += w;
        byRater.delete(r.rater);
      }
      expect(body.weighted_score).toBe(round6(num / den));
      // the farm weighs together at most 3 % of the proven voices
      expect(Math.abs(body.weighted_score - (40 + 50 + 60 + 70) / 4)).toBeGreaterThan(0);
      expect(body.weighted_score).toBeLessThan(body.final_score);
    });

    it('the wallet profile counts its raters’ evidence; the row path gives the same weighted_score', async () => {
      const body = await call('wallet-lookup', { wallet: owner });
      expect(body.rater_evidence).toMatchObject({
        raters: 11,
        with_verified_payment: 1,
        account_history: { established: 5, fresh: 6, relayed: 0, pending: 0, unavailable: 0 },
        proven: 5,
        in_cohort: 6,
        cohorts: 1,
        seeds: 1,
        rater_weight_policy: RATER_WEIGHT_POLICY,
      });
      const agg = walletProfileBody(await readSubjectAggregateInputs(db, owner));
      const rows = walletProfileBody(await readSubjectInputs(db, owner));
      expect(rows.weighted_score).toBe(agg.weighted_score);
      expect(agg.weighted_score).toBe(body.weighted_score);
      const ring = walletProfileBody(await readSubjectAggregateInputs(db, ringOwners[0]!));
      const ringRows = walletProfileBody(await readSubjectInputs(db, ringOwners[0]!));
      expect(ringRows.weighted_score).toBe(ring.weighted_score);
    });

    it('live_rater keeps a copy of each rater’s facts equal to rater_evidence; the answers are the same without it', async () => {
      const copies = async () =>
        db.query<{ rater: string; facts: string | null; evidence: string | null }>(
          `SELECT l.rater, l.facts, e.facts AS evidence FROM live_rater l LEFT JOIN rater_evidence e ON e.rater = l.rater`,
        );
      const rows = await copies();
      expect(rows.filter((r) => r.evidence !== null).length).toBeGreaterThan(10);
      for (const r of rows) expect(r.facts).toBe(r.evidence);
      const wallet = await call('wallet-lookup', { wallet: owner });
      const detail = await call('agent-detail', { network: 'base', agent_id: agent });
      // without the copies (a rater's row made by the triggers since the last run) each rater's facts
      // come from its evidence row: the same answers
      await db.exec(`UPDATE live_rater SET facts = NULL`);
      expect(await call('wallet-lookup', { wallet: owner })).toEqual(wallet);
      expect(await call('agent-detail', { network: 'base', agent_id: agent })).toEqual(detail);
      // the next run writes the copies again, even though no evidence row changed
      await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [], force: true });
      for (const r of await copies()) expect(r.facts).toBe(r.evidence);
      // a copy that differs from its evidence row is rewritten by the next run
      await db.query(`UPDATE live_rater SET facts = 'stale:::::::0' WHERE rater = $1`, [honest[0]!]);
      await refreshRaterEvidence(db, { knownRelayers: [], valuedTokens: [], force: true });
      for (const r of await copies()) expect(r.facts).toBe(r.evidence);
    });

    it('the rater profile serves the rater’s facts with their sources', async () => {
      const body = await call('rater-profile', { wallet: payer });
      expect(body.evidence.account_history).toMatchObject({
        class: 'established',
        nonce_at_first_rating: 250,
      });
      expect(body.evidence.account_history.first_rating).toMatchObject({ network: 'base', tx_hash: payTx });
      expect(body.evidence.verified_payment).toMatchObject({
        ratings: 2,
        usd: '2.5',
        subjects_paid: 2,
        seed: true,
      });
      expect(body.evidence.breadth).toMatchObject({ agents_rated: 2, subjects: 2 });
      expect(body.evidence.graph_trust.parameters).toMatchObject({ damping: 0.85, seed_usd: '0.1' });
      expect(typeof body.evidence.graph_trust.source).toBe('string');
      const ring = await call('rater-profile', { wallet: ringOwners[1]! });
      expect(ring.evidence.cohort).toMatchObject({ size: 3, reasons: ['reciprocal_ring'] });
      expect(ring.evidence.reciprocal_subjects).toBe(2);
      expect(ring.final_score).toBeUndefined();
    });

    it('GET /wallets/{wallet}/rater-evidence: the free count; zeros for an unknown wallet; 422 for a non-address; the explorer shows it', async () => {
      const app = createApp({ ...ctx, freeCache: null } as AppContext);
      const res = await app.request(`/wallets/${owner.toUpperCase().replace('0X', '0x')}/rater-evidence`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({
        wallet: owner,
        distinct_raters: 11,
        raters_with_verified_payment: 1,
        rater_weight_policy: RATER_WEIGHT_POLICY,
        source: 'rater_evidence',
      });
      expect(body.computed_at).toEqual(expect.any(String));
      expect(Object.keys(body)).not.toContain('weighted_score');
      const none = (await (await app.request(`/wallets/${addr('99', 9)}/rater-evidence`)).json()) as any;
      expect(none).toMatchObject({ distinct_raters: 0, raters_with_verified_payment: 0 });
      expect((await app.request('/wallets/nope/rater-evidence')).status).toBe(422);
      const page = await (await app.request(`/explore/wallets/${owner}`)).text();
      expect(page).toContain(
        '<span class="v" id="raters-paid">1</span> of its <span id="raters-total">11</span>',
      );
      expect(page).not.toContain(
        String(walletProfileBody(await readSubjectAggregateInputs(db, owner)).weighted_score),
      );
    });
  });
}
