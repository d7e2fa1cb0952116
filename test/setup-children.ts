/**
 * Loaded in every test file (vitest setupFiles): after the file's own afterAll hooks, no child
 * process of this test worker may still be running. Any that is gets killed and the file fails,
 * naming it: a test that starts a process (a CLI, a node) must stop it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll } from 'vitest';

interface Child {
  pid: number;
  args: string;
}

/**
 * The worker's living children from /proc (Linux): every thread's `children` file, each child's
 * state and command line. Reading them costs microseconds; starting `ps` from a worker holding
 * PGlite's wasm heaps (about 1 GB) cost 20-30 ms of fork and `ps` per file. Null when /proc has
 * no `children` files (another kernel or OS).
 */
function childrenFromProc(): Child[] | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${process.pid}/task`);
  } catch {
    return null;
  }
  const pids = new Set<number>();
  for (const tid of tasks) {
    let list: string;
    try {
      list = readFileSync(`/proc/${process.pid}/task/${tid}/children`, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT' && tid === String(process.pid)) return null;
      continue; // a thread that ended meanwhile
    }
    for (const p of list.trim().split(/\s+/)) if (p) pids.add(Number(p));
  }
  const out: Child[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue; // exited, not yet reaped
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push({ pid, args });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function childrenFromPs(): Child[] {
  const r = spawnSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 1) return []; // no usable `ps` (not Linux): skip the check
  return r.stdout
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => !m[2]!.startsWith('Z') && !/^ps\s/.test(m[3]!))
    .map((m) => ({ pid: Number(m[1]), args: m[3]! }));
}

const livingChildren = (): Child[] => childrenFromProc() ?? childrenFromPs();

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
