/**
 * Pays for one metered call of repindex with the STOCK x402 client (`@x402/fetch` + the EVM
 * `exact` scheme of `@x402/evm`), then replays the same payment header once: the replay is free
 * (`X-Payment-Reused: true`) and returns the very bytes that were paid for.
 *
 *   REPINDEX_URL=http://127.0.0.1:8080 BUYER_KEY=0x… TREASURY_ADDRESS=0x… X402_ASSET=0x… \
 *     npx tsx examples/pay-with-x402-fetch.ts /reputation/wallet/0x…
 *
 * `npm run demo` prints this command with every value filled in (a local market: its own EIP-3009
 * token on the demo's base chain, a real x402 facilitator, a funded test buyer).
 *
 * Safety the client keeps (the contract's Authentication flow): it signs only an `accepts[]` entry
 * whose payTo is the treasury you pinned (TREASURY_ADDRESS, published out of band), on base
 * (eip155:8453), in the one token you allowed (X402_ASSET), and never more than MAX_UNITS base
 * units (default 50000 = $0.05). Keys never leave this process.
 */
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const NETWORK = 'eip155:8453';

function need(name: string): string {
  const v = process.env[name]?.trim();
  if (!v) {
    console.error(`set ${name} (npm run demo prints every value)`);
    process.exit(2);
  }
  return v;
}

const base = need('REPINDEX_URL').replace(/\/+$/, '');
const key = need('BUYER_KEY') as `0x${string}`;
const treasury = need('TREASURY_ADDRESS').toLowerCase();
const asset = need('X402_ASSET');
const maxUnits = process.env.MAX_UNITS?.trim() || '50000';
const path = process.argv[2] ?? '/reputation/wallet/0x0000000000000000000000000000000000000000';

const account = privateKeyToAccount(key);
const client = new x402Client()
  .register(NETWORK, new ExactEvmScheme(toClientEvmSigner(account)))
  // The demo token is not one of the library's known USDC contracts: allow exactly that one, capped.
  .setSpendControls({ allowedAssets: [{ network: NETWORK, asset, maxAmountPerPayment: maxUnits }] })
  // Sign only for the pinned treasury (if the 402 names another payee, nothing is signed).
  .registerPolicy((_version, reqs) => reqs.filter((r) => r.network === NETWORK && r.payTo.toLowerCase() === treasury));

// Remember the payment header the stock client sends, to replay it once.
let sentPayment: string | null = null;
const recordingFetch: typeof fetch = async (input, init) => {
  const req = new Request(input, init);
  sentPayment = req.headers.get('PAYMENT-SIGNATURE') ?? req.headers.get('X-PAYMENT') ?? sentPayment;
  return fetch(req);
};
const payingFetch = wrapFetchWithPayment(recordingFetch, client);

console.log(`buyer ${account.address} → GET ${base}${path}`);
const paid = await payingFetch(`${base}${path}`);
const paidBody = await paid.text();
const settlementHeader = paid.headers.get('PAYMENT-RESPONSE');
const settlement = settlementHeader ? decodePaymentResponseHeader(settlementHeader) : null;
console.log(`paid:   HTTP ${paid.status}  X-Payment-Receipt: ${paid.headers.get('X-Payment-Receipt')}  X-Payment-Reused: ${paid.headers.get('X-Payment-Reused')}`);
if (paid.status !== 200) {
  console.log(paidBody);
  process.exit(1);
}
console.log(`        settlement (PAYMENT-RESPONSE): ${JSON.stringify(settlement)}`);
console.log(`        body: ${paidBody.slice(0, 300)}${paidBody.length > 300 ? '…' : ''}`);
console.log(`        payment header (the same header re-reads this resource free until the receipt expires):\n        ${sentPayment}`);

// The same header again, for the same resource: served from the receipt, no second charge.
const replay = await fetch(`${base}${path}`, { headers: { 'PAYMENT-SIGNATURE': sentPayment ?? '' } });
const replayBody = await replay.text();
console.log(`replay: HTTP ${replay.status}  X-Payment-Receipt: ${replay.headers.get('X-Payment-Receipt')}  X-Payment-Reused: ${replay.headers.get('X-Payment-Reused')}  same bytes: ${replayBody === paidBody}`);
console.log(
  `summary: ${JSON.stringify({
    status: paid.status,
    receipt: paid.headers.get('X-Payment-Receipt'),
    reused: paid.headers.get('X-Payment-Reused'),
    settlement,
    replay_status: replay.status,
    replay_reused: replay.headers.get('X-Payment-Reused'),
    replay_identical: replayBody === paidBody,
  })}`,
);
