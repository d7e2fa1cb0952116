/**
 * The census benchmark's knobs (environment variables, read once). See bench/census.ts for what
 * each one changes.
 */
export const AGENTS = Number(process.env.BENCH_CENSUS_AGENTS ?? 100_000);
export const PER_AGENT = Number(process.env.BENCH_CENSUS_FEEDBACK_PER_AGENT ?? 5);
export const PLANTED = Number(process.env.BENCH_CENSUS_PLANTED ?? 100);
export const BATCH = process.env.BENCH_CENSUS_BATCH ? Number(process.env.BENCH_CENSUS_BATCH) : undefined;
/** Distinct client addresses (agent i's clients are CLIENTS consecutive ones from i·K). */
export const CLIENT_POOL = 10_007;
export const OWNER_POOL = 1_009;
export const NODE = process.env.BENCH_CENSUS_NODE === 'edr' ? 'edr' : 'anvil';
/** Slots per bulk-store transaction: under the block gas limit (EDR 60 M; anvil started with 200 M). */
export const SLOTS_PER_TX = NODE === 'edr' ? 2_400 : 8_000;

/** Agent i's owner, URI and clients, and each feedback's value and revocation: the same on the chain and in the index. */
export const ownerOf = (i: number): `0x${string}` =>
  `0x${(0x0a000000 + (i % OWNER_POOL)).toString(16).padStart(40, '0')}`;
export const clientOf = (i: number, j: number): `0x${string}` =>
  `0x${(0x0c000000 + ((i * PER_AGENT + j) % CLIENT_POOL)).toString(16).padStart(40, '0')}`;
export const uriOf = (i: number) => `https://a.example/${i}`; // short: one slot
export const valueOf = (i: number, j: number) => 40 + ((i * 7 + j * 13) % 61);
export const revokedOf = (i: number, j: number) => (i * PER_AGENT + j) % 10 === 3;
