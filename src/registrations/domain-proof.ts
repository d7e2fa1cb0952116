/**
 * Domain proof (ERC-8004, optional): the owner of an https endpoint's host shows it serves this
 * agent by publishing `https://{host}/.well-known/agent-registration.json` whose `registrations`
 * list this agent (its registry and id). Per endpoint host the outcome is one of
 *  - `verified`: the file lists this agent;
 *  - `mismatch`: the host serves a JSON file there that does not list it (another agent, no
 *    `registrations`, or a file too large to read);
 *  - `absent`: the host answers but serves no such file (404, another client error, HTML or text
 *    that is no JSON object, or a redirect to another host);
 *  - `unreachable`: the host could not be asked (DNS, refused or private address, connection,
 *    deadline, 5xx/429, redirect loops).
 * The file is fetched under the same rules as every off-chain document (src/documents/safe-fetch.ts);
 * one fetch per host serves every agent of a round.
 */
import { fetchDocument, type FetchLimits, type FetchResult } from '../documents/safe-fetch.js';
import { listsAgent, readJsonObject, type AgentIdentity } from './parse.js';

export type DomainProof = 'verified' | 'absent' | 'mismatch' | 'unreachable';

export const WELL_KNOWN_PATH = '/.well-known/agent-registration.json';

/** The URL of a host's domain-proof file (host as in a URL: lower case, with a port when not 443). */
export const wellKnownUrl = (host: string) => `https://${host}${WELL_KNOWN_PATH}`;

/** Judges what `host`'s well-known file says about `self` (pure). */
export function judgeDomainProof(
  fetched: FetchResult,
  host: string,
  self: AgentIdentity,
): { proof: DomainProof; reason: string | null } {
  if (!fetched.ok) {
    switch (fetched.code) {
      case 'http_error':
        return fetched.retryable
          ? { proof: 'unreachable', reason: fetched.detail ?? 'http_error' }
          : { proof: 'absent', reason: fetched.detail ?? 'http_error' };
      case 'bad_content_type':
        return { proof: 'absent', reason: 'not_json' };
      case 'too_large':
        return { proof: 'mismatch', reason: 'too_large' };
      default:
        return { proof: 'unreachable', reason: fetched.code };
    }
  }
  let finalHost: string | null = null;
  try {
    finalHost = new URL(fetched.finalUrl).host.toLowerCase();
  } catch {
    finalHost = null;
  }
  if (finalHost !== host) return { proof: 'absent', reason: 'redirected_off_host' };
  const read = readJsonObject(fetched.bytes);
  if (!read.ok) return { proof: 'absent', reason: read.problem };
  return listsAgent(read.doc.registrations, self) === 'listed'
    ? { proof: 'verified', reason: null }
    : { proof: 'mismatch', reason: 'does_not_list_this_agent' };
}

/** Fetches each host's well-known file at most once (a round's cache, shared by its jobs). */
export class DomainProofCache {
  private readonly fetches = new Map<string, Promise<FetchResult>>();

  constructor(
    private readonly limits: FetchLimits,
    private readonly fetch: (uri: string, limits: FetchLimits) => Promise<FetchResult> = fetchDocument,
  ) {}

  /** The proof of every host in `hosts` for `self`. */
  async check(
    hosts: readonly string[],
    self: AgentIdentity,
  ): Promise<Map<string, { proof: DomainProof; reason: string | null }>> {
    const out = new Map<string, { proof: DomainProof; reason: string | null }>();
    await Promise.all(
      hosts.map(async (host) => {
        let f = this.fetches.get(host);
        if (!f) {
          f = this.fetch(wellKnownUrl(host), this.limits);
          this.fetches.set(host, f);
        }
        out.set(host, judgeDomainProof(await f, host, self));
      }),
    );
    return out;
  }
}
