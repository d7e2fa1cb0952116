/**
 * What the A2A door answers to a `message/send`: the text of the message is scanned once, and the
 * answer is built from the JSON of the SAME free HTTP handlers (`/wallets/{wallet}/chains`,
 * `/search/{q}`, `/health`), reached through `DoorDeps.get` (in process, see
 * src/doors/http/routes/a2a.ts). Nothing here queries the database or recomputes a score: this
 * module only reads text and formats JSON into text.
 *
 * Dispatch, in this order, over the first {@link MAX_TEXT_CHARS} characters of the text:
 * 1. an EVM address (`0x` + 40 hex, any case) anywhere in the text, standing alone (not glued to
 *    other letters or digits) → the per-chain preview of the FIRST such address;
 * 2. else a Solana base58 key (32-44 base58 characters, standing alone, not digits only) → resolved
 *    through `/search/{q}`: an agent asset gets an agent line, a wallet gets the preview of
 *    branch 1, a string that is both gets both, an unknown key gets a sentence saying so; an agent
 *    line is followed by what its registration file declares (free
 *    `/agents/{network}/{agent_id}/registration`: state, declared name, services live and with a
 *    verified domain);
 * 3. else (free text, digits only, empty, no text part at all) → the live index status and usage.
 *
 * Conventions of the answer text (the contract leaves these to the builder):
 * - A chain line is `<network>: <n> identities, score <six decimals>, <n> ratings from <n> distinct
 *   raters`; when the chain's score is null the `score <x>` piece is replaced by `no ratings yet`
 *   and the counts stay (`base: 3 identities, no ratings yet, 0 ratings from 0 distinct raters`).
 *   Counts are pluralised in English (`1 identity`, `1 rating from 1 distinct rater`).
 * - Scores are the raw number the API serves, always written with six decimals (`86.653045`,
 *   `87.000000`, a real zero `0.000000`), never the two-decimal display form.
 * - No caveat of any kind travels over this door (the contract: "the A2A door carries no caveats").
 * - Paid routes are named by method, path and price, the price read from src/payments/pricing.ts
 *   (`matchTier`). Nothing is paid over this door. A wallet whose identities never received a
 *   rating (`chains_with_reputation: 0`) is told there is nothing to decompose yet, next to the
 *   wallet route and its price, instead of being pointed at history and agent detail.
 * - Only the first EVM address (or the first base58 key) is looked up; the answer says how many
 *   other addresses were left unread. A bare 40-hex string without `0x` is not read as an address.
 */
import { z } from 'zod';
import { matchTier, tierById } from '../../payments/pricing.js';
import { isObject, pathSegment } from '../in-process.js';

/** Only this many characters of the (concatenated) text are ever scanned: hostile input is bounded. */
export const MAX_TEXT_CHARS = 4096;
/** Only this many parts of a message are read. */
const MAX_PARTS = 64;

/** How the door reaches the HTTP handlers: GET a path in process, the parsed JSON of a 200 (throws otherwise). */
interface DoorDeps {
  get(path: string): Promise<unknown>;
}

// ------------------------------------------------------------------ reading the message

/**
 * The text of `params.message.parts`: every part whose `kind` (or, when `kind` is absent, `type`)
 * is `text` and whose `text` is a string, joined with a newline, cut at {@link MAX_TEXT_CHARS}.
 * Anything else (other parts, `role`, `messageId`, metadata) is not read. Missing or malformed
 * `params` gives the empty string.
 */
export function extractText(params: unknown): string {
  if (!isObject(params)) return '';
  const message = params.message;
  if (!isObject(message) || !Array.isArray(message.parts)) return '';
  const parts = message.parts as unknown[];
  const texts: string[] = [];
  let length = 0;
  for (const part of parts.slice(0, MAX_PARTS)) {
    if (!isObject(part)) continue;
    const kind = part.kind !== undefined ? part.kind : part.type;
    if (kind !== 'text' || typeof part.text !== 'string') continue;
    const room = MAX_TEXT_CHARS - length;
    if (room <= 0) break;
    const t = part.text.length > room ? part.text.slice(0, room) : part.text;
    texts.push(t);
    length += t.length + 1;
  }
  return texts.join('\n').slice(0, MAX_TEXT_CHARS);
}

export type Subject =
  | { kind: 'evm'; address: string; others: number }
  | { kind: 'base58'; key: string }
  | { kind: 'status'; empty: boolean };

const EVM_IN_TEXT = /(?<![0-9A-Za-z])0x[0-9a-fA-F]{40}(?![0-9A-Za-z])/g;
const B58 = '1-9A-HJ-NP-Za-km-z';
const BASE58_IN_TEXT = new RegExp(`(?<![${B58}])[${B58}]{32,44}(?![${B58}])`, 'g');

/** Branch selection: a single pass over the bounded text. */
export function classify(text: string): Subject {
  const t = text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
  const evm = [...t.matchAll(EVM_IN_TEXT)].map((m) => m[0].toLowerCase());
  if (evm.length > 0) return { kind: 'evm', address: evm[0]!, others: new Set(evm).size - 1 };
  for (const m of t.matchAll(BASE58_IN_TEXT)) {
    // Digits-only text is not resolved here (an EVM agent counter is not a subject of this door).
    if (!/^\d+$/.test(m[0])) return { kind: 'base58', key: m[0] };
  }
  return { kind: 'status', empty: t.trim() === '' };
}

// ------------------------------------------------------------------ the JSON of the handlers

const WalletChainsBody = z.object({
  wallet: z.string(),
  chains: z.array(
    z.object({
      network: z.string(),
      agent_count: z.number(),
      agent_ids: z.array(z.string()),
      final_score: z.number().nullable(),
      total_reviews: z.number(),
      distinct_raters: z.number(),
    }),
  ),
  identity_count: z.number(),
  chains_with_reputation: z.number(),
  global_score: z.number().nullable(),
});
type WalletChainsBody = z.infer<typeof WalletChainsBody>;

const SearchBody = z.object({
  matches: z.array(
    z.object({
      interpreted_as: z.string(),
      network: z.string(),
      wallet: z.string().nullable(),
      agent_ids: z.array(z.string()),
      final_score: z.number().nullable(),
      total_reviews: z.number(),
      distinct_raters: z.number(),
      detail_route: z.string(),
    }),
  ),
});

const HealthBody = z.object({
  agents: z.number(),
  feedback_entries: z.number(),
  chains: z.array(z.object({ network: z.string(), enabled: z.boolean() })),
  policy_version: z.string(),
});

async function getAs<T>(deps: DoorDeps, path: string, schema: z.ZodType<T>): Promise<T> {
  const r = schema.safeParse(await deps.get(path));
  if (!r.success) throw new Error(`unexpected answer shape from ${path.split('/').slice(0, 2).join('/')}`);
  return r.data;
}

// ------------------------------------------------------------------ formatting

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The raw served score, always with six decimals. */
function sixDecimals(x: number): string {
  const s = x.toFixed(6);
  return s === '-0.000000' ? '0.000000' : s;
}

/** `GET /path ($0.01)`, the price from the pricing table; a free or unknown route gets `(free)`. */
export function priced(method: 'GET', pathWithQuery: string): string {
  const [path, query = ''] = pathWithQuery.split('?');
  const tier = matchTier(method, path!, new URLSearchParams(query));
  const price = tier && !tier.free ? `$${tier.price_usd}` : 'free';
  return `${method} ${pathWithQuery} (${price})`;
}

/** One line per chain, in the order the API serves them (the configuration order of /health). */
function chainLine(c: WalletChainsBody['chains'][number]): string {
  const score = c.final_score === null ? 'no ratings yet' : `score ${sixDecimals(c.final_score)}`;
  return (
    `${c.network}: ${plural(c.agent_count, 'identity', 'identities')}, ${score}, ` +
    `${plural(c.total_reviews, 'rating', 'ratings')} from ${plural(c.distinct_raters, 'distinct rater', 'distinct raters')}`
  );
}

const PAY_NOTE =
  'Paid routes are called over HTTP and paid per call in USDC with x402 (call without payment: the 402 is the price quote); nothing is paid over this door.';

function walletPreview(body: WalletChainsBody): string[] {
  const w = body.wallet;
  if (body.chains.length === 0) {
    return [
      `Wallet ${w} holds no ERC-8004 identity on any chain this index covers, so there is no score to show (an answer, not an error).`,
      `If it rates others, its output as a rater: ${priced('GET', `/reputation/rater/${w}`)}.`,
    ];
  }
  const lines = [
    `Wallet ${w}: ${plural(body.identity_count, 'identity', 'identities')} on ${plural(body.chains.length, 'chain', 'chains')} (free per-chain preview).`,
    ...body.chains.map(chainLine),
    body.global_score === null
      ? 'Global score: no ratings yet.'
      : `Global score: ${sixDecimals(body.global_score)} (mean of the per-chain scores, one chain one vote).`,
  ];
  if (body.chains_with_reputation === 0) {
    // Registered but never rated: say so rather than sell an empty decomposition.
    lines.push(
      `Nothing to decompose yet (no rating received): ${priced('GET', `/reputation/wallet/${w}`)} would add nothing today.`,
    );
    return lines;
  }
  const first = body.chains.find((c) => c.agent_ids.length > 0);
  lines.push(
    `Decomposition: ${priced('GET', `/reputation/wallet/${w}`)}; history: ${priced('GET', `/reputation/wallet/${w}/history`)}` +
      (first
        ? `; every rating of one identity with its transaction: ${priced('GET', `/reputation/agent/${first.network}/${first.agent_ids[0]}`)}.`
        : '.'),
  );
  return lines;
}

async function evmAnswer(deps: DoorDeps, address: string, others: number): Promise<string> {
  const body = await getAs(deps, `/wallets/${pathSegment(address)}/chains`, WalletChainsBody);
  const lines = walletPreview(body);
  if (others > 0) {
    lines.push(
      `Your message holds ${plural(others, 'other address', 'other addresses')}, not read: send one address per message.`,
    );
  }
  lines.push(PAY_NOTE);
  return lines.join('\n');
}

const RegistrationBody = z.object({
  registration: z
    .object({
      state: z.string(),
      name: z.string().nullable(),
      services: z.array(
        z.object({ domain_proof: z.string().nullable(), liveness: z.object({ state: z.string() }) }),
      ),
    })
    .nullable(),
});

/**
 * What the agent's registration file says (free `/agents/{network}/{agent_id}/registration`), in
 * one line: its state, its declared name (quoted, cut: text the agent wrote about itself, never a
 * verification) and its services, live and with a verified domain; null when it has no file or
 * the read fails (the rest of the answer stands).
 */
async function registrationLine(deps: DoorDeps, network: string, id: string): Promise<string | null> {
  let body: z.infer<typeof RegistrationBody>;
  try {
    body = RegistrationBody.parse(
      await deps.get(`/agents/${pathSegment(network)}/${pathSegment(id)}/registration`),
    );
  } catch {
    return null;
  }
  const r = body.registration;
  if (r === null) return 'It names no registration file (agentURI).';
  const name = r.name === null ? 'no name' : `name ${JSON.stringify(r.name.slice(0, 100))}`;
  const live = r.services.filter((s) => s.liveness.state === 'alive').length;
  const verified = r.services.filter((s) => s.domain_proof === 'verified').length;
  return (
    `Its registration file is ${r.state} (declared by the agent, never verified: ${name}); ` +
    `${plural(r.services.length, 'service', 'services')}, ${live} live, ${verified} with a verified domain.`
  );
}

async function base58Answer(deps: DoorDeps, key: string): Promise<string> {
  const search = await getAs(deps, `/search/${pathSegment(key)}`, SearchBody);
  const assets = search.matches.filter((m) => m.interpreted_as === 'solana_asset');
  const isWallet = search.matches.some((m) => m.interpreted_as === 'solana_wallet');
  const lines: string[] = [];
  for (const m of assets) {
    const id = m.agent_ids[0] ?? key;
    const score = m.final_score === null ? 'no ratings yet' : `score ${sixDecimals(m.final_score)}`;
    lines.push(
      `Agent ${id} on ${m.network}: owner ${m.wallet ?? 'unknown'}, ${score}, ` +
        `${plural(m.total_reviews, 'rating', 'ratings')} from ${plural(m.distinct_raters, 'distinct rater', 'distinct raters')}.`,
    );
    const route = /^GET (\/\S+)$/.exec(m.detail_route)?.[1] ?? `/reputation/agent/${m.network}/${id}`;
    lines.push(`Every rating it received, with its transaction: ${priced('GET', route)}.`);
    const reg = await registrationLine(deps, m.network, id);
    if (reg !== null) lines.push(reg);
    if (m.wallet !== null && !isWallet) {
      lines.push(
        `Its owner's per-chain preview: send ${m.wallet}, or ${priced('GET', `/wallets/${m.wallet}/chains`)}.`,
      );
    }
  }
  if (isWallet) {
    const body = await getAs(deps, `/wallets/${pathSegment(key)}/chains`, WalletChainsBody);
    lines.push(...walletPreview(body));
  }
  if (lines.length === 0) {
    lines.push(
      `${key} is a well-formed Solana key, but this index knows it neither as a wallet holding an agent nor as an agent asset (an answer, not an error).`,
      'Solana keys are case-sensitive: send the key verbatim.',
    );
  }
  lines.push(PAY_NOTE);
  return lines.join('\n');
}

/** Usage and the routes behind this door, by path and price. */
function usageLines(): string[] {
  const snapshotPrice = tierById('wallet-snapshot').price_usd;
  return [
    'Send an EVM address (0x + 40 hex) or a Solana base58 key (a wallet or an agent asset) and I answer with its free per-chain preview: identities, score, ratings and distinct raters per chain.',
    `Paid decomposition over HTTP: ${priced('GET', '/reputation/wallet/{wallet}')} (with ?snapshot=true: $${snapshotPrice}, a durable receipt), ` +
      `${priced('GET', '/reputation/wallet/{wallet}/history')}, ${priced('GET', '/reputation/agent/{network}/{agent_id}')}, ` +
      `${priced('GET', '/reputation/rater/{wallet}')}, ${priced('GET', '/leaderboard/page')}.`,
    'Free over HTTP: GET /wallets/{wallet}/chains, GET /search/{q}, GET /leaderboard, GET /chains, GET /health, GET /pricing.',
    PAY_NOTE,
  ];
}

async function statusAnswer(deps: DoorDeps, empty: boolean): Promise<string> {
  const h = await getAs(deps, '/health', HealthBody);
  const scanned = h.chains.filter((c) => c.enabled).map((c) => c.network);
  return [
    empty
      ? 'Your message holds no text to look up.'
      : 'Your message holds no EVM address and no Solana key to look up.',
    `Index status: ${plural(h.agents, 'agent', 'agents')} and ${plural(h.feedback_entries, 'rating', 'ratings')} indexed across ` +
      `${plural(h.chains.length, 'chain', 'chains')} (${scanned.length} scanned: ${scanned.join(', ') || 'none'}); scoring policy ${h.policy_version}.`,
    ...usageLines(),
  ].join('\n');
}

/** The answer text to a message text. Throws when a handler behind it fails (the door answers -32603). */
export async function answerText(text: string, deps: DoorDeps): Promise<string> {
  const subject = classify(text);
  if (subject.kind === 'evm') return evmAnswer(deps, subject.address, subject.others);
  if (subject.kind === 'base58') return base58Answer(deps, subject.key);
  return statusAnswer(deps, subject.empty);
}
