/**
 * A real x402 payment rail, offline: a local EDR chain with chain id 8453, the project's own
 * EIP-3009 token (contracts/TestUSDC.sol, domain "USD Coin"/"2") deployed on it, and the x402
 * facilitator library (`x402Facilitator` + the EVM exact scheme, a viem wallet as its signer)
 * behind a node:http server on 127.0.0.1 exposing POST /verify, POST /settle, GET /supported.
 * `signPayment` plays the client: it signs a 402 challenge with the EVM exact client scheme.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  publicActions,
  type Abi,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import tokenArtifact from '../../contracts/artifacts/TestUSDC.json' with { type: 'json' };
import { startLocalNode, type LocalNode } from '../../src/chain/local-node.js';

export const LOCAL_CHAIN_ID = 8453;
export const LOCAL_NETWORK = `eip155:${LOCAL_CHAIN_ID}` as const;
const tokenAbi = tokenArtifact.abi as Abi;

export interface LocalPayments {
  node: LocalNode;
  /** The deployed TestUSDC. */
  token: Hex;
  /** Where payments go (dev account 1). */
  treasury: Hex;
  /** Dev account 2's key: a funded payer (1000 USDC minted). */
  payerKey: Hex;
  payer: Hex;
  /** Base URL of the facilitator server (stable across stop/start). */
  facilitatorUrl: string;
  /** Successful settlements performed by the facilitator so far. */
  settlements(): number;
  balanceOf(address: Hex): Promise<bigint>;
  authorizationUsed(authorizer: Hex, nonce: Hex): Promise<boolean>;
  /** Stops the facilitator's HTTP server (connections refused until `startFacilitator`). */
  stopFacilitator(): Promise<void>;
  startFacilitator(): Promise<void>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

export async function startLocalPayments(): Promise<LocalPayments> {
  // Block timestamps near the wall clock: the facilitator checks validBefore against Date.now().
  const node = await startLocalNode({ chainId: LOCAL_CHAIN_ID, genesisTimestamp: Math.floor(Date.now() / 1000) - 60 });
  const chain = defineChain({
    id: LOCAL_CHAIN_ID,
    name: 'local-base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
  });
  const transport = http(node.rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const deployer = createWalletClient({ chain, transport, account: privateKeyToAccount(node.privateKeys[0]!) });
  const deployTx = await deployer.deployContract({ abi: tokenAbi, bytecode: tokenArtifact.bytecode as Hex });
  const receipt = await publicClient.waitForTransactionReceipt({ hash: deployTx });
  const token = receipt.contractAddress!;
  const treasury = node.accounts[1]!;
  const payerKey = node.privateKeys[2]!;
  const payer = node.accounts[2]!;
  const mintTx = await deployer.writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [payer, 1_000_000_000n] });
  await publicClient.waitForTransactionReceipt({ hash: mintTx });

  // The facilitator pays the gas from dev account 3.
  const facilitatorWallet = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(node.privateKeys[3]!),
    pollingInterval: 50,
  }).extend(publicActions);
  /* eslint-disable @typescript-eslint/no-explicit-any -- viem's generics vs the library's loose signer type */
  const signer = toFacilitatorEvmSigner({
    address: facilitatorWallet.account.address,
    readContract: (args) => facilitatorWallet.readContract(args as any),
    verifyTypedData: (args) => facilitatorWallet.verifyTypedData(args as any),
    writeContract: (args) => facilitatorWallet.writeContract(args as any),
    sendTransaction: (args) => facilitatorWallet.sendTransaction(args as any),
    waitForTransactionReceipt: (args) => facilitatorWallet.waitForTransactionReceipt(args),
    getCode: (args) => facilitatorWallet.getCode(args),
  });
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: LOCAL_NETWORK });

  let settled = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        if (req.method === 'GET' && req.url === '/supported') return send(res, 200, facilitator.getSupported());
        if (req.method === 'POST' && (req.url === '/verify' || req.url === '/settle')) {
          const body = (await readJson(req)) as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
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
  await listen(0);
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
    node,
    token,
    treasury,
    payerKey,
    payer,
    facilitatorUrl: `http://127.0.0.1:${port}`,
    settlements: () => settled,
    balanceOf: async (address) =>
      (await publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [address] })) as bigint,
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
    async close() {
      await stopFacilitator();
      await node.close();
    },
  };
}

/**
 * Signs a 402 challenge body as an x402 v2 client would (EVM exact scheme, EIP-3009), choosing the
 * local network's `accepts[]` entry, and returns the base64 `X-PAYMENT` value. `tamper` may alter
 * the requirement before signing (to sign a wrong amount or payTo on purpose).
 */
export async function signPayment(
  challenge: unknown,
  privateKey: Hex,
  tamper?: (r: PaymentRequirements) => PaymentRequirements,
): Promise<{ header: string; payload: PaymentPayload }> {
  const body = challenge as PaymentRequired;
  const accepts = body.accepts.filter((a) => a.network === LOCAL_NETWORK).map((a) => (tamper ? tamper({ ...a }) : a));
  const client = new x402Client()
    .register(LOCAL_NETWORK, new ExactEvmClientScheme(toClientEvmSigner(privateKeyToAccount(privateKey))))
    // The local token is not a "default asset" of the library: allow it explicitly.
    .setSpendControls({ allowedAssets: true });
  const payload = await client.createPaymentPayload({ ...body, accepts });
  return { header: encodePaymentSignatureHeader(payload), payload };
}

/** The EIP-3009 nonce inside a signed payload. */
export function nonceOf(payload: PaymentPayload): Hex {
  return (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
}
