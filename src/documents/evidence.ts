/**
 * What a feedback document proves, computed from its bytes and the rating's log: pure functions,
 * no I/O, no clock (the fetcher in ./fetcher.ts does the I/O and stores what these return).
 *
 *  - integrityState: keccak256 of the bytes against the on-chain feedbackHash;
 *  - parseFeedbackDocument: the bytes as an ERC-8004 feedback file (a JSON object);
 *  - compareWithLog: the file's fields that disagree with the log;
 *  - paymentProofOf / judgeTransfer: the file's proofOfPayment and whether a transaction receipt
 *    shows the rater paying the agent.
 *
 * Everything in a document is hostile: only JSON is parsed, nothing is executed, and every text
 * returned is cut short.
 */
import { createHash } from 'node:crypto';
import { keccak256 } from 'viem';
import { sameAddress } from '../scoring/address.js';

/** Version of the parsing and comparison rules below; stored with each result. */
export const PARSER_VERSION = 'erc8004-feedback/1';

export const INTEGRITY_STATES = [
  'match',
  'mismatch',
  'no_commitment',
  'unreachable',
  'not_json',
  'changed',
] as const;
export type IntegrityState = (typeof INTEGRITY_STATES)[number];

export const PAYMENT_STATES = ['verified', 'not_found', 'mismatch', 'unsupported_chain'] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

const ZERO_HASH = `0x${'0'.repeat(64)}`;
const MAX_SHOWN = 200;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function keccakHex(bytes: Uint8Array): string {
  return keccak256(bytes).toLowerCase();
}

/** True when the log commits to no content (no hash, or the zero hash). */
export function isNoCommitment(feedbackHash: string | null | undefined): boolean {
  return !feedbackHash || feedbackHash.toLowerCase() === ZERO_HASH;
}

/**
 * The integrity of fetched bytes (`keccak`: their keccak256) against the log's `feedbackHash`:
 *  - `changed`: an earlier fetch of this rating's document returned other bytes (`firstKeccak`);
 *  - `mismatch`: the log commits to a hash the bytes do not have;
 *  - `not_json`: the bytes are not a JSON object (with no commitment, or a matching one);
 *  - `match` / `no_commitment`: the bytes are the committed ones / nothing was committed.
 * A document that could not be fetched at all is `unreachable` (decided by the fetcher).
 */
export function integrityState(i: {
  feedbackHash: string | null;
  keccak: string;
  firstKeccak: string | null;
  isJson: boolean;
}): IntegrityState {
  const keccak = i.keccak.toLowerCase();
  if (i.firstKeccak !== null && i.firstKeccak.toLowerCase() !== keccak) return 'changed';
  const committed = !isNoCommitment(i.feedbackHash);
  if (committed && i.feedbackHash!.toLowerCase() !== keccak) return 'mismatch';
  if (!i.isJson) return 'not_json';
  return committed ? 'match' : 'no_commitment';
}

export type FeedbackFile = Record<string, unknown>;

/** The bytes as a feedback file: strict UTF-8, JSON, an object at the top; else null. */
export function parseFeedbackDocument(bytes: Uint8Array): FeedbackFile | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  try {
    const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as FeedbackFile) : null;
  } catch {
    return null;
  }
}

/** The rating as logged, the side a document is compared with. */
export interface LoggedRating {
  agentId: string;
  rater: string;
  valueRaw: string;
  valueDecimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
}

/** A field of the document that disagrees with the log (`document` null: the field is missing). */
export interface FieldMismatch {
  field: string;
  document: string | null;
  log: string;
}

const shown = (v: unknown): string | null => {
  if (v === undefined || v === null) return null;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s;
};

/** An exact decimal (integer or fixed-point string / safe number) as num / 10^scale; else null. */
export function decimalOf(v: unknown): { num: bigint; scale: number } | null {
  let s: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    s = String(v);
  } else if (typeof v === 'string') s = v.trim();
  else return null;
  const m = /^(-?)(\d{1,60})(?:\.(\d{1,60}))?$/.exec(s);
  if (!m) return null;
  const frac = m[3] ?? '';
  return { num: BigInt(`${m[1]}${m[2]}${frac}`), scale: frac.length };
}

/** a/10^sa == b/10^sb, exactly. */
function sameDecimal(a: { num: bigint; scale: number }, b: { num: bigint; scale: number }): boolean {
  return a.num * 10n ** BigInt(b.scale) === b.num * 10n ** BigInt(a.scale);
}

/** The address part of a plain or CAIP-10 (`eip155:8453:0x…`) address. */
function addressPart(v: string): string {
  const i = v.lastIndexOf(':');
  return i >= 0 ? v.slice(i + 1) : v;
}

/** A scaled log value as text (raw / 10^decimals). */
function logValueText(raw: string, decimals: number): string {
  const neg = raw.startsWith('-');
  const digits = (neg ? raw.slice(1) : raw).padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/**
 * The fields of an ERC-8004 feedback file that disagree with the rating's log: `agentId`,
 * `clientAddress`, `value` (value / 10^valueDecimals against the logged value; an older file's
 * `score` against the logged value), `tag1`, `tag2`, `endpoint`. A required field that is missing
 * (agentId, clientAddress, value or score) is listed with `document: null`; an optional field
 * (tags, endpoint) is compared only when the file has it.
 */
export function compareWithLog(doc: FeedbackFile, log: LoggedRating): FieldMismatch[] {
  const out: FieldMismatch[] = [];
  const push = (field: string, document: unknown, logged: string) =>
    out.push({ field, document: shown(document), log: shown(logged) ?? '' });

  const agentId = doc.agentId;
  if (agentId === undefined || agentId === null) push('agentId', null, log.agentId);
  else {
    const a = decimalOf(agentId);
    const l = decimalOf(log.agentId);
    const same = a && l ? a.scale === 0 && a.num === l.num : String(agentId) === log.agentId;
    if (!same) push('agentId', agentId, log.agentId);
  }

  const client = doc.clientAddress;
  if (typeof client !== 'string') push('clientAddress', client ?? null, log.rater);
  else if (!sameAddress(addressPart(client.trim()), log.rater)) push('clientAddress', client, log.rater);

  const logged = { num: BigInt(log.valueRaw), scale: log.valueDecimals };
  const loggedText = logValueText(log.valueRaw, log.valueDecimals);
  if (doc.value !== undefined) {
    const v = decimalOf(doc.value);
    const decRaw = doc.valueDecimals ?? 0;
    const dec =
      typeof decRaw === 'number' && Number.isInteger(decRaw) && decRaw >= 0 && decRaw <= 77 ? decRaw : null;
    const docValue = v && dec !== null ? { num: v.num, scale: v.scale + dec } : null;
    if (!docValue || !sameDecimal(docValue, logged))
      push(
        'value',
        dec === 0 ? doc.value : { value: doc.value, valueDecimals: doc.valueDecimals },
        loggedText,
      );
  } else if (doc.score !== undefined) {
    const v = decimalOf(doc.score);
    if (!v || !sameDecimal(v, logged)) push('score', doc.score, loggedText);
  } else push('value', null, loggedText);

  for (const f of ['tag1', 'tag2', 'endpoint'] as const) {
    if (!(f in doc) || doc[f] === null) continue;
    if (doc[f] !== log[f]) push(f, doc[f], log[f]);
  }
  return out;
}

/** A document's proofOfPayment, normalised (addresses and hash lower-cased, chain id a number). */
export interface PaymentProof {
  fromAddress: string;
  toAddress: string;
  chainId: number;
  txHash: string;
}

/**
 * The file's `proofOfPayment` (or the older `proof_of_payment`): null when absent, `'malformed'`
 * when present but not four well-formed fields. `chainId` may be a number, a decimal string or a
 * CAIP-2 `eip155:<id>`.
 */
export function paymentProofOf(doc: FeedbackFile): PaymentProof | 'malformed' | null {
  const p = doc.proofOfPayment ?? doc.proof_of_payment;
  if (p === undefined || p === null) return null;
  if (typeof p !== 'object' || Array.isArray(p)) return 'malformed';
  const r = p as Record<string, unknown>;
  const addr = (v: unknown) =>
    typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(addressPart(v.trim()))
      ? addressPart(v.trim()).toLowerCase()
      : null;
  const from = addr(r.fromAddress);
  const to = addr(r.toAddress);
  const tx =
    typeof r.txHash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(r.txHash.trim())
      ? r.txHash.trim().toLowerCase()
      : null;
  let chainId: number | null = null;
  const c = r.chainId;
  if (typeof c === 'number' && Number.isSafeInteger(c) && c > 0) chainId = c;
  else if (typeof c === 'string') {
    const m = /^(?:eip155:)?(\d{1,15})$/.exec(c.trim());
    if (m) chainId = Number(m[1]);
  }
  if (!from || !to || !tx || !chainId) return 'malformed';
  return { fromAddress: from, toAddress: to, chainId, txHash: tx };
}

/** ERC-20 Transfer(address indexed from, address indexed to, uint256 value). */
export const ERC20_TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The parts of a transaction receipt the check reads. */
export interface ReceiptLike {
  status: 'success' | 'reverted';
  logs: readonly { address: string; topics: readonly string[]; data: string }[];
}

export interface PaymentVerdict {
  state: PaymentState;
  /** Why, in one code: `from_not_rater`, `to_not_agent`, `tx_failed`, `no_matching_transfer`, … */
  reason: string | null;
  /** The matching transfer (verified only): token contract and amount in base units. */
  token?: string;
  amount?: string;
}

const topicAddress = (t: string | undefined) =>
  t && /^0x0{24}[0-9a-fA-F]{40}$/.test(t) ? `0x${t.slice(26).toLowerCase()}` : null;

/**
 * Whether `receipt` (null: the chain has no such transaction) proves the payment the document
 * claims: the proof names the rater as payer and the agent (owner or agentWallet, `payees`) as
 * payee, the transaction succeeded, and one of its logs is an ERC-20 Transfer of a non-zero amount
 * from the rater to one of the payees.
 */
export function judgeTransfer(
  proof: PaymentProof,
  rater: string,
  payees: readonly string[],
  receipt: ReceiptLike | null,
): PaymentVerdict {
  const payeeSet = new Set(payees.map((p) => p.toLowerCase()));
  const raterLc = rater.toLowerCase();
  if (proof.fromAddress !== raterLc) return { state: 'mismatch', reason: 'from_not_rater' };
  if (!payeeSet.has(proof.toAddress)) return { state: 'mismatch', reason: 'to_not_agent' };
  if (receipt === null) return { state: 'not_found', reason: 'no_such_transaction' };
  if (receipt.status !== 'success') return { state: 'mismatch', reason: 'tx_failed' };
  for (const l of receipt.logs) {
    if (l.topics.length !== 3 || l.topics[0]?.toLowerCase() !== ERC20_TRANSFER_TOPIC) continue;
    const from = topicAddress(l.topics[1]);
    const to = topicAddress(l.topics[2]);
    if (from !== raterLc || !to || !payeeSet.has(to)) continue;
    if (!/^0x[0-9a-fA-F]{1,64}$/.test(l.data)) continue;
    const amount = BigInt(l.data);
    if (amount === 0n) continue;
    return { state: 'verified', reason: null, token: l.address.toLowerCase(), amount: amount.toString() };
  }
  return { state: 'mismatch', reason: 'no_matching_transfer' };
}

/** The payees of an agent: its owner and its agentWallet (metadata bytes of 20, as hex). */
export function payeesOf(owner: string | null, agentWalletHex: string | null): string[] {
  const out: string[] = [];
  if (owner && /^0x[0-9a-fA-F]{40}$/.test(owner)) out.push(owner.toLowerCase());
  if (agentWalletHex && /^0x[0-9a-fA-F]{40}$/.test(agentWalletHex)) out.push(agentWalletHex.toLowerCase());
  return out;
}
