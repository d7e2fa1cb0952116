/**
 * The layers' import direction (docs/ARCHITECTURE.md): nothing below the doors imports from
 * src/doors. Reads the import and export-from specifiers of every source file under the lower
 * layers (static `import … from`, `export … from`, bare `import '…'` and dynamic `import('…')`)
 * and fails on any that resolves into src/doors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
const DOORS = join(SRC, 'doors');
const LOWER_LAYERS = ['payments', 'paid', 'read', 'db', 'store', 'indexer', 'scoring'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [p] : [];
  });
}

/** Module specifiers a file imports or re-exports from (comments are not code: stripped first). */
function importSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

/** Where a relative specifier points (null for packages and node: builtins). */
function target(file: string, spec: string): string | null {
  return spec.startsWith('.') ? resolve(dirname(file), spec) : null;
}

describe('layer imports', () => {
  it('reads every form of import, and skips comments', () => {
    const text = [
      "import { a } from '../doors/x.js';",
      "import type { B } from '../doors/y.js';",
      "export { c } from '../doors/z.js';",
      "import '../doors/side-effect.js';",
      "const m = await import('../doors/lazy.js');",
      "// import { d } from '../doors/comment.js';",
      "/* import { e } from '../doors/block.js'; */",
      "import {\n  f,\n  g,\n} from '../read/multi.js';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(
      [
        '../doors/x.js',
        '../doors/y.js',
        '../doors/z.js',
        '../doors/side-effect.js',
        '../doors/lazy.js',
        '../read/multi.js',
      ].sort(),
    );
  });

  it('no file of payments, paid, read, db, store, indexer or scoring imports from src/doors', () => {
    const offenders: string[] = [];
    let files = 0;
    for (const layer of LOWER_LAYERS) {
      for (const file of sourceFiles(join(SRC, layer))) {
        files++;
        for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
          const t = target(file, spec);
          if (t !== null && (t === DOORS || t.startsWith(DOORS + sep))) {
            offenders.push(`${relative(SRC, file)} imports ${spec}`);
          }
        }
      }
    }
    expect(files).toBeGreaterThan(20);
    expect(offenders).toEqual([]);
  });
});
