/**
 * The second process of BENCH_LOAD=1: bench/free-load.ts serving the same schema and driving its
 * free routes with autocannon while the paid rows run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The second process of BENCH_LOAD=1 (bench/free-load.ts on the same schema), once it serves. */
export async function startFreeLoad(url: string): Promise<{ child: ChildProcess; stop(): Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join('bench', 'free-load.ts')], {
    env: { ...process.env, DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.includes('READY ')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`bench/free-load.ts exited (${code}) before serving`)));
  });
  return {
    child,
    async stop() {
      child.kill('SIGTERM');
      await ended;
      const line = out.split('\n').find((l) => l.startsWith('LOAD '));
      return line ? JSON.parse(line.slice(5)) : null;
    },
  };
}
