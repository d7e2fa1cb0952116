/**
 * The README stays true about configuration: every environment variable the service reads
 * (src/config.ts, and src/log.ts for LOG_LEVEL) has a row in the README's configuration table.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** Variable names a source file reads: env.NAME, env['NAME'] and the helpers' (env, 'NAME', …) form. */
function variablesRead(code: string): string[] {
  const names = new Set<string>();
  const patterns = [
    /\benv\.([A-Z][A-Z0-9_]+)\b/g,
    /\benv\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\]/g,
    /\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]+)['"]/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) names.add(m[1]!);
  return [...names].sort();
}

/** The backticked names in the first column of the README's configuration table. */
function documented(readme: string): Set<string> {
  const start = readme.indexOf('## Configuration');
  const end = readme.indexOf('\n## ', start + 1);
  const table = readme.slice(start, end === -1 ? undefined : end);
  const names = new Set<string>();
  for (const line of table.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_<>]*)`/g)) names.add(m[1]!);
  }
  return names;
}

describe('README configuration table', () => {
  it('reads the forms of a variable read (the check can fail)', () => {
    expect(
      variablesRead("intVar(env, 'PORT', 1); env.HOST; env['CHAINS_FILE']; urlVar(env, \"REDIS_URL\", [])"),
    ).toEqual(['CHAINS_FILE', 'HOST', 'PORT', 'REDIS_URL']);
  });

  it('has a row for every variable the service reads', () => {
    const read_ = [...variablesRead(read('src/config.ts')), 'LOG_LEVEL'];
    expect(read_.length).toBeGreaterThan(20);
    const rows = documented(read('README.md'));
    const missing = read_.filter((name) => !rows.has(name));
    expect(missing).toEqual([]);
  });
});
