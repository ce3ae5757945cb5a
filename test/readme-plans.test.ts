/**
 * The README's "Plans and quotas" block mounts a router with options: those options, taken
 * from the block as written, give what the text after it says (the 101st request of a free
 * account's IST day is a 429 naming the day window; both header drafts; usage counted).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createAccount, createApiKey, getUsage, importDataset, todayInIst, type IpoRouterOptions } from '@ipokit/core';
import { createIpoHandler } from '@ipokit/core/adapter';
import { fixtureDataset } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';

const ROOT = new URL('../', import.meta.url);

/** The options object the block passes to ipoRouter, evaluated as written. */
async function blockOptions(): Promise<IpoRouterOptions> {
  const readme = await readFile(new URL('README.md', ROOT), 'utf8');
  const at = readme.indexOf('\n## Plans and quotas\n');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? '';
  const m = /ipoRouter\(store, (\{[\s\S]*\})\)\);\s*$/.exec(block);
  if (m === null) throw new Error(`the block does not pass an options object to ipoRouter:\n${block}`);
  return new Function(`return (${m[1]});`)() as IpoRouterOptions;
}

describe('README "Plans and quotas"', () => {
  it('the block\'s options: a free plan of 10 a minute and 100 an IST day, both header drafts', async () => {
    const options = await blockOptions();
    const store = memoryStore();
    await importDataset(store, fixtureDataset());
    const account = await createAccount(store, { name: 'Free', plan: 'free' });
    const { key } = await createApiKey(store, { accountId: account.id, label: 'k' });
    // 17:00 IST: seven hours to 00:00 IST
    let now = Date.UTC(2026, 10, 24, 11, 30);
    const handle = createIpoHandler(store, { ...options, now: () => new Date(now) });
    const get = () => handle({ method: 'GET', url: '/?status=open', path: '/', query: 'status=open', headers: { 'x-api-key': key }, clientAddress: '1.2.3.4' });
    for (let i = 0; i < 100; i++) {
      const res = await get();
      expect(res.status, `request ${i + 1}`).toBe(200);
      now += 6_000; // 10 a minute, never more
    }
    const refused = await get();
    expect(refused.status).toBe(429);
    const expiresIn = Math.ceil((Date.UTC(2026, 10, 24, 18, 30) - now) / 1000);
    expect(JSON.parse(refused.body).meta).toEqual({ quotaPerMinute: 10, expiresIn, window: 'day', quota: 100 });
    expect(refused.headers).toMatchObject({
      'Retry-After': String(expiresIn),
      'RateLimit-Limit': '100',
      'RateLimit-Policy': '"minute";q=10;w=60, "day";q=100;w=86400',
      RateLimit: `"day";r=0;t=${expiresIn}`,
    });
    // counted: 100 admitted and 1 refused on the list route that IST day
    const day = todayInIst(now);
    expect(await getUsage(store, { accountId: account.id, from: day, to: day })).toEqual([
      { day, keyId: expect.any(String), route: 'list', admitted: 100, refused: 1 },
    ]);
    // 00:00 IST: a new day
    now = Date.UTC(2026, 10, 24, 18, 30);
    expect((await get()).status).toBe(200);
  });
});
