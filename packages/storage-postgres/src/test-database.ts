/**
 * For this package's tests: a real PostgreSQL when DATABASE_URL is set, else PGlite
 * in-process, each test file in its own schema so files can run side by side. The test run
 * sets DATABASE_URL first (test/global-setup.ts): as given, else the server at
 * postgres://postgres@127.0.0.1:5432/test when it answers, else unset (PGlite).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { PostgresClient, PostgresConnection, PostgresPool, Queryable, TransactionalClient } from './client.js';
import { migrate } from './migrations.js';
import { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
import type { Store, WebhookStore } from '@ipokit/core';
import type { SourceStore } from '@ipokit/core/backend';

export interface TestDatabase {
  client: PostgresClient;
  kind: 'postgres' | 'pglite';
  schema: string;
  /** Empties every table. */
  clear(): Promise<void>;
  /** A fresh store over emptied tables, with these options (client and schema are the database's). */
  emptyStore(options?: Omit<PostgresStoreOptions, 'client' | 'schema'>): Promise<Store & WebhookStore & SourceStore>;
  close(): Promise<void>;
}

const TABLES = ['source_reports', 'source_states', 'deliveries', 'events', 'owed', 'snapshot_changes', 'snapshot_events', 'webhooks', 'key_usage', 'rate_hits', 'rate_windows', 'api_keys', 'accounts', 'subscription_snapshots', 'snapshots', 'ipos'];

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
  const clear = async (): Promise<void> => {
    for (const t of TABLES) await client.query(`DELETE FROM "${schema}".${t}`);
    await client.query(`UPDATE "${schema}".status_cursor SET covered = NULL`);
  };
  return {
    client,
    kind: url ? 'postgres' : 'pglite',
    schema,
    clear,
    async emptyStore(options = {}) {
      await clear();
      return postgresStore({ ...options, client, schema });
    },
    async close() {
      if (url) await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await closeClient();
    },
  };
}

/**
 * A client over `client` whose `n`-th snapshot INSERT (in or out of a transaction) fails,
 * as a connection lost halfway through an import would. Keeps the client's kind (see
 * {@link interceptQueries}), so the store takes the same path.
 *
 * @example
 * ```ts
 * const broken = postgresStore({ client: failingOnSnapshotInsert(db.client, 2), schema: db.schema });
 * ```
 */
export function failingOnSnapshotInsert(client: PostgresClient, n: number): PostgresClient {
  let inserts = 0;
  return interceptQueries(client, (text, params, next) => {
    if (/INSERT INTO \S+\.snapshots/.test(text) && ++inserts === n) return Promise.reject(new Error('connection lost halfway (injected)'));
    return next(text, params);
  });
}

/** What {@link interceptQueries} calls for every statement: `next` runs it. */
export type QueryInterceptor = (text: string, params: unknown[] | undefined, next: Queryable['query']) => Promise<{ rows: unknown[] }>;

/**
 * A client of the same kind as `client` (a pool with `connect()`, a PGlite with
 * `transaction()`, or one connection) whose every statement, inside transactions too, goes
 * through `intercept`: for tests that record statements or inject failures. A bare
 * `{ query }` wrapper would not do: the store refuses it (no transaction on one connection).
 *
 * @example
 * ```ts
 * const recording = interceptQueries(db.client, (text, params, next) => (seen.push(text), next(text, params)));
 * ```
 */
export function interceptQueries(client: PostgresClient, intercept: QueryInterceptor): PostgresClient {
  const through = (c: Queryable): Queryable['query'] => (text, params) => intercept(text, params, (t, p) => c.query(t, p));
  const lite = client as Partial<TransactionalClient> & { exec?: (sql: string) => Promise<unknown> };
  if (typeof lite.transaction === 'function') {
    const transaction = lite.transaction.bind(client);
    const wrapped: TransactionalClient & { exec?: (sql: string) => Promise<unknown> } = {
      query: through(client),
      transaction: (fn) => transaction((tx) => fn(withExecOf(tx, through(tx)))),
    };
    if (typeof lite.exec === 'function') wrapped.exec = lite.exec.bind(client);
    return wrapped;
  }
  const pool = client as Partial<PostgresPool>;
  if (typeof pool.connect === 'function' && typeof pool.totalCount === 'number') {
    const p = client as PostgresPool;
    return {
      query: through(p),
      get totalCount() {
        return p.totalCount;
      },
      connect: async () => {
        const c = await p.connect();
        return { query: through(c), release: (e?: Error | boolean) => c.release(e) };
      },
    };
  }
  const one = client as PostgresConnection;
  return { query: through(one), connect: (...args: never[]) => one.connect(...args) };
}

/** `query` with the `exec` of `connection` when it has one (PGlite's, for migrations). */
function withExecOf(connection: Queryable, query: Queryable['query']): Queryable {
  const exec = (connection as Queryable & { exec?: (sql: string) => Promise<unknown> }).exec;
  return typeof exec === 'function' ? Object.assign({ query }, { exec: exec.bind(connection) }) : { query };
}
