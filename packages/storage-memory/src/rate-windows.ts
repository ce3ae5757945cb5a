/**
 * The rate-limit windows of a memory store (docs/spec.md#limits). A sliding window is a ring
 * buffer of its hit times, one Map per window length, so that a hit costs O(1) amortised
 * whatever the quota (the core's `rateLimitHit` copies the hit list, O(quota) per hit,
 * which a quota of a million cannot afford); a calendar window (an IST day) is a count, one
 * Map per period. The decisions and states are exactly those of `rateLimitHit`; the storage
 * suite checks it against a model built on that function. Windows whose hits have all left,
 * and periods that have ended, are forgotten by an amortised sweep, without a timer.
 */
import type { UsageRow } from '@ipokit/core';
import type { RateLimitOutcome, RateLimitWindow, RateLimitWindowState, UsageCharge } from '@ipokit/core/backend';

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

/** A calendar window's period: its count per key. */
interface Period {
  ms: number;
  start: number;
  counts: Map<string, number>;
}

/** Usage of one account on one IST day, per `keyId + '\u0000' + route`. */
type DayUsage = Map<string, { admitted: number; refused: number }>;

/**
 * The windows of one store, keyed by window. A sweep runs once the hits since the last one
 * reach `max(sweepEvery, windows kept after it)`, so its O(size) cost is spread over at
 * least as many hits (O(1) amortised), and the maps never hold more than the windows alive
 * at the last sweep plus those created since: about twice the windows active in one window
 * length, plus `sweepEvery`, however many distinct keys come and go.
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
 * windows.hit({ now: 0, windows: [{ key: 'addr:1.2.3.4', quota: 6, ms: 60_000 }] }).admitted; // true
 * ```
 */
export class RateWindows {
  /** Sliding windows per length (ms), then per key. */
  private sliding = new Map<number, Map<string, Window>>();
  /** Calendar windows per `ms + '/' + start`. */
  private periods = new Map<string, Period>();
  /** The period a request last used, if still kept. */
  private lastPeriod: Period | undefined;
  /** Usage per account, then per IST day. */
  private usage = new Map<string, Map<string, DayUsage>>();
  private hitsSinceSweep = 0;
  private sweepAfter: number;
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
   * How many windows are kept (sliding windows and calendar counts).
   *
   * @example
   * ```ts
   * windows.size; // 0 for a new set of windows
   * ```
   */
  get size(): number {
    let n = 0;
    for (const m of this.sliding.values()) n += m.size;
    for (const p of this.periods.values()) n += p.counts.size;
    return n;
  }

  /**
   * What one sliding window holds: its stored hits (those that left included, until the
   * next admitted request drops them) and the capacity of its ring; null when it is not
   * kept. For tests and diagnostics.
   *
   * @example
   * ```ts
   * windows.kept('acct:a'); // { hits: 6, capacity: 8 } (the 60 s window)
   * ```
   */
  kept(key: string, ms = 60_000): { hits: number; capacity: number } | null {
    const w = this.sliding.get(ms)?.get(key);
    return w === undefined ? null : { hits: w.size, capacity: w.ring.length };
  }

  /**
   * Charges one request to every window when all have room (see `RateLimiter.hitRateLimit`),
   * deciding exactly as the core's `rateLimitHit` does, and counts its usage.
   *
   * @example
   * ```ts
   * windows.hit({ now: Date.now(), windows: [{ key: 'acct:a', quota: 6, ms: 60_000 }, { key: 'gmp:a', quota: 3, ms: 60_000 }] });
   * ```
   */
  hit(input: { now: number; windows: readonly RateLimitWindow[]; usage?: UsageCharge }): RateLimitOutcome {
    const { now } = input;
    const asked = input.windows;
    if (now > this.lastNow) this.lastNow = now;
    const n = asked.length;
    // Each window's record as found (a Window, a Period, or undefined) and its live count.
    const found: Array<Window | Period | undefined> = new Array(n);
    const counts: number[] = new Array(n);
    let admitted = true;
    for (let i = 0; i < n; i++) {
      const a = asked[i]!;
      let live: number;
      if (a.start === undefined) {
        const w = this.sliding.get(a.ms)?.get(a.key);
        const g = w === undefined ? 0 : leftWindow(w, now, a.ms);
        found[i] = w;
        counts[i] = g;
        live = w === undefined ? 0 : w.size - g;
      } else {
        const period = this.period(a.ms, a.start);
        found[i] = period;
        live = period?.counts.get(a.key) ?? 0;
        counts[i] = live;
      }
      if (!(live < a.quota)) admitted = false;
    }
    // Describe every window before charging any: a key named twice sees the same hits.
    const states: RateLimitWindowState[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const a = asked[i]!;
      if (a.start === undefined) {
        states[i] = describe(found[i] as Window | undefined, counts[i]!, a.quota, admitted ? now : null);
      } else {
        const count = counts[i]! + (admitted ? 1 : 0);
        states[i] = { count, oldest: count > 0 ? a.start : null, blocking: count > 0 && count >= a.quota ? a.start : null };
      }
    }
    if (admitted) {
      const charge = ++this.admittedCount;
      for (let i = 0; i < n; i++) {
        const a = asked[i]!;
        if (a.start !== undefined) {
          if (namedBefore(asked, i)) continue;
          let period = found[i] as Period | undefined;
          if (period === undefined) {
            // (a window named twice found no period either time: the first charge made it)
            period = this.period(a.ms, a.start);
            if (period === undefined) {
              period = { ms: a.ms, start: a.start, counts: new Map() };
              this.periods.set(periodId(a.ms, a.start), period);
              this.lastPeriod = period;
            }
          }
          period.counts.set(a.key, counts[i]! + 1);
          continue;
        }
        let w = found[i] as Window | undefined;
        if (w === undefined) {
          let byKey = this.sliding.get(a.ms);
          if (byKey === undefined) this.sliding.set(a.ms, (byKey = new Map()));
          w = byKey.get(a.key);
          if (w === undefined) {
            w = { ring: new Float64Array(MIN_CAPACITY), head: 0, size: 0, gone: 0, goneAt: now, goneMs: a.ms, charged: 0 };
            byKey.set(a.key, w);
          }
        }
        if (w.charged === charge) continue;
        w.charged = charge;
        append(w, counts[i]!, now, a.ms);
      }
    }
    if (input.usage !== undefined) this.count(input.usage, admitted);
    if (++this.hitsSinceSweep >= this.sweepAfter) this.sweep(now);
    return { admitted, windows: states };
  }

  /** The calendar period `(ms, start)`, or undefined; the last one used is kept at hand (all of a day's requests use it). */
  private period(ms: number, start: number): Period | undefined {
    const last = this.lastPeriod;
    if (last !== undefined && last.start === start && last.ms === ms) return last;
    const period = this.periods.get(periodId(ms, start));
    if (period !== undefined) this.lastPeriod = period;
    return period;
  }

  /**
   * Each window's state at `now`, charging nothing (see `RateLimiter.peekRateLimit`).
   *
   * @example
   * ```ts
   * windows.peek({ now: Date.now(), windows: [{ key: 'acct:a', quota: 6, ms: 60_000 }] }); // [{ count: 2, ... }]
   * ```
   */
  peek(input: { now: number; windows: readonly RateLimitWindow[] }): RateLimitWindowState[] {
    return input.windows.map((a) => {
      if (a.start !== undefined) {
        const count = this.period(a.ms, a.start)?.counts.get(a.key) ?? 0;
        return { count, oldest: count > 0 ? a.start : null, blocking: count > 0 && count >= a.quota ? a.start : null };
      }
      const w = this.sliding.get(a.ms)?.get(a.key);
      return describe(w, w === undefined ? 0 : leftWindow(w, input.now, a.ms), a.quota, null);
    });
  }

  /**
   * The usage counted for an account (see `RateLimiter.readUsage`).
   *
   * @example
   * ```ts
   * windows.readUsage({ accountId: 'acct_1', from: '2026-11-01', to: '2026-11-30' });
   * // [{ day: '2026-11-24', keyId: 'key_1', route: 'list', admitted: 3, refused: 0 }]
   * ```
   */
  readUsage(query: { accountId: string; from: string; to: string; keyId?: string }): UsageRow[] {
    const rows: UsageRow[] = [];
    const days = this.usage.get(query.accountId);
    if (days === undefined) return rows;
    for (const [day, byKey] of days) {
      if (day < query.from || day > query.to) continue;
      for (const [id, c] of byKey) {
        const cut = id.indexOf('\u0000');
        const keyId = id.slice(0, cut);
        if (query.keyId !== undefined && keyId !== query.keyId) continue;
        rows.push({ day, keyId, route: id.slice(cut + 1) as UsageRow['route'], admitted: c.admitted, refused: c.refused });
      }
    }
    const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    return rows.sort((a, b) => cmp(a.day, b.day) || cmp(a.keyId, b.keyId) || cmp(a.route, b.route));
  }

  /**
   * Forgets every sliding window whose newest hit has left it, and every period that ended
   * a period ago (a process whose clock lags may still charge the one before).
   *
   * @example
   * ```ts
   * windows.sweep(Date.now());
   * ```
   */
  sweep(now: number): void {
    let kept = 0;
    for (const [ms, byKey] of this.sliding) {
      for (const [key, w] of byKey) {
        if (w.size === 0 || now - nth(w, w.size - 1) >= ms) byKey.delete(key);
      }
      if (byKey.size === 0) this.sliding.delete(ms);
      kept += byKey.size;
    }
    for (const [id, p] of this.periods) {
      if (now >= p.start + 2 * p.ms) {
        this.periods.delete(id);
        if (this.lastPeriod === p) this.lastPeriod = undefined;
      } else kept += p.counts.size;
    }
    this.hitsSinceSweep = 0;
    this.sweepAfter = Math.max(this.sweepEvery, kept);
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
    if (this.sliding.size > 0 || this.periods.size > 0) this.sweep(this.seenNow + (monotonicNow - this.seenAt));
  }

  /**
   * Forgets every window and all usage.
   *
   * @example
   * ```ts
   * windows.clear();
   * ```
   */
  clear(): void {
    this.sliding = new Map();
    this.periods = new Map();
    this.lastPeriod = undefined;
    this.usage = new Map();
    this.hitsSinceSweep = 0;
    this.sweepAfter = this.sweepEvery;
  }

  private count(u: UsageCharge, admitted: boolean): void {
    let days = this.usage.get(u.accountId);
    if (days === undefined) this.usage.set(u.accountId, (days = new Map()));
    let byKey = days.get(u.day);
    if (byKey === undefined) days.set(u.day, (byKey = new Map()));
    const id = `${u.keyId}\u0000${u.route}`;
    let c = byKey.get(id);
    if (c === undefined) byKey.set(id, (c = { admitted: 0, refused: 0 }));
    if (admitted) c.admitted++;
    else c.refused++;
  }
}

function periodId(ms: number, start: number): string {
  return `${ms}/${start}`;
}

/** Whether the calendar window `asked[i]` was named earlier in the same request. */
function namedBefore(asked: readonly RateLimitWindow[], i: number): boolean {
  const a = asked[i]!;
  for (let j = 0; j < i; j++) {
    const b = asked[j]!;
    if (b.key === a.key && b.ms === a.ms && b.start === a.start) return true;
  }
  return false;
}

/** The i-th stored hit from the head (0 <= i < size). */
function nth(w: Window, i: number): number {
  return w.ring[(w.head + i) & (w.ring.length - 1)] as number;
}

/**
 * How many hits from the head have left the window at `now` (`rateLimitHit` drops
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
