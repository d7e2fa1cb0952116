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
const LOWER_LAYERS = [
  'payments',
  'paid',
  'read',
  'db',
  'store',
  'indexer',
  'completeness',
  'scoring',
  'documents',
  'registrations',
  'liveness',
  'raters',
];

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

  it('no file of payments, paid, read, db, store, indexer, completeness or scoring imports from src/doors', () => {
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

/** Every source file under src/ and the src/ files it imports (relative specifiers, .js → .ts). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const deps: string[] = [];
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      const t = target(file, spec);
      if (t === null) continue;
      deps.push(relative(SRC, t.replace(/\.js$/, '.ts')));
    }
    graph.set(relative(SRC, file), deps);
  }
  return graph;
}

/** The import circles of a graph: its strongly connected components of more than one file (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('import circles', () => {
  it('finds a planted circle (the check can fail)', () => {
    const planted = new Map([
      ['paid/index.ts', ['payments/pricing.ts', 'scoring/index.ts']],
      ['payments/pricing.ts', ['paid/index.ts']],
      ['scoring/index.ts', []],
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(circles(planted).sort()).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
      ['paid/index.ts', 'payments/pricing.ts'],
    ]);
  });

  it('no two files of src/ import each other, directly or through others', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(circles(graph)).toEqual([]);
  });

  it('payments/ takes only the handler types of paid/ (the metered-route table holds no handler)', () => {
    const offenders = [...importGraph()]
      .filter(([file]) => file.startsWith(`payments${sep}`))
      .flatMap(([file, deps]) =>
        deps
          .filter((d) => d.startsWith(`paid${sep}`) && d !== join('paid', 'handler.ts'))
          .map((d) => `${file} → ${d}`),
      );
    expect(offenders).toEqual([]);
  });

  it('store/ imports nothing from indexer/ or completeness/ (the event types are src/index-events.ts)', () => {
    const offenders = [...importGraph()]
      .filter(([file]) => file.startsWith(`store${sep}`))
      .flatMap(([file, deps]) =>
        deps
          .filter((d) => d.startsWith(`indexer${sep}`) || d.startsWith(`completeness${sep}`))
          .map((d) => `${file} → ${d}`),
      );
    expect(offenders).toEqual([]);
  });

  it("indexer/ and completeness/ import nothing from read/ (the refresh after a pass is the caller's hook)", () => {
    const offenders = [...importGraph()]
      .filter(([file]) => file.startsWith(`indexer${sep}`) || file.startsWith(`completeness${sep}`))
      .flatMap(([file, deps]) => deps.filter((d) => d.startsWith(`read${sep}`)).map((d) => `${file} → ${d}`));
    expect(offenders).toEqual([]);
  });
});

/**
 * The layers of docs/ARCHITECTURE.md, lowest first: a file imports from its own layer or lower
 * ones, never from a higher one. A folder of src/ or a top-level file names each entry; a folder
 * inside one (doors/http/, indexer/solana/) is part of its entry's layer (entryOf).
 */
const LAYER_ORDER: readonly (readonly string[])[] = [
  // shared vocabulary: plain data and small pure helpers every layer may read
  [
    'config.ts',
    'chains.ts',
    'identifiers.ts',
    'request-params.ts',
    'index-events.ts',
    'metered-routes.ts',
    'log.ts',
    'html-escape.ts',
    'seeded-random.ts',
    'manifesto.ts',
  ],
  ['scoring'],
  ['db'],
  ['store'],
  ['read'],
  ['metrics.ts'],
  ['indexer', 'completeness', 'documents', 'registrations', 'liveness', 'raters', 'after-pass.ts'], // indexer/ with the Solana scanner's parts, indexer/solana/
  ['paid'],
  ['payments'],
  ['badge'],
  ['doors'],
  ['server.ts', 'cli.ts', 'demo'],
];

/** The layer entry of a path relative to src/: its first folder, or the top-level file. */
const entryOf = (file: string) => file.split(sep)[0]!;

/** Imports that run up the order (a file importing from a higher layer), and files in no layer. */
function upwardImports(
  graph: ReadonlyMap<string, readonly string[]>,
  order: readonly (readonly string[])[],
): string[] {
  const rank = new Map(order.flatMap((layer, i) => layer.map((e) => [e, i] as const)));
  const out: string[] = [];
  for (const [file, deps] of graph) {
    const r = rank.get(entryOf(file));
    if (r === undefined) {
      out.push(`${file} is in no layer`);
      continue;
    }
    for (const d of deps) {
      const rd = rank.get(entryOf(d));
      if (rd !== undefined && rd > r) out.push(`${file} → ${d}`);
    }
  }
  return out;
}

describe('layer order', () => {
  it('finds an upward import and a file in no layer (the check can fail)', () => {
    const planted = new Map([
      [join('paid', 'index.ts'), [join('payments', 'metered-routes.ts'), join('read', 'subject.ts')]],
      [join('read', 'subject.ts'), [join('scoring', 'index.ts')]],
      ['stray.ts', []],
    ]);
    expect(upwardImports(planted, LAYER_ORDER).sort()).toEqual(
      [
        `${join('paid', 'index.ts')} → ${join('payments', 'metered-routes.ts')}`,
        'stray.ts is in no layer',
      ].sort(),
    );
  });

  it('every import of src/ runs down the layers of docs/ARCHITECTURE.md', () => {
    expect(upwardImports(importGraph(), LAYER_ORDER)).toEqual([]);
  });
});
