/**
 * Webhook endpoints, events and deliveries held in one process's memory (docs/spec.md#webhooks):
 * the `WebhookStore` part of the memory store and of the reference store, so both follow the
 * one definition here, and PostgreSQL is pinned to it by the webhook suite of
 * `@ipokit/core/testing`. Synchronous: a store calls it inside one of its atomic steps.
 */
import { DAY_MS, toIsoUtc } from './dates.js';
import { dueStatusChanges, eventsOfStatusChanges, nextStatusChangeAt } from './events.js';
import { randomBase62 } from './keys.js';
import { istDayStart } from './dates.js';
import { compareCodePoints } from './status.js';
import type {
  ClaimedDelivery,
  DeliveryRecord,
  DeliveryResult,
  EventRecord,
  EventType,
  IpoDates,
  WebhookRecord,
} from './types.js';

/** Why the pending deliveries of an endpoint that gets disabled end as failed. */
export const DISABLED_ERROR = 'endpoint disabled';

interface Row {
  record: DeliveryRecord;
  lease: string | null;
  leaseUntil: number;
  /** Tie-break of the due order: creation order. */
  seq: number;
}

interface Endpoint {
  record: WebhookRecord;
  types: ReadonlySet<string>;
  /** When the current run of failed attempts began; null after a success. */
  failingSince: number | null;
}

/**
 * The endpoints, events and deliveries of one store object.
 *
 * @example
 * ```ts
 * const outbox = new MemoryOutbox();
 * outbox.insertWebhook(webhook);
 * outbox.record(eventsOfWrite(changes, outbox.subscribedTypes()), now);
 * outbox.claim({ now, limit: 10, perWebhook: 4, leaseMs: 60_000, busy: new Map() });
 * ```
 */
export class MemoryOutbox {
  private endpoints = new Map<string, Endpoint>();
  private events = new Map<string, EventRecord & { refs: number }>();
  private deliveries = new Map<string, Row>();
  /**
   * Pending deliveries that are not leased, per endpoint, each a binary heap by
   * (nextAttemptAt, seq): a claim looks at each endpoint's first only, so endpoints that are
   * skipped or at their `perWebhook` cost nothing however much they have waiting.
   */
  private queues = new Map<string, Row[]>();
  private leased = new Map<string, Row>();
  /** No lease runs out before this: until then a claim need not look through them. */
  private leasesLastUntil = Infinity;
  private seq = 0;
  private leases = 0;
  private covered: number | null = null;
  private listeners = new Set<() => void>();
  private wakeQueued = false;

  /**
   * Stores an endpoint (a copy).
   *
   * @example
   * ```ts
   * outbox.insertWebhook(webhook);
   * ```
   */
  insertWebhook(webhook: WebhookRecord): void {
    this.endpoints.set(webhook.id, { record: copyWebhook(webhook), types: new Set(webhook.events), failingSince: null });
  }

  /**
   * The account's endpoints ordered by `createdAt`, then `id`.
   *
   * @example
   * ```ts
   * outbox.listWebhooks('acct_1');
   * ```
   */
  listWebhooks(accountId: string): WebhookRecord[] {
    const out = [...this.endpoints.values()].map((e) => e.record).filter((w) => w.accountId === accountId);
    return out.sort((a, b) => compareCodePoints(a.createdAt, b.createdAt) || compareCodePoints(a.id, b.id)).map(copyWebhook);
  }

  /**
   * The endpoint with this id, or null.
   *
   * @example
   * ```ts
   * outbox.getWebhook('wh_1');
   * ```
   */
  getWebhook(id: string): WebhookRecord | null {
    const e = this.endpoints.get(id);
    return e === undefined ? null : copyWebhook(e.record);
  }

  /**
   * Deletes an endpoint and its deliveries; false for an unknown id.
   *
   * @example
   * ```ts
   * outbox.deleteWebhook('wh_1'); // true
   * ```
   */
  deleteWebhook(id: string): boolean {
    if (!this.endpoints.delete(id)) return false;
    for (const row of [...this.deliveries.values()]) if (row.record.webhookId === id) this.drop(row);
    this.queues.delete(id);
    return true;
  }

  /**
   * Deletes the endpoints of an account (when the account goes).
   *
   * @example
   * ```ts
   * outbox.deleteAccount('acct_1');
   * ```
   */
  deleteAccount(accountId: string): void {
    for (const e of [...this.endpoints.values()]) if (e.record.accountId === accountId) this.deleteWebhook(e.record.id);
  }

  /**
   * The event types some enabled endpoint takes: the only ones worth building.
   *
   * @example
   * ```ts
   * outbox.subscribedTypes(); // Set { 'ipo.status_changed' }
   * ```
   */
  subscribedTypes(): Set<EventType> {
    const types = new Set<EventType>();
    for (const e of this.endpoints.values()) if (e.record.disabledAt === null) for (const t of e.record.events) types.add(t as EventType);
    return types;
  }

  /**
   * Records events not recorded before (by id), each with one pending delivery, due at `due`,
   * per enabled endpoint that takes its type; an event no endpoint takes is not kept.
   * Resolves to how many events were recorded.
   *
   * @example
   * ```ts
   * outbox.record(events, now); // 2
   * ```
   */
  record(events: readonly EventRecord[], due: number): number {
    let recorded = 0;
    for (const event of events) {
      if (this.events.has(event.id)) continue;
      let refs = 0;
      for (const e of this.endpoints.values()) {
        if (e.record.disabledAt !== null || !e.types.has(event.type)) continue;
        this.addDelivery(event, e.record.id, due);
        refs++;
      }
      if (refs === 0) continue;
      this.events.set(event.id, { ...event, refs });
      recorded++;
    }
    if (recorded > 0) this.wake();
    return recorded;
  }

  /**
   * Records the status changes due in `(covered, now]` (see `WebhookStore.recordStatusChanges`).
   *
   * @example
   * ```ts
   * outbox.recordStatusChanges(ipos, now); // { recorded: 1, nextAt: 1764441000000 }
   * ```
   */
  recordStatusChanges(ipos: Iterable<IpoDates & { id: string }>, now: number): { recorded: number; nextAt: number | null } {
    const list = [...ipos];
    const covered = this.covered ?? istDayStart(now) - 1;
    let recorded = 0;
    if (now > covered) {
      if (this.subscribedTypes().has('ipo.status_changed')) recorded = this.record(eventsOfStatusChanges(dueStatusChanges(list, covered, now)), now);
      this.covered = now;
    }
    return { recorded, nextAt: nextStatusChangeAt(list, now) };
  }

  /**
   * Leases due deliveries (see `WebhookStore.claimDeliveries`).
   *
   * @example
   * ```ts
   * outbox.claim({ now, limit: 64, perWebhook: 4, leaseMs: 60_000, busy: new Map() });
   * ```
   */
  claim(input: { now: number; limit: number; perWebhook: number; leaseMs: number; busy: ReadonlyMap<string, number> }): ClaimedDelivery[] {
    const { now } = input;
    if (now >= this.leasesLastUntil) {
      this.leasesLastUntil = Infinity;
      for (const row of this.leased.values()) {
        if (row.leaseUntil > now) {
          this.leasesLastUntil = Math.min(this.leasesLastUntil, row.leaseUntil);
          continue;
        }
        // (deleting the entry being visited leaves the iteration as it was)
        this.leased.delete(row.record.id);
        row.lease = null;
        this.push(row);
      }
    }
    const open: Array<{ endpoint: Endpoint; queue: Row[]; taken: number }> = [];
    for (const [id, queue] of this.queues) {
      const endpoint = this.endpoints.get(id);
      if (endpoint === undefined || endpoint.record.disabledAt !== null) {
        // Its endpoint was deleted (its deliveries with it) or disabled: what is still pending
        // (an attempt in flight then, and failed since) ends as the others did.
        if (endpoint !== undefined) for (const row of queue) if (row.record.state === 'pending') this.settleDisabled(row);
        this.queues.delete(id);
        continue;
      }
      // (what the caller has in flight to it counts as taken)
      const taken = input.busy.get(id) ?? 0;
      if (taken < input.perWebhook) open.push({ endpoint, queue, taken });
    }
    const claimed: ClaimedDelivery[] = [];
    while (claimed.length < input.limit) {
      // The endpoint whose first delivery is due first, among those with room.
      let best: (typeof open)[number] | null = null;
      for (const c of open) {
        const top = this.first(c.queue);
        if (top === undefined || c.taken >= input.perWebhook || top.record.nextAttemptAt! > now) continue;
        if (best === null || before(top, best.queue[0]!)) best = c;
      }
      if (best === null) break;
      const row = pop(best.queue);
      best.taken++;
      // (unique within this store object, which is all a lease must be here)
      row.lease = `l${++this.leases}`;
      row.leaseUntil = now + input.leaseMs;
      this.leased.set(row.record.id, row);
      this.leasesLastUntil = Math.min(this.leasesLastUntil, row.leaseUntil);
      const event = this.events.get(row.record.eventId)!;
      claimed.push({ delivery: { ...row.record }, lease: row.lease, url: best.endpoint.record.url, secret: best.endpoint.record.secret, body: event.body });
    }
    return claimed;
  }

  /** A queue's first row that is still pending and stored (others are dropped from it here). */
  private first(queue: Row[]): Row | undefined {
    while (queue.length > 0 && (queue[0]!.record.state !== 'pending' || !this.deliveries.has(queue[0]!.record.id))) pop(queue);
    return queue[0];
  }

  /**
   * Settles leased deliveries (see `WebhookStore.finishDeliveries`).
   *
   * @example
   * ```ts
   * outbox.finish([{ id, lease, at: now, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: now - 5 * DAY_MS }]);
   * ```
   */
  finish(results: readonly DeliveryResult[]): void {
    for (const r of results) {
      const row = this.deliveries.get(r.id);
      if (row === undefined || row.lease === null || row.lease !== r.lease) continue;
      this.leased.delete(r.id);
      row.lease = null;
      const d = row.record;
      d.attempts++;
      d.lastAttemptAt = r.at;
      d.lastStatus = r.status;
      d.lastError = r.delivered ? null : r.error;
      const endpoint = this.endpoints.get(d.webhookId);
      if (r.delivered) {
        d.state = 'delivered';
        d.nextAttemptAt = null;
        if (endpoint !== undefined) endpoint.failingSince = null;
        continue;
      }
      if (r.nextAttemptAt === null) {
        d.state = 'failed';
        d.nextAttemptAt = null;
      } else {
        d.nextAttemptAt = r.nextAttemptAt;
        this.push(row);
      }
      if (endpoint === undefined || endpoint.record.disabledAt !== null) continue;
      endpoint.failingSince ??= r.at;
      if (endpoint.failingSince <= r.disableBefore) this.disable(endpoint, r.at);
    }
  }

  /**
   * The endpoint's deliveries, newest first (see `WebhookStore.listDeliveries`).
   *
   * @example
   * ```ts
   * outbox.listDeliveries({ webhookId: 'wh_1', before: null, limit: 20 });
   * ```
   */
  listDeliveries(input: { webhookId: string; before: string | null; limit: number }): DeliveryRecord[] | null {
    if (!this.endpoints.has(input.webhookId)) return null;
    const rows = [...this.deliveries.values()].map((r) => r.record).filter((d) => d.webhookId === input.webhookId);
    rows.sort(newestFirst);
    let from = 0;
    if (input.before !== null) {
      const at = rows.findIndex((d) => d.id === input.before);
      if (at < 0) return [];
      from = at + 1;
    }
    return rows.slice(from, from + input.limit).map((d) => ({ ...d }));
  }

  /**
   * A new pending delivery of the same event to the same endpoint (see `WebhookStore.replayDelivery`).
   *
   * @example
   * ```ts
   * outbox.replay({ webhookId: 'wh_1', of: 'dlv_1', id: 'dlv_2', now });
   * ```
   */
  replay(input: { webhookId: string; of: string; id: string; now: number }): DeliveryRecord | null {
    const row = this.deliveries.get(input.of);
    if (row === undefined || row.record.webhookId !== input.webhookId) return null;
    const event = this.events.get(row.record.eventId)!;
    event.refs++;
    const added = this.addDelivery(event, row.record.webhookId, input.now, input.id);
    this.wake();
    return { ...added.record };
  }

  /**
   * Forgets settled deliveries whose last attempt (or creation) was before `before`, and
   * events left without deliveries. Resolves to how many deliveries went.
   *
   * @example
   * ```ts
   * outbox.prune(now - 30 * DAY_MS);
   * ```
   */
  prune(before: number): number {
    let gone = 0;
    for (const row of [...this.deliveries.values()]) {
      const d = row.record;
      if (d.state !== 'pending' && (d.lastAttemptAt ?? d.createdAt) < before) {
        this.drop(row);
        gone++;
      }
    }
    return gone;
  }

  /**
   * Calls `wake` (once per turn at most) whenever deliveries become due at once.
   *
   * @example
   * ```ts
   * const stop = outbox.watch(() => worker.poke());
   * ```
   */
  watch(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * outbox.clear();
   * ```
   */
  clear(): void {
    this.endpoints = new Map();
    this.events = new Map();
    this.deliveries = new Map();
    this.queues = new Map();
    this.leased = new Map();
    this.leasesLastUntil = Infinity;
    this.covered = null;
  }

  private addDelivery(event: EventRecord, webhookId: string, due: number, id = `dlv_${randomBase62(20)}`): Row {
    const row: Row = {
      record: {
        id,
        webhookId,
        eventId: event.id,
        eventType: event.type,
        createdAt: due,
        state: 'pending',
        attempts: 0,
        nextAttemptAt: due,
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
      },
      lease: null,
      leaseUntil: 0,
      seq: this.seq++,
    };
    this.deliveries.set(id, row);
    this.push(row);
    return row;
  }

  private disable(endpoint: Endpoint, at: number): void {
    endpoint.record = { ...endpoint.record, disabledAt: toIsoUtc(at) };
    for (const row of this.deliveries.values()) {
      if (row.record.webhookId === endpoint.record.id && row.record.state === 'pending' && row.lease === null) this.settleDisabled(row);
    }
  }

  /** A pending delivery of a disabled endpoint ends as failed (its queue is dropped at the next claim). */
  private settleDisabled(row: Row): void {
    row.record.state = 'failed';
    row.record.nextAttemptAt = null;
    row.record.lastError = DISABLED_ERROR;
  }

  private drop(row: Row): void {
    this.deliveries.delete(row.record.id);
    this.leased.delete(row.record.id);
    const event = this.events.get(row.record.eventId);
    if (event !== undefined && --event.refs === 0) this.events.delete(event.id);
  }

  private wake(): void {
    if (this.wakeQueued || this.listeners.size === 0) return;
    this.wakeQueued = true;
    queueMicrotask(() => {
      this.wakeQueued = false;
      for (const listener of this.listeners) listener();
    });
  }

  private push(row: Row): void {
    let queue = this.queues.get(row.record.webhookId);
    if (queue === undefined) this.queues.set(row.record.webhookId, (queue = []));
    push(queue, row);
  }
}

// Binary min-heaps of rows by (nextAttemptAt, seq).

function push(h: Row[], row: Row): void {
  h.push(row);
  let i = h.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(h[i]!, h[parent]!)) break;
    [h[i], h[parent]] = [h[parent]!, h[i]!];
    i = parent;
  }
}

function pop(h: Row[]): Row {
  const top = h[0]!;
  const last = h.pop()!;
  if (h.length > 0) {
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
  return top;
}

/** How long settled deliveries are kept by default: 30 days. */
export const DELIVERY_RETENTION_MS = 30 * DAY_MS;

function before(a: Row, b: Row): boolean {
  return a.record.nextAttemptAt! < b.record.nextAttemptAt! || (a.record.nextAttemptAt === b.record.nextAttemptAt && a.seq < b.seq);
}

function newestFirst(a: DeliveryRecord, b: DeliveryRecord): number {
  return b.createdAt - a.createdAt || compareCodePoints(b.id, a.id);
}

function copyWebhook(w: WebhookRecord): WebhookRecord {
  return { ...w, events: [...w.events] };
}
