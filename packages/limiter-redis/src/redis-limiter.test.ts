import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError, type RateLimiter, type UsageRow } from '@ipokit/core';
import type { RateLimitWindow, UsageCharge, UsageRoute } from '@ipokit/core/backend';
import { USAGE_ROUTES } from '@ipokit/core';
import { rateLimitModel, testLimiter } from '@ipokit/testing';
import { redisLimiter, type IoredisClient, type RedisLimiter, type RedisLimiterOptions } from './index.js';
import { deleteKeysUnder, keysUnder, randomPrefix, REDIS_URL } from './test-redis.js';

// The limiter on the Redis at REDIS_URL, through both client libraries: the whole
// conformance suite (testLimiter, with its property against rateLimitHit), then what the
// suite cannot see: the keys, what they hold and how long they live, times that are not
// whole milliseconds, a quota of 100,000, clocks that go back, usage ranges, and the
// clients it takes or refuses. The deadline and outage checks are in deadline.test.ts.

const N0 = Date.UTC(2026, 10, 20, 12);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** 00:00 IST of N0's IST day. */
const DAY0 = Date.UTC(2026, 10, 19, 18, 30);

/** A window as these tests write it: a minute window unless it says otherwise. */
type W = Omit<RateLimitWindow, 'ms'> & { ms?: number };
const full = (windows: W[]): RateLimitWindow[] => windows.map((w) => ({ ...w, ms: w.ms ?? MINUTE }));
const state = (count: number, oldest: number | null, blocking: number | null) => ({ count, oldest, blocking });

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
      /** Minute windows unless a window says otherwise. */
      const hit = (l: RateLimiter, now: number, windows: W[], usage?: UsageCharge) =>
        l.hitRateLimit(usage === undefined ? { now, windows: full(windows) } : { now, windows: full(windows), usage });
      const peek = (l: RateLimiter, now: number, windows: W[]) => l.peekRateLimit({ now, windows: full(windows) });

      it('keeps each window in its own key under the prefix, every key of one account under its hash tag', async () => {
        await withLimiter(async (limiter, prefix) => {
          const usage: UsageCharge = { accountId: 'a1', keyId: 'key_1', route: 'gmp', day: '2026-11-20' };
          await hit(limiter, N0, [{ key: 'acct:a1', quota: 5 }, { key: 'acct:a1', quota: 50, ms: HOUR }, { key: 'acct:a1', quota: 500, ms: DAY, start: DAY0 }, { key: 'gmp:a1', quota: 3 }, { key: 'gmp:a1', quota: 30, ms: DAY, start: DAY0 }], usage);
          await hit(limiter, N0, [{ key: 'addr:2001:db8::', quota: 5 }, { key: 'addr:2001:db8::', quota: 5, ms: 5_000 }, { key: 'addr:2001:db8::', quota: 5, ms: 1_000, start: N0 }]);
          expect((await keysUnder(admin, prefix)).sort()).toEqual(
            [
              'acct:{a1}', // the minute: the key of earlier versions, which had no other window
              'acct:{a1}:3600000',
              `acct:{a1}:d:${DAY0}`,
              'addr:{2001:db8::}',
              'addr:{2001:db8::}:5000',
              `addr:{2001:db8::}:1000:${N0}`,
              'gmp:{a1}',
              `gmp:{a1}:d:${DAY0}`,
              'usage:{a1}:2026-11-20',
            ].map((k) => prefix + k).sort(),
          );
          expect(await admin.type(`${prefix}acct:{a1}`)).toBe('list');
          expect(await admin.lrange(`${prefix}acct:{a1}`, 0, -1)).toEqual([String(N0)]);
          expect(await admin.lrange(`${prefix}acct:{a1}:3600000`, 0, -1)).toEqual([String(N0)]);
          // a calendar window is a count
          expect(await admin.type(`${prefix}acct:{a1}:d:${DAY0}`)).toBe('string');
          expect(await admin.get(`${prefix}acct:{a1}:d:${DAY0}`)).toBe('1');
          expect(await admin.hgetall(`${prefix}usage:{a1}:2026-11-20`)).toEqual({ 'key_1:gmp:a': '1' });
        });
      });

      it('reads the minute list an earlier version wrote as the minute window', async () => {
        await withLimiter(async (limiter, prefix) => {
          await admin.rpush(`${prefix}acct:{up}`, String(N0), String(N0 + 1));
          expect(await hit(limiter, N0 + 2, [{ key: 'acct:up', quota: 3 }, { key: 'acct:up', quota: 3, ms: HOUR }])).toEqual({
            admitted: true,
            windows: [state(3, N0, N0), state(1, N0 + 2, null)],
          });
          expect(await peek(limiter, N0 + 3, [{ key: 'acct:up', quota: 3 }])).toEqual([state(3, N0, N0)]);
        });
      });

      it('keeps at most min(quota, hits) entries per sliding window, and drops hits that left when it charges', async () => {
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
            windows: [state(2, N0 + 2, null)],
          });
          expect(await admin.lrange(key, 0, -1)).toEqual([N0 + 2, N0 + MINUTE + 1].map(String));
          // an hour window of 360 a minute apart: never more than 360 entries, a day window only a count
          const hour = { key: 'acct:h', quota: 360, ms: HOUR };
          const day = { key: 'acct:h', quota: 1_000, ms: DAY, start: DAY0 };
          let admitted = 0;
          for (let i = 0; i < 400; i++) if ((await hit(limiter, N0 + i * 10_000, [hour, day])).admitted) admitted++;
          expect(admitted).toBe(360 + 40);
          expect(await admin.llen(`${prefix}acct:{h}:3600000`)).toBe(360);
          expect(await admin.get(`${prefix}acct:{h}:d:${DAY0}`)).toBe('400');
        });
      });

      it('writes no window on a refusal or a peek; a refusal with usage counts only the refusal', async () => {
        await withLimiter(async (limiter, prefix) => {
          const key = `${prefix}acct:{w}`;
          const dayKey = `${prefix}acct:{w}:d:${DAY0}`;
          const w = { key: 'acct:w', quota: 1 };
          const day = { key: 'acct:w', quota: 5, ms: DAY, start: DAY0 };
          expect(await peek(limiter, N0, [w, day])).toEqual([state(0, null, null), state(0, null, null)]);
          expect(await keysUnder(admin, prefix)).toEqual([]);
          await hit(limiter, N0, [w, day]);
          await admin.pexpire(key, 50_000);
          await admin.pexpire(dayKey, 50_000);
          const usage: UsageCharge = { accountId: 'w', keyId: 'k', route: 'list', day: '2026-11-20' };
          expect(await hit(limiter, N0 + 1, [w, day], usage)).toEqual({ admitted: false, windows: [state(1, N0, N0), state(1, DAY0, null)] });
          await peek(limiter, N0 + 2 * MINUTE, [w, day]);
          expect(await admin.lrange(key, 0, -1)).toEqual([String(N0)]);
          expect(await admin.get(dayKey)).toBe('1');
          // the refusal did not lengthen the expiries
          expect(await admin.pttl(key)).toBeLessThanOrEqual(50_000);
          expect(await admin.pttl(dayKey)).toBeLessThanOrEqual(50_000);
          expect(await admin.hgetall(`${prefix}usage:{w}:2026-11-20`)).toEqual({ 'k:list:r': '1' });
        });
      });

      it('expires a sliding window two window lengths after its last charge, a day window a day after its end, usage after 400 days', async () => {
        await withLimiter(async (limiter, prefix) => {
          await hit(limiter, N0, [{ key: 'acct:e', quota: 5 }, { key: 'acct:e', quota: 5, ms: HOUR }]);
          const ttl = await admin.pttl(`${prefix}acct:{e}`);
          expect(ttl).toBeGreaterThan(2 * MINUTE - 5_000);
          expect(ttl).toBeLessThanOrEqual(2 * MINUTE);
          const hourTtl = await admin.pttl(`${prefix}acct:{e}:3600000`);
          expect(hourTtl).toBeGreaterThan(2 * HOUR - 5_000);
          expect(hourTtl).toBeLessThanOrEqual(2 * HOUR);
          // a caller with a shorter window draws on another window: it leaves this one alone
          await hit(limiter, N0 + 1, [{ key: 'acct:e', quota: 5, ms: 1_000 }]);
          expect(await admin.llen(`${prefix}acct:{e}`)).toBe(1);
          expect(await admin.pttl(`${prefix}acct:{e}`)).toBeGreaterThan(2 * MINUTE - 5_000);
          expect(await admin.pttl(`${prefix}acct:{e}:1000`)).toBeLessThanOrEqual(2_000);

          // a day window: what is left of the day at now, plus a day; only ever lengthened
          const day = { key: 'acct:e', quota: 5, ms: DAY, start: DAY0 };
          const dayKey = `${prefix}acct:{e}:d:${DAY0}`;
          const left = DAY0 + DAY - N0;
          await hit(limiter, N0, [day]);
          expect(await admin.pttl(dayKey)).toBeGreaterThan(left + DAY - 5_000);
          expect(await admin.pttl(dayKey)).toBeLessThanOrEqual(left + DAY);
          // a host whose clock is past the day's end still charges it, and does not shorten it
          await hit(limiter, DAY0 + 3 * DAY, [day]);
          expect(await admin.pttl(dayKey)).toBeGreaterThan(left + DAY - 5_000);
          await admin.pexpire(dayKey, 1_000);
          await hit(limiter, DAY0 + 3 * DAY, [day]);
          expect(await admin.pttl(dayKey)).toBeGreaterThan(DAY - 5_000);
          expect(await admin.get(dayKey)).toBe('3');

          // usage: kept about 400 days, the year getUsage reads and more
          await hit(limiter, N0, [], { accountId: 'e', keyId: 'k', route: 'ipo', day: '2026-11-20' });
          const usageTtl = await admin.pttl(`${prefix}usage:{e}:2026-11-20`);
          expect(usageTtl).toBeGreaterThan(400 * DAY - 5_000);
          expect(usageTtl).toBeLessThanOrEqual(400 * DAY);

          // and the windows go away on their own
          await hit(limiter, N0, [{ key: 'acct:short', quota: 5, ms: 40 }, { key: 'acct:short', quota: 5, ms: 20, start: N0 }]);
          expect(await admin.exists(`${prefix}acct:{short}:40`, `${prefix}acct:{short}:20:${N0}`)).toBe(2);
          await new Promise((resolve) => setTimeout(resolve, 150));
          expect(await admin.exists(`${prefix}acct:{short}:40`, `${prefix}acct:{short}:20:${N0}`)).toBe(0);
        });
      });

      it('returns times that are not whole milliseconds exactly (never through a Lua number)', async () => {
        await withLimiter(async (limiter) => {
          const w = [{ key: 'acct:f', quota: 2 }];
          const t1 = N0 + 0.123;
          const t2 = N0 + 0.5 + 2 ** -10;
          expect(await hit(limiter, t1, w)).toEqual({ admitted: true, windows: [state(1, t1, null)] });
          expect(await hit(limiter, t2, w)).toEqual({ admitted: true, windows: [state(2, t1, t1)] });
          expect(await hit(limiter, t1 + MINUTE - 2 ** -10, w)).toEqual({ admitted: false, windows: [state(2, t1, t1)] });
          expect(await hit(limiter, t1 + MINUTE, w)).toEqual({ admitted: true, windows: [state(2, t2, t2)] });
          // times far from today round-trip too, and a calendar window's start
          const far = 2 ** 45 + 0.125;
          expect(await hit(limiter, far, [{ key: 'acct:g', quota: 1 }])).toEqual({ admitted: true, windows: [state(1, far, far)] });
          expect(await hit(limiter, N0, [{ key: 'acct:g', quota: 1, ms: DAY, start: far }])).toEqual({ admitted: true, windows: [state(1, far, far)] });
        });
      });

      it('holds a window of quota 100,000 exactly: when full, each admitted hit lets one old hit go; a minute later one request drops them all (the cost of a full window: npm run bench:limiter)', async () => {
        await withLimiter(async (limiter, prefix) => {
          const Q = 100_000;
          const key = `${prefix}acct:{big}`;
          // 99,999 hits 0.5 ms apart from N0, written in bulk as the limiter writes them
          const times = Array.from({ length: Q - 1 }, (_, i) => String(N0 + i / 2));
          for (let i = 0; i < times.length; i += 10_000) await admin.rpush(key, ...times.slice(i, i + 10_000));
          const w = [{ key: 'acct:big', quota: Q }];
          const last = N0 + 50_000;
          expect(await hit(limiter, last, w)).toEqual({ admitted: true, windows: [state(Q, N0, N0)] });
          expect(await hit(limiter, last, w)).toEqual({ admitted: false, windows: [state(Q, N0, N0)] });
          expect(await peek(limiter, last, [{ key: 'acct:big', quota: 10 }])).toEqual([state(Q, N0, N0 + (Q - 10) / 2)]);
          // each hit at N0 + 60,000 + k/2 lets exactly one old hit go: admitted, still full
          for (let k = 0; k < 200; k++) {
            const now = N0 + MINUTE + k / 2;
            expect(await hit(limiter, now, w)).toEqual({ admitted: true, windows: [state(Q, N0 + (k + 1) / 2, N0 + (k + 1) / 2)] });
          }
          expect(await admin.llen(key)).toBe(Q);
          // a minute later every hit has left: one request drops them all
          expect(await hit(limiter, N0 + 3 * MINUTE, w)).toEqual({ admitted: true, windows: [state(1, N0 + 3 * MINUTE, null)] });
          expect(await admin.llen(key)).toBe(1);
        });
      });

      it('agrees with rateLimitHit when clocks go back and forth, over windows of several lengths and periods, with usage (property)', async () => {
        // The suite's property moves the clock forward only; processes with different
        // clocks, or a clock stepped back, write hits out of order.
        const owners = ['acct:a', 'gmp:a', 'addr:1.2.3.4'];
        const rules: Array<{ ms: number; start?: number }> = [{ ms: MINUTE }, { ms: 5_000 }, { ms: 90_000 }, { ms: DAY, start: DAY0 }, { ms: DAY, start: DAY0 + DAY }, { ms: 1_000, start: DAY0 }];
        const arb = fc.record({
          quotas: fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 6 })),
          requests: fc.array(
            fc.record({
              peek: fc.boolean(),
              dt: fc.oneof(fc.constantFrom(0, 1, -1, 0.5), fc.integer({ min: -20_000, max: 60_000 }), fc.constantFrom(30_000, 60_000, -60_000)),
              windows: fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.constantFrom(0, 0, 1, 2, 3, 4, 5)), { minLength: 0, maxLength: 4 }),
              usage: fc.option(fc.record({ keyId: fc.constantFrom('key_a', 'key_B', 'kéy'), route: fc.constantFrom<UsageRoute>(...USAGE_ROUTES), day: fc.constantFrom('2026-11-20', '2026-11-21') }), { nil: undefined }),
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
                const windows: RateLimitWindow[] = r.windows.map(([o, rule]) => ({ key: owners[o]!, quota: quotas[(o + rule) % 3]!, ...rules[rule]! }));
                if (r.peek) expect(await limiter.peekRateLimit({ now, windows })).toEqual(model.peek({ now, windows }));
                else {
                  const input = r.usage === undefined ? { now, windows } : { now, windows, usage: { accountId: 'a', ...r.usage } };
                  expect(await limiter.hitRateLimit(input)).toEqual(model.hit(input));
                }
              }
              for (const query of [{ accountId: 'a', from: '2026-11-01', to: '2026-11-30' }, { accountId: 'a', from: '2026-11-21', to: '2026-11-21', keyId: 'key_B' }]) {
                expect(await limiter.readUsage(query)).toEqual(model.readUsage(query));
              }
            });
          }),
          { numRuns: 40 },
        );
      }, 120_000);

      it('readUsage: every day of the range in one call, up to 367 days; bad ranges refused, an empty one empty', async () => {
        await withLimiter(async (limiter) => {
          const charge = (keyId: string, route: UsageRoute, day: string) => hit(limiter, N0, [], { accountId: 'r', keyId, route, day });
          await charge('key_a', 'list', '2025-11-20');
          await charge('key_a', 'list', '2026-11-20');
          await charge('key_\u{1F600}', 'gmp', '2026-11-20');
          await charge('key_\uFFFD', 'gmp', '2026-11-20');
          await charge('key:colon:list:a', 'ipo', '2026-11-20');
          await charge('key_a', 'gmp', '2026-11-20');
          await charge('key_a', 'subscription', '2026-11-20');
          const row = (day: string, keyId: string, route: UsageRoute): UsageRow => ({ day, keyId, route, admitted: 1, refused: 0 });
          expect(await limiter.readUsage({ accountId: 'r', from: '2025-11-20', to: '2026-11-20' })).toEqual([
            row('2025-11-20', 'key_a', 'list'),
            row('2026-11-20', 'key:colon:list:a', 'ipo'),
            row('2026-11-20', 'key_a', 'gmp'),
            row('2026-11-20', 'key_a', 'list'),
            row('2026-11-20', 'key_a', 'subscription'),
            row('2026-11-20', 'key_\uFFFD', 'gmp'),
            row('2026-11-20', 'key_\u{1F600}', 'gmp'),
          ]);
          expect(await limiter.readUsage({ accountId: 'r', from: '2025-11-21', to: '2026-11-19' })).toEqual([]);
          expect(await limiter.readUsage({ accountId: 'r', from: '2026-11-20', to: '2026-11-20', keyId: 'key:colon:list:a' })).toEqual([row('2026-11-20', 'key:colon:list:a', 'ipo')]);
          expect(await limiter.readUsage({ accountId: 'r', from: '2026-11-21', to: '2026-11-20' })).toEqual([]);
          // 2024 is a leap year: 2024-01-01 to 2025-01-01 is 367 days
          expect(await limiter.readUsage({ accountId: 'r', from: '2024-01-01', to: '2025-01-01' })).toEqual([]);
          for (const [from, to] of [['2024-01-01', '2025-01-02'], ['2026-02-30', '2026-03-01'], ['2026-1-01', '2026-01-02'], ['0000-01-01', '9999-12-31']]) {
            await expect(limiter.readUsage({ accountId: 'r', from: from!, to: to! })).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:BADPARAM'));
          }
        });
      });

      it('never closes the client it was given; once closed it refuses calls', async () => {
        const limiter = make(client, name);
        await limiter.close();
        await expect(hit(limiter, N0, [{ key: 'acct:c', quota: 1 }])).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
        await expect(hit(limiter, N0, [], { accountId: 'c', keyId: 'k', route: 'list', day: '2026-11-20' })).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
        await expect(peek(limiter, N0, [{ key: 'acct:c', quota: 1 }])).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
        await expect(limiter.readUsage({ accountId: 'c', from: '2026-11-20', to: '2026-11-20' })).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:UNAVAILABLE'));
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
      await limiter.hitRateLimit({ now: N0, windows: [{ key: `acct:${owner}`, quota: 1, ms: MINUTE }] });
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
