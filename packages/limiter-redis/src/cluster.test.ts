import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError } from '@ipokit/core';
import type { RateLimitWindow, UsageCharge } from '@ipokit/core/backend';
import { redisLimiter, type IoredisClient, type NodeRedisClient } from './index.js';
import { freePort, REDIS_URL, redisServerPath, throwawayRedis } from './test-redis.js';

// Redis Cluster: a throwaway one-node cluster holding every slot. One node is enough to
// see the point: Redis refuses a script whose keys are in different slots (CROSSSLOT)
// whatever the number of nodes, so the windows of one request, and the usage it counts,
// must share a hash tag.

const N0 = Date.UTC(2026, 10, 20, 12);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** 00:00 IST of N0's IST day. */
const DAY0 = Date.UTC(2026, 10, 19, 18, 30);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_URL || redisServerPath() === null)('redisLimiter on Redis Cluster (skipped: set REDIS_URL, and needs redis-server)', () => {
  let server: { stop(): Promise<void> };
  let port: number;
  let node: Redis;
  beforeAll(async () => {
    port = await freePort();
    // A lone node does not know its own address (CLUSTER SLOTS would say ''): announce it.
    server = await throwawayRedis(port, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-announce-ip', '127.0.0.1']);
    node = new Redis(port, '127.0.0.1');
    await node.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    for (let i = 0; i < 100 && !String(await node.call('CLUSTER', 'INFO')).includes('cluster_state:ok'); i++) await sleep(100);
  }, 30_000);
  afterAll(async () => {
    node?.disconnect();
    await server?.stop();
  });

  const clients: Array<{ name: string; connect(): Promise<{ client: IoredisClient | NodeRedisClient; close(): Promise<void> }> }> = [
    {
      name: 'ioredis Cluster',
      connect: async () => {
        const cluster = new Cluster([{ host: '127.0.0.1', port }]);
        return { client: cluster, close: async () => void cluster.disconnect() };
      },
    },
    {
      name: 'node-redis createCluster',
      connect: async () => {
        const cluster = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${port}` }] });
        cluster.on('error', () => {});
        await cluster.connect();
        return { client: cluster, close: async () => void (await cluster.close()) };
      },
    },
  ];

  it.each(clients)('$name: the windows of one account (acct and gmp, every length and day) and its usage are decided in one script; the keys share a slot', async ({ connect }) => {
    const { client, close } = await connect();
    const prefix = `ipokit-test:cluster:${port}:`;
    const limiter = redisLimiter({ client, prefix });
    try {
      const windows: RateLimitWindow[] = [
        { key: 'acct:a1', quota: 3, ms: MINUTE },
        { key: 'acct:a1', quota: 30, ms: HOUR },
        { key: 'acct:a1', quota: 300, ms: DAY, start: DAY0 },
        { key: 'gmp:a1', quota: 1, ms: MINUTE },
        { key: 'gmp:a1', quota: 10, ms: DAY, start: DAY0 },
      ];
      const usage: UsageCharge = { accountId: 'a1', keyId: 'key_1', route: 'gmp', day: '2026-11-20' };
      expect(await limiter.hitRateLimit({ now: N0, windows, usage }, { deadline: performance.now() + 2_000 })).toEqual({
        admitted: true,
        windows: [
          { count: 1, oldest: N0, blocking: null },
          { count: 1, oldest: N0, blocking: null },
          { count: 1, oldest: DAY0, blocking: null },
          { count: 1, oldest: N0, blocking: N0 },
          { count: 1, oldest: DAY0, blocking: null },
        ],
      });
      expect((await limiter.hitRateLimit({ now: N0 + 1, windows, usage }, { deadline: performance.now() + 2_000 })).admitted).toBe(false);
      expect((await limiter.hitRateLimit({ now: N0 + 1, windows: [], usage: { ...usage, route: 'list' } })).admitted).toBe(true);
      // a keyless request: the address's windows alone, no usage
      const addr: RateLimitWindow[] = [
        { key: 'addr:2001:db8::', quota: 1, ms: MINUTE },
        { key: 'addr:2001:db8::', quota: 5, ms: HOUR },
        { key: 'addr:2001:db8::', quota: 9, ms: DAY, start: DAY0 },
      ];
      expect((await limiter.hitRateLimit({ now: N0 + 1, windows: addr })).admitted).toBe(true);
      const accountKeys = ['acct:{a1}', 'acct:{a1}:3600000', `acct:{a1}:d:${DAY0}`, 'gmp:{a1}', `gmp:{a1}:d:${DAY0}`, 'usage:{a1}:2026-11-20'];
      const slots = await Promise.all(accountKeys.map((k) => node.call('CLUSTER', 'KEYSLOT', prefix + k)));
      expect(new Set(slots).size).toBe(1);
      expect(await node.exists(...accountKeys.map((k) => prefix + k))).toBe(accountKeys.length);
      expect(await limiter.peekRateLimit({ now: N0 + 2, windows })).toEqual([
        { count: 1, oldest: N0, blocking: null },
        { count: 1, oldest: N0, blocking: null },
        { count: 1, oldest: DAY0, blocking: null },
        { count: 1, oldest: N0, blocking: N0 },
        { count: 1, oldest: DAY0, blocking: null },
      ]);
      // a year of usage in one script: 366 keys of one slot
      expect(await limiter.readUsage({ accountId: 'a1', from: '2025-11-20', to: '2026-11-20' })).toEqual([
        { day: '2026-11-20', keyId: 'key_1', route: 'gmp', admitted: 1, refused: 1 },
        { day: '2026-11-20', keyId: 'key_1', route: 'list', admitted: 1, refused: 0 },
      ]);
    } finally {
      await node.call('FLUSHALL'); // the throwaway cluster's own data, no one else's
      await close();
    }
  });

  it('a request naming windows of two owners is refused by Redis (CROSSSLOT): the core never makes one', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port }]);
    const limiter = redisLimiter({ client: cluster, prefix: 'ipokit-test:cluster:' });
    try {
      const err = await Promise.resolve(limiter.hitRateLimit({ now: N0, windows: [{ key: 'acct:a1', quota: 3, ms: MINUTE }, { key: 'acct:b2', quota: 3, ms: MINUTE }] })).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
      expect(String((err as Error).cause)).toMatch(/CROSSSLOT/);
    } finally {
      cluster.disconnect();
    }
  });
});
