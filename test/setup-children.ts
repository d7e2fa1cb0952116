/**
 * Loaded in every test file (vitest setupFiles): after the file's own afterAll hooks, no child
 * process of this test worker may still be running. Any that is gets killed and the file fails,
 * naming it: a test that starts a process (a CLI, a node) must stop it.
 */
import { spawnSync } from 'node:child_process';
import { afterAll } from 'vitest';

function livingChildren(): { pid: number; args: string }[] {
  const r = spawnSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 1) return []; // no usable `ps` (not Linux): skip the check
  return r.stdout
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => !m[2]!.startsWith('Z') && !/^ps\s/.test(m[3]!))
    .map((m) => ({ pid: Number(m[1]), args: m[3]! }));
}

afterAll(async () => {
  let left = livingChildren();
  // A child that was just sent a signal may need a moment to exit.
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = livingChildren();
  }
  if (left.length === 0) return;
  for (const c of left) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  throw new Error(
    `child process(es) outlived the test file (killed now): ${left.map((c) => `${c.pid} ${c.args}`).join('; ')}`,
  );
});
