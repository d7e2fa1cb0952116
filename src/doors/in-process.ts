/**
 * The plumbing the doors that answer from the HTTP app IN PROCESS share (the MCP tools, the A2A
 * skills, the explorer's pages): their answers come from the same routes, so the rate limit, the
 * paywall and the bytes are the HTTP door's. Each call carries the rate-limit key of the client
 * whose request reached the door (`inProcessClient`, see AppEnv). A call of the MCP or A2A door
 * spends one token of THAT client's bucket, like the door POST before it. A read of an explorer
 * page is marked `alreadyCharged` (`inProcessCharged`): the page request took the client's one
 * token for the whole view (and a page refused 429 reads nothing), so its reads are not charged
 * again. Client undefined (tests only): not rate limited.
 *
 * Paths. Every user-supplied value a door puts in a path is ONE segment made by `pathSegment`
 * (percent-encoded: a `/`, `?`, `#` or `%` in it stays inside the segment). Percent-encoding cannot
 * protect a value that is a dot segment: the WHATWG URL parser, which every Request URL goes
 * through, removes `.` and `..` (and their `%2e` spellings, in any case) together with what they
 * point at, so `/search/..` would be `/` and `/wallets/../chains` would be `/chains`, and no
 * spelling of `..` decodes to `..` without being one. So a call whose path holds a dot segment is
 * routed by that path as the door built it (the `inProcessPath` binding, read by the app's
 * `getPath`): `/search/..` reaches `/search/{q}` with `q = ".."` and gets that route's own answer
 * (its 422 `unrecognized_query` echoing `..`), never the answer of another route. An HTTP client
 * cannot set a binding; its own `GET /search/..` is normalised by its URL parser, as anywhere.
 */
import type { App, AppEnv } from './http/env.js';

/** The env bindings an in-process call may carry (never set by an HTTP client). */
export type InProcessBindings = Pick<
  AppEnv['Bindings'],
  'inProcessClient' | 'inProcessCharged' | 'inProcessPath'
>;

/** Anything with Hono's `request` (the app itself). */
export interface InProcessApp {
  request(input: string, init?: RequestInit, env?: InProcessBindings): Response | Promise<Response>;
}

/** A lone UTF-16 surrogate: no URL (nor UTF-8) can carry it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A user-supplied value as ONE path segment of an in-process call: percent-encoded, so the route
 * reads the value back as its parameter. A lone surrogate (a JSON string may hold one; no URL can)
 * becomes U+FFFD, the mark a broken UTF-8 byte gets: it never throws. The only values whose segment
 * is a dot segment are `.` and `..` themselves (`%` is encoded): `requestInProcess` routes those
 * by the literal path (see the module comment).
 */
export function pathSegment(value: string): string {
  return encodeURIComponent(value.replace(LONE_SURROGATE, '\uFFFD'));
}

/** A segment the URL parser removes: `.`, `..`, or either spelled with `%2e` (any case). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

export function isDotSegment(segment: string): boolean {
  return DOT_SEGMENT.test(segment);
}

/** The path of `pathWithQuery` when one of its segments is a dot segment; else undefined. */
function literalPath(pathWithQuery: string): string | undefined {
  const end = pathWithQuery.search(/[?#]/);
  const path = end < 0 ? pathWithQuery : pathWithQuery.slice(0, end);
  return path.split('/').some(isDotSegment) ? path : undefined;
}

/**
 * One request through the same app, in process, on behalf of `client`. `path` is the route's path
 * (with its query), every user-supplied segment made by `pathSegment`; a path holding a dot
 * segment is routed as written (`inProcessPath`). `alreadyCharged`: the request that makes this
 * call has paid the client's token for it (an explorer page view), so the call takes none.
 */
export async function requestInProcess(
  app: InProcessApp,
  path: string,
  init: RequestInit,
  client: string | undefined,
  opts: { alreadyCharged?: boolean } = {},
): Promise<Response> {
  const env: InProcessBindings = {};
  if (client !== undefined) env.inProcessClient = client;
  if (client !== undefined && opts.alreadyCharged === true) env.inProcessCharged = true;
  const literal = literalPath(path);
  if (literal !== undefined) env.inProcessPath = literal;
  return app.request(path, init, Object.keys(env).length === 0 ? undefined : env);
}

/** A JSON object (not null, not an array): what the doors read from a route's answer. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The 405 `{detail}` of a door's path for GET, PUT, PATCH and DELETE (Hono answers HEAD with the
 * GET handler, without a body): the door takes POST only (and the CORS preflight, in app.ts).
 */
export function refuseOtherMethods(app: App, path: string, detail: string): void {
  app.on(['GET', 'PUT', 'PATCH', 'DELETE'], path, (c) => {
    c.header('Allow', 'POST, OPTIONS');
    return c.json({ detail }, 405);
  });
}
