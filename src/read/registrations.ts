/**
 * Reads of the registration files, domain proofs and liveness (tables of migration 0170): one
 * agent's file with its services (one statement), and the coverage funnel per chain of
 * `GET /stats/registrations` (one statement over the registration rows, grouped by chain).
 */
import type { Queryable } from '../db/database.js';

export interface EndpointReadRow {
  position: number;
  service_type: string;
  url: string;
  version: string | null;
  probe_kind: string;
  domain_proof: string | null;
  domain_reason: string | null;
  domain_checked_at: Date | string | null;
  liveness: string | null;
  liveness_reason: string | null;
  last_probe_at: Date | string | null;
  last_alive_at: Date | string | null;
  tool_count: number | null;
  skill_count: number | null;
  latency_ms: number | null;
}

export type RegistrationReadRow = {
  uri: string;
  state: string;
  reason: string | null;
  attempts: number;
  file_state: string | null;
  problems: unknown;
  blob_sha256: string | null;
  byte_length: number | null;
  fetched_at: Date | string | null;
  checked_at: Date | string | null;
  changed_at: Date | string | null;
  parser_version: string | null;
  name: string | null;
  description: string | null;
  image: string | null;
  x402_support: boolean | null;
  active: boolean | null;
  supported_trust: unknown;
  registrations_check: string | null;
  endpoints: EndpointReadRow[];
};

/** One agent's registration file and its services (null: the agent has no agentURI, or no job yet). */
export async function readAgentRegistration(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<RegistrationReadRow | null> {
  const [row] = await db.query<RegistrationReadRow>(
    `SELECT r.uri, r.state, r.reason, r.attempts, r.file_state, r.problems, r.blob_sha256, r.byte_length,
            r.fetched_at, r.checked_at, r.changed_at, r.parser_version, r.name, r.description, r.image,
            r.x402_support, r.active, r.supported_trust, r.registrations_check,
            coalesce((SELECT jsonb_agg(jsonb_build_object(
                        'position', e.position, 'service_type', e.service_type, 'url', e.url, 'version', e.version,
                        'probe_kind', e.probe_kind, 'domain_proof', e.domain_proof, 'domain_reason', e.domain_reason,
                        'domain_checked_at', e.domain_checked_at, 'liveness', e.liveness,
                        'liveness_reason', e.liveness_reason, 'last_probe_at', e.last_probe_at,
                        'last_alive_at', e.last_alive_at, 'tool_count', e.tool_count, 'skill_count', e.skill_count,
                        'latency_ms', e.latency_ms) ORDER BY e.position)
                        FROM agent_endpoints e WHERE e.network = r.network AND e.agent_id = r.agent_id),
                     '[]'::jsonb) AS endpoints
       FROM agent_registrations r WHERE r.network = $1 AND r.agent_id = $2`,
    [network, agentId],
    { prepare: true },
  );
  if (!row) return null;
  return {
    ...row,
    attempts: Number(row.attempts),
    byte_length: row.byte_length === null ? null : Number(row.byte_length),
    endpoints: Array.isArray(row.endpoints) ? row.endpoints : [],
  };
}

/** The coverage of one chain (or the whole index): the funnel and the states. */
export interface RegistrationCoverage {
  agents: number;
  with_uri: number;
  fetched: number;
  valid_file: number;
  verified_domain: number;
  live_endpoint: number;
  file_states: { pending: number; valid: number; invalid: number; unreachable: number; changed: number };
  domain_proofs: { verified: number; absent: number; mismatch: number; unreachable: number };
  endpoints: { total: number; probed: number; alive: number; dead: number };
}

const emptyCoverage = (agents: number): RegistrationCoverage => ({
  agents,
  with_uri: 0,
  fetched: 0,
  valid_file: 0,
  verified_domain: 0,
  live_endpoint: 0,
  file_states: { pending: 0, valid: 0, invalid: 0, unreachable: 0, changed: 0 },
  domain_proofs: { verified: 0, absent: 0, mismatch: 0, unreachable: 0 },
  endpoints: { total: 0, probed: 0, alive: 0, dead: 0 },
});

/**
 * The funnel per chain, every chain of the index listed (ordered by network): agents indexed
 * (the chain's live counter), with an agentURI, whose file was fetched, whose file is valid
 * (`valid` or `changed`: it reads, and its fields pass), and among those the agents with at least
 * one service whose domain proof is verified, and with at least one service alive; beside it each
 * file state, each domain proof (counted per endpoint) and the probes.
 */
export async function readRegistrationStats(
  db: Queryable,
): Promise<{ chains: (RegistrationCoverage & { network: string })[]; totals: RegistrationCoverage }> {
  const rows = await db.query<Record<string, unknown>>(
    `WITH e AS (
       SELECT network, agent_id,
              bool_or(domain_proof = 'verified') AS verified, bool_or(liveness = 'alive') AS alive,
              count(*) AS total, count(liveness) AS probed,
              count(*) FILTER (WHERE liveness = 'alive') AS alive_n, count(*) FILTER (WHERE liveness = 'dead') AS dead_n,
              count(*) FILTER (WHERE domain_proof = 'verified') AS p_verified,
              count(*) FILTER (WHERE domain_proof = 'absent') AS p_absent,
              count(*) FILTER (WHERE domain_proof = 'mismatch') AS p_mismatch,
              count(*) FILTER (WHERE domain_proof = 'unreachable') AS p_unreachable
         FROM agent_endpoints GROUP BY network, agent_id),
     r AS (
       SELECT r.network AS r_network,
              count(*) AS with_uri,
              count(*) FILTER (WHERE r.file_state IS NOT NULL AND r.file_state <> 'unreachable' OR r.fetched_at IS NOT NULL) AS fetched,
              count(*) FILTER (WHERE r.file_state IN ('valid', 'changed')) AS valid_file,
              count(*) FILTER (WHERE r.file_state IN ('valid', 'changed') AND e.verified) AS verified_domain,
              count(*) FILTER (WHERE r.file_state IN ('valid', 'changed') AND e.alive) AS live_endpoint,
              count(*) FILTER (WHERE r.file_state IS NULL) AS s_pending,
              count(*) FILTER (WHERE r.file_state = 'valid') AS s_valid,
              count(*) FILTER (WHERE r.file_state = 'invalid') AS s_invalid,
              count(*) FILTER (WHERE r.file_state = 'unreachable') AS s_unreachable,
              count(*) FILTER (WHERE r.file_state = 'changed') AS s_changed,
              coalesce(sum(e.p_verified), 0) AS p_verified, coalesce(sum(e.p_absent), 0) AS p_absent,
              coalesce(sum(e.p_mismatch), 0) AS p_mismatch, coalesce(sum(e.p_unreachable), 0) AS p_unreachable,
              coalesce(sum(e.total), 0) AS e_total, coalesce(sum(e.probed), 0) AS e_probed,
              coalesce(sum(e.alive_n), 0) AS e_alive, coalesce(sum(e.dead_n), 0) AS e_dead
         FROM agent_registrations r LEFT JOIN e ON e.network = r.network AND e.agent_id = r.agent_id
        GROUP BY r.network)
     SELECT r.*, c.network, c.agents_count AS agents FROM chains c LEFT JOIN r ON r.r_network = c.network
      ORDER BY c.network`,
  );
  const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
  const totals = emptyCoverage(0);
  const chains = rows.map((row) => {
    const c: RegistrationCoverage & { network: string } = {
      network: String(row.network),
      agents: n(row.agents),
      with_uri: n(row.with_uri),
      fetched: n(row.fetched),
      valid_file: n(row.valid_file),
      verified_domain: n(row.verified_domain),
      live_endpoint: n(row.live_endpoint),
      file_states: {
        pending: n(row.s_pending),
        valid: n(row.s_valid),
        invalid: n(row.s_invalid),
        unreachable: n(row.s_unreachable),
        changed: n(row.s_changed),
      },
      domain_proofs: {
        verified: n(row.p_verified),
        absent: n(row.p_absent),
        mismatch: n(row.p_mismatch),
        unreachable: n(row.p_unreachable),
      },
      endpoints: {
        total: n(row.e_total),
        probed: n(row.e_probed),
        alive: n(row.e_alive),
        dead: n(row.e_dead),
      },
    };
    for (const k of [
      'agents',
      'with_uri',
      'fetched',
      'valid_file',
      'verified_domain',
      'live_endpoint',
    ] as const)
      totals[k] += c[k];
    for (const k of Object.keys(c.file_states) as (keyof RegistrationCoverage['file_states'])[])
      totals.file_states[k] += c.file_states[k];
    for (const k of Object.keys(c.domain_proofs) as (keyof RegistrationCoverage['domain_proofs'])[])
      totals.domain_proofs[k] += c.domain_proofs[k];
    for (const k of Object.keys(c.endpoints) as (keyof RegistrationCoverage['endpoints'])[])
      totals.endpoints[k] += c.endpoints[k];
    return c;
  });
  return { chains, totals };
}

/** The agent's row as the free registration route shows it (null: no identity row). */
export async function readAgentHead(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<{ owner: string | null; agent_uri: string | null } | null> {
  const [row] = await db.query<{ owner: string | null; agent_uri: string | null }>(
    `SELECT owner, agent_uri FROM agents WHERE network = $1 AND agent_id = $2`,
    [network, agentId],
  );
  return row ?? null;
}
