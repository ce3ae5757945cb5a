/**
 * The collector's part of the PostgreSQL store (`SourceStore`, docs/spec.md#sources): each
 * source's reports and state in two tables (migration 13), a source's run lock as a
 * session-level advisory lock, and a run's write as one transaction on the path of
 * `writeDataset` (the data lock, the conflict check, the events, the data version).
 */
import { IpokitError } from '@ipokit/core';
import type { DatasetConflict, SnapshotRecord, SourceReport, SourceRunWrite, SourceState, SourceStore } from '@ipokit/core/backend';
import { type Database, type PostgresPool, type Queryable, type Transaction, unavailable } from './client.js';
import { advisoryKey } from './migrations.js';
import { checkAndWriteData, dataVersion, lockData } from './postgres-store.js';

/** What {@link sourceMethods} needs of the store it is part of. */
export interface SourceMethodsContext {
  /** The schema, quoted. */
  s: string;
  db: Database;
  /** One statement, once the schema is known to be migrated. */
  query: <R>(text: string, params?: unknown[]) => Promise<R[]>;
  /** A data write's transaction, as `writeDataset`'s: the caches learn its version. */
  dataWrite: <T>(fn: (tx: Transaction) => Promise<{ result: T; version: bigint | null }>) => Promise<T>;
  /** Resolves once the schema is known to be migrated (rejects when it is not, or when the store is closed). */
  ready: () => Promise<void>;
}

/**
 * The `SourceStore` methods of a PostgreSQL store, on the tables of migration 13.
 *
 * The run lock of a source is `pg_try_advisory_lock` on a key made from the schema and the
 * source's name, held by a session: on a pool, one connection the store checks out while
 * it holds any source's lock (its gate runs one call fewer at once meanwhile) and gives
 * back once it holds none; on one connection (`pg.Client`), that connection. When the
 * session ends (the process dies, the connection is lost) PostgreSQL releases the lock.
 * Within one process, locks are also kept per client object and schema, since a session
 * may take its own advisory lock again; on a client that runs its own transactions (PGlite,
 * or a wrapper of your own whose `query()` may use any connection) they are kept in the
 * process only.
 *
 * @example
 * ```ts
 * const sources = sourceMethods({ s, db, query, dataWrite, ready });
 * const ran = await sources.withSourceLock('ipocentral', () => runOnce());
 * ```
 */
export function sourceMethods(ctx: SourceMethodsContext): SourceStore {
  const { s, db, query, dataWrite, ready } = ctx;
  const held = heldSources(db, s);
  const session = db.kind === 'pool' ? new LockConnection(db) : null;

  /**
   * The locks this store holds on its lock connection, by source: the connection's generation
   * when the lock was taken. A run's writes check it (and, in the write's transaction, that
   * the lock is still held): a run whose lock went with its connection must not write beside
   * the run of the process that took the source over.
   */
  const leases = new Map<string, number>();
  const keyOf = (source: string): [number, number] => advisoryKey(`${s}.source.${source}`);
  const lost = (source: string): IpokitError =>
    new IpokitError('ERR:UNAVAILABLE', `The lock of source ${JSON.stringify(source)} was lost (its database session ended), so this run may not write: another process may run the source now.`);
  /** Refuses a write of a run whose lock this store took and has lost since. */
  const checkLease = (source: string): void => {
    const generation = leases.get(source);
    if (generation !== undefined && session !== null && !session.alive(generation)) throw lost(source);
  };

  /** Takes the source's lock in PostgreSQL; resolves to how to let it go, or null when another session holds it. */
  const takeLock = async (source: string): Promise<(() => Promise<void>) | null> => {
    const key = keyOf(source);
    if (session !== null) {
      const taken = await session.take(key);
      if (taken === null) return null;
      leases.set(source, taken.generation);
      return async () => {
        leases.delete(source);
        await taken.release();
      };
    }
    if (db.kind === 'single') {
      const [row] = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', key);
      if (row?.ok !== true) return null;
      return async () => {
        // (a lost connection released it already)
        await db.query('SELECT pg_advisory_unlock($1::int, $2::int)', key).catch(() => undefined);
      };
    }
    // A client that runs its own transactions: its query() may use any session.
    return async () => undefined;
  };

  return {
    async withSourceLock<T>(source: string, fn: () => Promise<T>): Promise<{ value: T } | null> {
      await ready();
      if (held.has(source)) return null;
      held.add(source);
      let release: (() => Promise<void>) | null;
      try {
        release = await takeLock(source);
      } catch (err) {
        held.delete(source);
        throw unavailable(err);
      }
      if (release === null) {
        held.delete(source);
        return null;
      }
      try {
        return { value: await fn() };
      } finally {
        await release();
        held.delete(source);
      }
    },

    async sourceStates(sources) {
      const rows = await query<StateRow>(
        `SELECT source, last_run_at::float8 AS last_run_at, last_success_at::float8 AS last_success_at, last_error,
                records::float8 AS records, failures, next_run_at::float8 AS next_run_at
         FROM ${s}.source_states WHERE source = ANY ($1::text[])`,
        [[...sources]],
      );
      const bySource = new Map(rows.map((r) => [r.source, stateOf(r)]));
      return sources.flatMap((name) => {
        const state = bySource.get(name);
        return state === undefined ? [] : [{ ...state }];
      });
    },

    async sourceReports(sources) {
      const rows = await query<ReportRow>(
        `SELECT source, ipo_id, paise::float8 AS paise, at::float8 AS at FROM ${s}.source_reports
         WHERE source = ANY ($1::text[]) ORDER BY source, ipo_id`,
        [[...sources]],
      );
      return rows.map(reportOf);
    },

    async saveSourceState(state) {
      checkLease(state.source);
      if (!leases.has(state.source)) {
        await query(UPSERT_STATE(s), stateParams(state));
        return;
      }
      // Under the run's lock: written only while the lock is held (a free lock was lost).
      const rows = await query(
        `WITH probe AS (SELECT pg_try_advisory_xact_lock($8::int, $9::int) AS free) ${UPSERT_STATE(s).replace('VALUES ($1, $2::bigint, $3::bigint, $4, $5::bigint, $6::int, $7::bigint)', 'SELECT $1, $2::bigint, $3::bigint, $4, $5::bigint, $6::int, $7::bigint FROM probe WHERE NOT probe.free')} RETURNING 1`,
        [...stateParams(state), ...keyOf(state.source)],
      );
      if (rows.length === 0) throw lost(state.source);
    },

    async writeSourceRun(run, writeOptions) {
      const ids = new Set<string>();
      for (const r of run.reports) {
        if (ids.has(r.ipoId)) throw new IpokitError('ERR:BADPARAM', `A run of source ${JSON.stringify(run.source)} reports IPO ${JSON.stringify(r.ipoId)} twice; a run reports an IPO once.`, { parameter: 'reports' });
        ids.add(r.ipoId);
      }
      const at = writeOptions?.at ?? Date.now();
      checkLease(run.source);
      const fenced = leases.has(run.source);
      // What run.combine threw, given back as it is (not as a failure of the database).
      let thrown: { error: unknown } | null = null;
      try {
        return await dataWrite(async (tx) => {
          // Runs of every source, imports and deletions take turns: each run combines the
          // reports the others committed.
          await lockData(tx, s);
          if (fenced) {
            // The run's lock must still be held (by this store's session): free, it was lost.
            const [probe] = await tx.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1::int, $2::int) AS free', keyOf(run.source));
            if (probe?.free === true) throw lost(run.source);
          }
          // (a conflict undoes the reports and the state too, and keeps the data lock to the end)
          await tx.query('SAVEPOINT source_run');
          const changed = await upsertReports(tx, s, run);
          let combined: SnapshotRecord[] = [];
          if (changed.length > 0) {
            const reports = (
              await tx.query<ReportRow>(
                `SELECT source, ipo_id, paise::float8 AS paise, at::float8 AS at FROM ${s}.source_reports
                 WHERE ipo_id = ANY ($1::text[]) ORDER BY source, ipo_id`,
                [changed],
              )
            ).map(reportOf);
            try {
              combined = run.combine(reports, changed);
            } catch (error) {
              thrown = { error };
              throw error;
            }
          }
          const snapshots = combined.length === 0 ? run.data.snapshots : [...run.data.snapshots, ...combined];
          const conflicts: DatasetConflict[] = await checkAndWriteData(tx, s, { ipos: run.data.ipos, snapshots, subscription: run.data.subscription }, at);
          if (conflicts.length > 0) {
            await tx.query('ROLLBACK TO SAVEPOINT source_run');
            return { result: { conflicts, combined: 0 }, version: null };
          }
          await tx.query(UPSERT_STATE(s), stateParams(run.state));
          return { result: { conflicts: [], combined: combined.length }, version: await dataVersion(tx, s) };
        });
      } catch (err) {
        if (thrown !== null) throw (thrown as { error: unknown }).error;
        throw err;
      }
    },
  };
}

/**
 * Upserts every report of the run at `run.at` in one statement, and resolves to the IPOs
 * whose report it changed (none stored, or another price), in `run.reports` order.
 */
async function upsertReports(tx: Transaction, s: string, run: SourceRunWrite): Promise<string[]> {
  if (run.reports.length === 0) return [];
  // The main query reads the table as it was before the statement's insert.
  const rows = await tx.query<{ ipo_id: string }>(
    `WITH input AS (
       SELECT x.ipo_id, x.paise, x.n FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS x (ipo_id, paise, n)
     ), written AS (
       INSERT INTO ${s}.source_reports (source, ipo_id, paise, at)
       SELECT $1, ipo_id, paise, $4::bigint FROM input
       ON CONFLICT (source, ipo_id) DO UPDATE SET paise = excluded.paise, at = excluded.at
     )
     SELECT input.ipo_id FROM input
     LEFT JOIN ${s}.source_reports AS r ON r.source = $1 AND r.ipo_id = input.ipo_id
     WHERE r.ipo_id IS NULL OR r.paise IS DISTINCT FROM input.paise
     ORDER BY input.n`,
    [run.source, run.reports.map((r) => r.ipoId), run.reports.map((r) => r.paise), run.at],
  );
  return rows.map((r) => r.ipo_id);
}

const UPSERT_STATE = (s: string): string =>
  `INSERT INTO ${s}.source_states (source, last_run_at, last_success_at, last_error, records, failures, next_run_at)
   VALUES ($1, $2::bigint, $3::bigint, $4, $5::bigint, $6::int, $7::bigint)
   ON CONFLICT (source) DO UPDATE SET last_run_at = excluded.last_run_at, last_success_at = excluded.last_success_at,
     last_error = excluded.last_error, records = excluded.records, failures = excluded.failures, next_run_at = excluded.next_run_at`;

function stateParams(state: SourceState): unknown[] {
  return [state.source, state.lastRunAt, state.lastSuccessAt, state.lastError, state.records, state.failures, state.nextRunAt];
}

interface StateRow {
  source: string;
  last_run_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  records: number;
  failures: number;
  next_run_at: number;
}

function stateOf(r: StateRow): SourceState {
  return {
    source: r.source,
    lastRunAt: r.last_run_at === null ? null : Number(r.last_run_at),
    lastSuccessAt: r.last_success_at === null ? null : Number(r.last_success_at),
    lastError: r.last_error,
    records: Number(r.records),
    failures: Number(r.failures),
    nextRunAt: Number(r.next_run_at),
  };
}

interface ReportRow {
  source: string;
  ipo_id: string;
  paise: number | null;
  at: number;
}

function reportOf(r: ReportRow): SourceReport {
  return { source: r.source, ipoId: r.ipo_id, paise: r.paise === null ? null : Number(r.paise), at: Number(r.at) };
}

/** The sources whose lock this process holds, per client object and schema: shared by every store object on them. */
const heldByClient = new WeakMap<object, Map<string, Set<string>>>();

function heldSources(db: Database, s: string): Set<string> {
  let bySchema = heldByClient.get(db.client);
  if (bySchema === undefined) {
    bySchema = new Map();
    heldByClient.set(db.client, bySchema);
  }
  let held = bySchema.get(s);
  if (held === undefined) {
    held = new Set();
    bySchema.set(s, held);
  }
  return held;
}

/** A connection checked out of a pool (pg's PoolClient is an EventEmitter). */
interface HeldConnection extends Queryable {
  release(error?: Error | boolean): void;
  on?(event: 'error' | 'end', listener: (err?: Error) => void): unknown;
  off?(event: 'error' | 'end', listener: (err?: Error) => void): unknown;
}

/**
 * The session holding a store's source locks on a pool: one connection, checked out (and
 * the store's gate narrowed by one) while it holds any lock, given back when it holds none.
 * Its statements run one at a time. Once it is lost, its locks are gone (PostgreSQL ends
 * them with the session): their holders' releases do nothing, and the next lock takes a
 * new connection.
 */
class LockConnection {
  private connection: HeldConnection | null = null;
  private giveBack: (() => void) | null = null;
  private onLost: ((err?: Error) => void) | null = null;
  /** Locks held on the current connection. */
  private holding = 0;
  /** The connection's number: a release of a lock taken on an earlier one does nothing. */
  private generation = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Database) {}

  /** Whether the connection that took a lock (its `generation`) is still this one's: a lost one took its locks with it. */
  alive(generation: number): boolean {
    return this.connection !== null && generation === this.generation;
  }

  /** Takes the lock `key`; resolves to its release and the connection's generation, or null when another session holds it. */
  take(key: [number, number]): Promise<{ release: () => Promise<void>; generation: number } | null> {
    return this.serially(async () => {
      const connection = this.connection ?? (await this.open());
      const generation = this.generation;
      let ok: boolean;
      try {
        const { rows } = await connection.query('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', key);
        ok = (rows[0] as { ok?: boolean } | undefined)?.ok === true;
      } catch (err) {
        this.drop(err instanceof Error ? err : true);
        throw err;
      }
      if (!ok) {
        if (this.holding === 0) this.drop(false);
        return null;
      }
      this.holding += 1;
      let released = false;
      const release = (): Promise<void> =>
        this.serially(async () => {
          if (released || generation !== this.generation || this.connection === null) return;
          released = true;
          try {
            const { rows } = await this.connection.query('SELECT pg_advisory_unlock($1::int, $2::int) AS ok', key);
            if ((rows[0] as { ok?: boolean } | undefined)?.ok !== true) throw new Error('pg_advisory_unlock found no lock to release');
          } catch (err) {
            // Given back broken: its session, and with it every lock it held, ends.
            this.drop(err instanceof Error ? err : true);
            return;
          }
          this.holding -= 1;
          if (this.holding === 0) this.drop(false);
        });
      return { release, generation };
    });
  }

  private async open(): Promise<HeldConnection> {
    const giveBack = this.db.reserveConnection();
    if (giveBack === null) {
      throw new IpokitError(
        'ERR:UNAVAILABLE',
        "withSourceLock holds a connection of the pool while a source runs, and the store's pool has none to spare: give the pool at least 3 connections (max), 2 without the data cache.",
      );
    }
    let connection: HeldConnection;
    try {
      connection = (await (this.db.client as PostgresPool).connect()) as HeldConnection;
    } catch (err) {
      giveBack();
      throw err;
    }
    // pg-pool removes its own 'error' listener while a connection is checked out: without
    // ours, the server going away would crash the process.
    const onLost = (err?: Error): void => {
      if (this.connection === connection) this.drop(err ?? true);
    };
    connection.on?.('error', onLost);
    connection.on?.('end', onLost);
    this.connection = connection;
    this.giveBack = giveBack;
    this.onLost = onLost;
    this.generation += 1;
    this.holding = 0;
    return connection;
  }

  /** Gives the connection back to the pool: `broken` (not reused: its session ends) or not. */
  private drop(broken: Error | boolean): void {
    const connection = this.connection;
    if (connection === null) return;
    this.connection = null;
    this.holding = 0;
    this.generation += 1;
    if (this.onLost !== null) {
      connection.off?.('end', this.onLost);
      // A broken one keeps it: a late error of a closing connection must not crash the
      // process. A sound one goes back to the pool, which listens for its errors again.
      if (broken === false) connection.off?.('error', this.onLost);
    }
    this.onLost = null;
    connection.release(broken);
    this.giveBack?.();
    this.giveBack = null;
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
