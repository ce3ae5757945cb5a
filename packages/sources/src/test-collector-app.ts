/**
 * One collector process of collector-processes.test.ts (not published): its own pg.Pool on
 * DATABASE_URL (its connections named `IPOKIT_APP_NAME`, so that the parent can tell in
 * `pg_locks` which process holds a lock), a postgresStore on `IPOKIT_SCHEMA`, and
 * `startCollector` with real timers and the scripted sources of {@link scriptedSources}:
 * every process answers alike for a run's instant. It reports to its parent over IPC
 * ({@link AppEvent}) each collect call as it starts and as it ends, each `writeSourceRun`
 * and each error; it prints `ready` once the collector has started. On SIGTERM it stops the
 * collector, says `stopped`, and once its parent sends `exit` closes its pool and exits 0;
 * it exits when its parent goes away.
 *
 * Settings (environment): IPOKIT_SCHEMA, IPOKIT_APP_NAME, IPOKIT_EVERY_MS (default 1,000),
 * IPOKIT_SLOW_MS (how long a run of the slow source takes, default 700), IPOKIT_STALL_AFTER_MS
 * (when set, the first write that many ms after the start blocks the whole process inside
 * its transaction, holding the data lock, for up to a minute: a process that hangs there,
 * for the parent to kill).
 */
import pg from 'pg';
import type { SnapshotRecord, SourceRunWrite, SourceStore, WriteOptions } from '@ipokit/core/backend';
import type { IpoStore } from '@ipokit/core';
// The storage package's store, by path (this package does not depend on it).
import { postgresStore } from '../../storage-postgres/src/postgres-store.js';
import { startCollector } from './collector.js';
import type { Source, SourceAnswer } from './types.js';

/** What a collector process tells its parent. Instants are epoch ms of the process's `Date.now()`. */
export type AppEvent =
  | { type: 'collect-start'; pid: number; source: string; at: number; start: number }
  | { type: 'collect-end'; pid: number; source: string; at: number; start: number; end: number; outcome: 'ok' | 'aborted' }
  | {
      type: 'write';
      pid: number;
      source: string;
      at: number;
      /** Resolved with no conflict: everything of the run is committed. */
      ok: boolean;
      /** The IPOs of the snapshots combined at `at` (when `ok`). */
      combined: string[];
      /** The state's `records` written with the run. */
      records: number;
      /** When the write resolved or failed. */
      done: number;
      error?: string;
    }
  | { type: 'error'; pid: number; source: string; message: string }
  /** Its write of the run at `at` stalls inside its transaction (IPOKIT_STALL_AFTER_MS), from `start`. */
  | { type: 'stalling'; pid: number; source: string; at: number; start: number }
  /** After SIGTERM: its collector has stopped; it closes its pool when the parent sends `exit`. */
  | { type: 'stopped'; pid: number };

/** The IPOs the scripted sources report on (the test imports them first). */
export const IPO_IDS = ['ipo-1', 'ipo-2', 'ipo-3'] as const;

/**
 * A source's GMP number of an IPO for a run at `at`: whole rupees 10 to 99 that move every
 * second, the same in every process.
 *
 * @example
 * ```ts
 * scriptedPrice('gmp-a', 1, 1_764_000_000_000); // a number in 10..99
 * ```
 */
export function scriptedPrice(source: string, ipoIndex: number, at: number): number {
  let salt = 0;
  for (const c of source) salt = (salt * 31 + c.charCodeAt(0)) % 997;
  return 10 + ((Math.floor(at / 1_000) * 7 + ipoIndex * 13 + salt) % 90);
}

/**
 * The test's sources: `gmp-a` and `gmp-b`, quick, and `slow`, whose runs take `slowMs` (it
 * stops when its signal aborts). Each reports every IPO of {@link IPO_IDS} at
 * {@link scriptedPrice}. `onCollect` is told of each call as it starts and ends.
 *
 * @example
 * ```ts
 * const sources = scriptedSources(1_000, 700, (e) => console.log(e));
 * ```
 */
export function scriptedSources(everyMs: number, slowMs: number, onCollect: (event: AppEvent) => void): Source[] {
  const make = (name: string, takesMs: number): Source => ({
    name,
    everyMs,
    async collect({ now, signal }) {
      const at = now.getTime();
      const start = Date.now();
      onCollect({ type: 'collect-start', pid: process.pid, source: name, at, start });
      let outcome: 'ok' | 'aborted' = 'ok';
      try {
        if (takesMs > 0) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, takesMs);
            signal.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                outcome = 'aborted';
                reject(signal.reason);
              },
              { once: true },
            );
          });
        }
        const answer: SourceAnswer = { gmpReports: IPO_IDS.map((ipoId, i) => ({ ipoId, gmpPrice: scriptedPrice(name, i + 1, at) })) };
        return answer;
      } finally {
        onCollect({ type: 'collect-end', pid: process.pid, source: name, at, start, end: Date.now(), outcome });
      }
    },
  });
  return [make('gmp-a', 0), make('gmp-b', 0), make('slow', slowMs)];
}

async function main(): Promise<void> {
  const send = (event: AppEvent): void => {
    process.send?.(event);
  };
  const crash = (what: string) => (err: unknown) => {
    process.stderr.write(`collector app ${process.pid}: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(70);
  };
  process.on('unhandledRejection', crash('unhandled rejection'));
  process.on('uncaughtException', crash('uncaught exception'));

  const everyMs = Number(process.env.IPOKIT_EVERY_MS ?? 1_000);
  const slowMs = Number(process.env.IPOKIT_SLOW_MS ?? 700);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5, application_name: process.env.IPOKIT_APP_NAME ?? `collector-${process.pid}` });
  pool.on('error', () => undefined);
  const base = postgresStore({ client: pool, schema: process.env.IPOKIT_SCHEMA ?? 'ipokit' });
  const write = base.writeSourceRun.bind(base);
  const stallAt = process.env.IPOKIT_STALL_AFTER_MS === undefined ? null : Date.now() + Number(process.env.IPOKIT_STALL_AFTER_MS);
  let stalled = false;
  /** Inside the write's transaction: on the first write after `stallAt`, block the process. */
  const maybeStall = (run: SourceRunWrite): void => {
    if (stallAt === null || stalled || Date.now() < stallAt) return;
    stalled = true;
    send({ type: 'stalling', pid: process.pid, source: run.source, at: run.at, start: Date.now() });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  };
  // The store as the collector sees it, telling the parent each run's write and its outcome.
  const store: IpoStore & SourceStore = {
    ...base,
    async writeSourceRun(run: SourceRunWrite, options?: WriteOptions) {
      let combined: SnapshotRecord[] = [];
      try {
        const result = await write(
          {
            ...run,
            combine: (reports, changed) => {
              maybeStall(run);
              return (combined = run.combine(reports, changed));
            },
          },
          options,
        );
        const ok = result.conflicts.length === 0;
        send({ type: 'write', pid: process.pid, source: run.source, at: run.at, ok, combined: ok ? combined.map((s) => s.ipoId) : [], records: run.state.records, done: Date.now() });
        return result;
      } catch (err) {
        send({ type: 'write', pid: process.pid, source: run.source, at: run.at, ok: false, combined: [], records: run.state.records, done: Date.now(), error: err instanceof Error ? err.message : String(err) });
        throw err;
      }
    },
  };
  const collector = await startCollector(store, {
    sources: scriptedSources(everyMs, slowMs, send),
    onError: (err, source) => send({ type: 'error', pid: process.pid, source, message: err instanceof Error ? err.message : String(err) }),
  });
  process.stdout.write('ready\n');
  // The process that started this one is gone: do not outlive it.
  process.on('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => {
    void (async () => {
      await collector.stop();
      // The parent looks at the locks while this process's sessions are still open.
      const closing = new Promise<void>((resolve) => process.on('message', (m) => m === 'exit' && resolve()));
      send({ type: 'stopped', pid: process.pid });
      await closing;
      await base.close?.();
      await pool.end();
      process.exit(0);
    })().catch(crash('stopping'));
  });
}

// Run as a program (not when the test imports its helpers).
if (process.env.IPOKIT_COLLECTOR_APP === '1') void main();
