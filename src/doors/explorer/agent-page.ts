/**
 * The explorer's agent page (`/explore/agents/{network}/{id}`), a pure function of two free
 * answers: `GET /agents/{network}/{agent_id}/registration` (what the agent declares about itself
 * in its registration file, with the domain proofs and liveness the index observed) and
 * `GET /search/{id}` (where the agent is: its owner and score on that chain). Everything the agent
 * declares is labelled as declared, and is text: interpolated through `h` (escaped), never a link,
 * never an image source, never markup.
 */
import type { z } from '@hono/zod-openapi';
import type { AgentRegistrationSchema } from '../http/schemas/registrations.js';
import { h, type Html } from './html.js';
import { chainLink, layout, score, searchHref, walletLink, type SearchResult } from './pages.js';

export type AgentRegistration = z.infer<typeof AgentRegistrationSchema>;
type Registration = NonNullable<AgentRegistration['registration']>;
type Service = Registration['services'][number];

const STATE_TEXT: Record<Registration['state'], string> = {
  pending: 'not fetched yet',
  valid: 'valid: it reads and passes registration-v1',
  invalid: 'invalid: some fields fail (below)',
  unreachable: 'unreachable: no answer after the retries (what an earlier fetch read is shown)',
  changed: 'changed: valid, but edited since it was first read (no on-chain URIUpdated)',
};

const dateText = (v: string | null) => (v === null ? '—' : v.replace('T', ' ').replace(/\.\d+Z$|Z$/, ''));
const orDash = (v: unknown) => (v === null || v === undefined || v === '' ? '—' : v);
const yesNo = (v: boolean | null) => (v === null ? 'not declared' : v ? 'yes' : 'no');

function proofCell(s: Service): Html {
  if (s.domain_proof === null)
    return h`<span class="muted">${s.domain_reason === 'not_checked' ? 'not checked' : 'n/a (not https)'}</span>`;
  return h`<span class="proof proof-${s.domain_proof}">${s.domain_proof}</span>${s.domain_reason ? h` <span class="muted">(${s.domain_reason})</span>` : ''}`;
}

function livenessCell(s: Service): Html {
  const l = s.liveness;
  const counts =
    l.tool_count !== null
      ? h`, ${l.tool_count} ${l.tool_count === 1 ? 'tool' : 'tools'}`
      : l.skill_count !== null
        ? h`, ${l.skill_count} ${l.skill_count === 1 ? 'skill' : 'skills'}`
        : '';
  return h`<span class="live live-${l.state}">${l.state.replace('_', ' ')}</span>${l.reason ? h` <span class="muted">(${l.reason})</span>` : ''}${counts}`;
}

function servicesTable(services: readonly Service[]): Html {
  if (services.length === 0) return h`<p class="muted" id="no-services">The file declares no service.</p>`;
  return h`<div class="scroll"><table id="services">
<thead><tr><th>service (declared)</th><th>endpoint (declared)</th><th>domain proof</th><th>liveness (${'probe'})</th><th>last checked</th><th>last alive</th></tr></thead>
<tbody>${services.map(
    (s, i) =>
      h`<tr data-position="${i}"><td class="text type">${orDash(s.type)}${s.version ? h` <span class="muted">${s.version}</span>` : ''}</td><td class="text url"><code>${s.url}</code></td><td class="proof">${proofCell(s)}</td><td class="liveness">${livenessCell(s)} <span class="muted">(${s.liveness.probe})</span></td><td>${dateText(s.liveness.last_checked_at)}</td><td>${dateText(s.liveness.last_alive_at)}</td></tr>`,
  )}</tbody></table></div>`;
}

function registrationSection(r: AgentRegistration['registration'], agentUri: string | null): Html {
  if (r === null)
    return h`<p class="muted" id="no-registration">This agent names no registration file (its agentURI is ${agentUri === null ? 'unknown' : 'empty'}).</p>`;
  return h`<p id="registration-state" data-state="${r.state}">File <code class="text">${r.uri}</code>: <strong>${r.state}</strong> — ${STATE_TEXT[r.state]}. Fetched ${dateText(r.fetched_at)}, last checked ${dateText(r.checked_at)}${r.changed_at ? h`, changed ${dateText(r.changed_at)}` : ''}.</p>
<h3>Declared by the agent</h3>
<p class="note">What follows is what the agent says about itself in its registration file: self-declared, never verified by this index.</p>
<dl class="stats declared" id="declared">
<dt>name</dt><dd class="text" id="declared-name">${orDash(r.name)}</dd>
<dt>description</dt><dd class="text" id="declared-description">${orDash(r.description)}</dd>
<dt>image</dt><dd class="text"><code>${orDash(r.image)}</code></dd>
<dt>x402 support</dt><dd id="declared-x402">${yesNo(r.x402_support)}</dd>
<dt>active</dt><dd id="declared-active">${yesNo(r.active)}</dd>
<dt>supported trust</dt><dd class="text">${r.supported_trust.length === 0 ? '—' : r.supported_trust.join(', ')}</dd>
<dt>lists this agent</dt><dd id="registrations-check">${orDash(r.registrations_check)}</dd>
</dl>
${
  r.problems.length === 0
    ? ''
    : h`<h3>Fields that fail</h3><ul id="problems">${r.problems.map((p) => h`<li><code class="text">${p.field}</code> ${p.problem}</li>`)}</ul>`
}
<h3>Services</h3>
<p class="note">Observed by this index: the domain proof (the host's <code>/.well-known/agent-registration.json</code> lists this agent) and liveness at the protocol level (an A2A card that parses, an MCP server answering initialize and tools/list, a web endpoint answering 2xx; a 404 is not alive).</p>
${servicesTable(r.services)}`;
}

export function agentPage(d: { registration: AgentRegistration; search: SearchResult | null }): Html {
  const a = d.registration;
  const match =
    d.search?.matches.find(
      (m) =>
        (m.interpreted_as === 'evm_agent_id' || m.interpreted_as === 'solana_asset') &&
        m.network === a.network &&
        m.agent_ids.includes(a.agent_id),
    ) ?? null;
  return layout(
    `Agent ${a.agent_id} on ${a.network}`,
    h`<h1>Agent <span class="mono" id="agent-id">${a.agent_id}</span> on <span id="network">${chainLink(a.network)}</span></h1>
<div class="cards" id="agent-totals">
<div class="card"><span class="v" id="agent-owner">${walletLink(a.owner)}</span><span class="k">owner (current)</span></div>
<div class="card"><span class="v" id="agent-score">${score(match?.final_score ?? null)}</span><span class="k">agent's score (free, all its ratings)</span></div>
<div class="card"><span class="v" id="agent-reviews">${match?.total_reviews ?? 0}</span><span class="k">eligible ratings</span></div>
<div class="card"><span class="v" id="agent-raters">${match?.distinct_raters ?? 0}</span><span class="k">distinct raters</span></div>
</div>
<p class="note">${a.owner === null ? 'The owner is not known yet.' : h`Owner: <a id="owner-link" href="/explore/wallets/${encodeURIComponent(a.owner)}">the owner's page</a>.`} The same id on another chain is a different agent (<a href="${searchHref(a.agent_id)}">search ${a.agent_id}</a>). Every rating with its transaction: <code class="text">${a.detail_route}</code> (paid).</p>
<h2>Registration file</h2>
${registrationSection(a.registration, a.agent_uri)}`,
  );
}
