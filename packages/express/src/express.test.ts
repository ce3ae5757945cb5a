import type { Express } from 'express';
import { describe, expect, it } from 'vitest';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import { memoryStore } from '@ipokit/storage-memory';
import { FIXTURE_NOW, seedFixture, testHttp } from '@ipokit/testing';
import { ipoRouter } from './index.js';
import { EXPRESS_VERSIONS, expressTarget, listen } from './test-target.js';

// The adapter supports Express 4.18+ and 5: both run the whole suite.
for (const framework of EXPRESS_VERSIONS) {
  testHttp({ target: expressTarget(framework), createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}

// The limiter kept apart (ipoRouter(store, { limiter })): every check holds with the windows
// in another object, and the store's own limiter is never asked.
testHttp({
  target: { ...expressTarget(EXPRESS_VERSIONS[0]!), name: 'express 5, limiter option' },
  createStore: () => storeWithoutLimiter(memoryStore()),
  destroyStore: (s) => s.close?.(),
  createLimiter: () => memoryStore(),
  destroyLimiter: (l) => l.close?.(),
});

/** The store with a limiter that fails the test when it is asked anything. */
function storeWithoutLimiter(store: Store): Store {
  const refuse = (): never => {
    throw new Error("the store's own limiter was asked although the limiter option was given");
  };
  return Object.assign(Object.create(store) as Store, { hitRateLimit: refuse, peekRateLimit: refuse });
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

  it('MUST do nothing when another middleware answered first or the client left (no crash, no error)', async () => {
    const errors: unknown[] = [];
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      await withApp(
        create,
        (app, store) => {
          // connect-timeout style: answers 503 while the store is still busy
          app.use((_req, res, next) => {
            const timer = setTimeout(() => {
              if (!res.headersSent) res.status(503).type('text/plain').send('timed out');
            }, 30);
            res.on('close', () => clearTimeout(timer));
            next();
          });
          app.use('/ipos', ipoRouter(slowStore(store, 150), { ...clock(), onError: (e) => errors.push(e) }));
          app.use((err: unknown, _req: unknown, res: { headersSent: boolean; end(): void }, _next: unknown) => {
            errors.push(err);
            if (!res.headersSent) res.end();
          });
        },
        async (base) => {
          expect(await text(`${base}/ipos?status=open`)).toEqual([503, 'timed out']);
          // the client that leaves before the answer
          const gone = new AbortController();
          const request = fetch(`${base}/ipos?status=open`, { signal: gone.signal }).catch(() => 'aborted');
          setTimeout(() => gone.abort(), 10);
          expect(await request).toBe('aborted');
          await new Promise((resolve) => setTimeout(resolve, 300));
          // the process still serves, and nothing was reported
          expect(await status(`${base}/ipos?status=open`)).toBe(503);
        },
      );
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
    expect(errors).toEqual([]);
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

/** The store with its IPO reads answering `ms` later. */
function slowStore(store: Store, ms: number): Store {
  const later = <T>(value: T | Promise<T>): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));
  return Object.assign(Object.create(store) as Store, {
    listIpos: (q: Parameters<Store['listIpos']>[0]) => later(store.listIpos(q)),
    findIpo: (q: Parameters<Store['findIpo']>[0]) => later(store.findIpo(q)),
  });
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
