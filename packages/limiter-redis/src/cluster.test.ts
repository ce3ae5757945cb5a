import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError } from '@ipokit/core';
import { redisLimiter, type IoredisClient, type NodeRedisClient } from './index.js';
import { freePort, REDIS_URL, redisServerPath, throwawayRedis } from './test-redis.js';

// Redis Cluster: a throwaway one-node cluster holding every slot. One node is enough to
// see the point: Redis refuses a script whose keys are in different slots (CROSSSLOT)
// whatever the number of nodes, so the windows of one request must share a hash tag.

const N0 = Date.UTC(2026, 10, 20, 12);
const MINUTE = 60_000;
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

  it.each(clients)('$name: the windows of one account (acct and gmp) are decided in one script; the keys share a slot', async ({ connect }) => {
    const { client, close } = await connect();
    const limiter = redisLimiter({ client, prefix: `ipokit-test:cluster:${port}:` });
    try {
      const windows = [{ key: 'acct:a1', quota: 3 }, { key: 'gmp:a1', quota: 1 }];
      expect(await limiter.hitRateLimit({ now: N0, windowMs: MINUTE, windows }, { deadline: performance.now() + 2_000 })).toEqual({
        admitted: true,
        windows: [{ count: 1, oldest: N0, blocking: null }, { count: 1, oldest: N0, blocking: N0 }],
      });
      expect((await limiter.hitRateLimit({ now: N0 + 1, windowMs: MINUTE, windows })).admitted).toBe(false);
      expect((await limiter.hitRateLimit({ now: N0 + 1, windowMs: MINUTE, windows: [{ key: 'addr:2001:db8::', quota: 1 }] })).admitted).toBe(true);
      const slots = await Promise.all([`acct:{a1}`, `gmp:{a1}`].map((k) => node.call('CLUSTER', 'KEYSLOT', `ipokit-test:cluster:${port}:${k}`)));
      expect(slots[0]).toBe(slots[1]);
      expect(await limiter.peekRateLimit({ now: N0 + 2, windowMs: MINUTE, windows })).toEqual([
        { count: 1, oldest: N0, blocking: null },
        { count: 1, oldest: N0, blocking: N0 },
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
      const err = await limiter.hitRateLimit({ now: N0, windowMs: MINUTE, windows: [{ key: 'acct:a1', quota: 3 }, { key: 'acct:b2', quota: 3 }] }).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
      expect(String((err as Error).cause)).toMatch(/CROSSSLOT/);
    } finally {
      cluster.disconnect();
    }
  });
});
