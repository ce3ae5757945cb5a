import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import type { RateLimiter } from '@ipokit/core';
import { testAccountRouter, testHttp } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressAccountTarget, expressTarget } from '../../express/src/test-target.js';
import { redisLimiter } from './index.js';
import { deleteKeysUnder, randomPrefix, REDIS_URL } from './test-redis.js';

// The whole HTTP conformance suite on Express 5 with the data in a memory store and the
// windows in Redis (ipoRouter(store, { limiter })): the same statuses, bodies and headers.

describe.skipIf(!REDIS_URL)('HTTP suite with the limiter on the Redis at REDIS_URL (skipped: set REDIS_URL)', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(REDIS_URL!);
  });
  afterAll(() => client?.quit());

  const prefixes = new Map<RateLimiter, string>();
  /** A limiter per check under its own prefix, and its keys deleted after it. */
  const limiters = (name: string) => ({
    createLimiter: () => {
      const prefix = randomPrefix(name);
      const limiter = redisLimiter({ client, prefix });
      prefixes.set(limiter, prefix);
      return limiter;
    },
    destroyLimiter: async (limiter: RateLimiter) => {
      await limiter.close?.();
      await deleteKeysUnder(client, prefixes.get(limiter)!);
      prefixes.delete(limiter);
    },
  });
  testHttp({
    target: { ...expressTarget(EXPRESS_VERSIONS[0]!), name: 'express 5, memoryStore, redisLimiter (ioredis)' },
    createStore: () => memoryStore(),
    destroyStore: (s) => s.close?.(),
    ...limiters('http'),
  });

  // The account router with its windows and usage in Redis.
  testAccountRouter({
    target: { ...expressAccountTarget(EXPRESS_VERSIONS[0]!), name: 'express 5, memoryStore, redisLimiter (ioredis)' },
    createStore: () => memoryStore(),
    destroyStore: (s) => s.close?.(),
    ...limiters('account'),
  });
});
