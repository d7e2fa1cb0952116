/**
 * `bench:backfill`'s account of where a run's time goes (printed with `BENCH_TRACE=1`, and
 * summarised in `RESULT` always):
 *  - every JSON-RPC request this process sends (`globalThis.fetch`, which viem's transport uses),
 *    by method (a JSON-RPC batch counts as `batch(<method>)` once, its members in `members`): how
 *    many, the time to the answer's headers summed (the node builds a whole answer before its
 *    first byte leaves: this is mostly the node's time; concurrent requests overlap, so the sum
 *    can exceed the wall time) and the answer bytes (Content-Length);
 *  - the database transactions of a pass (`Database.transaction`, one per written batch): their
 *    count and summed time;
 *  - the pass's phases: before the first batch is written (chain id, head, configuration check,
 *    the first scan windows), the batches, and after the last one (the census, ANALYZE).
 * The phase names are set by the caller (`tracer.phase = 'pass'`).
 */
import type { Database } from '../src/db/database.js';

export interface MethodFigures {
  requests: number;
  members: number;
  header_ms: number;
  bytes: number;
}

export interface PhaseFigures {
  rpc: Record<string, MethodFigures>;
  transactions: number;
  transaction_ms: number;
}

export class BackfillTracer {
  phase = 'setup';
  readonly phases: Record<string, PhaseFigures> = {};
  private readonly originalFetch = globalThis.fetch;

  private figures(): PhaseFigures {
    return (this.phases[this.phase] ??= { rpc: {}, transactions: 0, transaction_ms: 0 });
  }

  /** Counts and times every fetch of this process from now on. */
  install(): void {
    const original = this.originalFetch;
    globalThis.fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      const method = methodOf(body);
      const t0 = performance.now();
      const res = await original(input, init);
      const f = this.figures();
      const m = (f.rpc[method.name] ??= { requests: 0, members: 0, header_ms: 0, bytes: 0 });
      m.requests++;
      m.members += method.members;
      m.header_ms += performance.now() - t0;
      m.bytes += Number(res.headers.get('content-length') ?? 0);
      return res;
    };
  }

  uninstall(): void {
    globalThis.fetch = this.originalFetch;
  }

  /** Times `db`'s transactions (one per batch written). */
  wrap(db: Database): Database {
    const original = db.transaction.bind(db);
    db.transaction = async (fn) => {
      const t0 = performance.now();
      try {
        return await original(fn);
      } finally {
        const f = this.figures();
        f.transactions++;
        f.transaction_ms += performance.now() - t0;
      }
    };
    return db;
  }

  /** The figures of `phase`, rounded, for RESULT and the printout. */
  summary(phase: string): Record<string, unknown> | null {
    const f = this.phases[phase];
    if (!f) return null;
    const rpc: Record<string, unknown> = {};
    for (const [name, m] of Object.entries(f.rpc).sort((a, b) => b[1].header_ms - a[1].header_ms))
      rpc[name] = {
        requests: m.requests,
        ...(m.members !== m.requests ? { members: m.members } : {}),
        ms: Math.round(m.header_ms),
        mb: Math.round((m.bytes / 1e6) * 10) / 10,
      };
    return { rpc, transactions: f.transactions, transaction_ms: Math.round(f.transaction_ms) };
  }
}

/** The JSON-RPC method of a request body (a batch: `batch(<first member's method>)`). */
function methodOf(body: string): { name: string; members: number } {
  const head = body.slice(0, 400);
  const m = /"method"\s*:\s*"([^"]+)"/.exec(head);
  const name = m ? m[1]! : '?';
  if (!body.trimStart().startsWith('[')) return { name, members: 1 };
  const members = body.match(/"method"\s*:/g)?.length ?? 0;
  return { name: `batch(${name})`, members };
}
