/**
 * The metered-route table (src/metered-routes.ts), the one tier rule (`matchTier`) and the
 * tier → handler map (src/paid/index.ts): every declared tier has its handler, every probe of the
 * table is priced by `matchTier` as the tier that declares it, and the wallet route's handler
 * answers with the handler of the tier the paywall picked (never by re-reading the query). No
 * database: the wallet handlers' `validate` reads only the request.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import type { PaidContext, RawPaidRequest } from '../src/paid/handler.js';
import { paidHandlers, routeHandler } from '../src/paid/index.js';
import { METERED_ROUTES } from '../src/metered-routes.js';
import { matchTier } from '../src/payments/pricing.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const ctx: PaidContext = {
  config: loadConfig({}),
  db: null as unknown as Database,
  now: () => new Date('2026-11-01T12:00:00Z'),
};
const WALLET = '0x00000000000000000000000000000000000000aa';

describe('metered-route table', () => {
  it('imports no handler (plain data)', () => {
    const text = readFileSync(new URL('../src/metered-routes.ts', import.meta.url), 'utf8');
    expect(text).not.toMatch(/from '\.\.\/paid\//);
  });

  it('every declared tier has exactly one handler, answering that tier', () => {
    const declared = METERED_ROUTES.flatMap((r) => r.tiers.map((t) => t.id)).sort();
    expect(Object.keys(paidHandlers).sort()).toEqual(declared);
    for (const id of declared) expect(paidHandlers[id]!.tier).toBe(id);
  });

  it("matchTier prices every tier's probe as that tier, with and without /v1", () => {
    for (const r of METERED_ROUTES) {
      for (const t of r.tiers) {
        const url = new URL(t.probe, 'http://x');
        expect(matchTier('GET', url.pathname, url.searchParams)?.id).toBe(t.id);
        expect(matchTier('HEAD', `/v1${url.pathname}`, url.searchParams)?.id).toBe(t.id);
      }
    }
  });
});

describe('routeHandler: the handler of the tier the paywall picked', () => {
  const wallet = METERED_ROUTES.find((r) => r.tiers.length > 1)!;
  const req = (tier: string | undefined, snapshot?: string): RawPaidRequest => ({
    params: { wallet: WALLET },
    query: snapshot === undefined ? {} : { snapshot: [snapshot] },
    ...(tier === undefined ? {} : { tier }),
  });

  it('a route with one tier is mounted with that tier’s own handler', () => {
    for (const r of METERED_ROUTES.filter((x) => x.tiers.length === 1))
      expect(routeHandler(r)).toBe(paidHandlers[r.tiers[0]!.id]);
  });

  it('dispatches on the tier id, not on the query', async () => {
    const snap = (await routeHandler(wallet).validate(ctx, req('wallet-snapshot', 'true'))) as any;
    expect(snap.ok).toBe(true);
    expect(snap.input.handler).toBe(paidHandlers['wallet-snapshot']);
    const lookup = (await routeHandler(wallet).validate(ctx, req('wallet-lookup'))) as any;
    expect(lookup.ok).toBe(true);
    expect(lookup.input.handler).toBe(paidHandlers['wallet-lookup']);
    // The tier decides the write: the lookup tier never runs the snapshot, whatever the query says.
    const refused = (await routeHandler(wallet).validate(ctx, req('wallet-lookup', 'true'))) as any;
    expect(refused.ok).toBe(false);
    expect(refused.status).toBe(422);
  });

  it('without a tier, or with a tier of another route, answers as the unconditional tier', async () => {
    for (const tier of [undefined, 'agent-detail']) {
      const v = (await routeHandler(wallet).validate(ctx, req(tier))) as any;
      expect(v.ok).toBe(true);
      expect(v.input.handler).toBe(paidHandlers[wallet.tiers[0]!.id]);
    }
  });
});
