/**
 * One app process of the multi-process test (not published): Express with the router on
 * its own memory store, seeded with the same IPO, accounts and keys (fixed ids) as every
 * other process (key ids `key_<account id>`), and the windows and usage in the Redis at
 * REDIS_URL under IPOKIT_PREFIX. The clock is pinned at IPOKIT_NOW. Prints its port.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { importDataset, type Plan } from '@ipokit/core';
import { type AccountRecord, hashApiKey } from '@ipokit/core/backend';
import { ipoRouter } from '@ipokit/express';
import { memoryStore } from '@ipokit/storage-memory';
import { redisLimiter } from './index.js';

/** The keys every process knows, by plan. */
export const APP_KEYS = {
  free: 'ipk_RedisMultiProcessFreeKey00003',
  paid: 'ipk_RedisMultiProcessPaidKey00001',
  proGmp: 'ipk_RedisMultiProcessProGmpKey002',
} as const;

const CREATED = '2026-11-01T00:00:00.000Z';
const ACCOUNTS: Array<AccountRecord & { key: string }> = [
  { id: 'acct_mp_free', name: 'Free', plan: 'free' satisfies Plan, gmpAddon: false, createdAt: CREATED, key: APP_KEYS.free },
  { id: 'acct_mp_paid', name: 'Paid', plan: 'paid' satisfies Plan, gmpAddon: false, createdAt: CREATED, key: APP_KEYS.paid },
  { id: 'acct_mp_pro', name: 'Pro GMP', plan: 'pro' satisfies Plan, gmpAddon: true, createdAt: CREATED, key: APP_KEYS.proGmp },
];

async function main(): Promise<void> {
  const store = memoryStore();
  await importDataset(store, {
    ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2026-11-24' }],
    gmp: [{ ipoId: '2026000001', timestamp: '2026-11-20T06:00:00Z', sources: [{ name: 'a', gmpPrice: 12.5 }] }],
  });
  for (const { key, ...account } of ACCOUNTS) {
    await store.insertAccount(account);
    const inserted = await store.insertApiKey({
      key: { id: `key_${account.id}`, accountId: account.id, hash: hashApiKey(key), prefix: key.slice(0, 12), label: 'mp', createdAt: CREATED, revokedAt: null, expiresAt: null, lastUsedAt: null },
      maxActiveKeys: { free: 1, paid: Infinity, pro: Infinity },
      now: CREATED,
    });
    if (inserted !== 'ok') throw new Error(`key not inserted: ${inserted}`);
  }
  const redis = new Redis(process.env.REDIS_URL!);
  const now = new Date(Number(process.env.IPOKIT_NOW));
  const app = express();
  app.use(
    '/ipos',
    ipoRouter(store, {
      limiter: redisLimiter({ client: redis, prefix: process.env.IPOKIT_PREFIX! }),
      now: () => now,
      limits: JSON.parse(process.env.IPOKIT_LIMITS ?? '{}') as Record<string, never>,
    }),
  );
  const server = app.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  // The test's fetch keeps its connections between bursts: closing them after the default
  // 5 s of idleness races with their reuse (ECONNRESET) on a loaded machine.
  server.keepAliveTimeout = 120_000;
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void redis.quit().finally(() => process.exit(0));
  });
}

if (process.argv.includes('--serve')) await main();
