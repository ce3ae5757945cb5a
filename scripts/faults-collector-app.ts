/**
 * One collector process of the collector phase of `npm run faults` (scripts/faults-collector.ts):
 * its own pg.Pool on DATABASE_URL, a postgresStore on IPOKIT_SCHEMA, and `startCollector` with
 * five sources that misbehave on purpose (each of them the same in every process, so that
 * whichever process runs a source answers alike):
 *
 *   steady   a GMP report of every IPO, prices derived from the run's instant; always valid
 *   slow     sometimes takes longer than the timeout (it is cut), else valid
 *   flaky    sometimes throws, else valid
 *   junk     sometimes answers junk (a string, an array, `{ gmpReports: 'x' }`), else valid
 *   refused  sometimes answers a report with an invalid price (1.234) beside reports at the
 *            marker price, which must never reach the database; else valid
 *
 * Settings come from the environment: DATABASE_URL, IPOKIT_SCHEMA, IPOKIT_COLLECTOR_NAME,
 * IPOKIT_IPO_IDS (the IPOs reported, comma-separated, already stored), IPOKIT_MARKER_PRICE,
 * IPOKIT_EVERY_MS, IPOKIT_TIMEOUT_MS.
 *
 * It prints `ready` once its collector has started. Over IPC it tells its parent of every
 * collect call, every `withSourceLock` section and every `writeSourceRun` (before and after:
 * ok, conflicts or threw) as {@link CollectorAppEvent}s, as they happen, so that a process
 * killed with kill -9 has told what it began. The message `calm` makes every source answer
 * valid from then on. On SIGTERM it stops the collector, closes its pool, says `bye` and
 * exits 0. An unhandled rejection or an uncaught exception is a crash: a line on stderr and
 * exit 70. It exits when its parent goes away.
 */
import pg from 'pg';
import { isIpokitError } from '@ipokit/core';
import { postgresStore } from '@ipokit/storage-postgres';
import { startCollector, type Collector, type Source, type SourceAnswer } from '@ipokit/sources';

/** What a collect call did: answered (as `mood` says), threw, or ended by its signal. */
export type CollectOutcome = 'answered' | 'threw' | 'aborted';
/** How a source meant to answer in a run. */
export type Mood = 'valid' | 'slow' | 'throw' | 'junk' | 'refused';

/** What a collector process tells its parent (IPC), each as it happens; times are epoch ms of this machine's clock. */
export type CollectorAppEvent =
  | { type: 'collect-start'; process: string; source: string; id: number; start: number; mood: Mood }
  | { type: 'collect-end'; process: string; source: string; id: number; end: number; outcome: CollectOutcome }
  | { type: 'write-start'; process: string; source: string; at: number }
  | {
      type: 'write-end';
      process: string;
      source: string;
      at: number;
      result: 'ok' | 'conflicts' | 'threw';
      /** The IPOs whose report the run changed (what `combine` was given; none when it was not called). */
      changed: string[];
      reports: Array<{ ipoId: string; paise: number | null }>;
      error?: string;
    }
  | { type: 'run-error'; process: string; source: string; kind: 'refused' | 'cut' | 'failed'; message: string }
  | { type: 'bye'; process: string };

const name = process.env.IPOKIT_COLLECTOR_NAME ?? `collector-${process.pid}`;
const crash = (what: string) => (err: unknown) => {
  process.stderr.write(`collector ${name}: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(70);
};
process.on('unhandledRejection', crash('unhandled rejection'));
process.on('uncaughtException', crash('uncaught exception'));

const ipoIds = (process.env.IPOKIT_IPO_IDS ?? '').split(',').filter((id) => id !== '');
const MARKER = Number(process.env.IPOKIT_MARKER_PRICE ?? 7777.77);
const EVERY_MS = Number(process.env.IPOKIT_EVERY_MS ?? 1_000);
const TIMEOUT_MS = Number(process.env.IPOKIT_TIMEOUT_MS ?? 1_500);

const tell = (event: CollectorAppEvent): void => {
  process.send?.(event);
};

let calm = false;
let collects = 0;

/** Waits `ms`, or less when the signal aborts (it resolves to false then). */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A GMP price that changes every run and is the same whichever process runs it: rupees with
 * 2 decimals from the run's instant, apart for each source and IPO, below 1,100 (far from the marker).
 */
function priceAt(at: number, sourceIndex: number, ipoIndex: number): number {
  // (whole paise divided once: a sum of fractions would carry a float's error)
  return (((at + sourceIndex * 1_301 + ipoIndex * 977) % 100_000) + 1_000) / 100;
}

/** A source of the phase: `misbehave` says how it answers, when not calm, on about `odds` of its runs. */
function source(sourceName: string, sourceIndex: number, follows: readonly string[], misbehave: Exclude<Mood, 'valid'> | null, odds: number): Source {
  // Misbehaving on a schedule (every `period`-th run of this process, from its first), not
  // at random: a short phase (one cycle) still sees every kind of misbehaviour.
  const period = Math.max(2, Math.round(1 / odds));
  let runs = 0;
  return {
    name: sourceName,
    everyMs: EVERY_MS,
    async collect({ now, signal }) {
      const id = ++collects;
      runs += 1;
      const mood: Mood = !calm && misbehave !== null && runs % period === 1 % period ? misbehave : 'valid';
      const at = now.getTime();
      tell({ type: 'collect-start', process: name, source: sourceName, id, start: Date.now(), mood });
      let outcome: CollectOutcome = 'answered';
      try {
        // Every run takes a while, as a site does: a kill lands in the middle of some.
        const finished = await pause(mood === 'slow' ? TIMEOUT_MS + 1_000 : 50 + Math.random() * 300, signal);
        if (!finished) {
          outcome = 'aborted';
          throw signal.reason;
        }
        const valid = (): SourceAnswer => ({ gmpReports: follows.map((ipoId, i) => ({ ipoId, gmpPrice: priceAt(at, sourceIndex, i) })) });
        switch (mood) {
          case 'throw':
            throw new Error(`${sourceName} failed on purpose`);
          case 'junk': {
            const junk: unknown[] = ['not a dataset', [{ ipoId: follows[0], gmpPrice: 1 }], { gmpReports: 'x' }];
            return junk[Math.floor(Math.random() * junk.length)] as SourceAnswer;
          }
          case 'refused':
            return { gmpReports: follows.map((ipoId, i) => ({ ipoId, gmpPrice: i === follows.length - 1 ? 1.234 : MARKER })) };
          default:
            return valid();
        }
      } catch (err) {
        if (outcome === 'answered') outcome = 'threw';
        throw err;
      } finally {
        tell({ type: 'collect-end', process: name, source: sourceName, id, end: Date.now(), outcome });
      }
    },
  };
}

const few = ipoIds.slice(0, 8);
const sources: Source[] = [
  source('steady', 0, ipoIds, null, 0),
  source('slow', 1, few, 'slow', 0.4),
  source('flaky', 2, few, 'throw', 0.3),
  source('junk', 3, few, 'junk', 0.35),
  source('refused', 4, few, 'refused', 0.35),
];

// (a short connect timeout: while the database is down, calls fail soon and the collector backs off)
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 6, connectionTimeoutMillis: 1_000 });
// An idle connection the server drops must not take the process down: an app does the same.
pool.on('error', () => undefined);
// (no data cache: it would hold a connection for LISTEN)
const store = postgresStore({ client: pool, schema: process.env.IPOKIT_SCHEMA ?? 'ipokit', dataCacheTtlMs: 0 });

// The store as the collector sees it, telling the parent of every lock section and write.
const observed: typeof store = {
  ...store,
  async writeSourceRun(run, options) {
    tell({ type: 'write-start', process: name, source: run.source, at: run.at });
    let changed: string[] = [];
    const reports = run.reports.map((r) => ({ ...r }));
    try {
      const result = await store.writeSourceRun(
        {
          ...run,
          combine: (all, ids) => {
            changed = [...ids];
            return run.combine(all, ids);
          },
        },
        options,
      );
      tell({ type: 'write-end', process: name, source: run.source, at: run.at, result: result.conflicts.length > 0 ? 'conflicts' : 'ok', changed, reports });
      return result;
    } catch (err) {
      tell({ type: 'write-end', process: name, source: run.source, at: run.at, result: 'threw', changed, reports, error: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  },
};

const onError = (err: unknown, sourceName: string): void => {
  const message = err instanceof Error ? err.message : String(err);
  const kind = isIpokitError(err, 'ERR:DATASET') ? 'refused' : /was cut after/.test(message) ? 'cut' : 'failed';
  tell({ type: 'run-error', process: name, source: sourceName, kind, message });
};

// The database may be down when this process starts (it replaces one killed during an outage): try again.
async function start(): Promise<Collector> {
  for (;;) {
    try {
      return await startCollector(observed, { sources, timeoutMs: TIMEOUT_MS, onError });
    } catch (err) {
      if (!isIpokitError(err, 'ERR:UNAVAILABLE')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
const collector = await start();
process.stdout.write('ready\n');

process.on('message', (m: unknown) => {
  if (m === 'calm') calm = true;
});
// The process that started this one is gone (killed, crashed): do not outlive it.
process.on('disconnect', () => process.exit(0));
process.once('SIGTERM', () => {
  void (async () => {
    await collector.stop();
    await store.close?.();
    await pool.end();
    // (the events sent before it are delivered in order)
    await new Promise<void>((resolve) => (process.send === undefined ? resolve() : process.send({ type: 'bye', process: name } satisfies CollectorAppEvent, () => resolve())));
    process.exit(0);
  })().catch(crash('stopping'));
});
