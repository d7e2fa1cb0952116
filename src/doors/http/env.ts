/**
 * The Hono types of the HTTP door, in a module of their own so the door's modules that need only
 * these types (the free-answer cache) do not import src/doors/http/context.ts, which imports them.
 *
 * Hono environment: node-server puts the socket in `incoming`. An in-process call made by a door
 * (MCP tools, A2A dispatch, the explorer's pages; src/doors/in-process.ts) carries no socket but
 * `inProcessClient`: the rate-limit key of the client whose request started it, so the call spends
 * from THAT client's bucket (one client, one bucket, whatever the door), unless it also carries
 * `inProcessCharged`: a read of an explorer page, whose one token the page request already took.
 * A call with neither socket nor client (a test harness calling `app.request`) is not rate
 * limited. `inProcessPath`: the path such a call is routed by when its URL would have lost a dot
 * segment (`/search/..`; see in-process.ts). Bindings are set by the code calling
 * `app.request`/`app.fetch` (node-server sets only `incoming` and `outgoing`), never by an HTTP
 * client, and the app ignores the in-process ones on a request that came from a socket.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';

export type AppEnv = {
  Bindings: {
    incoming?: { socket?: { remoteAddress?: string } };
    inProcessClient?: string;
    inProcessCharged?: boolean;
    inProcessPath?: string;
  };
  Variables: { client?: string };
};

export type App = OpenAPIHono<AppEnv>;
