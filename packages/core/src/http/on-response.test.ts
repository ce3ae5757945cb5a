import { describe, expect, it } from 'vitest';
import { FIXTURE_NOW, referenceStore, seedFixture } from '@ipokit/testing';
import { createAccountHandler, type AccountRequest } from './account-handler.js';
import type { ResponseInfo } from '../model/options.js';
import { IpokitError } from '../model/errors.js';
import { createIpoHandler } from './handler.js';

// The account router tells onResponse of its own routes by name (never the path, which
// carries key ids and IPO identifiers) with the signed-in account's plan; its IPO routes
// answer through the keyed API's handler and are named as there. The adapters' own tests
// run the HTTP suite's hook checks for the keyed router.

function request(path: string, accountId: string | null, method = 'GET'): AccountRequest {
  return { method, url: `/account${path}`, path, query: '', headers: {}, clientAddress: '127.0.0.1', accountId, body: null };
}

describe('onResponse on the account router', () => {
  it('names each route, with the signed-in plan, and the IPO routes as the keyed API does', async () => {
    const store = referenceStore();
    const { accounts } = await seedFixture(store);
    const infos: ResponseInfo[] = [];
    const handle = createAccountHandler(store, { now: () => new Date(FIXTURE_NOW), onResponse: (info) => infos.push(info), limits: { pro: { perMinute: 1 } } });
    const pro = accounts.pro;
    const statuses = [];
    for (const [path, who, method] of [
      ['/', pro, 'GET'],
      ['/keys', pro, 'GET'],
      ['/keys/key_123/revoke', pro, 'POST'],
      ['/usage', pro, 'GET'],
      ['/ipos/ORBIT', pro, 'GET'],
      ['/ipos/ORBIT', pro, 'GET'],
      ['/nope/secret', pro, 'GET'],
      ['/keys', null, 'GET'],
    ] as const) {
      statuses.push((await handle(request(path, who, method))).status);
    }
    expect(statuses).toEqual([200, 200, 415, 200, 200, 429, 404, 401]);
    expect(infos.map(({ route, status, plan, method, router }) => ({ router, route, method, status, plan }))).toEqual([
      { router: 'account', route: 'account', method: 'GET', status: 200, plan: 'pro' },
      { router: 'account', route: 'keys', method: 'GET', status: 200, plan: 'pro' },
      { router: 'account', route: 'key-revoke', method: 'POST', status: 415, plan: 'pro' },
      { router: 'account', route: 'usage', method: 'GET', status: 200, plan: 'pro' },
      { router: 'account', route: 'ipo', method: 'GET', status: 200, plan: 'pro' },
      { router: 'account', route: 'ipo', method: 'GET', status: 429, plan: 'pro' },
      { router: 'account', route: 'unknown', method: 'GET', status: 404, plan: null },
      { router: 'account', route: 'keys', method: 'GET', status: 401, plan: null },
    ]);
    expect(infos[5]!.rateLimit).toEqual({ windows: ['minute'], refusedBy: 'minute' });
  });
});

describe('onStoreCall', () => {
  it("tells a store's refusal to shed load (IpokitError with shed) from another failure", async () => {
    const store = referenceStore();
    const { keys } = await seedFixture(store);
    let failure: Error | null = null;
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop !== 'findIpo' || typeof value !== 'function') return value;
        return (...args: unknown[]) => (failure === null ? Reflect.apply(value as (...a: unknown[]) => unknown, target, args) : Promise.reject(failure));
      },
    });
    const calls: string[] = [];
    const errors: unknown[] = [];
    const handle = createIpoHandler(failing, { now: () => new Date(FIXTURE_NOW), onStoreCall: ({ op, outcome }) => calls.push(`${op} ${outcome}`), onError: (e) => errors.push(e) });
    const get = async () => (await handle({ method: 'GET', url: '/ipos/ORBIT', path: '/ORBIT', query: '', headers: { 'x-api-key': keys.paid }, clientAddress: '127.0.0.1' })).status;
    failure = new IpokitError('ERR:UNAVAILABLE', 'More than 20 calls waited', { shed: true });
    expect(await get()).toBe(503);
    failure = new IpokitError('ERR:UNAVAILABLE', 'the database is down');
    expect(await get()).toBe(503);
    expect(calls.filter((c) => c.startsWith('findIpo '))).toEqual(['findIpo shed', 'findIpo error']);
    expect(errors).toHaveLength(2);
  });
});
