import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, type SeededFixture } from '@ipokit/testing';
import { ipoRouter } from '@ipokit/express';
import { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// A stalled database (another session holds a lock) while requests keep coming: every
// request is answered 503 at storeTimeoutMs, and then
// - no limiter call records a hit for a request that was answered 503 (the statement runs
//   under a lock_timeout of the time left, and rolls back if it ran past it);
// - no call whose request was answered starts once the database answers again (they wait
//   in the store's gate, which drops them, not in pg-pool's queue, which would run them);
// - beyond maxWaitingCalls, calls are refused at once.
// These need a second session to hold the lock: PostgreSQL only (PGlite has one).

const url = process.env.DATABASE_URL;

let db: TestDatabase;
let seeded: SeededFixture;
beforeAll(async () => {
  if (!url) return;
  db = await openTestDatabase('deadline');
  seeded = await seedFixture(await db.emptyStore());
}, 60_000);
afterAll(() => db?.close());

interface App {
  origin: string;
  errors: unknown[];
  close(): Promise<void>;
}

async function serve(pool: pg.Pool, store: Partial<PostgresStoreOptions>, options: IpoRouterOptions): Promise<App> {
  const errors: unknown[] = [];
  const app = express();
  app.use('/ipos', ipoRouter(postgresStore({ client: pool, schema: db.schema, ...store }), { now: () => new Date(FIXTURE_NOW), onError: (err) => void errors.push(err), ...options }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    errors,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function status(origin: string, path: string, key: string): Promise<number> {
  const res = await fetch(`${origin}${path}`, { headers: { 'x-api-key': key } });
  await res.arrayBuffer();
  return res.status;
}

async function locked<T>(tables: string[], fn: (release: () => Promise<void>) => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${tables.map((t) => `"${db.schema}".${t}`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  let open = true;
  const release = async (): Promise<void> => {
    if (!open) return;
    open = false;
    await locker.query('ROLLBACK');
  };
  try {
    return await fn(release);
  } finally {
    await release();
    await locker.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!url)('a stalled database (PostgreSQL: a table locked by another session; skipped without DATABASE_URL)', () => {
  it('records no hit for a request answered 503 while the rate tables were locked', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    // a minute, an hour and an IST day: one hit row each for the two sliding windows, a count for the day
    const app = await serve(pool, {}, { storeTimeoutMs: 300, limits: { paid: { perMinute: 1_000, perHour: 5_000, perDay: 10_000 } } });
    const hits = async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".rate_hits`)).rows[0]!.n;
    // usage is counted by the same statement: none for a request answered 503 either
    const counted = async () =>
      (await pool.query<{ n: number }>(`SELECT coalesce(sum(admitted + refused), 0)::int AS n FROM "${db.schema}".key_usage`)).rows[0]!.n;
    try {
      await pool.query(`DELETE FROM "${db.schema}".key_usage`);
      await pool.query(`DELETE FROM "${db.schema}".rate_hits`);
      await pool.query(`DELETE FROM "${db.schema}".rate_windows`);
      await locked(['rate_windows', 'rate_hits'], async () => {
        const answers = await Promise.all(Array.from({ length: 15 }, () => status(app.origin, '/ipos/ORBIT', seeded.keys.paid)));
        expect(answers).toEqual(Array.from({ length: 15 }, () => 503));
        await sleep(700); // the lock outlives every deadline
      });
      await sleep(500); // whatever was still waiting has run by now
      expect(await hits()).toBe(0);
      expect(await counted()).toBe(0);
      expect(await status(app.origin, '/ipos/ORBIT', seeded.keys.paid)).toBe(200);
      expect(await hits()).toBe(2);
      expect(await counted()).toBe(1);
    } finally {
      await app.close();
      await pool.end();
    }
  });

  it('starts no call whose request was answered, and refuses calls beyond maxWaitingCalls at once', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // Keys cached and no window drawn: each request makes one store call, the IPO read,
    // which the data cache would answer from memory while the table is locked (nothing
    // changed): without it, every read goes through the gate.
    const outcomes: string[] = [];
    const app = await serve(pool, { maxWaitingCalls: 20, dataCacheTtlMs: 0 }, {
      storeTimeoutMs: 300,
      keyCacheTtlMs: 60_000,
      limits: { paid: { perMinute: Infinity } },
      onStoreCall: ({ op, outcome }) => void outcomes.push(`${op} ${outcome}`),
    });
    let acquired = 0;
    pool.on('acquire', () => void acquired++);
    try {
      expect(await status(app.origin, '/ipos/ORBIT', seeded.keys.paid)).toBe(200);
      await locked(['ipos'], async (release) => {
        const answers = await Promise.all(Array.from({ length: 60 }, () => status(app.origin, '/ipos/ORBIT', seeded.keys.paid)));
        expect(answers).toEqual(Array.from({ length: 60 }, () => 503));
        // 4 calls hold the pool's connections, 20 wait, the other 36 were refused at once
        const shed = app.errors.filter((e) => /maxWaitingCalls/.test(String((e as Error).message)));
        expect(shed).toHaveLength(36);
        // and onStoreCall (docs/spec.md#metrics) tells each of them as shed, not as a mere error
        expect(outcomes.filter((o) => o.endsWith(' shed'))).toHaveLength(shed.length);
        expect(outcomes.filter((o) => o.endsWith(' error'))).toEqual([]);
        await sleep(200);
        const before = acquired;
        await release();
        await sleep(500);
        // the database answers again: none of the 56 calls whose requests were answered ran
        expect(acquired - before).toBe(0);
      });
      expect(await status(app.origin, '/ipos/ORBIT', seeded.keys.paid)).toBe(200);
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
