import type { Express } from 'express';
import { describe, expect, it } from 'vitest';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import { memoryStore } from '@ipokit/storage-memory';
import { FIXTURE_NOW, seedFixture, testHttp } from '@ipokit/core/testing';
import { ipoRouter } from './index.js';
import { EXPRESS_VERSIONS, expressTarget, listen } from './test-target.js';

// The adapter supports Express 4.18+ and 5: both run the whole suite.
for (const framework of EXPRESS_VERSIONS) {
  testHttp({ target: expressTarget(framework), createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}

describe.each(EXPRESS_VERSIONS)('express adapter on $name', ({ create }) => {
  const clock = (): IpoRouterOptions => ({ now: () => new Date(FIXTURE_NOW), limits: {} });

  it('MUST take the client address from X-Forwarded-For only when the app trusts the proxy', async () => {
    await withApp(
      create,
      (app, store) => {
        app.set('trust proxy', true);
        app.use('/ipos', ipoRouter(store, clock()));
      },
      async (base) => {
        const from = (address: string): Promise<number> => status(`${base}/ipos?status=open`, { 'x-forwarded-for': address });
        for (let i = 0; i < 6; i++) expect(await from('203.0.113.7')).toBe(200);
        expect(await from('203.0.113.7')).toBe(429);
        // the IPv4-mapped form is the same address
        expect(await from('::ffff:203.0.113.7')).toBe(429);
        expect(await from('203.0.113.8')).toBe(200);
        // IPv6 addresses count by their /64
        for (let i = 0; i < 6; i++) expect(await from(`2001:db8:1:2::${i + 1}`)).toBe(200);
        expect(await from('2001:db8:1:2:ffff::9')).toBe(429);
        expect(await from('2001:db8:1:3::1')).toBe(200);
      },
    );
  });

  it('MUST ignore X-Forwarded-For without trust proxy, so a caller cannot dodge the keyless limit', async () => {
    await withApp(
      create,
      (app, store) => {
        app.use('/ipos', ipoRouter(store, clock()));
      },
      async (base) => {
        for (let i = 0; i < 6; i++) expect(await status(`${base}/ipos?status=open`, { 'x-forwarded-for': `198.51.100.${i}` })).toBe(200);
        expect(await status(`${base}/ipos?status=open`, { 'x-forwarded-for': '198.51.100.99' })).toBe(429);
        expect(await status(`${base}/ipos?status=open`)).toBe(429);
      },
    );
  });

  it('MUST measure maxUrlLength on the whole request-target, deeper mount path included', async () => {
    await withApp(
      create,
      (app, store) => {
        app.use('/api/v1/ipos', ipoRouter(store, { now: () => new Date(FIXTURE_NOW), maxUrlLength: 40 }));
      },
      async (base) => {
        const prefix = '/api/v1/ipos?status=open&x=';
        expect(await status(`${base}${prefix}${'x'.repeat(40 - prefix.length)}`)).toBe(200);
        expect(await status(`${base}${prefix}${'x'.repeat(41 - prefix.length)}`)).toBe(414);
      },
    );
  });
});

async function withApp(
  create: () => Express,
  build: (app: Express, store: Store) => void,
  fn: (origin: string) => Promise<void>,
): Promise<void> {
  const store = memoryStore();
  await seedFixture(store);
  const app = create();
  build(app, store);
  const server = await listen(app, '');
  try {
    await fn(server.baseUrl);
  } finally {
    await server.close();
    await store.close?.();
  }
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return res.status;
}

async function text(url: string): Promise<[number, string]> {
  const res = await fetch(url);
  return [res.status, await res.text()];
}
