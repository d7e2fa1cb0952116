/**
 * Exact decimal arithmetic for rating values. Values arrive as decimal strings (NUMERIC from the
 * database, e.g. "87.5", "-3", "100.000000000000000001"); domain checks and sums are exact
 * (bigint). A served mean is the exact quotient rounded once to six decimals (`mean6`,
 * `meanOfSum6`, rational.ts); `meanOfSum` (the nearest double) is for what is not served as is.
 */
import { SCORE_DOMAIN } from './policies.js';
import { fromScaled, halfUpDiv, microsNumber, quotient6, type Rational } from './rational.js';

/** value = units / 10^scale, scale >= 0. */
export interface ExactDecimal {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,6}))?$/;
/** Refuse absurd exponents rather than build gigantic bigints. */
const MAX_SCALE = 10_000;

const POW10_CACHE: bigint[] = [];
function pow10(n: number): bigint {
  if (n < 64) {
    let p = POW10_CACHE[n];
    if (p === undefined) {
      p = 10n ** BigInt(n);
      POW10_CACHE[n] = p;
    }
    return p;
  }
  return 10n ** BigInt(n);
}

export const ZERO: ExactDecimal = Object.freeze({ units: 0n, scale: 0 });

/**
 * Parses a plain decimal string (optional sign, digits, optional fraction, optional exponent).
 * Returns null for anything else (including empty strings, whitespace, "NaN", "Infinity").
 */
export function parseDecimal(input: string): ExactDecimal | null {
  const cached = PARSE_CACHE.get(input);
  if (cached !== undefined) return cached;
  const d = parseUncached(input);
  if (input.length <= 40) {
    if (PARSE_CACHE.size >= PARSE_CACHE_MAX) PARSE_CACHE.clear();
    PARSE_CACHE.set(input, d);
  }
  return d;
}

/**
 * Rating values repeat a lot ("100", "87.5"): a memo of immutable results. It holds a whole
 * 5,000-rater subject's per-rater sums (each one distinct, parsed once per answer): with room for
 * 4,096 it was emptied within every such answer and parsed all of them again (regex + BigInt, a
 * fifth of the answer's JavaScript). 32,768 short keys are a few MB.
 */
const PARSE_CACHE = new Map<string, ExactDecimal | null>();
const PARSE_CACHE_MAX = 32_768;

function parseUncached(input: string): ExactDecimal | null {
  const m = DECIMAL_RE.exec(input);
  if (!m) return null;
  const sign = m[1] ?? '';
  const intPart = m[2] ?? '';
  const fracPart = m[3] ?? '';
  if (intPart.length + fracPart.length === 0) return null;
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  let scale = fracPart.length - exp;
  let units = BigInt((intPart + fracPart).replace(/^0+(?=\d)/, '') || '0');
  if (scale < 0) {
    if (-scale > MAX_SCALE) {
      if (units === 0n) return ZERO;
      return null;
    }
    units *= pow10(-scale);
    scale = 0;
  } else if (scale > MAX_SCALE) {
    return null;
  }
  if (sign === '-') units = -units;
  return Object.freeze({ units, scale });
}

/** Exact decimal from a string, number or bigint (numbers via their shortest round-trip string). */
export function toExactDecimal(value: string | number | bigint): ExactDecimal | null {
  if (typeof value === 'bigint') return { units: value, scale: 0 };
  if (typeof value === 'number') return Number.isFinite(value) ? parseDecimal(String(value)) : null;
  return parseDecimal(value);
}

/** a <=> b exactly: -1, 0 or 1. */
function compareDecimal(a: ExactDecimal, b: ExactDecimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.units * pow10(scale - a.scale);
  const y = b.units * pow10(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Exact plain-notation string of a decimal ("-12.5", "0.001", "100"). */
export function formatDecimal(d: ExactDecimal): string {
  const neg = d.units < 0n;
  const digits = (neg ? -d.units : d.units).toString();
  let out: string;
  if (d.scale === 0) out = digits;
  else {
    const padded = digits.padStart(d.scale + 1, '0');
    const int = padded.slice(0, padded.length - d.scale);
    const frac = padded.slice(padded.length - d.scale).replace(/0+$/, '');
    out = frac ? `${int}.${frac}` : int;
  }
  return neg && out !== '0' ? `-${out}` : out;
}

const DOMAIN_MIN = parseDecimal(String(SCORE_DOMAIN.min)) as ExactDecimal;
const DOMAIN_MAX = parseDecimal(String(SCORE_DOMAIN.max)) as ExactDecimal;

/** Exact domain check of an already parsed value: 0 <= v <= 100. */
export function decimalInDomain(d: ExactDecimal): boolean {
  return compareDecimal(d, DOMAIN_MIN) >= 0 && compareDecimal(d, DOMAIN_MAX) <= 0;
}

/**
 * True when the decimal string lies in the scoring domain 0 <= v <= 100, decided exactly
 * ("100.000000000000000001" is out, "-0" and "100.000" are in). Unparseable strings are out.
 */
export function inDomain(value: string): boolean {
  const d = parseDecimal(value);
  return d !== null && decimalInDomain(d);
}

/** Extra decimal digits kept when dividing a sum by a count, before the single float rounding. */
const MEAN_EXTRA_DIGITS = 24;

/**
 * sum / count as the nearest double (the exact quotient is truncated 24 digits past the sum's own
 * scale first, far below double precision). Null when count is 0.
 */
export function meanOfSum(sum: ExactDecimal, count: number | bigint): number | null {
  const fast = exactQuotientMean(sum, count);
  if (fast !== null) return fast;
  const n = BigInt(count);
  if (n <= 0n) return null;
  // Canonical scale first (no trailing zero digits), so equal sums written at different scales
  // ("160.50" from one path, "160.5" from another) give the same double, bit for bit.
  let units = sum.units;
  let scale = sum.scale;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  const q = (units * pow10(MEAN_EXTRA_DIGITS)) / n;
  // The nearest double of q·10^-(scale+24): JavaScript parses exponent notation with the same
  // correct rounding as the plain decimal string, without building that string digit by digit.
  return Number(`${q}e-${scale + MEAN_EXTRA_DIGITS}`);
}

const SAFE = 2 ** 53;
const MAX_SAFE_UNITS = BigInt(Number.MAX_SAFE_INTEGER);
/** 10^0 … 10^22, every one an exact double (written as literals, not computed). */
const POW10_DOUBLE = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
  1e20, 1e21, 1e22,
];

/** True when n divides 10^24 (n = 2^a·5^b, a, b <= 24): then sum / n has no digit to truncate. */
function dividesPow10_24(n: number): boolean {
  let m = n;
  let twos = 0;
  let fives = 0;
  while (m % 2 === 0) {
    m /= 2;
    twos++;
  }
  while (m % 5 === 0) {
    m /= 5;
    fives++;
  }
  return m === 1 && twos <= 24 && fives <= 24;
}

/**
 * `meanOfSum` without bigints when it is provably the same double: the count divides 10^24 (so the
 * quotient truncated 24 digits past the sum's scale IS the exact quotient, nothing is cut), and the
 * units and count·10^scale are exact doubles, so one IEEE division gives the nearest double to the
 * exact quotient, which is what parsing its digits gives. Null when any condition fails. Most
 * raters of a subject have 1, 2 or 4 ratings: their means take this path.
 */
function exactQuotientMean(sum: ExactDecimal, count: number | bigint): number | null {
  const n = typeof count === 'bigint' ? Number(count) : count;
  if (!Number.isSafeInteger(n) || n <= 0 || sum.scale > 22) return null;
  if (sum.units > MAX_SAFE_UNITS || sum.units < -MAX_SAFE_UNITS) return null;
  const units = Number(sum.units);
  const den = n * POW10_DOUBLE[sum.scale]!;
  if (den > SAFE || !dividesPow10_24(n)) return null;
  return units / den;
}

/** The exact value of a decimal as a rational. */
export function decimalRational(d: ExactDecimal): Rational {
  return fromScaled(d.units, d.scale);
}

/** The exact value a number is written as (its shortest round-trip form): 62.653776, 0.25 = 1/4. */
export function numberRational(x: number): Rational {
  const d = toExactDecimal(x);
  if (d === null) throw new RangeError(`not a finite number: ${x}`);
  return decimalRational(d);
}

/** sum / count, exactly, rounded once to six decimals (half up); null when count is 0. */
export function meanOfSum6(sum: ExactDecimal, count: number | bigint): number | null {
  const n = BigInt(count);
  if (n <= 0n) return null;
  // Millionths: sum·10^6 / count, in plain numbers when every figure is a safe integer.
  if (sum.scale <= 6 && sum.units <= MAX_SAFE_UNITS && sum.units >= -MAX_SAFE_UNITS) {
    const m = halfUpDiv(Number(sum.units) * POW10_DOUBLE[6 - sum.scale]!, Number(n));
    if (m !== null) return microsNumber(m);
  }
  return quotient6(sum.units, n * 10n ** BigInt(sum.scale));
}

/** Accumulates exact sums; cheap enough for a few hundred thousand values. */
export class DecimalSum {
  private units = 0n;
  private scale = 0;
  count = 0;

  add(d: ExactDecimal): void {
    if (d.scale === this.scale) this.units += d.units;
    else if (d.scale < this.scale) this.units += d.units * pow10(this.scale - d.scale);
    else {
      this.units = this.units * pow10(d.scale - this.scale) + d.units;
      this.scale = d.scale;
    }
    this.count += 1;
  }

  /** Adds a pre-aggregated exact sum of `count` values (what a maintained aggregate stores). */
  addSum(d: ExactDecimal, count: number): void {
    if (d.scale === this.scale) this.units += d.units;
    else if (d.scale < this.scale) this.units += d.units * pow10(this.scale - d.scale);
    else {
      this.units = this.units * pow10(d.scale - this.scale) + d.units;
      this.scale = d.scale;
    }
    this.count += count;
  }

  get sum(): ExactDecimal {
    return { units: this.units, scale: this.scale };
  }

  /** Mean as the nearest double, null when empty. */
  mean(): number | null {
    return meanOfSum(this.sum, this.count);
  }

  /** The served mean: the exact quotient rounded once to six decimals (half up); null when empty. */
  mean6(): number | null {
    return meanOfSum6(this.sum, this.count);
  }
}
