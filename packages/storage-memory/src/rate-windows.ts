/**
 * The sliding windows of a memory store: a Map from window key to its hits (ascending,
 * at most `quota` of them), decided by the core's `slidingWindowHit`. Windows whose hits
 * have all left are forgotten by an amortised sweep, without a timer.
 */
import { slidingWindowHit } from '@ipokit/core';
import type { RateLimitOutcome, RateLimitWindow } from '@ipokit/core';

/**
 * Default fewest hits between two sweeps.
 *
 * @example
 * ```ts
 * new RateWindows(DEFAULT_SWEEP_EVERY);
 * ```
 */
export const DEFAULT_SWEEP_EVERY = 1024;

const NO_HITS: readonly number[] = Object.freeze([]);

/**
 * Sliding-window hit lists keyed by window. A sweep runs once the hits since the last
 * one reach `max(sweepEvery, windows kept after it)`, so its O(size) cost is spread over
 * at least as many hits (O(1) amortised), and the map never holds more than the windows
 * alive at the last sweep plus those created since: about twice the windows active in
 * one window length, plus `sweepEvery`, however many distinct keys come and go.
 *
 * @example
 * ```ts
 * const windows = new RateWindows();
 * windows.hit({ now: 0, windowMs: 60_000, windows: [{ key: 'addr:1.2.3.4', quota: 6 }] }).admitted; // true
 * ```
 */
export class RateWindows {
  private windows = new Map<string, readonly number[]>();
  private hitsSinceSweep = 0;
  private sweepAfter: number;
  /** The longest window seen: a window is forgotten only when no caller can count its hits. */
  private longestWindowMs = 0;

  constructor(private readonly sweepEvery: number = DEFAULT_SWEEP_EVERY) {
    this.sweepAfter = sweepEvery;
  }

  /**
   * How many windows are kept.
   *
   * @example
   * ```ts
   * windows.size; // 0 for a new set of windows
   * ```
   */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Charges one request to every window when all have room (see `Store.hitRateLimit`).
   *
   * @example
   * ```ts
   * windows.hit({ now: Date.now(), windowMs: 60_000, windows: [{ key: 'acct:a', quota: 6 }, { key: 'gmp:a', quota: 3 }] });
   * ```
   */
  hit(input: { now: number; windowMs: number; windows: readonly RateLimitWindow[] }): RateLimitOutcome {
    const { now, windowMs } = input;
    if (windowMs > this.longestWindowMs) this.longestWindowMs = windowMs;
    const result = slidingWindowHit({
      hits: input.windows.map((w) => this.windows.get(w.key) ?? NO_HITS),
      quotas: input.windows.map((w) => w.quota),
      now,
      windowMs,
    });
    if (result.admitted) {
      input.windows.forEach((w, i) => this.windows.set(w.key, result.hits[i] ?? NO_HITS));
    }
    if (++this.hitsSinceSweep >= this.sweepAfter) this.sweep(now);
    return { admitted: result.admitted, windows: result.windows };
  }

  /**
   * Forgets every window whose newest hit has left the longest window seen.
   *
   * @example
   * ```ts
   * windows.sweep(Date.now());
   * ```
   */
  sweep(now: number): void {
    const windowMs = this.longestWindowMs;
    for (const [key, hits] of this.windows) {
      const newest = hits[hits.length - 1];
      if (newest === undefined || now - newest >= windowMs) this.windows.delete(key);
    }
    this.hitsSinceSweep = 0;
    this.sweepAfter = Math.max(this.sweepEvery, this.windows.size);
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * windows.clear();
   * ```
   */
  clear(): void {
    this.windows = new Map();
    this.hitsSinceSweep = 0;
    this.sweepAfter = this.sweepEvery;
  }
}
