/**
 * The webhook endpoints capability's conformance checks (`WebhookStore`): what a backend must
 * do for `createWebhook`, `listWebhooks` and `deleteWebhook` to hold.
 */
import { describe, expect, it } from 'vitest';
import type { AccountStore, WebhookRecord, WebhookStore } from '../types.js';

/** Options of {@link testWebhookStore}. */
export interface TestWebhookStoreOptions {
  name?: string;
  /** A fresh, empty store with accounts and webhooks. */
  createStore: () => (AccountStore & WebhookStore) | Promise<AccountStore & WebhookStore>;
  destroyStore?: (store: AccountStore & WebhookStore) => void | Promise<void>;
}

/**
 * Registers the webhook endpoint checks with vitest.
 *
 * @example
 * ```ts
 * testWebhookStore({ name: 'memoryStore', createStore: () => memoryStore() });
 * ```
 */
export function testWebhookStore(options: TestWebhookStoreOptions): void {
  const check = (name: string, fn: (store: AccountStore & WebhookStore) => Promise<void>) =>
    it(name, async () => {
      const store = await options.createStore();
      try {
        await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
        await store.insertAccount({ id: 'acct_2', name: 'Two', plan: 'pro', gmpAddon: false, createdAt: '2026-11-20T10:00:00.000Z' });
        await fn(store);
      } finally {
        await options.destroyStore?.(store);
      }
    });
  const hook = (id: string, accountId: string, createdAt = '2026-11-20T10:00:00.000Z'): WebhookRecord => ({
    id,
    accountId,
    url: `https://example.com/hooks/${encodeURIComponent(id)}?q=\u{1F600}`,
    events: ['ipo.created', 'ipo.status_changed'],
    description: id === 'wh_none' ? null : `hook ${id} \u{1F600}`,
    secret: `whsec_${'A'.repeat(32)}`,
    createdAt,
    disabledAt: null,
  });

  describe(options.name ?? 'WebhookStore', () => {
    check('insertWebhook then getWebhook and listWebhooks give it back exactly; unknown ids are null', async (store) => {
      const a = hook('wh_a', 'acct_1');
      expect(await store.insertWebhook(a)).toBe('ok');
      expect(await store.getWebhook('wh_a')).toEqual(a);
      expect(await store.listWebhooks('acct_1')).toEqual([a]);
      expect(await store.listWebhooks('acct_2')).toEqual([]);
      expect(await store.listWebhooks('acct_9')).toBeNull();
      expect(await store.getWebhook('wh_b')).toBeNull();
      expect(await store.getWebhook('WH_A')).toBeNull();
      const none = hook('wh_none', 'acct_2');
      expect(await store.insertWebhook(none)).toBe('ok');
      expect(await store.getWebhook('wh_none')).toEqual(none);
    });

    check("insertWebhook: 'not-found' for an unknown account, storing nothing", async (store) => {
      expect(await store.insertWebhook(hook('wh_a', 'acct_9'))).toBe('not-found');
      expect(await store.getWebhook('wh_a')).toBeNull();
    });

    check('listWebhooks: ordered by createdAt, then id in code-point order; an account sees its own only', async (store) => {
      const hooks = [
        hook('wh_b', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_\u{1F600}', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_\uFFFD', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_z', 'acct_1', '2026-11-20T10:00:00.500Z'),
        hook('wh_A', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_other', 'acct_2', '2026-11-20T09:00:00.000Z'),
      ];
      for (const h of hooks) expect(await store.insertWebhook(h)).toBe('ok');
      expect((await store.listWebhooks('acct_1'))?.map((h) => h.id)).toEqual(['wh_z', 'wh_A', 'wh_b', 'wh_\uFFFD', 'wh_\u{1F600}']);
      expect((await store.listWebhooks('acct_2'))?.map((h) => h.id)).toEqual(['wh_other']);
    });

    check('deleteWebhook removes it (true), and is false for an unknown id', async (store) => {
      expect(await store.insertWebhook(hook('wh_a', 'acct_1'))).toBe('ok');
      expect(await store.insertWebhook(hook('wh_b', 'acct_1'))).toBe('ok');
      expect(await store.deleteWebhook('wh_a')).toBe(true);
      expect(await store.deleteWebhook('wh_a')).toBe(false);
      expect(await store.deleteWebhook('wh_nope')).toBe(false);
      expect(await store.getWebhook('wh_a')).toBeNull();
      expect((await store.listWebhooks('acct_1'))?.map((h) => h.id)).toEqual(['wh_b']);
    });

    check('records given and returned are copies: changing one changes nothing stored', async (store) => {
      const a = hook('wh_a', 'acct_1');
      expect(await store.insertWebhook(a)).toBe('ok');
      a.events.push('gmp.snapshot');
      a.url = 'https://changed.example';
      const got = (await store.getWebhook('wh_a'))!;
      got.events.length = 0;
      (await store.listWebhooks('acct_1'))![0]!.events.push('ipo.deleted');
      expect(await store.getWebhook('wh_a')).toEqual(hook('wh_a', 'acct_1'));
    });
  });
}
