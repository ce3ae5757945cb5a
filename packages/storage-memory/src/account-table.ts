/**
 * Accounts and API keys of a memory store: Maps by id, keys also by hash, and a count of
 * each account's active keys so that the plan limits are checked in O(1) in the same
 * synchronous step as the change (which makes them atomic).
 */
import { compareCodePoints } from '@ipokit/core/backend';
import type { AccountRecord, ActiveKeyLimits, ApiKeyRecord, KeyGrant, Plan } from '@ipokit/core';

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
  /** Account id -> how many of its keys are not revoked. */
  private activeKeys = new Map<string, number>();

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
   * table.updateAccount({ id: 'acct_1', plan: 'pro', maxActiveKeys: { free: 1, paid: Infinity, pro: Infinity } });
   * ```
   */
  updateAccount(input: { id: string; plan?: Plan; gmpAddon?: boolean; maxActiveKeys: ActiveKeyLimits }): AccountRecord | 'not-found' | 'too-many-keys' {
    const account = this.accounts.get(input.id);
    if (account === undefined) return 'not-found';
    const plan = input.plan ?? account.plan;
    if (this.activeCount(account.id) > input.maxActiveKeys[plan]) return 'too-many-keys';
    const updated: AccountRecord = { ...account, plan, gmpAddon: input.gmpAddon ?? account.gmpAddon };
    this.accounts.set(account.id, updated);
    return updated;
  }

  /**
   * Stores a key (a copy of it) unless its account is unknown or already holds the
   * active keys its plan allows (see `Store.insertApiKey`).
   *
   * @example
   * ```ts
   * table.insertApiKey({ key, maxActiveKeys: { free: 1, paid: Infinity, pro: Infinity } }); // 'ok'
   * ```
   */
  insertApiKey(input: { key: ApiKeyRecord; maxActiveKeys: ActiveKeyLimits }): 'ok' | 'not-found' | 'too-many-keys' {
    const key = input.key;
    const account = this.accounts.get(key.accountId);
    if (account === undefined) return 'not-found';
    const active = this.activeCount(account.id);
    if (key.revokedAt === null && active >= input.maxActiveKeys[account.plan]) return 'too-many-keys';
    const previous = this.keys.get(key.id);
    if (previous !== undefined) this.forgetKey(previous);
    this.keys.set(key.id, { ...key });
    this.keysByHash.set(key.hash, key.id);
    const ids = this.keysByAccount.get(account.id);
    if (ids === undefined) this.keysByAccount.set(account.id, [key.id]);
    else ids.push(key.id);
    if (key.revokedAt === null) this.activeKeys.set(account.id, this.activeCount(account.id) + 1);
    return 'ok';
  }

  /**
   * The account's keys ordered by `createdAt`, then `id` (code points); null when the
   * account is unknown.
   *
   * @example
   * ```ts
   * table.listApiKeys('acct_1'); // [{ id, accountId, hash, prefix, label, createdAt, revokedAt }]
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
    if (key.revokedAt === null) {
      this.keys.set(key.id, { ...key, revokedAt: input.at });
      this.activeKeys.set(key.accountId, this.activeCount(key.accountId) - 1);
    }
    return true;
  }

  /**
   * The key with this SHA-256 hex and its account's current plan, or null.
   *
   * @example
   * ```ts
   * table.findApiKey(hashApiKey(key)); // { keyId, accountId, plan, gmpAddon, revoked }
   * ```
   */
  findApiKey(hash: string): KeyGrant | null {
    const id = this.keysByHash.get(hash);
    const key = id === undefined ? undefined : this.keys.get(id);
    const account = key === undefined ? undefined : this.accounts.get(key.accountId);
    if (key === undefined || account === undefined) return null;
    return { keyId: key.id, accountId: account.id, plan: account.plan, gmpAddon: account.gmpAddon, revoked: key.revokedAt !== null };
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
    this.activeKeys = new Map();
  }

  private activeCount(accountId: string): number {
    return this.activeKeys.get(accountId) ?? 0;
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
    if (key.revokedAt === null) this.activeKeys.set(key.accountId, this.activeCount(key.accountId) - 1);
  }
}
