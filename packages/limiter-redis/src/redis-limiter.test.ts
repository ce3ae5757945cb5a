import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError } from '@ipokit/core';
import type { RateLimiter, RateLimitWindow } from '@ipokit/core';
import { rateLimitModel, testLimiter } from '@ipokit/core/testing';
import { redisLimiter, type IoredisClient, type RedisLimiter, type RedisLimiterOptions } from './index.js';
import { deleteKeysUnder, keysUnder, randomPrefix, REDIS_URL } from './test-redis.js';

// The limiter on the Redis at REDIS_URL, through both client libraries: the whole
// conformance suite (testLimiter, with its property against slidingWindowHit), then what
// the suite cannot see: the keys, what they hold and how long they live, times that are
// not whole milliseconds, a quota of 100,000, clocks that go back, and the clients it
// takes or refuses. The deadline and outage checks are in deadline.test.ts.

const N0 = Date.UTC(2026, 10, 20, 12);
const MINUTE = 60_000;

describe.skipIf(!REDIS_URL)('redisLimiter on the Redis at REDIS_URL (skipped: set REDIS_URL)', () => {
  let admin: Redis;
  let io: Redis;
  let node: Awaited<ReturnType<typeof connectNodeRedis>>;
  beforeAll(async () => {
    admin = new Redis(REDIS_URL!);
    io = new Redis(REDIS_URL!);
    node = await connectNodeRedis();
  });
  afterAll(async () => {
    await Promise.all([admin?.quit(), io?.quit(), node?.quit()]);
  });

  /** A limiter on its own random prefix; `dispose` closes it and deletes its keys. */
  const made = new Map<RateLimiter, string>();
  const make = (client: () => RedisLimiterOptions['client'], label: string): RedisLimiter => {
    const prefix = randomPrefix(label);
    const limiter = redisLimiter({ client: client(), prefix });
    made.set(limiter, prefix);
    return limiter;
  };
  const dispose = async (limiter: RateLimiter): Promise<void> => {
    await limiter.close?.();
    const prefix = made.get(limiter);
    made.delete(limiter);
    if (prefix !== undefined) await deleteKeysUnder(admin, prefix);
  };

  testLimiter({ name: 'testLimiter on ioredis', createLimiter: () => make(() => io, 'io'), destroyLimiter: dispose });
  testLimiter({ name: 'testLimiter on node-redis', createLimiter: () => make(() => node, 'node'), destroyLimiter: dispose });

  for (const [name, client] of [['ioredis', () => io], ['node-redis', () => node]] as const) {
    describe(`on ${name}`, () => {
      const withLimiter = async (fn: (limiter: RedisLimiter, prefix: string) => Promise<void>): Promise<void> => {
        const limiter = make(client, name);
        try {
          await fn(limiter, made.get(limiter)!);
        } finally {
          await dispose(limiter);
        }
      };
      const hit = (l: RateLimiter, now: number, windows: RateLimitWindow[], windowMs = MINUTE) => l.hitRateLimit({ now, windowMs, windows });

      it('keeps each window in one list under the prefix, acct and gmp of one account under one hash tag', async () => {
        await withLimiter(async (limiter, prefix) => {
          await hit(limiter, N0, [{ key: 'acct:a1', quota: 5 }, { key: 'gmp:a1', quota: 3 }]);
          await hit(limiter, N0, [{ key: 'addr:2001:db8::', quota: 5 }]);
          expect((await keysUnder(admin, prefix)).sort()).toEqual([`${prefix}acct:{a1}`, `${prefix}addr:{2001:db8::}`, `${prefix}gmp:{a1}`]);
          expect(await admin.type(`${prefix}acct:{a1}`)).toBe('list');
          expect(await admin.lrange(`${prefix}acct:{a1}`, 0, -1)).toEqual([String(N0)]);
        });
      });

      it('keeps at most min(quota, hits) entries per window, and drops hits that left when it charges', async () => {
        await withLimiter(async (limiter, prefix) => {
          const key = `${prefix}acct:{q}`;
          for (let i = 0; i < 10; i++) await hit(limiter, N0 + i, [{ key: 'acct:q', quota: 3 }]);
          expect(await admin.lrange(key, 0, -1)).toEqual([N0, N0 + 1, N0 + 2].map(String));
          for (let i = 0; i < 5; i++) await hit(limiter, N0 + 10 + i, [{ key: 'acct:q2', quota: 100 }]);
          expect(await admin.llen(`${prefix}acct:{q2}`)).toBe(5);
          // a refused request keeps the hits that left (a later one may count them again) ...
          await hit(limiter, N0 + MINUTE + 1, [{ key: 'acct:q', quota: 3 }, { key: 'gmp:q', quota: 0 }]);
          expect(await admin.llen(key)).toBe(3);
          // ... an admitted one drops them
          expect(await hit(limiter, N0 + MINUTE + 1, [{ key: 'acct:q', quota: 3 }])).toEqual({
            admitted: true,
            windows: [{ count: 2, oldest: N0 + 2, blocking: null }],
          });
          expect(await admin.lrange(key, 0, -1)).toEqual([N0 + 2, N0 + MINUTE + 1].map(String));
        });
      });

      it('writes nothing on a refusal or a peek', async () => {
        await withLimiter(async (limiter, prefix) => {
          const key = `${prefix}acct:{w}`;
          expect(await limiter.peekRateLimit({ now: N0, windowMs: MINUTE, windows: [{ key: 'acct:w', quota: 1 }] })).toEqual([{ count: 0, oldest: null, blocking: null }]);
          expect(await keysUnder(admin, prefix)).toEqual([]);
          await hit(limiter, N0, [{ key: 'acct:w', quota: 1 }]);
          await admin.pexpire(key, 50_000);
          await hit(limiter, N0 + 1, [{ key: 'acct:w', quota: 1 }]);
          await limiter.peekRateLimit({ now: N0 + 2 * MINUTE, windowMs: MINUTE, windows: [{ key: 'acct:w', quota: 1 }] });
          expect(await admin.lrange(key, 0, -1)).toEqual([String(N0)]);
          // the refusal did not lengthen the expiry back to two windows
          expect(await admin.pttl(key)).toBeLessThanOrEqual(50_000);
        });
      });

      it('expires a window two window lengths after its last charge, never shortening a longer expiry', async () => {
        await withLimiter(async (limiter, prefix) => {
          await hit(limiter, N0, [{ key: 'acct:e', quota: 5 }]);
          const ttl = await admin.pttl(`${prefix}acct:{e}`);
          expect(ttl).toBeGreaterThan(2 * MINUTE - 5_000);
          expect(ttl).toBeLessThanOrEqual(2 * MINUTE);
          // a caller with a shorter window does not cut the hits a longer window still counts
          await hit(limiter, N0 + 1, [{ key: 'acct:e', quota: 5 }], 1_000);
          expect(await admin.pttl(`${prefix}acct:{e}`)).toBeGreaterThan(2 * MINUTE - 5_000);
          // and the list goes away on its own
          await hit(limiter, N0, [{ key: 'acct:short', quota: 5 }], 40);
          expect(await admin.exists(`${prefix}acct:{short}`)).toBe(1);
          await new Promise((resolve) => setTimeout(resolve, 150));
          expect(await admin.exists(`${prefix}acct:{short}`)).toBe(0);
        });
      });

      it('returns times that are not whole milliseconds exactly (never through a Lua number)', async () => {
        await withLimiter(async (limiter) => {
          const w = [{ key: 'acct:f', quota: 2 }];
          const t1 = N0 + 0.123;
          const t2 = N0 + 0.5 + 2 ** -10;
          expect(await hit(limiter, t1, w)).toEqual({ admitted: true, windows: [{ count: 1, oldest: t1, blocking: null }] });
          expect(await hit(limiter, t2, w)).toEqual({ admitted: true, windows: [{ count: 2, oldest: t1, blocking: t1 }] });
          expect(await hit(limiter, t1 + MINUTE - 2 ** -10, w)).toEqual({ admitted: false, windows: [{ count: 2, oldest: t1, blocking: t1 }] });
          expect(await hit(limiter, t1 + MINUTE, w)).toEqual({ admitted: true, windows: [{ count: 2, oldest: t2, blocking: t2 }] });
          // times far from today round-trip too
          const far = 2 ** 45 + 0.125;
          expect(await hit(limiter, far, [{ key: 'acct:g', quota: 1 }])).toEqual({ admitted: true, windows: [{ count: 1, oldest: far, blocking: far }] });
        });
      });

      it('holds a window of quota 100,000 exactly, and a request costs little whatever the window holds', async () => {
        await withLimiter(async (limiter, prefix) => {
          const Q = 100_000;
          const key = `${prefix}acct:{big}`;
          // 99,999 hits 0.5 ms apart from N0, written in bulk as the limiter writes them
          const times = Array.from({ length: Q - 1 }, (_, i) => String(N0 + i / 2));
          for (let i = 0; i < times.length; i += 10_000) await admin.rpush(key, ...times.slice(i, i + 10_000));
          const w = [{ key: 'acct:big', quota: Q }];
          const last = N0 + 50_000;
          expect(await hit(limiter, last, w)).toEqual({ admitted: true, windows: [{ count: Q, oldest: N0, blocking: N0 }] });
          expect(await hit(limiter, last, w)).toEqual({ admitted: false, windows: [{ count: Q, oldest: N0, blocking: N0 }] });
          expect(await limiter.peekRateLimit({ now: last, windowMs: MINUTE, windows: [{ key: 'acct:big', quota: 10 }] })).toEqual([
            { count: Q, oldest: N0, blocking: N0 + (Q - 10) / 2 },
          ]);
          // each hit at N0 + 60,000 + k/2 lets exactly one old hit go: admitted, still full
          let t = performance.now();
          for (let k = 0; k < 200; k++) {
            const now = N0 + MINUTE + k / 2;
            expect(await hit(limiter, now, w)).toEqual({ admitted: true, windows: [{ count: Q, oldest: N0 + (k + 1) / 2, blocking: N0 + (k + 1) / 2 }] });
          }
          const fullMs = (performance.now() - t) / 200;
          expect(await admin.llen(key)).toBe(Q);
          // a minute later every hit has left: one request drops them all
          t = performance.now();
          expect(await hit(limiter, N0 + 3 * MINUTE, w)).toEqual({ admitted: true, windows: [{ count: 1, oldest: N0 + 3 * MINUTE, blocking: null }] });
          const sweepMs = performance.now() - t;
          expect(await admin.llen(key)).toBe(1);
          expect(fullMs).toBeLessThan(20);
          expect(sweepMs).toBeLessThan(1_000);
        });
      });

      it('agrees with slidingWindowHit when clocks go back and forth and windows change length (property)', async () => {
        // The suite's property moves the clock forward only; processes with different
        // clocks, or a clock stepped back, write hits out of order.
        const keys = ['acct:a', 'gmp:a', 'addr:1.2.3.4'];
        const arb = fc.record({
          quotas: fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 6 })),
          requests: fc.array(
            fc.record({
              peek: fc.boolean(),
              dt: fc.oneof(fc.constantFrom(0, 1, -1, 0.5), fc.integer({ min: -20_000, max: 60_000 }), fc.constantFrom(30_000, 60_000, -60_000)),
              windowMs: fc.constantFrom(MINUTE, MINUTE, 5_000, 90_000),
              windows: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 }),
            }),
            { minLength: 1, maxLength: 40 },
          ),
        });
        await fc.assert(
          fc.asyncProperty(arb, async ({ quotas, requests }) => {
            await withLimiter(async (limiter) => {
              const model = rateLimitModel();
              let now = N0;
              for (const r of requests) {
                now += r.dt;
                const windows = r.windows.map((i) => ({ key: keys[i]!, quota: quotas[i]! }));
                if (r.peek) expect(await limiter.peekRateLimit({ now, windowMs: r.windowMs, windows })).toEqual(model.peek(now, r.windowMs, windows));
                else expect(await limiter.hitRateLimit({ now, windowMs: r.windowMs, windows })).toEqual(model.hit(now, r.windowMs, windows));
              }
            });
          }),
          { numRuns: 40 },
        );
      }, 120_000);

      it('never closes the client it was given; once closed it refuses calls', async () => {
        const limiter = make(client, name);
        await limiter.close();
        await expect(hit(limiter, N0, [{ key: 'acct:c', quota: 1 }])).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
        await expect(limiter.peekRateLimit({ now: N0, windowMs: MINUTE, windows: [{ key: 'acct:c', quota: 1 }] })).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
        await dispose(limiter);
        const other = make(client, name);
        try {
          expect((await hit(other, N0, [{ key: 'acct:c', quota: 1 }])).admitted).toBe(true);
        } finally {
          await dispose(other);
        }
      });
    });
  }

  it('uses the default prefix ipokit:rl:', async () => {
    const limiter = redisLimiter({ client: io });
    const owner = randomPrefix('default').replaceAll(':', '-');
    try {
      await limiter.hitRateLimit({ now: N0, windowMs: MINUTE, windows: [{ key: `acct:${owner}`, quota: 1 }] });
      expect(await admin.exists(`ipokit:rl:acct:{${owner}}`)).toBe(1);
    } finally {
      await admin.unlink(`ipokit:rl:acct:{${owner}}`);
    }
  });
});

// No server needed: these run with or without REDIS_URL.
describe('redisLimiter options', () => {
  /** Shaped like an ioredis client; never called. */
  const IOREDIS_SHAPED: IoredisClient = { evalsha: async () => null, eval: async () => null };

  it('refuses a client of an unknown shape with ERR:BADPARAM naming client', () => {
    const shapes: unknown[] = [undefined, null, {}, 'redis://127.0.0.1:6379', { query: async () => ({ rows: [] }) }, { evalsha: async () => null }, { evalSha: async () => null }, { sendCommand: async () => null }];
    for (const client of shapes) {
      let caught: unknown;
      try {
        redisLimiter({ client } as unknown as RedisLimiterOptions);
      } catch (err) {
        caught = err;
      }
      expect(isIpokitError(caught, 'ERR:BADPARAM'), String(client)).toBe(true);
      expect((caught as { parameter?: string }).parameter).toBe('client');
      expect((caught as Error).message).toMatch(/client/);
    }
    expect(() => redisLimiter(undefined as unknown as RedisLimiterOptions)).toThrow(/client/);
  });

  it('refuses a prefix with braces (the keys carry their own hash tags)', () => {
    expect(() => redisLimiter({ client: IOREDIS_SHAPED, prefix: 'app{1}:' })).toThrow(expect.objectContaining({ code: 'ERR:BADPARAM', parameter: 'prefix' }));
  });
});

async function connectNodeRedis() {
  return createClient({ url: REDIS_URL! }).connect();
}
