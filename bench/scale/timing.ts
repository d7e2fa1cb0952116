/**
 * The scale benchmark's measuring helpers: percentiles, the peak RSS sampled around a call, the
 * timed rows of paid calls (warm-up, then BENCH_CALLS measured calls) and the peak over the run.
 */
import { CALLS, WARMUP } from './options.js';

export const NONE = { p50: NaN, p99: NaN };
export const r1 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);
export const mbOf = (b: number) => Math.round(b / 1048576);

let globalPeak = 0;

/** Records a peak RSS (bytes) into the run's peak. */
export function notePeak(peak: number): void {
  globalPeak = Math.max(globalPeak, peak);
}

/** The highest peak RSS (bytes) recorded so far. */
export function runPeak(): number {
  return globalPeak;
}

export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** Peak RSS sampler (every 10 ms) around fn. */
export async function withPeak<T>(fn: () => Promise<T>): Promise<{ value: T; peak: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  try {
    const value = await fn();
    return { value, peak: Math.max(peak, process.memoryUsage().rss) };
  } finally {
    clearInterval(timer);
  }
}

export async function timedCalls(
  label: string,
  fn: () => Promise<unknown>,
): Promise<{ p50: number; p99: number }> {
  // warm-up calls (JIT, plan and buffer caches), not measured
  for (let k = 0; k < WARMUP; k++) await fn();
  const times: number[] = [];
  const { peak } = await withPeak(async () => {
    for (let k = 0; k < CALLS; k++) {
      const t0 = performance.now();
      await fn();
      times.push(performance.now() - t0);
    }
  });
  notePeak(peak);
  const r = { p50: pct(times, 50), p99: pct(times, 99) };
  console.log(
    `  ${label.padEnd(44)} p50 ${r.p50.toFixed(1).padStart(9)} ms  p99 ${r.p99.toFixed(1).padStart(9)} ms  ` +
      `peak RSS ${mbOf(peak)} MB  (${CALLS} calls)`,
  );
  return r;
}
