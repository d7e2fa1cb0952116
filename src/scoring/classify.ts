/** The partition of a subject's ratings: ratings = eligible + revoked + out_of_domain + self. */
import { sameAddress } from './address.js';
import { decimalInDomain, parseDecimal, type ExactDecimal } from './decimal.js';

type RatingClass = 'revoked' | 'out_of_domain' | 'self' | 'eligible';

/** The fields classification needs. */
interface ClassifiableRating {
  rater: string;
  /** Exact decimal string (value / 10^valueDecimals). */
  value: string;
  revoked: boolean;
}

/**
 * Fixed precedence: revoked → 'revoked'; value outside 0..100 (exactly) → 'out_of_domain';
 * rater equals the subject wallet (EVM case-insensitive, Solana exact) → 'self'; else 'eligible'.
 * So `self_rated` only ever holds live, in-domain self-ratings.
 */
export function classifyRating(r: ClassifiableRating, subjectWallet: string): RatingClass {
  return classifyParsed(r, parseDecimal(r.value), subjectWallet);
}

/** Same as `classifyRating` when the value is already parsed (null = unparseable). */
export function classifyParsed(
  r: { rater: string; revoked: boolean },
  value: ExactDecimal | null,
  subjectWallet: string,
): RatingClass {
  if (r.revoked) return 'revoked';
  if (value === null || !decimalInDomain(value)) return 'out_of_domain';
  if (sameAddress(r.rater, subjectWallet)) return 'self';
  return 'eligible';
}

export interface ClassCounts {
  ratings: number;
  eligible: number;
  revoked: number;
  out_of_domain: number;
  self: number;
}

export function countClasses(ratings: readonly ClassifiableRating[], subjectWallet: string): ClassCounts {
  const c: ClassCounts = { ratings: 0, eligible: 0, revoked: 0, out_of_domain: 0, self: 0 };
  for (const r of ratings) {
    c.ratings += 1;
    c[classifyRating(r, subjectWallet)] += 1;
  }
  return c;
}
