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
