/**
 * The exact rate-limit windows as a pure decision (docs/spec.md#limits): it takes each
 * window's stored hits and the time and returns what to keep; it writes nothing and reads no
 * clock. Every backend's limiter is pinned to these two functions by `testLimiter`.
 */
import type { RateLimitOutcome, RateLimitWindowState } from '../model/types.js';

/** The length of the minute windows: 60 s. */
export const WINDOW_MS = 60_000;

/** One window as {@link rateLimitHit} takes it: its rule and the hits stored for it (ascending). */
export interface WindowHits {
  quota: number;
  /** The window's length (ms). */
  ms: number;
  /** A calendar window's start; absent for a sliding window. */
  start?: number;
  /** The hit times stored for this window, ascending. */
  hits: readonly number[];
}

/** Result of {@link rateLimitHit}: the decision, plus the hits each window keeps. */
export interface RateLimitHitResult extends RateLimitOutcome {
  /**
   * The hits to store for each window afterwards, ascending: at most `quota` of a sliding
   * window (only the newest `quota` can ever decide a later request); every hit of a
   * calendar window, whose count is their number (a backend keeps the count only).
   */
  hits: number[][];
}

/**
 * Decides one request against several windows at `now`. A sliding window counts its hits
 * with `now - t < ms`; a calendar window all the hits charged to it (its period is its
 * identity: another `start` is another window). The request is admitted only when every
 * window holds fewer than its quota, and then it is charged to all of them; otherwise to
 * none.
 *
 * @example
 * ```ts
 * const r = rateLimitHit({ now: 30_000, windows: [{ quota: 2, ms: 60_000, hits: [0, 1000] }] });
 * r.admitted;              // false
 * r.windows[0].blocking;   // 0: the hit at 0 must leave first
 * ```
 */
export function rateLimitHit(input: { windows: readonly WindowHits[]; now: number }): RateLimitHitResult {
  const { now } = input;
  const live = input.windows.map((w) => liveHits(w, now));
  const admitted = live.every((h, i) => h.length < input.windows[i]!.quota);
  const hits = live.map((h, i) => {
    if (!admitted) return h;
    const w = input.windows[i]!;
    const next = h.concat(now);
    return w.start === undefined && next.length > w.quota ? next.slice(next.length - w.quota) : next;
  });
  return { admitted, hits, windows: hits.map((h, i) => describeWindow(h, input.windows[i]!)) };
}

/**
 * The state of each window at `now` without charging anything: what a limiter's
 * `peekRateLimit` reports.
 *
 * @example
 * ```ts
 * rateLimitPeek({ now: 30_000, windows: [{ quota: 6, ms: 60_000, hits: [0, 1000] }] });
 * // [{ count: 2, oldest: 0, blocking: null }]
 * ```
 */
export function rateLimitPeek(input: { windows: readonly WindowHits[]; now: number }): RateLimitWindowState[] {
  return input.windows.map((w) => describeWindow(liveHits(w, input.now), w));
}

/**
 * The state of one window from its live hits (ascending), for headers and 429 bodies. A
 * calendar window is described by its count and its `start`, which is both its oldest and
 * its blocking time: it frees its places at `start + ms` all at once.
 *
 * @example
 * ```ts
 * describeWindow([5, 9], { quota: 2 });                 // { count: 2, oldest: 5, blocking: 5 }
 * describeWindow([5, 9], { quota: 2, start: 0 });       // { count: 2, oldest: 0, blocking: 0 }
 * ```
 */
export function describeWindow(hits: readonly number[], window: { quota: number; start?: number }): RateLimitWindowState {
  const count = hits.length;
  const { quota, start } = window;
  if (start !== undefined) return { count, oldest: count > 0 ? start : null, blocking: count > 0 && count >= quota ? start : null };
  return {
    count,
    oldest: count > 0 ? hits[0]! : null,
    blocking: count >= quota && count > 0 ? hits[count - quota]! : null,
  };
}

/** The hits that count at `now`: all of a calendar window's; a sliding window's inside it. */
function liveHits(w: WindowHits, now: number): number[] {
  if (w.start !== undefined) return w.hits.slice();
  let i = 0;
  while (i < w.hits.length && now - w.hits[i]! >= w.ms) i++;
  // A hit "from the future" (another process's clock ahead of ours) still counts.
  return w.hits.slice(i);
}
