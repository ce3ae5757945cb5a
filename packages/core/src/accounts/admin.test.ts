import { describe, expect, it } from 'vitest';
import { createAccount, createApiKey, getAccount, getAccountWindows, listAccounts, listApiKeys, revokeApiKey, rotateApiKey, updateAccount } from './admin.js';
import { isIpokitError } from '../model/errors.js';
import { referenceStore } from '@ipokit/testing';

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

describe('createApiKey with expiresAt', () => {
  const T = Date.UTC(2026, 10, 24, 9);
  const at = { now: () => new Date(T) };

  it('stores the instant as an ISO string in UTC and returns it once with the key', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const a = await createApiKey(store, { accountId: acct.id, label: 'a', expiresAt: '2026-11-25T00:00:00+05:30' }, at);
    expect(a.expiresAt).toBe('2026-11-24T18:30:00.000Z');
    const b = await createApiKey(store, { accountId: acct.id, label: 'b' }, at);
    expect(b.expiresAt).toBeNull();
    const c = await createApiKey(store, { accountId: acct.id, label: 'c', expiresAt: '2026-11-24T09:00:00.001Z' }, at);
    expect(c.expiresAt).toBe('2026-11-24T09:00:00.001Z');
    // (created at one instant: listed by id, which is random)
    expect((await listApiKeys(store, { accountId: acct.id })).map((k) => [k.label, k.expiresAt, k.lastUsedAt]).sort()).toEqual([
      ['a', '2026-11-24T18:30:00.000Z', null],
      ['b', null, null],
      ['c', '2026-11-24T09:00:00.001Z', null],
    ]);
  });

  it('refuses an expiresAt that is not an instant with a zone, not after now, or past the year 9999 (ERR:BADPARAM expiresAt)', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    for (const expiresAt of ['2026-11-24T09:00:00Z', '2026-11-24T08:59:59.999Z', '2026-11-25', '2026-11-25T00:00:00', 'tomorrow', '', '2026-13-01T00:00:00Z', '+010000-01-01T00:00:00Z', 1_800_000_000_000 as unknown as string, null as unknown as string]) {
      const err = await createApiKey(store, { accountId: acct.id, label: 'x', expiresAt }, at).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:BADPARAM') && err.parameter, String(expiresAt)).toBe('expiresAt');
    }
    expect(await listApiKeys(store, { accountId: acct.id })).toEqual([]);
  });
});

describe('rotateApiKey', () => {
  const T = Date.UTC(2026, 10, 24, 9);
  const at = (ms: number) => ({ now: () => new Date(T + ms) });

  it('creates a key with the same account and label and ends the old one after the overlap (default one day)', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'free' });
    const old = await createApiKey(store, { accountId: acct.id, label: 'server' }, at(0));
    const next = await rotateApiKey(store, old.id, {}, at(1_000));
    expect(next).toMatchObject({ accountId: acct.id, label: 'server', createdAt: new Date(T + 1_000).toISOString(), expiresAt: null });
    expect(next.key).toMatch(/^ipk_[0-9A-Za-z]{32}$/);
    expect(next.prefix).toBe(next.key.slice(0, 12));
    const keys = await listApiKeys(store, { accountId: acct.id });
    expect(keys.map((k) => [k.id, k.expiresAt])).toEqual([
      [old.id, new Date(T + 1_000 + 86_400_000).toISOString()],
      [next.id, null],
    ]);
    // free: no key is created, and the new key does not rotate, during the overlap
    await expect(createApiKey(store, { accountId: acct.id, label: 'x' }, at(2_000))).rejects.toMatchObject({ code: 'ERR:PLAN' });
    await expect(rotateApiKey(store, next.id, {}, at(2_000))).rejects.toMatchObject({ code: 'ERR:PLAN' });
    await expect(rotateApiKey(store, old.id, { overlapSeconds: 0 }, at(2_000))).rejects.toMatchObject({ code: 'ERR:PLAN' });
    // after it, both work again
    const third = await rotateApiKey(store, next.id, { overlapSeconds: 0 }, at(1_000 + 86_400_000));
    expect((await listApiKeys(store, { accountId: acct.id })).map((k) => k.expiresAt)).toEqual([
      new Date(T + 1_000 + 86_400_000).toISOString(),
      new Date(T + 1_000 + 86_400_000).toISOString(),
      null,
    ]);
    expect(third.label).toBe('server');
  });

  it("keeps a trial key a trial key: the new key expires with the old one, whose expiry the overlap never extends; listApiKeys shows which key each replaced", async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const in30days = new Date(T + 30 * 86_400_000).toISOString();
    const trial = await createApiKey(store, { accountId: acct.id, label: 'trial', expiresAt: in30days }, at(0));
    const next = await rotateApiKey(store, trial.id, { overlapSeconds: 3_600 }, at(1_000));
    expect(next.expiresAt).toBe(in30days);
    // rotated again near its end: the overlap (a day) would outlive it, so the old key keeps its own expiry
    const last = await rotateApiKey(store, next.id, {}, at(30 * 86_400_000 - 60_000));
    expect(last.expiresAt).toBe(in30days);
    expect((await listApiKeys(store, { accountId: acct.id })).map((k) => [k.id, k.expiresAt, k.rotatedFrom])).toEqual([
      [trial.id, new Date(T + 1_000 + 3_600_000).toISOString(), null],
      [next.id, in30days, trial.id],
      [last.id, in30days, next.id],
    ]);
  });

  it('is ERR:PLAN for a revoked or expired key, ERR:NOTFOUND for an unknown one, ERR:BADPARAM for an overlap outside 0 to 604,800 whole seconds', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const revoked = await createApiKey(store, { accountId: acct.id, label: 'r' }, at(0));
    await revokeApiKey(store, revoked.id, at(0));
    await expect(rotateApiKey(store, revoked.id, {}, at(1))).rejects.toMatchObject({ code: 'ERR:PLAN' });
    const expiring = await createApiKey(store, { accountId: acct.id, label: 'e', expiresAt: new Date(T + 60_000).toISOString() }, at(0));
    expect((await rotateApiKey(store, expiring.id, { overlapSeconds: 604_800 }, at(0))).label).toBe('e');
    expect((await listApiKeys(store, { accountId: acct.id })).find((k) => k.id === expiring.id)?.expiresAt).toBe(new Date(T + 60_000).toISOString());
    await expect(rotateApiKey(store, expiring.id, {}, at(60_000))).rejects.toMatchObject({ code: 'ERR:PLAN' });
    await expect(rotateApiKey(store, 'key_nope', {}, at(0))).rejects.toMatchObject({ code: 'ERR:NOTFOUND' });
    const live = await createApiKey(store, { accountId: acct.id, label: 'l' }, at(0));
    for (const overlapSeconds of [-1, 604_801, 1.5, Number.NaN, Infinity, '60' as unknown as number]) {
      const err = await rotateApiKey(store, live.id, { overlapSeconds }, at(0)).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:BADPARAM') && err.parameter, String(overlapSeconds)).toBe('overlapSeconds');
    }
    expect((await listApiKeys(store, { accountId: acct.id })).filter((k) => k.label === 'l')).toHaveLength(1);
  });
});

describe('maxKeysPerAccount', () => {
  const T = Date.UTC(2026, 10, 24, 9);
  const at = { now: () => new Date(T) };

  it('says the limit and how to free a slot: per plan on creation, both on rotation and on a move to paid or pro', async () => {
    const store = referenceStore();
    const paid = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const options = { ...at, maxKeysPerAccount: 2 };
    const [first] = [await createApiKey(store, { accountId: paid.id, label: 'a' }, options), await createApiKey(store, { accountId: paid.id, label: 'b' }, options)];
    await expect(createApiKey(store, { accountId: paid.id, label: 'c' }, options)).rejects.toMatchObject({
      code: 'ERR:PLAN',
      message: "The paid plan allows 2 active keys: revoke one (or wait for a rotated key's overlap to end) before creating another.",
    });
    await rotateApiKey(store, first!.id, {}, options);
    await expect(rotateApiKey(store, first!.id, {}, options)).rejects.toMatchObject({
      code: 'ERR:PLAN',
      message: "The account already holds the active keys its plan allows besides the one being rotated (free: 1, paid and pro: 2): wait for the last rotation's overlap to end, or revoke a key.",
    });
    await expect(updateAccount(store, { accountId: paid.id, plan: 'pro' }, options)).rejects.toMatchObject({
      code: 'ERR:PLAN',
      message: 'The pro plan allows 2 active keys and this account holds more: revoke some before moving to it.',
    });
    // the free plan's messages stay as they were
    const free = await createAccount(store, { name: 'Free', plan: 'free' });
    await createApiKey(store, { accountId: free.id, label: 'one' }, options);
    await expect(createApiKey(store, { accountId: free.id, label: 'two' }, options)).rejects.toMatchObject({ message: expect.stringMatching(/^The free plan allows one active key/) });
    await expect(updateAccount(store, { accountId: paid.id, plan: 'free' }, options)).rejects.toMatchObject({ message: 'The free plan allows one active key: revoke the others before moving to it.' });
  });

  it('a change of the add-on alone checks no key limit: a free account in a rotation overlap, or one over a cap that predates it, may make it', async () => {
    const store = referenceStore();
    const free = await createAccount(store, { name: 'Free', plan: 'free' });
    const only = await createApiKey(store, { accountId: free.id, label: 'one' }, at);
    await rotateApiKey(store, only.id, {}, at);
    expect(await updateAccount(store, { accountId: free.id, gmpAddon: true }, at)).toMatchObject({ plan: 'free', gmpAddon: true });
    const pro = await createAccount(store, { name: 'Pro', plan: 'pro' });
    for (const label of ['a', 'b', 'c']) await createApiKey(store, { accountId: pro.id, label }, at);
    expect(await updateAccount(store, { accountId: pro.id, gmpAddon: true }, { ...at, maxKeysPerAccount: 1 })).toMatchObject({ plan: 'pro', gmpAddon: true });
  });

  it('is a whole number >= 1 or Infinity, else ERR:BADPARAM naming it, before anything is written', async () => {
    const store = referenceStore();
    const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
    const key = await createApiKey(store, { accountId: acct.id, label: 'k' }, at);
    for (const maxKeysPerAccount of [0, -1, 1.5, Number.NaN, -Infinity, '100' as unknown as number]) {
      for (const call of [
        () => createApiKey(store, { accountId: acct.id, label: 'x' }, { ...at, maxKeysPerAccount }),
        () => rotateApiKey(store, key.id, {}, { ...at, maxKeysPerAccount }),
        () => updateAccount(store, { accountId: acct.id, plan: 'pro' }, { ...at, maxKeysPerAccount }),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(isIpokitError(err, 'ERR:BADPARAM') && err.parameter, String(maxKeysPerAccount)).toBe('maxKeysPerAccount');
      }
    }
    expect(await listApiKeys(store, { accountId: acct.id })).toHaveLength(1);
    expect((await getAccount(store, acct.id)).plan).toBe('paid');
    for (let i = 0; i < 150; i++) await createApiKey(store, { accountId: acct.id, label: `k${i}` }, { ...at, maxKeysPerAccount: Infinity });
    expect(await listApiKeys(store, { accountId: acct.id })).toHaveLength(151);
  });
});
