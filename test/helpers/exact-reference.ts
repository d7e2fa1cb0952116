/**
 * An independent checker's arithmetic, for the tests of the served numbers: integers only
 * (bigint), written from the rule in docs/POLICIES.md ("Precision and display") and not from the
 * code under test. A served number is a whole count of millionths; an exact value num/den is
 * rounded once to six decimals, half up.
 */

/** A served six-decimal number as its exact count of millionths (throws for anything else). */
export function micros(x: number): bigint {
  const six = x.toFixed(6);
  if (Number(six) !== x) throw new RangeError(`${x} is not a six-decimal number`);
  const neg = six.startsWith('-');
  const m = BigInt((neg ? six.slice(1) : six).replace('.', ''));
  return neg ? -m : m;
}

/** num/den (den > 0, value ≥ 0) rounded once to six decimals, half up, as the number served. */
export function halfUp6(num: bigint, den: bigint): number {
  if (den <= 0n || num < 0n)
    throw new RangeError('halfUp6 takes a non-negative value over a positive denominator');
  const m = (2n * num * 1_000_000n + den) / (2n * den);
  const int = m / 1_000_000n;
  const frac = (m % 1_000_000n).toString().padStart(6, '0');
  return Number(`${int}.${frac}`);
}

/** The exact value of a decimal string as num/den (den a power of ten). */
export function decimalFraction(s: string): { num: bigint; den: bigint } {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) throw new RangeError(`not a plain decimal: ${s}`);
  const frac = m[3] ?? '';
  const num = BigInt(`${m[2]}${frac}`);
  return { num: m[1] ? -num : num, den: 10n ** BigInt(frac.length) };
}

/**
 * √(num/den) (≥ 0) rounded once to six decimals, half up, found by bisection on the served count
 * of millionths m: the largest m with (m − ½)·10⁻⁶ ≤ √(num/den), i.e. (2m − 1)²·den ≤ 4·10¹²·num.
 */
export function sqrtHalfUp6(num: bigint, den: bigint): number {
  const ok = (m: bigint) => m <= 0n || (2n * m - 1n) ** 2n * den <= 4n * 10n ** 12n * num;
  let lo = 0n;
  let hi = 1n;
  while (ok(hi)) hi *= 2n;
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return halfUp6(lo, 1_000_000n);
}
