/**
 * The registration-file fetcher: works the durable queue of `agent_registrations` (SQL in
 * src/store/registrations.ts) exactly like the feedback-document fetcher works its own (lease with
 * SKIP LOCKED, one fetch at a time per host, src/documents/queue.ts), fetches each agentURI through
 * the same safe fetch (src/documents/safe-fetch.ts: https, http, ipfs through the gateway, data:;
 * size cap, deadline, checked redirects, no private address unless configured), reads it
 * (./parse.ts), checks the domain proof of each https service host (./domain-proof.ts) and
 * finishes the job with the file's state:
 *  - `valid`: JSON that passes registration-v1 (leniently);
 *  - `invalid`: bytes that are no JSON object, or a file whose fields fail (`problems`), a
 *    `registrations[]` that does not name this agent included;
 *  - `unreachable`: no bytes after the retries (or a non-retryable failure); what an earlier fetch
 *    read is kept and served with it;
 *  - `changed`: a valid file whose bytes differ from the first ones fetched for this URI (the file
 *    was edited without an on-chain URIUpdated); it stays `changed` until the next URI event.
 * A finished file is fetched again after `recheckSeconds` (an unreachable one too: it may come
 * back); a URIUpdated queues it at once (the ingest, src/store/registrations.ts).
 */
import { randomBytes } from 'node:crypto';
import type { ChainConfig } from '../chains.js';
import { registrationsConfig, type Config } from '../config.js';
import type { Database } from '../db/database.js';
import { keccakHex, sha256Hex } from '../documents/evidence.js';
import { fetcherOptions, fetchHost, retryDelaySeconds } from '../documents/fetcher.js';
import { runQueueRound } from '../documents/queue.js';
import { fetchDocument, type FetchLimits, type FetchResult } from '../documents/safe-fetch.js';
import { logger } from '../log.js';
import { recordRegistrationFile } from '../metrics.js';
import {
  finishRegistration,
  leaseRegistrations,
  wakeIpfsRegistrations,
  type EndpointRow,
  type RegistrationJob,
  type RegistrationOutcome,
} from '../store/registrations.js';
import { DomainProofCache } from './domain-proof.js';
import { parseRegistration, REGISTRATION_PARSER_VERSION, type AgentIdentity } from './parse.js';

/** Distinct https hosts of one file whose domain proof is fetched (the rest stays unchecked). */
export const MAX_PROOF_HOSTS = 8;

export interface RegistrationOptions {
  limits: FetchLimits;
  batch: number;
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  recheckSeconds: number;
}

export interface RegistrationContext {
  db: Database;
  options: RegistrationOptions;
  /** The configured chains: an agent's own registry and chain id. */
  chains: readonly ChainConfig[];
  clock?: () => Date;
  owner?: string;
  /** Only these agents' files (the demo); default every job. */
  scope?: { network: string; agentIds: readonly string[] };
  /** Replaces the network fetch (tests). */
  fetch?: (uri: string, limits: FetchLimits) => Promise<FetchResult>;
}

export interface RegistrationReport {
  leased: number;
  valid: number;
  invalid: number;
  unreachable: number;
  changed: number;
  retried: number;
  waiting: number;
}

const emptyReport = (): RegistrationReport => ({
  leased: 0,
  valid: 0,
  invalid: 0,
  unreachable: 0,
  changed: 0,
  retried: 0,
  waiting: 0,
});

/** The fetcher's options: the feedback fetcher's rules (FEEDBACK_*) and REGISTRATION_RECHECK_SECONDS. */
export function registrationOptions(config: Config): RegistrationOptions {
  const f = fetcherOptions(config);
  const r = config.registrations ?? registrationsConfig({});
  return {
    ...f,
    limits: { ...f.limits, userAgent: 'repindex-registration-fetcher/1 (+read-only reputation index)' },
    recheckSeconds: r.recheckSeconds,
  };
}

export function registrationContextFor(db: Database, config: Config): RegistrationContext {
  return { db, options: registrationOptions(config), chains: config.chains };
}

/** The agent a job is read for (its chain's registry and id). */
export function identityOf(chains: readonly ChainConfig[], network: string, agentId: string): AgentIdentity {
  const c = chains.find((x) => x.network === network);
  return {
    network,
    kind: c?.kind ?? 'evm',
    chainId: c?.chainId ?? null,
    identityRegistry: c?.identityRegistry ?? null,
    agentId,
  };
}

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** Fetches and reads one leased job; returns the outcome to store. */
export async function processRegistration(
  ctx: RegistrationContext,
  job: RegistrationJob,
  now: Date,
  proofs: DomainProofCache,
): Promise<RegistrationOutcome> {
  const o = ctx.options;
  const fetched = await (ctx.fetch ?? fetchDocument)(job.uri, o.limits);
  const recheck = after(now, o.recheckSeconds);
  if (!fetched.ok) {
    if (fetched.code === 'no_ipfs_gateway')
      return { state: 'queued', nextTryAt: after(now, 3600), reason: fetched.code, uncountAttempt: true };
    if (fetched.code === 'bad_content_type')
      // an answer, but no JSON (an HTML page, an image): the URI serves no registration file
      return {
        state: 'succeeded',
        nextTryAt: recheck,
        reason: fetched.code,
        resetAttempts: true,
        fileState: 'invalid',
        problems: [{ field: '(file)', problem: 'not_json' }],
      };
    if (fetched.retryable && job.attempts < o.maxAttempts)
      return {
        state: 'retry',
        nextTryAt: after(now, retryDelaySeconds(job.attempts, o.retryBaseSeconds)),
        reason: fetched.code,
      };
    return {
      state: 'failed',
      nextTryAt: recheck,
      reason: fetched.code,
      resetAttempts: true,
      fileState: 'unreachable',
    };
  }
  const bytes = fetched.bytes;
  const keccak = keccakHex(bytes);
  const self = identityOf(ctx.chains, job.network, job.agent_id);
  const parsed = parseRegistration(bytes, self);
  const differs = job.first_keccak256 !== null && job.first_keccak256 !== keccak;
  const wasChanged = job.changed_at !== null;
  const changedAt = wasChanged ? new Date(job.changed_at!) : differs ? now : null;
  const fileState =
    parsed.problems.length > 0 ? 'invalid' : changedAt !== null ? 'changed' : ('valid' as const);
  // The domain proof of each distinct https host (a bounded number per file).
  const hosts = [
    ...new Set(parsed.services.filter((s) => s.https && s.host !== null).map((s) => s.host!)),
  ].slice(0, MAX_PROOF_HOSTS);
  const proofMap = hosts.length > 0 ? await proofs.check(hosts, self) : new Map();
  const endpoints: EndpointRow[] = parsed.services.map((s) => {
    const p = s.https && s.host !== null ? proofMap.get(s.host) : undefined;
    return {
      type: s.type,
      url: s.url,
      version: s.version,
      probeKind: s.probeKind,
      host: s.host,
      domainProof: p?.proof ?? null,
      domainReason: p ? p.reason : s.https ? 'not_checked' : null,
    };
  });
  return {
    state: 'succeeded',
    nextTryAt: recheck,
    reason: null,
    resetAttempts: true,
    fileState,
    problems: parsed.problems,
    blob: {
      sha256: sha256Hex(bytes),
      keccak256: keccak,
      byteLength: bytes.length,
      contentType: fetched.contentType?.slice(0, 100) ?? null,
    },
    changedAt,
    parsed: {
      parserVersion: REGISTRATION_PARSER_VERSION,
      name: parsed.name,
      description: parsed.description,
      image: parsed.image,
      x402Support: parsed.x402Support,
      active: parsed.active,
      supportedTrust: parsed.supportedTrust,
      registrationsCheck: parsed.registrationsCheck,
    },
    endpoints,
  };
}

/** Leases one batch of due files and processes it; returns what happened. */
export async function runRegistrationRound(ctx: RegistrationContext): Promise<RegistrationReport> {
  const clock = ctx.clock ?? (() => new Date());
  const owner = (ctx.owner ??= `registrations-${randomBytes(6).toString('hex')}`);
  const o = ctx.options;
  const jobs = await leaseRegistrations(ctx.db, owner, clock(), o.batch, o.leaseSeconds, ctx.scope ?? null);
  const report: RegistrationReport = { ...emptyReport(), leased: jobs.length };
  const proofs = new DomainProofCache(o.limits, ctx.fetch);
  await runQueueRound<RegistrationJob, RegistrationOutcome>({
    jobs,
    concurrency: o.concurrency,
    host: (job) => fetchHost(job.uri),
    process: (job) => processRegistration(ctx, job, clock(), proofs),
    onError: (job, e) => {
      logger('registrations').warn({ err: e.message.slice(0, 200) }, 'registration job failed');
      return {
        state: 'retry',
        nextTryAt: after(clock(), retryDelaySeconds(job.attempts, o.retryBaseSeconds)),
        reason: 'internal_error',
      };
    },
    finish: async (job, outcome) => {
      const written = await finishRegistration(ctx.db, job, owner, clock(), outcome);
      if (written) recordRegistrationFile(outcome.fileState ?? outcome.state);
      if (outcome.state === 'retry') report.retried++;
      else if (outcome.state === 'queued') report.waiting++;
      else if (outcome.fileState) report[outcome.fileState]++;
    },
  });
  return report;
}

/** Runs rounds until no file is due (or `maxRounds`, or `signal` aborts); returns the sum. */
export async function drainRegistrations(
  ctx: RegistrationContext,
  maxRounds = 1000,
  signal?: AbortSignal,
): Promise<RegistrationReport> {
  const total = emptyReport();
  if (ctx.options.limits.ipfsGateway)
    await wakeIpfsRegistrations(ctx.db, (ctx.clock ?? (() => new Date()))());
  for (let i = 0; i < maxRounds && !signal?.aborted; i++) {
    const r = await runRegistrationRound(ctx);
    for (const k of Object.keys(total) as (keyof RegistrationReport)[]) total[k] += r[k];
    if (r.leased === 0) break;
  }
  return total;
}
