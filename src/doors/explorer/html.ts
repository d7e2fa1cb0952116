/**
 * HTML building for the explorer: a tagged template that escapes every interpolated value unless it
 * is already {@link Html} (built by this template). Synchronous on purpose (hono/html's `html` may
 * return a Promise, which every page would then have to await piece by piece). Everything read
 * from a chain (tag1, URIs, addresses, ids) reaches the page only through `h`, so it is text.
 */
import { escapeHtml } from '../../html-escape.js';

export { escapeHtml };

/** Markup built by {@link h}: interpolated into another `h` template as is. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

function piece(v: unknown): string {
  if (v instanceof Html) return v.markup;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(piece).join('');
  return escapeHtml(String(v));
}

/** `h`...``: markup whose interpolations are escaped (arrays joined, null/undefined/false empty). */
export function h(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!;
  return new Html(out);
}
