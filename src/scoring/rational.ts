/**
 * Exact rationals (bigint numerator and denominator) and the one rounding every served composite
 * goes through: `round6Exact`, to six decimals, half up, applied once to the exact value. A
 * composite that involves a square root (the Wilson bounds, a standard deviation) is rounded with
 * the same rule from its exact form a + b·√c (`round6AffineSqrt`): integer square roots decide
 * the digits, so no float ever sits between the inputs and the served number.
 *
 * The rule (docs/POLICIES.md, "Precision and display"): the exact value times 10^6, plus one half,
 * floored. A value exactly halfway between two six-decimal numbers goes to the larger one
 * (62.6537755 → 62.653776). Every value rounded this way is ≥ 0, where half up and half away from
 * zero agree: PostgreSQL's round(numeric, 6), and Python's Decimal.quantize(Decimal('0.000001'),
 * rounding=ROUND_HALF_UP) give the same digits.
 */
/** num / den, den > 0, in lowest terms. */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** num / den in lowest terms (den ≠ 0). */
export function rational(num: bigint, den: bigint = 1n): Rational {
  if (den === 0n) throw new RangeError('rational: zero denominator');
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

/** units / 10^scale (an exact decimal) as a rational. */
export function fromScaled(units: bigint, scale: number): Rational {
  return rational(units, 10n ** BigInt(scale));
}

export const add = (a: Rational, b: Rational): Rational =>
  rational(a.num * b.den + b.num * a.den, a.den * b.den);
export const sub = (a: Rational, b: Rational): Rational =>
  rational(a.num * b.den - b.num * a.den, a.den * b.den);
export const mul = (a: Rational, b: Rational): Rational => rational(a.num * b.num, a.den * b.den);
export const div = (a: Rational, b: Rational): Rational => rational(a.num * b.den, a.den * b.num);

/** floor(n / d) for d > 0 (bigint division truncates toward zero). */
function floorDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d !== 0n && n < 0n ? q - 1n : q;
}

/** floor(√n), n ≥ 0. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError('isqrt of a negative number');
  if (n < 2n) return n;
  // Newton from above: a start ≥ √n (2^⌈bits/2⌉), decreasing to the floor.
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

const MICRO = 1_000_000n;
const HALF: Rational = { num: 1n, den: 2n };

/**
 * A count of millionths as the number it is served as: the nearest double to m·10^-6, whose
 * shortest form is those six decimals again (never -0).
 */
function fromMicros(m: bigint): number {
  const x = Number(`${m}e-6`);
  return x === 0 ? 0 : x;
}

/** The exact value rounded once to six decimals, half up. */
export function round6Exact(r: Rational): number {
  return quotient6(r.num, r.den);
}

/** num / den (den > 0, not necessarily in lowest terms) rounded once to six decimals, half up. */
export function quotient6(num: bigint, den: bigint): number {
  return fromMicros(floorDiv(2n * num * MICRO + den, 2n * den));
}

/**
 * num / den rounded half up to an integer, floor((2·num + den) / (2·den)), in plain numbers when
 * every intermediate is a safe integer (the common case: millionths of scores and small counts);
 * null when not (the caller takes the bigint path).
 */
export function halfUpDiv(num: number, den: number): number | null {
  const a = 2 * num + den;
  const b = 2 * den;
  if (!(den > 0) || !Number.isSafeInteger(num) || !Number.isSafeInteger(den)) return null;
  if (Math.abs(a) + 2 * b > Number.MAX_SAFE_INTEGER) return null;
  let q = Math.floor(a / b);
  // the float quotient may be one off next to an integer: exact products set it right
  while (q * b > a) q -= 1;
  while ((q + 1) * b <= a) q += 1;
  return q;
}

/** A count of millionths (a safe integer) as the number it is served as (never -0). */
export function microsNumber(m: number): number {
  const x = m / 1e6;
  return x === 0 ? 0 : x;
}

/**
 * The millionths a number stands for when it is a six-decimal number already (its shortest form
 * has at most six decimals), else null.
 */
export function sixDecimalMicros(x: number): number | null {
  const m = Math.round(x * 1e6);
  return Number.isSafeInteger(m) && m / 1e6 === x ? m : null;
}

/** floor(a + b·√c), exactly (c ≥ 0). */
function floorAffineSqrt(a: Rational, b: Rational, c: Rational): bigint {
  if (c.num < 0n) throw new RangeError('square root of a negative number');
  if (b.num === 0n || c.num === 0n) return floorDiv(a.num, a.den);
  const sign = b.num < 0n ? -1n : 1n;
  // a + s·√e with e = b²·c = en/ed, and √e = √(en·ed)/ed:
  // x = (a.num·ed + s·a.den·√(en·ed)) / (a.den·ed) = (P + s·√T) / D, T = a.den²·en·ed.
  const e = mul(mul(b, b), c);
  const P = a.num * e.den;
  const D = a.den * e.den;
  const T = a.den * a.den * e.num * e.den;
  const r = isqrt(T);
  if (r * r === T) return floorDiv(P + sign * r, D);
  // √T is irrational, strictly between r and r + 1, and no multiple of D lies strictly between
  // two consecutive integers: the floor is that of the nearer integer bound.
  return sign > 0n ? floorDiv(P + r, D) : floorDiv(P - r - 1n, D);
}

/** a + b·√c (c ≥ 0) rounded once to six decimals, half up, from its exact value. */
export function round6AffineSqrt(a: Rational, b: Rational, c: Rational): number {
  const m = rational(MICRO);
  return fromMicros(floorAffineSqrt(add(mul(a, m), HALF), mul(b, m), c));
}
