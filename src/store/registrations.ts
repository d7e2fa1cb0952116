/**
 * Write statements of the registration files (`agent_registrations`, `agent_endpoints`,
 * `liveness_hosts`; migration 0170): the ingest keeps one fetch job per agent with an agentURI
 * (written in the transaction that sets the URI); the fetcher (src/registrations/) leases due jobs
 * (SKIP LOCKED) and finishes each with the file's outcome and its services (domain proofs
 * included) while it still holds the lease; the prober (src/liveness/) leases hosts (one probe per
 * host per interval, whichever process probes) and records each endpoint's result. Every value is
 * a parameter.
 */
import type { Database, Queryable } from '../db/database.js';
import { chunks, count } from './rows.js';

type AgentKey = { network: string; agentId: string };

/**
 * Brings the registration jobs of `agents` in line with their current agentURI (agents.agent_uri,
 * as the ingest just set it): a new URI, or one set again by a later event, queues the file now and
 * forgets what the earlier file said (its services too); an empty URI drops the job. A batch
 * written twice changes nothing (the URI's position is the same).
 */
export async function syncRegistrationJobs(tx: Queryable, agents: readonly AgentKey[]): Promise<void> {
  for (const c of chunks(agents)) {
    const params = [c.map((a) => a.network), c.map((a) => a.agentId)];
    await tx.query(
      `DELETE FROM agent_registrations r
        USING unnest($1::text[], $2::text[]) AS k(network, agent_id), agents a
        WHERE r.network = k.network AND r.agent_id = k.agent_id AND a.network = k.network AND a.agent_id = k.agent_id
          AND coalesce(btrim(a.agent_uri), '') = ''`,
      params,
    );
    await tx.query(
      `WITH up AS (
         INSERT INTO agent_registrations (network, agent_id, uri, uri_block, uri_log_index, next_try_at)
         SELECT a.network, a.agent_id, a.agent_uri, a.uri_block, a.uri_log_index, now()
           FROM unnest($1::text[], $2::text[]) AS k(network, agent_id)
           JOIN agents a ON a.network = k.network AND a.agent_id = k.agent_id
          WHERE coalesce(btrim(a.agent_uri), '') <> ''
         ON CONFLICT (network, agent_id) DO UPDATE SET
           uri = EXCLUDED.uri, uri_block = EXCLUDED.uri_block, uri_log_index = EXCLUDED.uri_log_index,
           state = 'queued', attempts = 0, next_try_at = EXCLUDED.next_try_at, lease_owner = NULL,
           lease_expires_at = NULL, reason = NULL, updated_at = now(), file_state = NULL, problems = NULL,
           first_keccak256 = NULL, blob_sha256 = NULL, blob_keccak256 = NULL, byte_length = NULL,
           content_type = NULL, fetched_at = NULL, checked_at = NULL, changed_at = NULL, parser_version = NULL,
           name = NULL, description = NULL, image = NULL, x402_support = NULL, active = NULL,
           supported_trust = NULL, registrations_check = NULL
         WHERE (agent_registrations.uri, agent_registrations.uri_block, agent_registrations.uri_log_index)
               IS DISTINCT FROM (EXCLUDED.uri, EXCLUDED.uri_block, EXCLUDED.uri_log_index)
         RETURNING network, agent_id)
       DELETE FROM agent_endpoints e USING up WHERE e.network = up.network AND e.agent_id = up.agent_id`,
      params,
    );
  }
}

/** A leased registration job. */
export type RegistrationJob = {
  network: string;
  agent_id: string;
  uri: string;
  attempts: number;
  first_keccak256: string | null;
  file_state: string | null;
  changed_at: Date | string | null;
};

/**
 * Leases at most `limit` due jobs for `owner` until `now + leaseSeconds`: queued or retry jobs whose
 * next try has come, fetched (or unreachable) files due for their scheduled re-fetch, leased jobs
 * whose lease expired. Jobs another transaction holds are skipped (SKIP LOCKED).
 */
export async function leaseRegistrations(
  tx: Queryable,
  owner: string,
  now: Date,
  limit: number,
  leaseSeconds: number,
  /** Only these agents' jobs (the demo fetches its own files only); default every job. */
  scope: { network: string; agentIds: readonly string[] } | null = null,
): Promise<RegistrationJob[]> {
  return tx.query<RegistrationJob>(
    `WITH due AS (
       SELECT network, agent_id FROM agent_registrations
        WHERE ((state IN ('queued', 'retry', 'succeeded', 'failed') AND next_try_at <= $2::timestamptz)
               OR (state = 'leased' AND lease_expires_at <= $2::timestamptz))
          AND ($5::text IS NULL OR (network = $5::text AND agent_id = ANY($6::text[])))
        ORDER BY next_try_at, network, agent_id
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
     UPDATE agent_registrations r
        SET state = 'leased', lease_owner = $1, lease_expires_at = $2::timestamptz + make_interval(secs => $4),
            attempts = r.attempts + 1, updated_at = $2::timestamptz
       FROM due
      WHERE r.network = due.network AND r.agent_id = due.agent_id
      RETURNING r.network, r.agent_id, r.uri, r.attempts, r.first_keccak256, r.file_state, r.changed_at`,
    [
      owner,
      now.toISOString(),
      limit,
      leaseSeconds,
      scope?.network ?? null,
      scope ? [...scope.agentIds] : null,
    ],
  );
}

/** One service of a parsed file as stored, with its domain proof. */
export interface EndpointRow {
  type: string;
  url: string;
  version: string | null;
  probeKind: 'a2a' | 'mcp' | 'web' | 'none';
  host: string | null;
  domainProof: 'verified' | 'absent' | 'mismatch' | 'unreachable' | null;
  domainReason: string | null;
}

/** What a finished registration job writes. Unset fields keep their stored values. */
export interface RegistrationOutcome {
  state: 'queued' | 'retry' | 'succeeded' | 'failed';
  nextTryAt: Date;
  reason: string | null;
  /** This outcome is no fetch attempt (waiting for an IPFS gateway). */
  uncountAttempt?: boolean;
  /** The job is done for now: the next failure counts from one again. */
  resetAttempts?: boolean;
  fileState?: 'valid' | 'invalid' | 'unreachable' | 'changed';
  problems?: { field: string; problem: string }[];
  blob?: { sha256: string; keccak256: string; byteLength: number; contentType: string | null };
  changedAt?: Date | null;
  parsed?: {
    parserVersion: string;
    name: string | null;
    description: string | null;
    image: string | null;
    x402Support: boolean | null;
    active: boolean | null;
    supportedTrust: string[];
    registrationsCheck: 'listed' | 'absent' | 'mismatch';
  };
  /** The file's services in order (replaces the stored set; probe results kept for an unchanged endpoint). */
  endpoints?: EndpointRow[];
}

/**
 * Finishes a leased job while `owner` still holds its lease, with its services, in one
 * transaction. Returns whether the row was written.
 */
export async function finishRegistration(
  db: Database,
  key: { network: string; agent_id: string },
  owner: string,
  now: Date,
  o: RegistrationOutcome,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const p = o.parsed;
    const n = await count(
      tx,
      `WITH up AS (
         UPDATE agent_registrations SET
           state = $4, next_try_at = $5::timestamptz, reason = $6, lease_owner = NULL, lease_expires_at = NULL,
           attempts = CASE WHEN $8 THEN 0 WHEN $7 THEN greatest(attempts - 1, 0) ELSE attempts END,
           updated_at = $3::timestamptz,
           checked_at = CASE WHEN $7 THEN checked_at ELSE $3::timestamptz END,
           file_state = coalesce($9, file_state),
           problems = CASE WHEN $10 THEN $11::jsonb ELSE problems END,
           blob_sha256 = CASE WHEN $12 THEN $13 ELSE blob_sha256 END,
           blob_keccak256 = CASE WHEN $12 THEN $14 ELSE blob_keccak256 END,
           byte_length = CASE WHEN $12 THEN $15::int ELSE byte_length END,
           content_type = CASE WHEN $12 THEN $16 ELSE content_type END,
           fetched_at = CASE WHEN $12 THEN $3::timestamptz ELSE fetched_at END,
           first_keccak256 = CASE WHEN $12 THEN coalesce(first_keccak256, $14) ELSE first_keccak256 END,
           changed_at = CASE WHEN $17 THEN $18::timestamptz ELSE changed_at END,
           parser_version = CASE WHEN $19 THEN $20 ELSE parser_version END,
           name = CASE WHEN $19 THEN $21 ELSE name END,
           description = CASE WHEN $19 THEN $22 ELSE description END,
           image = CASE WHEN $19 THEN $23 ELSE image END,
           x402_support = CASE WHEN $19 THEN $24::boolean ELSE x402_support END,
           active = CASE WHEN $19 THEN $25::boolean ELSE active END,
           supported_trust = CASE WHEN $19 THEN $26::jsonb ELSE supported_trust END,
           registrations_check = CASE WHEN $19 THEN $27 ELSE registrations_check END
        WHERE network = $1 AND agent_id = $2 AND state = 'leased' AND lease_owner = $28
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
      [
        key.network,
        key.agent_id,
        now.toISOString(),
        o.state,
        o.nextTryAt.toISOString(),
        o.reason,
        o.uncountAttempt === true,
        o.resetAttempts === true,
        o.fileState ?? null,
        o.problems !== undefined,
        o.problems === undefined ? null : JSON.stringify(o.problems),
        o.blob !== undefined,
        o.blob?.sha256 ?? null,
        o.blob?.keccak256 ?? null,
        o.blob?.byteLength ?? null,
        o.blob?.contentType ?? null,
        o.changedAt !== undefined,
        o.changedAt ? o.changedAt.toISOString() : null,
        p !== undefined,
        p?.parserVersion ?? null,
        p?.name ?? null,
        p?.description ?? null,
        p?.image ?? null,
        p?.x402Support ?? null,
        p?.active ?? null,
        p ? JSON.stringify(p.supportedTrust) : null,
        p?.registrationsCheck ?? null,
        owner,
      ],
    );
    if (n === 0) return false;
    if (o.endpoints !== undefined) await replaceEndpoints(tx, key, now, o.endpoints);
    return true;
  });
}

/** The stored endpoint is the one the new file names (same URL, same kind of probe). */
const SAME = `(agent_endpoints.url = EXCLUDED.url AND agent_endpoints.probe_kind = EXCLUDED.probe_kind)`;

/**
 * The services of a freshly parsed file: rows by position, an unchanged endpoint (same URL, same
 * kind) keeping its probe results and schedule, a new one due for a probe now; positions past the
 * new list are deleted; every probed host gets its rate row.
 */
async function replaceEndpoints(
  tx: Queryable,
  key: { network: string; agent_id: string },
  now: Date,
  rows: readonly EndpointRow[],
): Promise<void> {
  if (rows.length > 0) {
    await tx.query(
      `INSERT INTO agent_endpoints (network, agent_id, position, service_type, url, version, probe_kind, host,
                                    domain_proof, domain_reason, domain_checked_at, next_probe_at)
       SELECT $1, $2, v.pos, v.typ, v.url, v.ver, v.kind, v.host, v.proof, v.why,
              CASE WHEN v.proof IS NULL THEN NULL ELSE $3::timestamptz END,
              CASE WHEN v.kind = 'none' THEN NULL ELSE $3::timestamptz END
         FROM unnest($4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
              AS v(pos, typ, url, ver, kind, host, proof, why)
       ON CONFLICT (network, agent_id, position) DO UPDATE SET
         service_type = EXCLUDED.service_type, version = EXCLUDED.version, url = EXCLUDED.url,
         probe_kind = EXCLUDED.probe_kind, host = EXCLUDED.host, domain_proof = EXCLUDED.domain_proof,
         domain_reason = EXCLUDED.domain_reason, domain_checked_at = EXCLUDED.domain_checked_at,
         liveness = CASE WHEN ${SAME} THEN agent_endpoints.liveness END,
         liveness_reason = CASE WHEN ${SAME} THEN agent_endpoints.liveness_reason END,
         last_probe_at = CASE WHEN ${SAME} THEN agent_endpoints.last_probe_at END,
         last_alive_at = CASE WHEN ${SAME} THEN agent_endpoints.last_alive_at END,
         tool_count = CASE WHEN ${SAME} THEN agent_endpoints.tool_count END,
         skill_count = CASE WHEN ${SAME} THEN agent_endpoints.skill_count END,
         latency_ms = CASE WHEN ${SAME} THEN agent_endpoints.latency_ms END,
         next_probe_at = CASE WHEN ${SAME} THEN agent_endpoints.next_probe_at ELSE EXCLUDED.next_probe_at END`,
      [
        key.network,
        key.agent_id,
        now.toISOString(),
        rows.map((_, i) => i),
        rows.map((r) => r.type),
        rows.map((r) => r.url),
        rows.map((r) => r.version),
        rows.map((r) => r.probeKind),
        rows.map((r) => r.host),
        rows.map((r) => r.domainProof),
        rows.map((r) => r.domainReason),
      ],
    );
  }
  await tx.query(`DELETE FROM agent_endpoints WHERE network = $1 AND agent_id = $2 AND position >= $3`, [
    key.network,
    key.agent_id,
    rows.length,
  ]);
  const hosts = [
    ...new Set(rows.filter((r) => r.probeKind !== 'none' && r.host !== null).map((r) => r.host!)),
  ];
  if (hosts.length > 0)
    await tx.query(
      `INSERT INTO liveness_hosts (host, next_allowed_at) SELECT h, $2::timestamptz FROM unnest($1::text[]) AS h
       ON CONFLICT (host) DO NOTHING`,
      [hosts, now.toISOString()],
    );
}

/**
 * Makes the fetched (or unreachable) files of `scope` due now, as their scheduled re-fetch would
 * (the demo and the tests; the files keep what they proved so far).
 */
export async function recheckRegistrationsNow(
  tx: Queryable,
  now: Date,
  scope: { network: string; agentIds: readonly string[] },
): Promise<number> {
  return count(
    tx,
    `WITH up AS (UPDATE agent_registrations SET next_try_at = $1::timestamptz
                  WHERE state IN ('succeeded', 'failed') AND network = $2 AND agent_id = ANY($3::text[]) RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [now.toISOString(), scope.network, [...scope.agentIds]],
  );
}

/** Makes the registration files that wait for an IPFS gateway due now (called when one is configured). */
export async function wakeIpfsRegistrations(tx: Queryable, now: Date): Promise<number> {
  return count(
    tx,
    `WITH up AS (UPDATE agent_registrations SET next_try_at = $1::timestamptz
                  WHERE state = 'queued' AND reason = 'no_ipfs_gateway' RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [now.toISOString()],
  );
}

// ------------------------------------------------------------------ liveness

/** An endpoint leased for a probe. */
export type ProbeJob = {
  network: string;
  agent_id: string;
  position: number;
  url: string;
  probe_kind: 'a2a' | 'mcp' | 'web';
  host: string;
};

/**
 * Leases up to `hosts` hosts whose rate allows a probe now and that hold a due endpoint, moves each
 * host's next allowed probe `intervalSeconds` ahead, and returns one due endpoint per host with its
 * next probe moved `leaseSeconds` ahead (a crashed prober's endpoint is due again after that).
 */
export async function leaseProbes(
  tx: Queryable,
  now: Date,
  hosts: number,
  intervalSeconds: number,
  leaseSeconds: number,
  scope: { network: string; agentIds: readonly string[] } | null = null,
): Promise<ProbeJob[]> {
  const inScope = `($5::text IS NULL OR (e.network = $5::text AND e.agent_id = ANY($6::text[])))`;
  return tx.query<ProbeJob>(
    `WITH h AS (
       SELECT lh.host FROM liveness_hosts lh
        WHERE lh.next_allowed_at <= $1::timestamptz
          AND EXISTS (SELECT 1 FROM agent_endpoints e
                       WHERE e.host = lh.host AND e.next_probe_at <= $1::timestamptz AND ${inScope})
        ORDER BY lh.next_allowed_at, lh.host
        LIMIT $2
        FOR UPDATE SKIP LOCKED),
     hu AS (
       UPDATE liveness_hosts lh SET next_allowed_at = $1::timestamptz + make_interval(secs => $3)
         FROM h WHERE lh.host = h.host RETURNING lh.host),
     pick AS (
       SELECT DISTINCT ON (e.host) e.network, e.agent_id, e.position
         FROM agent_endpoints e JOIN hu ON hu.host = e.host
        WHERE e.next_probe_at <= $1::timestamptz AND ${inScope}
        ORDER BY e.host, e.next_probe_at, e.network, e.agent_id, e.position)
     UPDATE agent_endpoints e SET next_probe_at = $1::timestamptz + make_interval(secs => $4)
       FROM pick
      WHERE e.network = pick.network AND e.agent_id = pick.agent_id AND e.position = pick.position
      RETURNING e.network, e.agent_id, e.position, e.url, e.probe_kind, e.host`,
    [
      now.toISOString(),
      hosts,
      intervalSeconds,
      leaseSeconds,
      scope?.network ?? null,
      scope ? [...scope.agentIds] : null,
    ],
  );
}

/** When the earliest host holding a due endpoint may be probed again (null: no endpoint is due). */
export async function nextProbeAllowedAt(
  tx: Queryable,
  now: Date,
  scope: { network: string; agentIds: readonly string[] } | null = null,
): Promise<Date | null> {
  const [row] = await tx.query<{ at: Date | string | null }>(
    `SELECT min(lh.next_allowed_at) AS at FROM liveness_hosts lh
      WHERE EXISTS (SELECT 1 FROM agent_endpoints e
                     WHERE e.host = lh.host AND e.next_probe_at <= $1::timestamptz
                       AND ($2::text IS NULL OR (e.network = $2::text AND e.agent_id = ANY($3::text[]))))`,
    [now.toISOString(), scope?.network ?? null, scope ? [...scope.agentIds] : null],
  );
  return row?.at ? new Date(row.at) : null;
}

/** A probe's result. */
export interface ProbeOutcome {
  alive: boolean;
  reason: string | null;
  toolCount: number | null;
  skillCount: number | null;
  latencyMs: number | null;
}

/**
 * Records a probe of the endpoint at `key` (only while it still names `url`: a file re-read
 * meanwhile may have replaced it) and schedules the next one. The counts of tools and skills are
 * those of the last successful probe.
 */
export async function finishProbe(
  tx: Queryable,
  key: { network: string; agent_id: string; position: number; url: string },
  now: Date,
  o: ProbeOutcome,
  recheckSeconds: number,
): Promise<boolean> {
  const n = await count(
    tx,
    `WITH up AS (
       UPDATE agent_endpoints SET
         liveness = CASE WHEN $5 THEN 'alive' ELSE 'dead' END, liveness_reason = $6,
         last_probe_at = $4::timestamptz,
         last_alive_at = CASE WHEN $5 THEN $4::timestamptz ELSE last_alive_at END,
         tool_count = CASE WHEN $5 THEN $7::int ELSE tool_count END,
         skill_count = CASE WHEN $5 THEN $8::int ELSE skill_count END,
         latency_ms = $9::int,
         next_probe_at = $4::timestamptz + make_interval(secs => $10)
        WHERE network = $1 AND agent_id = $2 AND position = $3 AND url = $11
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [
      key.network,
      key.agent_id,
      key.position,
      now.toISOString(),
      o.alive,
      o.reason,
      o.toolCount,
      o.skillCount,
      o.latencyMs,
      recheckSeconds,
      key.url,
    ],
  );
  return n > 0;
}
