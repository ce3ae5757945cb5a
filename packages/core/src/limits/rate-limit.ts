/**
 * Which windows a request draws on, and what the response says about them (docs/spec.md#limits):
 * the `RateLimit` headers (draft 6 and draft 11 of the IETF document) and the 429 body.
 */
import { DAY_MS, istDayStart } from '../model/dates.js';
import { WINDOW_MS } from './sliding-window.js';
import type { LimitSettings, RateLimitHeaders } from '../model/options.js';
import type { Plan, RateLimitOutcome, RateLimitWindow, RateLimitWindowState, RateWindowName } from '../model/types.js';

/** The length of the hour window. */
export const HOUR_MS = 3_600_000;

/** A window with its role, as the handler builds it. */
export interface DrawnWindow extends RateLimitWindow {
  name: RateWindowName;
  /** True for the GMP route's own windows (`gmp-minute`, `gmp-day`), which win ties. */
  gmp: boolean;
  /** The per-minute quota of the window's family, for the 429's `quotaPerMinute`; null when that window is off. */
  familyPerMinute: number | null;
}

/** The 429's `meta`, from the refusing window. */
export interface RateLimitRefusal {
  quotaPerMinute: number | null;
  expiresIn: number;
  window: RateWindowName;
  quota: number;
}

/** What the response tells about the limits. */
export interface RateLimitReport {
  headers: Record<string, string>;
  /** Present when the request was refused. */
  refusal?: RateLimitRefusal;
}


/**
 * The finite windows a request draws on, in the order of `RATE_WINDOWS`: the account's
 * `minute`, `hour` and `day` (or the client address's, without a valid key) and, on the GMP
 * route with a key, the account's `gmp-minute` and `gmp-day`. A quota of `Infinity` leaves
 * its window out.
 *
 * @example
 * ```ts
 * drawnWindows({ limits, account: { id: 'a1', plan: 'pro' }, address: '1.2.3.4', gmpRoute: true, now });
 * // [{ name: 'minute', key: 'acct:a1', quota: 6, ms: 60000, ... }, { name: 'gmp-minute', key: 'gmp:a1', quota: 3, ... }]
 * ```
 */
export function drawnWindows(input: {
  limits: LimitSettings;
  account: { id: string; plan: Plan } | null;
  address: string;
  gmpRoute: boolean;
  now: number;
}): DrawnWindow[] {
  const { limits, account } = input;
  const q = account === null ? limits.keyless : limits[account.plan];
  const owner = account === null ? `addr:${input.address}` : `acct:${account.id}`;
  const perMinute = finiteOrNull(q.perMinute);
  const windows: DrawnWindow[] = [];
  // (no closure for the day's start: this runs on every request)
  let dayStart = NaN;
  if (q.perMinute !== Infinity) windows.push({ name: 'minute', key: owner, quota: q.perMinute, ms: WINDOW_MS, gmp: false, familyPerMinute: perMinute });
  if (q.perHour !== Infinity) windows.push({ name: 'hour', key: owner, quota: q.perHour, ms: HOUR_MS, gmp: false, familyPerMinute: perMinute });
  if (q.perDay !== Infinity) {
    dayStart = istDayStart(input.now);
    windows.push({ name: 'day', key: owner, quota: q.perDay, ms: DAY_MS, start: dayStart, gmp: false, familyPerMinute: perMinute });
  }
  if (account !== null && input.gmpRoute) {
    const p = limits[account.plan];
    const gmpPerMinute = finiteOrNull(p.gmpPerMinute);
    const gmp = `gmp:${account.id}`;
    if (p.gmpPerMinute !== Infinity) windows.push({ name: 'gmp-minute', key: gmp, quota: p.gmpPerMinute, ms: WINDOW_MS, gmp: true, familyPerMinute: gmpPerMinute });
    if (p.gmpPerDay !== Infinity) {
      if (Number.isNaN(dayStart)) dayStart = istDayStart(input.now);
      windows.push({ name: 'gmp-day', key: gmp, quota: p.gmpPerDay, ms: DAY_MS, start: dayStart, gmp: true, familyPerMinute: gmpPerMinute });
    }
  }
  return windows;
}

/**
 * Headers and, on refusal, the 429 meta from a limiter's outcome. Admitted: the window
 * closest to refusing (fewest remaining), ties going to a GMP window, then to the longer
 * window. Refused: the refusing window with the longest wait in ms, ties alike, plus
 * `Retry-After` whatever `mode` says.
 *
 * @example
 * ```ts
 * reportRateLimit(windows, outcome, now, 'draft-6').headers['RateLimit-Remaining']; // '5'
 * ```
 */
export function reportRateLimit(windows: readonly DrawnWindow[], outcome: RateLimitOutcome, now: number, mode: RateLimitHeaders = 'draft-6'): RateLimitReport {
  if (windows.length === 0) return { headers: {} };
  // Plain loops and no closures: this runs on every admitted request.
  let chosen = -1;
  let best = 0;
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i]!;
    const state = outcome.windows[i];
    if (state === undefined) throw new Error('rate limit outcome does not match its windows');
    let score: number;
    if (outcome.admitted) {
      score = -Math.max(0, w.quota - state.count); // fewer remaining is closer to refusing
    } else {
      if (state.blocking === null) continue;
      score = state.blocking + w.ms - now; // the longest wait refuses
    }
    if (chosen < 0 || score > best || (score === best && wins(w, windows[chosen]!))) {
      best = score;
      chosen = i;
    }
  }
  const window = windows[chosen];
  const state = outcome.windows[chosen];
  if (window === undefined || state === undefined) throw new Error('rate limit outcome refused with no full window');
  const remaining = Math.max(0, window.quota - state.count);
  const reset = state.oldest === null ? 0 : secondsUntil(state.oldest + window.ms, now);
  const headers: Record<string, string> = {};
  if (mode === 'draft-6' || mode === 'both') {
    headers['RateLimit-Limit'] = String(window.quota);
    headers['RateLimit-Remaining'] = String(remaining);
    headers['RateLimit-Reset'] = String(reset);
  }
  if (mode === 'draft-11' || mode === 'both') {
    let policy = '';
    for (const w of windows) policy += `${policy === '' ? '' : ', '}"${w.name}";q=${w.quota};w=${w.ms / 1000}`;
    headers['RateLimit-Policy'] = policy;
    headers['RateLimit'] = `"${window.name}";r=${remaining};t=${reset}`;
  }
  if (outcome.admitted) return { headers };
  const expiresIn = Math.max(1, secondsUntil((state.blocking as number) + window.ms, now));
  headers['Retry-After'] = String(expiresIn);
  return { headers, refusal: { quotaPerMinute: window.familyPerMinute, expiresIn, window: window.name, quota: window.quota } };
}

/** On equal standing: a GMP window before a main one, then the longer window. */
function wins(a: DrawnWindow, b: DrawnWindow): boolean {
  if (a.gmp !== b.gmp) return a.gmp;
  return a.ms > b.ms;
}

/** One of an account's rate-limit windows as it stands now (`getAccountWindows`). */
export interface AccountWindow {
  name: RateWindowName;
  quota: number;
  /** The window's length. */
  seconds: number;
  /** Requests the window admits now: `max(0, quota - hits inside it)`. */
  remaining: number;
  /** Whole seconds, rounded up, until its oldest hit leaves (a day window: until 00:00 IST), as `RateLimit-Reset`; 0 when it holds none. */
  reset: number;
}

/**
 * The windows as they stand, from a limiter's `peekRateLimit` states (in the order of
 * `windows`): remaining and reset counted as the headers count them.
 *
 * @example
 * ```ts
 * describeWindowsNow(drawnWindows({ limits, account, address: '', gmpRoute: false, now }), states, now);
 * // [{ name: 'minute', quota: 6, seconds: 60, remaining: 4, reset: 40 }]
 * ```
 */
export function describeWindowsNow(windows: readonly DrawnWindow[], states: readonly RateLimitWindowState[], now: number): AccountWindow[] {
  return windows.map((w, i) => {
    const oldest = states[i]?.oldest ?? null;
    return {
      name: w.name,
      quota: w.quota,
      seconds: w.ms / 1000,
      remaining: Math.max(0, w.quota - (states[i]?.count ?? 0)),
      reset: oldest === null ? 0 : secondsUntil(oldest + w.ms, now),
    };
  });
}

/** Whole seconds, rounded up, from `now` until `t` (0 when it has passed). */
function secondsUntil(t: number, now: number): number {
  return Math.max(0, Math.ceil((t - now) / 1000));
}

function finiteOrNull(n: number): number | null {
  return n === Infinity ? null : n;
}
