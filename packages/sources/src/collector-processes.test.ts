import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset } from '@ipokit/core';
import { toIsoUtc } from '@ipokit/core/backend';
// The storage package's test database and lock keys (not published), by path.
import { advisoryKey } from '../../storage-postgres/src/migrations.js';
import { postgresStore } from '../../storage-postgres/src/postgres-store.js';
import { openTestDatabase, type TestDatabase } from '../../storage-postgres/src/test-database.js';
import { sourceStatuses } from './collector.js';
import { IPO_IDS, scriptedPrice, type AppEvent } from './test-collector-app.js';
import { ipoDataset } from './test-store.js';

// The same collector in three processes on one PostgreSQL store (docs/spec.md#sources,
// "Shared state"), with real timers, for about ten seconds: each source runs in one process
// at a time and about once per everyMs in all, every snapshot is at the instant of a run
// that was written, a process killed (kill -9) in the middle of a slow run loses nothing
// it committed and another takes the source over at its next due time, and the shared
// state tells it all. Real PostgreSQL only: PGlite lives in one process and cannot share
// locks across processes.

const url = process.env.DATABASE_URL;
const APP = fileURLToPath(new URL('./test-collector-app.ts', import.meta.url));
const SOURCES = ['gmp-a', 'gmp-b', 'slow'];
const EVERY_MS = 1_000;
const SLOW_MS = 700;
const PROCESSES = 3;
/** How long the processes run before the kill, and after it. */
const BEFORE_KILL_MS = 4_000;
const AFTER_KILL_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection naming `what` once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

interface App {
  name: string;
  child: ChildProcess;
  pid: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

type Collect = Extract<AppEvent, { type: 'collect-start' }> & { end: number | null; outcome: 'ok' | 'aborted' | 'killed' | null };
type Write = Extract<AppEvent, { type: 'write' }>;

describe.skipIf(!url)(`the collector in ${PROCESSES} processes on one PostgreSQL store (skipped without DATABASE_URL: PGlite cannot share locks across processes)`, () => {
  let db: TestDatabase;
  const apps: App[] = [];
  /** Every collect call of every process, in the order their starts arrived. */
  const collects: Collect[] = [];
  const writes: Write[] = [];
  const errors: Array<Extract<AppEvent, { type: 'error' }>> = [];
  const listeners: Array<(event: AppEvent) => void> = [];
  let victim!: App;
  /** The killed run, and when the kill was sent (`Date.now()`: the processes' clock). */
  let killed!: Collect;
  let killAt = 0;
  let stopAt = 0;
  /** How many sessions the killed process had left once its kill was seen; the locks held once the others stopped. */
  let victimBackendsAfterKill = -1;
  let holdersAtEnd: Array<{ source: string; app: string }> = [];
  /** How the other processes ended once told to close their pools. */
  let survivorExits: Array<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'> = [];

  const holders = async (): Promise<Array<{ source: string; app: string }>> => {
    const found: Array<{ source: string; app: string }> = [];
    for (const source of SOURCES) {
      const [k1, k2] = advisoryKey(`"${db.schema}".source.${source}`);
      const { rows } = await db.client.query(
        `SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.classid::bigint = (($1::bigint + 4294967296) % 4294967296) AND l.objid::bigint = (($2::bigint + 4294967296) % 4294967296)`,
        [k1, k2],
      );
      for (const r of rows as Array<{ app: string }>) found.push({ source, app: r.app });
    }
    return found;
  };
  const backendsOf = async (app: string): Promise<number> => {
    const { rows } = await db.client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app]);
    return (rows as Array<{ n: number }>)[0]!.n;
  };

  const onEvent = (event: AppEvent): void => {
    if (event.type === 'collect-start') collects.push({ ...event, end: null, outcome: null });
    else if (event.type === 'collect-end') {
      const c = collects.find((x) => x.pid === event.pid && x.source === event.source && x.at === event.at);
      if (c !== undefined) Object.assign(c, { end: event.end, outcome: event.outcome });
    } else if (event.type === 'write') writes.push(event);
    else if (event.type === 'error') errors.push(event);
    for (const l of listeners) l(event);
  };

  async function startApp(i: number): Promise<App> {
    const name = `${db.schema}-app${i}`.slice(-63);
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', APP], {
      env: { ...process.env, IPOKIT_COLLECTOR_APP: '1', IPOKIT_SCHEMA: db.schema, IPOKIT_APP_NAME: name, IPOKIT_EVERY_MS: String(EVERY_MS), IPOKIT_SLOW_MS: String(SLOW_MS) },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.on('message', (m) => onEvent(m as AppEvent));
    const app: App = { name, child, pid: child.pid!, exit };
    apps.push(app);
    await Promise.race([
      new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
      exit.then(({ code, signal }) => Promise.reject(new Error(`collector app ${i} exited (${code ?? signal}) before it was ready`))),
    ]);
    return app;
  }

  beforeAll(async () => {
    db = await openTestDatabase('collector_procs');
    const store = await db.emptyStore();
    await importDataset(store, ipoDataset(IPO_IDS.length), { now: () => new Date('2026-11-01T00:00:00Z') });
    await store.close?.();
    await Promise.all(Array.from({ length: PROCESSES }, (_, i) => startApp(i)));
    await sleep(BEFORE_KILL_MS);
    // The next run of the slow source, wherever it starts: its process is killed mid-run.
    const started = await within(new Promise<Collect>((resolve) => {
      const wait = (event: AppEvent): void => {
        if (event.type !== 'collect-start' || event.source !== 'slow') return;
        listeners.splice(listeners.indexOf(wait), 1);
        resolve(collects.at(-1)!);
      };
      listeners.push(wait);
    }), 10 * EVERY_MS, 'waiting for a run of the slow source');
    await sleep(150);
    victim = apps.find((a) => a.pid === started.pid)!;
    killed = started;
    killAt = Date.now();
    victim.child.kill('SIGKILL');
    await within(victim.exit, 10_000, 'the killed process exiting');
    if (killed.end === null) Object.assign(killed, { end: killAt, outcome: 'killed' });
    // Its connections go with it: PostgreSQL ends their sessions, and their locks.
    for (let i = 0; i < 200 && (await backendsOf(victim.name)) > 0; i++) await sleep(25);
    victimBackendsAfterKill = await backendsOf(victim.name);
    await sleep(AFTER_KILL_MS);
    const survivors = apps.filter((a) => a !== victim);
    // Stopped, their pools still open: the locks they hold now are the ones left held.
    await Promise.all(
      survivors.map((a) => {
        const stopped = new Promise<void>((resolve) => listeners.push((e) => e.type === 'stopped' && e.pid === a.pid && resolve()));
        a.child.kill('SIGTERM');
        return within(stopped, 10_000, `stopping the collector of ${a.name}`);
      }),
    );
    stopAt = Date.now();
    holdersAtEnd = await holders();
    for (const a of survivors) a.child.send('exit');
    survivorExits = await Promise.all(survivors.map((a) => Promise.race([a.exit, sleep(10_000).then(() => 'still running' as const)])));
  }, 90_000);

  afterAll(async () => {
    for (const a of apps) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
    await Promise.all(apps.map((a) => a.exit));
    await db?.close();
  });

  /** The runs of a source that were written (their write resolved with no conflict). */
  const okWrites = (source: string): Write[] => writes.filter((w) => w.source === source && w.ok).sort((a, b) => a.at - b.at);

  it('ran every source in more than one process, with no error, and killed the slow run before its answer', () => {
    expect(errors).toEqual([]);
    expect(writes.filter((w) => !w.ok)).toEqual([]);
    for (const source of SOURCES) expect(okWrites(source).length).toBeGreaterThan(3);
    // the processes shared the work
    expect(new Set(collects.map((c) => c.pid)).size).toBeGreaterThan(1);
    expect(killed.source).toBe('slow');
    expect(killed.outcome).toBe('killed');
    expect(writes.some((w) => w.pid === killed.pid && w.source === 'slow' && w.at === killed.at)).toBe(false);
  });

  it('runs each source in one process at a time, about once per everyMs in all (not once per process)', () => {
    for (const source of SOURCES) {
      const runs = collects.filter((c) => c.source === source).sort((a, b) => a.start - b.start);
      // A run holds the source from its collect call to the end of its write.
      const endOf = (c: Collect): number => Math.max(c.end ?? Infinity, ...writes.filter((w) => w.pid === c.pid && w.source === source && w.at === c.at).map((w) => w.done));
      for (let i = 1; i < runs.length; i++) {
        expect(runs[i]!.start, `${source} run ${i} (pid ${runs[i]!.pid}) starts after run ${i - 1} (pid ${runs[i - 1]!.pid}) ended`).toBeGreaterThanOrEqual(endOf(runs[i - 1]!));
        // after a run that was not killed, the source is due everyMs after its start
        if (runs[i - 1] !== killed) expect(runs[i]!.at - runs[i - 1]!.at, `${source} runs ${i - 1} and ${i}`).toBeGreaterThanOrEqual(EVERY_MS);
      }
      // about once per everyMs over the time it ran: far from once per process
      const span = runs.at(-1)!.at - runs[0]!.at;
      const expected = span / EVERY_MS + 1;
      expect(runs.length).toBeLessThanOrEqual(Math.floor(expected) + (source === 'slow' ? 1 : 0));
      expect(runs.length).toBeGreaterThanOrEqual(Math.floor(expected / 2));
      // no two runs of a source share an instant
      expect(new Set(runs.map((r) => r.at)).size).toBe(runs.length);
    }
  });

  it('has every snapshot at the instant of a written run, every written run committed, each snapshot holding the sources as they answered', async () => {
    const expected = new Set<string>();
    const okAt = new Map<string, Set<number>>(SOURCES.map((s) => [s, new Set(okWrites(s).map((w) => w.at))]));
    for (const w of writes) if (w.ok) for (const ipoId of w.combined) expected.add(`${ipoId}@${w.at}`);
    const { rows } = await db.client.query(`SELECT ipo_id, ts::float8 AS ts, sources FROM "${db.schema}".snapshots ORDER BY ts, ipo_id`);
    const snapshots = rows as Array<{ ipo_id: string; ts: number; sources: Array<{ name: string; paise: number }> }>;
    expect(new Set(snapshots.map((s) => `${s.ipo_id}@${s.ts}`))).toEqual(expected);
    // every run changed every IPO (the prices move each second): one snapshot per IPO per written run
    const runInstants = new Set(writes.filter((w) => w.ok).map((w) => w.at));
    expect(snapshots.length).toBe(IPO_IDS.length * runInstants.size);
    for (const snapshot of snapshots) {
      const i = IPO_IDS.indexOf(snapshot.ipo_id as (typeof IPO_IDS)[number]) + 1;
      // The write that made it ended when the last of the runs at its instant was written.
      const madeBy = writes.filter((w) => w.ok && w.at === snapshot.ts && w.combined.includes(snapshot.ipo_id));
      const writtenBy = Math.max(...madeBy.map((w) => w.done));
      for (const entry of snapshot.sources) {
        // A source's entry is its answer of one of its written runs started before that write
        // ended. (Not necessarily before the snapshot's instant: a slow run's snapshot is at its
        // start, and combines the reports that quicker runs committed meanwhile.)
        const candidates = [...okAt.get(entry.name)!].filter((at) => at <= writtenBy).map((at) => scriptedPrice(entry.name, i, at) * 100);
        expect(candidates, `${entry.name} in ${snapshot.ipo_id}@${snapshot.ts}`).toContain(entry.paise);
        // the entry of a source that ran at the snapshot's instant is that run's
        if (okAt.get(entry.name)!.has(snapshot.ts)) expect(entry.paise).toBe(scriptedPrice(entry.name, i, snapshot.ts) * 100);
      }
      expect(snapshot.sources.some((e) => okAt.get(e.name)!.has(snapshot.ts))).toBe(true);
    }
  });

  it('loses nothing the killed process committed; another process runs the source at its next due time; no lock is left held', async () => {
    const committed = writes.filter((w) => w.pid === killed.pid && w.ok);
    expect(committed.length).toBeGreaterThan(0);
    const { rows } = await db.client.query(`SELECT ipo_id || '@' || ts AS key FROM "${db.schema}".snapshots`);
    const stored = new Set((rows as Array<{ key: string }>).map((r) => r.key));
    for (const w of committed) for (const ipoId of w.combined) expect(stored.has(`${ipoId}@${w.at}`), `${ipoId}@${w.at}`).toBe(true);
    // the next run of the slow source: in a survivor, within 2 x everyMs of the kill
    const next = collects.filter((c) => c.source === 'slow' && c.start >= killAt).sort((a, b) => a.start - b.start)[0];
    expect(next).toBeDefined();
    expect(next!.pid).not.toBe(killed.pid);
    expect(next!.start - killAt).toBeLessThanOrEqual(2 * EVERY_MS);
    expect(okWrites('slow').some((w) => w.at === next!.at)).toBe(true);
    // the killed process's sessions ended, and with them its locks; the others, stopped with
    // their sessions still open, hold none
    expect(victimBackendsAfterKill).toBe(0);
    expect(holdersAtEnd).toEqual([]);
    // and then closed their pools (a connection kept for a lock would keep pool.end() waiting)
    expect(survivorExits).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  });

  it('shares the state: sourceStatuses in another process tells each source as the runs wrote it', async () => {
    const store = postgresStore({ client: db.client, schema: db.schema });
    const statuses = await sourceStatuses(store, SOURCES, { now: new Date(stopAt) });
    await store.close?.();
    expect(statuses).toEqual(
      SOURCES.map((name) => {
        const written = okWrites(name);
        const last = written.at(-1)!;
        return {
          name,
          lastRunAt: toIsoUtc(last.at),
          lastSuccessAt: toIsoUtc(last.at),
          lastError: null,
          // every snapshot combined after its runs, counted across the processes
          records: written.reduce((n, w) => n + w.combined.length, 0),
          staleReports: 0,
          nextRunAt: toIsoUtc(last.at + EVERY_MS),
          running: false,
        };
      }),
    );
    for (const s of statuses) expect(stopAt - Date.parse(s.lastSuccessAt!)).toBeLessThan(2 * EVERY_MS + SLOW_MS + 1_000);
    // the reports each source keeps are its last written run's
    const reports = await postgresStore({ client: db.client, schema: db.schema }).sourceReports(SOURCES);
    expect(reports).toEqual(
      SOURCES.flatMap((source) => {
        const last = okWrites(source).at(-1)!;
        return IPO_IDS.map((ipoId, i) => ({ source, ipoId, paise: scriptedPrice(source, i + 1, last.at) * 100, at: last.at }));
      }),
    );
  });
});
