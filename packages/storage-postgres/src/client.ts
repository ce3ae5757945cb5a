/**
 * The database client the store is given, and what the store needs from it: plain
 * queries, and transactions on one connection whatever the client is.
 */
import { IpokitError } from '@ipokit/core';
import { type StoreCallOptions } from '@ipokit/core/backend';

/** What every client has: one statement with parameters, resolving to its rows. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A client the store can run a transaction on, which is what an atomic import needs:
 *
 * - a pool (`pg.Pool`): `connect()` checks a connection out for the transaction;
 * - one connection (`pg.Client`, or a `PoolClient` taken from a pool): `BEGIN` ... `COMMIT`
 *   on it, with the store's other calls held back meanwhile;
 * - anything with `transaction(fn)` that runs `fn`'s queries in one transaction on one
 *   connection (PGlite; or a wrapper of your own).
 *
 * An object with only `query()` is refused: over a pool it would send `BEGIN`, the
 * statements and `COMMIT` on whichever connections the pool hands out. The store never
 * opens or closes the client.
 */
export type PostgresClient = PostgresPool | PostgresConnection | TransactionalClient;

/** A pool, as `pg.Pool`: `connect()` checks a connection out; `totalCount` tells it apart. */
export interface PostgresPool extends Queryable {
  connect(): Promise<Queryable & { release(error?: Error | boolean): void }>;
  totalCount: number;
}

/** One connection, as `pg.Client` or a `PoolClient`: every query runs on it, in order. */
export interface PostgresConnection extends Queryable {
  connect(...args: never[]): unknown;
}

/** A client that runs a transaction itself, on one connection (PGlite's `transaction`). */
export interface TransactionalClient extends Queryable {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** A connection inside a transaction: queries run on it, in order. */
export interface Transaction {
  query<R>(text: string, params?: unknown[]): Promise<R[]>;
  /** Several statements without parameters, e.g. a migration. */
  script(sql: string): Promise<void>;
}

/** A connection checked out of a pool (pg's PoolClient is an EventEmitter). */
interface PooledConnection extends Queryable {
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
}

interface PoolLike extends Queryable {
  connect(): Promise<PooledConnection>;
  totalCount: number;
  /** pg-pool keeps its settings here; `max` defaults to 10. */
  options?: { max?: number };
}

interface PgliteLike extends Queryable {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** PGlite's, for several statements at once; a wrapper of your own may lack it. */
  exec?(sql: string): Promise<unknown>;
}

/** What the client refusals say the store takes. */
const CLIENT_KINDS =
  'Pass the pool itself (it has connect()), one connection (pg.Client, or pool.connect()), or an object whose transaction(fn) runs fn\'s queries in one transaction on one connection, as PGlite does.';

/**
 * Default bound on the calls waiting for a connection (see {@link DatabaseOptions}).
 *
 * @example
 * ```ts
 * new Database(pool, { maxWaitingCalls: DEFAULT_MAX_WAITING_CALLS });
 * ```
 */
export const DEFAULT_MAX_WAITING_CALLS = 1_000;

/** Options of {@link Database}. */
export interface DatabaseOptions {
  /**
   * How many calls made for a request (those with a deadline) may wait for a connection;
   * with one more, the oldest is refused at once with `ERR:UNAVAILABLE` (a 503), so that a
   * stalled database sheds load instead of queueing it without bound. Default 1,000.
   */
  maxWaitingCalls?: number;
  /**
   * Connections of a pool kept out of the store's calls because the store holds them for
   * something else (the data cache's LISTEN connection): the gate is that much narrower, so
   * that no call waits in the pool's queue, where its deadline could not drop it. Only on a
   * pool whose `max` is larger; default 0.
   */
  reservedConnections?: number;
}

/** How the store drives a client: see {@link PostgresClient}. */
export type ClientKind = 'pool' | 'pglite' | 'single';

/**
 * The store's handle on a client: queries that reject with `ERR:UNAVAILABLE` (the driver's
 * error as `cause`, never in the message), and `transaction(fn)` on one connection.
 *
 * - `pg.Pool`: `connect()` takes a connection for the transaction, `BEGIN` ... `COMMIT`.
 * - PGlite (or any client with `transaction(fn)`): its own `transaction()` (PGlite queues
 *   other queries until it ends).
 * - a single connection (`pg.Client`): `BEGIN` ... `COMMIT` on it, with the store's other
 *   queries held back meanwhile, so they neither join nor see the open transaction.
 * - anything else (a bare `{ query }`) is refused here: see {@link PostgresClient}.
 *
 * Every call first passes a {@link Gate} as wide as the connections the client has (the
 * pool's `max`; PGlite 1; 10 on anything else, which may multiplex), so that calls wait
 * here, where a call whose deadline has passed is dropped before it starts and the number
 * waiting is bounded, rather than in the driver's queue, where neither is possible.
 */
export class Database {
  /** How the client is driven: a pool, PGlite (or another `transaction(fn)` client), one connection. */
  readonly kind: ClientKind;
  /** The pool connections kept out of the gate (see {@link DatabaseOptions.reservedConnections}). */
  readonly reserved: number;
  private readonly gate: Gate;

  constructor(
    /** The client the store was given (the data cache listens on it); never closed here. */
    readonly client: PostgresClient,
    options: DatabaseOptions = {},
  ) {
    if (client === null || typeof client !== 'object' || typeof client.query !== 'function') {
      throw new IpokitError('ERR:BADPARAM', `postgresStore needs a pg.Pool, a pg.Client or a PGlite instance as its client. ${CLIENT_KINDS}`, { parameter: 'client' });
    }
    const c = client as Partial<PoolLike & PgliteLike>;
    if (typeof c.transaction === 'function') this.kind = 'pglite';
    else if (typeof c.connect === 'function' && typeof c.totalCount === 'number') this.kind = 'pool';
    else if (typeof c.connect === 'function') this.kind = 'single';
    else {
      throw new IpokitError(
        'ERR:BADPARAM',
        `postgresStore cannot run a transaction on a client with only query(): over a pool it would send BEGIN and COMMIT on different connections, and imports would not be atomic. ${CLIENT_KINDS}`,
        { parameter: 'client' },
      );
    }
    const maxWaiting = options.maxWaitingCalls ?? DEFAULT_MAX_WAITING_CALLS;
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 0) {
      throw new IpokitError('ERR:BADPARAM', `maxWaitingCalls must be a whole number >= 0; got ${String(maxWaiting)}.`, { parameter: 'maxWaitingCalls' });
    }
    const given = this.kind === 'pool' ? (c.options?.max ?? 10) : this.kind === 'pglite' ? 1 : 10;
    const width = Number.isSafeInteger(given) && given > 0 ? given : 10;
    const reserve = options.reservedConnections ?? 0;
    this.reserved = this.kind === 'pool' && Number.isSafeInteger(reserve) && reserve > 0 && reserve < width ? reserve : 0;
    this.gate = new Gate(width - this.reserved, maxWaiting);
  }


  /**
   * One statement on any connection. With `call`, it is not started once the deadline
   * has passed.
   *
   * @example
   * ```ts
   * const rows = await db.query<{ n: number }>('SELECT 1 AS n');
   * ```
   */
  query<R>(text: string, params: unknown[] = [], call?: StoreCallOptions): Promise<R[]> {
    return this.queryWithin<R>(call, () => [text, params]);
  }

  /**
   * One statement built when it is about to start, from the milliseconds left until the
   * call's deadline (null without one): a statement can then be told its own time limit.
   *
   * @example
   * ```ts
   * await db.queryWithin(call, (msLeft) => ['SELECT f($1)', [msLeft]]);
   * ```
   */
  async queryWithin<R>(call: StoreCallOptions | undefined, statement: (msLeft: number | null) => [string, unknown[]]): Promise<R[]> {
    await this.gate.enter(call);
    try {
      const [text, params] = statement(call === undefined ? null : call.deadline - performance.now());
      return await run<R>(this.client, text, params);
    } finally {
      this.gate.leave();
    }
  }

  /**
   * Leaves one more connection of a pool out of the store's calls, for as long as the caller
   * holds it (a LISTEN connection): the gate narrows by one until the returned function
   * gives it back. Null when there is none to spare: not a pool, or the gate is down to one.
   *
   * @example
   * ```ts
   * const giveBack = db.reserveConnection();
   * if (giveBack !== null) { const connection = await pool.connect(); ... giveBack(); }
   * ```
   */
  reserveConnection(): (() => void) | null {
    if (this.kind !== 'pool' || !this.gate.narrow()) return null;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.gate.widen();
    };
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
    // On a single connection the transaction has it to itself: no other call of the store
    // may join it or see it open.
    const exclusive = this.kind === 'single';
    await this.gate.enter(undefined, exclusive);
    try {
      return await this.transactionOnConnection(fn);
    } finally {
      this.gate.leave(exclusive);
    }
  }

  private async transactionOnConnection<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
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
    // A single connection: the gate holds the store's other calls back meanwhile.
    try {
      return await inTransaction(this.client, fn);
    } catch (err) {
      throw unavailable(err);
    }
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: IpokitError) => void;
  /** `performance.now()` ms; Infinity for a call made for no request (never shed). */
  deadline: number;
  /** When it began to wait. */
  since: number;
  /** Runs alone. */
  exclusive: boolean;
}

/** Once the oldest call has waited this long, the newest is served first. */
const STALE_WAIT_MS = 50;

/**
 * At most `capacity` calls at a time (an exclusive one alone); the others wait. A waiter
 * whose deadline passes is dropped when met (its request has been answered). At most
 * `maxWaiting` calls with a deadline wait: a new one then takes the place of the oldest,
 * which is refused at once (it has the least time left).
 *
 * Order: first come, first served while the queue moves; once the oldest has waited
 * {@link STALE_WAIT_MS}, the newest first (adaptive LIFO). After a stall every waiter is
 * near its deadline in arrival order; serving the newest spends the connections on calls
 * that can still finish in time, and a request's next call (it makes two or three) goes
 * straight on instead of to the back, so answers flow again at once.
 */
class Gate {
  private active = 0;
  private queue: Waiter[] = [];
  private head = 0;
  /** Waiters with a deadline, counted against `maxWaiting`. */
  private bounded = 0;

  constructor(
    private capacity: number,
    private readonly maxWaiting: number,
  ) {}

  /** One call fewer at once (false when down to one); the calls running finish first. */
  narrow(): boolean {
    if (this.capacity <= 1) return false;
    this.capacity -= 1;
    return true;
  }

  /** Gives back what {@link Gate.narrow} took. */
  widen(): void {
    this.capacity += 1;
    this.dispatch(performance.now());
  }

  enter(call: StoreCallOptions | undefined, exclusive = false): Promise<void> | void {
    const now = performance.now();
    const deadline = call === undefined ? Infinity : call.deadline;
    if (deadline <= now) throw expired();
    const weight = exclusive ? this.capacity : 1;
    if (this.active + weight <= this.capacity && this.head === this.queue.length) {
      this.active += weight;
      return;
    }
    if (deadline !== Infinity) {
      if (this.bounded >= this.maxWaiting) this.dropExpired(now);
      if (this.bounded >= this.maxWaiting) {
        if (this.maxWaiting === 0) throw shed(0);
        this.shedOldest();
      }
      this.bounded++;
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ resolve, reject, deadline, since: now, exclusive });
    });
  }

  leave(exclusive = false): void {
    this.active -= exclusive ? this.capacity : 1;
    this.dispatch(performance.now());
  }

  /** Lets waiters in while there is room. */
  private dispatch(now: number): void {
    while (this.head < this.queue.length) {
      const oldest = this.queue[this.head]!;
      const lifo = oldest.deadline !== Infinity && now - oldest.since >= STALE_WAIT_MS;
      const next = lifo ? this.queue[this.queue.length - 1]! : oldest;
      if (next.deadline <= now) {
        this.remove(lifo).reject(expired());
        continue;
      }
      const weight = next.exclusive ? this.capacity : 1;
      if (this.active + weight > this.capacity) break;
      this.remove(lifo);
      this.active += weight;
      next.resolve();
    }
  }

  /** Refuses the waiters whose deadline has passed (their requests are answered already). */
  private dropExpired(now: number): void {
    const kept: Waiter[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const w = this.queue[i]!;
      if (w.deadline <= now) {
        this.bounded--;
        w.reject(expired());
      } else {
        kept.push(w);
      }
    }
    this.queue = kept;
    this.head = 0;
  }

  /** Refuses the oldest waiter with a deadline, to make room. */
  private shedOldest(): void {
    if (this.queue[this.head]!.deadline !== Infinity) {
      this.remove(false).reject(shed(this.maxWaiting));
      return;
    }
    const i = this.queue.findIndex((w, j) => j >= this.head && w.deadline !== Infinity);
    const [w] = this.queue.splice(i, 1);
    this.bounded--;
    w!.reject(shed(this.maxWaiting));
  }

  /** Takes the oldest waiter, or the newest. */
  private remove(newest: boolean): Waiter {
    let w: Waiter;
    if (newest) {
      w = this.queue.pop()!;
    } else {
      w = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Waiter;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (w.deadline !== Infinity) this.bounded--;
    return w;
  }
}

function shed(maxWaiting: number): IpokitError {
  return new IpokitError('ERR:UNAVAILABLE', `More than ${maxWaiting} calls waited for a PostgreSQL connection (maxWaitingCalls): the oldest was refused at once.`, { shed: true });
}

function expired(): IpokitError {
  return new IpokitError('ERR:UNAVAILABLE', 'The call was not started: its deadline passed while it waited for a PostgreSQL connection.');
}

class RollbackFailed extends Error {}

async function inTransaction<T>(connection: Queryable, fn: (tx: Transaction) => Promise<T>): Promise<T> {
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

function transactionOn(connection: Queryable): Transaction {
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

async function run<R>(client: Queryable, text: string, params: unknown[]): Promise<R[]> {
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
