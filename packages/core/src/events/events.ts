/**
 * The rules of events and webhook delivery that every backend and worker shares
 * (docs/spec.md#webhooks): the events a write records, when
 * an IPO's derived status changes without any write (at an IST midnight), the id of such a
 * change (the same in every process), the Standard Webhooks signature, and the retry
 * schedule. Pure, on Web APIs (`crypto.getRandomValues`) and the `#crypto` import (SHA-256 and
 * HMAC-SHA256: node:crypto on Node, @noble/hashes elsewhere).
 */
import { hmacSha256, sha256Hex } from '#crypto';
import { LRUCache } from 'lru-cache';
import { addDays, DAY_MS, istMidnight, todayInIst, toIsoUtc } from '../model/dates.js';
import { toGmpSnapshot } from '../model/gmp.js';
import { fullTimes } from '../model/subscription.js';
import { randomId } from '../accounts/keys.js';
import { toWireIpo } from '../http/serialize.js';
import { deriveStatus } from '../model/status.js';
import { GMP_FIELDS, SUBSCRIPTION_CATEGORIES, type EventRecord, type EventType, type IpoDates, type IpoRecord, type IpoStatus, type SnapshotRecord, type SubscriptionRecord } from '../model/types.js';


/** A change of an IPO's derived status on an IST day: `from` the day before, `to` on `day`. */
export interface StatusChange {
  day: string;
  from: IpoStatus;
  to: IpoStatus;
}

/**
 * The IST days on which the IPO's derived status changes as the days pass (no write needed),
 * ascending: the status on `day` differs from the status on the day before. Only the dates
 * can move it, so only the days they name (and the day after the closing date) are looked at.
 *
 * @example
 * ```ts
 * statusChanges({ startDate: '2026-11-20', endDate: '2026-11-24', listingDate: '2026-11-27' });
 * // [{ day: '2026-11-20', from: 'upcoming', to: 'open' }, { day: '2026-11-25', from: 'open', to: 'closed' },
 * //  { day: '2026-11-27', from: 'closed', to: 'listed' }]
 * ```
 */
export function statusChanges(ipo: IpoDates): StatusChange[] {
  const closing = ipo.endDate ?? ipo.startDate;
  const candidates = new Set<string>();
  for (const day of [ipo.startDate, closing === null ? null : addDays(closing, 1), ipo.listingDate]) if (day !== null) candidates.add(day);
  const changes: StatusChange[] = [];
  for (const day of [...candidates].sort()) {
    const from = deriveStatus(ipo, addDays(day, -1));
    const to = deriveStatus(ipo, day);
    if (from !== to) changes.push({ day, from, to });
  }
  return changes;
}

/**
 * The status changes that happen at the IST midnights in `(after, upTo]` (epoch ms), each
 * with its IPO id and the instant it happens at, in order of that instant, then IPO id.
 * A scheduler calls it with the last instant it covered and now.
 *
 * @example
 * ```ts
 * dueStatusChanges(ipos, lastRun, now); // [{ ipoId, at, day, from, to }, ...] (now: the injected clock's reading)
 * ```
 */
export function dueStatusChanges(
  ipos: Iterable<IpoDates & { id: string }>,
  after: number,
  upTo: number,
): Array<StatusChange & { ipoId: string; at: number }> {
  const due: Array<StatusChange & { ipoId: string; at: number }> = [];
  for (const ipo of ipos) {
    for (const change of statusChanges(ipo)) {
      const at = istMidnight(change.day);
      if (at > after && at <= upTo) due.push({ ...change, ipoId: ipo.id, at });
    }
  }
  return due.sort((a, b) => a.at - b.at || (a.ipoId < b.ipoId ? -1 : a.ipoId > b.ipoId ? 1 : 0));
}

/**
 * The first instant after `now` (epoch ms) at which some IPO's derived status changes: the
 * 00:00 IST that starts the day of the change. Null when none will.
 *
 * @example
 * ```ts
 * nextStatusChangeAt(ipos, now); // 1764441000000 (a day start, 18:30 UTC), or null
 * ```
 */
export function nextStatusChangeAt(ipos: Iterable<IpoDates>, now: number): number | null {
  let next: number | null = null;
  for (const ipo of ipos) {
    for (const change of statusChanges(ipo)) {
      const at = istMidnight(change.day);
      if (at > now && (next === null || at < next)) next = at;
    }
  }
  return next;
}

/**
 * The id of a status change's event: from the IPO id, the new status and the IST day, so
 * that every process that finds the change names it alike and it is sent once.
 *
 * @example
 * ```ts
 * statusChangeEventId('2026000001', 'open', '2026-11-20'); // 'evt_sc_' + 32 hex digits
 * ```
 */
export function statusChangeEventId(ipoId: string, to: IpoStatus, day: string): string {
  // The first 128 bits of the SHA-256 of the three, NUL-separated, as hex: the ids stored so far.
  return `evt_sc_${sha256Hex(`${ipoId}\u0000${to}\u0000${day}`).slice(0, 32)}`;
}

/** What a data write changed, as the store found it in the write's atomic step. */
export interface WriteChanges {
  /** When the write happened, epoch ms. */
  at: number;
  /**
   * The IPOs written that were not stored (`before` null) or differed from the stored one
   * (`before`: its dates), each with its latest subscription snapshot at `at` after the
   * write (absent: none), which its IPO object carries.
   */
  ipos: ReadonlyArray<{ ipo: IpoRecord; before: IpoDates | null; subscription?: SubscriptionRecord | null }>;
  /** The snapshots written that were not stored or differed from the stored one. */
  snapshots: readonly SnapshotRecord[];
  /** The subscription snapshots written that were not stored or differed from the stored one (absent: none). */
  subscription?: readonly SubscriptionRecord[];
  /** The ids of the IPOs deleted. */
  deleted: readonly string[];
}

/**
 * The events of a data write (docs/spec.md#webhooks), of the types in `types` only (those some
 * enabled endpoint takes): per IPO in order, `ipo.created` or `ipo.updated` (data: the IPO
 * object, its status on the IST day of `at`, no `gmp`) and, for an update that changes that
 * status, `ipo.status_changed` (`{ id, from, to }`); then `gmp.snapshot` per snapshot
 * (`{ ipoId, timestamp, aggregations }`, rupees); then `subscription.snapshot` per
 * subscription snapshot (`{ ipoId, timestamp, times }`); then `ipo.deleted` (`{ id }`) per deletion.
 *
 * @example
 * ```ts
 * eventsOfWrite({ at: now, ipos: [{ ipo, before: null }], snapshots: [], deleted: [] }, new Set(['ipo.created']));
 * // [{ id: 'evt_...', type: 'ipo.created', at: now, body: '{"type":"ipo.created","timestamp":"...","data":{"id":...}}' }]
 * ```
 */
export function eventsOfWrite(changes: WriteChanges, types: ReadonlySet<EventType>): EventRecord[] {
  const events: EventRecord[] = [];
  if (types.size === 0) return events;
  const { at } = changes;
  const timestamp = toIsoUtc(at);
  const today = todayInIst(at);
  const event = (id: string, type: EventType, data: unknown): void => {
    events.push({ id, type, at, body: eventBody(type, timestamp, data) });
  };
  for (const { ipo, before, subscription } of changes.ipos) {
    const status = deriveStatus(ipo, today);
    const type = before === null ? 'ipo.created' : 'ipo.updated';
    if (types.has(type)) event(randomId('evt'), type, toWireIpo(ipo, status, undefined, subscription));
    if (before !== null && types.has('ipo.status_changed')) {
      const from = deriveStatus(before, today);
      if (from !== status) event(statusChangeEventId(ipo.id, status, today), 'ipo.status_changed', { id: ipo.id, from, to: status });
    }
  }
  if (types.has('gmp.snapshot')) {
    for (const snapshot of changes.snapshots) {
      event(randomId('evt'), 'gmp.snapshot', { ipoId: snapshot.ipoId, timestamp: toIsoUtc(snapshot.timestamp), aggregations: toGmpSnapshot(snapshot).aggregations });
    }
  }
  if (types.has('subscription.snapshot')) {
    for (const snapshot of changes.subscription ?? []) {
      event(randomId('evt'), 'subscription.snapshot', { ipoId: snapshot.ipoId, timestamp: toIsoUtc(snapshot.timestamp), times: fullTimes(snapshot.times) });
    }
  }
  if (types.has('ipo.deleted')) for (const id of changes.deleted) event(randomId('evt'), 'ipo.deleted', { id });
  return events;
}

/**
 * The `ipo.status_changed` events of changes found by {@link dueStatusChanges}: each at its
 * midnight, with the id every process gives it.
 *
 * @example
 * ```ts
 * eventsOfStatusChanges(dueStatusChanges(ipos, covered, now));
 * // [{ id: 'evt_sc_...', type: 'ipo.status_changed', at, body: '{"type":"ipo.status_changed","timestamp":"...","data":{"id":"1","from":"upcoming","to":"open"}}' }]
 * ```
 */
export function eventsOfStatusChanges(due: ReadonlyArray<StatusChange & { ipoId: string; at: number }>): EventRecord[] {
  return due.map((c) => ({
    id: statusChangeEventId(c.ipoId, c.to, c.day),
    type: 'ipo.status_changed',
    at: c.at,
    body: eventBody('ipo.status_changed', toIsoUtc(c.at), { id: c.ipoId, from: c.from, to: c.to }),
  }));
}

/**
 * Whether two IPO records are the same in every stored field (an import that writes an IPO
 * unchanged is no `ipo.updated`).
 *
 * @example
 * ```ts
 * sameIpo(stored, { ...stored, about: 'New text' }); // false
 * ```
 */
export function sameIpo(a: IpoRecord, b: IpoRecord): boolean {
  return JSON.stringify(toWireIpo(a, 'open')) === JSON.stringify(toWireIpo(b, 'open'));
}

/**
 * Whether two snapshots of one IPO and instant are the same: sources and aggregations.
 *
 * @example
 * ```ts
 * sameSnapshot(stored, replacement); // false when a source's price moved
 * ```
 */
export function sameSnapshot(a: SnapshotRecord, b: SnapshotRecord): boolean {
  if (a.sources.length !== b.sources.length || GMP_FIELDS.some((f) => a.aggregations[f] !== b.aggregations[f])) return false;
  return a.sources.every((x, i) => x.name === b.sources[i]?.name && x.paise === b.sources[i]?.paise);
}

/**
 * Whether two subscription snapshots of one IPO and instant are the same: every category.
 *
 * @example
 * ```ts
 * sameSubscription(stored, replacement); // false when a category's times moved
 * ```
 */
export function sameSubscription(a: SubscriptionRecord, b: SubscriptionRecord): boolean {
  return SUBSCRIPTION_CATEGORIES.every((c) => (a.times[c] ?? null) === (b.times[c] ?? null));
}

/** The body of an event: keys in this order, JSON written compactly. */
function eventBody(type: EventType, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}

/** The waits before each retry of a failed delivery: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = Object.freeze([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);

/** How long an endpoint may fail without a success before it is disabled: 5 days. */
export const WEBHOOK_DISABLE_AFTER_MS = 5 * DAY_MS;

/** Why the pending deliveries of an endpoint that gets disabled end as failed. */
export const DISABLED_ERROR = 'endpoint disabled';

/** How long settled deliveries are kept by default: 30 days. */
export const DELIVERY_RETENTION_MS = 30 * DAY_MS;

/** How many settled deliveries an endpoint keeps by default (docs/spec.md#webhooks). */
export const DELIVERIES_KEPT_PER_WEBHOOK = 10_000;

/**
 * When a delivery that has failed `attempts` times (the last at `lastAt`) is tried next, or
 * null when it has had all its retries.
 *
 * @example
 * ```ts
 * nextAttemptAt(1, t); // t + 5_000
 * nextAttemptAt(8, t); // null: the first attempt and 7 retries all failed
 * ```
 */
export function nextAttemptAt(attempts: number, lastAt: number): number | null {
  const delay = WEBHOOK_RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? null : lastAt + delay;
}

/** The prefix of a webhook signing secret. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * A new signing secret: `whsec_` and the base64 of 24 random bytes.
 *
 * @example
 * ```ts
 * generateWebhookSecret(); // 'whsec_...' (38 characters)
 * ```
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(24)));
}

/**
 * The Standard Webhooks signature header of a delivery: `v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body`, keyed by the secret's bytes (the base64 after `whsec_`). `timestamp`
 * is Unix seconds.
 *
 * @example
 * ```ts
 * const signature = await signWebhook({ id: 'msg_1', timestamp: 1764000000, body: '{"type":"gmp.snapshot"}', secret });
 * // headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1764000000', 'webhook-signature': signature }
 * ```
 */
export async function signWebhook(input: { id: string; timestamp: number; body: string; secret: string }): Promise<string> {
  return webhookSignature(input);
}

/**
 * {@link signWebhook}, at once (the worker's path: no promise per attempt).
 *
 * @example
 * ```ts
 * webhookSignature({ id: 'msg_1', timestamp: 1_790_000_000, body: '{}', secret }); // 'v1,...'
 * ```
 */
export function webhookSignature(input: { id: string; timestamp: number; body: string; secret: string }): string {
  return `v1,${toBase64(hmacSha256(signingKey(input.secret), `${input.id}.${input.timestamp}.${input.body}`))}`;
}

/**
 * The decoded bytes of the secrets signed with lately: a worker signs with a few secrets over
 * and over. At most this many.
 */
const SIGNING_KEYS = 256;
const signingKeys = new LRUCache<string, Uint8Array>({ max: SIGNING_KEYS });

function signingKey(secret: string): Uint8Array {
  let key = signingKeys.get(secret);
  if (key !== undefined) return key;
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new TypeError('A webhook secret starts with whsec_.');
  key = fromBase64(secret.slice(WEBHOOK_SECRET_PREFIX.length));
  signingKeys.set(secret, key);
  return key;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
