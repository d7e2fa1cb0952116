/**
 * The progress display of a pass: one updating line on a TTY, else a log line per chain every few
 * seconds (and at its end).
 */
import type { ScannerLogger } from './scanner.js';

export interface ProgressEvent {
  network: string;
  /** Blocks written so far in this pass, and blocks this pass has to cover. */
  done: number;
  total: number;
  /** Last block written. */
  block: number;
  target: number;
}

export class Progress {
  private readonly state = new Map<string, ProgressEvent>();
  private lastLine = new Map<string, number>();
  private drawn = false;
  private lastDraw = 0;

  constructor(
    private readonly mode: 'tty' | 'lines' | 'off',
    private readonly log: ScannerLogger,
    private readonly intervalMs = 5_000,
  ) {}

  update(p: ProgressEvent, final = false): void {
    this.state.set(p.network, p);
    if (this.mode === 'off') return;
    const now = Date.now();
    if (this.mode === 'tty') {
      if (!final && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const parts = [...this.state.values()].map((s) => `${s.network} ${s.done}/${s.total} (${pct(s)}%)`);
      process.stderr.write(`\r\x1b[K[index] ${parts.join(' · ')}`);
      this.drawn = true;
      return;
    }
    const last = this.lastLine.get(p.network) ?? 0;
    if (final || now - last >= this.intervalMs) {
      this.lastLine.set(p.network, now);
      this.log.info(`[index] ${p.network} ${p.done}/${p.total} blocks (${pct(p)}%)`, {
        chain: p.network,
        done: p.done,
        total: p.total,
        block: p.block,
      });
    }
  }

  /** Ends the updating line before a normal log line. */
  clear(): void {
    if (this.drawn) {
      process.stderr.write('\r\x1b[K');
      this.drawn = false;
    }
  }
}

function pct(p: ProgressEvent): number {
  return p.total <= 0 ? 100 : Math.floor((p.done * 100) / p.total);
}
