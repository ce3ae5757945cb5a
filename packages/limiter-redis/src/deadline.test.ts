import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError } from '@ipokit/core';
import type { RateLimitWindow, UsageCharge } from '@ipokit/core/backend';
import { FIXTURE_NOW, FIXTURE_TODAY, seedFixture } from '@ipokit/testing';
import { ipoRouter } from '@ipokit/express';
import { memoryStore } from '@ipokit/storage-memory';
import { redisLimiter, type IoredisClient, type NodeRedisClient } from './index.js';
import { deleteKeysUnder, freePort, randomPrefix, REDIS_URL, redisServerPath, throwawayRedis } from './test-redis.js';

// A call's deadline (StoreCallOptions): one whose deadline has passed never starts, and
// one that reaches Redis after it (held in a client's offline queue while Redis was away,
// or anywhere else on the way) records nothing: the script compares the server's clock
// with the deadline. Then the real thing on a throwaway redis-server: stopped while
// requests come, started again, and the commands the clients queued meanwhile run and
// record nothing.

const N0 = Date.UTC(2026, 10, 20, 12);
const MINUTE = 60_000;
const W: RateLimitWindow[] = [{ key: 'acct:d', quota: 5, ms: MINUTE }, { key: 'acct:d', quota: 50, ms: 86_400_000, start: N0 - 1_000 }];
const USAGE: UsageCharge = { accountId: 'd', keyId: 'key_d', route: 'list', day: '2026-11-20' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a spied client saw: the mode of each script call, and the status of each `hit` reply. */
interface Spy {
  modes: string[];
  statuses: string[];
  /** Held before a `hit` goes on to the real client. */
  delayHitMs: number;
}

function spy(): Spy {
  return { modes: [], statuses: [], delayHitMs: 0 };
}

/** An ioredis-shaped client in front of `inner` that records and may delay script calls. */
function spyIoredis(inner: IoredisClient, s: Spy): IoredisClient {
  const wrap =
    (send: (script: string, numkeys: number, ...rest: string[]) => Promise<unknown>) =>
    async (script: string, numkeys: number, ...rest: string[]): Promise<unknown> => {
      const mode = rest[numkeys] ?? '';
      s.modes.push(mode);
      if (mode === 'hit' && s.delayHitMs > 0) await sleep(s.delayHitMs);
      const reply = await send(script, numkeys, ...rest);
      if (mode === 'hit') s.statuses.push(String((reply as unknown[])[0]));
      return reply;
    };
  return { evalsha: wrap((...a) => inner.evalsha(...a)), eval: wrap((...a) => inner.eval(...a)) };
}

/** The same for node-redis. */
function spyNodeRedis(inner: NodeRedisClient, s: Spy): NodeRedisClient {
  type Options = { keys: string[]; arguments: string[] };
  const wrap =
    (send: (script: string, options: Options) => Promise<unknown>) =>
    async (script: string, options: Options): Promise<unknown> => {
      const mode = options.arguments[0] ?? '';
      s.modes.push(mode);
      if (mode === 'hit' && s.delayHitMs > 0) await sleep(s.delayHitMs);
      const reply = await send(script, options);
      if (mode === 'hit') s.statuses.push(String((reply as unknown[])[0]));
      return reply;
    };
  return { evalSha: wrap((...a) => inner.evalSha(...a)), eval: wrap((...a) => inner.eval(...a)) };
}

interface Kind {
  name: string;
  /** A client of this kind on `url`, that queues commands while disconnected and reconnects quickly. */
  connect(url: string): Promise<{ client: IoredisClient | NodeRedisClient; quit(): Promise<void> }>;
  spy(client: IoredisClient | NodeRedisClient, s: Spy): IoredisClient | NodeRedisClient;
}

const KINDS: Kind[] = [
  {
    name: 'ioredis',
    connect: async (url) => {
      // The defaults would also queue, but drop queued commands after 20 reconnection attempts.
      const client = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 100 });
      client.on('error', () => {});
      return { client, quit: async () => void client.disconnect() };
    },
    spy: (client, s) => spyIoredis(client as IoredisClient, s),
  },
  {
    name: 'node-redis',
    connect: async (url) => {
      const client = createClient({ url, socket: { reconnectStrategy: () => 100 } });
      client.on('error', () => {});
      await client.connect();
      return { client, quit: async () => void (await client.disconnect().catch(() => {})) };
    },
    spy: (client, s) => spyNodeRedis(client as NodeRedisClient, s),
  },
];

const unavailable = (e: unknown) => isIpokitError(e, 'ERR:UNAVAILABLE');

describe.skipIf(!REDIS_URL)('deadlines and outages (skipped: set REDIS_URL)', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(REDIS_URL!);
  });
  afterAll(() => admin?.quit());

  describe.each(KINDS)('on $name', (kind) => {
    it('does not start a call whose deadline has passed', async () => {
      const { client, quit } = await kind.connect(REDIS_URL!);
      const s = spy();
      const prefix = randomPrefix('late');
      const limiter = redisLimiter({ client: kind.spy(client, s), prefix });
      try {
        await expect(limiter.hitRateLimit({ now: N0, windows: W }, { deadline: performance.now() - 1 })).rejects.toSatisfy(unavailable);
        await expect(limiter.hitRateLimit({ now: N0, windows: W }, { deadline: performance.now() })).rejects.toSatisfy(unavailable);
        expect(s.modes).toEqual([]);
        // with time left it runs (asking the server's clock once first)
        expect((await limiter.hitRateLimit({ now: N0, windows: W }, { deadline: performance.now() + 2_000 })).admitted).toBe(true);
        expect(s.modes).toEqual(['time', 'hit']);
        expect((await limiter.hitRateLimit({ now: N0, windows: W }, { deadline: performance.now() + 2_000 })).windows).toEqual([
          { count: 2, oldest: N0, blocking: null },
          { count: 2, oldest: N0 - 1_000, blocking: null },
        ]);
        expect(s.modes).toEqual(['time', 'hit', 'hit']);
      } finally {
        await deleteKeysUnder(admin, prefix);
        await quit();
      }
    });

    it('records nothing when the script reaches Redis after the deadline, by which time the call has rejected', async () => {
      const { client, quit } = await kind.connect(REDIS_URL!);
      const s = spy();
      const prefix = randomPrefix('late');
      const limiter = redisLimiter({ client: kind.spy(client, s), prefix });
      const hit = (deadlineIn: number) => limiter.hitRateLimit({ now: N0, windows: W, usage: USAGE }, { deadline: performance.now() + deadlineIn });
      try {
        expect((await hit(2_000)).admitted).toBe(true);
        s.delayHitMs = 1_000;
        const started = performance.now();
        await expect(hit(100)).rejects.toSatisfy(unavailable);
        // rejected at its deadline, not when the late reply came
        expect(performance.now() - started).toBeLessThan(800);
        await sleep(1_200);
        // the script did run, after the deadline, and refused to
        expect(s.statuses).toEqual(['ok', 'late']);
        // no window charged, no usage counted
        expect(await admin.llen(`${prefix}acct:{d}`)).toBe(1);
        expect(await admin.get(`${prefix}acct:{d}:d:${N0 - 1_000}`)).toBe('1');
        expect(await limiter.readUsage({ accountId: 'd', from: '2026-11-20', to: '2026-11-20' })).toEqual([{ day: '2026-11-20', keyId: 'key_d', route: 'list', admitted: 1, refused: 0 }]);
        // a call that reaches Redis in time is decided as usual
        s.delayHitMs = 100;
        expect((await hit(1_000)).windows).toEqual([
          { count: 2, oldest: N0, blocking: null },
          { count: 2, oldest: N0 - 1_000, blocking: null },
        ]);
        expect(await limiter.readUsage({ accountId: 'd', from: '2026-11-20', to: '2026-11-20' })).toEqual([{ day: '2026-11-20', keyId: 'key_d', route: 'list', admitted: 2, refused: 0 }]);
      } finally {
        await deleteKeysUnder(admin, prefix);
        await quit();
      }
    });
  });

  describe.skipIf(redisServerPath() === null)('Redis stopped and started again (a throwaway redis-server; skipped without redis-server)', () => {
    it.each(KINDS)('$name: every call rejects ERR:UNAVAILABLE by its deadline; those the client queued run once Redis is back and record nothing', async (kind) => {
      const port = await freePort();
      let server = await throwawayRedis(port);
      const url = `redis://127.0.0.1:${port}`;
      const { client, quit } = await kind.connect(url);
      const direct = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
      direct.on('error', () => {});
      const s = spy();
      const limiter = redisLimiter({ client: kind.spy(client, s) });
      const hit = (ms = 2_000) => limiter.hitRateLimit({ now: N0, windows: W, usage: USAGE }, { deadline: performance.now() + ms });
      try {
        expect((await hit()).admitted).toBe(true);
        await server.stop();
        const started = performance.now();
        const results = await Promise.allSettled(Array.from({ length: 10 }, () => hit(300)));
        expect(performance.now() - started).toBeLessThan(1_500);
        expect(results.every((r) => r.status === 'rejected' && unavailable(r.reason))).toBe(true);
        await sleep(200);
        server = await throwawayRedis(port);
        // the client reconnects and sends what it queued (NOSCRIPT on the new server, then EVAL)
        for (let i = 0; i < 100 && s.statuses.length < 11; i++) await sleep(50);
        expect(s.statuses).toEqual(['ok', ...Array.from({ length: 10 }, () => 'late')]);
        expect(await direct.keys('*')).toEqual([]);
        expect((await hit()).windows).toEqual([
          { count: 1, oldest: N0, blocking: null },
          { count: 1, oldest: N0 - 1_000, blocking: null },
        ]);
      } finally {
        direct.disconnect();
        await quit();
        await server.stop();
      }
    }, 30_000);

    it('through Express: 503 while Redis is down, and the requests answered 503 are not counted once it is back', async () => {
      const port = await freePort();
      let server = await throwawayRedis(port);
      const redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: null, retryStrategy: () => 100 });
      redis.on('error', () => {});
      const s = spy();
      const store = memoryStore();
      const { keys, accounts, keyIds } = await seedFixture(store);
      const limiter = redisLimiter({ client: spyIoredis(redis, s) });
      const errors: unknown[] = [];
      const app = express();
      app.use(
        '/ipos',
        ipoRouter(store, {
          limiter,
          now: () => new Date(FIXTURE_NOW),
          storeTimeoutMs: 1_000,
          limits: { paid: { perMinute: 5 } },
          onError: (err) => void errors.push(err),
        }),
      );
      const http = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => http.once('listening', resolve));
      const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      const get = async () => {
        const res = await fetch(`${origin}/ipos/ORBIT`, { headers: { 'x-api-key': keys.paid } });
        await res.arrayBuffer();
        return { status: res.status, remaining: res.headers.get('ratelimit-remaining') };
      };
      try {
        expect(await get()).toEqual({ status: 200, remaining: '4' });
        await server.stop();
        expect(await Promise.all(Array.from({ length: 6 }, get))).toEqual(Array.from({ length: 6 }, () => ({ status: 503, remaining: null })));
        expect(errors.length).toBeGreaterThan(0);
        server = await throwawayRedis(port);
        for (let i = 0; i < 100 && s.statuses.length < 7; i++) await sleep(50);
        expect(s.statuses).toEqual(['ok', ...Array.from({ length: 6 }, () => 'late')]);
        // had the six been recorded, this would be a 429: the new server holds this one alone
        expect(await get()).toEqual({ status: 200, remaining: '4' });
        // and its usage: the six answered 503 were counted neither admitted nor refused
        expect(await limiter.readUsage({ accountId: accounts.paid, from: FIXTURE_TODAY, to: FIXTURE_TODAY })).toEqual([
          { day: FIXTURE_TODAY, keyId: keyIds.paid, route: 'ipo', admitted: 1, refused: 0 },
        ]);
      } finally {
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
        redis.disconnect();
        await server.stop();
      }
    }, 30_000);
  });
});
