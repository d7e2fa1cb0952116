/**
 * The offline demo: three in-process EVM nodes with the chain ids of base (8453), optimism (10)
 * and arbitrum (42161), the project's own registries deployed on each, the deterministic scenario
 * played on them (src/demo/scenario.ts), then indexed by the REAL indexer pass into a database
 * (in-memory PGlite unless a DATABASE_URL is given) and, with `serve`, served by the real API.
 *
 * `startDemo()` does everything except serving; integration tests use it as their fixture.
 */
import { startLocalNode, type LocalNode } from './local-node.js';
import { deployRegistries } from './registries.js';
import type { ChainConfig } from '../chains.js';
import { loadConfig, raterEvidenceConfig, type Config } from '../config.js';
import { raterEvidenceContextFor, runRaterEvidence } from '../raters/job.js';
import { openDatabase, type Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { defaultIndexLogger } from '../indexer/scanner.js';
import { runIndexPass, type IndexLogger, type PassReport } from '../indexer/pass.js';
import { startIndexScheduler } from '../indexer/scheduler.js';
import { startHttpServer } from '../server.js';
import { refreshAfterPass } from '../after-pass.js';
import { registerChains } from '../store/chain-state.js';
import { holdsIndexRows, isDemoDatabase, markDemoDatabase, resetDemoDatabase } from '../store/demo.js';
import { privateKeyToAddress } from 'viem/accounts';
import { startReconcileScheduler } from '../payments/reconcile.js';
import { paidExampleCommand as paidCommand } from '../payments/paid-example.js';
import { demoKey, openMarket, type Market } from './market.js';
import {
  fetchDemoDocuments,
  playDocumentScenario,
  startDocumentServer,
  type DocumentFacts,
  type DocumentServer,
} from './documents.js';
import {
  fetchDemoRegistrations,
  playRegistrationScenario,
  REGISTRATION_CASES,
  startRegistrationSites,
  type RegistrationAgents,
  type RegistrationFacts,
  type RegistrationSites,
} from './registrations.js';
import {
  playScenario,
  scenarioKeyOf,
  SCENARIO_CHAIN_IDS,
  SCENARIO_NETWORKS,
  type ScenarioFacts,
  type ScenarioNode,
} from './scenario.js';

/** The reorg margin the demo chains use (the production default), covered by empty blocks. */
const DEMO_CONFIRMATIONS = 12;

export class DemoDatabaseError extends Error {
  override name = 'DemoDatabaseError';
}

interface StartDemoOptions {
  /** postgres://… ; absent/null: PGlite (in memory unless dataDir is given). */
  databaseUrl?: string | null;
  /** PGlite data directory; default 'memory://'. */
  dataDir?: string;
  /**
   * An open database to play into instead of opening one from databaseUrl/dataDir (the same checks
   * apply: empty or an earlier demo's). The demo's close() closes it.
   */
  db?: Database;
  /** Base configuration (port, policies, …); default: the built-in defaults, ignoring the environment. */
  config?: Config;
  /** Indexer log lines; default: the process logger. */
  log?: IndexLogger;
  /**
   * Also play the feedback-document evidence (src/demo/documents.ts: a local document server and
   * an agent whose ratings show every integrity state and payment proof) and fetch the documents.
   * Default false (the shared test fixture leaves it out; `repindex demo` turns it on).
   */
  documents?: boolean;
  /**
   * Also play the registration files (src/demo/registrations.ts: local https sites with
   * registration files, domain proofs, an MCP endpoint and an A2A card; the first eight base
   * agents of the scenario with a living owner pointed at them) and fetch and probe them. Default false (like `documents`).
   */
  registrations?: boolean;
}

/**
 * The scenario agents on base the registration cases are played on: the first ones by id whose
 * final owner is a scenario actor (it signs the setAgentURI), one per case in order.
 */
function registrationAgents(facts: ScenarioFacts): RegistrationAgents {
  const owned = facts.agents
    .filter((a) => a.network === 'base')
    .sort((a, b) => a.agentId - b.agentId)
    .flatMap((a) => {
      const ownerKey = scenarioKeyOf(a.owner);
      return ownerKey === null ? [] : [{ agentId: a.agentId, ownerKey }];
    });
  if (owned.length < REGISTRATION_CASES.length) throw new Error('the demo has too few base agents');
  return Object.fromEntries(REGISTRATION_CASES.map((c, i) => [c, owned[i]!])) as RegistrationAgents;
}

export interface Demo {
  /** The configuration the indexer and the API use: base/optimism/arbitrum on the local nodes, the other 8 chains disabled. */
  config: Config;
  db: Database;
  facts: ScenarioFacts;
  /** The evidence agent (with `documents: true`), else null. */
  documents: DocumentFacts | null;
  /** The registration cases (with `registrations: true`), else null. */
  registrations?: RegistrationFacts | null;
  nodes: ScenarioNode[];
  /** The report of the indexing pass, and the time the steps took. */
  pass: PassReport;
  timings: { nodesMs: number; scenarioMs: number; indexMs: number; totalMs: number };
  close(): Promise<void>;
}

/** Points the three scenario chains at their nodes and disables every other chain. */
function demoConfig(base: Config, nodes: ScenarioNode[]): Config {
  const chains: ChainConfig[] = base.chains.map((c) => {
    const sn = nodes.find((n) => n.network === c.network);
    if (!sn) return { ...c, enabled: false };
    return {
      ...c,
      kind: 'evm',
      chainId: sn.node.chainId,
      rpcUrl: sn.node.rpcUrl,
      identityRegistry: sn.registries.identityRegistry.toLowerCase(),
      reputationRegistry: sn.registries.reputationRegistry.toLowerCase(),
      startBlock: Number(sn.registries.deployBlock),
      confirmations: DEMO_CONFIRMATIONS,
      enabled: true,
    };
  });
  return { ...base, chains };
}

/**
 * The demo writes only into a database that is empty or that an earlier demo marked as its own
 * (then it is reset first): it never mixes scenario rows into a real index.
 */
async function prepareDemoDatabase(db: Database): Promise<void> {
  if (await isDemoDatabase(db)) return resetDemoDatabase(db);
  if (await holdsIndexRows(db)) {
    throw new DemoDatabaseError(
      'the demo refuses to write into a database that already holds an index: unset DATABASE_URL ' +
        '(the demo then runs in memory) or point it at an empty database',
    );
  }
  await markDemoDatabase(db);
}

export async function startDemo(opts: StartDemoOptions = {}): Promise<Demo> {
  const t0 = Date.now();
  const log = opts.log ?? defaultIndexLogger();
  const base = opts.config ?? loadConfig({});
  const started: LocalNode[] = [];
  let db: Database | null = null;
  let docServer: DocumentServer | null = null;
  let regSites: RegistrationSites | null = null;
  try {
    // The database opens (and is checked) while the chains start.
    const dbReady = (async () => {
      const d =
        opts.db ??
        (await openDatabase({
          databaseUrl: opts.databaseUrl ?? null,
          dataDir: opts.dataDir ?? 'memory://',
        }));
      db = d;
      await migrate(d);
      await prepareDemoDatabase(d);
      return d;
    })();
    // Awaited below; until then a failure must not count as an unhandled rejection.
    dbReady.catch(() => undefined);

    // Every node task settles before this goes on or throws, so the catch below closes every node started.
    const settled = await Promise.allSettled(
      SCENARIO_NETWORKS.map(async (network): Promise<ScenarioNode> => {
        const node = await startLocalNode({ chainId: SCENARIO_CHAIN_IDS[network] });
        started.push(node);
        const registries = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
        return { network, node, registries };
      }),
    );
    const nodes: ScenarioNode[] = settled.map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });
    // A database that cannot be used (or holds a real index) stops the demo before it plays: its
    // check is awaited here (a flag read here raced it: a refused database could see the whole
    // scenario played first).
    const database = await dbReady;
    const nodesMs = Date.now() - t0;
    const facts = await playScenario(nodes);
    let documents: DocumentFacts | null = null;
    if (opts.documents) {
      const baseNode = nodes.find((n) => n.network === 'base');
      if (!baseNode) throw new Error('the demo has no base chain');
      docServer = await startDocumentServer();
      documents = await playDocumentScenario(baseNode.node, baseNode.registries, docServer);
    }
    let registrations: RegistrationFacts | null = null;
    if (opts.registrations) {
      const baseNode = nodes.find((n) => n.network === 'base');
      if (!baseNode) throw new Error('the demo has no base chain');
      regSites = await startRegistrationSites();
      registrations = await playRegistrationScenario(
        baseNode.node,
        baseNode.registries,
        regSites,
        registrationAgents(facts),
      );
    }
    // Cover the reorg margin so that head − confirmations reaches the scenario's last block.
    await Promise.all(nodes.map((n) => n.node.mine(DEMO_CONFIRMATIONS)));
    const scenarioMs = Date.now() - t0 - nodesMs;

    const config = demoConfig(base, nodes);
    await registerChains(database, config.chains);
    const t1 = Date.now();
    const pass = await runIndexPass({
      db: database,
      config,
      log,
      progress: 'lines',
      afterPass: refreshAfterPass,
    });
    const indexMs = Date.now() - t1;
    if (pass.status !== 'ok') throw new Error('the demo index pass could not take the index lock');
    if (pass.failed.length > 0 || pass.afterPassError) {
      const why = pass.chains
        .filter((c) => c.status === 'failed')
        .map((c) => `${c.network}: ${c.error}`)
        .concat(pass.afterPassError ? [`aggregates: ${pass.afterPassError}`] : []);
      throw new Error(`the demo index pass failed (${why.join('; ')})`);
    }
    if (documents && docServer && config.feedbackFetch.enabled)
      await fetchDemoDocuments(database, config, docServer, documents);
    if (registrations && regSites) await fetchDemoRegistrations(database, config, regSites, registrations);
    // The rater evidence: the raters' first transactions read from the local nodes, then cohorts
    // and graph trust; the evidence agent's payment token counts as money here.
    const evidence = raterEvidenceConfig(config);
    if (evidence.enabled) {
      const baseChain = config.chains.find((c) => c.network === 'base');
      const demoToken =
        documents && baseChain?.chainId
          ? [{ chainId: baseChain.chainId, token: documents.token.toLowerCase(), decimals: 6 }]
          : [];
      config.raterEvidence = { ...evidence, valuedTokens: [...evidence.valuedTokens, ...demoToken] };
      await runRaterEvidence(raterEvidenceContextFor(database, config), { force: true });
    }
    const server = docServer;
    const sites = regSites;
    let closed: Promise<void> | null = null;
    return {
      config,
      db: database,
      facts,
      documents,
      registrations,
      nodes,
      pass,
      timings: { nodesMs, scenarioMs, indexMs, totalMs: Date.now() - t0 },
      close() {
        closed ??= (async () => {
          await server?.close();
          await sites?.close();
          await Promise.allSettled(started.map((n) => n.close()));
          await database.close();
        })();
        return closed;
      },
    };
  } catch (e) {
    await (docServer as DocumentServer | null)?.close();
    await (regSites as RegistrationSites | null)?.close();
    await Promise.allSettled(started.map((n) => n.close()));
    const d = db as Database | null;
    if (d) await d.close().catch(() => undefined);
    throw e;
  }
}

/** USDC minted to the demo buyer (base units, 6 decimals): 1000 USDC. */
const DEMO_BUYER_FUNDS = 1_000_000_000n;

/**
 * The demo's x402 market on its base chain (chain id 8453): the chain's clock moved to the wall
 * clock (the facilitator and the token both check the authorization's time window), the EIP-3009
 * token deployed, the buyer funded, the official facilitator served over HTTP, and `demo.config`
 * pointed at it (TREASURY_ADDRESS, X402_FACILITATOR_URL, X402_ASSET_BASE). Keys are derived from
 * public labels ({@link demoKey}): test keys, never for a real network.
 */
export async function startDemoMarket(demo: Demo): Promise<Market> {
  const base = demo.nodes.find((n) => n.network === 'base');
  if (!base) throw new Error('the demo has no base chain');
  const node = base.node;
  const latest = await node.request<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  const nowSec = Math.floor(Date.now() / 1000);
  if (Number(BigInt(latest.timestamp)) < nowSec) {
    await node.setNextBlockTimestamp(nowSec);
    await node.mine(1);
  }
  const facilitatorKey = demoKey('facilitator');
  await node.request('hardhat_setBalance', [
    privateKeyToAddress(facilitatorKey),
    `0x${(10n ** 21n).toString(16)}`,
  ]);
  const market = await openMarket({
    rpcUrl: node.rpcUrl,
    chainId: node.chainId,
    facilitatorKey,
    treasury: privateKeyToAddress(demoKey('treasury')),
    buyerKey: demoKey('buyer'),
    buyerFunds: DEMO_BUYER_FUNDS,
  });
  demo.config = {
    ...demo.config,
    treasuryAddress: market.treasury,
    facilitatorUrl: market.facilitatorUrl,
    paymentAssetOverrides: { ...demo.config.paymentAssetOverrides, base: market.token },
  };
  return market;
}

/** The copy-paste paid call the demo prints (the stock @x402/fetch client, examples/). */
export function paidExampleCommand(market: Market, apiUrl: string, path: string): string {
  return paidCommand({
    apiUrl,
    path,
    buyerKey: market.buyerKey,
    treasury: market.treasury,
    asset: market.token,
  });
}

/**
 * What the demo prints once it serves: the API's address, the explorer's address (its home page
 * and a wallet and a chain page of the scenario), example requests and the paid call.
 */
export function servingBanner(
  u: string,
  facts: ScenarioFacts,
  paidCommand: string,
  evidenceAgentId: string | null = null,
  registrations: RegistrationFacts | null = null,
): string {
  const wallet = facts.multiChainOwner.address;
  return [
    `[demo] serving the index on ${u}  (Ctrl-C stops)`,
    `[demo] explorer: open ${u}/ in a browser (a wallet on three chains: ${u}/explore/wallets/${wallet}, ` +
      `a chain: ${u}/explore/chains/base)`,
    'Try:',
    `  curl -s ${u}/health`,
    `  curl -s ${u}/chains`,
    `  curl -s ${u}/wallets/${wallet}/chains`,
    `  curl -s ${u}/leaderboard`,
    `  curl -s ${u}/feed?limit=5`,
    `  curl -s ${u}/search/${facts.sameAgentIdOnTwoChains.agentId}`,
    `  curl -s ${u}/stats/facets`,
    ...(evidenceAgentId !== null
      ? [
          `  curl -s ${u}/stats/documents`,
          `  (paid) ${u}/reputation/agent/base/${evidenceAgentId}: the evidence agent, every document integrity state and payment proof`,
        ]
      : []),
    ...(registrations !== null
      ? [
          `  curl -s ${u}/stats/registrations`,
          `  curl -s ${u}/agents/base/${registrations.agents.valid}/registration`,
          `  (explorer) ${u}/explore/agents/base/${registrations.agents.valid}: an agent with its registration file, domain proofs and live MCP, A2A and web endpoints`,
        ]
      : []),
    '',
    'Pay for one (the stock @x402/fetch client; prints the receipt, then replays the same header for free):',
    `  ${paidCommand}`,
  ].join('\n');
}

export async function runDemo(opts: { config: Config; serve: boolean }): Promise<void> {
  const { config } = opts;
  console.log(
    '[demo] starting three local chains (base 8453, optimism 10, arbitrum 42161) and playing the scenario…',
  );
  const demo = await startDemo({
    databaseUrl: config.databaseUrl,
    config,
    documents: true,
    registrations: true,
  });
  const { facts, timings } = demo;
  console.log(
    `[demo] scenario: ${facts.totals.agents} agents, ${facts.totals.ratings} ratings, ${facts.totals.revocations} revocations ` +
      `in ${facts.totals.transactions} transactions; indexed in ${timings.indexMs} ms (total ${timings.totalMs} ms, ` +
      `database: ${demo.db.kind}${config.databaseUrl ? '' : ' in memory'})`,
  );
  for (const n of demo.nodes) {
    console.log(
      `[demo] ${n.network}: ${n.node.rpcUrl} (chain id ${n.node.chainId}), identity ${n.registries.identityRegistry}, reputation ${n.registries.reputationRegistry}`,
    );
  }
  if (!opts.serve) {
    await demo.close();
    return;
  }
  const market = await startDemoMarket(demo);
  console.log(
    `[demo] x402 market on base (chain id ${market.chainId}): EIP-3009 token "USD Coin" ${market.token}, ` +
      `facilitator ${market.facilitatorUrl}, treasury ${market.treasury}`,
  );
  console.log(
    `[demo] buyer ${market.buyer} holds ${Number(DEMO_BUYER_FUNDS / 1_000_000n)} test USDC; its key is a PUBLIC test key (never use it on a real network)`,
  );
  const server = await startHttpServer(
    { config: demo.config, db: demo.db, now: () => new Date() },
    { host: config.host, port: config.port },
  );
  if (config.port === 0) demo.config.baseUrl = server.url;
  const scheduler = startIndexScheduler({
    db: demo.db,
    config: demo.config,
    runAtStart: false,
    pass: { afterPass: refreshAfterPass },
  });
  const reconciler = startReconcileScheduler({ db: demo.db, config: demo.config });
  const u = server.url;
  const wallet = facts.multiChainOwner.address;
  console.log(
    servingBanner(
      u,
      facts,
      paidExampleCommand(market, u, `/reputation/wallet/${wallet}`),
      demo.documents ? String(demo.documents.agentId) : null,
      demo.registrations ?? null,
    ),
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[demo] ${signal}: shutting down`);
    await scheduler.stop();
    await reconciler.stop();
    await server.close();
    await market.close();
    await demo.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
