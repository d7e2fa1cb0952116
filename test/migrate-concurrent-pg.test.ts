/**
 * Replicas that start together (a rollout) on an empty PostgreSQL database all come up (issue 30):
 * every migration step, the creation of the bookkeeping table `schema_migrations` included, runs
 * under one lock (src/db/migrate.ts). PostgreSQL only (PGlite's data directory is one process's).
 *
 *  - 10 rounds: 4 `repindex migrate` processes started at the same moment on a new, empty schema
 *    (a search_path of its own: an empty database as far as repindex can tell); every one exits 0,
 *    and every migration is recorded exactly once;
 *  - 3 `repindex serve` processes started at the same moment on a new, empty schema: all listen and
 *    answer /ready 200 (the start-up path of a replica: migrate, then register the chains).
 *
 * Before the lock covered the table's creation, 4 processes failed about one round in six here
 * (`duplicate key value violates unique constraint "pg_type_typname_nsp_index"`).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationFiles } from '../src/db/migrate.js';
import { admin, testDatabaseUrl, testDbKind, testSchemaPrefix } from './helpers/db.js';
import { repindexArgs, ROOT } from './helpers/repindex-bin.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { tempDir } from './helpers/tmp.js';

const ROUNDS = 10;
const PROCESSES = 4;

/** A new empty schema and a DATABASE_URL whose search_path is that schema. */
async function emptySchema(made: string[]): Promise<string> {
  const schema = `${testSchemaPrefix()}mig_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
  made.push(schema);
  const u = new URL(testDatabaseUrl!);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** `repindex migrate` as a child process; resolves with its exit code and output. */
function migrateProcess(url: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, repindexArgs(['migrate']), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe.skipIf(testDbKind !== 'postgres')('replicas started together on an empty database', () => {
  const schemas: string[] = [];
  const serves: ServeProcess[] = [];
  afterAll(async () => {
    await Promise.all(serves.map((s) => s.kill()));
    await admin(async (c) => {
      for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    });
  }, 60_000);

  const recorded = (schema: string) =>
    admin(async (c) => {
      const r = await c.query<{ id: string; n: number }>(
        `SELECT id, count(*)::int AS n FROM ${schema}.schema_migrations GROUP BY id ORDER BY id`,
      );
      return r.rows;
    });

  it(`${PROCESSES} migrate processes at once, ${ROUNDS} rounds: every one exits 0, every migration recorded once`, async () => {
    const files = migrationFiles();
    const failures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const url = await emptySchema(schemas);
      const runs = await Promise.all(Array.from({ length: PROCESSES }, () => migrateProcess(url)));
      runs.forEach((r, i) => {
        if (r.code !== 0)
          failures.push(`round ${round}, process ${i + 1}: exit ${r.code}\n${r.out.slice(-600)}`);
      });
      // Every migration applied by exactly one of them, and recorded once.
      const applied = runs.flatMap(
        (r) => /"applied":\[([^\]]*)\]/.exec(r.out)?.[1]?.match(/[\w.]+\.sql/g) ?? [],
      );
      expect(applied.sort(), `round ${round}`).toEqual(files);
      expect(await recorded(schemas.at(-1)!)).toEqual(files.map((id) => ({ id, n: 1 })));
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('3 serve processes at once on an empty database: all listen and are ready', async () => {
    const url = await emptySchema(schemas);
    const dir = tempDir('repindex-replicas-');
    const started = await Promise.allSettled(
      ['a', 'b', 'c'].map((name) =>
        startServeProcess({
          name,
          env: { DATABASE_URL: url, DATA_DIR: `${dir}/${name}`, FEEDBACK_FETCH: '0' },
        }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') serves.push(s.value);
    expect(started.map((s) => (s.status === 'rejected' ? String(s.reason).slice(0, 600) : 'up'))).toEqual([
      'up',
      'up',
      'up',
    ]);
    for (const s of serves) expect((await fetch(`${s.url}/ready`)).status).toBe(200);
    expect(await recorded(schemas.at(-1)!)).toEqual(migrationFiles().map((id) => ({ id, n: 1 })));
  }, 300_000);
});
