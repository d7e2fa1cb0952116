/**
 * rep_pricing: `/pricing` and `/health` read in process, and each metered tier probed once
 * without payment on its neutral subject (declared in METERED_ROUTES): the live 402 is the
 * authority of a price, so each probe reports its `accepts[]` amount and recipient check.
 */
import {
  fromAnswer,
  result,
  TOOL_CAVEAT,
  type RouteAnswer,
  type ToolCaveat,
  type ToolResult,
} from './results.js';
import type { ToolDeps } from './tool-kit.js';
import { METERED_ROUTES } from '../../metered-routes.js';
import { isObject } from '../in-process.js';

/** The neutral request rep_pricing probes each metered tier with (declared in METERED_ROUTES). */
const PROBE_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  METERED_ROUTES.flatMap((r) => r.tiers.map((t) => [t.id, t.probe])),
);

export async function pricing(deps: ToolDeps): Promise<ToolResult> {
  const [p, h] = await Promise.all([deps.call('/pricing'), deps.call('/health')]);
  if (p.http_status !== 200 || !isObject(p.body)) return fromAnswer(p, deps.treasury);
  const catalog = p.body;
  const tool_caveats: ToolCaveat[] = [];
  let index: Record<string, unknown> | null = null;
  let policies: Record<string, unknown> | null = null;
  if (h.http_status === 200 && isObject(h.body)) {
    const hb = h.body;
    index = {
      agents: hb.agents ?? null,
      feedback_entries: hb.feedback_entries ?? null,
      chains: Array.isArray(hb.chains) ? hb.chains.length : null,
      indexer_period_seconds: hb.indexer_period_seconds ?? null,
    };
    policies = {
      policy_version: hb.policy_version ?? null,
      ordering_policy: hb.ordering_policy ?? null,
      rater_weight_policy: hb.rater_weight_policy ?? null,
      confidence_policy: hb.confidence_policy ?? null,
      reading_policy: hb.reading_policy ?? null,
      pricing_version: catalog.pricing_version ?? null,
    };
  } else {
    tool_caveats.push({
      code: TOOL_CAVEAT.partial,
      text: `The live index size and policies could not be read (GET /health answered ${h.http_status ?? 'nothing'}); prices are still valid.`,
    });
  }
  const tiers = Array.isArray(catalog.tiers) ? (catalog.tiers as unknown[]).filter(isObject) : [];
  const metered = tiers.filter((t) => t.free === false && typeof t.id === 'string');
  const probes = await Promise.all(
    metered.map(async (t) => {
      const id = t.id as string;
      const path = PROBE_PATHS[id];
      if (!path) return { tier: id, probed: false, reason: 'no probe subject for this tier' };
      const a: RouteAnswer = await deps.call(path);
      const probe: Record<string, unknown> = {
        tier: id,
        route: a.route,
        http_status: a.http_status,
        catalog_price_usd: t.price_usd ?? null,
      };
      if (a.http_status === 402 && isObject(a.body)) {
        const c = a.body;
        const accepts = Array.isArray(c.accepts) ? (c.accepts as unknown[]).filter(isObject) : [];
        const amounts = [...new Set(accepts.map((x) => x.amount))];
        const r = fromAnswer(a, deps.treasury);
        return {
          ...probe,
          live: true,
          price_usd: c.price_usd ?? null,
          amount: amounts.length === 1 ? amounts[0] : amounts,
          networks: accepts.map((x) => x.network),
          matches_catalog: amounts.length === 1 && amounts[0] === t.amount,
          recipient_check: r.recipient_check,
        };
      }
      return {
        ...probe,
        live: false,
        detail:
          a.http_status === 404
            ? 'the route is not mounted'
            : 'the route did not answer with a 402 challenge',
      };
    }),
  );
  if (probes.some((x) => !('live' in x) || x.live !== true)) {
    tool_caveats.push({
      code: TOOL_CAVEAT.partial,
      text: 'Some metered routes did not answer their 402 probe (see probes[]).',
    });
  }
  return result('ok', {
    route: p.route,
    http_status: p.http_status,
    data: {
      pricing_version: catalog.pricing_version ?? null,
      currency: catalog.currency ?? null,
      treasury: catalog.treasury ?? null,
      networks: catalog.networks ?? null,
      authority: catalog.authority ?? null,
      free_tier: catalog.free_tier ?? null,
      tiers: catalog.tiers ?? [],
      index,
      policies,
      probes,
    },
    tool_caveats,
  });
}
