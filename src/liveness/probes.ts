/**
 * Liveness at the protocol level, one probe per declared endpoint (an HTTP 404 is not alive):
 *  - `a2a`: the agent card is fetched (the URL given; when that is no card and not already a
 *    well-known card path, the host's `/.well-known/agent-card.json`) and parsed: a JSON object with
 *    a `name` and a `skills` array; alive with its skill count;
 *  - `mcp`: the official MCP client (`@modelcontextprotocol/sdk`, Streamable HTTP) runs
 *    `initialize` and `tools/list` (a few pages at most); alive with the tools counted;
 *  - `web`: a GET (redirects followed, each checked) answering 2xx; the body is never read.
 * Every request goes through the safe rules (src/documents/safe-fetch.ts), under one deadline per
 * probe. A probe never throws: a failure is `alive: false` with a reason code.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fetchDocument, fetchStatus, type FetchLimits } from '../documents/safe-fetch.js';
import { readJsonObject } from '../registrations/parse.js';
import type { ProbeOutcome } from '../store/registrations.js';
import { safeFetchLike } from './safe-fetch-like.js';

/** Pages of tools/list read (a server may page forever). */
const MAX_TOOL_PAGES = 5;

const outcome = (
  alive: boolean,
  reason: string | null,
  started: number,
  counts: Partial<ProbeOutcome> = {},
) => ({
  alive,
  reason,
  toolCount: counts.toolCount ?? null,
  skillCount: counts.skillCount ?? null,
  latencyMs: Date.now() - started,
});

/** The skills of a parsed agent card, or null when the object is no agent card. */
export function agentCardSkills(card: Record<string, unknown>): number | null {
  if (typeof card.name !== 'string' || card.name.trim() === '' || !Array.isArray(card.skills)) return null;
  return (card.skills as unknown[]).filter(
    (s) =>
      typeof s === 'object' &&
      s !== null &&
      (typeof (s as { id?: unknown }).id === 'string' || typeof (s as { name?: unknown }).name === 'string'),
  ).length;
}

export async function probeWeb(url: string, limits: FetchLimits): Promise<ProbeOutcome> {
  const started = Date.now();
  const r = await fetchStatus(url, limits);
  if (!r.ok) return outcome(false, r.code, started);
  return r.status >= 200 && r.status < 300
    ? outcome(true, null, started)
    : outcome(false, `http_${r.status}`, started);
}

export async function probeA2a(url: string, limits: FetchLimits): Promise<ProbeOutcome> {
  const started = Date.now();
  const tries = [url];
  try {
    const u = new URL(url);
    if (!/\/\.well-known\/agent(?:-card)?\.json$/i.test(u.pathname))
      tries.push(new URL('/.well-known/agent-card.json', u).toString());
  } catch {
    return outcome(false, 'bad_uri', started);
  }
  // The reason given is the declared URL's; the well-known card only counts when it is one.
  let reason: string | null = null;
  for (const t of tries) {
    const r = await fetchDocument(t, limits);
    let why: string;
    if (!r.ok)
      why = r.code === 'http_error' ? `http_${(r.detail ?? '').replace(/^HTTP /, '') || 'error'}` : r.code;
    else {
      const card = readJsonObject(r.bytes);
      const skills = card.ok ? agentCardSkills(card.doc) : null;
      if (skills !== null) return outcome(true, null, started, { skillCount: skills });
      why = card.ok ? 'not_an_agent_card' : card.problem;
    }
    reason ??= why;
  }
  return outcome(false, reason, started);
}

export async function probeMcp(url: string, limits: FetchLimits): Promise<ProbeOutcome> {
  const started = Date.now();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), limits.timeoutMs);
  const fetch = safeFetchLike(limits);
  let transport: StreamableHTTPClientTransport;
  try {
    transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch,
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  } catch {
    clearTimeout(timer);
    return outcome(false, 'bad_uri', started);
  }
  const client = new Client({ name: 'repindex-liveness', version: '1.0.0' });
  // Errors of the background stream (an optional GET) are not the probe's answer.
  client.onerror = () => undefined;
  const opts = { signal: abort.signal, timeout: limits.timeoutMs };
  let step = 'initialize';
  try {
    await client.connect(transport, opts);
    step = 'tools_list';
    let tools = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const r = await client.listTools(cursor === undefined ? undefined : { cursor }, opts);
      tools += Array.isArray(r.tools) ? r.tools.length : 0;
      cursor = typeof r.nextCursor === 'string' && r.nextCursor !== '' ? r.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return outcome(true, null, started, { toolCount: tools });
  } catch {
    const code = abort.signal.aborted ? 'timeout' : fetch.lastError();
    return outcome(false, code ?? `mcp_${step}_failed`, started);
  } finally {
    clearTimeout(timer);
    abort.abort();
    await client.close().catch(() => undefined);
  }
}

export function probeEndpoint(
  kind: 'a2a' | 'mcp' | 'web',
  url: string,
  limits: FetchLimits,
): Promise<ProbeOutcome> {
  return kind === 'a2a'
    ? probeA2a(url, limits)
    : kind === 'mcp'
      ? probeMcp(url, limits)
      : probeWeb(url, limits);
}
