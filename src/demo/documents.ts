/**
 * The demo's feedback documents (issue 23): a local document server (127.0.0.1, a free port) and,
 * on the base chain, one agent ("evidence agent") whose ratings point at documents of every
 * integrity state, with a real payment proof (a USDC-like transfer from the rater to the agent's
 * owner on the same chain), a proof naming a transfer to someone else, a proof that names no real
 * transaction, one on a chain the demo does not index, an ipfs:// document waiting for a gateway,
 * and responses by the owner and by a third party. `fetchDemoDocuments` then runs the real fetcher
 * (private addresses allowed for this server only) and re-checks once after the "changed"
 * document was edited, so the agent detail shows every case offline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { drainDocuments, fetcherContextFor, type RoundReport } from '../documents/fetcher.js';
import { demoKey } from './market.js';
import { appendResponse, giveFeedback, registerAgent, type Registries } from './registries.js';
import { deployTestToken, mintTestToken, payWithToken } from './token.js';
import type { LocalNode } from './local-node.js';

export interface DocumentServer {
  url: string;
  set(path: string, contentType: string, body: string): void;
  close(): Promise<void>;
}

/** A tiny static server on 127.0.0.1 (404 for anything not set). */
export async function startDocumentServer(): Promise<DocumentServer> {
  const docs = new Map<string, [string, string]>();
  const server: Server = createServer((req, res) => {
    const d = docs.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (!d) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': d[0] });
    res.end(d[1]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    set: (path, type, body) => void docs.set(path, [type, body]),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What the demo's evidence agent holds, by case (the rating's feedbackURI names each case). */
export interface DocumentFacts {
  network: 'base';
  agentId: string;
  owner: Address;
  token: Address;
  /** The payment that verifies (rater → owner), in the token's base units. */
  paymentTx: Hex;
  paymentAmount: string;
  /** feedbackURI per case. */
  uris: Record<DocumentCase, string>;
  /** Path of the document that is edited after the first fetch, and its edited body. */
  changed: { path: string; edited: string };
}

export const DOCUMENT_CASES = [
  'match_verified_payment',
  'hash_mismatch',
  'no_commitment_with_field_mismatches',
  'paid_someone_else',
  'not_json',
  'unreachable',
  'changed',
  'proof_not_found',
  'proof_other_chain',
  'ipfs_waiting_for_gateway',
] as const;
export type DocumentCase = (typeof DOCUMENT_CASES)[number];

const ZERO_HASH = `0x${'00'.repeat(32)}` as Hex;
const FUNDING = `0x${(10n ** 21n).toString(16)}`;

/**
 * Plays the evidence agent's transactions on `node` (the base chain, where `registries` live) and
 * serves its documents on `server`.
 */
export async function playDocumentScenario(
  node: LocalNode,
  registries: Registries,
  server: DocumentServer,
): Promise<DocumentFacts> {
  const rpc = node.rpcUrl;
  const key = (label: string) => demoKey(`evidence:${label}`);
  const ownerKey = key('owner');
  const raters = DOCUMENT_CASES.map((c) => key(`rater:${c}`));
  const someoneElse = privateKeyToAddress(key('someone-else'));
  const funded = [ownerKey, key('deployer'), key('third-party'), ...raters];
  await Promise.all(funded.map((k) => node.request('hardhat_setBalance', [privateKeyToAddress(k), FUNDING])));

  const owner = privateKeyToAddress(ownerKey);
  const { agentId } = await registerAgent(registries, ownerKey, `${server.url}/agent-card.json`);
  server.set('/agent-card.json', 'application/json', JSON.stringify({ name: 'Evidence agent' }));
  const token = await deployTestToken(rpc, key('deployer'));
  const rater = (c: DocumentCase) => raters[DOCUMENT_CASES.indexOf(c)]!;
  const raterAddr = (c: DocumentCase) => privateKeyToAddress(rater(c));
  for (const c of ['match_verified_payment', 'paid_someone_else'] as const)
    await mintTestToken(rpc, key('deployer'), token, raterAddr(c), 100_000_000n);
  const paymentAmount = 2_500_000n; // 2.5 USDC-like units (6 decimals)
  const paymentTx = await payWithToken(rpc, rater('match_verified_payment'), token, owner, paymentAmount);
  const elsewhereTx = await payWithToken(rpc, rater('paid_someone_else'), token, someoneElse, 1_000_000n);

  const file = (c: DocumentCase, over: Record<string, unknown> = {}) =>
    JSON.stringify({
      agentRegistry: `eip155:${node.chainId}:${registries.identityRegistry}`,
      agentId: Number(agentId),
      clientAddress: `eip155:${node.chainId}:${raterAddr(c)}`,
      createdAt: '2026-10-01T12:00:00Z',
      value: 90,
      valueDecimals: 0,
      tag1: 'quality',
      ...over,
    });
  const proof = (c: DocumentCase, to: Address, txHash: Hex, chainId: number = node.chainId) => ({
    proofOfPayment: { fromAddress: raterAddr(c), toAddress: to, chainId, txHash },
  });
  const uris = {} as Record<DocumentCase, string>;
  const rate = async (
    c: DocumentCase,
    body: string | null,
    commit: 'hash' | 'zero' | 'other',
    type = 'application/json',
  ) => {
    const path = `/feedback/${c}.json`;
    const uri =
      c === 'ipfs_waiting_for_gateway'
        ? 'ipfs://bafkreievidenceagentwaitingforagateway'
        : `${server.url}${path}`;
    if (body !== null) server.set(path, type, body);
    const hash =
      commit === 'zero'
        ? ZERO_HASH
        : commit === 'other'
          ? keccak256(toHex('other bytes'))
          : keccak256(toHex(body ?? ''));
    await giveFeedback(registries, rater(c), {
      agentId,
      value: 90,
      tag1: 'quality',
      feedbackURI: uri,
      feedbackHash: hash,
    });
    uris[c] = uri;
  };

  await rate(
    'match_verified_payment',
    file('match_verified_payment', proof('match_verified_payment', owner, paymentTx)),
    'hash',
  );
  await rate('hash_mismatch', file('hash_mismatch'), 'other');
  await rate(
    'no_commitment_with_field_mismatches',
    file('no_commitment_with_field_mismatches', { agentId: 999_999, value: 10, tag1: 'price' }),
    'zero',
  );
  await rate(
    'paid_someone_else',
    file('paid_someone_else', proof('paid_someone_else', owner, elsewhereTx)),
    'hash',
  );
  await rate('not_json', 'Great agent, would hire again.', 'zero', 'text/plain');
  await rate('unreachable', null, 'zero');
  const changedBody = file('changed');
  await rate('changed', changedBody, 'hash');
  await rate(
    'proof_not_found',
    file('proof_not_found', proof('proof_not_found', owner, `0x${'ab'.repeat(32)}` as Hex)),
    'hash',
  );
  await rate(
    'proof_other_chain',
    file('proof_other_chain', proof('proof_other_chain', owner, paymentTx, 1)),
    'hash',
  );
  await rate('ipfs_waiting_for_gateway', null, 'zero');

  // Responses to the verified rating: the owner's, then a third party's.
  const client = raterAddr('match_verified_payment');
  await appendResponse(registries, ownerKey, agentId, client, 1, `${server.url}/responses/thanks.json`);
  await appendResponse(
    registries,
    key('third-party'),
    agentId,
    client,
    1,
    `${server.url}/responses/me-too.json`,
  );

  return {
    network: 'base',
    agentId: agentId.toString(),
    owner,
    token,
    paymentTx,
    paymentAmount: paymentAmount.toString(),
    uris,
    changed: {
      path: '/feedback/changed.json',
      edited: JSON.stringify({ ...JSON.parse(changedBody), value: 10, note: 'edited after the fact' }),
    },
  };
}

/**
 * Runs the real fetcher over the evidence agent's jobs (private addresses allowed: the document
 * server is on 127.0.0.1), edits the "changed" document and re-checks it, as a later fetch would.
 */
export async function fetchDemoDocuments(
  db: Database,
  config: Config,
  server: DocumentServer,
  facts: DocumentFacts,
): Promise<RoundReport> {
  const base = fetcherContextFor(db, config);
  // Its own document server only (127.0.0.1), not every private address.
  base.options.limits.allowAddresses = ['127.0.0.1'];
  // Only the evidence agent's documents: the scenario's other ratings name example.* hosts, which
  // the demo never looks up (it stays offline); their jobs stay queued.
  const ctx = { ...base, scope: { network: facts.network, agentId: facts.agentId } };
  const first = await drainDocuments(ctx);
  server.set(facts.changed.path, 'application/json', facts.changed.edited);
  // The re-check a later round would make: its clock moved past the re-check delay.
  const later = new Date(Date.now() + (base.options.recheckSeconds + 60) * 1000);
  await drainDocuments({ ...ctx, clock: () => later });
  return first;
}
