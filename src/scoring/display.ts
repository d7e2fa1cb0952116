/**
 * Serving and display conventions. The API serves scores at six decimals (`round6`); people see
 * two decimals with trailing zeros trimmed (`displayScore`). Computation always uses numbers.
 */

/** Rounds to six decimals (half away from zero on the double's exact value); never returns -0. */
export function round6(x: number): number;
export function round6(x: null): null;
export function round6(x: number | null): number | null;
export function round6(x: number | null): number | null {
  if (x === null) return null;
  if (!Number.isFinite(x)) throw new RangeError(`round6: not a finite number: ${x}`);
  const r = Number(x.toFixed(6));
  return r === 0 ? 0 : r;
}

/**
 * Display convention: two decimals, trailing zeros trimmed (86.653045 → "86.65", 84.7 → "84.7",
 * 87 → "87", 82.0 → "82", 0 → "0"); null stays null (no score is not "0"). The number is first
 * taken at its served six decimals, then rounded half-up to two, so 84.745 shows as "84.75".
 */
export function displayScore(x: number | null): string | null {
  if (x === null) return null;
  const six = round6(x).toFixed(6);
  const neg = six.startsWith('-');
  const units = BigInt((neg ? six.slice(1) : six).replace('.', ''));
  const hundredths = (units + 5_000n) / 10_000n;
  if (hundredths === 0n) return '0';
  const int = hundredths / 100n;
  const frac = (hundredths % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}
