/**
 * Configuration from the environment, validated once at start. Every variable is documented in
 * the README; a bad value stops the process with a message naming the variable.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { builtInChains, isNetwork, NETWORKS, type ChainConfig, type Network } from './chains.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface RateLimitConfig {
  /** Sustained requests per second per client address. */
  rate: number;
  burst: number;
}

export interface Config {
  databaseUrl: string | null;
  dataDir: string;
  port: number;
  host: string;
  baseUrl: string;
  chains: ChainConfig[];
  indexerPeriodSeconds: number;
  facilitatorUrl: string;
  treasuryAddress: string | null;
  receiptReuseSeconds: number;
  /**
   * `X402_ASSET_<NETWORK>` (e.g. `X402_ASSET_BASE`): replaces the USDC contract that challenges
   * offer on that payment network (tests point it at a local EIP-3009 token). Absent: the built-in
   * USDC table of src/payments/pricing.ts.
   */
  paymentAssetOverrides?: Readonly<Record<string, string>>;
  /**
   * `MAX_CONCURRENT_PAID_RUNS`: paid handler runs at once per process (default 16): a first paid run,
   * or the answer a settled payment still owes on its retry; more get 503 (before settlement, or
   * naming the receipt of an owed answer). A receipt reuse replays stored bytes and is not counted.
   */
  maxConcurrentPaidRuns?: number;
  /** `PAYMENT_RECONCILE_SECONDS`: period of the settling-unknown reconciliation in `serve` (default 300; 0 disables). */
  paymentReconcileSeconds?: number;
  /**
   * `PAYMENT_SETTLE_TIMEOUT_SECONDS` (default 90): a claim still `settling` after this long has an
   * unknown outcome (its process died or lost the database); a retry or the reconciliation decides it.
   */
  paymentSettleTimeoutSeconds: number;
  /** `PAYMENT_JOURNAL`: the settlement journal file `serve` appends to (default `<DATA_DIR>/payment-journal.jsonl`). */
  paymentJournal?: string;
  redisUrl: string | null;
  databaseReadUrl: string | null;
  rateLimit: RateLimitConfig;
  /** Trust X-Forwarded-For for the client address (only behind a known proxy). */
  trustProxy: boolean;
  /**
   * `TRUST_PROXY_HOPS` (default 1): how many proxies of your own stand in front of the API. The
   * client address is the entry that many places from the RIGHT of X-Forwarded-For (each proxy
   * appends the peer it saw; everything to the left of that came from the client and is ignored).
   */
  trustProxyHops?: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** METRICS_PORT: the Prometheus listener (GET /metrics); null (default) = no metrics listener. */
  metricsPort?: number | null;
  /** METRICS_HOST: its bind address (default: HOST). */
  metricsHost?: string;
  /** RPC_RETRY_BASE_MS: first wait before retrying a failed RPC call, any chain (default 250; doubles, with jitter). */
  rpcRetryBaseMs?: number;
  /** RPC_MAX_ATTEMPTS: attempts of one RPC call before the chain's pass fails (default 5). */
  rpcMaxAttempts?: number;
  /** SOLANA_RPC_TIMEOUT_MS: timeout of every Solana RPC call (default 30000). */
  solanaRpcTimeoutMs?: number;
  /** SOLANA_RPC_CONCURRENCY: most Solana RPC calls in flight (default 8; a 429 lowers it for a while). */
  solanaRpcConcurrency?: number;
  /**
   * The completeness census after each pass of an EVM chain: CENSUS (1, default; 0 = off),
   * CENSUS_FULL_EVERY (a census of every agent every Nth pass, default 1: every pass; the passes
   * between check a sample), CENSUS_SAMPLE (agents sampled, default 16), CENSUS_SEED (the sample's
   * seed; absent = a new sample every pass), CENSUS_BATCH (reads per Multicall3 eth_call, default
   * 1000). See docs/COMPLETENESS.md.
   */
  census?: { enabled: boolean; sample: number; seed: number | null; fullEvery?: number; batch?: number };
  /** The feedback-document fetcher (FEEDBACK_* variables, see the README). */
  feedbackFetch: FeedbackFetchConfig;
  /**
   * Registration files, domain proofs and liveness probes (REGISTRATION_* and LIVENESS_*; they
   * fetch under the FEEDBACK_* rules: bytes, deadline, redirects, private addresses, IPFS gateway,
   * attempts). Absent: the defaults.
   */
  registrations?: RegistrationsConfig;
  /** KNOWN_RELAYERS: lower-cased addresses whose ratings are `facilitator-authored`. */
  knownRelayers: string[];
  /** The rater-evidence job (RATER_* variables, see the README); absent: the defaults. */
  raterEvidence?: RaterEvidenceConfig;
}

export interface RaterEvidenceConfig {
  /** RATER_EVIDENCE (default 1): 0 turns the job off (weights then read no evidence but the live s). */
  enabled: boolean;
  /** RATER_EVIDENCE_PERIOD_SECONDS (default 300): how often `serve` runs it. */
  periodSeconds: number;
  /** RATER_TX_RATE (default 5): transaction lookups per second per chain. */
  txRatePerSecond: number;
  /** RATER_TX_BATCH (default 100): lookups leased per round. */
  txBatch: number;
  /** RATER_TX_MAX_ATTEMPTS (default 5): attempts before a lookup fails. */
  txMaxAttempts: number;
  /** RATER_VALUED_TOKENS: extra valued tokens, `chainId:address:decimals`, comma-separated. */
  valuedTokens: { chainId: number; token: string; decimals: number }[];
}

/** The rater-evidence settings of a configuration (the defaults when it has none). */
export function raterEvidenceConfig(config: Pick<Config, 'raterEvidence'>): RaterEvidenceConfig {
  return config.raterEvidence ?? raterEvidenceFromEnv({});
}

function raterEvidenceFromEnv(env: Env): RaterEvidenceConfig {
  const raw = env.RATER_VALUED_TOKENS?.trim();
  const valuedTokens = raw
    ? raw.split(',').map((item) => {
        const m = /^(\d{1,15}):(0x[0-9a-fA-F]{40}):(\d{1,2})$/.exec(item.trim());
        if (!m)
          throw new ConfigError(
            `RATER_VALUED_TOKENS must be comma-separated chainId:address:decimals, got ${JSON.stringify(item.trim())}`,
          );
        return { chainId: Number(m[1]), token: m[2]!.toLowerCase(), decimals: Number(m[3]) };
      })
    : [];
  return {
    enabled: boolVar(env, 'RATER_EVIDENCE', true),
    periodSeconds: intVar(env, 'RATER_EVIDENCE_PERIOD_SECONDS', 300, 1, 86_400),
    txRatePerSecond: intVar(env, 'RATER_TX_RATE', 5, 1, 1000),
    txBatch: intVar(env, 'RATER_TX_BATCH', 100, 1, 10_000),
    txMaxAttempts: intVar(env, 'RATER_TX_MAX_ATTEMPTS', 5, 1, 50),
    valuedTokens,
  };
}

export interface FeedbackFetchConfig {
  /** FEEDBACK_FETCH (default 1): 0 turns the fetcher off. */
  enabled: boolean;
  /** FEEDBACK_IPFS_GATEWAY: http(s) prefix ipfs:// paths are fetched through; null = none (ipfs jobs wait). */
  ipfsGateway: string | null;
  /** FEEDBACK_MAX_BYTES (default 262144). */
  maxBytes: number;
  /** FEEDBACK_TIMEOUT_MS (default 10000): one deadline for a whole fetch, redirects included. */
  timeoutMs: number;
  /** FEEDBACK_MAX_REDIRECTS (default 3). */
  maxRedirects: number;
  /** FEEDBACK_ALLOW_PRIVATE (default false): allow private, loopback, link-local addresses. */
  allowPrivate: boolean;
  /** FEEDBACK_MAX_ATTEMPTS (default 5). */
  maxAttempts: number;
  /** FEEDBACK_RETRY_BASE_SECONDS (default 60): first retry delay, doubling (capped at 6 h). */
  retryBaseSeconds: number;
  /** FEEDBACK_RECHECK_SECONDS (default 604800): a fetched document is fetched again after this. */
  recheckSeconds: number;
  /** FEEDBACK_FETCH_PERIOD_SECONDS (default 60): how often `serve` drains the queue. */
  periodSeconds: number;
  /** FEEDBACK_FETCH_BATCH (default 20) jobs leased per round; FEEDBACK_FETCH_CONCURRENCY (default 4) fetched at once. */
  batch: number;
  concurrency: number;
}

export interface RegistrationsConfig {
  /** REGISTRATION_FETCH (default 1): 0 turns the registration-file fetcher (and the domain proofs) off. */
  enabled: boolean;
  /** REGISTRATION_RECHECK_SECONDS (default 86400): a fetched registration file is fetched again after this. */
  recheckSeconds: number;
  /** REGISTRATION_FETCH_PERIOD_SECONDS (default 60): how often `serve` works the registration queue and the probes. */
  periodSeconds: number;
  /** LIVENESS_PROBES (default 1): 0 turns the endpoint liveness probes off. */
  liveness: boolean;
  /** LIVENESS_RECHECK_SECONDS (default 21600): an endpoint is probed again after this. */
  livenessRecheckSeconds: number;
  /** LIVENESS_HOST_INTERVAL_SECONDS (default 2): at most one probe per host per interval, across processes. */
  livenessHostIntervalSeconds: number;
  /** LIVENESS_TIMEOUT_MS (default 10000): one deadline for a whole probe (an MCP handshake and tools/list included). */
  livenessTimeoutMs: number;
}

/** The registration-file and liveness settings (the defaults when the configuration has none). */
export function registrationsConfig(env: Env): RegistrationsConfig {
  return {
    enabled: boolVar(env, 'REGISTRATION_FETCH', true),
    recheckSeconds: intVar(env, 'REGISTRATION_RECHECK_SECONDS', 86_400, 60, 365 * 86_400),
    periodSeconds: intVar(env, 'REGISTRATION_FETCH_PERIOD_SECONDS', 60, 1, 86_400),
    liveness: boolVar(env, 'LIVENESS_PROBES', true),
    livenessRecheckSeconds: intVar(env, 'LIVENESS_RECHECK_SECONDS', 6 * 3600, 60, 30 * 86_400),
    livenessHostIntervalSeconds: intVar(env, 'LIVENESS_HOST_INTERVAL_SECONDS', 2, 0, 3600),
    livenessTimeoutMs: intVar(env, 'LIVENESS_TIMEOUT_MS', 10_000, 100, 120_000),
  };
}

function feedbackFetchConfig(env: Env): FeedbackFetchConfig {
  return {
    enabled: boolVar(env, 'FEEDBACK_FETCH', true),
    ipfsGateway: urlVar(env, 'FEEDBACK_IPFS_GATEWAY', ['http:', 'https:']),
    maxBytes: intVar(env, 'FEEDBACK_MAX_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    timeoutMs: intVar(env, 'FEEDBACK_TIMEOUT_MS', 10_000, 100, 120_000),
    maxRedirects: intVar(env, 'FEEDBACK_MAX_REDIRECTS', 3, 0, 10),
    allowPrivate: boolVar(env, 'FEEDBACK_ALLOW_PRIVATE', false),
    maxAttempts: intVar(env, 'FEEDBACK_MAX_ATTEMPTS', 5, 1, 50),
    retryBaseSeconds: intVar(env, 'FEEDBACK_RETRY_BASE_SECONDS', 60, 1, 86_400),
    recheckSeconds: intVar(env, 'FEEDBACK_RECHECK_SECONDS', 7 * 86_400, 60, 365 * 86_400),
    periodSeconds: intVar(env, 'FEEDBACK_FETCH_PERIOD_SECONDS', 60, 1, 86_400),
    batch: intVar(env, 'FEEDBACK_FETCH_BATCH', 20, 1, 1000),
    concurrency: intVar(env, 'FEEDBACK_FETCH_CONCURRENCY', 4, 1, 64),
  };
}

function knownRelayers(env: Env): string[] {
  const raw = env.KNOWN_RELAYERS?.trim();
  if (!raw) return [];
  return raw.split(',').map((a) => {
    const t = a.trim();
    if (!/^0x[0-9a-fA-F]{40}$/.test(t))
      throw new ConfigError(`KNOWN_RELAYERS must be comma-separated EVM addresses, got ${JSON.stringify(t)}`);
    return t.toLowerCase();
  });
}

type Env = Record<string, string | undefined>;

function boolVar(env: Env, name: string, def: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return def;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false)`);
}

function intVar(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim()))
    throw new ConfigError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function urlVar(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${u.protocol}`);
  }
  return raw;
}

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x + 40 hex');
const chainOverride = z
  .object({
    rpcUrl: z.string().url(),
    chainId: z.number().int().positive(),
    identityRegistry: evmAddress,
    reputationRegistry: evmAddress,
    programId: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/),
    startBlock: z.number().int().nonnegative().nullable(),
    confirmations: z.number().int().nonnegative().max(10_000),
    enabled: z.boolean(),
  })
  .partial()
  .strict();

/** Merge CHAINS_FILE and RPC_URL_<NETWORK> over the built-in table. */
function resolveChains(env: Env, chainsFileText?: string): ChainConfig[] {
  const table = builtInChains();
  if (chainsFileText !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(chainsFileText);
    } catch (e) {
      throw new ConfigError(`CHAINS_FILE is not valid JSON: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError('CHAINS_FILE must hold a JSON object keyed by network slug');
    }
    for (const [slug, value] of Object.entries(parsed)) {
      if (!isNetwork(slug)) {
        throw new ConfigError(
          `CHAINS_FILE names an unknown network "${slug}" (known: ${NETWORKS.join(', ')})`,
        );
      }
      const r = chainOverride.safeParse(value);
      if (!r.success) {
        const issue = r.error.issues[0];
        const where = issue?.path.length ? `.${issue.path.join('.')}` : '';
        throw new ConfigError(`CHAINS_FILE ${slug}${where}: ${issue?.message ?? 'invalid'}`);
      }
      table[slug] = { ...table[slug], ...r.data };
    }
  }
  for (const network of NETWORKS) {
    const name = `RPC_URL_${network.toUpperCase()}`;
    const url = urlVar(env, name, ['http:', 'https:', 'ws:', 'wss:']);
    if (url) table[network as Network] = { ...table[network as Network], rpcUrl: url };
  }
  return NETWORKS.map((n) => table[n]);
}

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = urlVar(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseReadUrl = urlVar(env, 'DATABASE_READ_URL', ['postgres:', 'postgresql:']);
  if (databaseReadUrl && !databaseUrl) {
    throw new ConfigError(
      'DATABASE_READ_URL needs DATABASE_URL (a read replica of a PostgreSQL primary; the embedded database has none)',
    );
  }
  const port = intVar(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const baseUrl = (
    urlVar(env, 'BASE_URL', ['http:', 'https:']) ??
    `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  let chainsFileText: string | undefined;
  if (env.CHAINS_FILE) {
    try {
      chainsFileText = readFileSync(env.CHAINS_FILE, 'utf8');
    } catch (e) {
      throw new ConfigError(`CHAINS_FILE cannot be read: ${(e as Error).message}`);
    }
  }
  const treasury = env.TREASURY_ADDRESS?.trim() || null;
  if (treasury !== null && !/^0x[0-9a-fA-F]{40}$/.test(treasury)) {
    throw new ConfigError('TREASURY_ADDRESS must be an EVM address (0x + 40 hex)');
  }
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL must be one of debug, info, warn, error');
  }
  const metricsPort = env.METRICS_PORT?.trim() ? intVar(env, 'METRICS_PORT', 0, 1, 65535) : null;
  if (metricsPort !== null && metricsPort === port) {
    throw new ConfigError('METRICS_PORT must differ from PORT (metrics are never served on the public port)');
  }
  const dataDir = env.DATA_DIR?.trim() || './data';
  const trustProxyRaw = env.TRUST_PROXY?.trim() || 'false';
  if (!['true', 'false', '1', '0'].includes(trustProxyRaw))
    throw new ConfigError('TRUST_PROXY must be true or false');
  return {
    databaseUrl,
    databaseReadUrl,
    dataDir,
    port,
    host,
    baseUrl,
    chains: resolveChains(env, chainsFileText),
    indexerPeriodSeconds: intVar(env, 'INDEXER_PERIOD_SECONDS', 3600, 0, 7 * 24 * 3600),
    facilitatorUrl:
      urlVar(env, 'X402_FACILITATOR_URL', ['http:', 'https:']) ?? 'https://x402.org/facilitator',
    treasuryAddress: treasury,
    receiptReuseSeconds: intVar(env, 'RECEIPT_REUSE_SECONDS', 900, 300, 1800),
    redisUrl: urlVar(env, 'REDIS_URL', ['redis:', 'rediss:']),
    rateLimit: {
      rate: intVar(env, 'RATE_LIMIT_RPS', 50, 1, 1_000_000),
      burst: intVar(env, 'RATE_LIMIT_BURST', 40, 1, 1_000_000),
    },
    trustProxy: trustProxyRaw === 'true' || trustProxyRaw === '1',
    trustProxyHops: intVar(env, 'TRUST_PROXY_HOPS', 1, 1, 32),
    logLevel,
    metricsPort,
    metricsHost: env.METRICS_HOST?.trim() || host,
    paymentAssetOverrides: paymentAssetOverrides(env),
    maxConcurrentPaidRuns: intVar(env, 'MAX_CONCURRENT_PAID_RUNS', 16, 1, 100_000),
    paymentReconcileSeconds: intVar(env, 'PAYMENT_RECONCILE_SECONDS', 300, 0, 7 * 24 * 3600),
    paymentSettleTimeoutSeconds: intVar(env, 'PAYMENT_SETTLE_TIMEOUT_SECONDS', 90, 1, 3600),
    paymentJournal: env.PAYMENT_JOURNAL?.trim() || `${dataDir.replace(/\/+$/, '')}/payment-journal.jsonl`,
    rpcRetryBaseMs: intVar(env, 'RPC_RETRY_BASE_MS', 250, 1, 60_000),
    rpcMaxAttempts: intVar(env, 'RPC_MAX_ATTEMPTS', 5, 1, 20),
    solanaRpcTimeoutMs: intVar(env, 'SOLANA_RPC_TIMEOUT_MS', 30_000, 100, 600_000),
    solanaRpcConcurrency: intVar(env, 'SOLANA_RPC_CONCURRENCY', 8, 1, 256),
    census: {
      enabled: boolVar(env, 'CENSUS', true),
      sample: intVar(env, 'CENSUS_SAMPLE', 16, 0, 10_000),
      seed: env.CENSUS_SEED?.trim() ? intVar(env, 'CENSUS_SEED', 0, 0, 2 ** 32 - 1) : null,
      fullEvery: intVar(env, 'CENSUS_FULL_EVERY', 1, 1, 100_000),
      batch: intVar(env, 'CENSUS_BATCH', 1_000, 1, 10_000),
    },
    feedbackFetch: feedbackFetchConfig(env),
    registrations: registrationsConfig(env),
    knownRelayers: knownRelayers(env),
    raterEvidence: raterEvidenceFromEnv(env),
  };
}

/** The payment networks a challenge offers (src/payments/pricing.ts `PAYMENT_NETWORKS`). */
const PAYMENT_NETWORK_SLUGS = ['base', 'avalanche', 'arbitrum', 'optimism', 'polygon', 'celo'] as const;

function paymentAssetOverrides(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const slug of PAYMENT_NETWORK_SLUGS) {
    const name = `X402_ASSET_${slug.toUpperCase()}`;
    const raw = env[name]?.trim();
    if (!raw) continue;
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw))
      throw new ConfigError(`${name} must be an EVM address (0x + 40 hex)`);
    out[slug] = raw;
  }
  return out;
}
