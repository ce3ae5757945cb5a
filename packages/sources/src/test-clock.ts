/**
 * A manual clock for the collector's tests: `now` and timers that fire only when the test
 * moves time on, in due order, letting the promises of each fired timer settle.
 */
import type { CollectorTimers } from './collector.js';

export class ManualClock implements CollectorTimers {
  private ms: number;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number | string) {
    this.ms = typeof start === 'number' ? start : Date.parse(start);
  }

  readonly now = (): Date => new Date(this.ms);

  get time(): number {
    return this.ms;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.ms + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** How many timers are set. */
  get timers(): number {
    return this.pending.size;
  }

  /**
   * When set, whether what the fired timers started has ended: {@link settle} then also waits
   * (really, a millisecond at a time, at most 10 s) until it says so, for work that does I/O
   * (a database, a file).
   */
  idle: (() => boolean) | null = null;

  /** Lets every settled promise's callbacks run (several turns of the microtask and macrotask queues), and waits for {@link idle}. */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.idle === null) return;
    for (let waited = 0; !this.idle() && waited < 10_000; waited++) await new Promise<void>((resolve) => setTimeout(resolve, 1));
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Moves time on by `ms`, firing each timer due on the way at its time, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.ms + ms;
    await this.settle();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | null = null;
      for (const entry of this.pending) if (entry[1].at <= end && (next === null || entry[1].at < next[1].at)) next = entry;
      if (next === null) break;
      this.pending.delete(next[0]);
      this.ms = Math.max(this.ms, next[1].at);
      next[1].fn();
      await this.settle();
    }
    this.ms = end;
    await this.settle();
  }
}
