/**
 * The webhook endpoints of a memory store, by id and by account. Stored records are never
 * mutated (a change stores a new object), so the ones returned stay as they were.
 */
import { compareCodePoints } from '@ipokit/core/backend';
import type { WebhookRecord } from '@ipokit/core';

/**
 * The stored endpoints.
 *
 * @example
 * ```ts
 * const table = new WebhookTable();
 * table.insert(webhook);
 * table.list('acct_1'); // [webhook]
 * ```
 */
export class WebhookTable {
  private byId = new Map<string, WebhookRecord>();

  /**
   * Stores an endpoint (a copy of it).
   *
   * @example
   * ```ts
   * table.insert(webhook);
   * ```
   */
  insert(webhook: WebhookRecord): void {
    this.byId.set(webhook.id, { ...webhook, events: [...webhook.events] });
  }

  /**
   * The account's endpoints ordered by `createdAt`, then `id` (code points). O(endpoints).
   *
   * @example
   * ```ts
   * table.list('acct_1');
   * ```
   */
  list(accountId: string): WebhookRecord[] {
    const out = [...this.byId.values()].filter((w) => w.accountId === accountId);
    return out.sort((a, b) => compareCodePoints(a.createdAt, b.createdAt) || compareCodePoints(a.id, b.id)).map(copy);
  }

  /**
   * The endpoint with this id, or null.
   *
   * @example
   * ```ts
   * table.get('wh_1');
   * ```
   */
  get(id: string): WebhookRecord | null {
    const w = this.byId.get(id);
    return w === undefined ? null : copy(w);
  }

  /**
   * Deletes an endpoint; false for an unknown id.
   *
   * @example
   * ```ts
   * table.delete('wh_1'); // true
   * ```
   */
  delete(id: string): boolean {
    return this.byId.delete(id);
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
    this.byId = new Map();
  }
}

function copy(w: WebhookRecord): WebhookRecord {
  return { ...w, events: [...w.events] };
}
