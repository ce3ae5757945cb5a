import { afterAll, beforeAll } from 'vitest';
import { testIpoStore, testStore, testWebhookStore, testWebhookWorker } from '@ipokit/testing';
import { openTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('store');
});
afterAll(() => db.close());

const kind = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
// As configured by default (the data cache on), and the IPO data without the cache (every read in SQL).
testStore({ name: `postgresStore (${kind})`, createStore: () => db.emptyStore(), destroyStore: (s) => s.close?.() });
testIpoStore({ name: `postgresStore without the data cache (${kind})`, createStore: () => db.emptyStore({ dataCacheTtlMs: 0 }), destroyStore: (s) => s.close?.() });
// Webhook endpoints, events and deliveries (migration 6), pinned to the core's MemoryOutbox.
testWebhookStore({
  name: `postgresStore webhooks (${kind})`,
  createStore: () => db.emptyStore(),
  destroyStore: (s) => (s as { close?: () => Promise<void> }).close?.(),
});
// The worker on it: claims, leases, retries and disabling against local receivers, woken by LISTEN.
testWebhookWorker({
  name: `startWebhookWorker on postgresStore (${kind})`,
  createStore: () => db.emptyStore(),
  destroyStore: (s) => (s as { close?: () => Promise<void> }).close?.(),
});
