/**
 * Serving and display conventions. The API serves scores at six decimals; people see two decimals
 * with trailing zeros trimmed (`displayScore`). Computation always uses numbers. A served
 * composite is computed exactly and rounded once (rational.ts `round6Exact`, the rule below);
 * `round6` applies the same rule to a number as it is written.
 */
import { numberRational } from './decimal.js';
import { halfUpDiv, microsNumber, quotient6, round6Exact, sixDecimalMicros } from './rational.js';

/**
 * Rounds the decimal a number is written as (its shortest round-trip form: 62.6537755 is read as
 * exactly that) to six decimals, half up, as every served number is; never returns -0. A served
 * six-decimal number comes back unchanged.
 */
export function round6(x: number): number;
export function round6(x: null): null;
export function round6(x: number | null): number | null;
export function round6(x: number | null): number | null {
  if (x === null) return null;
  if (!Number.isFinite(x)) throw new RangeError(`round6: not a finite number: ${x}`);
  if (sixDecimalMicros(x) !== null) return x === 0 ? 0 : x;
  return round6Exact(numberRational(x));
}

/** The millionths of a served number (first taken at its six decimals), exactly. */
export function servedMicros(x: number): number {
  const m = sixDecimalMicros(x) ?? sixDecimalMicros(round6(x));
  if (m === null) throw new RangeError(`not a servable number: ${x}`);
  return m;
}

/** a − b of two served numbers (each taken at its six decimals), exactly: itself six decimals. */
export function differenceOfServed(a: number, b: number): number {
  return microsNumber(servedMicros(a) - servedMicros(b));
}

/** a / b (integers, b > 0) rounded once to six decimals, half up: a share, a ratio. */
export function round6Ratio(a: number | bigint, b: number | bigint): number {
  const m = typeof a === 'number' && typeof b === 'number' ? halfUpDiv(a * 1e6, b) : null;
  return m !== null ? microsNumber(m) : quotient6(BigInt(a), BigInt(b));
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
