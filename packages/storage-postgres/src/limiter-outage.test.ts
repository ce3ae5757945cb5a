import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, type SeededFixture } from '@ipokit/testing';
import { ipoRouter } from '@ipokit/express';
import type { PostgresClient } from './client.js';
import { postgresStore } from './postgres-store.js';
import { interceptQueries, openTestDatabase, type TestDatabase } from './test-database.js';

// limiterFailOpen (docs/spec.md#settings) against a limiter that is really down while the data is
// readable: on PostgreSQL another session holds an ACCESS EXCLUSIVE lock on the rate
// tables, so every limiter call waits until storeTimeoutMs; on PGlite (one connection, no
// second session to hold a lock) the limiter's statement fails. Closed (the default)
// answers 503 ERR:UNAVAILABLE; open admits the request without rate-limit headers; both
// report the failure to onError, and both count again once the limiter is back.

let db: TestDatabase;
let seeded: SeededFixture;
beforeAll(async () => {
  db = await openTestDatabase('limiter_outage');
  seeded = await seedFixture(await db.emptyStore());
}, 60_000);
afterAll(() => db.close());

interface LimiterOutage {
  client: PostgresClient;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

async function limiterOutage(): Promise<LimiterOutage> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    return {
      client: pool,
      down: async () => {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${db.schema}".rate_windows, "${db.schema}".rate_hits IN ACCESS EXCLUSIVE MODE`);
      },
      up: async () => void (await locker.query('ROLLBACK')),
      close: async () => {
        await locker.end();
        await pool.end();
      },
    };
  }
  let down = false;
  return {
    client: interceptQueries(db.client, (text, params, next) =>
      down && /rate_limit_hit/.test(text) ? Promise.reject(new Error('limiter down (injected)')) : next(text, params),
    ),
    down: async () => void (down = true),
    up: async () => void (down = false),
    close: async () => {},
  };
}

async function serve(client: PostgresClient, options: IpoRouterOptions): Promise<{ origin: string; close(): void }> {
  const app = express();
  app.use('/ipos', ipoRouter(postgresStore({ client, schema: db.schema }), { now: () => new Date(FIXTURE_NOW), storeTimeoutMs: 400, ...options }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => void server.close() };
}

async function get(origin: string, path: string, key?: string): Promise<{ status: number; body: { code?: string }; limited: boolean }> {
  const res = await fetch(`${origin}${path}`, { headers: key === undefined ? {} : { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as { code?: string }, limited: res.headers.has('ratelimit-limit') };
}

describe(`a limiter outage (${process.env.DATABASE_URL ? 'PostgreSQL: rate tables locked by another session' : 'PGlite: the limiter statement fails'})`, () => {
  it.each([
    ['closed (default)', false],
    ['open', true],
  ])('limiterFailOpen %s', async (_name, failOpen) => {
    const outage = await limiterOutage();
    const errors: unknown[] = [];
    const app = await serve(outage.client, { limiterFailOpen: failOpen, onError: (err) => void errors.push(err) });
    try {
      const before = await get(app.origin, '/ipos/ORBIT', seeded.keys.paid);
      expect(before).toMatchObject({ status: 200, limited: true });

      await outage.down();
      const during = [
        await get(app.origin, '/ipos/ORBIT', seeded.keys.paid),
        await get(app.origin, '/ipos?status=open&limit=1', seeded.keys.pro),
        await get(app.origin, '/ipos?status=open'),
      ];
      await outage.up();
      if (failOpen) {
        for (const r of during) expect(r).toMatchObject({ status: 200, limited: false });
      } else {
        for (const r of during) expect(r).toMatchObject({ status: 503, body: { code: 'ERR:UNAVAILABLE' }, limited: false });
      }
      expect(errors).toHaveLength(3);

      const after = await get(app.origin, '/ipos/ORBIT', seeded.keys.paid);
      expect(after).toMatchObject({ status: 200, limited: true });
    } finally {
      app.close();
      await outage.close();
    }
  });
});
