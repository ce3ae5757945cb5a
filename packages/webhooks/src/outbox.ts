/**
 * Webhook endpoints, events and deliveries held in one process's memory (docs/spec.md#webhooks):
 * the `WebhookStore` part of the memory store and of the reference store, so both follow the
 * one definition here, and PostgreSQL is pinned to it by the webhook suite of
 * `@ipokit/testing`. Synchronous: a store calls it inside one of its atomic steps.
 *
 * A write records its events once, in a log, whatever the number of endpoints; each endpoint
 * keeps a cursor into the log and makes its deliveries from it when a claim or a listing
 * needs them, at most {@link MAX_PENDING_PER_WEBHOOK} pending at once. So a write costs time
 * linear in its events, and one endpoint's backlog costs nothing to another's claims or
 * listings (docs/spec.md#webhooks, fairness).
 */
import { type ClaimedDelivery, compareCodePoints, DELIVERIES_KEPT_PER_WEBHOOK, type DeliveryEventType, type DeliveryRecord, type DeliveryResult, DISABLED_ERROR, dueStatusChanges, type EventRecord, eventsOfStatusChanges, istDayStart, nextStatusChangeAt, randomBase62, toIsoUtc, type WebhookChange, type WebhookRecord } from '@ipokit/core/backend';
import type { EventType, IpoDates, WebhookStore } from '@ipokit/core';

/**
 * How many deliveries of one endpoint are made and pending at once; what it is owed beyond
 * that waits in the event log until some are settled.
 */
export const MAX_PENDING_PER_WEBHOOK = 10_000;

/** An event as the log keeps it: with its place in the owed order and how many rows name it. */
interface Entry {
  /** (a test event's type is delivery-only: such an entry is never in the log) */
  event: Omit<EventRecord, 'type'> & { type: DeliveryEventType };
  /** The owed order of its deliveries (store-wide, increasing). */
  seq: number;
  /** When its deliveries were due: the write's instant. */
  due: number;
  /** Its place in the log (absolute; the log's first entry is at `logStart`). */
  index: number;
  /** Deliveries made of it and still kept. */
  refs: number;
}

interface Row {
  record: DeliveryRecord;
  entry: Entry;
  lease: string | null;
  leaseUntil: number;
  /** Its place in the owed order (the event's, or the replay's own). */
  seq: number;
}

interface Endpoint {
  record: WebhookRecord;
  types: ReadonlySet<string>;
  /** When the current run of failed attempts began; null after a success. */
  failingSince: number | null;
  /** The next log index this endpoint has not made deliveries of (Infinity once disabled). */
  cursor: number;
  /** Its deliveries, by id. */
  rows: Map<string, Row>;
  /** Its pending, unleased deliveries, by (nextAttemptAt, owed order). */
  queue: Heap<Row>;
  /** How many of its rows are pending (leased or not). */
  pending: number;
  /** Its settled rows, in the order they settled (for the count bound). */
  settled: Row[];
}

/** A candidate of a claim: a made delivery, or the next one owed from the log. */
interface Candidate {
  endpoint: Endpoint;
  row: Row | null;
  entry: Entry;
  due: number;
  seq: number;
  rankInWebhook: number;
  rankInAccount: number;
}

/**
 * The endpoints, events and deliveries of one store object.
 *
 * @example
 * ```ts
 * const outbox = new MemoryOutbox();
 * outbox.insertWebhook(webhook, { maxPerAccount: 10 });
 * outbox.record(eventsOfWrite(changes, outbox.subscribedTypes()), now);
 * outbox.claim({ now, limit: 10, perWebhook: 4, perAccount: 16, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
 * ```
 */
export class MemoryOutbox {
  private endpoints = new Map<string, Endpoint>();
  /** Events by id: those in the log and those some kept delivery names. */
  private events = new Map<string, Entry>();
  /** The events no enabled endpoint has made all its deliveries of yet, in owed order. */
  private log: Entry[] = [];
  private logStart = 0;
  /** Where each delivery is: its endpoint. */
  private rowEndpoint = new Map<string, Endpoint>();
  private leased = new Map<string, Row>();
  /** No lease runs out before this: until then a claim need not look through them. */
  private leasesLastUntil = Infinity;
  private seq = 0;
  private leases = 0;
  private covered: number | null = null;
  private listeners = new Set<() => void>();
  private wakeQueued = false;
  private readonly keepPerWebhook: number;

  /**
   * @param options.keepPerWebhook settled deliveries kept per endpoint, oldest settled
   *   forgotten first (default 10,000); `pruneDeliveries` may keep fewer.
   */
  constructor(options: { keepPerWebhook?: number } = {}) {
    this.keepPerWebhook = options.keepPerWebhook ?? DELIVERIES_KEPT_PER_WEBHOOK;
  }

  /**
   * Stores an endpoint (a copy); `'too-many-webhooks'` (nothing stored) when its account has
   * `maxPerAccount` already. It takes only events recorded from now on.
   *
   * @example
   * ```ts
   * outbox.insertWebhook(webhook, { maxPerAccount: 10 }); // 'ok'
   * ```
   */
  insertWebhook(webhook: WebhookRecord, limits: { maxPerAccount: number }): 'ok' | 'too-many-webhooks' {
    let count = 0;
    for (const e of this.endpoints.values()) if (e.record.accountId === webhook.accountId) count++;
    if (count >= limits.maxPerAccount) return 'too-many-webhooks';
    const disabled = webhook.disabledAt !== null;
    this.endpoints.set(webhook.id, {
      record: copyWebhook(webhook),
      types: new Set(webhook.events),
      failingSince: null,
      cursor: disabled ? Infinity : this.logStart + this.log.length,
      rows: new Map(),
      queue: new Heap(before),
      pending: 0,
      settled: [],
    });
    return 'ok';
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
    const endpoint = this.endpoints.get(id);
    if (endpoint === undefined) return false;
    this.endpoints.delete(id);
    endpoint.queue = new Heap(before);
    for (const row of endpoint.rows.values()) this.forget(row);
    this.trimLog();
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
   * Records events not recorded before (by id), owed to every enabled endpoint that takes
   * its type, due at `due`; an event no endpoint takes is not kept. Time linear in the
   * events: the deliveries are made later, per endpoint. Resolves to how many were recorded.
   *
   * @example
   * ```ts
   * outbox.record(events, now); // 2
   * ```
   */
  record(events: readonly EventRecord[], due: number): number {
    const types = this.subscribedTypes();
    let recorded = 0;
    for (const event of events) {
      if (this.events.has(event.id) || !types.has(event.type)) continue;
      const entry: Entry = { event, seq: this.seq++, due, index: this.logStart + this.log.length, refs: 0 };
      this.log.push(entry);
      this.events.set(event.id, entry);
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
   * Leases due deliveries, shared fairly across accounts and endpoints (see
   * `WebhookStore.claimDeliveries` for the order).
   *
   * @example
   * ```ts
   * outbox.claim({ now, limit: 64, perWebhook: 4, perAccount: 16, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
   * ```
   */
  claim(input: Parameters<WebhookStore['claimDeliveries']>[0]): ClaimedDelivery[] {
    const { now } = input;
    this.expireLeases(now);
    if (input.limit <= 0) return [];
    // 1. Per endpoint: its first due deliveries, made or owed, up to its room.
    const byAccount = new Map<string, Candidate[]>();
    for (const endpoint of this.endpoints.values()) {
      // (a paused endpoint's deliveries wait, pending, for its resume)
      if (endpoint.record.disabledAt !== null || endpoint.record.pausedAt !== null) continue;
      const busy = input.busy.get(endpoint.record.id) ?? 0;
      const room = Math.min(input.perWebhook - busy, input.limit);
      if (room <= 0) continue;
      const found = this.firstDue(endpoint, room, now);
      if (found.length === 0) continue;
      const account = endpoint.record.accountId;
      let list = byAccount.get(account);
      if (list === undefined) byAccount.set(account, (list = []));
      found.forEach((c, i) => {
        c.rankInWebhook = busy + i + 1;
        list.push(c);
      });
    }
    // 2. Per account: up to its room, its endpoints taking turns.
    const all: Candidate[] = [];
    for (const [account, list] of byAccount) {
      const busy = input.busyAccounts.get(account) ?? 0;
      const room = input.perAccount - busy;
      if (room <= 0) continue;
      list.sort((a, b) => a.rankInWebhook - b.rankInWebhook || tieBreak(a, b));
      list.slice(0, room).forEach((c, i) => {
        c.rankInAccount = busy + i + 1;
        all.push(c);
      });
    }
    // 3. Accounts taking turns, the least busy first.
    all.sort((a, b) => a.rankInAccount - b.rankInAccount || tieBreak(a, b));
    const chosen = all.slice(0, input.limit);
    // Make what is owed (each endpoint's chosen are the first of its candidates, in order).
    const claimed: ClaimedDelivery[] = [];
    for (const c of chosen) {
      let row: Row;
      if (c.row === null) row = this.make(c.endpoint, c.entry);
      else {
        // (an endpoint's chosen are the first of its queue, in order)
        row = c.endpoint.queue.pop()!;
        if (row !== c.row) throw new Error('MemoryOutbox: claim order broken');
      }
      row.lease = `l${++this.leases}`;
      row.leaseUntil = now + input.leaseMs;
      this.leased.set(row.record.id, row);
      this.leasesLastUntil = Math.min(this.leasesLastUntil, row.leaseUntil);
      claimed.push({
        delivery: { ...row.record },
        accountId: c.endpoint.record.accountId,
        lease: row.lease,
        url: c.endpoint.record.url,
        secret: c.endpoint.record.secret,
        ...previousSecretOf(c.endpoint.record),
        body: row.entry.event.body,
      });
    }
    return claimed;
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
      const row = this.leased.get(r.id);
      if (row === undefined || row.lease !== r.lease) continue;
      this.leased.delete(r.id);
      row.lease = null;
      const endpoint = this.rowEndpoint.get(r.id)!;
      const d = row.record;
      d.attempts++;
      d.lastAttemptAt = r.at;
      d.lastStatus = r.status;
      d.lastError = r.delivered ? null : r.error;
      d.lastResponseBody = r.responseBody ?? null;
      if (r.delivered) {
        d.state = 'delivered';
        d.nextAttemptAt = null;
        endpoint.failingSince = null;
        this.settle(endpoint, row);
        continue;
      }
      if (r.nextAttemptAt === null || endpoint.record.disabledAt !== null) {
        if (r.nextAttemptAt === null) d.state = 'failed';
        d.nextAttemptAt = null;
        if (d.state === 'pending') {
          // (its endpoint was disabled while the attempt was out: it ends as the others did)
          d.state = 'failed';
          d.lastError = DISABLED_ERROR;
        }
        this.settle(endpoint, row);
      } else {
        d.nextAttemptAt = r.nextAttemptAt;
        endpoint.queue.push(row);
      }
      if (endpoint.record.disabledAt !== null) continue;
      endpoint.failingSince ??= r.at;
      if (endpoint.failingSince <= r.disableBefore) this.disable(endpoint, r.at);
    }
  }

  /**
   * The endpoint's deliveries, newest first (see `WebhookStore.listDeliveries`): what it is
   * owed is made first, its own only.
   *
   * @example
   * ```ts
   * outbox.listDeliveries({ webhookId: 'wh_1', before: null, limit: 20 });
   * ```
   */
  listDeliveries(input: { webhookId: string; before: string | null; limit: number }): DeliveryRecord[] | null {
    const endpoint = this.endpoints.get(input.webhookId);
    if (endpoint === undefined) return null;
    this.makeOwed(endpoint, Infinity);
    const rows = [...endpoint.rows.values()].map((r) => r.record);
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
   * A new pending delivery of the same event to the same endpoint, or the delivery itself
   * while it is pending (see `WebhookStore.replayDelivery`).
   *
   * @example
   * ```ts
   * outbox.replay({ webhookId: 'wh_1', of: 'dlv_1', id: 'dlv_2', now });
   * ```
   */
  replay(input: { webhookId: string; of: string; id: string; now: number }): DeliveryRecord | null {
    const endpoint = this.endpoints.get(input.webhookId);
    const row = endpoint?.rows.get(input.of);
    if (endpoint === undefined || row === undefined) return null;
    if (row.record.state === 'pending') return { ...row.record };
    // (an earlier replay of it still pending: that one, and nothing added)
    const pending = this.pendingOf(endpoint, row.entry);
    if (pending !== null) return { ...pending.record };
    const disabled = endpoint.record.disabledAt !== null;
    const added = this.add(endpoint, row.entry, input.now, this.seq++, input.id, !disabled);
    if (disabled) {
      // (a disabled endpoint sends nothing: the replay ends as its other pending ones did)
      this.settleDisabled(added);
      this.settle(endpoint, added);
    }
    this.wake();
    return { ...added.record };
  }

  /**
   * Changes an endpoint (see `WebhookStore.updateWebhook`): what it is owed under its old
   * event types is made first, so the new ones apply to events recorded from now on.
   *
   * @example
   * ```ts
   * outbox.update('wh_1', { pausedAt: '2026-11-28T10:00:00.000Z' });
   * ```
   */
  update(id: string, change: WebhookChange): WebhookRecord | null {
    const endpoint = this.endpoints.get(id);
    if (endpoint === undefined) return null;
    const record = { ...endpoint.record };
    if (change.events !== undefined) {
      this.makeOwed(endpoint, Infinity);
      record.events = [...change.events];
      endpoint.types = new Set(change.events);
    }
    if (change.description !== undefined) record.description = change.description;
    if (change.pausedAt !== undefined) {
      if (change.pausedAt !== null) record.pausedAt ??= change.pausedAt;
      else {
        record.pausedAt = null;
        endpoint.failingSince = null;
        if (record.disabledAt !== null) {
          // Enabled again: owed the events recorded from now on, as a new endpoint is.
          record.disabledAt = null;
          endpoint.cursor = this.logStart + this.log.length;
        }
      }
    }
    if (change.rotate !== undefined) {
      record.previousSecret = record.secret;
      record.previousSecretExpiresAt = change.rotate.previousSecretExpiresAt;
      record.secret = change.rotate.secret;
    }
    endpoint.record = record;
    if (change.pausedAt === null) this.wake();
    return copyWebhook(record);
  }

  /**
   * Adds a pending delivery of an event recorded for this endpoint alone (see
   * `WebhookStore.addDelivery`).
   *
   * @example
   * ```ts
   * outbox.addDelivery({ webhookId: 'wh_1', id: 'dlv_1', event, now });
   * ```
   */
  addDelivery(input: { webhookId: string; id: string; event: Entry['event']; now: number }): DeliveryRecord | null {
    const endpoint = this.endpoints.get(input.webhookId);
    if (endpoint === undefined) return null;
    let entry = this.events.get(input.event.id);
    if (entry === undefined) {
      // (never in the log: index -1 is before its start, so the event goes with its last delivery)
      entry = { event: { ...input.event }, seq: this.seq, due: input.now, index: -1, refs: 0 };
      this.events.set(input.event.id, entry);
    }
    const disabled = endpoint.record.disabledAt !== null;
    const added = this.add(endpoint, entry, input.now, this.seq++, input.id, !disabled);
    if (disabled) {
      this.settleDisabled(added);
      this.settle(endpoint, added);
    }
    this.wake();
    return { ...added.record };
  }

  /**
   * The endpoint's delivery with its event's body (see `WebhookStore.getDelivery`).
   *
   * @example
   * ```ts
   * outbox.getDelivery({ webhookId: 'wh_1', id: 'dlv_1' })?.body;
   * ```
   */
  getDelivery(input: { webhookId: string; id: string }): (DeliveryRecord & { body: string }) | null {
    const row = this.endpoints.get(input.webhookId)?.rows.get(input.id);
    return row === undefined ? null : { ...row.record, body: row.entry.event.body };
  }

  /**
   * Forgets settled deliveries whose last attempt (or creation) was before `before`, and
   * those of an endpoint past its newest `keepPerWebhook` settled ones, and events left
   * without deliveries (see `WebhookStore.pruneDeliveries`). Resolves to how many went.
   *
   * @example
   * ```ts
   * outbox.prune({ before: now - 30 * DAY_MS, keepPerWebhook: 10_000 });
   * ```
   */
  prune(input: { before: number; keepPerWebhook: number }): number {
    let gone = 0;
    for (const endpoint of this.endpoints.values()) {
      const settled = endpoint.settled.filter((row) => endpoint.rows.has(row.record.id));
      settled.sort((a, b) => newestFirst(a.record, b.record));
      const kept: Row[] = [];
      settled.forEach((row, i) => {
        const d = row.record;
        if (i >= input.keepPerWebhook || (d.lastAttemptAt ?? d.createdAt) < input.before) {
          this.forget(row);
          gone++;
        } else kept.push(row);
      });
      // (kept in the order they settled, as settle() keeps them)
      endpoint.settled = kept.reverse();
    }
    this.trimLog();
    return gone;
  }

  /**
   * The backlog (see `WebhookStore.outboxStats`): per endpoint not disabled (paused ones
   * included), its pending deliveries (those queued and those leased) and what it is owed
   * from the log and has not made, of the types it takes; the oldest creation instant among
   * them. Changes nothing. Time linear in the backlog: settled deliveries are not visited.
   *
   * @example
   * ```ts
   * outbox.stats(); // { pending: 3, oldestAt: 1764000000000 }
   * ```
   */
  stats(): { pending: number; oldestAt: number | null } {
    let pending = 0;
    let oldestAt = Infinity;
    const end = this.logStart + this.log.length;
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.record.disabledAt !== null) continue;
      pending += endpoint.pending;
      for (const row of endpoint.queue.items) oldestAt = Math.min(oldestAt, row.record.createdAt);
      // What it is owed: the log after its cursor, of its types (made later as created at `due`).
      for (let index = Math.max(endpoint.cursor, this.logStart); index < end; index++) {
        const entry = this.log[index - this.logStart]!;
        if (!endpoint.types.has(entry.event.type)) continue;
        pending++;
        oldestAt = Math.min(oldestAt, entry.due);
      }
    }
    for (const row of this.leased.values()) {
      if (this.rowEndpoint.get(row.record.id)?.record.disabledAt === null) oldestAt = Math.min(oldestAt, row.record.createdAt);
    }
    return { pending, oldestAt: pending === 0 ? null : oldestAt };
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
    this.log = [];
    this.logStart = 0;
    this.rowEndpoint = new Map();
    this.leased = new Map();
    this.leasesLastUntil = Infinity;
    this.covered = null;
  }

  /** The endpoint's newest pending delivery of this event, or null. */
  private pendingOf(endpoint: Endpoint, entry: Entry): Row | null {
    let found: Row | null = null;
    for (const row of endpoint.rows.values()) {
      if (row.entry !== entry || row.record.state !== 'pending') continue;
      if (found === null || newestFirst(row.record, found.record) < 0) found = row;
    }
    return found;
  }

  /** Leases that ran out: their deliveries are claimable again. */
  private expireLeases(now: number): void {
    if (now < this.leasesLastUntil) return;
    this.leasesLastUntil = Infinity;
    for (const row of this.leased.values()) {
      if (row.leaseUntil > now) {
        this.leasesLastUntil = Math.min(this.leasesLastUntil, row.leaseUntil);
        continue;
      }
      // (deleting the entry being visited leaves the iteration as it was)
      this.leased.delete(row.record.id);
      row.lease = null;
      const endpoint = this.rowEndpoint.get(row.record.id)!;
      if (endpoint.record.disabledAt !== null) {
        this.settleDisabled(row);
        this.settle(endpoint, row);
      } else endpoint.queue.push(row);
    }
  }

  /**
   * The endpoint's first `room` due deliveries by (nextAttemptAt, owed order): made ones from
   * its heap merged with those owed from the log (not made here).
   */
  private firstDue(endpoint: Endpoint, room: number, now: number): Candidate[] {
    const out: Candidate[] = [];
    const made = endpoint.queue.ordered();
    let top = made.next().value;
    let index = Math.max(endpoint.cursor, this.logStart);
    let owedLeft = MAX_PENDING_PER_WEBHOOK - endpoint.pending;
    const end = this.logStart + this.log.length;
    const nextOwed = (): Entry | null => {
      if (owedLeft <= 0) return null;
      for (; index < end; index++) {
        const entry = this.log[index - this.logStart]!;
        if (endpoint.types.has(entry.event.type)) return entry;
      }
      return null;
    };
    while (out.length < room) {
      const owed = nextOwed();
      const topDue = top === undefined ? Infinity : top.record.nextAttemptAt!;
      if (owed !== null && owed.due <= now && (top === undefined || owed.due < topDue || (owed.due === topDue && owed.seq < top.seq))) {
        out.push({ endpoint, row: null, entry: owed, due: owed.due, seq: owed.seq, rankInWebhook: 0, rankInAccount: 0 });
        index++;
        owedLeft--;
        continue;
      }
      if (top === undefined || topDue > now) break;
      out.push({ endpoint, row: top, entry: top.entry, due: topDue, seq: top.seq, rankInWebhook: 0, rankInAccount: 0 });
      top = made.next().value;
    }
    return out;
  }

  /** Makes the endpoint's next owed delivery, which must be `entry`. */
  private make(endpoint: Endpoint, entry: Entry): Row {
    // (the entries between its cursor and this one are of types it does not take)
    endpoint.cursor = entry.index + 1;
    const row = this.add(endpoint, entry, entry.due, entry.seq, undefined, false);
    this.trimLog();
    return row;
  }

  /** Makes up to `max` of what the endpoint is owed (within its pending bound). */
  private makeOwed(endpoint: Endpoint, max: number): void {
    let made = 0;
    const end = this.logStart + this.log.length;
    let index = Math.max(endpoint.cursor, this.logStart);
    while (index < end && made < max && endpoint.pending < MAX_PENDING_PER_WEBHOOK) {
      const entry = this.log[index - this.logStart]!;
      index++;
      if (!endpoint.types.has(entry.event.type)) continue;
      this.add(endpoint, entry, entry.due, entry.seq);
      made++;
    }
    if (endpoint.cursor !== Infinity) endpoint.cursor = index;
    if (made > 0 || index === end) this.trimLog();
  }

  private add(endpoint: Endpoint, entry: Entry, due: number, seq: number, id = `dlv_${randomBase62(20)}`, queued = true): Row {
    const row: Row = {
      record: {
        id,
        webhookId: endpoint.record.id,
        eventId: entry.event.id,
        eventType: entry.event.type,
        createdAt: due,
        state: 'pending',
        attempts: 0,
        nextAttemptAt: due,
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
        lastResponseBody: null,
      },
      entry,
      lease: null,
      leaseUntil: 0,
      seq,
    };
    entry.refs++;
    endpoint.rows.set(id, row);
    endpoint.pending++;
    this.rowEndpoint.set(id, endpoint);
    if (queued) endpoint.queue.push(row);
    return row;
  }

  /** A row that stopped being pending: counted, and the oldest settled past the bound forgotten. */
  private settle(endpoint: Endpoint, row: Row): void {
    endpoint.pending--;
    endpoint.settled.push(row);
    if (endpoint.settled.length > this.keepPerWebhook) {
      // (settled rows are forgotten in the order they settled; prune() orders them exactly)
      const gone = endpoint.settled.splice(0, endpoint.settled.length - this.keepPerWebhook);
      for (const old of gone) if (endpoint.rows.has(old.record.id)) this.forget(old);
    }
  }

  private disable(endpoint: Endpoint, at: number): void {
    endpoint.record = { ...endpoint.record, disabledAt: toIsoUtc(at) };
    // What it is owed and has not made is never made; what is pending ends as failed.
    endpoint.cursor = Infinity;
    const queued = endpoint.queue.items;
    endpoint.queue = new Heap(before);
    for (const row of queued) {
      this.settleDisabled(row);
      this.settle(endpoint, row);
    }
    this.trimLog();
  }

  private settleDisabled(row: Row): void {
    row.record.state = 'failed';
    row.record.nextAttemptAt = null;
    row.record.lastError = DISABLED_ERROR;
  }

  /** Forgets a delivery (and its event when nothing else needs it). */
  private forget(row: Row): void {
    const id = row.record.id;
    const endpoint = this.rowEndpoint.get(id);
    if (endpoint !== undefined) {
      endpoint.rows.delete(id);
      // (only a deleted endpoint's rows are forgotten while pending: its queue went with it)
      if (row.record.state === 'pending') endpoint.pending--;
    }
    this.rowEndpoint.delete(id);
    this.leased.delete(id);
    const entry = row.entry;
    if (--entry.refs === 0 && entry.index < this.logStart) this.events.delete(entry.event.id);
  }

  /** Drops the log's entries every endpoint is past (their events go when no row names them). */
  private trimLog(): void {
    let min = this.logStart + this.log.length;
    for (const e of this.endpoints.values()) if (e.cursor < min) min = e.cursor;
    const drop = min - this.logStart;
    if (drop <= 0) return;
    // (dropped in bulk once they are a good part of the log: shifting one at a time is quadratic)
    if (drop < 1024 && drop * 2 < this.log.length) return;
    for (const entry of this.log.splice(0, drop)) if (entry.refs === 0) this.events.delete(entry.event.id);
    this.logStart = min;
  }

  private wake(): void {
    if (this.wakeQueued || this.listeners.size === 0) return;
    this.wakeQueued = true;
    queueMicrotask(() => {
      this.wakeQueued = false;
      for (const listener of this.listeners) listener();
    });
  }
}

/** The order after the ranks: due, owed order, endpoint id. */
function tieBreak(a: Candidate, b: Candidate): number {
  return a.due - b.due || a.seq - b.seq || compareCodePoints(a.endpoint.record.id, b.endpoint.record.id);
}

/** A binary min-heap under `less`. */
class Heap<T> {
  readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const h = this.items;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  /** The items in order, lazily, without changing the heap: k of them cost O(k log k). */
  *ordered(): Generator<T> {
    const h = this.items;
    if (h.length === 0) return;
    const next = new Heap<number>((a, b) => this.less(h[a]!, h[b]!));
    next.push(0);
    for (let i = next.pop(); i !== undefined; i = next.pop()) {
      yield h[i]!;
      if (2 * i + 1 < h.length) next.push(2 * i + 1);
      if (2 * i + 2 < h.length) next.push(2 * i + 2);
    }
  }
}

/** Due order within an endpoint: (nextAttemptAt, owed order). */
function before(a: Row, b: Row): boolean {
  return a.record.nextAttemptAt! < b.record.nextAttemptAt! || (a.record.nextAttemptAt === b.record.nextAttemptAt && a.seq < b.seq);
}

function newestFirst(a: DeliveryRecord, b: DeliveryRecord): number {
  return b.createdAt - a.createdAt || compareCodePoints(b.id, a.id);
}

/** The previous secret of a claim, while the endpoint has one. */
function previousSecretOf(w: WebhookRecord): Pick<ClaimedDelivery, 'previousSecret' | 'previousSecretExpiresAt'> {
  if (w.previousSecret === null || w.previousSecretExpiresAt === null) return { previousSecret: null, previousSecretExpiresAt: null };
  return { previousSecret: w.previousSecret, previousSecretExpiresAt: Date.parse(w.previousSecretExpiresAt) };
}

function copyWebhook(w: WebhookRecord): WebhookRecord {
  return { ...w, events: [...w.events] };
}
