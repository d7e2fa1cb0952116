/**
 * An in-process EVM node for tests and the demo: Hardhat's EDR (the Rust EVM behind Hardhat 3,
 * `@nomicfoundation/edr`) exposed as a plain HTTP JSON-RPC server on 127.0.0.1, so that anything
 * speaking JSON-RPC (viem's `http()` transport, the indexer, curl) can talk to it.
 *
 * Why EDR's own API and not `hre.network.connect()`: a Hardhat runtime environment wants a project
 * root, resolves plugins and may create cache/artifact folders; EDR's provider needs only a config
 * object. We build that config the way Hardhat's network manager does (L1 chain type, owned
 * accounts in the genesis state) and keep everything in memory: no config file, no network access,
 * no downloads.
 *
 * Behaviour: automine on (each transaction in its own block), strictly increasing block
 * timestamps, a FIFO mempool (when automine is switched off, a block holds its transactions in
 * arrival order, which keeps scripted chains deterministic). All EDR/Hardhat RPC methods pass
 * through, notably `evm_setNextBlockTimestamp`, `evm_increaseTime`, `evm_mine [timestamp]`,
 * `evm_setAutomine`, `hardhat_mine`, `hardhat_setBalance`, `hardhat_impersonateAccount`.
 *
 * Like a public EVM chain, the genesis carries Multicall3 at 0xcA11bde0…CA11 (the project's own
 * `aggregate3`-only contract, its runtime code installed in the genesis state, no deployment
 * transaction): the indexer's census finds it with eth_getCode as it would on mainnet.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ContractDecoder,
  EdrContext,
  L1_CHAIN_TYPE,
  MineOrdering,
  PRAGUE,
  l1GenesisState,
  l1HardforkFromString,
  l1ProviderFactory,
  type Provider,
  type ProviderConfig,
} from '@nomicfoundation/edr';
import { hexToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { MULTICALL3_ADDRESS } from '../chains.js';
import multicallArtifact from '../../contracts/artifacts/Multicall3.json' with { type: 'json' };

export type Hex = `0x${string}`;

interface LocalNodeOptions {
  chainId: number;
  /** TCP port on 127.0.0.1; 0 or absent = a free port chosen by the OS. */
  port?: number;
  /**
   * Timestamp (seconds) of the genesis block. Defaults to {@link DEFAULT_GENESIS_TIMESTAMP}, a fixed
   * date, so that chains are reproducible and scripted scenarios can place blocks at any later date.
   * Blocks mined without an explicit timestamp follow a clock that starts at this date.
   */
  genesisTimestamp?: number;
  /** Number of funded, unlocked dev accounts (1..10). Default 10. */
  accountCount?: number;
  /**
   * Default true: the genesis holds the project's Multicall3 (`aggregate3`, contracts/Multicall3.sol)
   * at its canonical address, as public EVM chains do; false: no code there (a chain without it).
   */
  multicall3?: boolean;
}

export interface LocalNode {
  rpcUrl: string;
  chainId: number;
  /** Funded (10,000 ETH) and unlocked: `eth_sendTransaction` from them works, and their keys are known. */
  accounts: Hex[];
  privateKeys: Hex[];
  genesisTimestamp: number;
  /** Mines `blocks` empty blocks (default 1). */
  mine(blocks?: number): Promise<void>;
  /** Sets the timestamp of the next block (must be later than the latest block's). */
  setNextBlockTimestamp(timestamp: number): Promise<void>;
  /** In-process JSON-RPC call (no HTTP); throws {@link JsonRpcError} on an error response. */
  request<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Stops the HTTP server (dropping open keep-alive connections) and releases the EVM. */
  close(): Promise<void>;
}

/** 2026-06-01T00:00:00Z: before the demo scenario's first block, and fixed for reproducibility. */
export const DEFAULT_GENESIS_TIMESTAMP = Date.UTC(2026, 5, 1) / 1000;

/**
 * The first ten keys of the public development mnemonic "test test test test test test test test
 * test test test junk" (m/44'/60'/0'/0/i), the accounts every Hardhat/Anvil user recognises.
 * Public knowledge: never use them on a real network.
 */
const DEV_PRIVATE_KEYS: readonly Hex[] = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
];

const ACCOUNT_BALANCE = 10_000n * 10n ** 18n;
const BLOCK_GAS_LIMIT = 60_000_000n;
/** Same coinbase Hardhat uses for its local network. */
const COINBASE = '0xc014ba5ec014ba5ec014ba5ec014ba5ec014ba5e';
/** Largest HTTP request body accepted (a batch of large raw transactions stays far below). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The nodes running in this process, by RPC URL: a client in the same process may call a node
 * directly instead of over HTTP (the demo's transaction helpers do; the indexer always uses HTTP).
 */
const running = new Map<string, LocalNode>();

/** The node of this process that serves `rpcUrl`, if any (closed nodes are forgotten). */
export function localNodeAt(rpcUrl: string): LocalNode | undefined {
  return running.get(rpcUrl);
}

export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

// EDR asks for a single EdrContext per process ("Should only be called once!"). The promise lives
// on globalThis so that a module evaluated twice in one process (test isolation) still shares it.
const CONTEXT_KEY = Symbol.for('repindex.edr-context');
type GlobalWithContext = typeof globalThis & { [CONTEXT_KEY]?: Promise<EdrContext> };

function edrContext(): Promise<EdrContext> {
  const g = globalThis as GlobalWithContext;
  g[CONTEXT_KEY] ??= (async () => {
    const context = new EdrContext();
    await context.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return context;
  })();
  return g[CONTEXT_KEY];
}

interface JsonRpcRequest {
  jsonrpc?: string;
  id?: string | number | null;
  method?: unknown;
  params?: unknown;
}

/** EDR echoes the request in some error data; keep the caller's id when EDR can take it. */
function edrId(id: JsonRpcRequest['id']): string | number {
  return typeof id === 'string' || typeof id === 'number' ? id : 1;
}

interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export async function startLocalNode(opts: LocalNodeOptions): Promise<LocalNode> {
  const { chainId } = opts;
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error(`invalid chainId ${chainId}`);
  const accountCount = opts.accountCount ?? DEV_PRIVATE_KEYS.length;
  if (accountCount < 1 || accountCount > DEV_PRIVATE_KEYS.length) {
    throw new Error(`accountCount must be within 1..${DEV_PRIVATE_KEYS.length}`);
  }
  const genesisTimestamp = opts.genesisTimestamp ?? DEFAULT_GENESIS_TIMESTAMP;
  const privateKeys = DEV_PRIVATE_KEYS.slice(0, accountCount);
  const accounts = privateKeys.map((key) => privateKeyToAddress(key));

  const hardfork = PRAGUE;
  const config: ProviderConfig = {
    allowBlocksWithSameTimestamp: false,
    allowUnlimitedContractSize: false,
    // Like Hardhat: a reverting eth_call / transaction answers with a JSON-RPC error carrying the
    // revert data (the reverted transaction is still mined).
    bailOnCallFailure: true,
    bailOnTransactionFailure: true,
    chainId: BigInt(chainId),
    coinbase: hexToBytes(COINBASE),
    defaultTransactionGasLimit: 30_000_000n,
    genesisState: [
      // The hardfork's system contracts (beacon roots, history storage, …), then our accounts.
      ...l1GenesisState(l1HardforkFromString(hardfork)),
      ...accounts.map((address) => ({ address: hexToBytes(address), balance: ACCOUNT_BALANCE })),
      ...(opts.multicall3 === false
        ? []
        : [
            {
              address: hexToBytes(MULTICALL3_ADDRESS),
              code: hexToBytes(multicallArtifact.deployedBytecode as Hex),
            },
          ]),
    ],
    hardfork,
    minGasPrice: 0n,
    mining: { autoMine: true, blockGasLimit: BLOCK_GAS_LIMIT, memPool: { order: MineOrdering.Fifo } },
    network: { genesisBlockGasLimit: BLOCK_GAS_LIMIT, genesisBlockTime: BigInt(genesisTimestamp) },
    networkId: BigInt(chainId),
    observability: {},
    ownedAccounts: [...privateKeys],
    precompileOverrides: [],
  };

  const context = await edrContext();
  let provider: Provider | undefined = await context.createProvider(
    L1_CHAIN_TYPE,
    config,
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    // No subscriptions over HTTP (eth_subscribe needs a websocket); filters work by polling.
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );

  /** One JSON-RPC call into EDR. EDR's answers carry `result` or `error`; we add jsonrpc and id. */
  async function handleOne(req: JsonRpcRequest): Promise<JsonRpcResponse> {
    const id = req.id ?? null;
    if (typeof req.method !== 'string' || (req.params !== undefined && !Array.isArray(req.params))) {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
    }
    if (!provider) return { jsonrpc: '2.0', id, error: { code: -32603, message: 'Node is closed' } };
    try {
      const response = await provider.handleRequest(
        JSON.stringify({ jsonrpc: '2.0', id: edrId(req.id), method: req.method, params: req.params ?? [] }),
      );
      const raw: unknown = response.data;
      const data = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Partial<JsonRpcResponse>;
      return data.error !== undefined
        ? { jsonrpc: '2.0', id, error: data.error }
        : { jsonrpc: '2.0', id, result: data.result ?? null };
    } catch (err) {
      // EDR throws (instead of answering with an error) only on internal failures.
      return { jsonrpc: '2.0', id, error: { code: -32603, message: (err as Error).message } };
    }
  }

  async function handleBody(body: string): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0)
        return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Empty batch' } };
      // Sequential on purpose: a batch of sends must reach the mempool in the order given.
      const out: JsonRpcResponse[] = [];
      for (const item of parsed) {
        const isObject = typeof item === 'object' && item !== null;
        const res = await handleOne(isObject ? (item as JsonRpcRequest) : {});
        // Notifications (no id) get no answer, per JSON-RPC 2.0.
        if (!isObject || 'id' in item) out.push(res);
      }
      return out.length > 0 ? out : undefined;
    }
    if (typeof parsed !== 'object' || parsed === null) {
      return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } };
    }
    const res = await handleOne(parsed as JsonRpcRequest);
    return 'id' in parsed ? res : undefined;
  }

  function onHttp(req: IncomingMessage, res: ServerResponse): void {
    // Permissive CORS: a browser page of the demo may query the node directly.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', 'content-type');
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (res.writableEnded) return;
      handleBody(Buffer.concat(chunks).toString('utf8')).then(
        (answer) => {
          if (answer === undefined) {
            res.writeHead(204).end();
            return;
          }
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
        },
        (err: unknown) => {
          res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err));
        },
      );
    });
  }

  const server: Server = createServer(onHttp);
  // Keep-alive sockets from fetch() would otherwise hold close() up for the default 5 s.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  async function request<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const res = await handleOne({ id: 1, method, params });
    if (res.error) throw new JsonRpcError(res.error.code, `${method}: ${res.error.message}`, res.error.data);
    return res.result as T;
  }

  let closing: Promise<void> | undefined;
  const rpcUrl = `http://127.0.0.1:${port}`;

  const node: LocalNode = {
    rpcUrl,
    chainId,
    accounts,
    privateKeys: [...privateKeys],
    genesisTimestamp,
    request,
    async mine(blocks = 1) {
      if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`invalid block count ${blocks}`);
      await request('hardhat_mine', [`0x${blocks.toString(16)}`]);
    },
    async setNextBlockTimestamp(timestamp: number) {
      await request('evm_setNextBlockTimestamp', [timestamp]);
    },
    close() {
      if (running.get(rpcUrl) === node) running.delete(rpcUrl);
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => {
          // Dropping the reference releases the native provider once garbage-collected; EDR has
          // no explicit shutdown and holds no event-loop handles of its own.
          provider = undefined;
          if (err) reject(err);
          else resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
  running.set(rpcUrl, node);
  return node;
}
