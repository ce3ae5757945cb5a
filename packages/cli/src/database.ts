/**
 * How database commands find their database: `DATABASE_URL` (or the `openDatabase` a test
 * passes in `CliIo`) and the schema (`--schema`, else `IPOKIT_SCHEMA`, else `ipokit`).
 */
import type { Store, WebhookStore } from '@ipokit/core';
import { DEFAULT_SCHEMA, postgresStore, type PostgresClient } from '@ipokit/storage-postgres';
import pg from 'pg';
import { CliError, type CliIo } from './io.js';
import { describeCause } from './report.js';

/** An open database, ready for `migrate` and `postgresStore`. */
export interface OpenedDatabase {
  client: PostgresClient;
  /** The schema the command works in. */
  schema: string;
  /** Where it is, for messages: the URL with its password hidden. */
  where: string;
  /** Frees the connections (the client given by `io.openDatabase` is closed by its own `close`). */
  close(): Promise<void>;
}

/** Same rule as `@ipokit/storage-postgres`: checked here so that a bad name is a usage error. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The schema a command works in: `--schema`, else `IPOKIT_SCHEMA`, else `ipokit`.
 *
 * @example
 * ```ts
 * const schema = schemaOf(values.schema, io); // 'ipokit'
 * ```
 */
export function schemaOf(option: string | undefined, io: CliIo): string {
  const fromEnv = io.env.IPOKIT_SCHEMA === '' ? undefined : io.env.IPOKIT_SCHEMA;
  const schema = option ?? fromEnv ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    const from = option !== undefined ? '--schema' : 'IPOKIT_SCHEMA';
    throw new CliError(`${from} must be lowercase letters, digits and _ (at most 63, not starting with a digit), got ${JSON.stringify(schema)}`);
  }
  return schema;
}

/**
 * `DATABASE_URL`, checked: a usage error when it is missing or not a `postgres://` URL.
 *
 * @example
 * ```ts
 * const url = databaseUrlOf(io); // 'postgres://app@db.internal:5432/ipos'
 * ```
 */
export function databaseUrlOf(io: CliIo): string {
  const url = io.env.DATABASE_URL;
  if (url === undefined || url === '') {
    throw new CliError('set DATABASE_URL=postgres://user:password@host:5432/database to say which PostgreSQL to use');
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new CliError(`DATABASE_URL must be a postgres:// or postgresql:// URL, got ${JSON.stringify(maskPassword(url))}`);
  }
  return url;
}

/** True when a database command would find a database: `io.openDatabase` or `DATABASE_URL`. */
export function hasDatabase(io: CliIo): boolean {
  return io.openDatabase !== undefined || (io.env.DATABASE_URL !== undefined && io.env.DATABASE_URL !== '');
}

/**
 * Opens the database (`io.openDatabase`, else a `pg.Pool` on `DATABASE_URL`) and checks that
 * it answers; an unreachable database is a one-line error (exit code 1), without a stack.
 *
 * @example
 * ```ts
 * const db = await openDatabase(io, schemaOf(values.schema, io));
 * try { await migrate(db.client, { schema: db.schema }); } finally { await db.close(); }
 * ```
 */
export async function openDatabase(io: CliIo, schema: string): Promise<OpenedDatabase> {
  let client: PostgresClient;
  let close: () => Promise<void>;
  let where: string;
  if (io.openDatabase !== undefined) {
    ({ client, close } = await io.openDatabase());
    where = 'the database';
  } else {
    const url = databaseUrlOf(io);
    where = maskPassword(url);
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
    // An idle connection the server drops must not take the process down with it.
    pool.on('error', (err) => io.stderr.write(`ipokit: PostgreSQL connection lost: ${err.message}\n`));
    client = pool;
    close = () => pool.end();
  }
  try {
    await client.query('SELECT 1');
  } catch (err) {
    await close().catch(() => undefined);
    throw new CliError(`cannot connect to PostgreSQL at ${where}: ${describeCause(err)}`, 1);
  }
  return { client, schema, where, close };
}

/**
 * Runs `fn` on the opened database and closes it afterwards, whatever happens.
 *
 * @example
 * ```ts
 * await withDatabase(io, schema, (db) => migrate(db.client, { schema: db.schema }));
 * ```
 */
export async function withDatabase<T>(io: CliIo, schema: string, fn: (db: OpenedDatabase) => Promise<T>): Promise<T> {
  const db = await openDatabase(io, schema);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/**
 * The PostgreSQL store of a database: IPOs, accounts and keys, rate limits, and webhook
 * endpoints with their deliveries. Close it (`store.close()`) before the database.
 *
 * @example
 * ```ts
 * const store = storeOf(db);
 * await listWebhooks(store, { accountId });
 * ```
 */
export function storeOf(db: { client: PostgresClient; schema: string }): Store & WebhookStore {
  return postgresStore({ client: db.client, schema: db.schema });
}

/**
 * Runs `fn` on a PostgreSQL store over the command's database, then closes both.
 *
 * @example
 * ```ts
 * const keys = await onStore(io, values.schema, (store) => listApiKeys(store, { accountId }));
 * ```
 */
export async function onStore<T>(io: CliIo, schemaOption: string | undefined, fn: (store: Store & WebhookStore) => Promise<T>): Promise<T> {
  const schema = schemaOf(schemaOption, io);
  return withDatabase(io, schema, async (db) => {
    const store = storeOf(db);
    try {
      return await fn(store);
    } finally {
      await store.close?.();
    }
  });
}

/**
 * A connection URL with its password hidden.
 *
 * @example
 * ```ts
 * maskPassword('postgres://app:s3cret@db:5432/ipos'); // 'postgres://app:***@db:5432/ipos'
 * ```
 */
export function maskPassword(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}
