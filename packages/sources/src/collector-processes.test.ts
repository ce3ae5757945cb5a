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

// The same collector in several processes on one PostgreSQL store (docs/spec.md#sources,
// "Shared state"), with real timers: each source runs in one process at a time and about
// once per everyMs in all, every snapshot is at the instant of a run that was written, a
// process killed (kill -9) in the middle of a run, or while it hangs inside its write's
// transaction, loses nothing it committed and another takes its sources over at their next
// due time, and the shared state tells it all. Real PostgreSQL only: PGlite lives in one
// process and cannot share locks across processes.

const url = process.env.DATABASE_URL;
const APP = fileURLToPath(new URL('./test-collector-app.ts', import.meta.url));
const SOURCES = ['gmp-a', 'gmp-b', 'slow'];
const EVERY_MS = 1_000;
const SLOW_MS = 700;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection naming `what` once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

interface App {
  /** Its connections' application_name. */
  name: string;
  child: ChildProcess;
  pid: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

type Collect = Extract<AppEvent, { type: 'collect-start' }> & { end: number | null; outcome: 'ok' | 'aborted' | 'killed' | null };
type Write = Extract<AppEvent, { type: 'write' }>;
type Exit = { code: number | null; signal: NodeJS.Signals | null } | 'still running';

/** Collector processes of test-collector-app.ts on one fresh schema, and what they told. */
interface Fleet {
  db: TestDatabase;
  apps: App[];
  /** Every collect call of every process, in the order their starts arrived. */
  collects: Collect[];
  writes: Write[];
  errors: Array<Extract<AppEvent, { type: 'error' }>>;
  /** When each killed process (by pid) was sent its kill. */
  killedAt: Map<number, number>;
  start(i: number, env?: Record<string, string>): Promise<App>;
  /** The next event that `match` accepts. */
  next<E extends AppEvent>(match: (event: AppEvent) => event is E, ms: number, what: string): Promise<E>;
  /** Kills `app` with SIGKILL and waits until PostgreSQL has ended its sessions; resolves to when the kill was sent and how many sessions are left. */
  kill(app: App): Promise<{ killAt: number; sessionsLeft: number }>;
  /**
   * Stops `apps` (SIGTERM: their collectors stop), then, their pools still open, reads which
   * source locks are held; then lets them close their pools and exit.
   */
  stop(apps: App[]): Promise<{ stopAt: number; holders: Array<{ source: string; app: string }>; exits: Exit[] }>;
  /** The runs of a source that were written (their write resolved with no conflict), by instant. */
  okWrites(source: string): Write[];
  close(): Promise<void>;
}

async function openFleet(name: string): Promise<Fleet> {
  const db = await openTestDatabase(name);
  const store = await db.emptyStore();
  await importDataset(store, ipoDataset(IPO_IDS.length), { now: () => new Date('2026-11-01T00:00:00Z') });
  await store.close?.();
  const listeners = new Set<(event: AppEvent) => void>();
  const fleet: Fleet = {
    db,
    apps: [],
    collects: [],
    writes: [],
    errors: [],
    killedAt: new Map(),
    async start(i, env = {}) {
      const appName = `${db.schema}-app${i}`.slice(-63);
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', APP], {
        env: { ...process.env, IPOKIT_COLLECTOR_APP: '1', IPOKIT_SCHEMA: db.schema, IPOKIT_APP_NAME: appName, IPOKIT_EVERY_MS: String(EVERY_MS), IPOKIT_SLOW_MS: String(SLOW_MS), ...env },
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      });
      const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      child.on('message', (m) => {
        const event = m as AppEvent;
        if (event.type === 'collect-start') fleet.collects.push({ ...event, end: null, outcome: null });
        else if (event.type === 'collect-end') {
          const c = fleet.collects.find((x) => x.pid === event.pid && x.source === event.source && x.at === event.at);
          if (c !== undefined) Object.assign(c, { end: event.end, outcome: event.outcome });
        } else if (event.type === 'write') fleet.writes.push(event);
        else if (event.type === 'error') fleet.errors.push(event);
        for (const l of listeners) l(event);
      });
      const app: App = { name: appName, child, pid: child.pid!, exit };
      fleet.apps.push(app);
      await Promise.race([
        within(new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)), 30_000, `collector app ${i} starting`),
        exit.then(({ code, signal }) => Promise.reject(new Error(`collector app ${i} exited (${code ?? signal}) before it was ready`))),
      ]);
      return app;
    },
    next<E extends AppEvent>(match: (event: AppEvent) => event is E, ms: number, what: string): Promise<E> {
      let listener!: (event: AppEvent) => void;
      const found = new Promise<E>((resolve) => {
        listener = (event) => {
          if (match(event)) resolve(event);
        };
        listeners.add(listener);
      });
      return within(found, ms, what).finally(() => listeners.delete(listener));
    },
    async kill(app) {
      const killAt = Date.now();
      fleet.killedAt.set(app.pid, killAt);
      app.child.kill('SIGKILL');
      await within(app.exit, 10_000, 'the killed process exiting');
      for (const c of fleet.collects) if (c.pid === app.pid && c.end === null) Object.assign(c, { end: killAt, outcome: 'killed' });
      // Its connections go with it: PostgreSQL ends their sessions, and their locks.
      const sessions = async (): Promise<number> => {
        const { rows } = await db.client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app.name]);
        return (rows as Array<{ n: number }>)[0]!.n;
      };
      for (let i = 0; i < 200 && (await sessions()) > 0; i++) await sleep(25);
      return { killAt, sessionsLeft: await sessions() };
    },
    async stop(apps) {
      await Promise.all(
        apps.map((a) => {
          const stopped = fleet.next((e): e is AppEvent => e.type === 'stopped' && e.pid === a.pid, 10_000, `stopping the collector of ${a.name}`);
          a.child.kill('SIGTERM');
          return stopped;
        }),
      );
      const stopAt = Date.now();
      const holders: Array<{ source: string; app: string }> = [];
      for (const source of SOURCES) {
        const [k1, k2] = advisoryKey(`"${db.schema}".source.${source}`);
        const { rows } = await db.client.query(
          `SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
             AND l.classid::bigint = (($1::bigint + 4294967296) % 4294967296) AND l.objid::bigint = (($2::bigint + 4294967296) % 4294967296)`,
          [k1, k2],
        );
        for (const r of rows as Array<{ app: string }>) holders.push({ source, app: r.app });
      }
      for (const a of apps) a.child.send('exit');
      // (a connection kept for a lock would keep pool.end() waiting)
      const exits = await Promise.all(apps.map((a) => Promise.race([a.exit, sleep(10_000).then(() => 'still running' as const)])));
      return { stopAt, holders, exits };
    },
    okWrites(source) {
      return fleet.writes.filter((w) => w.source === source && w.ok).sort((a, b) => a.at - b.at);
    },
    async close() {
      for (const a of fleet.apps) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
      await Promise.all(fleet.apps.map((a) => a.exit));
      await db.close();
    },
  };
  return fleet;
}

/** The runs of killed processes that wrote nothing: the run under way when the process was killed. */
function killedRuns(fleet: Fleet): Set<Collect> {
  return new Set(fleet.collects.filter((c) => fleet.killedAt.has(c.pid) && !fleet.writes.some((w) => w.pid === c.pid && w.source === c.source && w.at === c.at)));
}

/** Each source ran in one process at a time, at least everyMs apart (but after a killed run), once per instant. */
function expectOneAtATime(fleet: Fleet): void {
  const killed = killedRuns(fleet);
  for (const source of SOURCES) {
    const runs = fleet.collects.filter((c) => c.source === source).sort((a, b) => a.start - b.start);
    // A run holds the source from its collect call to the end of its write, or to its process's kill.
    const endOf = (c: Collect): number =>
      killed.has(c) ? fleet.killedAt.get(c.pid)! : Math.max(c.end ?? Infinity, ...fleet.writes.filter((w) => w.pid === c.pid && w.source === source && w.at === c.at).map((w) => w.done));
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]!.start, `${source} run ${i} (pid ${runs[i]!.pid}) starts after run ${i - 1} (pid ${runs[i - 1]!.pid}) ended`).toBeGreaterThanOrEqual(endOf(runs[i - 1]!));
      // after a run that was not killed, the source is due everyMs after its start
      if (!killed.has(runs[i - 1]!)) expect(runs[i]!.at - runs[i - 1]!.at, `${source} runs ${i - 1} and ${i}`).toBeGreaterThanOrEqual(EVERY_MS);
    }
    // about once per everyMs over the time it ran: far from once per process
    const span = runs.at(-1)!.at - runs[0]!.at;
    const expected = span / EVERY_MS + 1;
    expect(runs.length, `${source} runs in ${span} ms`).toBeLessThanOrEqual(Math.floor(expected) + runs.filter((r) => killed.has(r)).length);
    expect(runs.length, `${source} runs in ${span} ms`).toBeGreaterThanOrEqual(Math.floor(expected / 2));
    // no two runs of a source share an instant
    expect(new Set(runs.map((r) => r.at)).size).toBe(runs.length);
  }
}

/**
 * The snapshots stored are exactly those of the written runs (every one of them committed,
 * nothing else), each holding every source's answer of one of its written runs.
 */
async function expectSnapshotsOfWrittenRuns(fleet: Fleet): Promise<void> {
  const { writes, db } = fleet;
  const expected = new Set<string>();
  const okAt = new Map<string, Set<number>>(SOURCES.map((s) => [s, new Set(fleet.okWrites(s).map((w) => w.at))]));
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
}

/** `sourceStatuses` from this process, and the stored reports, tell each source as its written runs did. */
async function expectSharedState(fleet: Fleet, stopAt: number): Promise<void> {
  const store = postgresStore({ client: fleet.db.client, schema: fleet.db.schema });
  const statuses = await sourceStatuses(store, SOURCES, { now: new Date(stopAt) });
  expect(statuses).toEqual(
    SOURCES.map((name) => {
      const written = fleet.okWrites(name);
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
  for (const s of statuses) expect(stopAt - Date.parse(s.lastSuccessAt!)).toBeLessThan(4 * EVERY_MS + SLOW_MS + 1_000);
  // the reports each source keeps are its last written run's
  expect(await store.sourceReports(SOURCES)).toEqual(
    SOURCES.flatMap((source) => {
      const last = fleet.okWrites(source).at(-1)!;
      return IPO_IDS.map((ipoId, i) => ({ source, ipoId, paise: scriptedPrice(source, i + 1, last.at) * 100, at: last.at }));
    }),
  );
  await store.close?.();
}

/** Every snapshot the process `pid` wrote is stored. */
async function expectCommittedKept(fleet: Fleet, pid: number): Promise<void> {
  const committed = fleet.writes.filter((w) => w.pid === pid && w.ok);
  expect(committed.length).toBeGreaterThan(0);
  const { rows } = await fleet.db.client.query(`SELECT ipo_id || '@' || ts AS key FROM "${fleet.db.schema}".snapshots`);
  const stored = new Set((rows as Array<{ key: string }>).map((r) => r.key));
  for (const w of committed) for (const ipoId of w.combined) expect(stored.has(`${ipoId}@${w.at}`), `${ipoId}@${w.at}`).toBe(true);
}

const isCollectStart = (source: string) => (e: AppEvent): e is Extract<AppEvent, { type: 'collect-start' }> => e.type === 'collect-start' && e.source === source;

if (url) describe('the collector in several processes on one PostgreSQL store', severalProcesses);
else it.skip('the collector in several processes: needs PostgreSQL (DATABASE_URL); PGlite cannot share locks across processes', () => undefined);

function severalProcesses(): void {
  describe('three processes for about ten seconds, one killed (kill -9) in the middle of a slow run', () => {
    let fleet: Fleet;
    let killed!: Collect;
    let kill!: { killAt: number; sessionsLeft: number };
    let stop!: Awaited<ReturnType<Fleet['stop']>>;

    beforeAll(async () => {
      fleet = await openFleet('collector_procs');
      await Promise.all([0, 1, 2].map((i) => fleet.start(i)));
      await sleep(4_000);
      // The next run of the slow source, wherever it starts: its process is killed mid-run.
      const started = await fleet.next(isCollectStart('slow'), 10 * EVERY_MS, 'waiting for a run of the slow source');
      await sleep(150);
      killed = fleet.collects.find((c) => c.pid === started.pid && c.source === 'slow' && c.at === started.at)!;
      const victim = fleet.apps.find((a) => a.pid === started.pid)!;
      kill = await fleet.kill(victim);
      await sleep(5_000);
      stop = await fleet.stop(fleet.apps.filter((a) => a !== victim));
    }, 90_000);

    afterAll(async () => {
      await fleet?.close();
    });

    it('ran every source in more than one process, with no error, and killed the slow run before its answer', () => {
      expect(fleet.errors).toEqual([]);
      expect(fleet.writes.filter((w) => !w.ok)).toEqual([]);
      for (const source of SOURCES) expect(fleet.okWrites(source).length).toBeGreaterThan(3);
      // the processes shared the work
      expect(new Set(fleet.collects.map((c) => c.pid)).size).toBeGreaterThan(1);
      expect(killed.outcome).toBe('killed');
      expect(fleet.writes.some((w) => w.pid === killed.pid && w.source === 'slow' && w.at === killed.at)).toBe(false);
    });

    it('runs each source in one process at a time, about once per everyMs in all (not once per process)', () => {
      expect([...killedRuns(fleet)]).toContain(killed);
      expectOneAtATime(fleet);
    });

    it('has every snapshot at the instant of a written run, every written run committed, each snapshot holding the sources as they answered', async () => {
      await expectSnapshotsOfWrittenRuns(fleet);
    });

    it('loses nothing the killed process committed; another process runs the source at its next due time; no lock is left held', async () => {
      await expectCommittedKept(fleet, killed.pid);
      // the next run of the slow source: in a survivor, soon after the kill (due within everyMs)
      const next = fleet.collects.filter((c) => c.source === 'slow' && c.start >= kill.killAt).sort((a, b) => a.start - b.start)[0];
      expect(next).toBeDefined();
      expect(next!.pid).not.toBe(killed.pid);
      expect(next!.start - kill.killAt).toBeLessThanOrEqual(4 * EVERY_MS); // due again within everyMs; room for a loaded CI machine
      expect(fleet.okWrites('slow').some((w) => w.at === next!.at)).toBe(true);
      // the killed process's sessions ended, and with them its locks; the others, stopped with
      // their sessions still open, hold none, and then closed their pools
      expect(kill.sessionsLeft).toBe(0);
      expect(stop.holders).toEqual([]);
      expect(stop.exits).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
    });

    it('shares the state: sourceStatuses in another process tells each source as the runs wrote it', async () => {
      await expectSharedState(fleet, stop.stopAt);
    });
  });

  describe('two processes, one hanging inside its write (holding the data lock) and killed there', () => {
    let fleet: Fleet;
    let stall!: Extract<AppEvent, { type: 'stalling' }>;
    let stallState: string | null = null;
    let kill!: { killAt: number; sessionsLeft: number };
    let stop!: Awaited<ReturnType<Fleet['stop']>>;

    beforeAll(async () => {
      fleet = await openFleet('collector_stall');
      // The first starts alone and runs every source; its first write 2.5 s after its start hangs.
      const stalling = fleet.next((e): e is Extract<AppEvent, { type: 'stalling' }> => e.type === 'stalling', 30_000, 'waiting for the write that hangs');
      const hanging = await fleet.start(0, { IPOKIT_STALL_AFTER_MS: '2500' });
      await fleet.start(1);
      stall = await stalling;
      // PostgreSQL sees its transaction open and idle: the process hangs inside it.
      for (let i = 0; i < 100 && stallState !== 'idle in transaction'; i++) {
        await sleep(20);
        const { rows } = await fleet.db.client.query("SELECT state FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'", [hanging.name]);
        stallState = (rows as Array<{ state: string }>)[0]?.state ?? null;
      }
      await sleep(300);
      kill = await fleet.kill(hanging);
      await sleep(3_000);
      stop = await fleet.stop([fleet.apps[1]!]);
    }, 90_000);

    afterAll(async () => {
      await fleet?.close();
    });

    it('writes nothing of the hung run, keeps everything the killed process committed, and the other process takes over every source', async () => {
      expect(stallState).toBe('idle in transaction');
      expect(fleet.errors).toEqual([]);
      expect(fleet.writes.filter((w) => !w.ok)).toEqual([]);
      expect(fleet.writes.some((w) => w.pid === stall.pid && w.at === stall.at)).toBe(false);
      // its reports were not kept either
      const reports = await postgresStore({ client: fleet.db.client, schema: fleet.db.schema }).sourceReports([stall.source]);
      expect(reports.some((r) => r.at === stall.at)).toBe(false);
      await expectCommittedKept(fleet, stall.pid);
      await expectSnapshotsOfWrittenRuns(fleet);
      // the other process ran the hung run's source within 2 x everyMs of the kill, and every
      // source was written after it
      const survivor = fleet.apps[1]!.pid;
      const next = fleet.collects.filter((c) => c.source === stall.source && c.start >= kill.killAt).sort((a, b) => a.start - b.start)[0];
      expect(next?.pid).toBe(survivor);
      expect(next!.start - kill.killAt).toBeLessThanOrEqual(4 * EVERY_MS); // due again within everyMs; room for a loaded CI machine
      for (const source of SOURCES) expect(fleet.okWrites(source).some((w) => w.pid === survivor && w.at > stall.at)).toBe(true);
      expect(kill.sessionsLeft).toBe(0);
      expect(stop.holders).toEqual([]);
      expect(stop.exits).toEqual([{ code: 0, signal: null }]);
    });

    it('runs each source in one process at a time, and shares the state', async () => {
      expect([...killedRuns(fleet)].some((c) => c.source === stall.source && c.at === stall.at)).toBe(true);
      expectOneAtATime(fleet);
      await expectSharedState(fleet, stop.stopAt);
    });
  });
}
