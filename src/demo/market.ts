/**
 * A real x402 payment market on a local EVM chain, offline: the project's own EIP-3009 token
 * (contracts/TestUSDC.sol, EIP-712 domain "USD Coin" / "2", 6 decimals) deployed on the chain, a
 * funded buyer, a treasury, and the OFFICIAL x402 facilitator (`x402Facilitator` from
 * @x402/core/facilitator with `registerExactEvmScheme` from @x402/evm) served over node:http on
 * 127.0.0.1: `POST /verify`, `POST /settle`, `GET /supported`.
 *
 * `npm run demo` opens one on the demo's base chain (chain id 8453) and points the API at it
 * (TREASURY_ADDRESS, X402_FACILITATOR_URL, X402_ASSET_BASE); the payment tests open one on a chain
 * of their own. Keys are public test keys: never use them on a real network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  keccak256,
  publicActions,
  toHex,
  type Abi,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import tokenArtifact from '../../contracts/artifacts/TestUSDC.json' with { type: 'json' };

export const tokenAbi = tokenArtifact.abi as Abi;

/** A deterministic, PUBLIC test key derived from a label (the demo prints them: never fund them for real). */
export function demoKey(label: string): Hex {
  return keccak256(toHex(`repindex demo key: ${label}`));
}

interface MarketOptions {
  rpcUrl: string;
  chainId: number;
  /** Pays the gas of the deployment, the mint and every settlement (funded by the caller). */
  facilitatorKey: Hex;
  /** Receives the payments (only its address is used). */
  treasury: Hex;
  /** The buyer, minted `buyerFunds` base units of the token. */
  buyerKey: Hex;
  /** Token base units minted to the buyer (6 decimals); default 1000 USDC. */
  buyerFunds?: bigint;
  /** Facilitator port on 127.0.0.1; 0 (default) = any free port. */
  port?: number;
}

export interface Market {
  chainId: number;
  network: `eip155:${number}`;
  /** The deployed EIP-3009 token. */
  token: Hex;
  treasury: Hex;
  buyerKey: Hex;
  buyer: Hex;
  /** Base URL of the facilitator (stable across stop/start). */
  facilitatorUrl: string;
  /** Successful settlements performed by the facilitator so far. */
  settlements(): number;
  balanceOf(address: Hex): Promise<bigint>;
  authorizationUsed(authorizer: Hex, nonce: Hex): Promise<boolean>;
  /** Stops the facilitator's HTTP server (connections refused until `startFacilitator`). */
  stopFacilitator(): Promise<void>;
  startFacilitator(): Promise<void>;
  /** Stops the facilitator (the chain belongs to the caller). */
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new Error('request too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/** Deploys the token, funds the buyer and serves the facilitator. */
export async function openMarket(opts: MarketOptions): Promise<Market> {
  const network = `eip155:${opts.chainId}` as const;
  const chain = defineChain({
    id: opts.chainId,
    name: `local-${opts.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  });
  // Generous timeout: the chain is often an in-process node that answers only when this process's
  // event loop is free, which on a loaded machine can take far longer than viem's 10 s default.
  const transport = http(opts.rpcUrl, { timeout: 120_000, retryCount: 3 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const wallet = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(opts.facilitatorKey),
    pollingInterval: 50,
  }).extend(publicActions);
  const deployTx = await wallet.deployContract({ abi: tokenAbi, bytecode: tokenArtifact.bytecode as Hex });
  const token = getAddress(
    (await publicClient.waitForTransactionReceipt({ hash: deployTx })).contractAddress!,
  );
  const buyer = privateKeyToAccount(opts.buyerKey).address;
  const mintTx = await wallet.writeContract({
    address: token,
    abi: tokenAbi,
    functionName: 'mint',
    args: [buyer, opts.buyerFunds ?? 1_000_000_000n],
  });
  await publicClient.waitForTransactionReceipt({ hash: mintTx });

  /* eslint-disable @typescript-eslint/no-explicit-any -- viem's generics vs the library's loose signer type */
  const signer = toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (args) => wallet.readContract(args as any),
    verifyTypedData: (args) => wallet.verifyTypedData(args as any),
    writeContract: (args) => wallet.writeContract(args as any),
    sendTransaction: (args) => wallet.sendTransaction(args as any),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network });

  let settled = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        if (req.method === 'GET' && req.url === '/supported')
          return send(res, 200, facilitator.getSupported());
        if (req.method === 'POST' && (req.url === '/verify' || req.url === '/settle')) {
          const body = (await readJson(req)) as {
            paymentPayload: PaymentPayload;
            paymentRequirements: PaymentRequirements;
          };
          if (req.url === '/verify') {
            return send(res, 200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
          }
          const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
          if (result.success) settled += 1;
          return send(res, 200, result);
        }
        send(res, 404, { error: 'not found' });
      } catch (err) {
        send(res, 500, { error: (err as Error).message });
      }
    })();
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(opts.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  let running = true;
  const stopFacilitator = async () => {
    if (!running) return;
    running = false;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };

  return {
    chainId: opts.chainId,
    network,
    token,
    treasury: opts.treasury,
    buyerKey: opts.buyerKey,
    buyer,
    facilitatorUrl: `http://127.0.0.1:${port}`,
    settlements: () => settled,
    balanceOf: async (address) =>
      (await publicClient.readContract({
        address: token,
        abi: tokenAbi,
        functionName: 'balanceOf',
        args: [address],
      })) as bigint,
    authorizationUsed: async (authorizer, nonce) =>
      (await publicClient.readContract({
        address: token,
        abi: tokenAbi,
        functionName: 'authorizationState',
        args: [authorizer, nonce],
      })) as boolean,
    stopFacilitator,
    async startFacilitator() {
      if (running) return;
      await listen(port);
      running = true;
    },
    close: stopFacilitator,
  };
}
