/**
 * The database client the store is given, and what the store needs from it: plain
 * queries, and transactions on one connection whatever the client is.
 */
import { IpokitError } from '@ipokit/core';

/**
 * Anything with `query(text, params) -> { rows }`: a `pg.Pool`, a `pg.Client`, a PGlite
 * instance. The store never opens or closes it.
 */
export interface PostgresClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A connection inside a transaction: queries run on it, in order. */
export interface Transaction {
  query<R>(text: string, params?: unknown[]): Promise<R[]>;
  /** Several statements without parameters, e.g. a migration. */
  script(sql: string): Promise<void>;
}

/** A connection checked out of a pool (pg's PoolClient is an EventEmitter). */
interface PooledConnection extends PostgresClient {
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
}

interface PoolLike extends PostgresClient {
  connect(): Promise<PooledConnection>;
  totalCount: number;
}

interface PgliteLike extends PostgresClient {
  transaction<T>(fn: (tx: PostgresClient) => Promise<T>): Promise<T>;
  exec(sql: string): Promise<unknown>;
}

/**
 * The store's handle on a client: queries that reject with `ERR:UNAVAILABLE` (the driver's
 * error as `cause`, never in the message), and `transaction(fn)` on one connection.
 *
 * - `pg.Pool`: `connect()` takes a connection for the transaction, `BEGIN` ... `COMMIT`.
 * - PGlite: its own `transaction()` (PGlite queues other queries until it ends).
 * - a single connection (`pg.Client`): `BEGIN` ... `COMMIT` on it, with the store's other
 *   queries held back meanwhile, so they neither join nor see the open transaction.
 */
export class Database {
  private readonly kind: 'pool' | 'pglite' | 'single';
  /** Single connection only: resolves when no transaction is open. */
  private idle: Promise<void> = Promise.resolve();

  constructor(private readonly client: PostgresClient) {
    if (client === null || typeof client !== 'object' || typeof client.query !== 'function') {
      throw new IpokitError('ERR:BADPARAM', 'postgresStore needs a client with query(text, params), e.g. a pg.Pool or a PGlite instance.', { parameter: 'client' });
    }
    const c = client as Partial<PoolLike & PgliteLike>;
    if (typeof c.transaction === 'function') this.kind = 'pglite';
    else if (typeof c.connect === 'function' && typeof c.totalCount === 'number') this.kind = 'pool';
    else this.kind = 'single';
  }

  /**
   * One statement on any connection.
   *
   * @example
   * ```ts
   * const rows = await db.query<{ n: number }>('SELECT 1 AS n');
   * ```
   */
  async query<R>(text: string, params: unknown[] = []): Promise<R[]> {
    if (this.kind === 'single') await this.idle;
    return run<R>(this.client, text, params);
  }

  /**
   * Runs `fn` in a transaction on one connection; rolls back when it throws.
   *
   * @example
   * ```ts
   * await db.transaction(async (tx) => { await tx.query('INSERT ...'); await tx.query('INSERT ...'); });
   * ```
   */
  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    if (this.kind === 'pglite') {
      let result: T | undefined;
      try {
        await (this.client as PgliteLike).transaction(async (tx) => {
          result = await fn(transactionOn(tx));
        });
      } catch (err) {
        throw unavailable(err);
      }
      return result as T;
    }
    if (this.kind === 'pool') {
      let connection: PooledConnection;
      try {
        connection = await (this.client as PoolLike).connect();
      } catch (err) {
        throw unavailable(err);
      }
      // pg-pool removes its own 'error' listener while a connection is checked out: if the
      // server goes away between two statements of the transaction, pg emits 'error' on
      // the connection, which would crash the process with no listener. Ours keeps the
      // error, and the connection goes back to the pool as broken (the pool drops it).
      let broken: Error | undefined;
      const onError = (err: Error): void => {
        broken ??= err;
      };
      connection.on?.('error', onError);
      try {
        return await inTransaction(connection, fn);
      } catch (err) {
        // A connection whose ROLLBACK failed is not given back to the pool.
        if (err instanceof RollbackFailed) broken ??= err;
        throw unavailable(err);
      } finally {
        connection.off?.('error', onError);
        connection.release(broken);
      }
    }
    const previous = this.idle;
    let done!: () => void;
    this.idle = new Promise((resolve) => (done = resolve));
    try {
      await previous;
      return await inTransaction(this.client, fn);
    } catch (err) {
      throw unavailable(err);
    } finally {
      done();
    }
  }
}

class RollbackFailed extends Error {}

async function inTransaction<T>(connection: PostgresClient, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  await connection.query('BEGIN');
  try {
    const result = await fn(transactionOn(connection));
    await connection.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await connection.query('ROLLBACK');
    } catch (rollbackError) {
      throw new RollbackFailed('ROLLBACK failed', { cause: rollbackError });
    }
    throw err;
  }
}

function transactionOn(connection: PostgresClient): Transaction {
  const exec = (connection as Partial<PgliteLike>).exec;
  return {
    query: <R>(text: string, params: unknown[] = []) => connection.query(text, params).then((r) => r.rows as R[]),
    // PGlite's query() takes one statement, its exec() several; pg's query() without
    // parameters takes several.
    script: async (sql: string) => {
      await (typeof exec === 'function' ? exec.call(connection, sql) : connection.query(sql));
    },
  };
}

async function run<R>(client: PostgresClient, text: string, params: unknown[]): Promise<R[]> {
  try {
    return (await client.query(text, params)).rows as R[];
  } catch (err) {
    throw unavailable(err);
  }
}

/** The store's one failure: no SQL, host or driver message reaches a client. */
export function unavailable(err: unknown): IpokitError {
  if (err instanceof IpokitError) return err;
  return new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store failed.', { cause: err });
}
