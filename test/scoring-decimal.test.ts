/**
 * The per-rater arithmetic of a paid answer, made cheaper for subjects with thousands of raters,
 * must give the same bits as the definitions: a mean is the nearest double to the exact quotient
 * truncated 24 digits past the sum's canonical scale, read from its plain decimal text; an address
 * is compared EVM-case-insensitively and verbatim otherwise.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeAddress, sameAddress } from '../src/scoring/address.js';
import { formatDecimal, meanOfSum, parseDecimal } from '../src/scoring/decimal.js';

/** The definition, written out: canonical scale, truncated quotient, plain text, Number(). */
function referenceMean(units: bigint, scale: number, count: number): number | null {
  if (count <= 0) return null;
  let u = units;
  let s = scale;
  while (s > 0 && u % 10n === 0n) {
    u /= 10n;
    s -= 1;
  }
  const q = (u * 10n ** 24n) / BigInt(count);
  return Number(formatDecimal({ units: q, scale: s + 24 }));
}

describe('meanOfSum', () => {
  it('is bit for bit the nearest double of the truncated exact quotient', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 5_000_000 }),
        (units, scale, count) => {
          expect(Object.is(meanOfSum({ units, scale }, count), referenceMean(units, scale, count))).toBe(
            true,
          );
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is the same bits on the no-bigint path: counts that divide 10^24, exact-double operands', () => {
    const divisors = [
      1,
      2,
      4,
      5,
      8,
      10,
      16,
      20,
      25,
      32,
      40,
      50,
      64,
      100,
      125,
      1000,
      1024,
      3125,
      2 ** 20,
      5 ** 10,
    ];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
          fc.bigInt({ min: -100_000n, max: 100_000n }),
        ),
        fc.integer({ min: 0, max: 22 }),
        fc.oneof(fc.constantFrom(...divisors), fc.integer({ min: 1, max: 64 })),
        (units, scale, count) => {
          expect(Object.is(meanOfSum({ units, scale }, count), referenceMean(units, scale, count))).toBe(
            true,
          );
          expect(
            Object.is(meanOfSum({ units, scale }, BigInt(count)), referenceMean(units, scale, count)),
          ).toBe(true);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('gives one double for one sum written at different scales, and null for no values', () => {
    expect(meanOfSum(parseDecimal('160.50')!, 3)).toBe(meanOfSum(parseDecimal('160.5')!, 3));
    expect(meanOfSum(parseDecimal('300')!, 3)).toBe(100);
    expect(meanOfSum(parseDecimal('0.00')!, 7)).toBe(0);
    expect(meanOfSum(parseDecimal('5')!, 0)).toBeNull();
  });
});

describe('normalizeAddress', () => {
  it('lower-cases EVM addresses and leaves every other string as it is', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50 }), (s) => {
        const evm = /^0x[0-9a-fA-F]{40}$/.test(s);
        expect(normalizeAddress(s)).toBe(evm ? s.toLowerCase() : s);
      }),
    );
    const mixed = '0xAbCdEf0123456789abcdef0123456789ABCDEF01';
    expect(normalizeAddress(mixed)).toBe(mixed.toLowerCase());
    const solana = 'So11111111111111111111111111111111111111112';
    expect(normalizeAddress(solana)).toBe(solana);
    expect(sameAddress(mixed, mixed.toLowerCase())).toBe(true);
    expect(sameAddress(solana, solana.toLowerCase())).toBe(false);
    // upper-case hex that is not an address stays as written
    expect(normalizeAddress('0xABC')).toBe('0xABC');
  });
});
