#!/usr/bin/env node
// Builds dist/: the CLI (src/cli.ts and everything it imports) bundled by esbuild into dist/cli.js
// plus the chunks of the commands it loads lazily, and the SQL migrations copied next to them
// (dist/migrations, found beside the bundle as src/db/migrations is beside migrate.ts). Run by
// `npm run build` and by `prepare` (so `npm install` / `npm ci` leave a built checkout).
//
// Why a bundle: node spends most of a CLI start loading modules one by one (about 830 ES modules
// of src/ and its packages). Bundled, loading the server takes 0.3 instead of 1.0 CPU-s, so
// `npm start`, `repindex migrate` and `repindex index --once` (a cron job) start faster. Types
// are not checked here: `npm run typecheck` (tsc) does that, and CI runs it.
//
// Kept out of the bundle (imported from node_modules at run time): packages that load files of
// their own next to their code (PGlite's wasm and data, EDR's native engine) and pg, whose
// optional native binding must stay optional.
//
// Without esbuild (a production install that omitted devDependencies) it says so and exits 0:
// the launcher then runs the sources through tsx.
import { cpSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error(
    'build: esbuild is not installed; skipping dist/ (bin/repindex.js will run the sources through tsx)',
  );
  process.exit(0);
}
rmSync(join(root, 'dist'), { recursive: true, force: true });
try {
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { cli: 'src/cli.ts' },
    outdir: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    chunkNames: 'chunk-[hash]',
    external: ['@electric-sql/pglite', '@nomicfoundation/*', 'pg'],
    // CommonJS packages in an ES module bundle still call require() for node's built-ins.
    banner: {
      js: "import { createRequire as __repindexCreateRequire } from 'node:module'; const require = __repindexCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
} catch {
  process.exit(1); // esbuild printed the errors
}
cpSync(join(root, 'src/db/migrations'), join(root, 'dist/migrations'), { recursive: true });
