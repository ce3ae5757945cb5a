/**
 * Accounts and API keys of a memory store: Maps by id, keys also by hash and by account.
 * The plan limits count an account's keys active at the given instant in the same
 * synchronous step as the change (which makes them atomic); O(keys of the account), an
 * operator's call, never a request's.
 */
import { type AccountRecord, type ActiveKeyLimits, type ApiKeyRecord, compareCodePoints, type KeyGrant } from '@ipokit/core/backend';
import type { AccountStore, Plan } from '@ipokit/core';

/**
 * The stored accounts and keys. Stored records are never mutated (a change stores a new
 * object), so the ones returned stay as they were when returned.
 *
 * @example
 * ```ts
 * const table = new AccountTable();
 * table.insertAccount({ id: 'acct_1', name: 'Acme', plan: 'free', gmpAddon: false, createdAt: '2026-11-20T10:00:00.000Z' });
 * table.getAccount('acct_1')?.plan; // 'free'
 * ```
 */
export class AccountTable {
  private accounts = new Map<string, AccountRecord>();
  private keys = new Map<string, ApiKeyRecord>();
  /** SHA-256 hex -> key id. */
  private keysByHash = new Map<string, string>();
  /** Account id -> ids of its keys, in insertion order. */
  private keysByAccount = new Map<string, string[]>();

  /**
   * Stores an account (a copy of it).
   *
   * @example
   * ```ts
   * table.insertAccount(account);
   * ```
   */
  insertAccount(account: AccountRecord): void {
    this.accounts.set(account.id, { ...account });
  }

  /**
   * The account with this id, or null.
   *
   * @example
   * ```ts
   * table.getAccount('acct_1');
   * ```
   */
  getAccount(id: string): AccountRecord | null {
    return this.accounts.get(id) ?? null;
  }

  /**
   * At most `limit` accounts with an id above `after`, ascending by id in code-point order
   * (see `Store.listAccounts`). O(n log n): an operator's listing, not a request's.
   *
   * @example
   * ```ts
   * table.listAccounts({ after: null, limit: 100 });
   * ```
   */
  listAccounts({ after, limit }: { after: string | null; limit: number }): AccountRecord[] {
    const out: AccountRecord[] = [];
    for (const a of this.accounts.values()) if (after === null || compareCodePoints(a.id, after) > 0) out.push(a);
    return out.sort((a, b) => compareCodePoints(a.id, b.id)).slice(0, limit);
  }

  /**
   * Changes plan and/or add-on unless the new plan allows fewer active keys than the
   * account holds (see `Store.updateAccount`).
   *
   * @example
   * ```ts
   * table.updateAccount({ id: 'acct_1', plan: 'pro', maxActiveKeys: { free: 1, paid: Infinity, pro: Infinity }, now: new Date().toISOString() });
   * ```
   */
  updateAccount(input: { id: string; plan?: Plan; gmpAddon?: boolean; maxActiveKeys: ActiveKeyLimits; now: string }): AccountRecord | 'not-found' | 'too-many-keys' {
    const account = this.accounts.get(input.id);
    if (account === undefined) return 'not-found';
    const plan = input.plan ?? account.plan;
    if (this.activeCount(account.id, input.now) > input.maxActiveKeys[plan]) return 'too-many-keys';
    const updated: AccountRecord = { ...account, plan, gmpAddon: input.gmpAddon ?? account.gmpAddon };
    this.accounts.set(account.id, updated);
    return updated;
  }

  /**
   * Stores a key (a copy of it) unless its account is unknown or already holds the
   * keys active at `now` that its plan allows (see `Store.insertApiKey`).
   *
   * @example
   * ```ts
   * table.insertApiKey({ key, maxActiveKeys: { free: 1, paid: Infinity, pro: Infinity }, now: key.createdAt }); // 'ok'
   * ```
   */
  insertApiKey(input: { key: Omit<ApiKeyRecord, 'rotatedFrom'>; maxActiveKeys: ActiveKeyLimits; now: string }): 'ok' | 'not-found' | 'too-many-keys' {
    const key: ApiKeyRecord = { ...input.key, rotatedFrom: null };
    const account = this.accounts.get(key.accountId);
    if (account === undefined) return 'not-found';
    if (isActive(key, input.now) && this.activeCount(account.id, input.now) >= input.maxActiveKeys[account.plan]) return 'too-many-keys';
    this.storeKey(key);
    return 'ok';
  }

  /**
   * Rotates a key: a new key of the old one's account, label and expiry, rotated from it,
   * and the old key's expiry moved to `overlapEndsAt` when that is earlier (see
   * `Store.rotateApiKey`).
   *
   * @example
   * ```ts
   * table.rotateApiKey({ id: 'key_1', key: { id: 'key_2', hash, prefix, createdAt: now }, now, overlapEndsAt, maxActiveKeys }); // the new record
   * ```
   */
  rotateApiKey(input: Parameters<AccountStore['rotateApiKey']>[0]): ApiKeyRecord | 'not-found' | 'inactive' | 'too-many-keys' {
    const old = this.keys.get(input.id);
    const account = old === undefined ? undefined : this.accounts.get(old.accountId);
    if (old === undefined || account === undefined) return 'not-found';
    if (!isActive(old, input.now)) return 'inactive';
    // The new key takes the old one's place in the count.
    if (this.activeCount(account.id, input.now) - 1 >= input.maxActiveKeys[account.plan]) return 'too-many-keys';
    const expiresAt = old.expiresAt !== null && old.expiresAt < input.overlapEndsAt ? old.expiresAt : input.overlapEndsAt;
    this.keys.set(old.id, { ...old, expiresAt });
    // The new key lives no longer than the old one would have.
    const created: ApiKeyRecord = { ...input.key, accountId: old.accountId, label: old.label, revokedAt: null, expiresAt: old.expiresAt, lastUsedAt: null, rotatedFrom: old.id };
    this.storeKey(created);
    return { ...created };
  }

  /**
   * The account's keys ordered by `createdAt`, then `id` (code points); null when the
   * account is unknown.
   *
   * @example
   * ```ts
   * table.listApiKeys('acct_1'); // [{ id, accountId, hash, prefix, label, createdAt, revokedAt, expiresAt, lastUsedAt, rotatedFrom }]
   * ```
   */
  listApiKeys(accountId: string): ApiKeyRecord[] | null {
    if (!this.accounts.has(accountId)) return null;
    const out: ApiKeyRecord[] = [];
    for (const id of this.keysByAccount.get(accountId) ?? []) {
      const key = this.keys.get(id);
      if (key !== undefined) out.push(key);
    }
    return out.sort((a, b) => compareCodePoints(a.createdAt, b.createdAt) || compareCodePoints(a.id, b.id));
  }

  /**
   * Marks a key revoked at `at`, keeping an earlier revocation; false for an unknown id.
   *
   * @example
   * ```ts
   * table.revokeApiKey({ id: 'key_1', at: new Date().toISOString() }); // true
   * ```
   */
  revokeApiKey(input: { id: string; at: string }): boolean {
    const key = this.keys.get(input.id);
    if (key === undefined) return false;
    if (key.revokedAt === null) this.keys.set(key.id, { ...key, revokedAt: input.at });
    return true;
  }

  /**
   * Sets a key's `lastUsedAt` to `at` unless it holds a later instant; an unknown id is ignored.
   *
   * @example
   * ```ts
   * table.recordKeyUse({ id: 'key_1', at: new Date().toISOString() });
   * ```
   */
  recordKeyUse(input: { id: string; at: string }): void {
    const key = this.keys.get(input.id);
    if (key !== undefined && (key.lastUsedAt === null || key.lastUsedAt < input.at)) this.keys.set(key.id, { ...key, lastUsedAt: input.at });
  }

  /**
   * The key with this SHA-256 hex and its account's current plan, or null.
   *
   * @example
   * ```ts
   * table.findApiKey(hashApiKey(key)); // { keyId, accountId, plan, gmpAddon, revoked, expiresAt }
   * ```
   */
  findApiKey(hash: string): KeyGrant | null {
    const id = this.keysByHash.get(hash);
    const key = id === undefined ? undefined : this.keys.get(id);
    const account = key === undefined ? undefined : this.accounts.get(key.accountId);
    if (key === undefined || account === undefined) return null;
    return { keyId: key.id, accountId: account.id, plan: account.plan, gmpAddon: account.gmpAddon, revoked: key.revokedAt !== null, expiresAt: key.expiresAt };
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * table.clear();
   * ```
   */
  clear(): void {
    this.accounts = new Map();
    this.keys = new Map();
    this.keysByHash = new Map();
    this.keysByAccount = new Map();
  }

  /** How many of the account's keys are active at `now`. */
  private activeCount(accountId: string, now: string): number {
    let n = 0;
    for (const id of this.keysByAccount.get(accountId) ?? []) {
      const key = this.keys.get(id);
      if (key !== undefined && isActive(key, now)) n++;
    }
    return n;
  }

  /** Stores a key (a copy), replacing one with the same id. */
  private storeKey(key: ApiKeyRecord): void {
    const previous = this.keys.get(key.id);
    if (previous !== undefined) this.forgetKey(previous);
    this.keys.set(key.id, { ...key });
    this.keysByHash.set(key.hash, key.id);
    const ids = this.keysByAccount.get(key.accountId);
    if (ids === undefined) this.keysByAccount.set(key.accountId, [key.id]);
    else ids.push(key.id);
  }

  /** Undoes the bookkeeping of a key about to be replaced by one with the same id. */
  private forgetKey(key: ApiKeyRecord): void {
    this.keys.delete(key.id);
    if (this.keysByHash.get(key.hash) === key.id) this.keysByHash.delete(key.hash);
    const ids = this.keysByAccount.get(key.accountId);
    if (ids !== undefined) {
      const at = ids.indexOf(key.id);
      if (at >= 0) ids.splice(at, 1);
    }
  }
}

/** Not revoked, and not expired at `now` (ISO strings as the core writes them compare as text). */
function isActive(key: ApiKeyRecord, now: string): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}
