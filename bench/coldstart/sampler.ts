/**
 * CPU and memory of a running process, read from /proc (Linux): user + system CPU time of the
 * process (and of any extra pids, such as the PostgreSQL backends serving it), its resident set,
 * and its peak resident set (VmHWM, the kernel's own high-water mark), sampled every `everyMs`.
 */
import { readFileSync } from 'node:fs';

const TICK = 100; // clock ticks per second (USER_HZ on Linux)

/** utime + stime of a pid, in seconds (null when it is gone). */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) in parentheses.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return null;
  }
}

function statusKb(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export interface Sampler {
  /** Pids whose CPU is counted apart (e.g. the database backends); their last reading is kept. */
  addExtra(pid: number): void;
  stop(): SamplerResult;
}

export interface SamplerResult {
  cpu_seconds: number;
  extra_cpu_seconds: number;
  peak_rss_mb: number;
  /** Peak of the JS-visible samples: the RSS at the moments sampled (VmHWM is the true peak). */
  sampled_peak_rss_mb: number;
  samples: number;
}

export function sample(pid: number, everyMs = 200): Sampler {
  let cpu = 0;
  let hwm = 0;
  let rss = 0;
  let samples = 0;
  const extra = new Map<number, { first: number; last: number }>();
  const tick = () => {
    const c = cpuSeconds(pid);
    if (c !== null) cpu = c;
    hwm = Math.max(hwm, statusKb(pid, 'VmHWM') ?? 0);
    rss = Math.max(rss, statusKb(pid, 'VmRSS') ?? 0);
    for (const [p, e] of extra) {
      const x = cpuSeconds(p);
      if (x !== null) e.last = x;
    }
    samples++;
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    addExtra(p) {
      if (extra.has(p)) return;
      const x = cpuSeconds(p);
      if (x !== null) extra.set(p, { first: x, last: x });
    },
    stop() {
      tick();
      clearInterval(timer);
      let extraCpu = 0;
      for (const e of extra.values()) extraCpu += e.last - e.first;
      return {
        cpu_seconds: Math.round(cpu * 100) / 100,
        extra_cpu_seconds: Math.round(extraCpu * 100) / 100,
        peak_rss_mb: Math.round(hwm / 1024),
        sampled_peak_rss_mb: Math.round(rss / 1024),
        samples,
      };
    },
  };
}
