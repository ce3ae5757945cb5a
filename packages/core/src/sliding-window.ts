/**
 * The exact sliding-window rate limit as a pure decision (docs/spec.md#limits): it takes the
 * hits and the time and returns what to keep; it writes nothing and reads no clock.
 */
import type { RateLimitOutcome, RateLimitWindowState } from './types.js';

/** The length of every window: 60 s. */
export const WINDOW_MS = 60_000;

/** Result of {@link slidingWindowHit}: the decision, plus the hits each window keeps. */
export interface SlidingWindowResult extends RateLimitOutcome {
  /** The hits to store for each window afterwards, ascending, at most `quota` each. */
  hits: number[][];
}

/**
 * Decides one request against several windows at `now`. `hits[i]` are the stored hit
 * times of window i (ascending; hits that left the window are ignored). The request is
 * admitted only when every window holds fewer than `quotas[i]` hits, and then it is
 * charged to all of them; otherwise to none.
 *
 * @example
 * ```ts
 * const r = slidingWindowHit({ hits: [[0, 1000]], quotas: [2], now: 30_000, windowMs: 60_000 });
 * r.admitted;              // false
 * r.windows[0].blocking;   // 0: the hit at 0 must leave first
 * ```
 */
export function slidingWindowHit(input: {
  hits: ReadonlyArray<readonly number[]>;
  quotas: readonly number[];
  now: number;
  windowMs: number;
}): SlidingWindowResult {
  const { quotas, now, windowMs } = input;
  const live = input.hits.map((h) => inWindow(h, now, windowMs));
  const admitted = live.every((h, i) => h.length < (quotas[i] as number));
  const hits = live.map((h, i) => {
    if (!admitted) return h;
    const next = h.concat(now);
    const quota = quotas[i] as number;
    // Only the newest `quota` hits can ever decide a later request.
    return next.length > quota ? next.slice(next.length - quota) : next;
  });
  return { admitted, hits, windows: hits.map((h, i) => describeWindow(h, quotas[i] as number)) };
}

/**
 * The state of each window at `now` without charging anything: what a store's
 * `peekRateLimit` reports. `hits[i]` as in {@link slidingWindowHit}.
 *
 * @example
 * ```ts
 * slidingWindowPeek({ hits: [[0, 1000]], quotas: [6], now: 30_000, windowMs: 60_000 });
 * // [{ count: 2, oldest: 0, blocking: null }]
 * ```
 */
export function slidingWindowPeek(input: {
  hits: ReadonlyArray<readonly number[]>;
  quotas: readonly number[];
  now: number;
  windowMs: number;
}): RateLimitWindowState[] {
  return input.hits.map((h, i) => describeWindow(inWindow(h, input.now, input.windowMs), input.quotas[i] as number));
}

/**
 * The state of one window from its live hits (ascending), for headers and 429 bodies.
 *
 * @example
 * ```ts
 * describeWindow([5, 9], 2); // { count: 2, oldest: 5, blocking: 5 }
 * ```
 */
export function describeWindow(hits: readonly number[], quota: number): RateLimitWindowState {
  const count = hits.length;
  return {
    count,
    oldest: count > 0 ? (hits[0] as number) : null,
    blocking: count >= quota && count > 0 ? (hits[count - quota] as number) : null,
  };
}

/** The hits still inside the window at `now` (ascending input, ascending output). */
function inWindow(hits: readonly number[], now: number, windowMs: number): number[] {
  let i = 0;
  while (i < hits.length && now - (hits[i] as number) >= windowMs) i++;
  const out = hits.slice(i);
  // A hit "from the future" (another process's clock ahead of ours) still counts.
  return out;
}
