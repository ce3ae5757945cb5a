/**
 * The collector phase of `npm run faults` (issue #32, docs/spec.md#sources): two collector
 * processes (scripts/faults-collector-app.ts, each with its own pg.Pool and postgresStore)
 * run the same five sources on one schema, sources that time out, fail, answer junk or
 * answer refused data (beside reports at a marker price that must never be written), while,
 * `cycles` times, a collector is killed with kill -9 in the middle of a run and replaced,
 * and the database is stopped and started again. Then every source answers valid data for a
 * while, the collectors stop, and it checks what the database holds against what the
 * processes told of every run:
 *
 * 1. no snapshot or stored report holds the marker price (nothing from a refused answer);
 * 2. every run whose `writeSourceRun` resolved ok left, at its instant, a snapshot of each
 *    IPO whose report it changed holding that source's price (a write that threw, maybe at
 *    COMMIT, or that a kill cut, may or may not have committed: it is not counted);
 * 3. every snapshot is at the instant of a write some process began (none from elsewhere);
 * 4. runs of one source never overlap across the processes (collect calls, by wall clock; a
 *    killed process's run ends at its kill);
 * 5. no two writes of one source share an instant (no snapshot written twice);
 * 6. after the outages every source has succeeded again by itself, and stopping the collectors
 *    records no failure (a run ended by a stop is none);
 * 7. no collector process ended but those killed (an unhandled rejection ends one, exit 70),
 *    and those left stop cleanly on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { importDataset } from '@ipokit/core';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import type { CollectorAppEvent, Mood } from './faults-collector-app.js';

/** What the phase needs of the database: where it is, and how to take it away and give it back. */
export interface CollectorPhaseDatabase {
  url: string;
  down(kind: number): Promise<void>;
  up(): Promise<void>;
}

/** Options of {@link collectorOutages}. */
export interface CollectorPhaseOptions {
  /** How many times a collector is killed and the database stopped. */
  cycles: number;
  /** How the database is stopped (`restart` or `proxy`), for the summary. */
  mode: string;
}

const SCHEMA = 'ipokit_faults_collector';
const APP = fileURLToPath(new URL('./faults-collector-app.ts', import.meta.url));
/** The IPOs the sources report (stored before the collectors start). */
const IPO_COUNT = 20;
/** A price that only refused answers carry. */
const MARKER_PRICE = 7777.77;
const EVERY_MS = 1_000;
const TIMEOUT_MS = 1_500;
/** How long every source answers valid data at the end: each must have succeeded again by then. */
const CALM_MS = 6_000;
const SOURCES = ['steady', 'slow', 'flaky', 'junk', 'refused'] as const;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A collector process and what it told. */
interface CollectorProcess {
  name: string;
  child: ChildProcess;
  /** Killed on purpose (kill -9): its end is no crash; `killedAt` ends its open runs. */
  killed: boolean;
  killedAt: number | null;
  /** Stopped at the end (SIGTERM): it must exit 0. */
  stopping: boolean;
  exitedAt: number | null;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its collect calls not ended yet, by id. */
  open: Map<number, { source: string; start: number; mood: Mood }>;
}

interface Run {
  process: string;
  source: string;
  start: number;
  /** Null until it ends (a killed process's open run ends at its kill). */
  end: number | null;
  mood: Mood;
  outcome: string | null;
}

interface Write {
  process: string;
  source: string;
  at: number;
  result: 'ok' | 'conflicts' | 'threw' | null;
  changed: string[];
  reports: Array<{ ipoId: string; paise: number | null }>;
}

/**
 * Runs the collector phase on `db` (a throwaway cluster it stops and starts, or a proxy it
 * cuts); resolves to what went wrong (one line each) and the lines of the summary.
 *
 * @example
 * ```ts
 * const { problems, lines } = await collectorOutages(db, { cycles: 3, mode: 'restart' });
 * ```
 */
export async function collectorOutages(db: CollectorPhaseDatabase, options: CollectorPhaseOptions): Promise<{ problems: string[]; lines: string[] }> {
  const began = performance.now();
  const problems: string[] = [];
  const pool = new pg.Pool({ connectionString: db.url, max: 3, connectionTimeoutMillis: 1_000 });
  pool.on('error', () => undefined);
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(pool, { schema: SCHEMA });
  const ipoIds = Array.from({ length: IPO_COUNT }, (_, i) => `colf${String(i + 1).padStart(2, '0')}`);
  {
    const store = postgresStore({ client: pool, schema: SCHEMA, dataCacheTtlMs: 0 });
    await importDataset(store, { ipos: ipoIds.map((id, i) => ({ id, name: `Collector faults ${i + 1}`, slug: `collector-faults-${i + 1}`, type: 'EQ' })) });
    await store.close?.();
  }

  const runs: Run[] = [];
  const runsById = new Map<string, Run>();
  const writes: Write[] = [];
  const writesByKey = new Map<string, Write[]>();
  const errors = new Map<string, number>();
  /** Why runs failed (other than refused or cut), and how often. */
  const failures = new Map<string, number>();
  const count = (key: string): void => void errors.set(key, (errors.get(key) ?? 0) + 1);
  const onEvent = (proc: CollectorProcess, e: CollectorAppEvent): void => {
    switch (e.type) {
      case 'collect-start': {
        const run: Run = { process: e.process, source: e.source, start: e.start, end: null, mood: e.mood, outcome: null };
        runs.push(run);
        runsById.set(`${e.process} ${e.id}`, run);
        proc.open.set(e.id, { source: e.source, start: e.start, mood: e.mood });
        break;
      }
      case 'collect-end': {
        const run = runsById.get(`${e.process} ${e.id}`);
        if (run !== undefined) {
          run.end = e.end;
          run.outcome = e.outcome;
        }
        proc.open.delete(e.id);
        break;
      }
      case 'write-start': {
        const w: Write = { process: e.process, source: e.source, at: e.at, result: null, changed: [], reports: [] };
        writes.push(w);
        const key = `${e.source} ${e.at}`;
        writesByKey.set(key, [...(writesByKey.get(key) ?? []), w]);
        break;
      }
      case 'write-end': {
        const w = writesByKey.get(`${e.source} ${e.at}`)?.find((x) => x.process === e.process && x.result === null);
        if (w === undefined) problems.push(`collector ${e.process}: a write of ${e.source} at ${e.at} ended that was not begun`);
        else Object.assign(w, { result: e.result, changed: e.changed, reports: e.reports });
        break;
      }
      case 'run-error':
        count(`${e.source} ${e.kind}`);
        if (e.kind === 'failed') failures.set(e.message, (failures.get(e.message) ?? 0) + 1);
        break;
      case 'bye':
        break;
    }
  };

  let named = 0;
  const procs: CollectorProcess[] = [];
  const live = (): CollectorProcess[] => procs.filter((p) => !p.killed && !p.stopping);
  const start = async (): Promise<CollectorProcess> => {
    const p = await startCollectorProcess(db.url, `c${++named}`, ipoIds, problems, onEvent);
    procs.push(p);
    return p;
  };
  for (let i = 0; i < 2; i++) await start();
  console.log(
    `collector: 2 collector processes, sources ${SOURCES.join(', ')} every ${EVERY_MS} ms (timeout ${TIMEOUT_MS} ms) over ${IPO_COUNT} IPOs; ` +
      `${options.cycles} cycles of kill -9 and database stop`,
  );

  const outages: Array<{ down: number; up: number }> = [];
  let kills = 0;
  let midRun = 0;
  await sleep(2_000);
  for (let c = 0; c < options.cycles; c++) {
    // (a) kill -9 a collector, in the middle of a run if it has one within 3 s, and start another
    const candidates = live();
    const victim = candidates[c % candidates.length]!;
    const waitFrom = performance.now();
    while (victim.open.size === 0 && performance.now() - waitFrom < 3_000) await sleep(5);
    const inRun = [...victim.open.values()].map((r) => r.source);
    victim.killed = true;
    victim.killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exit;
    kills++;
    if (inRun.length > 0) midRun++;
    const replacement = await start();
    await sleep(1_500 + Math.round(Math.random() * 1_000));
    // (b) the database stopped, and started again
    const down = Date.now();
    await db.down(c);
    await sleep(1_000 + Math.round(Math.random() * 1_000));
    await db.up();
    for (;;) {
      if (await pool.query('SELECT 1').then(() => true, () => false)) break;
      if (Date.now() - down > 60_000) throw new Error(`collector cycle ${c + 1}: the database does not answer 60 s after it was started again`);
      await sleep(50);
    }
    outages.push({ down, up: Date.now() });
    console.log(
      `collector cycle ${c + 1}/${options.cycles}: killed ${victim.name} ${inRun.length > 0 ? `in a run of ${inRun.join(', ')}` : 'between runs'}, started ${replacement.name}; ` +
        `database down ${outages.at(-1)!.up - down} ms; ${writes.length} writes so far`,
    );
    await sleep(1_500 + Math.round(Math.random() * 1_000));
  }

  // Every source answers valid data from now on: each must succeed again by itself.
  const calmFrom = Date.now();
  for (const p of live()) p.child.send('calm');
  await sleep(CALM_MS);

  // (each source's state once it has recovered, before the stop)
  const recovered = await sourceStates(pool);

  // The collectors left stop cleanly (SIGTERM: the runs under way end, exit 0).
  const stopping = live();
  for (const p of stopping) {
    p.stopping = true;
    p.child.kill('SIGTERM');
  }
  for (const p of stopping) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([p.exit, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 20_000)))]);
    clearTimeout(timer);
    if (ended === null) {
      p.child.kill('SIGKILL');
      problems.push(`collector ${p.name} did not stop within 20 s of SIGTERM`);
    } else if (ended.code !== 0) problems.push(`collector ${p.name} exited ${ended.code ?? ended.signal} on SIGTERM`);
  }

  // What the database holds.
  const snapshots = (
    await pool.query<{ ipo_id: string; ts: number; sources: string }>(`SELECT ipo_id, ts::float8 AS ts, sources::text AS sources FROM ${SCHEMA}.snapshots`)
  ).rows.map((r) => ({ ipoId: r.ipo_id, ts: Number(r.ts), sources: JSON.parse(r.sources) as Array<{ name: string; paise: number }> }));
  const snapshotAt = new Map(snapshots.map((s) => [`${s.ipoId} ${s.ts}`, s]));
  const markerPaise = Math.round(MARKER_PRICE * 100);
  const reportsWithMarker = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.source_reports WHERE paise = $1`, [markerPaise])).rows[0]!.n;
  const stopped = await sourceStates(pool);

  // 1. nothing from a refused answer
  const withMarker = snapshots.filter((s) => s.sources.some((x) => x.paise === markerPaise)).length;
  if (withMarker > 0) problems.push(`collector: ${withMarker} snapshots hold the marker price ${MARKER_PRICE} of a refused answer`);
  if (reportsWithMarker > 0) problems.push(`collector: ${reportsWithMarker} stored reports hold the marker price ${MARKER_PRICE} of a refused answer`);

  // 2. nothing lost from an accepted answer
  let checked = 0;
  let lost = 0;
  const lostExamples: string[] = [];
  for (const w of writes) {
    if (w.result !== 'ok') continue;
    const paiseOf = new Map(w.reports.map((r) => [r.ipoId, r.paise]));
    for (const ipoId of w.changed) {
      checked++;
      const s = snapshotAt.get(`${ipoId} ${w.at}`);
      const paise = paiseOf.get(ipoId);
      const held = s?.sources.find((x) => x.name === w.source);
      const ok = s !== undefined && (paise === null ? held === undefined : held?.paise === paise);
      if (!ok) {
        lost++;
        if (lostExamples.length < 3) lostExamples.push(`${w.source} at ${new Date(w.at).toISOString()} ${ipoId}: ${s === undefined ? 'no snapshot' : `sources ${JSON.stringify(s.sources)}`}`);
      }
    }
  }
  if (lost > 0) problems.push(`collector: ${lost} of ${checked} changed reports of runs written ok are not in the snapshot at the run's instant (${lostExamples.join('; ')})`);

  // 3. every snapshot at the instant of a write that began
  const writeAts = new Set(writes.map((w) => w.at));
  const stray = snapshots.filter((s) => !writeAts.has(s.ts)).length;
  if (stray > 0) problems.push(`collector: ${stray} snapshots are at no instant a collector began a write at`);

  // 4. one run of a source at a time
  const endOf = (r: Run): number => r.end ?? procs.find((p) => p.name === r.process)?.killedAt ?? procs.find((p) => p.name === r.process)?.exitedAt ?? Date.now();
  let overlaps = 0;
  let overlapsInOutage = 0;
  const overlapExamples: string[] = [];
  for (const name of SOURCES) {
    const of = runs.filter((r) => r.source === name).sort((a, b) => a.start - b.start);
    for (let i = 0; i < of.length; i++) {
      for (let j = i + 1; j < of.length && of[j]!.start < endOf(of[i]!); j++) {
        const a = of[i]!;
        const b = of[j]!;
        // The lock is a session's: an outage ends it under a run that goes on (docs/spec.md#sources).
        if (outages.some((o) => o.down < endOf(a) && o.up > a.start)) {
          overlapsInOutage++;
          continue;
        }
        overlaps++;
        if (overlapExamples.length < 3) overlapExamples.push(`${name}: ${a.process} ${a.start}-${endOf(a)} and ${b.process} ${b.start}-${endOf(b)}`);
      }
    }
  }
  if (overlaps > 0) problems.push(`collector: ${overlaps} pairs of runs of one source overlapped (${overlapExamples.join('; ')})`);

  // 5. no two writes of one source at one instant
  const shared = [...writesByKey.values()].filter((ws) => ws.length > 1).length;
  if (shared > 0) problems.push(`collector: ${shared} instants hold two writes of one source`);

  // 6. recovered by itself; and a stop is no failure (docs/spec.md#sources: "a run ended by a stop is not recorded as a failure")
  let notRecovered = 0;
  let failedByStop = 0;
  for (const name of SOURCES) {
    const again = writes.some((w) => w.source === name && w.result === 'ok' && w.at >= calmFrom);
    const before = recovered.get(name);
    const after = stopped.get(name);
    if (!again || before === undefined || before.lastError !== null) {
      notRecovered++;
      problems.push(`collector: ${name} did not succeed again within ${CALM_MS / 1000} s of the outages' end (${before?.lastError ?? 'no error'})`);
    } else if (after === undefined || after.failures > before.failures || after.lastError !== null) {
      failedByStop++;
      problems.push(`collector: stopping the collectors recorded a failure of ${name}: ${JSON.stringify(after?.lastError ?? 'no state stored')}`);
    }
  }

  if (writes.filter((w) => w.result === 'ok').length === 0) problems.push('collector: no run was written, so nothing was tested');
  for (const name of ['refused', 'junk']) if ((errors.get(`${name} refused`) ?? 0) === 0) problems.push(`collector: no answer of ${name} was refused, so that was not tested`);
  if ((errors.get('slow cut') ?? 0) === 0) problems.push('collector: no run of slow was cut, so that was not tested');

  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
  await pool.end();

  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  const downs = outages.map((o) => o.up - o.down).sort((a, b) => a - b);
  const perSource = SOURCES.map((name) => {
    const ok = writes.filter((w) => w.source === name && w.result === 'ok').length;
    const threw = writes.filter((w) => w.source === name && w.result !== 'ok').length;
    const collects = runs.filter((r) => r.source === name);
    const odd = collects.filter((r) => r.mood !== 'valid').length;
    return `${name} ${collects.length} collects (${odd} ${name === 'steady' ? 'meant to fail' : `meant ${collects.find((r) => r.mood !== 'valid')?.mood ?? 'to misbehave'}`}): ${ok} ok, ${errors.get(`${name} refused`) ?? 0} refused, ${errors.get(`${name} cut`) ?? 0} cut, ${errors.get(`${name} failed`) ?? 0} failed (${threw} writes threw or ended with their process)`;
  });
  return {
    problems,
    lines: [
      `collector:          ${seconds} s; ${kills} collectors killed with kill -9 (${midRun} in the middle of a run) and replaced; ` +
        `${outages.length} database stops (${options.mode}), down a median ${downs[downs.length >> 1] ?? 0} ms`,
      `collector runs:     ${perSource.join('; ')}`,
      `collector checks:   ${snapshots.length} snapshots; ${checked} changed reports of runs written ok, ${lost} not in the database; ` +
        `marker price in snapshots ${withMarker}, in reports ${reportsWithMarker}; snapshots at no write's instant ${stray}; ` +
        `overlapping runs of a source ${overlaps} (${overlapsInOutage} across an outage, whose lock went with its connection); ` +
        `instants with two writes of a source ${shared}; sources not recovered ${notRecovered}; failures recorded by the stop ${failedByStop}`,
      `collector failures: ${[...failures].sort((a, b) => b[1] - a[1]).map(([message, n]) => `${n} x ${message.slice(0, 100)}`).join('; ') || 'none'}`,
    ],
  };
}

/**
 * Starts a collector process on the phase's schema; any end of it that the phase did not ask
 * for (a crash, an unhandled rejection: exit 70) is a problem.
 */
async function startCollectorProcess(
  url: string,
  name: string,
  ipoIds: readonly string[],
  problems: string[],
  onEvent: (proc: CollectorProcess, e: CollectorAppEvent) => void,
): Promise<CollectorProcess> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', APP], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      IPOKIT_SCHEMA: SCHEMA,
      IPOKIT_COLLECTOR_NAME: name,
      IPOKIT_IPO_IDS: ipoIds.join(','),
      IPOKIT_MARKER_PRICE: String(MARKER_PRICE),
      IPOKIT_EVERY_MS: String(EVERY_MS),
      IPOKIT_TIMEOUT_MS: String(TIMEOUT_MS),
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const proc: CollectorProcess = { name, child, killed: false, killedAt: null, stopping: false, exitedAt: null, exit, open: new Map() };
  child.on('message', (m) => onEvent(proc, m as CollectorAppEvent));
  void exit.then(({ code, signal }) => {
    proc.exitedAt = Date.now();
    if (!proc.killed && !proc.stopping) problems.push(`collector ${name} ended by itself (${code === null ? signal : `exit ${code}`})`);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
      exit.then(({ code, signal }) => Promise.reject(new Error(`collector ${name} exited (${code ?? signal}) before it was ready`))),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`collector ${name} not ready after 30 s`)), 30_000))),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return proc;
}

/** Each source's stored state: its last error and its failures since its last success. */
async function sourceStates(pool: pg.Pool): Promise<Map<string, { lastError: string | null; failures: number }>> {
  const { rows } = await pool.query<{ source: string; last_error: string | null; failures: number }>(`SELECT source, last_error, failures FROM ${SCHEMA}.source_states`);
  return new Map(rows.map((r) => [r.source, { lastError: r.last_error, failures: Number(r.failures) }]));
}
