/**
 * Which windows a request draws on, and what the response says about them (docs/spec.md#limits):
 * `RateLimit-*` headers and the 429 body.
 */
import { WINDOW_MS } from './sliding-window.js';
import type { LimitSettings } from './options.js';
import type { Plan, RateLimitOutcome, RateLimitWindow, RateLimitWindowState } from './types.js';

/** A window with its role, as the handler builds it. */
export interface DrawnWindow extends RateLimitWindow {
  /** True for the GMP route's own window, which wins ties. */
  gmp: boolean;
}

/** What the response tells about the limits. */
export interface RateLimitReport {
  headers: Record<string, string>;
  /** Present when the request was refused. */
  refusal?: { quotaPerMinute: number; expiresIn: number };
}

/**
 * The finite windows a request draws on: the account's (or the client address's without
 * a valid key) and, on the GMP route with a key, the account's GMP window.
 *
 * @example
 * ```ts
 * drawnWindows({ limits, account: { id: 'a1', plan: 'pro' }, address: '1.2.3.4', gmpRoute: true });
 * // [{ key: 'acct:a1', quota: 6, gmp: false }, { key: 'gmp:a1', quota: 3, gmp: true }]
 * ```
 */
export function drawnWindows(input: {
  limits: LimitSettings;
  account: { id: string; plan: Plan } | null;
  address: string;
  gmpRoute: boolean;
}): DrawnWindow[] {
  const { limits, account } = input;
  const windows: DrawnWindow[] = [];
  if (account === null) {
    windows.push({ key: `addr:${input.address}`, quota: limits.keyless.perMinute, gmp: false });
  } else {
    windows.push({ key: `acct:${account.id}`, quota: limits[account.plan].perMinute, gmp: false });
    if (input.gmpRoute) windows.push({ key: `gmp:${account.id}`, quota: limits[account.plan].gmpPerMinute, gmp: true });
  }
  return windows.filter((w) => w.quota !== Infinity);
}

/**
 * Headers and, on refusal, the 429 meta from a store's outcome. Admitted: the window
 * closest to refusing (fewest remaining, the GMP window on ties). Refused: the refusing
 * window with the longer wait (the GMP window on equal waits), plus `Retry-After`.
 *
 * @example
 * ```ts
 * reportRateLimit(windows, outcome, now).headers['RateLimit-Remaining']; // '5'
 * ```
 */
export function reportRateLimit(windows: readonly DrawnWindow[], outcome: RateLimitOutcome, now: number): RateLimitReport {
  if (windows.length === 0) return { headers: {} };
  // Plain loops and no closures: this runs on every admitted request.
  let chosen = -1;
  if (outcome.admitted) {
    let best = Infinity;
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i]!;
      const remaining = Math.max(0, w.quota - (outcome.windows[i]?.count ?? 0));
      if (remaining < best || (remaining === best && w.gmp)) {
        best = remaining;
        chosen = i;
      }
    }
  } else {
    let longest = -Infinity;
    for (let i = 0; i < windows.length; i++) {
      const blocking = outcome.windows[i]?.blocking ?? null;
      if (blocking === null) continue;
      const wait = blocking + WINDOW_MS - now;
      if (wait > longest || (wait === longest && windows[i]!.gmp)) {
        longest = wait;
        chosen = i;
      }
    }
  }
  const window = windows[chosen];
  const state = outcome.windows[chosen];
  if (window === undefined || state === undefined) throw new Error('rate limit outcome does not match its windows');
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(window.quota),
    'RateLimit-Remaining': String(Math.max(0, window.quota - state.count)),
    'RateLimit-Reset': String(state.oldest === null ? 0 : secondsUntil(state.oldest, now)),
  };
  if (outcome.admitted) return { headers };
  const expiresIn = Math.max(1, secondsUntil(state.blocking as number, now));
  headers['Retry-After'] = String(expiresIn);
  return { headers, refusal: { quotaPerMinute: window.quota, expiresIn } };
}

/** One of an account's rate-limit windows as it stands now (`getAccountWindows`). */
export interface AccountWindow {
  /** `minute` (every route) or `gmp-minute` (the GMP route's own window). */
  name: 'minute' | 'gmp-minute';
  quota: number;
  /** The window's length. */
  seconds: number;
  /** Requests the window admits now: `max(0, quota - hits inside it)`. */
  remaining: number;
  /** Whole seconds, rounded up, until its oldest hit leaves (as `RateLimit-Reset`); 0 when it holds none. */
  reset: number;
}

/**
 * The windows as they stand, from a store's `peekRateLimit` states (in the order of
 * `windows`): remaining and reset counted as the headers count them.
 *
 * @example
 * ```ts
 * describeWindowsNow([{ key: 'acct:a', quota: 6, gmp: false }], [{ count: 2, oldest: now - 20_000, blocking: null }], now);
 * // [{ name: 'minute', quota: 6, seconds: 60, remaining: 4, reset: 40 }]
 * ```
 */
export function describeWindowsNow(windows: readonly DrawnWindow[], states: readonly RateLimitWindowState[], now: number): AccountWindow[] {
  return windows.map((w, i) => {
    const oldest = states[i]?.oldest ?? null;
    return {
      name: w.gmp ? 'gmp-minute' : 'minute',
      quota: w.quota,
      seconds: WINDOW_MS / 1000,
      remaining: Math.max(0, w.quota - (states[i]?.count ?? 0)),
      reset: oldest === null ? 0 : secondsUntil(oldest, now),
    };
  });
}

/** Whole seconds, rounded up, until a hit at `t` leaves the window. */
function secondsUntil(t: number, now: number): number {
  return Math.max(0, Math.ceil((t + WINDOW_MS - now) / 1000));
}
