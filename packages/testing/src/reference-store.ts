/**
 * A deliberately naive in-memory Store: arrays and linear scans over the reference
 * implementations, no indexes. It is the oracle the storage suite is checked against,
 * not a store to run a service on (use `@ipokit/storage-memory`).
 *
 * Every method does all its work synchronously inside one `async` function body, so
 * each call is atomic: JavaScript runs no other code until the body returns.
 */
import { type AccountRecord, type ApiKeyRecord, asciiLower, type ClaimedDelivery, compareCodePoints, type DatasetConflict, type DeliveryRecord, type DeliveryResult, eventsOfWrite, type GmpBucket, type GmpBucketQuery, type IpoRecord, type IpoRow, type KeyGrant, type ListQuery, type RateLimitOutcome, type RateLimitWindow, type RateLimitWindowState, sameIpo, sameSnapshot, sameSubscription, type SnapshotRecord, type SubscriptionQuery, type SubscriptionRecord, type UsageCharge, type WebhookChange, type WebhookRecord, type WriteOptions } from '@ipokit/core/backend';
import { latestSubscription, referenceBuckets, referenceFind, referenceList, referenceSubscriptionSeries } from './reference.js';
import { rateLimitModel } from './limiter-model.js';
import { MemoryOutbox } from '@ipokit/webhooks';
import type { AccountStore, Store, UsageRow, WebhookStore } from '@ipokit/core';

/**
 * A fresh, empty reference store. Records are copied in and out, so callers can never
 * change what it holds by mutating objects.
 *
 * @example
 * ```ts
 * import { referenceStore, testStore } from '@ipokit/testing';
 * testStore({ name: 'referenceStore', createStore: () => referenceStore() });
 * ```
 */
export function referenceStore(): Store & WebhookStore {
  let ipos: IpoRecord[] = [];
  let snapshots: SnapshotRecord[] = [];
  let subscription: SubscriptionRecord[] = [];
  const accounts: AccountRecord[] = [];
  const keys: ApiKeyRecord[] = [];
  const outbox = new MemoryOutbox();
  const limiter = rateLimitModel();

  // A key is active while it is neither revoked nor expired.
  const active = (k: ApiKeyRecord, now: string): boolean => k.revokedAt === null && (k.expiresAt === null || compareCodePoints(k.expiresAt, now) > 0);
  const activeKeys = (accountId: string, now: string): number => keys.filter((k) => k.accountId === accountId && active(k, now)).length;

  return {
    async writeDataset(input: { ipos: IpoRecord[]; snapshots: SnapshotRecord[]; subscription?: SubscriptionRecord[] }, options?: WriteOptions): Promise<DatasetConflict[]> {
      const written = input.subscription ?? [];
      const writtenIds = new Set(input.ipos.map((i) => i.id));
      const storedIds = new Set(ipos.map((i) => i.id));
      const conflicts: DatasetConflict[] = [];
      input.ipos.forEach((ipo, index) => {
        const others = ipos.filter((s) => !writtenIds.has(s.id));
        if (ipo.symbol !== null) {
          const folded = asciiLower(ipo.symbol);
          const holder = others.find((s) => s.symbol !== null && asciiLower(s.symbol) === folded);
          if (holder !== undefined) conflicts.push({ kind: 'symbol-taken', ipo: index, holder: holder.id });
        }
        const slugHolder = others.find((s) => s.slug === ipo.slug);
        if (slugHolder !== undefined) conflicts.push({ kind: 'slug-taken', ipo: index, holder: slugHolder.id });
      });
      input.snapshots.forEach((s, index) => {
        if (!writtenIds.has(s.ipoId) && !storedIds.has(s.ipoId)) conflicts.push({ kind: 'unknown-ipo', snapshot: index });
      });
      written.forEach((s, index) => {
        if (!writtenIds.has(s.ipoId) && !storedIds.has(s.ipoId)) conflicts.push({ kind: 'unknown-ipo-subscription', snapshot: index });
      });
      if (conflicts.length > 0) return conflicts;

      const types = outbox.subscribedTypes();
      const at = options?.at ?? Date.now();
      const changedIpos = input.ipos.flatMap((ipo) => {
        const before = ipos.find((i) => i.id === ipo.id) ?? null;
        return before !== null && sameIpo(before, ipo) ? [] : [{ ipo: copy(ipo), before }];
      });
      const changedSnapshots = input.snapshots.filter((s) => {
        const stored = snapshots.find((t) => t.ipoId === s.ipoId && t.timestamp === s.timestamp);
        return stored === undefined || !sameSnapshot(stored, s);
      });
      const changedSubscription = written.filter((s) => {
        const stored = subscription.find((t) => t.ipoId === s.ipoId && t.timestamp === s.timestamp);
        return stored === undefined || !sameSubscription(stored, s);
      });
      ipos = ipos.filter((i) => !writtenIds.has(i.id)).concat(input.ipos.map(copy));
      for (const s of input.snapshots) {
        snapshots = snapshots.filter((t) => !(t.ipoId === s.ipoId && t.timestamp === s.timestamp)).concat(copy(s));
      }
      for (const s of written) {
        subscription = subscription.filter((t) => !(t.ipoId === s.ipoId && t.timestamp === s.timestamp)).concat(copy(s));
      }
      // An IPO's event shows its latest subscription snapshot at `at`, after the write.
      const changed = {
        at,
        ipos: changedIpos.map((c) => ({ ...c, subscription: copy(latestSubscription(subscription, c.ipo.id, at)) })),
        snapshots: changedSnapshots,
        subscription: changedSubscription.map(copy),
        deleted: [],
      };
      outbox.record(eventsOfWrite(changed, types), at);
      return [];
    },

    async deleteIpos(ids: string[], options?: WriteOptions): Promise<{ ipos: number; snapshots: number }> {
      const gone = new Set(ids);
      const before = { ipos: ipos.length, snapshots: snapshots.length };
      const deleted = ids.filter((id) => ipos.some((i) => i.id === id));
      ipos = ipos.filter((i) => !gone.has(i.id));
      snapshots = snapshots.filter((s) => !gone.has(s.ipoId));
      subscription = subscription.filter((s) => !gone.has(s.ipoId));
      const at = options?.at ?? Date.now();
      outbox.record(eventsOfWrite({ at, ipos: [], snapshots: [], deleted }, outbox.subscribedTypes()), at);
      return { ipos: before.ipos - ipos.length, snapshots: before.snapshots - snapshots.length };
    },

    async listIpos(query: ListQuery): Promise<{ count: number; rows: IpoRow[] }> {
      return copy(referenceList(ipos, query, snapshots, subscription));
    },

    async findIpo(query: { identifier: string; gmpAt: number | null; subscriptionAt?: number | null }): Promise<IpoRow | null> {
      return copy(referenceFind(ipos, query.identifier, query.gmpAt, snapshots, query.subscriptionAt ?? null, subscription));
    },

    async gmpBuckets(query: GmpBucketQuery): Promise<GmpBucket[]> {
      return referenceBuckets(snapshots, query);
    },

    async subscriptionSeries(query: SubscriptionQuery): Promise<SubscriptionRecord[]> {
      return copy(referenceSubscriptionSeries(subscription, query));
    },

    async insertAccount(account: AccountRecord): Promise<void> {
      accounts.push(copy(account));
    },

    async getAccount(id: string): Promise<AccountRecord | null> {
      const found = accounts.find((a) => a.id === id);
      return found === undefined ? null : copy(found);
    },

    async listAccounts({ after, limit }: { after: string | null; limit: number }): Promise<AccountRecord[]> {
      return accounts
        .filter((a) => after === null || compareCodePoints(a.id, after) > 0)
        .sort((a, b) => compareCodePoints(a.id, b.id))
        .slice(0, limit)
        .map(copy);
    },

    async updateAccount(input: Parameters<AccountStore['updateAccount']>[0]): Promise<AccountRecord | 'not-found' | 'too-many-keys'> {
      const account = accounts.find((a) => a.id === input.id);
      if (account === undefined) return 'not-found';
      const plan = input.plan ?? account.plan;
      if (activeKeys(account.id, input.now) > input.maxActiveKeys[plan]) return 'too-many-keys';
      account.plan = plan;
      if (input.gmpAddon !== undefined) account.gmpAddon = input.gmpAddon;
      return copy(account);
    },

    async insertApiKey(input: Parameters<AccountStore['insertApiKey']>[0]): Promise<'ok' | 'not-found' | 'too-many-keys'> {
      const account = accounts.find((a) => a.id === input.key.accountId);
      if (account === undefined) return 'not-found';
      if (activeKeys(account.id, input.now) >= input.maxActiveKeys[account.plan]) return 'too-many-keys';
      keys.push({ ...copy(input.key), rotatedFrom: null });
      return 'ok';
    },

    async rotateApiKey(input: Parameters<AccountStore['rotateApiKey']>[0]): Promise<ApiKeyRecord | 'not-found' | 'inactive' | 'too-many-keys'> {
      const old = keys.find((k) => k.id === input.id);
      const account = old === undefined ? undefined : accounts.find((a) => a.id === old.accountId);
      if (old === undefined || account === undefined) return 'not-found';
      if (!active(old, input.now)) return 'inactive';
      const others = keys.filter((k) => k.accountId === account.id && k.id !== old.id && active(k, input.now)).length;
      if (others >= input.maxActiveKeys[account.plan]) return 'too-many-keys';
      // The new key lives no longer than the old one would have.
      const created: ApiKeyRecord = { ...input.key, accountId: account.id, label: old.label, revokedAt: null, expiresAt: old.expiresAt, lastUsedAt: null, rotatedFrom: old.id };
      old.expiresAt = old.expiresAt === null || compareCodePoints(input.overlapEndsAt, old.expiresAt) < 0 ? input.overlapEndsAt : old.expiresAt;
      keys.push(copy(created));
      return created;
    },

    async listApiKeys(accountId: string): Promise<ApiKeyRecord[] | null> {
      if (!accounts.some((a) => a.id === accountId)) return null;
      return keys
        .filter((k) => k.accountId === accountId)
        .sort((a, b) => compareCodePoints(a.createdAt, b.createdAt) || compareCodePoints(a.id, b.id))
        .map(copy);
    },

    async revokeApiKey(input: { id: string; at: string }): Promise<boolean> {
      const key = keys.find((k) => k.id === input.id);
      if (key === undefined) return false;
      key.revokedAt ??= input.at;
      return true;
    },

    async recordKeyUse(input: { id: string; at: string }): Promise<void> {
      const key = keys.find((k) => k.id === input.id);
      if (key !== undefined && (key.lastUsedAt === null || compareCodePoints(key.lastUsedAt, input.at) < 0)) key.lastUsedAt = input.at;
    },

    async findApiKey(hash: string): Promise<KeyGrant | null> {
      const key = keys.find((k) => k.hash === hash);
      const account = key === undefined ? undefined : accounts.find((a) => a.id === key.accountId);
      if (key === undefined || account === undefined) return null;
      return { keyId: key.id, accountId: account.id, plan: account.plan, gmpAddon: account.gmpAddon, revoked: key.revokedAt !== null, expiresAt: key.expiresAt };
    },

    async hitRateLimit(input: { now: number; windows: RateLimitWindow[]; usage?: UsageCharge }): Promise<RateLimitOutcome> {
      return limiter.hit(input);
    },

    async peekRateLimit(input: { now: number; windows: RateLimitWindow[] }): Promise<RateLimitWindowState[]> {
      return limiter.peek(input);
    },

    async readUsage(query: { accountId: string; from: string; to: string; keyId?: string }): Promise<UsageRow[]> {
      return limiter.readUsage(query);
    },

    async insertWebhook(webhook: WebhookRecord, limits: { maxPerAccount: number }): Promise<'ok' | 'not-found' | 'too-many-webhooks'> {
      if (!accounts.some((a) => a.id === webhook.accountId)) return 'not-found';
      return outbox.insertWebhook(webhook, limits);
    },

    async listWebhooks(accountId: string): Promise<WebhookRecord[] | null> {
      return accounts.some((a) => a.id === accountId) ? outbox.listWebhooks(accountId) : null;
    },

    async getWebhook(id: string): Promise<WebhookRecord | null> {
      return outbox.getWebhook(id);
    },

    async deleteWebhook(id: string): Promise<boolean> {
      return outbox.deleteWebhook(id);
    },

    async updateWebhook(id: string, change: WebhookChange): Promise<WebhookRecord | null> {
      return outbox.update(id, change);
    },

    async addDelivery(input: Parameters<WebhookStore['addDelivery']>[0]): Promise<DeliveryRecord | null> {
      return outbox.addDelivery(input);
    },

    async getDelivery(input: { webhookId: string; id: string }): Promise<(DeliveryRecord & { body: string }) | null> {
      return outbox.getDelivery(input);
    },

    async recordStatusChanges(input: { now: number }): Promise<{ recorded: number; nextAt: number | null }> {
      return outbox.recordStatusChanges(ipos, input.now);
    },

    async claimDeliveries(input: Parameters<WebhookStore['claimDeliveries']>[0]): Promise<ClaimedDelivery[]> {
      return copy(outbox.claim(input));
    },

    async finishDeliveries(results: readonly DeliveryResult[]): Promise<void> {
      outbox.finish(results);
    },

    async listDeliveries(input: { webhookId: string; before: string | null; limit: number }): Promise<DeliveryRecord[] | null> {
      return outbox.listDeliveries(input);
    },

    async replayDelivery(input: { webhookId: string; of: string; id: string; now: number }): Promise<DeliveryRecord | null> {
      return outbox.replay(input);
    },

    async pruneDeliveries(input: { before: number; keepPerWebhook: number }): Promise<number> {
      return outbox.prune(input);
    },

    async outboxStats(): Promise<{ pending: number; oldestAt: number | null }> {
      return outbox.stats();
    },

    async close(): Promise<void> {},
  };
}

/** A deep copy of plain data (records hold only JSON values). */
function copy<T>(value: T): T {
  return structuredClone(value);
}
