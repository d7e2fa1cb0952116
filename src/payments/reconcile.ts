/**
 * Reconciliation of payment claims left `settling-unknown` (a settle that timed out, a 5xx, a
 * `settlement_pending`): the chain is the authority. For each such claim the token's
 * `authorizationState(payer, nonce)` is read through the RPC of that payment network (the chain
 * table's `rpcUrl`, e.g. RPC_URL_BASE; the token is the asset the challenges quote there):
 *
 *  - used on chain → the claim becomes `settled` (its settlement transaction found from the token's
 *    `AuthorizationUsed(authorizer, nonce)` log, or the one the facilitator had reported), and the
 *    receipt of the buyer's header is written: the buyer's retry with the SAME header for the same
 *    resource is then served from that receipt (answer computed once, no new charge).
 *  - unused and `validBefore` passed → it can never be spent any more: the claim is released
 *    (nothing was charged; a retry with that header is refused as expired).
 *  - unused and still valid → left as it is (`pending`): a retry with the same header re-verifies
 *    and settles it, and the next run decides once the window has closed. Releasing it earlier could
 *    lose a payment whose settlement transaction is still on its way.
 *
 * The x402 facilitator API has no query for a past settlement (only verify/settle/supported), so
 * the facilitator is not asked. Also drops the stored answers of expired receipts (their bytes are
 * only kept for the reuse window). Runs periodically in `serve` (PAYMENT_RECONCILE_SECONDS) and
 * once with `repindex reconcile-payments`.
 */
import {
  createPublicClient,
  getAddress,
  http,
  parseAbi,
  parseAbiItem,
  type Hex,
  type PublicClient,
} from 'viem';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { offeredNetworks } from './challenge.js';
import { chainIdOf } from './exact-checks.js';
import {
  dropExpiredAnswers,
  recordSettlement,
  releaseUnknownClaim,
  settleUnknownClaim,
  unknownClaims,
  type ClaimKey,
} from '../store/payments.js';
import { logger } from '../log.js';

const tokenAbi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);
const authorizationUsed = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
/** How far back (blocks) the settlement transaction is looked for. */
const LOG_LOOKBACK_BLOCKS = 50_000n;

interface ReconcileReport {
  examined: number;
  settled: number;
  released: number;
  pending: number;
  /** Claims that could not be decided now (no RPC for the network, RPC error), with why. */
  errors: string[];
}

/** What the chain says about one authorization. */
interface AuthorizationState {
  used: boolean;
  /** The settlement transaction, when found. */
  tx: string | null;
}

type AuthorizationReader = (q: {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
}) => Promise<AuthorizationState>;

/** Reads `authorizationState` (and the `AuthorizationUsed` log) through the configured RPC of each network. */
function chainAuthorizationReader(config: Config): AuthorizationReader {
  const clients = new Map<number, PublicClient>();
  return async ({ network, asset, payer, nonce }) => {
    const chainId = chainIdOf(network);
    const chain = config.chains.find((c) => c.kind === 'evm' && c.chainId === chainId);
    if (chainId === null || !chain) throw new Error(`no RPC configured for payment network ${network}`);
    let client = clients.get(chainId);
    if (!client) {
      client = createPublicClient({
        transport: http(chain.rpcUrl, { timeout: 15_000, retryCount: 1 }),
      }) as PublicClient;
      clients.set(chainId, client);
    }
    const token = getAddress(asset);
    const used = (await client.readContract({
      address: token,
      abi: tokenAbi,
      functionName: 'authorizationState',
      args: [getAddress(payer), nonce as Hex],
    })) as boolean;
    if (!used) return { used, tx: null };
    let tx: string | null = null;
    try {
      const head = await client.getBlockNumber();
      const logs = await client.getLogs({
        address: token,
        event: authorizationUsed,
        args: { authorizer: getAddress(payer), nonce: nonce as Hex },
        fromBlock: head > LOG_LOOKBACK_BLOCKS ? head - LOG_LOOKBACK_BLOCKS : 0n,
        toBlock: head,
      });
      tx = logs[0]?.transactionHash ?? null;
    } catch {
      // a provider that refuses the range: the claim's own transaction (if any) stands
    }
    return { used, tx };
  };
}

interface ReconcileOptions {
  db: Database;
  config: Config;
  now?: () => Date;
  /** Defaults to {@link chainAuthorizationReader}. */
  readAuthorization?: AuthorizationReader;
}

export async function reconcilePayments(opts: ReconcileOptions): Promise<ReconcileReport> {
  const now = (opts.now ?? (() => new Date()))();
  const read = opts.readAuthorization ?? chainAuthorizationReader(opts.config);
  const assets = new Map(offeredNetworks(opts.config).map((n) => [n.caip2, n.asset]));
  const report: ReconcileReport = { examined: 0, settled: 0, released: 0, pending: 0, errors: [] };
  const claims = await unknownClaims(opts.db);
  for (const c of claims) {
    report.examined += 1;
    const key: ClaimKey = [c.network, c.payer, c.nonce];
    const asset = assets.get(c.network);
    let state: AuthorizationState;
    try {
      if (!asset) throw new Error(`payment network ${c.network} is not offered`);
      state = await read({ network: c.network, asset, payer: c.payer, nonce: c.nonce });
    } catch (err) {
      report.errors.push(`${c.network} ${c.payer} ${c.nonce}: ${(err as Error).message.slice(0, 200)}`);
      continue;
    }
    if (state.used) {
      const tx = state.tx ?? c.settlement_tx;
      if (tx && c.receipt_key) {
        await recordSettlement(opts.db, {
          claimKey: key,
          receiptKey: c.receipt_key,
          resource: c.resource,
          amount: c.amount,
          tx,
          payer: c.payer,
          expires: new Date(now.getTime() + opts.config.receiptReuseSeconds * 1000),
          runStartedAt: null,
        });
      } else {
        await settleUnknownClaim(opts.db, key, tx);
      }
      report.settled += 1;
      continue;
    }
    const expired =
      c.valid_before !== null && BigInt(c.valid_before) <= BigInt(Math.floor(now.getTime() / 1000));
    if (expired) {
      if (await releaseUnknownClaim(opts.db, key)) report.released += 1;
    } else {
      report.pending += 1;
    }
  }
  // Answers are kept for the reuse window only.
  await dropExpiredAnswers(opts.db, now);
  return report;
}

interface ReconcileScheduler {
  stop(): Promise<void>;
}

/** Runs {@link reconcilePayments} every `config.paymentReconcileSeconds` (0: never). */
export function startReconcileScheduler(
  opts: ReconcileOptions & { log?: (line: string) => void },
): ReconcileScheduler {
  const period = opts.config.paymentReconcileSeconds ?? 300;
  if (period <= 0 || !opts.config.treasuryAddress) return { stop: async () => undefined };
  const log = opts.log ?? ((l: string) => logger('reconcile').info(l));
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = reconcilePayments(opts)
      .then((r) => {
        if (r.settled || r.released || r.errors.length) {
          log(
            `[payments] reconciled ${r.examined} unknown settlement(s): ${r.settled} settled, ${r.released} released, ${r.pending} pending${r.errors.length ? `; ${r.errors.length} undecided (${r.errors[0]})` : ''}`,
          );
        }
      })
      .catch((e: unknown) => log(`[payments] reconciliation failed: ${(e as Error).message}`))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, period * 1000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
