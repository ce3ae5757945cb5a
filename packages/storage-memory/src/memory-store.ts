/**
 * The embedded default store: everything in this process's memory, indexed for the hot
 * reads (list pages, identifier lookups, GMP series, key lookups, rate limits).
 *
 * Atomicity: every method does all its work synchronously inside its `async` body and
 * awaits nothing, so JavaScript runs no other call of the store in between; each call is
 * one atomic step, and a reader sees a write whole or not at all.
 */
import { type AccountStore, type IpoDates, IpokitError, type Store, type UsageRow, type WebhookStore } from '@ipokit/core';
import { type AccountRecord, type ApiKeyRecord, type ClaimedDelivery, type DatasetConflict, type DeliveryRecord, type DeliveryResult, eventsOfWrite, type GmpBucket, type GmpBucketQuery, type IpoRecord, type IpoRow, type KeyGrant, type ListQuery, type RateLimitOutcome, type RateLimitWindow, type RateLimitWindowState, fullTimes, sameIpo, sameSnapshot, sameSubscription, type SnapshotRecord, type SubscriptionQuery, type SubscriptionRecord, type UsageCharge, type WebhookChange, type WebhookRecord, type WriteOptions } from '@ipokit/core/backend';
import { MemoryOutbox } from '@ipokit/webhooks';
import { AccountTable } from './account-table.js';
import { IpoTable } from './ipo-table.js';
import { DEFAULT_SWEEP_EVERY, RateWindows } from './rate-windows.js';
import { SnapshotTable } from './snapshot-table.js';
import { SubscriptionTable } from './subscription-table.js';

/**
 * Options of {@link memoryStore}.
 *
 * @example
 * ```ts
 * const store = memoryStore({ rateLimitSweepEvery: 10_000 });
 * ```
 */
export interface MemoryStoreOptions {
  /**
   * Fewest rate-limit hits between two sweeps that forget windows whose hits have all
   * left (default 1,024). A sweep also waits for as many hits as there are windows, so
   * its cost stays O(1) per hit; memory stays bounded by the windows active in the last
   * minute, about twice over, plus this number.
   */
  rateLimitSweepEvery?: number;
}

/**
 * Creates an in-memory {@link Store}: the embedded default for a single process. Data
 * lives as long as the store object; `close()` releases it, after which every call
 * rejects with `IpokitError` code `ERR:UNAVAILABLE`.
 *
 * Records given to the store are copied, so callers may change their objects afterwards.
 * Records it returns are the stored objects themselves, deeply frozen.
 *
 * Costs (n IPOs, s snapshots of one IPO, p rows on a page): a list page is two binary
 * searches and one pass over the IPOs that can have the asked status on that day, with
 * no allocation for IPOs off the page; for most statuses the pass is skipped without
 * filters, O(log n + p), and with type and source filters alone, O(log^2 n + p);
 * an identifier lookup is O(1); a GMP series is O(log s + snapshots in range); the
 * latest snapshot is O(log s); key lookups and limit checks are O(1); a rate-limit hit is
 * O(1) amortised per window whatever its quota, sweep included. Writes are O(size of the
 * write) and leave the indexes to be rebuilt, O(n log n), by the next read that needs them.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createAccount, createApiKey, importDataset } from '@ipokit/core';
 * import { ipoRouter } from '@ipokit/express';
 * import { memoryStore } from '@ipokit/storage-memory';
 *
 * const app = express();
 * const store = memoryStore();
 * await importDataset(store, { ipos: [{ id: '1', name: 'Orbit Ltd', slug: 'orbit', type: 'EQ', symbol: 'ORBIT' }] });
 * const account = await createAccount(store, { name: 'Acme', plan: 'pro', gmpAddon: true });
 * const { key } = await createApiKey(store, { accountId: account.id, label: 'prod server' }); // shown once
 * app.use('/ipos', ipoRouter(store));
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store & WebhookStore {
  const sweepEvery = options.rateLimitSweepEvery ?? DEFAULT_SWEEP_EVERY;
  if (!Number.isSafeInteger(sweepEvery) || sweepEvery < 1) {
    throw new IpokitError('ERR:BADPARAM', 'rateLimitSweepEvery must be a whole number of at least 1.', { parameter: 'rateLimitSweepEvery' });
  }
  const ipos = new IpoTable();
  const snapshots = new SnapshotTable();
  const subscription = new SubscriptionTable();
  const accounts = new AccountTable();
  const outbox = new MemoryOutbox();
  const windows = new RateWindows(sweepEvery);
  let closed = false;
  // Requests sweep the windows as they come; this frees those of clients that stopped coming
  // when no request comes at all. Unref'd: it never keeps a process alive.
  const idleSweep = setInterval(() => windows.sweepIdle(performance.now()), IDLE_SWEEP_MS);
  (idleSweep as { unref?: () => void }).unref?.();

  const closedStore = (): IpokitError => new IpokitError('ERR:UNAVAILABLE', 'The memory store is closed: create a new one.');
  const open = (): void => {
    if (closed) throw closedStore();
  };
  /** What a synchronous method of a closed store answers: the rejection an async one makes. */
  const closedError = (): Promise<never> => Promise.reject(closedStore());
  /** A row with, as asked, its latest GMP snapshot and latest subscription snapshot. */
  const rowOf = (ipo: IpoRecord, gmpAt: number | null, subscriptionAt: number | null | undefined): IpoRow => {
    const row: IpoRow = gmpAt === null ? { ipo } : { ipo, gmp: snapshots.latest(ipo.id, gmpAt) };
    if (typeof subscriptionAt === 'number') row.subscription = subscription.latest(ipo.id, subscriptionAt);
    return row;
  };

  return {
    async writeDataset(input: { ipos: IpoRecord[]; snapshots: SnapshotRecord[]; subscription?: SubscriptionRecord[] }, options?: WriteOptions): Promise<DatasetConflict[]> {
      open();
      const conflicts = ipos.conflicts(input.ipos);
      const writing = new Set<string>();
      for (const ipo of input.ipos) writing.add(ipo.id);
      input.snapshots.forEach((s, index) => {
        if (!writing.has(s.ipoId) && !ipos.has(s.ipoId)) conflicts.push({ kind: 'unknown-ipo', snapshot: index });
      });
      const givenSubscription = input.subscription ?? [];
      givenSubscription.forEach((s, index) => {
        if (!writing.has(s.ipoId) && !ipos.has(s.ipoId)) conflicts.push({ kind: 'unknown-ipo-subscription', snapshot: index });
      });
      if (conflicts.length > 0) return conflicts;
      // Copy everything before changing anything: a copy cannot fail halfway through a write.
      const newIpos = input.ipos.map(copyIpo);
      const newSnapshots = input.snapshots.map(copySnapshot);
      const newSubscription = givenSubscription.map(copySubscription);
      // The events, found against what is stored before it changes (docs/spec.md#webhooks).
      const types = outbox.subscribedTypes();
      const at = options?.at ?? Date.now();
      const changedSubscription =
        types.size === 0
          ? []
          : newSubscription.filter((x) => {
              const stored = subscription.get(x.ipoId, x.timestamp);
              return stored === null || !sameSubscription(stored, x);
            });
      const changedSnapshots =
        types.size === 0
          ? []
          : newSnapshots.filter((x) => {
              const stored = snapshots.get(x.ipoId, x.timestamp);
              return stored === null || !sameSnapshot(stored, x);
            });
      const changed = types.size === 0 ? [] : changedIpos(newIpos, (id) => ipos.get(id));
      ipos.put(newIpos);
      for (const s of newSnapshots) snapshots.put(s);
      for (const s of newSubscription) subscription.put(s);
      if (types.size > 0) {
        // An IPO object carries its latest subscription snapshot as of the write, this write's included.
        const withLatest = changed.map((c) => ({ ...c, subscription: subscription.latest(c.ipo.id, at) }));
        outbox.record(eventsOfWrite({ at, ipos: withLatest, snapshots: changedSnapshots, subscription: changedSubscription, deleted: [] }, types), at);
      }
      return [];
    },

    async deleteIpos(ids: string[], options?: WriteOptions): Promise<{ ipos: number; snapshots: number }> {
      open();
      let ipoCount = 0;
      let snapshotCount = 0;
      const deleted: string[] = [];
      for (const id of ids) {
        if (!ipos.delete(id)) continue;
        ipoCount++;
        deleted.push(id);
        snapshotCount += snapshots.deleteIpo(id);
        subscription.deleteIpo(id);
      }
      const types = outbox.subscribedTypes();
      if (types.has('ipo.deleted') && deleted.length > 0) {
        const at = options?.at ?? Date.now();
        outbox.record(eventsOfWrite({ at, ipos: [], snapshots: [], deleted }, types), at);
      }
      return { ipos: ipoCount, snapshots: snapshotCount };
    },

    // The three reads and the hit answer synchronously (docs/spec.md#storage): a request
    // then makes no promise for them. A closed store still rejects.
    listIpos(query: ListQuery): { count: number; rows: IpoRow[] } | Promise<never> {
      if (closed) return closedError();
      const page = ipos.list(query);
      return { count: page.count, rows: page.ipos.map((ipo) => rowOf(ipo, query.gmpAt, query.subscriptionAt)) };
    },

    findIpo(query: { identifier: string; gmpAt: number | null; subscriptionAt?: number | null }): IpoRow | null | Promise<never> {
      if (closed) return closedError();
      const ipo = ipos.find(query.identifier);
      return ipo === null ? null : rowOf(ipo, query.gmpAt, query.subscriptionAt);
    },

    gmpBuckets(query: GmpBucketQuery): GmpBucket[] | Promise<never> {
      if (closed) return closedError();
      return snapshots.buckets(query);
    },

    subscriptionSeries(query: SubscriptionQuery): SubscriptionRecord[] | Promise<never> {
      if (closed) return closedError();
      return subscription.range(query);
    },

    async insertAccount(account: AccountRecord): Promise<void> {
      open();
      accounts.insertAccount(account);
    },

    async getAccount(id: string): Promise<AccountRecord | null> {
      open();
      return accounts.getAccount(id);
    },

    async listAccounts(input: { after: string | null; limit: number }): Promise<AccountRecord[]> {
      open();
      return accounts.listAccounts(input);
    },

    async updateAccount(input: Parameters<AccountStore['updateAccount']>[0]): Promise<AccountRecord | 'not-found' | 'too-many-keys'> {
      open();
      return accounts.updateAccount(input);
    },

    async insertApiKey(input: Parameters<AccountStore['insertApiKey']>[0]): Promise<'ok' | 'not-found' | 'too-many-keys'> {
      open();
      return accounts.insertApiKey(input);
    },

    async rotateApiKey(input: Parameters<AccountStore['rotateApiKey']>[0]): Promise<ApiKeyRecord | 'not-found' | 'inactive' | 'too-many-keys'> {
      open();
      return accounts.rotateApiKey(input);
    },

    async listApiKeys(accountId: string): Promise<ApiKeyRecord[] | null> {
      open();
      return accounts.listApiKeys(accountId);
    },

    async revokeApiKey(input: { id: string; at: string }): Promise<boolean> {
      open();
      return accounts.revokeApiKey(input);
    },

    async recordKeyUse(input: { id: string; at: string }): Promise<void> {
      open();
      accounts.recordKeyUse(input);
    },

    async findApiKey(hash: string): Promise<KeyGrant | null> {
      open();
      return accounts.findApiKey(hash);
    },

    hitRateLimit(input: { now: number; windows: RateLimitWindow[]; usage?: UsageCharge }): RateLimitOutcome | Promise<never> {
      if (closed) return closedError();
      return windows.hit(input);
    },

    async peekRateLimit(input: { now: number; windows: RateLimitWindow[] }): Promise<RateLimitWindowState[]> {
      open();
      return windows.peek(input);
    },

    async readUsage(query: { accountId: string; from: string; to: string; keyId?: string }): Promise<UsageRow[]> {
      open();
      return windows.readUsage(query);
    },

    async insertWebhook(webhook: WebhookRecord, limits: { maxPerAccount: number }): Promise<'ok' | 'not-found' | 'too-many-webhooks'> {
      open();
      if (accounts.getAccount(webhook.accountId) === null) return 'not-found';
      return outbox.insertWebhook(webhook, limits);
    },

    async listWebhooks(accountId: string): Promise<WebhookRecord[] | null> {
      open();
      return accounts.getAccount(accountId) === null ? null : outbox.listWebhooks(accountId);
    },

    async getWebhook(id: string): Promise<WebhookRecord | null> {
      open();
      return outbox.getWebhook(id);
    },

    async deleteWebhook(id: string): Promise<boolean> {
      open();
      return outbox.deleteWebhook(id);
    },

    async updateWebhook(id: string, change: WebhookChange): Promise<WebhookRecord | null> {
      open();
      return outbox.update(id, change);
    },

    async addDelivery(input: Parameters<WebhookStore['addDelivery']>[0]): Promise<DeliveryRecord | null> {
      open();
      return outbox.addDelivery(input);
    },

    async getDelivery(input: { webhookId: string; id: string }): Promise<(DeliveryRecord & { body: string }) | null> {
      open();
      return outbox.getDelivery(input);
    },

    async recordStatusChanges(input: { now: number }): Promise<{ recorded: number; nextAt: number | null }> {
      open();
      return outbox.recordStatusChanges(ipos.values(), input.now);
    },

    async claimDeliveries(input: Parameters<WebhookStore['claimDeliveries']>[0]): Promise<ClaimedDelivery[]> {
      open();
      return outbox.claim(input);
    },

    async finishDeliveries(results: readonly DeliveryResult[]): Promise<void> {
      open();
      outbox.finish(results);
    },

    async listDeliveries(input: { webhookId: string; before: string | null; limit: number }): Promise<DeliveryRecord[] | null> {
      open();
      return outbox.listDeliveries(input);
    },

    async replayDelivery(input: { webhookId: string; of: string; id: string; now: number }): Promise<DeliveryRecord | null> {
      open();
      return outbox.replay(input);
    },

    async pruneDeliveries(input: { before: number; keepPerWebhook: number }): Promise<number> {
      open();
      return outbox.prune(input);
    },

    async outboxStats(): Promise<{ pending: number; oldestAt: number | null }> {
      open();
      return outbox.stats();
    },

    async watchDeliveries(wake: () => void): Promise<() => Promise<void>> {
      open();
      const stop = outbox.watch(wake);
      return async () => stop();
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(idleSweep);
      ipos.clear();
      snapshots.clear();
      subscription.clear();
      accounts.clear();
      outbox.clear();
      windows.clear();
    },
  };
}

/** How often idle rate windows are looked for (see `RateWindows.sweepIdle`). */
const IDLE_SWEEP_MS = 60_000;

/**
 * A deep, frozen copy of an IPO record (its arrays, schedule events and listing prices are
 * the only nested values). Frozen, so that nothing can change a stored record and the core may keep the
 * record's JSON text for as long as the record lives.
 */
function copyIpo(ipo: IpoRecord): IpoRecord {
  return Object.freeze({
    ...ipo,
    exchanges: Object.freeze([...ipo.exchanges]),
    schedule: Object.freeze(ipo.schedule.map((event) => Object.freeze({ ...event }))),
    strengths: Object.freeze([...ipo.strengths]),
    risks: Object.freeze([...ipo.risks]),
    mediaCoverageLinks: Object.freeze([...ipo.mediaCoverageLinks]),
    leadManagers: Object.freeze([...ipo.leadManagers]),
    listingPrices: Object.freeze(ipo.listingPrices.map((prices) => Object.freeze({ ...prices }))),
  }) as IpoRecord;
}

/**
 * The IPOs of a write that are new (`before` null) or differ from the stored one (`before`:
 * the stored one), for `eventsOfWrite`.
 */
function changedIpos(written: readonly IpoRecord[], stored: (id: string) => IpoRecord | null): Array<{ ipo: IpoRecord; before: IpoDates | null }> {
  const changed: Array<{ ipo: IpoRecord; before: IpoDates | null }> = [];
  for (const ipo of written) {
    const before = stored(ipo.id);
    if (before === null || !sameIpo(before, ipo)) changed.push({ ipo, before });
  }
  return changed;
}

/** A deep copy of a snapshot record. */
/** A frozen copy with every category (the serializer keeps the text of a frozen snapshot). */
function copySubscription(record: SubscriptionRecord): SubscriptionRecord {
  return Object.freeze({ ipoId: record.ipoId, timestamp: record.timestamp, times: Object.freeze(fullTimes(record.times)) });
}

function copySnapshot(snapshot: SnapshotRecord): SnapshotRecord {
  return { ...snapshot, sources: snapshot.sources.map((source) => ({ ...source })), aggregations: { ...snapshot.aggregations } };
}
