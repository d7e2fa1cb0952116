/**
 * The `registration` object an agent is served with (the paid agent detail, and the free
 * `GET /agents/{network}/{agent_id}/registration` the explorer's agent page reads): what the agent
 * declares about itself in its registration file (its agentURI), labelled as declared and never a
 * verification, with the file's state, the fields that failed, and per service the index's own
 * observations: the domain proof and the liveness probe. Evidence only: it moves no score.
 */
import type { RegistrationReadRow } from '../read/registrations.js';
import { iso } from './common.js';

/** What `declared` says on every served registration. */
export const DECLARED_NOTE =
  'name, description, image, services, x402_support and active are what the agent declares about itself in its ' +
  'registration file: self-declared, never verified. domain_proof and liveness are what this index observed.';

const iso_ = (v: Date | string | null) => (v === null ? null : iso(v instanceof Date ? v : new Date(v)));

/** `alive` / `dead` as last probed; `pending` (an http(s) service not probed yet) or `not_probed` (no http(s) URL). */
function livenessState(
  e: RegistrationReadRow['endpoints'][number],
): 'alive' | 'dead' | 'pending' | 'not_probed' {
  if (e.probe_kind === 'none') return 'not_probed';
  return e.liveness === 'alive' ? 'alive' : e.liveness === 'dead' ? 'dead' : 'pending';
}

export function servedRegistration(r: RegistrationReadRow | null) {
  if (r === null) return null;
  const problems = Array.isArray(r.problems) ? (r.problems as { field: string; problem: string }[]) : [];
  return {
    state: (r.file_state ?? 'pending') as 'pending' | 'valid' | 'invalid' | 'unreachable' | 'changed',
    uri: r.uri,
    declared: DECLARED_NOTE,
    name: r.name,
    description: r.description,
    image: r.image,
    services: r.endpoints.map((e) => ({
      type: e.service_type,
      url: e.url,
      version: e.version,
      domain_proof: e.domain_proof as 'verified' | 'absent' | 'mismatch' | 'unreachable' | null,
      domain_reason: e.domain_reason,
      domain_checked_at: iso_(e.domain_checked_at),
      liveness: {
        state: livenessState(e),
        probe: e.probe_kind as 'a2a' | 'mcp' | 'web' | 'none',
        reason: e.liveness_reason,
        last_checked_at: iso_(e.last_probe_at),
        last_alive_at: iso_(e.last_alive_at),
        tool_count: e.tool_count,
        skill_count: e.skill_count,
        latency_ms: e.latency_ms,
      },
    })),
    x402_support: r.x402_support,
    active: r.active,
    supported_trust: Array.isArray(r.supported_trust) ? (r.supported_trust as string[]) : [],
    registrations_check: r.registrations_check as 'listed' | 'absent' | 'mismatch' | null,
    problems,
    fetch: {
      state: r.state,
      attempts: r.attempts,
      last_error_code: r.reason,
      blob_sha256: r.blob_sha256,
      byte_length: r.byte_length,
      parser_version: r.parser_version,
    },
    fetched_at: iso_(r.fetched_at),
    checked_at: iso_(r.checked_at),
    changed_at: iso_(r.changed_at),
  };
}

export type ServedRegistration = NonNullable<ReturnType<typeof servedRegistration>>;
