/**
 * The explorer's pages, as pure functions of the JSON answers of the free routes (the same bytes an
 * API client gets; src/doors/explorer/routes.ts fetches them in process). No query, no I/O here.
 * Every value read from the index (addresses, ids, tag1, types) is interpolated through `h`, so it
 * is escaped text.
 */
import type { z } from '@hono/zod-openapi';
import type { PricingCatalog } from '../../payments/pricing.js';
import { displayScore } from '../../scoring/display.js';
import type {
  ChainDetailSchema,
  ChainStatSchema,
  FeedEventSchema,
  LeaderboardSchema,
} from '../http/schemas/aggregates.js';
import type {
  SearchResultSchema,
  WalletChainsSchema,
  WalletRaterEvidenceSchema,
} from '../http/schemas/lookup.js';
import { activityChart } from './chart.js';
import { h, type Html } from './html.js';

export type ChainStat = z.infer<typeof ChainStatSchema>;
export type ChainDetail = z.infer<typeof ChainDetailSchema>;
export type FeedEvent = z.infer<typeof FeedEventSchema>;
export type Leaderboard = z.infer<typeof LeaderboardSchema>;
export type WalletChains = z.infer<typeof WalletChainsSchema>;
export type SearchResult = z.infer<typeof SearchResultSchema>;
export type WalletRaterEvidence = z.infer<typeof WalletRaterEvidenceSchema>;

/** The fields of `GET /health` the home page shows. */
export interface HealthSummary {
  status: string;
  agents: number;
  feedback_entries: number;
  policy_version: string;
  aggregates_refreshed_at: string | null;
}

/** One metered route about the subject of a wallet page, priced by the pricing table. */
export interface PaidRoute {
  path: string;
  tier: string;
  price_usd: string;
  why: string;
}

export const CSS_PATH = '/explore/assets/explorer.css';

export const walletHref = (w: string) => `/explore/wallets/${encodeURIComponent(w)}`;
export const chainHref = (n: string) => `/explore/chains/${encodeURIComponent(n)}`;
export const searchHref = (q: string) => `/explore/search?q=${encodeURIComponent(q)}`;
export const agentHref = (network: string, id: string) =>
  `/explore/agents/${encodeURIComponent(network)}/${encodeURIComponent(id)}`;

/**
 * A score as people see it (two decimals, trailing zeros trimmed: the display convention), the
 * served number in its title and `data-value`; or "unrated": null is not zero.
 */
export const score = (v: number | null) =>
  v === null
    ? h`<span class="muted">unrated</span>`
    : h`<span class="score" title="${v}" data-value="${v}">${displayScore(v)}</span>`;

/** A long hex string shortened for a table cell, in full in its title. */
export function short(s: string, keep = 10): Html {
  return s.length <= keep + 6
    ? h`<span class="mono">${s}</span>`
    : h`<span class="mono" title="${s}">${s.slice(0, keep)}…${s.slice(-4)}</span>`;
}

export const walletLink = (w: string | null) =>
  w === null ? h`<span class="muted">unknown</span>` : h`<a href="${walletHref(w)}">${short(w)}</a>`;
export const chainLink = (n: string) => h`<a href="${chainHref(n)}">${n}</a>`;
/** Agent ids, each a link to its agent page on `network`. */
const agentLinks = (network: string, ids: readonly string[]) =>
  ids.map((id, i) => h`${i > 0 ? ', ' : ''}<a href="${agentHref(network, id)}">${id}</a>`);
const facetText = (f: string) =>
  f === '' ? h`<span class="muted">(none)</span>` : h`<span class="text">${f}</span>`;

export function layout(title: string, body: Html): Html {
  return h`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · repindex explorer</title>
<link rel="stylesheet" href="${CSS_PATH}">
</head>
<body>
<header class="site"><a class="brand" href="/">repindex</a>
<nav><a href="/">Explorer</a><a href="/docs">API docs</a><a href="/redoc">Redoc</a><a href="/manifesto.html">Manifesto</a><a href="/pricing">Pricing</a></nav></header>
<main>
${body}
</main>
<footer class="site">A read-only reputation index for ERC-8004 agents: evidence, not verdicts. Every page here is built from the free JSON API
(<a href="/openapi.json">/openapi.json</a>); on-chain text is shown as text, never run.</footer>
</body>
</html>
`;
}

export function searchForm(q = ''): Html {
  return h`<form class="search" method="get" action="/explore/search" role="search">
<label class="muted" for="q">Address or agent id (exact match)</label>
<input id="q" type="search" name="q" value="${q}" placeholder="0x… wallet, Solana key, or an agent id such as 7" maxlength="200" required>
<button type="submit">Search</button>
</form>`;
}

function chainsTable(chains: readonly ChainStat[]): Html {
  return h`<div class="scroll"><table id="chains">
<thead><tr><th>chain</th><th class="num">agents</th><th class="num">ratings</th><th class="num">raters</th><th class="num">scored wallets</th><th>last rating</th><th class="num">stale (h)</th></tr></thead>
<tbody>${chains.map(
    (c) =>
      h`<tr data-network="${c.network}"><td>${chainLink(c.network)}</td><td class="num agents">${c.agents}</td><td class="num ratings">${c.ratings}</td><td class="num raters">${c.distinct_raters}</td><td class="num scored">${c.scored_wallets}</td><td>${c.last_rating_day ?? '—'}</td><td class="num stale">${c.stale_hours === null ? 'never synced' : c.stale_hours}</td></tr>`,
  )}</tbody></table></div>`;
}

function leaderboardTable(rows: Leaderboard['rows']): Html {
  if (rows.length === 0) return h`<p class="muted">No wallet is scored yet.</p>`;
  return h`<div class="scroll"><table id="leaderboard">
<thead><tr><th class="num">#</th><th>wallet</th><th class="num">shrunk score</th><th class="num">score</th><th class="num">distinct raters</th><th class="num">ratings</th><th>chains</th></tr></thead>
<tbody>${rows.map(
    (r) =>
      h`<tr data-wallet="${r.wallet}"><td class="num rank">${r.rank}</td><td>${walletLink(r.wallet)}</td><td class="num shrunk">${score(r.shrunk_score)}</td><td class="num final">${score(r.final_score)}</td><td class="num raters">${r.distinct_raters}</td><td class="num reviews">${r.total_reviews}</td><td>${r.networks.map((n, i) => h`${i > 0 ? ', ' : ''}${chainLink(n)}`)}</td></tr>`,
  )}</tbody></table></div>`;
}

function feedTable(rows: readonly FeedEvent[]): Html {
  if (rows.length === 0) return h`<p class="muted">No dated rating yet.</p>`;
  return h`<div class="scroll"><table id="feed">
<thead><tr><th>block time (UTC)</th><th>chain</th><th>agent</th><th>subject</th><th>rater</th><th>facet (tag1)</th><th class="num">value</th><th>tx</th></tr></thead>
<tbody>${rows.map(
    (e) =>
      h`<tr data-tx="${e.tx_hash}" data-log="${e.log_index}"><td>${e.block_time.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}</td><td>${chainLink(e.network)}</td><td><a class="mono" href="${searchHref(e.agent_id)}">${e.agent_id}</a></td><td>${walletLink(e.subject_wallet)}</td><td>${walletLink(e.rater)}</td><td>${facetText(e.facet)}</td><td class="num value">${e.value_exact}${e.revoked ? h` <span class="muted">(revoked)</span>` : ''}</td><td>${short(e.tx_hash)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function homePage(d: {
  health: HealthSummary;
  chains: readonly ChainStat[];
  leaderboard: Leaderboard;
  feed: readonly FeedEvent[];
}): Html {
  const indexed = d.chains.filter((c) => c.enabled || c.agents > 0 || c.ratings > 0);
  const others = d.chains.filter((c) => !indexed.includes(c)).map((c) => c.network);
  return layout(
    'ERC-8004 reputation index',
    h`<h1>ERC-8004 agent reputation, with its evidence</h1>
<p>Every rating written to the ERC-8004 Reputation registries of the chains below, joined to each agent's current owner. Scores travel with their composition: read the number of distinct raters next to every score.</p>
${searchForm()}
<div class="cards" id="totals">
<div class="card"><span class="v" id="total-agents">${d.health.agents}</span><span class="k">agents indexed</span></div>
<div class="card"><span class="v" id="total-ratings">${d.health.feedback_entries}</span><span class="k">ratings indexed</span></div>
<div class="card"><span class="v" id="total-chains">${indexed.length}</span><span class="k">chains scanned</span></div>
<div class="card"><span class="v" id="index-status">${d.health.status}</span><span class="k">index status</span></div>
</div>
<p class="note">Policy <code>${d.health.policy_version}</code>; aggregates refreshed ${d.health.aggregates_refreshed_at ?? 'never'}.</p>
<h2>Chains</h2>
${chainsTable(indexed)}
${others.length > 0 ? h`<p class="note">Configured but not scanned: ${others.join(', ')}.</p>` : ''}
<h2>Leaderboard (free first page)</h2>
<p class="note">Ordered by ${d.leaderboard.order} (<code>${d.leaderboard.ordering_policy}</code>, k = ${d.leaderboard.shrinkage.k}, prior = ${d.leaderboard.shrinkage.prior ?? 'none'}). Further pages: <code>${d.leaderboard.paged_route}</code> (paid).</p>
${leaderboardTable(d.leaderboard.rows)}
<h2>Latest ratings</h2>
${feedTable(d.feed)}
<h2>More</h2>
<p class="links"><a href="/docs">API docs (Swagger UI)</a><a href="/redoc">API reference (Redoc)</a><a href="/manifesto.html">Manifesto</a><a href="/pricing">Pricing (JSON)</a><a href="/openapi.json">OpenAPI</a></p>`,
  );
}

export function searchPage(q: string, result: SearchResult | null): Html {
  const body = h`<h1>Search</h1>
${searchForm(q)}
<p class="note">Exact match only, as <code>GET /search/{q}</code>: an EVM address, a Solana key, or an agent id (digits; the same id is a different agent on each chain). No name search.</p>
${
  result === null
    ? ''
    : h`<p id="match-count">${result.match_count} ${result.match_count === 1 ? 'match' : 'matches'} for <code>${result.normalized_query}</code> (read as ${result.interpretations.join(', ')}).</p>
${
  result.matches.length === 0
    ? h`<p class="muted">The index has never seen it.</p>`
    : h`<div class="scroll"><table id="matches">
<thead><tr><th>read as</th><th>chain</th><th>owner wallet</th><th>agent ids</th><th>declared type</th><th class="num">score</th><th class="num">ratings</th><th class="num">distinct raters</th><th>paid detail</th></tr></thead>
<tbody>${result.matches.map(
        (m) =>
          h`<tr data-network="${m.network}"><td>${m.interpreted_as}</td><td>${chainLink(m.network)}</td><td class="owner">${walletLink(m.wallet)}</td><td class="mono ids">${m.agent_ids.join(', ')}</td><td class="text">${m.declared_type ?? '—'}</td><td class="num final">${score(m.final_score)}</td><td class="num reviews">${m.total_reviews}</td><td class="num raters">${m.distinct_raters}</td><td><code class="text">${m.detail_route}</code></td></tr>`,
      )}</tbody></table></div>`
}`
}`;
  return layout(q === '' ? 'Search' : `Search: ${q}`, body);
}

export function walletPage(d: {
  preview: WalletChains;
  badgeSnippet: string;
  paid: readonly PaidRoute[];
  paidExample: string | null;
  pricing: Pick<PricingCatalog, 'pricing_version' | 'treasury' | 'currency'>;
  /** The free counts of `/wallets/{wallet}/rater-evidence` (null: not available). */
  raterEvidence?: WalletRaterEvidence | null;
}): Html {
  const p = d.preview;
  const re = d.raterEvidence ?? null;
  const badge = `/badge/${encodeURIComponent(p.wallet)}.svg`;
  return layout(
    `Wallet ${p.wallet}`,
    h`<h1>Wallet <span class="mono" id="wallet">${p.wallet}</span></h1>
<div class="cards" id="wallet-totals">
<div class="card"><span class="v" id="global-score">${score(p.global_score)}</span><span class="k">global score (mean of per-chain scores)</span></div>
<div class="card"><span class="v" id="identity-count">${p.identity_count}</span><span class="k">identities</span></div>
<div class="card"><span class="v" id="wallet-reviews">${p.total_reviews}</span><span class="k">eligible ratings</span></div>
<div class="card"><span class="v" id="wallet-raters">${p.distinct_raters}</span><span class="k">distinct raters</span></div>
</div>
<h2>Per chain (free preview)</h2>
${
  p.chains.length === 0
    ? h`<p class="muted" id="no-identity">This wallet holds no agent identity in the index (no data is not a zero).</p>`
    : h`<div class="scroll"><table id="wallet-chains">
<thead><tr><th>chain</th><th>agent ids</th><th class="num">score</th><th class="num">ratings</th><th class="num">distinct raters</th></tr></thead>
<tbody>${p.chains.map(
        (c) =>
          h`<tr data-network="${c.network}"><td>${chainLink(c.network)}</td><td class="mono ids">${agentLinks(c.network, c.agent_ids)}</td><td class="num final">${score(c.final_score)}</td><td class="num reviews">${c.total_reviews}</td><td class="num raters">${c.distinct_raters}</td></tr>`,
      )}</tbody></table></div>`
}
<p class="note">Policy <code>${p.policy_version}</code>, from <code>${p.source}</code>, refreshed ${p.refreshed_at ?? 'never'}.</p>
${
  re === null
    ? ''
    : h`<h2>Its raters (free preview)</h2>
<p id="rater-evidence"><span class="v" id="raters-paid">${re.raters_with_verified_payment}</span> of its <span id="raters-total">${re.distinct_raters}</span> distinct raters carry a payment to it verified on chain (the proofOfPayment of their feedback document).</p>
<p class="note">Each rater's account history, cohort and graph trust, and the <code>weighted_score</code> they feed (<code>${re.rater_weight_policy}</code>), are in the paid wallet profile. Evidence computed ${re.computed_at ?? 'never yet'}.</p>`
}
<h2>Caveats</h2>
${
  p.caveats.length === 0
    ? h`<p class="muted">None fired in the preview.</p>`
    : h`<ul class="caveats" id="caveats">${p.caveats.map((c) => h`<li><code>${c.code}</code> ${c.text}</li>`)}</ul>`
}
<p class="note">Not computed in the free preview (the paid profile computes them): ${p.caveats_not_computed.map((c, i) => h`${i > 0 ? ', ' : ''}<code>${c}</code>`)}.</p>
<h2>Badge</h2>
<p class="badge"><img src="${badge}" alt="reputation badge of ${p.wallet}"></p>
<p>Embed it:</p>
<pre id="badge-snippet"><code>${d.badgeSnippet}</code></pre>
<h2>Paid detail (x402, USDC)</h2>
<p class="note">Pricing table <code>${d.pricing.pricing_version}</code>. Call a route without payment: its 402 is the price quote; the authority for one call is its own 402.</p>
<div class="scroll"><table id="paid-routes">
<thead><tr><th>route</th><th class="num">price (USD)</th><th>tier</th><th>what it gives</th></tr></thead>
<tbody>${d.paid.map(
      (r) =>
        h`<tr data-tier="${r.tier}"><td><code class="text">GET ${r.path}</code></td><td class="num price">${r.price_usd}</td><td>${r.tier}</td><td>${r.why}</td></tr>`,
    )}</tbody></table></div>
${
  d.paidExample === null
    ? h`<p class="muted">Payments are not configured on this server (no treasury): metered routes answer 503.</p>`
    : h`<p>Pay for the wallet profile with the stock x402 client (from a checkout of the project; put your own key, and check the treasury against <a href="/pricing">/pricing</a>):</p>
<pre id="paid-example"><code>${d.paidExample}</code></pre>`
}`,
  );
}

export function chainPage(d: ChainDetail): Html {
  const s = d.stats;
  const stat = (k: string, v: unknown, id: string) => h`<dt>${k}</dt><dd id="stat-${id}">${v}</dd>`;
  return layout(
    `Chain ${d.network}`,
    h`<h1>Chain <span id="network">${d.network}</span></h1>
<div class="cards" id="chain-totals">
<div class="card"><span class="v" id="chain-agents">${s.agents}</span><span class="k">agents</span></div>
<div class="card"><span class="v" id="chain-ratings">${s.ratings}</span><span class="k">ratings</span></div>
<div class="card"><span class="v" id="chain-raters">${s.distinct_raters}</span><span class="k">distinct raters</span></div>
<div class="card"><span class="v" id="chain-stale">${s.stale_hours === null ? 'never synced' : s.stale_hours}</span><span class="k">hours since last sync</span></div>
</div>
<h2>Stats</h2>
<dl class="stats">
${stat('kind', s.kind, 'kind')}${stat('chain id', s.chain_id ?? '—', 'chain-id')}${stat('owners', s.owners, 'owners')}${stat('rated agents', s.rated_agents, 'rated-agents')}${stat('scored wallets', s.scored_wallets, 'scored-wallets')}${stat('eligible ratings', s.eligible_ratings, 'eligible')}${stat('revoked', s.revoked, 'revoked')}${stat('self-rated', s.self_rated, 'self-rated')}${stat('out of domain', s.out_of_domain, 'out-of-domain')}${stat('orphan ratings', s.orphan_ratings, 'orphans')}${stat('facets', s.facets, 'facets')}${stat('mean value', s.avg_value ?? '—', 'avg-value')}${stat('ratings per agent', s.ratings_per_agent ?? '—', 'per-agent')}${stat('first rating day', s.first_rating_day ?? '—', 'first-day')}${stat('last rating day', s.last_rating_day ?? '—', 'last-day')}${stat('last scanned block', s.last_scanned_block ?? '—', 'last-block')}${stat('blocks behind', s.blocks_behind ?? '—', 'behind')}${stat('backfill complete', s.backfill_complete ? 'yes' : 'no', 'backfill')}${stat('last sync', s.last_sync_at ?? 'never', 'last-sync')}
</dl>
<h2>Activity, last ${d.days} days</h2>
<p class="legend note"><span class="bar">■</span> ratings per day, <span class="raters">—</span> distinct raters per day (UTC, on-chain block time)</p>
${activityChart(d.activity, `${d.network} activity`)}
<details><summary>The same series as a table</summary><div class="scroll"><table id="activity">
<thead><tr><th>day</th><th class="num">ratings</th><th class="num">raters</th></tr></thead>
<tbody>${d.activity.map((a) => h`<tr><td>${a.day}</td><td class="num">${a.ratings}</td><td class="num">${a.raters}</td></tr>`)}</tbody></table></div></details>
<h2>Top wallets on ${d.network}</h2>
<p class="note">Scored with this chain's ratings only, by shrunk score toward this chain's prior (k = ${d.shrinkage.k}, prior = ${d.shrinkage.prior ?? 'none'}).</p>
${
  d.top.length === 0
    ? h`<p class="muted">No wallet is scored on this chain yet.</p>`
    : h`<div class="scroll"><table id="top">
<thead><tr><th class="num">#</th><th>wallet</th><th class="num">shrunk score</th><th class="num">score</th><th class="num">distinct raters</th><th class="num">ratings</th><th>agent ids</th></tr></thead>
<tbody>${d.top.map(
        (r) =>
          h`<tr data-wallet="${r.wallet}"><td class="num rank">${r.rank}</td><td>${walletLink(r.wallet)}</td><td class="num shrunk">${score(r.shrunk_score)}</td><td class="num final">${score(r.final_score)}</td><td class="num raters">${r.distinct_raters}</td><td class="num reviews">${r.total_reviews}</td><td class="mono ids">${agentLinks(d.network, r.agent_ids)}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>Facets (tag1)</h2>
<p class="note">Raw tag1 as written on chain. Facets are separate judgements: never average them.</p>
${
  d.facets.length === 0
    ? h`<p class="muted">No facet yet.</p>`
    : h`<div class="scroll"><table id="facets">
<thead><tr><th>facet</th><th class="num">ratings</th><th class="num">eligible</th><th class="num">mean</th><th class="num">agents</th><th class="num">raters</th></tr></thead>
<tbody>${d.facets.map(
        (f) =>
          h`<tr><td class="facet">${facetText(f.facet)}</td><td class="num count">${f.count}</td><td class="num">${f.eligible}</td><td class="num">${score(f.avg_score)}</td><td class="num">${f.distinct_agents}</td><td class="num">${f.distinct_raters}</td></tr>`,
      )}</tbody></table></div>`
}`,
  );
}

/** The HTML page of an error answer: the same status and meaning as the API's JSON. */
export function errorPage(
  status: number,
  title: string,
  message: string,
  extra: { knownNetworks?: readonly string[]; acceptedShapes?: readonly string[] } = {},
): Html {
  return layout(
    `${status} ${title}`,
    h`<h1>${status} · ${title}</h1>
<div class="error"><p id="error-message">${message}</p>
${
  extra.knownNetworks && extra.knownNetworks.length > 0
    ? h`<p>Chains in this index: ${extra.knownNetworks.map((n, i) => h`${i > 0 ? ', ' : ''}${chainLink(n)}`)}.</p>`
    : ''
}
${
  extra.acceptedShapes && extra.acceptedShapes.length > 0
    ? h`<p>Accepted shapes:</p><ul>${extra.acceptedShapes.map((s) => h`<li>${s}</li>`)}</ul>`
    : ''
}</div>
${searchForm()}
<p><a href="/">Back to the explorer</a></p>`,
  );
}
