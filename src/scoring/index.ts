/** Public API of the scoring module: pure, deterministic functions (no I/O, no clock). */
export * from './policies.js';
export * from './address.js';
export * from './decimal.js';
export { rational, round6Exact, round6AffineSqrt, type Rational } from './rational.js';
export * from './display.js';
export * from './classify.js';
export * from './score.js';
export * from './concentration.js';
export * from './confidence.js';
export * from './caveats.js';
export * from './facets.js';
export * from './history.js';
export * from './rater.js';
export * from './subject.js';
export * from './aggregates.js';
export * from './rater-weight.js';
export * from './rater-evidence.js';
