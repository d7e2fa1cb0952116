/**
 * Precomputed free answers. The free routes read aggregate tables that change only when an index
 * pass writes (a batch moves a chain's checkpoint and counters) or the after-pass refresh
 * commits; between two such moments every free answer is a pure function of its URL. So the bytes
 * of each `200` answer (body, content type, ETag) are kept in memory under a GENERATION: a digest
 * of the refresh stamp (`agg_meta`) and of every chain's scan state and live counters. A request
 * whose generation and URL match is answered from those bytes without touching its handler or
 * the database; `If-None-Match` with the ETag answers `304`.
 *
 * The generation is re-read (one small query, src/read/free-cache-generation.ts) at most every `pollMs` (default 1000 ms), and at
 * once after this process wrote to a database (src/db/write-epoch.ts): a write made by this
 * process (an ingest batch, a refresh) is visible to its very next request; a write made by
 * another process sharing the database (`repindex index --once` beside `serve` on PostgreSQL)
 * within `pollMs`. When the generation changes the whole cache is dropped.
 *
 * Answers that also depend on the clock (`/health`, `/chains`, `/chains/{network}`: stale hours)
 * are keyed by the second of the service clock as well. Static answers (`/pricing`, the
 * manifesto, `/workflows.json`, …) never change while the process runs: they are built once.
 * The cache is bounded (entries and bytes, least recently used out first).
 */
import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { Database } from '../../db/database.js';
import { writeEpoch } from '../../db/write-epoch.js';
import { readFreeCacheGenerationInputs } from '../../read/free-cache-generation.js';
import type { AppEnv } from './env.js';

/** Cache-Control of the aggregate answers: they change once per index pass (hourly), one cached answer serves everybody. */
export const CACHE_AGGREGATE = 'public, max-age=60';
/** Cache-Control of the static documents (manifesto, workflows, discovery documents). */
export const CACHE_STATIC = 'public, max-age=3600';

/** How a route's answer may be reused. */
type CacheKind =
  /** a function of the URL and the index generation */
  | 'generation'
  /** of the URL, the index generation and the clock (per second) */
  | 'live'
  /**
   * of the URL, the index generation and the minute: answers the document fetcher moves between
   * index passes (`/stats/documents`, the coverage of `/stats/issuers`), whose statements read every
   * document row, so they run at most once a minute per URL (their Cache-Control is 60 s anyway)
   */
  | 'minute'
  /** of the URL only: built once per process */
  | 'static';

interface Entry {
  status: number;
  headers: [string, string][];
  /** A Uint8Array: the node server writes it straight to the socket (no stream). */
  body: Uint8Array<ArrayBuffer>;
  etag: string;
}

interface FreeCacheOptions {
  /** Longest time between two reads of the generation (ms). */
  pollMs?: number;
  maxEntries?: number;
  maxBytes?: number;
}

/** Headers NOT kept with an answer's bytes (the shell sets the first two on every answer). */
const DROPPED_HEADERS = new Set([
  'api-version',
  'ratelimit-policy',
  'content-length',
  'etag',
  'set-cookie',
  'date',
]);

export class FreeAnswerCache {
  private readonly db: Database;
  private readonly pollMs: number;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly entries = new Map<string, Entry>();
  private readonly statics = new Map<string, Entry>();
  private bytes = 0;
  private current: string | null = null;
  private checkedAt = -Infinity;
  private checkedEpoch = -1;
  private pending: Promise<string> | null = null;
  /** Counters for tests and the bench: answers served from memory / built by their handler. */
  hits = 0;
  misses = 0;

  constructor(db: Database, opts: FreeCacheOptions = {}) {
    this.db = db;
    this.pollMs = opts.pollMs ?? 1000;
    this.maxEntries = opts.maxEntries ?? 20_000;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  }

  /** The index generation (re-read when stale or when this process wrote since). */
  async generation(): Promise<string> {
    const epoch = writeEpoch();
    if (
      this.current !== null &&
      epoch === this.checkedEpoch &&
      performance.now() - this.checkedAt < this.pollMs
    ) {
      return this.current;
    }
    if (this.pending) return this.pending;
    this.pending = (async () => {
      try {
        const { refresh, chains } = await readFreeCacheGenerationInputs(this.db);
        const g = createHash('sha1')
          .update(`${refresh ?? ''}\u0000${chains ?? ''}`)
          .digest('base64url');
        if (g !== this.current) this.clear();
        this.current = g;
        this.checkedAt = performance.now();
        this.checkedEpoch = epoch;
        return g;
      } finally {
        this.pending = null;
      }
    })();
    return this.pending;
  }

  /** Drops every generation-bound answer (static ones stay). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size + this.statics.size;
  }

  private get(key: string, kind: CacheKind): Entry | undefined {
    if (kind === 'static') return this.statics.get(key);
    const e = this.entries.get(key);
    if (e) {
      // least recently used out first: a hit moves the entry to the end
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  private put(key: string, kind: CacheKind, e: Entry): void {
    if (kind === 'static') {
      this.statics.set(key, e);
      return;
    }
    if (e.body.byteLength > this.maxBytes / 16) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.body.byteLength;
      this.entries.delete(key);
    }
    this.entries.set(key, e);
    this.bytes += e.body.byteLength;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const first = this.entries.keys().next();
      if (first.done) break;
      const victim = this.entries.get(first.value)!;
      this.bytes -= victim.body.byteLength;
      this.entries.delete(first.value);
    }
  }

  /**
   * Middleware for one route pattern. `accept` narrows the paths it applies to (e.g. only
   * `/wallets/{wallet}/chains` under `/wallets/*`).
   */
  middleware(kind: CacheKind, accept: (path: string) => boolean = () => true): MiddlewareHandler<AppEnv> {
    return async (c, next) => {
      if (c.req.method !== 'GET' || !accept(c.req.path)) return next();
      const raw = c.req.url;
      const q = raw.indexOf('?');
      const hash = raw.indexOf('#');
      const search = q < 0 ? '' : raw.slice(q, hash > q ? hash : undefined);
      let key = `${c.req.path}${search}`;
      if (kind !== 'static') {
        let g: string;
        try {
          g = await this.generation();
        } catch {
          // the database does not answer: the handler decides (e.g. /health still answers)
          return next();
        }
        key = `${key}#${g}`;
      }
      if (kind === 'live') key = `${key}@${Math.floor(this.clock(c) / 1000)}`;
      if (kind === 'minute') key = `${key}@m${Math.floor(this.clock(c) / 60_000)}`;
      const hit = this.get(key, kind);
      if (hit) {
        this.hits += 1;
        return respond(c, hit);
      }
      this.misses += 1;
      await next();
      const res = c.res;
      // Only 200s are kept; an answer that says no-store (e.g. /health while the database is
      // unreachable) is never replayed.
      if (res.status !== 200 || !res.body || /no-store/i.test(res.headers.get('cache-control') ?? '')) return;
      const body = new Uint8Array(await res.clone().arrayBuffer());
      const headers: [string, string][] = [];
      res.headers.forEach((v, h) => {
        if (!DROPPED_HEADERS.has(h.toLowerCase())) headers.push([h, v]);
      });
      const etag = res.headers.get('etag') ?? etagOf(body);
      const entry: Entry = { status: res.status, headers, body, etag };
      this.put(key, kind, entry);
      c.res = respond(c, entry);
    };
  }

  private clockOf: ((c: Context<AppEnv>) => number) | null = null;

  /** The service clock (tests inject one): keys of `live` answers use it. */
  useClock(now: () => Date): this {
    this.clockOf = () => now().getTime();
    return this;
  }

  private clock(c: Context<AppEnv>): number {
    return this.clockOf ? this.clockOf(c) : Date.now();
  }
}

/** The ETag of a body: a quoted, shortened SHA-1 (the free answers and /pricing use it). */
export function etagOf(body: string | Uint8Array): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`;
}

/** Does an If-None-Match header name this ETag (weak comparison, `*`)? */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  const want = bare(etag);
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || bare(t) === want);
}

function respond(c: Context<AppEnv>, e: Entry): Response {
  const headers = new Headers(e.headers);
  headers.set('ETag', e.etag);
  if (etagMatches(c.req.header('if-none-match'), e.etag)) {
    headers.delete('content-type');
    return new Response(null, { status: 304, headers });
  }
  return new Response(e.body, { status: e.status, headers });
}
