import { describe, expect, it } from 'vitest';
import { createAccount, getAccount, getAccountWindows, listAccounts } from './admin.js';
import { isIpokitError } from './errors.js';
import { referenceStore } from './testing/reference-store.js';

describe('listAccounts', () => {
  it('pages through every account ascending by id, as createAccount gave them', async () => {
    const store = referenceStore();
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await createAccount(store, { name: `Acme ${i}`, plan: i % 2 === 0 ? 'free' : 'pro', gmpAddon: i % 2 === 1 }));
    const sorted = [...made].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(await listAccounts(store)).toEqual(sorted);
    const seen = [];
    for (let page = await listAccounts(store, { limit: 3 }); page.length > 0; page = await listAccounts(store, { after: page.at(-1)!.id, limit: 3 })) {
      seen.push(...page);
    }
    expect(seen).toEqual(sorted);
    expect(await listAccounts(store, { after: sorted.at(-1)!.id })).toEqual([]);
  });

  it('refuses a limit outside 1 to 1,000 and an after that is not an id, naming them', async () => {
    const store = referenceStore();
    for (const [input, parameter] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: 1.5 }, 'limit'],
      [{ limit: '10' as unknown as number }, 'limit'],
      [{ after: '' }, 'after'],
      [{ after: 7 as unknown as string }, 'after'],
    ] as const) {
      const err = await listAccounts(store, input).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:BADPARAM') && err.parameter, JSON.stringify(input)).toBe(parameter);
    }
    expect(await listAccounts(store, { limit: 1_000 })).toEqual([]);
  });
});

describe('getAccount', () => {
  it('gives the account as createAccount did; ERR:NOTFOUND for an unknown id, ERR:BADPARAM for no id', async () => {
    const store = referenceStore();
    const made = await createAccount(store, { name: 'Acme', plan: 'pro', gmpAddon: true });
    expect(await getAccount(store, made.id)).toEqual(made);
    expect(isIpokitError(await getAccount(store, 'acct_nobody').catch((e: unknown) => e), 'ERR:NOTFOUND')).toBe(true);
    expect(isIpokitError(await getAccount(store, '').catch((e: unknown) => e), 'ERR:BADPARAM')).toBe(true);
  });
});

describe('getAccountWindows', () => {
  it("reads the account's windows under the router's limits and clock, as the headers count them, charging nothing", async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const t0 = Date.UTC(2026, 10, 24, 6);
    const options = { limits: { paid: { perMinute: 4 } }, now: () => new Date(t0 + 20_500) };
    expect(await getAccountWindows(store, { accountId: acct.id }, options)).toEqual([
      { name: 'minute', quota: 4, seconds: 60, remaining: 4, reset: 0 },
      { name: 'gmp-minute', quota: 3, seconds: 60, remaining: 3, reset: 0 },
    ]);
    await store.hitRateLimit({ now: t0, windows: [{ key: `acct:${acct.id}`, quota: 4, ms: 60_000 }, { key: `gmp:${acct.id}`, quota: 3, ms: 60_000 }] });
    await store.hitRateLimit({ now: t0 + 10_000, windows: [{ key: `acct:${acct.id}`, quota: 4, ms: 60_000 }] });
    for (let i = 0; i < 3; i++) {
      expect(await getAccountWindows(store, { accountId: acct.id }, options)).toEqual([
        { name: 'minute', quota: 4, seconds: 60, remaining: 2, reset: 40 },
        { name: 'gmp-minute', quota: 3, seconds: 60, remaining: 2, reset: 40 },
      ]);
    }
    // a window turned off is not listed; one whose hits left is empty again
    expect(await getAccountWindows(store, { accountId: acct.id }, { limits: { paid: { gmpPerMinute: Infinity } }, now: () => new Date(t0 + 65_000) })).toEqual([
      { name: 'minute', quota: 6, seconds: 60, remaining: 5, reset: 5 },
    ]);
  });

  it('is ERR:NOTFOUND for an unknown account and ERR:BADPARAM for bad limits', async () => {
    const store = referenceStore();
    const missing = await getAccountWindows(store, { accountId: 'acct_nobody' }).catch((e: unknown) => e);
    expect(isIpokitError(missing, 'ERR:NOTFOUND')).toBe(true);
    const acct = await createAccount(store, { name: 'Acme', plan: 'free' });
    const bad = await getAccountWindows(store, { accountId: acct.id }, { limits: { free: { perMinute: 0 } } }).catch((e: unknown) => e);
    expect(isIpokitError(bad, 'ERR:BADPARAM')).toBe(true);
  });
});
