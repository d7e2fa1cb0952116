/** `wilson-raters@1`: an evidence band over distinct raters. Advisory; never moves a score. */
import { numberRational } from './decimal.js';
import { round6 } from './display.js';
import { add, div, mul, rational, round6AffineSqrt, sub } from './rational.js';
import {
  CONFIDENCE_POLICY,
  CONFIDENCE_THRESHOLDS,
  WILSON_Z,
  confidenceThresholds,
  type ConfidenceBand,
} from './policies.js';

interface ConfidenceInterval {
  /** Lower Wilson bound, rescaled to 0..100, six decimals. */
  lower: number;
  /** Upper Wilson bound, rescaled to 0..100, six decimals. */
  upper: number;
}

export interface Confidence {
  band: ConfidenceBand;
  /** The n the band was computed from: distinct eligible raters. */
  distinct_raters: number;
  /** Null for `no_ratings` (a `lower: 0` beside a null score would publish a zero that is not one). */
  interval: ConfidenceInterval | null;
  /** The cuts that produced the band (same object as `/health.confidence_thresholds`). */
  thresholds: Record<ConfidenceBand, number>;
  /** One Spanish sentence; prose, never branch on it. */
  advice: string;
  confidence_policy: string;
}

/** Band by n: no_ratings 0, low >= 1, medium >= 3, high >= 6. */
export function confidenceBand(distinctRaters: number): ConfidenceBand {
  if (distinctRaters >= CONFIDENCE_THRESHOLDS.high) return 'high';
  if (distinctRaters >= CONFIDENCE_THRESHOLDS.medium) return 'medium';
  if (distinctRaters >= CONFIDENCE_THRESHOLDS.low) return 'low';
  return 'no_ratings';
}

/**
 * Wilson score interval for proportion p over n trials, on 0..1, in floating point (unrounded; the
 * served interval is `wilsonBounds6`, exact):
 * centre = (p + z²/2n) / (1 + z²/n), half = z/(1 + z²/n) · sqrt(p(1−p)/n + z²/4n²).
 * n = 0 gives the whole domain [0, 1].
 */
export function wilsonInterval(p: number, n: number, z: number = WILSON_Z): { lower: number; upper: number } {
  if (n <= 0) return { lower: 0, upper: 1 };
  const q = Math.min(1, Math.max(0, p));
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (q + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((q * (1 - q)) / n + z2 / (4 * n * n));
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

/**
 * The served interval: the Wilson bounds of p = finalScore/100 (the served six-decimal score) over
 * n distinct raters, rescaled to 0..100, each computed from its exact form
 * 100·(centre ∓ (z/(1 + z²/n))·√(p(1−p)/n + z²/4n²)) with centre = (p + z²/2n)/(1 + z²/n),
 * z = 1.96, and rounded once to six decimals, half up (`round6AffineSqrt`: integer square roots,
 * no float between the inputs and the digits), then clipped to 0..100. n ≥ 1.
 */
export function wilsonBounds6(finalScore: number, n: number, z: number = WILSON_Z): ConfidenceInterval {
  const hundred = rational(100n);
  const one = rational(1n);
  const p0 = div(numberRational(round6(finalScore)), hundred);
  const p = p0.num < 0n ? rational(0n) : p0.num > p0.den ? one : p0;
  const bn = rational(BigInt(n));
  const zr = numberRational(z);
  const z2 = mul(zr, zr);
  const denom = add(one, div(z2, bn));
  const centre = div(add(p, div(z2, mul(rational(2n), bn))), denom);
  const coef = mul(hundred, div(zr, denom));
  const inner = add(div(mul(p, sub(one, p)), bn), div(z2, mul(rational(4n), mul(bn, bn))));
  const c100 = mul(hundred, centre);
  const lower = round6AffineSqrt(c100, mul(rational(-1n), coef), inner);
  const upper = round6AffineSqrt(c100, coef, inner);
  return { lower: Math.max(0, lower), upper: Math.min(100, upper) };
}

const ADVICE: Record<ConfidenceBand, string> = {
  no_ratings: 'Sin calificaciones elegibles: no hay evidencia, lo que no equivale a una mala reputación.',
  low: 'Poca evidencia: muy pocos calificadores distintos respaldan la puntuación; no decidas solo con ella.',
  medium: 'Evidencia moderada: varios calificadores distintos; contrasta la composición antes de decidir.',
  high: 'Evidencia amplia: muchos calificadores distintos respaldan la puntuación; revisa igualmente la concentración.',
};

/**
 * The evidence band of a score: n = distinct eligible raters, p = finalScore/100, Wilson 95 %
 * interval rescaled to 0..100 (six decimals). Interval null for `no_ratings` or a null score.
 */
export function confidence(distinctRaters: number, finalScore: number | null): Confidence {
  const band = confidenceBand(distinctRaters);
  let interval: ConfidenceInterval | null = null;
  if (band !== 'no_ratings' && finalScore !== null) interval = wilsonBounds6(finalScore, distinctRaters);
  return {
    band,
    distinct_raters: distinctRaters,
    interval,
    thresholds: confidenceThresholds(),
    advice: ADVICE[band],
    confidence_policy: CONFIDENCE_POLICY,
  };
}
