/**
 * The test run's build cache (helpers/build-cache.ts): an entry is built once, then copied; a
 * failed build stores nothing; a new key replaces the entry of the old one; the key follows every
 * input it is given.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheKey, fromCache, packageVersion } from './helpers/build-cache.js';
import { tempDir } from './helpers/tmp.js';

/** A build that writes `text` into its folder and counts its calls. */
function counted(text: string) {
  const b = {
    calls: 0,
    build: async (dir: string) => {
      b.calls++;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'out.txt'), text);
    },
  };
  return b;
}

describe('build cache', () => {
  it('builds an entry once, then copies it into each new target', async () => {
    const root = join(tempDir('repindex-cache-'), 'cache');
    const work = tempDir('repindex-cache-');
    const b = counted('first');
    expect(await fromCache('thing', 'k1', join(work, 'a'), b.build, root)).toBe(false);
    expect(await fromCache('thing', 'k1', join(work, 'b'), b.build, root)).toBe(true);
    expect(b.calls).toBe(1);
    expect(readFileSync(join(work, 'a', 'out.txt'), 'utf8')).toBe('first');
    expect(readFileSync(join(work, 'b', 'out.txt'), 'utf8')).toBe('first');
    expect(readdirSync(root)).toEqual(['thing-k1']);
  });

  it('stores nothing when the build fails, and the next run builds again', async () => {
    const root = join(tempDir('repindex-cache-'), 'cache');
    const work = tempDir('repindex-cache-');
    const failing = async (dir: string) => {
      mkdirSync(dir);
      writeFileSync(join(dir, 'half.txt'), 'half');
      throw new Error('solc exploded');
    };
    await expect(fromCache('thing', 'k1', join(work, 'a'), failing, root)).rejects.toThrow('solc exploded');
    expect(readdirSync(root)).toEqual([]);
    expect(existsSync(join(work, 'a'))).toBe(false);
    const b = counted('second');
    expect(await fromCache('thing', 'k1', join(work, 'b'), b.build, root)).toBe(false);
    expect(b.calls).toBe(1);
  });

  it('a new key replaces the entries of the old one, and leaves other builds alone', async () => {
    const root = join(tempDir('repindex-cache-'), 'cache');
    const work = tempDir('repindex-cache-');
    await fromCache('thing', 'old', join(work, 'a'), counted('old').build, root);
    await fromCache('other', 'x', join(work, 'b'), counted('x').build, root);
    const b = counted('new');
    expect(await fromCache('thing', 'new', join(work, 'c'), b.build, root)).toBe(false);
    expect(readdirSync(root).sort()).toEqual(['other-x', 'thing-new']);
    expect(readFileSync(join(work, 'c', 'out.txt'), 'utf8')).toBe('new');
  });

  it('the key changes with each input file and version, and only with them', () => {
    const files = ['src/db/migrate.ts', 'src/db/migrations'];
    const key = cacheKey(files, [packageVersion('@electric-sql/pglite')]);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(cacheKey(files, [packageVersion('@electric-sql/pglite')])).toBe(key);
    expect(cacheKey(files, ['@electric-sql/pglite@0.0.0'])).not.toBe(key);
    expect(cacheKey(files.slice(0, 1), [packageVersion('@electric-sql/pglite')])).not.toBe(key);
    expect(cacheKey([...files, 'src/db/database.ts'], [packageVersion('@electric-sql/pglite')])).not.toBe(
      key,
    );
  });
});
