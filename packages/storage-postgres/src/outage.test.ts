import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture } from '@ipokit/testing';
import { ipoRouter } from '@ipokit/express';
import type { PostgresClient } from './client.js';
import { postgresStore } from './postgres-store.js';
import { interceptQueries, openTestDatabase, type TestDatabase } from './test-database.js';
import { cuttableProxy } from './test-proxy.js';

// The database goes away under load and comes back: requests meanwhile get 503
// ERR:UNAVAILABLE (nothing else, no crash, no unhandled rejection), and once it is back
// they succeed again without restarting the app, with no pool connection left behind.
// With DATABASE_URL the outage is real: every connection through a TCP proxy is cut and
// new ones are refused. On PGlite (no server to cut) every query fails meanwhile.

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('outage');
}, 60_000);
afterAll(() => db.close());


interface Harness {
  client: PostgresClient;
  down(): Promise<void>;
  up(): Promise<void>;
  leaked(): number;
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const target = new URL(url);
    const proxy = await cuttableProxy(target);
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const pool = new pg.Pool({ connectionString: viaProxy.toString(), max: 6, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => {}); // idle connections cut by the outage
    return {
      client: pool,
      down: proxy.cut,
      up: proxy.restore,
      leaked: () => pool.totalCount - pool.idleCount,
      close: async () => {
        await pool.end();
        await proxy.close();
      },
    };
  }
  let isDown = false;
  const client: PostgresClient = interceptQueries(db.client, (text, params, next) =>
    isDown ? Promise.reject(new Error('connection refused (injected)')) : next(text, params),
  );
  return {
    client,
    down: async () => {
      isDown = true;
    },
    up: async () => {
      isDown = false;
    },
    leaked: () => 0,
    close: async () => {},
  };
}

describe(`a database outage under load (${process.env.DATABASE_URL ? 'PostgreSQL through a cut TCP proxy' : 'PGlite, failing queries'})`, () => {
  it('answers 503 ERR:UNAVAILABLE meanwhile, recovers by itself, and leaks no connection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const h = await harness();
    const seeded = await seedFixture(await db.emptyStore());
    const store: Store = postgresStore({ client: h.client, schema: db.schema });
    const app = express();
    app.use('/ipos', ipoRouter(store, { now: () => new Date(FIXTURE_NOW), limits: { paid: { perMinute: 1e9 } }, keyCacheTtlMs: 0, storeTimeoutMs: 3_000, onError: () => {} }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // (requests that straddle a change of phase are counted in 'switching', not checked)
    const statuses = { before: new Map<number, number>(), switching: new Map<number, number>(), during: new Map<number, number>(), after: new Map<number, number>() };
    let phase: keyof typeof statuses = 'before';
    let bodies503Ok = true;
    let running = true;
    const worker = async (): Promise<void> => {
      while (running) {
        const at = phase;
        const res = await fetch(`${origin}/ipos/ORBIT`, { headers: { 'x-api-key': seeded.keys.paid } });
        const text = await res.text();
        if (res.status === 503) bodies503Ok &&= JSON.parse(text).code === 'ERR:UNAVAILABLE' && !/127\.0\.0\.1|SELECT|ECONN/.test(text);
        if (at === phase) statuses[at].set(res.status, (statuses[at].get(res.status) ?? 0) + 1);
      }
    };
    try {
      const workers = Array.from({ length: 16 }, () => worker());
      await new Promise((resolve) => setTimeout(resolve, 500));
      phase = 'switching';
      await h.down();
      await new Promise((resolve) => setTimeout(resolve, 100));
      phase = 'during';
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      phase = 'switching';
      await h.up();
      // the pool reconnects on its own; give it a moment, then count only what follows
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      phase = 'after';
      await new Promise((resolve) => setTimeout(resolve, 700));
      running = false;
      await Promise.all(workers);
    } finally {
      server.close();
      process.off('unhandledRejection', onUnhandled);
    }
    expect([...statuses.before.keys()]).toEqual([200]);
    expect([...statuses.during.keys()]).toEqual([503]);
    expect(statuses.during.get(503)).toBeGreaterThan(10);
    expect(bodies503Ok).toBe(true);
    expect([...statuses.after.keys()]).toEqual([200]);
    expect(statuses.after.get(200)).toBeGreaterThan(10);
    expect(unhandled).toEqual([]);
    // The store's data cache holds one connection for LISTEN (taken again after the outage);
    // close() gives it back. Nothing else is left checked out.
    await store.close?.();
    for (let waited = 0; h.leaked() > 0 && waited < 1_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.leaked()).toBe(0);
    await h.close();
  });
});
