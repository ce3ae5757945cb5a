/**
 * Subscription rules (docs/spec.md#subscription): the wire forms of a subscription snapshot
 * (the IPO object's `subscription`, a point of the subscription route's series), the
 * route's range, and what a category's value may be.
 */
import { DAY_MS, dateToEpochMs, EARLIEST_INSTANT, toIsoUtc } from './dates.js';
import { badParam } from './errors.js';
import { toPaise } from './numbers.js';
import { SUBSCRIPTION_CATEGORIES, type SubscriptionPoint, type SubscriptionRecord, type SubscriptionSnapshot, type SubscriptionTimes } from './types.js';

/**
 * Whether a number is a category's times subscribed: finite, >= 0, at most 2 decimals, and
 * below 10,000,000 (the bound of every number the API carries, docs/spec.md#numbers).
 *
 * @example
 * ```ts
 * isSubscriptionTimes(12.5);  // true
 * isSubscriptionTimes(-1);    // false
 * isSubscriptionTimes(1.234); // false
 * ```
 */
export function isSubscriptionTimes(value: number): boolean {
  return value >= 0 && toPaise(value) !== null;
}

/**
 * Every category of a partial `times` object, in {@link SUBSCRIPTION_CATEGORIES} order,
 * absent ones as null (and `-0` as `0`): the `times` a store keeps.
 *
 * @example
 * ```ts
 * fullTimes({ total: 3.5, qib: 1 }); // { qib: 1, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total: 3.5 }
 * ```
 */
export function fullTimes(times: Partial<SubscriptionTimes>): SubscriptionTimes {
  const full = {} as SubscriptionTimes;
  for (const category of SUBSCRIPTION_CATEGORIES) {
    const value = times[category];
    full[category] = value === undefined || value === null ? null : value + 0;
  }
  return full;
}

/**
 * The IPO object's `subscription` from a stored snapshot.
 *
 * @example
 * ```ts
 * toSubscriptionSnapshot({ ipoId: 'a1', timestamp: Date.UTC(2026, 10, 18, 11), times }).asOf; // '2026-11-18T11:00:00.000Z'
 * ```
 */
export function toSubscriptionSnapshot(record: SubscriptionRecord): SubscriptionSnapshot {
  return { asOf: toIsoUtc(record.timestamp), times: fullTimes(record.times) };
}

/**
 * A point of the subscription route's series from a stored snapshot: its instant, then the
 * categories in order.
 *
 * @example
 * ```ts
 * toSubscriptionPoint(record); // { timestamp: '2026-11-18T11:00:00.000Z', qib: 1.2, nii: null, ..., total: 3.5 }
 * ```
 */
export function toSubscriptionPoint(record: SubscriptionRecord): SubscriptionPoint {
  return { timestamp: toIsoUtc(record.timestamp), ...fullTimes(record.times) };
}

/**
 * The JSON text of {@link toSubscriptionSnapshot}: the bytes of `JSON.stringify` of it,
 * written directly (every IPO object carries one). Null gives `null`.
 *
 * @example
 * ```ts
 * subscriptionJson(null); // 'null'
 * ```
 */
export function subscriptionJson(record: SubscriptionRecord | null): string {
  if (record === null) return 'null';
  const texts = textsOf(record);
  return (texts.snapshot ??= `{"asOf":"${toIsoUtc(record.timestamp)}","times":{${timesJson(record.times, '')}}}`);
}

/**
 * The JSON text of {@link toSubscriptionPoint}: the bytes of `JSON.stringify` of it, written
 * directly and, for a frozen record, kept with it (the subscription route writes every
 * snapshot of an IPO on each request).
 *
 * @example
 * ```ts
 * subscriptionPointJson(record) === JSON.stringify(toSubscriptionPoint(record)); // true
 * ```
 */
export function subscriptionPointJson(record: SubscriptionRecord): string {
  const texts = textsOf(record);
  return (texts.point ??= `{"timestamp":"${toIsoUtc(record.timestamp)}",${timesJson(record.times, '')}}`);
}

/** The categories as JSON members, in order: `"qib":1.5,"nii":null,...`. */
function timesJson(times: Partial<SubscriptionTimes>, text: string): string {
  for (let i = 0; i < SUBSCRIPTION_CATEGORIES.length; i++) {
    const value = times[SUBSCRIPTION_CATEGORIES[i]!];
    // `+ 0` writes -0 as 0, as JSON.stringify does.
    text += CATEGORY_KEYS[i]! + (value === undefined || value === null ? 'null' : String(value + 0));
  }
  return text;
}

/** `"qib":`, `,"nii":`, ...: each category's key as the snapshot's JSON writes it. */
const CATEGORY_KEYS = SUBSCRIPTION_CATEGORIES.map((category, i) => `${i === 0 ? '' : ','}${JSON.stringify(category)}:`);

/** The JSON texts of a snapshot, made when first asked for. */
interface Texts {
  snapshot?: string;
  point?: string;
}

/** The texts of frozen snapshots (a store in memory hands out the same object each time). */
const TEXTS = new WeakMap<SubscriptionRecord, Texts>();

function textsOf(record: SubscriptionRecord): Texts {
  let texts = TEXTS.get(record);
  if (texts === undefined) {
    texts = {};
    if (Object.isFrozen(record)) TEXTS.set(record, texts);
  }
  return texts;
}

/**
 * The subscription route's effective range [start, end] in ms from the optional `from`/`to`
 * dates: `from` absent starts at 2000-01-01T00:00:00.000Z (the earliest instant a dataset may
 * hold), `to` absent ends now, `to` given ends with its whole day. Start after end is a 400
 * naming `from`.
 *
 * @example
 * ```ts
 * resolveSubscriptionRange({ from: null, to: '2026-11-30', now: 0 }); // { start: Date.UTC(2000, 0, 1), end: Date.UTC(2026, 11, 1) - 1 }
 * ```
 */
export function resolveSubscriptionRange(input: { from: string | null; to: string | null; now: number }): { start: number; end: number } {
  const { from, to, now } = input;
  const end = to === null ? now : (dateToEpochMs(to) as number) + DAY_MS - 1;
  const start = from === null ? EARLIEST_INSTANT : (dateToEpochMs(from) as number);
  if (start > end) throw badParam('from', `from must not be after the end of the range (${toIsoUtc(end)}).`);
  return { start, end };
}
