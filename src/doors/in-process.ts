/**
 * The plumbing the two agent doors (MCP tools, A2A skills) share: they answer by calling the HTTP
 * app IN PROCESS, so the rate limit, the paywall and the bytes are the HTTP door's. Each call
 * carries the rate-limit key of the client whose POST reached the door (`inProcessClient`, see
 * AppEnv): it spends one token of THAT client's bucket. Undefined (tests only): not rate limited.
 */
import type { App } from './http/context.js';

/** Anything with Hono's `request` (the app itself). */
export interface InProcessApp {
  request(
    input: string,
    init?: RequestInit,
    env?: { inProcessClient?: string },
  ): Response | Promise<Response>;
}

/** One request through the same app, in process, on behalf of `client`. */
export async function requestInProcess(
  app: InProcessApp,
  path: string,
  init: RequestInit,
  client: string | undefined,
): Promise<Response> {
  return app.request(path, init, client === undefined ? undefined : { inProcessClient: client });
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
