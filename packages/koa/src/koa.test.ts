import Koa from 'koa';
import mount from 'koa-mount';
import { describe, expect, it } from 'vitest';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, testHttp } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { ipoRouter } from './index.js';
import { KOA_VERSIONS, koaTargets, listen } from './test-target.js';

// The adapter supports Koa 2.13+ and 3: both run the whole suite, with `prefix`; Koa 3
// runs it once more unprefixed under koa-mount.
for (const target of koaTargets()) {
  testHttp({ target, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}

describe.each(KOA_VERSIONS)('koa adapter on $name', ({ create }) => {
  const clock = (): IpoRouterOptions => ({ now: () => new Date(FIXTURE_NOW), limits: {} });

  it('MUST match the prefix as Express matches a mount path: ignoring case, at a segment boundary', async () => {
    for (const prefix of ['/ipos', '/IPOS/', '/ipos//']) {
      await withApp(
        create,
        (app, store) => {
          app.use(ipoRouter(store, { ...clock(), prefix }));
          app.use((ctx) => {
            ctx.type = 'text/plain';
            ctx.body = `app ${ctx.path}`;
          });
        },
        async (origin) => {
          for (const path of ['/ipos?status=open', '/ipos/?status=open', '/IPOS?status=open', '/Ipos/?status=open']) {
            const res = await fetch(origin + path);
            expect(res.status, path).toBe(200);
            expect(((await res.json()) as { meta: { count: number } }).meta.count).toBe(4);
          }
          for (const path of ['/iposX', '/ipo', '/', '/x/ipos', '/iposx/ORBIT', '/ipo%73']) {
            expect(await text(origin + path), path).toEqual([200, `app ${path}`]);
          }
        },
      );
    }
  });

  it('MUST refuse a prefix that is not a path', () => {
    const store = memoryStore();
    for (const prefix of ['ipos', '/ipos?x', '/ipos#a', 7 as unknown as string]) {
      expect(() => ipoRouter(store, { prefix }), String(prefix)).toThrow(/prefix must be a path/);
    }
    expect(() => ipoRouter(store, { prefix: '' })).not.toThrow();
  });

  it('MUST take the client address from X-Forwarded-For only when app.proxy is set', async () => {
    for (const proxy of [true, false]) {
      await withApp(
        create,
        (app, store) => {
          app.proxy = proxy;
          app.use(ipoRouter(store, { ...clock(), prefix: '/ipos' }));
        },
        async (origin) => {
          const from = (address: string): Promise<number> => status(`${origin}/ipos?status=open`, { 'x-forwarded-for': address });
          for (let i = 0; i < 6; i++) expect(await from(proxy ? '203.0.113.7' : `198.51.100.${i}`)).toBe(200);
          expect(await from(proxy ? '::ffff:203.0.113.7' : '198.51.100.99')).toBe(429);
          // with a trusted proxy another address has its own window; without, it is the same caller
          expect(await from('203.0.113.8')).toBe(proxy ? 200 : 429);
        },
      );
    }
  });

  it('MUST set ctx.status, ctx.body and headers, so middleware before it can still see and change the response', async () => {
    await withApp(
      create,
      (app, store) => {
        app.use(async (ctx, next) => {
          await next();
          ctx.set('x-seen', `${ctx.status} ${typeof ctx.body === 'string' ? ctx.body.length : 'none'}`);
        });
        app.use(ipoRouter(store, { ...clock(), prefix: '/ipos' }));
      },
      async (origin) => {
        const res = await fetch(`${origin}/ipos/NOPE`, { headers: { 'x-api-key': 'ipk_nope' } });
        const body = await res.text();
        expect(res.status).toBe(401);
        expect(res.headers.get('x-seen')).toBe(`401 ${body.length}`);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      },
    );
  });

  it("MUST let errors it did not cause reach Koa's error handling", async () => {
    const seen: unknown[] = [];
    await withApp(
      create,
      (app, store) => {
        app.silent = true;
        app.on('error', (err: unknown) => seen.push(err));
        app.use(async (ctx, next) => {
          try {
            await next();
          } catch (err) {
            ctx.status = 418;
            ctx.body = `caught ${(err as Error).message}`;
          }
        });
        app.use(ipoRouter(store, { ...clock(), prefix: '/ipos' }));
        app.use((ctx) => {
          if (ctx.path === '/boom') throw new Error('downstream');
          ctx.throw(500, 'unhandled');
        });
      },
      async (origin) => {
        expect(await text(`${origin}/boom`)).toEqual([418, 'caught downstream']);
        // the router answers its own requests and never calls next()
        expect(await status(`${origin}/ipos?status=open`)).toBe(200);
        expect(seen).toEqual([]);
      },
    );
    // without a catching middleware, Koa's default handler answers and emits 'error'
    await withApp(
      create,
      (app, store) => {
        app.silent = true;
        app.on('error', (err: unknown) => seen.push(err));
        app.use(ipoRouter(store, { ...clock(), prefix: '/ipos' }));
        app.use(() => {
          throw new Error('downstream');
        });
      },
      async (origin) => {
        expect(await status(`${origin}/elsewhere`)).toBe(500);
        expect(seen.map((e) => (e as Error).message)).toEqual(['downstream']);
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
          app.silent = true;
          app.on('error', (err: unknown) => errors.push(err));
          // a timeout middleware that answers 503 on Node's response while the store is
          // still busy, and still waits for the rest of the chain
          app.use(async (ctx, next) => {
            const timer = setTimeout(() => {
              ctx.res.writeHead(503, { 'content-type': 'text/plain' });
              ctx.res.end('timed out');
            }, 30);
            try {
              await next();
            } finally {
              clearTimeout(timer);
            }
          });
          app.use(ipoRouter(slowStore(store, 150), { ...clock(), prefix: '/ipos', onError: (e) => errors.push(e) }));
        },
        async (origin) => {
          expect(await text(`${origin}/ipos?status=open`)).toEqual([503, 'timed out']);
          const gone = new AbortController();
          const request = fetch(`${origin}/ipos?status=open`, { signal: gone.signal }).catch(() => 'aborted');
          setTimeout(() => gone.abort(), 10);
          expect(await request).toBe('aborted');
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(await status(`${origin}/ipos?status=open`)).toBe(503);
        },
      );
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('MUST measure maxUrlLength on the whole request-target, prefix included', async () => {
    await withApp(
      create,
      (app, store) => {
        app.use(mount('/api/v1', ipoRouter(store, { now: () => new Date(FIXTURE_NOW), maxUrlLength: 40, prefix: '/ipos' })));
      },
      async (origin) => {
        const prefix = '/api/v1/ipos?status=open&x=';
        expect(await status(`${origin}${prefix}${'x'.repeat(40 - prefix.length)}`)).toBe(200);
        expect(await status(`${origin}${prefix}${'x'.repeat(41 - prefix.length)}`)).toBe(414);
      },
    );
  });
});

async function withApp(create: () => Koa, build: (app: Koa, store: Store) => void, fn: (origin: string) => Promise<void>): Promise<void> {
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
