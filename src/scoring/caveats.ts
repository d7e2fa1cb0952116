/**
 * The frozen set of eight caveat codes. Each fires independently (`reading_policy.combine =
 * independent`) from the fields of the same response; advisory, they never move or fill a score.
 * Clients branch on `code`; `text` is Spanish prose and may be reworded.
 */
import { isBurnAddress } from './address.js';
import { displayScore } from './display.js';
import { READING_POLICY, type ReadingPolicy } from './policies.js';

/** The eight codes, in the fixed order in which they are listed in `caveats[]`. */
export const CAVEAT_CODES = [
  'no-score',
  'concentration-degraded',
  'single-rater',
  'few-raters',
  'top-client-share',
  'campaign-per-rater',
  'self-rated',
  'burn-address',
] as const;
type CaveatCode = (typeof CAVEAT_CODES)[number];

export interface Caveat {
  code: CaveatCode;
  text: string;
}

/** Codes computable from public aggregates, served on the free per-chain preview. */
const PREVIEW_CAVEAT_CODES: readonly CaveatCode[] = Object.freeze(['burn-address'] as const);

/** What the caveats read: fields of the same scored response. */
export interface CaveatInput {
  /** The subject wallet. */
  wallet: string;
  final_score: number | null;
  /** Eligible ratings. */
  total_reviews: number;
  /** Distinct eligible raters. */
  distinct_raters: number;
  /** Null when the concentration signal is degraded. */
  concentration: { top_client_share: number | null; top_client_ratings?: number | null } | null;
  self_rated: { count: number };
}

function pct(share: number): string {
  return `${displayScore(share * 100)} %`;
}

/**
 * `top-client-share` reads the exact ratio top_client_ratings / total_reviews when the raw
 * numerator is available (the served share is rounded to six decimals), else the served share.
 */
function topShareFires(input: CaveatInput, policy: ReadingPolicy): boolean {
  const c = input.concentration;
  if (c === null) return false;
  if (c.top_client_ratings !== undefined && c.top_client_ratings !== null && input.total_reviews > 0) {
    return c.top_client_ratings >= policy.top_share * input.total_reviews;
  }
  return c.top_client_share !== null && c.top_client_share >= policy.top_share;
}

/** Every caveat that fires, in the order of `CAVEAT_CODES`. */
export function caveats(input: CaveatInput, policy: ReadingPolicy = READING_POLICY): Caveat[] {
  const out: Caveat[] = [];
  const n = input.distinct_raters;
  if (input.final_score === null) {
    out.push({
      code: 'no-score',
      text: 'No hay puntuación: ninguna calificación elegible. Sin datos no es lo mismo que cero.',
    });
  }
  if (input.concentration === null) {
    out.push({
      code: 'concentration-degraded',
      text: 'La señal de concentración no está disponible en esta respuesta; no decidas con ella.',
    });
  }
  if (n === 1) {
    out.push({
      code: 'single-rater',
      text: 'Un único calificador distinto respalda esta puntuación.',
    });
  }
  if (n < policy.min_raters) {
    out.push({
      code: 'few-raters',
      text: `Solo ${n} calificador${n === 1 ? '' : 'es'} distinto${n === 1 ? '' : 's'} (mínimo de lectura: ${policy.min_raters}): no hay evidencia suficiente, lo que no equivale a cero.`,
    });
  }
  if (topShareFires(input, policy)) {
    const share = input.concentration?.top_client_share ?? null;
    out.push({
      code: 'top-client-share',
      text: `Un solo calificador escribió ${share === null ? 'la mayor parte' : `el ${pct(share)}`} de las calificaciones elegibles (umbral: ${pct(policy.top_share)}): es una sola voz.`,
    });
  }
  if (n > 0 && input.total_reviews >= policy.campaign_per_rater * n) {
    out.push({
      code: 'campaign-per-rater',
      text: `${displayScore(input.total_reviews / n)} calificaciones por calificador distinto (umbral: ${policy.campaign_per_rater}): patrón de campaña, no de consenso.`,
    });
  }
  if (input.self_rated.count > 0) {
    out.push({
      code: 'self-rated',
      text: `El sujeto se calificó a sí mismo ${input.self_rated.count} ${input.self_rated.count === 1 ? 'vez' : 'veces'}; esas calificaciones quedan fuera de la puntuación y se publican en self_rated.`,
    });
  }
  if (isBurnAddress(input.wallet)) out.push(burnAddressCaveat());
  return out;
}

function burnAddressCaveat(): Caveat {
  return {
    code: 'burn-address',
    text: 'Es una dirección de quema conocida: nadie la controla ni responde por ella. Las calificaciones son reales y se siguen publicando.',
  };
}

/** The free per-chain preview's subset (today only `burn-address`), from the wallet alone. */
export function previewCaveats(wallet: string): Caveat[] {
  return isBurnAddress(wallet) ? [burnAddressCaveat()] : [];
}

/** Codes the paid decomposition evaluates and the free preview does not, sorted. */
export function caveatsNotComputedInPreview(): CaveatCode[] {
  return CAVEAT_CODES.filter((c) => !PREVIEW_CAVEAT_CODES.includes(c)).sort();
}
