/**
 * The sliding windows of a memory store: a Map from window key to a ring buffer of its
 * hit times, so that a hit costs O(1) amortised whatever the quota (the core's
 * `slidingWindowHit` copies the hit list, O(quota) per hit, which a quota of a million
 * cannot afford). The decisions and states are exactly those of `slidingWindowHit`; the
 * storage suite checks it against a model built on that function. Windows whose hits have
 * all left are forgotten by an amortised sweep, without a timer.
 */
import type { RateLimitOutcome, RateLimitWindow, RateLimitWindowState } from '@ipokit/core';

/**
 * Default fewest hits between two sweeps.
 *
 * @example
 * ```ts
 * new RateWindows(DEFAULT_SWEEP_EVERY);
 * ```
 */
export const DEFAULT_SWEEP_EVERY = 1024;

/** Smallest ring: a power of two, enough for the default quotas (6 and 3) without growing twice. */
const MIN_CAPACITY = 8;

/**
 * One window's hits as `slidingWindowHit` would store them, in insertion order (ascending
 * unless a caller's clock went back), oldest at `head`. Capacity is a power of two.
 */
interface Window {
  ring: Float64Array;
  head: number;
  size: number;
  /**
   * The first `gone` hits from `head` had left the window at time `goneAt` for a window
   * length of `goneMs`, hence also at any later time for any shorter window. A refused
   * request must not drop them (a later request with a longer window, or with a clock that
   * went back, may count them again), but it need not look at them twice either.
   */
  gone: number;
  goneAt: number;
  goneMs: number;
  /** Number of the last admitted request charged here, so a key named twice is charged once. */
  charged: number;
}

/**
 * Sliding-window hit lists keyed by window. A sweep runs once the hits since the last
 * one reach `max(sweepEvery, windows kept after it)`, so its O(size) cost is spread over
 * at least as many hits (O(1) amortised), and the map never holds more than the windows
 * alive at the last sweep plus those created since: about twice the windows active in
 * one window length, plus `sweepEvery`, however many distinct keys come and go.
 *
 * A hit is O(1) amortised per window drawn on, whatever the quota: hits that left are
 * dropped from the head of the ring when a request is admitted (each hit is dropped once),
 * the new hit is written at the tail, and the ring doubles when full and halves when a
 * quarter full. A window never holds more than `quota` hits, since a request is admitted
 * only while fewer than `quota` are inside it.
 *
 * @example
 * ```ts
 * const windows = new RateWindows();
 * windows.hit({ now: 0, windowMs: 60_000, windows: [{ key: 'addr:1.2.3.4', quota: 6 }] }).admitted; // true
 * ```
 */
export class RateWindows {
  private windows = new Map<string, Window>();
  private hitsSinceSweep = 0;
  private sweepAfter: number;
  /** The longest window seen: a window is forgotten only when no caller can count its hits. */
  private longestWindowMs = 0;
  /** Admitted requests so far, numbering the charges (see `Window.charged`). */
  private admittedCount = 0;
  /** The latest request time seen by `hit`. */
  private lastNow = -Infinity;
  /** What `sweepIdle` last saw of `lastNow`, and when (monotonic ms). */
  private seenNow = -Infinity;
  private seenAt = 0;

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
   * What one window holds: its stored hits (those that left included, until the next
   * admitted request drops them) and the capacity of its ring; null when it is not kept.
   * For tests and diagnostics.
   *
   * @example
   * ```ts
   * windows.kept('acct:a'); // { hits: 6, capacity: 8 }
   * ```
   */
  kept(key: string): { hits: number; capacity: number } | null {
    const w = this.windows.get(key);
    return w === undefined ? null : { hits: w.size, capacity: w.ring.length };
  }

  /**
   * Charges one request to every window when all have room (see `Store.hitRateLimit`),
   * deciding exactly as the core's `slidingWindowHit` does.
   *
   * @example
   * ```ts
   * windows.hit({ now: Date.now(), windowMs: 60_000, windows: [{ key: 'acct:a', quota: 6 }, { key: 'gmp:a', quota: 3 }] });
   * ```
   */
  hit(input: { now: number; windowMs: number; windows: readonly RateLimitWindow[] }): RateLimitOutcome {
    const { now, windowMs } = input;
    const asked = input.windows;
    if (windowMs > this.longestWindowMs) this.longestWindowMs = windowMs;
    if (now > this.lastNow) this.lastNow = now;
    const n = asked.length;
    const found: Array<Window | undefined> = new Array(n);
    const gone: number[] = new Array(n);
    let admitted = true;
    for (let i = 0; i < n; i++) {
      const w = this.windows.get((asked[i] as RateLimitWindow).key);
      const g = w === undefined ? 0 : leftWindow(w, now, windowMs);
      found[i] = w;
      gone[i] = g;
      if (!((w === undefined ? 0 : w.size - g) < (asked[i] as RateLimitWindow).quota)) admitted = false;
    }
    // Describe every window before charging any: a key named twice sees the same hits.
    const states: RateLimitWindowState[] = new Array(n);
    for (let i = 0; i < n; i++) {
      states[i] = describe(found[i], gone[i] as number, (asked[i] as RateLimitWindow).quota, admitted ? now : null);
    }
    if (admitted) {
      const charge = ++this.admittedCount;
      for (let i = 0; i < n; i++) {
        const key = (asked[i] as RateLimitWindow).key;
        let w = this.windows.get(key);
        if (w === undefined) {
          w = { ring: new Float64Array(MIN_CAPACITY), head: 0, size: 0, gone: 0, goneAt: now, goneMs: windowMs, charged: 0 };
          this.windows.set(key, w);
        } else if (w.charged === charge) {
          continue;
        }
        w.charged = charge;
        append(w, gone[i] as number, now, windowMs);
      }
    }
    if (++this.hitsSinceSweep >= this.sweepAfter) this.sweep(now);
    return { admitted, windows: states };
  }

  /**
   * Each window's state at `now`, charging nothing (see `Store.peekRateLimit`).
   *
   * @example
   * ```ts
   * windows.peek({ now: Date.now(), windowMs: 60_000, windows: [{ key: 'acct:a', quota: 6 }] }); // [{ count: 2, ... }]
   * ```
   */
  peek(input: { now: number; windowMs: number; windows: readonly RateLimitWindow[] }): RateLimitWindowState[] {
    return input.windows.map(({ key, quota }) => {
      const w = this.windows.get(key);
      return describe(w, w === undefined ? 0 : leftWindow(w, input.now, input.windowMs), quota, null);
    });
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
    for (const [key, w] of this.windows) {
      if (w.size === 0 || now - nth(w, w.size - 1) >= windowMs) this.windows.delete(key);
    }
    this.hitsSinceSweep = 0;
    this.sweepAfter = Math.max(this.sweepEvery, this.windows.size);
  }

  /**
   * The timer's sweep, for windows that no request comes to sweep: called every so often
   * with a monotonic clock (`performance.now()`). The request clock is the caller's, so it
   * is estimated: the latest request time seen, moved on by the monotonic time elapsed since
   * a call first saw it. That never runs ahead of a clock that keeps time, so no window is
   * forgotten while a hit inside it could still count; a clock that stands still (a test's)
   * sees its idle windows go after a window length of real time.
   *
   * @example
   * ```ts
   * setInterval(() => windows.sweepIdle(performance.now()), 60_000);
   * ```
   */
  sweepIdle(monotonicNow: number): void {
    if (this.lastNow !== this.seenNow) {
      this.seenNow = this.lastNow;
      this.seenAt = monotonicNow;
      return;
    }
    if (this.windows.size > 0) this.sweep(this.seenNow + (monotonicNow - this.seenAt));
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

/** The i-th stored hit from the head (0 <= i < size). */
function nth(w: Window, i: number): number {
  return w.ring[(w.head + i) & (w.ring.length - 1)] as number;
}

/**
 * How many hits from the head have left the window at `now` (`slidingWindowHit` drops
 * them from the head up to the first hit still inside; a hit "from the future" stops it).
 * Starts after the hits already known to have left when that knowledge still holds.
 */
function leftWindow(w: Window, now: number, windowMs: number): number {
  let i = now >= w.goneAt && windowMs <= w.goneMs ? w.gone : 0;
  while (i < w.size && now - nth(w, i) >= windowMs) i++;
  w.gone = i;
  w.goneAt = now;
  w.goneMs = windowMs;
  return i;
}

/**
 * The state `describeWindow` gives: the window's live hits (those after the first `gone`),
 * followed by the request's time `chargedAt` when it is charged (null when refused).
 */
function describe(w: Window | undefined, gone: number, quota: number, chargedAt: number | null): RateLimitWindowState {
  const live = w === undefined ? 0 : w.size - gone;
  const count = chargedAt === null ? live : live + 1;
  return {
    count,
    oldest: count > 0 ? (hitAt(w, gone, live, chargedAt, 0) as number) : null,
    blocking: count >= quota && count > 0 ? (hitAt(w, gone, live, chargedAt, count - quota) as number) : null,
  };
}

/**
 * The i-th hit of a described window, indexed as `describeWindow` indexes its array:
 * anything but a listed position is undefined.
 */
function hitAt(w: Window | undefined, gone: number, live: number, chargedAt: number | null, i: number): number | undefined {
  if (!Number.isInteger(i) || i < 0) return undefined;
  if (i < live) return nth(w as Window, gone + i);
  return i === live && chargedAt !== null ? chargedAt : undefined;
}

/** Drops the `gone` hits that left from the head and writes `now` at the tail, resizing the ring. */
function append(w: Window, gone: number, now: number, windowMs: number): void {
  let capacity = w.ring.length;
  w.head = (w.head + gone) & (capacity - 1);
  w.size -= gone;
  if (w.size === capacity) {
    resize(w, capacity * 2);
    capacity *= 2;
  } else if (capacity > MIN_CAPACITY && (w.size + 1) * 4 <= capacity) {
    // Halving only at a quarter full keeps resizes O(1) amortised and memory O(hits kept).
    resize(w, capacity / 2);
    capacity /= 2;
  }
  w.ring[(w.head + w.size) & (capacity - 1)] = now;
  w.size++;
  w.gone = 0;
  w.goneAt = now;
  w.goneMs = windowMs;
}

function resize(w: Window, capacity: number): void {
  const ring = new Float64Array(capacity);
  const old = w.ring;
  const first = Math.min(w.size, old.length - w.head);
  ring.set(old.subarray(w.head, w.head + first), 0);
  if (first < w.size) ring.set(old.subarray(0, w.size - first), first);
  w.ring = ring;
  w.head = 0;
}
