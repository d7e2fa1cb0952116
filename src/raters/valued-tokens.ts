/**
 * The tokens whose verified payments count as money for the rater weighting: USD stablecoins whose
 * base units convert to micro-USD exactly (USDC, 6 decimals, on the chains where x402 settles and
 * on Ethereum), plus the ones an operator adds (`RATER_VALUED_TOKENS`). A verified transfer of any
 * other token is still a fact (served, counted) but is worth nothing here: anyone can mint a token.
 */

export interface ValuedToken {
  chainId: number;
  /** Lower-cased contract address. */
  token: string;
  decimals: number;
}

/** USDC by chain id (Circle's native USDC; 6 decimals everywhere listed). */
export const BUILT_IN_VALUED_TOKENS: readonly ValuedToken[] = Object.freeze(
  [
    [1, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
    [8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
    [43114, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E'],
    [42161, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'],
    [10, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85'],
    [137, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359'],
    [42220, '0xcebA9300f2b948710d2653dD7B07f33A8B32118C'],
  ].map(([chainId, token]) => ({
    chainId: chainId as number,
    token: (token as string).toLowerCase(),
    decimals: 6,
  })),
);

/** A lookup of valued tokens by chain id and address. */
export function valuedTokenTable(extra: readonly ValuedToken[] = []): Map<string, ValuedToken> {
  const out = new Map<string, ValuedToken>();
  for (const t of [...BUILT_IN_VALUED_TOKENS, ...extra]) out.set(`${t.chainId}:${t.token.toLowerCase()}`, t);
  return out;
}

/**
 * The micro-USD of `amount` base units of `token` on `chainId` (exact, rounded down), or null when
 * the token is not valued or the amount is not a base-unit integer.
 */
export function microUsdOf(
  table: ReadonlyMap<string, ValuedToken>,
  chainId: number | null,
  token: string | null,
  amount: string | null,
): bigint | null {
  if (chainId === null || token === null || amount === null || !/^\d{1,78}$/.test(amount)) return null;
  const t = table.get(`${chainId}:${token.toLowerCase()}`);
  if (!t) return null;
  const units = BigInt(amount);
  return t.decimals <= 6 ? units * 10n ** BigInt(6 - t.decimals) : units / 10n ** BigInt(t.decimals - 6);
}
