/**
 * The embeddable badge (`GET /badge/{wallet}.svg`) as a PURE function: the numbers in, the SVG
 * string out. No I/O, no clock, no randomness: the same input always gives the same bytes (the
 * route hashes them into the ETag).
 *
 * Layout (20 px high, like the common README badges): a fixed 98 px label box on the left and a
 * value box whose width follows its text. Text is DejaVu Sans 11 px; its width is measured with
 * the advance widths of that font (table below, taken from DejaVuSans.ttf's `hmtx`, 2048 units per
 * em, scaled to 11 px). Each `<text>` also carries `textLength` set to that measured width, so a
 * viewer that substitutes another font (Verdana, Geneva, a generic sans-serif) still fits the text
 * into its box.
 *
 * The badge carries the score, the distinct raters and the refresh date only: never
 * `policy_version`, concentration, the self-rating gap or a campaign signal.
 */

const BADGE_HEIGHT = 20;
/** Fixed width of the label box. */
const BADGE_LABEL_WIDTH = 98;
/** The label text, left box. */
export const BADGE_LABEL = 'reputation';

const BADGE_COLORS = Object.freeze({
  label: '#3a3a44',
  value: '#7c4dcc',
  /** No data, or a caveat (burn address). */
  muted: '#5a5a66',
  text: '#ffffff',
});

/** Value text when the wallet has no rating (registered-but-unrated and never-registered alike). */
const NO_RATINGS_TEXT = 'sin calificaciones';
/** Inserted after the score when the owner is a known burn address (caveat `burn-address`). */
const BURN_TEXT = 'burn address';
/** The date slot when the index has never been refreshed (there is no refresh date to show). */
const NEVER_REFRESHED_TEXT = 'sin indexar';
/** Separator between the parts of the value text (U+00B7 MIDDLE DOT between spaces). */
const SEPARATOR = ' \u00b7 ';

const BADGE_FONT_FAMILY = 'DejaVu Sans,Verdana,Geneva,sans-serif';
const BADGE_FONT_SIZE = 11;
/** Horizontal padding on each side of the value text. */
const VALUE_PADDING = 6;
/** Baseline of the text (a 20 px box, 11 px font). */
const TEXT_BASELINE = 14;

/**
 * Advance widths of DejaVu Sans (Book) at 11 px for printable ASCII (index = code point − 32),
 * rounded to 1/100 px.
 */
// prettier-ignore
const ASCII_WIDTHS: readonly number[] = [
  3.5, 4.41, 5.06, 9.22, 7, 10.45, 8.58, 3.02, 4.29, 4.29, 5.5, 9.22, 3.5, 3.97, 3.5, 3.71, // ' '..'/'
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 3.71, 3.71, 9.22, 9.22, 9.22, 5.84, // '0'..'?'
  11, 7.52, 7.55, 7.68, 8.47, 6.95, 6.33, 8.52, 8.27, 3.24, 3.24, 7.21, 6.13, 9.49, 8.23, 8.66, // '@'..'O'
  6.63, 8.66, 7.64, 6.98, 6.72, 8.05, 7.52, 10.88, 7.54, 6.72, 7.54, 4.29, 3.71, 4.29, 9.22, 5.5, // 'P'..'_'
  5.5, 6.74, 6.98, 6.05, 6.98, 6.77, 3.87, 6.98, 6.97, 3.06, 3.06, 6.37, 3.06, 10.72, 6.97, 6.73, // '`'..'o'
  6.98, 6.98, 4.52, 5.73, 4.31, 6.97, 6.51, 9, 6.51, 6.51, 5.77, 7, 3.71, 7, 9.22, // 'p'..'~'
];

/** A few non-ASCII characters of the same font (the separator and Spanish letters). */
const EXTRA_WIDTHS: ReadonlyMap<string, number> = new Map([
  ['\u00b7', 3.5], // ·
  ['\u00e1', 6.74], // á
  ['\u00e9', 6.77], // é
  ['\u00ed', 3.06], // í
  ['\u00f3', 6.73], // ó
  ['\u00fa', 6.97], // ú
  ['\u00f1', 6.97], // ñ
  ['\u2026', 11], // …
]);

/** Any other character is counted a full em wide, so unknown text may look loose but never overflows. */
const FALLBACK_WIDTH = 11;

/** Width in px of `text` at 11 px DejaVu Sans (sum of advance widths, no kerning). */
export function textWidth(text: string): number {
  let w = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    w +=
      cp >= 32 && cp < 127
        ? (ASCII_WIDTHS[cp - 32] ?? FALLBACK_WIDTH)
        : (EXTRA_WIDTHS.get(ch) ?? FALLBACK_WIDTH);
  }
  return Math.round(w * 100) / 100;
}

/** Escapes text for XML character data and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) =>
    ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '"' ? '&quot;' : '&apos;',
  );
}

export interface BadgeInput {
  /** The global score already in the display convention ("86.65", "87", "0"); null when there are no ratings. */
  scoreText: string | null;
  /** Distinct raters across the wallet. */
  raters: number;
  /** Last index refresh as YYYY-MM-DD (UTC); null when the index has never been refreshed. */
  date: string | null;
  /** The owner is a known burn address (caveat `burn-address`). */
  burn: boolean;
}

/** `1 rater`, `0 raters`, `12 raters`. */
function ratersText(n: number): string {
  return `${n} ${n === 1 ? 'rater' : 'raters'}`;
}

/**
 * The value text: `<score> · <n> raters · <date>`, with `burn address` after the score for a burn
 * address, or `sin calificaciones · <date>` when there is no score (null, never zero: a real 0
 * renders `0 · <n> raters`).
 */
function badgeValueText(input: BadgeInput): string {
  const date = input.date ?? NEVER_REFRESHED_TEXT;
  if (input.scoreText === null) return [NO_RATINGS_TEXT, date].join(SEPARATOR);
  const parts = [input.scoreText];
  if (input.burn) parts.push(BURN_TEXT);
  parts.push(ratersText(input.raters), date);
  return parts.join(SEPARATOR);
}

/** Colour of the value box: muted when there is no data or a caveat. */
function valueColor(input: BadgeInput): string {
  return input.scoreText === null || input.burn ? BADGE_COLORS.muted : BADGE_COLORS.value;
}

/** A coordinate without float noise: at most two decimals, trailing zeros trimmed. */
function num(x: number): string {
  return String(Math.round(x * 100) / 100);
}

/** The badge's total width for this input (label box + value box). */
export function badgeWidth(input: BadgeInput): number {
  return BADGE_LABEL_WIDTH + valueBoxWidth(badgeValueText(input));
}

function valueBoxWidth(valueText: string): number {
  return Math.ceil(textWidth(valueText)) + 2 * VALUE_PADDING;
}

/** Renders the badge. Every interpolated string is XML-escaped. */
export function renderBadge(input: BadgeInput): string {
  const value = badgeValueText(input);
  const sentence = escapeXml(`${BADGE_LABEL}: ${value}`);
  const labelW = BADGE_LABEL_WIDTH;
  const valueW = valueBoxWidth(value);
  const width = labelW + valueW;
  const h = BADGE_HEIGHT;
  const labelTextW = textWidth(BADGE_LABEL);
  const valueTextW = textWidth(value);
  const labelX = num(labelW / 2);
  const valueX = num(labelW + valueW / 2);
  const text = (x: string, y: number, w: number, s: string, extra = '') =>
    `<text x="${x}" y="${y}" textLength="${num(w)}" lengthAdjust="spacing"${extra}>${escapeXml(s)}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}" viewBox="0 0 ${width} ${h}" role="img" aria-label="${sentence}">` +
    `<title>${sentence}</title>` +
    `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
    `<clipPath id="r"><rect width="${width}" height="${h}" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)">` +
    `<rect width="${labelW}" height="${h}" fill="${BADGE_COLORS.label}"/>` +
    `<rect x="${labelW}" width="${valueW}" height="${h}" fill="${valueColor(input)}"/>` +
    `<rect width="${width}" height="${h}" fill="url(#s)"/>` +
    `</g>` +
    `<g fill="${BADGE_COLORS.text}" text-anchor="middle" font-family="${escapeXml(BADGE_FONT_FAMILY)}" font-size="${BADGE_FONT_SIZE}">` +
    // A faint shadow under each text, as on the common README badges (decorative: hidden from AT).
    `<g fill="#010101" fill-opacity=".3" aria-hidden="true">` +
    text(labelX, TEXT_BASELINE + 1, labelTextW, BADGE_LABEL) +
    text(valueX, TEXT_BASELINE + 1, valueTextW, value) +
    `</g>` +
    text(labelX, TEXT_BASELINE, labelTextW, BADGE_LABEL) +
    text(valueX, TEXT_BASELINE, valueTextW, value) +
    `</g>` +
    `</svg>`
  );
}
