import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import express from 'express';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isIpokitError, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { migrate, postgresStore, SCHEMA_VERSION } from './index.js';

/** Every migration, in order: what a fresh schema gets. */
const ALL_VERSIONS = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1);

// What callers see when the database is unreachable or not migrated: a typed error in
// the store, a 503 without SQL, host or stack over HTTP.

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function get503(store: Store, path: string): Promise<{ status: number; text: string }> {
  const app = express();
  app.use('/ipos', ipoRouter(store, { onError: () => {} }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { headers: { 'x-api-key': 'ipk_0000000000000000000000000000WRNG' } });
    return { status: res.status, text: await res.text() };
  } finally {
    server.close();
  }
}

describe('postgresStore failures', () => {
  it('an unreachable server rejects with ERR:UNAVAILABLE (cause kept) and answers 503 without details', async () => {
    const port = await closedPort();
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'nobody', database: 'secret_db', connectionTimeoutMillis: 2000 });
    try {
      const store = postgresStore({ client: pool });
      const err = await Promise.resolve(store.findIpo({ identifier: 'ORBIT', gmpAt: null })).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
      expect((err as Error).message).toBe('The PostgreSQL store failed.');
      expect((err as Error).cause).toBeInstanceOf(Error);
      const res = await get503(store, '/ipos/ORBIT');
      expect(res.status).toBe(503);
      expect(JSON.parse(res.text)).toMatchObject({ status: '503', code: 'ERR:UNAVAILABLE' });
      for (const secret of ['127.0.0.1', String(port), 'nobody', 'secret_db', 'ECONNREFUSED', 'SELECT', ' at ']) expect(res.text).not.toContain(secret);
      // no connection is left checked out
      expect(pool.totalCount - pool.idleCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('a database that is not migrated says to run migrate(), and works once it is', async () => {
    const db = await PGlite.create();
    try {
      const store = postgresStore({ client: db, schema: 'fresh' });
      const err = await store.getAccount('a').catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
      expect((err as Error).message).toMatch(/"fresh" is not migrated.*run migrate\(client\) first/);
      expect((await get503(store, '/ipos?status=open')).status).toBe(503);
      expect(await migrate(db, { schema: 'fresh' })).toEqual(ALL_VERSIONS);
      expect(await migrate(db, { schema: 'fresh' })).toEqual([]);
      expect(await store.getAccount('a')).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('refuses a bad schema name and a missing client up front', async () => {
    const db = await PGlite.create();
    try {
      expect(() => postgresStore({ client: db, schema: 'Bad-Name' })).toThrow(/schema must be/);
    } finally {
      await db.close();
    }
    expect(() => postgresStore({ client: {} as never })).toThrow(/needs a pg\.Pool, a pg\.Client or a PGlite/);
  });

  it('refuses, at construction, a client it cannot run a transaction on: a bare query() wrapper over a pool', async () => {
    // { query } over a pool would send BEGIN, the statements and COMMIT on whichever
    // connections the pool hands out: an import would silently stop being atomic.
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 2 });
    try {
      const wrapper = { query: (text: string, params?: unknown[]) => pool.query(text, params) };
      for (const build of [() => postgresStore({ client: wrapper as never }), () => migrate(wrapper as never)]) {
        let thrown: unknown;
        try {
          await build();
        } catch (err) {
          thrown = err;
        }
        expect(isIpokitError(thrown, 'ERR:BADPARAM') && thrown.parameter).toBe('client');
        expect((thrown as Error).message).toMatch(/BEGIN and COMMIT on different connections/);
      }
      // what it takes: the pool itself, a connection, or an object with transaction(fn)
      expect(() => postgresStore({ client: pool })).not.toThrow();
      expect(() => postgresStore({ client: { ...wrapper, transaction: async <T>(fn: (tx: { query: typeof wrapper.query }) => Promise<T>) => fn(wrapper) } })).not.toThrow();
    } finally {
      await pool.end();
    }
  });

  it('migrate is safe when several callers race on one database', async () => {
    const url = process.env.DATABASE_URL;
    if (url === undefined || url === '') {
      // PGlite runs one statement at a time; the race needs a real server's connections.
      const db = await PGlite.create();
      const results = await Promise.all([migrate(db, { schema: 'race' }), migrate(db, { schema: 'race' }), migrate(db, { schema: 'race' })]);
      expect(results.flat()).toEqual(ALL_VERSIONS);
      await db.close();
      return;
    }
    const schema = `ipokit_race_${process.pid}`;
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool, { schema })));
      expect(results.flat()).toEqual(ALL_VERSIONS);
    } finally {
      await pools[0]!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});
