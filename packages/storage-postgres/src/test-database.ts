/**
 * For this package's tests: a real PostgreSQL when DATABASE_URL is set (CI), else PGlite
 * in-process, each test file in its own schema so files can run side by side.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { PostgresClient } from './client.js';
import { migrate } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import type { Store } from '@ipokit/core';

export interface TestDatabase {
  client: PostgresClient;
  kind: 'postgres' | 'pglite';
  schema: string;
  /** A fresh store over emptied tables. */
  emptyStore(): Promise<Store>;
  close(): Promise<void>;
}

const TABLES = ['rate_hits', 'rate_windows', 'api_keys', 'accounts', 'snapshots', 'ipos'];

/**
 * Opens the test database and migrates a schema of its own.
 *
 * @example
 * ```ts
 * const db = await openTestDatabase('store');
 * ```
 */
export async function openTestDatabase(name: string): Promise<TestDatabase> {
  const schema = `ipokit_test_${name}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = process.env.DATABASE_URL;
  let client: PostgresClient;
  let closeClient: () => Promise<void>;
  if (url !== undefined && url !== '') {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    client = pool;
    closeClient = () => pool.end();
  } else {
    const lite = await PGlite.create();
    client = lite;
    closeClient = () => lite.close();
  }
  await migrate(client, { schema });
  return {
    client,
    kind: url ? 'postgres' : 'pglite',
    schema,
    async emptyStore() {
      for (const t of TABLES) await client.query(`DELETE FROM "${schema}".${t}`);
      return postgresStore({ client, schema });
    },
    async close() {
      if (url) await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await closeClient();
    },
  };
}

/**
 * A client over `client` whose `n`-th snapshot INSERT (in or out of a transaction) fails,
 * as a connection lost halfway through an import would. Keeps the client's kind (PGlite
 * with `transaction()`, or a pool with `connect()`), so the store takes the same path.
 *
 * @example
 * ```ts
 * const broken = postgresStore({ client: failingOnSnapshotInsert(db.client, 2), schema: db.schema });
 * ```
 */
export function failingOnSnapshotInsert(client: PostgresClient, n: number): PostgresClient {
  let inserts = 0;
  const failing = (c: PostgresClient): PostgresClient['query'] => async (text, params) => {
    if (/INSERT INTO \S+\.snapshots/.test(text) && ++inserts === n) throw new Error('connection lost halfway (injected)');
    return c.query(text, params);
  };
  const lite = client as PostgresClient & { transaction?: <T>(fn: (tx: PostgresClient) => Promise<T>) => Promise<T>; exec?: (sql: string) => Promise<unknown> };
  if (typeof lite.transaction === 'function') {
    return Object.assign(Object.create(null) as object, {
      query: failing(client),
      exec: lite.exec?.bind(client),
      transaction: <T>(fn: (tx: PostgresClient) => Promise<T>) => lite.transaction!((tx) => fn({ query: failing(tx) })),
    }) as PostgresClient;
  }
  const pool = client as PostgresClient & { connect(): Promise<PostgresClient & { release(e?: Error | boolean): void }>; totalCount: number };
  return {
    query: failing(client),
    get totalCount() {
      return pool.totalCount;
    },
    connect: async () => {
      const c = await pool.connect();
      return { query: failing(c), release: (e?: Error | boolean) => c.release(e) };
    },
  } as PostgresClient;
}
