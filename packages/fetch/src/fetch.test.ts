import { describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, testClientAddress, testHttp, type FixtureKeys } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { ipoHandler, type FetchIpoHandlerOptions } from './index.js';
import { bareHandler, fetchTarget, honoTarget, serveFetch } from './test-target.js';

// The whole HTTP suite twice: the handler as the server's fetch callback (the shape of Bun,
// Deno and Workers) and under a Hono route, both on @hono/node-server.
for (const target of [fetchTarget, honoTarget]) {
  testHttp({ target, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}

// The clientAddress option over HTTP: the socket's address, or with a trusted proxy the
// forwarded one, each with its own keyless window.
testClientAddress({
  name: 'fetch handler, clientAddress',
  start: (store, options, trustProxy) => serveFetch(bareHandler(store, options, trustProxy), '/ipos'),
});

const ORIGIN = 'http://api.example';
const clock = { now: () => new Date(FIXTURE_NOW) } satisfies IpoRouterOptions;

async function seeded(): Promise<{ store: ReturnType<typeof memoryStore>; keys: FixtureKeys }> {
  const store = memoryStore();
  const { keys } = await seedFixture(store);
  return { store, keys };
}

describe('fetch handler without a server', () => {
  it('MUST answer a plain new Request(...) as the API does, HEAD with the GET headers and no body', async () => {
    const { store, keys } = await seeded();
    const handle = ipoHandler(store, { ...clock, prefix: '/ipos' });
    const get = await handle(new Request(`${ORIGIN}/ipos/ORBIT`, { headers: { 'x-api-key': keys.paid } }));
    const text = await get.text();
    expect(get.status).toBe(200);
    expect((JSON.parse(text) as { ipo: { symbol: string } }).ipo.symbol).toBe('ORBIT');
    expect(get.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(get.headers.get('content-length')).toBe(String(new TextEncoder().encode(text).length));
    expect(get.headers.get('ratelimit-remaining')).not.toBeNull();

    const head = await handle(new Request(`${ORIGIN}/ipos/ORBIT`, { method: 'HEAD', headers: { 'x-api-key': keys.paid } }));
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));

    const list = await handle(new Request(`${ORIGIN}/IPOS/?status=open`, { headers: { 'x-api-key': keys.paid } }));
    expect(list.status).toBe(200);
    expect(((await list.json()) as { meta: { count: number } }).meta.count).toBe(4);

    const post = await handle(new Request(`${ORIGIN}/ipos/ORBIT`, { method: 'POST', body: 'x' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await store.close?.();
  });

  it('MUST match the prefix as Express matches a mount path, and answer outside it 404 in the error shape', async () => {
    const { store, keys } = await seeded();
    for (const prefix of ['/ipos', '/IPOS/', '/ipos//']) {
      const handle = ipoHandler(store, { ...clock, limits: { paid: { perMinute: Infinity } }, prefix });
      for (const path of ['/ipos?status=open', '/ipos/?status=open', '/IPOS?status=open', '/Ipos/?status=open']) {
        const res = await handle(new Request(ORIGIN + path, { headers: { 'x-api-key': keys.paid } }));
        expect(res.status, `${prefix} ${path}`).toBe(200);
        await res.arrayBuffer();
      }
      for (const path of ['/iposX', '/ipo', '/', '/x/ipos', '/iposx/ORBIT', '/ipo%73']) {
        const res = await handle(new Request(ORIGIN + path));
        const text = await res.text();
        expect(res.status, path).toBe(404);
        expect(JSON.parse(text)).toEqual({ status: '404', title: 'Not Found', detail: 'No such route: the IPO API answers under /ipos.', code: 'ERR:NOTFOUND' });
        expect(res.headers.get('content-length')).toBe(String(text.length));
        expect(res.headers.get('cache-control')).toBe('private, no-store');
        const head = await handle(new Request(ORIGIN + path, { method: 'HEAD' }));
        expect(head.body).toBeNull();
        expect(head.headers.get('content-length')).toBe(String(text.length));
      }
    }
    // without a prefix every path is the API's
    const all = ipoHandler(store, clock);
    expect((await all(new Request(`${ORIGIN}/ORBIT`, { headers: { 'x-api-key': keys.paid } }))).status).toBe(200);
    expect((await all(new Request(`${ORIGIN}/ipos/ORBIT`))).status).toBe(404);
    await store.close?.();
  });

  it('MUST refuse a prefix that is not a path and a clientAddress that is not a function', () => {
    const store = memoryStore();
    for (const prefix of ['ipos', '/ipos?x', '/ipos#a', 7 as unknown as string]) {
      expect(() => ipoHandler(store, { prefix }), String(prefix)).toThrow(/prefix must be a path/);
    }
    expect(() => ipoHandler(store, { prefix: '' })).not.toThrow();
    expect(() => ipoHandler(store, { clientAddress: 'cf-connecting-ip' as unknown as () => string })).toThrow(/clientAddress must be a function/);
  });

  it('MUST count keyless callers per clientAddress, which gets the request and the arguments after it', async () => {
    const { store } = await seeded();
    const seen: unknown[][] = [];
    const options: FetchIpoHandlerOptions<[env: { ip: string }]> = {
      ...clock,
      limits: { keyless: { perMinute: 2 } },
      clientAddress: (request, env) => {
        seen.push([new URL(request.url).pathname, env]);
        return env.ip;
      },
    };
    const handle = ipoHandler(store, options);
    const from = async (ip: string): Promise<number> => (await handle(new Request(`${ORIGIN}/?status=open`), { ip })).status;
    expect([await from('203.0.113.1'), await from('203.0.113.1'), await from('203.0.113.1')]).toEqual([200, 200, 429]);
    expect(await from('203.0.113.2')).toBe(200);
    expect(seen[0]).toEqual(['/', { ip: '203.0.113.1' }]);
  });

  it('MUST, without clientAddress, count every keyless caller in one shared window (as the docs warn)', async () => {
    const { store } = await seeded();
    const handle = ipoHandler(store, { ...clock, limits: { keyless: { perMinute: 2 } } });
    // Hono on Node would pass its context; without the option nothing reads it
    const statuses: number[] = [];
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      statuses.push((await handle(new Request(`${ORIGIN}/?status=open`, { headers: { 'x-forwarded-for': ip } }))).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('MUST read the request-target as the runtime parsed it: dot segments are resolved before the API sees them', async () => {
    const { store, keys } = await seeded();
    const handle = ipoHandler(store, { ...clock, prefix: '/ipos' });
    // new URL() resolves `..`, so this is GET /ipos/ORBIT; Express would see the identifier `..`
    const res = await handle(new Request(`${ORIGIN}/ipos/NOPE/../ORBIT`, { headers: { 'x-api-key': keys.paid } }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { ipo: { symbol: string } }).ipo.symbol).toBe('ORBIT');
    // maxUrlLength counts the target below the origin: path and query
    const short = ipoHandler(store, { ...clock, prefix: '/ipos', maxUrlLength: 20 });
    expect((await short(new Request(`${ORIGIN}/ipos?status=open`, { headers: { 'x-api-key': keys.paid } }))).status).toBe(200); // 17 bytes
    expect((await short(new Request(`${ORIGIN}/ipos?status=open&x=1234`, { headers: { 'x-api-key': keys.paid } }))).status).toBe(414); // 24 bytes
  });
});
