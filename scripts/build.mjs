#!/usr/bin/env node
// Builds dist/ (compiled JavaScript of src/, run by `npm start` and bin/repindex.js) and copies the
// SQL migrations next to it. Run by `npm run build` and by `prepare` (so `npm install` / `npm ci`
// leave a built checkout). Without TypeScript (a production install that omitted devDependencies)
// it says so and exits 0: the launcher then runs the sources through tsx.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.error('build: typescript is not installed; skipping dist/ (bin/repindex.js will run the sources through tsx)');
  process.exit(0);
}
rmSync(join(root, 'dist'), { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
if (r.status !== 0) process.exit(r.status ?? 1);
cpSync(join(root, 'src/db/migrations'), join(root, 'dist/db/migrations'), { recursive: true });
