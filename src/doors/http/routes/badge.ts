/**
 * The badge door: `GET /badge/{wallet}.svg`, the only badge route (no per-agent badge, no PNG or
 * JSON variant, no extension-less form: those are 404). The numbers are the free per-chain
 * preview's (src/read/wallets.ts, the hourly aggregate): the global score (mean of the per-chain
 * scores) in the display convention, the wallet's distinct raters and the date of the last
 * aggregate refresh. The image itself is drawn by the pure renderer in src/badge/svg.ts.
 *
 * Routing: Hono cannot express a parameter followed by a literal suffix in one segment (the
 * zod-openapi path `/badge/{wallet}.svg` becomes `/badge/:wallet.svg`, a parameter NAMED
 * `wallet.svg` that matches any segment). So the handler is registered on `/badge/*` and parses
 * `<wallet>.svg` itself (anything else under /badge is the JSON 404), and the OpenAPI path is
 * registered separately so it still appears in /openapi.json.
 *
 * Query strings are ignored (any query gives the identical image and ETag). An EVM address in
 * any case, with or without `0x`, gives the byte-identical image; Solana keys are taken verbatim.
 */
import { createHash } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { readerOf } from '../../../db/database.js';
import type { App, AppContext } from '../context.js';
import { notAnAddress, notFound } from '../errors.js';
import { NotAnAddressSchema } from '../schemas/common.js';
import { renderBadge, type BadgeInput } from '../../../badge/svg.js';
import { walletFrom } from '../../../request-params.js';
import { readWalletAggregate } from '../../../read/wallets.js';
import { displayScore, previewCaveats } from '../../../scoring/index.js';
import { scoredChains } from '../wallet-preview.js';

/** The contract's edge cache for the badge. */
const BADGE_CACHE_CONTROL = 'public, max-age=3600, stale-if-error=604800';
const BADGE_CONTENT_TYPE = 'image/svg+xml';
/** `/badge/<segment>.svg`, read from the path the app routes on (the /v1 prefix already stripped). */
const BADGE_PATH_RE = /^(?:\/v1)?\/badge\/([^/]*)\.svg$/;

/** The numbers of one wallet's badge, from the same aggregate read as `/wallets/{wallet}/chains`. */
async function badgeInput(ctx: AppContext, wallet: string): Promise<BadgeInput> {
  const agg = await readWalletAggregate(readerOf(ctx.db), wallet);
  const score = scoredChains(agg.chains).global;
  return {
    scoreText: displayScore(score),
    raters: agg.totals?.distinct_raters ?? 0,
    date: refreshDate(agg.refreshed_at),
    burn: previewCaveats(wallet).some((c) => c.code === 'burn-address'),
  };
}

/** YYYY-MM-DD (UTC) of the last aggregate refresh; null when never refreshed (or unreadable). */
function refreshDate(refreshedAt: string | null): string | null {
  if (refreshedAt === null) return null;
  const t = Date.parse(refreshedAt);
  return Number.isNaN(t) ? null : new Date(t).toISOString().slice(0, 10);
}

/** A strong ETag: the quoted SHA-256 (base64url) of the SVG bytes. */
function badgeEtag(svg: string): string {
  return `"${createHash('sha256').update(svg, 'utf8').digest('base64url')}"`;
}

/**
 * True when `If-None-Match` names this ETag: `*`, or a comma-separated list of entity tags, each
 * compared weakly (a `W/` prefix is ignored, as RFC 9110 prescribes for If-None-Match).
 */
function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header
    .split(',')
    .map((t) => t.trim())
    .some((t) => t === '*' || t.replace(/^W\//, '') === opaque);
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

const badgeDoc = {
  method: 'get' as const,
  path: '/badge/{wallet}.svg',
  operationId: 'getBadge',
  tags: ['free'],
  summary: "A wallet's reputation as an embeddable SVG badge (free)",
  description:
    'An image 20 px high: a fixed 98 px label box and a value box whose width follows its text, ' +
    '`<score> · <n> raters · <date>` (`1 rater` singular). The score is the global score of ' +
    '`GET /wallets/{wallet}/chains` (mean of the per-chain scores) in the display convention (two decimals, ' +
    'trailing zeros trimmed); `n` its distinct raters; the date the last index refresh (YYYY-MM-DD, UTC; ' +
    '`sin indexar` before the first refresh). A known burn address reads `<score> · burn address · <n> raters · <date>` ' +
    'on a grey box. No ratings (registered-but-unrated and never-registered alike) reads `sin calificaciones · <date>`; ' +
    'a real zero reads `0 · <n> raters`. No query parameter is read: any query string gives the identical image. ' +
    'EVM input in any case, with or without `0x`, gives the byte-identical image. Send `If-None-Match` with the ' +
    '`ETag` to get `304`. This is the only badge route: no per-agent badge, no PNG or JSON variant.',
  request: {
    params: z.object({
      wallet: z.string().openapi({
        param: { name: 'wallet', in: 'path' },
        description:
          'EVM address (`0x` + 40 hex, any case; 40 hex without `0x` too) or a Solana base58 key (32-44 chars, verbatim). Followed by the literal `.svg`.',
        examples: ['0x000000000000000000000000000000000000dEaD'],
      }),
    }),
  },
  responses: {
    200: {
      description: 'The badge',
      headers: {
        'Cache-Control': { description: BADGE_CACHE_CONTROL, schema: { type: 'string' as const } },
        ETag: {
          description: 'Strong ETag: the quoted SHA-256 (base64url) of the SVG bytes.',
          schema: { type: 'string' as const },
        },
        'Access-Control-Allow-Origin': { description: '`*`', schema: { type: 'string' as const } },
      },
      content: { [BADGE_CONTENT_TYPE]: { schema: z.string().openapi({ description: 'SVG document' }) } },
    },
    304: {
      description: '`If-None-Match` named the current ETag: no body.',
      headers: {
        'Cache-Control': { description: BADGE_CACHE_CONTROL, schema: { type: 'string' as const } },
        ETag: { description: 'The same ETag.', schema: { type: 'string' as const } },
      },
    },
    422: {
      description:
        '`not_an_address`: the segment before `.svg` is neither an EVM address nor a Solana base58 key.',
      content: { 'application/json': { schema: NotAnAddressSchema } },
    },
  },
};

export function registerBadgeRoutes(app: App, ctx: AppContext): void {
  app.openAPIRegistry.registerPath(badgeDoc);

  // `/badge/*` also matches `/badge` and `/badge/`; everything that is not `<segment>.svg` is a 404.
  app.get('/badge/*', async (c: Context) => {
    const m = BADGE_PATH_RE.exec(c.req.path);
    if (!m) return notFound(c);
    const raw = decodeSegment(m[1] ?? '');
    c.header('Access-Control-Allow-Origin', '*');
    // The 422 echoes the input inside JSON: never let a browser sniff it into markup.
    c.header('X-Content-Type-Options', 'nosniff');
    const wallet = walletFrom(raw);
    if (wallet === null) return notAnAddress(c, raw);

    const svg = renderBadge(await badgeInput(ctx, wallet));
    const etag = badgeEtag(svg);
    c.header('ETag', etag);
    c.header('Cache-Control', BADGE_CACHE_CONTROL);
    if (ifNoneMatchHits(c.req.header('if-none-match'), etag)) return c.body(null, 304);
    c.header('Content-Type', BADGE_CONTENT_TYPE);
    return c.body(svg, 200);
  });
}
