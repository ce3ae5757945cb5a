import { isIpokitError, IpokitError } from '@ipokit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { startCollector, type Collector } from './collector.js';
import { ManualClock } from './test-clock.js';
import { closeTestDatabase, recordingStore, type Backend, type RecordingStore } from './test-store.js';
import type { Source, SourceAnswer, SourceRunContext } from './types.js';

const T0 = Date.parse('2026-11-24T04:00:00.000Z'); // 09:30 IST
const MIN = 60_000;
/** Every collector test runs on the memory store and on PostgreSQL (PGlite without DATABASE_URL). */
const BACKENDS: Backend[] = ['memory', 'postgres'];

afterAll(closeTestDatabase);

/** A source answering what `answer` gives for each run, recording each run's context. */
function scripted(name: string, everyMs: number, answer: (run: number, context: SourceRunContext) => SourceAnswer | Promise<SourceAnswer>): Source & { runs: SourceRunContext[] } {
  const runs: SourceRunContext[] = [];
  return {
    name,
    everyMs,
    runs,
    async collect(context) {
      runs.push(context);
      return answer(runs.length, context);
    },
  };
}

/**
 * Starts a collector on the manual clock and lets its first runs happen. `waiting` tells when
 * a source is waiting for the clock (a hanging run): the clock then need not wait for it.
 */
async function start(
  recording: RecordingStore,
  clock: ManualClock,
  sources: Source[],
  more: { staleAfterMs?: number; timeoutMs?: number; errors?: Array<{ err: unknown; source: string }>; waiting?: () => boolean } = {},
): Promise<Collector> {
  const collector = await startCollector(recording.store, {
    sources,
    now: clock.now,
    timers: clock,
    ...(more.staleAfterMs === undefined ? {} : { staleAfterMs: more.staleAfterMs }),
    ...(more.timeoutMs === undefined ? {} : { timeoutMs: more.timeoutMs }),
    onError: (err, source) => more.errors?.push({ err, source }),
  });
  // A run on PostgreSQL does real I/O: the clock waits for the collector to be idle.
  clock.idle = () => more.waiting?.() === true || !collector.status().some((s) => s.running);
  await clock.advance(0); // the first runs, due at start

  return collector;
}

describe('startCollector: options', () => {
  it.each([
    [{ name: '', everyMs: 60_000 }, /name must be 1 to 64/],
    [{ name: 'a b', everyMs: 60_000 }, /name must be 1 to 64/],
    [{ name: 'x'.repeat(65), everyMs: 60_000 }, /name must be 1 to 64/],
    [{ name: 'ok', everyMs: 999 }, /everyMs must be a whole number of milliseconds, at least 1000/],
    [{ name: 'ok', everyMs: 1.5e3 + 0.5 }, /everyMs/],
    [{ name: 'ok', everyMs: 60_000, timeoutMs: 0 }, /timeoutMs must be a positive number/],
  ])('refuses a bad source %#', async (bad, message) => {
    const { store } = await recordingStore();
    const source = { ...bad, collect: async () => ({}) } as Source;
    await expect(startCollector(store, { sources: [source] })).rejects.toThrow(message);
    await expect(startCollector(store, { sources: [source] })).rejects.toSatisfy((e) => isIpokitError(e, 'ERR:BADPARAM'));
  });

  it('refuses two sources of one name, and bad collector options', async () => {
    const { store } = await recordingStore();
    const a = { name: 'a', everyMs: 60_000, collect: async () => ({}) };
    await expect(startCollector(store, { sources: [a, { ...a }] })).rejects.toThrow(/"a" is already the name of another source/);
    await expect(startCollector(store, { sources: [a], staleAfterMs: -1 })).rejects.toThrow(/staleAfterMs must be a positive number/);
    await expect(startCollector(store, { sources: [a], timeoutMs: Number.NaN })).rejects.toThrow(/timeoutMs/);
    await expect(startCollector(store, { sources: 'a' as unknown as Source[] })).rejects.toThrow(/an array of sources/);
  });
});

describe.each(BACKENDS)('startCollector on %s: runs and snapshots', (backend) => {
  it('runs each source at start, then every everyMs, and writes one snapshot per changed IPO at the run instant', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const prices = [42, 42, 45];
    const a = scripted('ipowatch', MIN, (run) => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: prices[run - 1] ?? 45 }] }));
    const collector = await start(recording, clock, [a]);
    expect(a.runs.map((r) => r.now.getTime())).toEqual([T0]);
    expect(recording.snapshots).toEqual([{ ipoId: 'ipo-1', timestamp: T0, sources: [{ name: 'ipowatch', paise: 4200 }], aggregations: { mean: 4200, median: 4200, min: 4200, max: 4200, mode: 4200 } }]);
    await clock.advance(MIN); // the same price: no snapshot
    await clock.advance(MIN); // another price: a snapshot
    expect(a.runs.map((r) => r.now.getTime() - T0)).toEqual([0, MIN, 2 * MIN]);
    expect(recording.snapshots.map((s) => [s.timestamp - T0, s.sources[0]?.paise])).toEqual([
      [0, 4200],
      [2 * MIN, 4500],
    ]);
    const [status] = collector.status();
    expect(status).toEqual({
      name: 'ipowatch',
      lastRunAt: new Date(T0 + 2 * MIN).toISOString(),
      lastSuccessAt: new Date(T0 + 2 * MIN).toISOString(),
      lastError: null,
      records: 2,
      staleReports: 0,
      nextRunAt: new Date(T0 + 3 * MIN).toISOString(),
      running: false,
    });
    await collector.stop();
    expect(clock.timers).toBe(0);
  });

  it('combines every source\'s latest report of an IPO into its snapshot, by source name', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const a = scripted('investorgain', MIN, (run) => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 40 + run }] }));
    const b = scripted('chittorgarh', 3 * MIN, () => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 30 }, { ipoId: 'ipo-2', gmpPrice: null }] }));
    const collector = await start(recording, clock, [a, b]);
    await clock.advance(MIN);
    const latest = await recording.store.findIpo({ identifier: 'ipo-1', gmpAt: clock.time });
    expect(latest?.gmp?.timestamp).toBe(T0 + MIN);
    expect(latest?.gmp?.sources).toEqual([
      { name: 'chittorgarh', paise: 3000 },
      { name: 'investorgain', paise: 4200 },
    ]);
    expect(latest?.gmp?.aggregations.mean).toBe(3600);
    // ipo-2: b's report has no number: its snapshot has no sources.
    const other = await recording.store.findIpo({ identifier: 'ipo-2', gmpAt: clock.time });
    expect(other?.gmp).toMatchObject({ timestamp: T0, sources: [], aggregations: { mean: null } });
    await collector.stop();
  });

  it('leaves a stale report out, and counts it', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const staleAfterMs = 10 * MIN;
    const a = scripted('a', MIN, (run) => {
      if (run > 1) throw new Error('site down');
      return { gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 50 }] };
    });
    const b = scripted('b', MIN, (run) => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: run }] }));
    const collector = await start(recording, clock, [a, b], { staleAfterMs });
    await clock.advance(10 * MIN);
    // Exactly staleAfterMs old: still in.
    expect((await recording.store.findIpo({ identifier: 'ipo-1', gmpAt: clock.time }))?.gmp?.sources.map((s) => s.name)).toEqual(['a', 'b']);
    expect(collector.status()[0]?.staleReports).toBe(0);
    await clock.advance(MIN);
    expect((await recording.store.findIpo({ identifier: 'ipo-1', gmpAt: clock.time }))?.gmp?.sources.map((s) => s.name)).toEqual(['b']);
    expect(collector.status().map((s) => [s.name, s.staleReports, s.lastError])).toEqual([
      ['a', 1, 'site down'],
      ['b', 0, null],
    ]);
    await collector.stop();
  });
});

describe.each(BACKENDS)('startCollector on %s: failures', (backend) => {
  it('backs off a failing source from 5 s doubling, never longer than everyMs, and keeps its reports', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const a = scripted('a', MIN, (run) => {
      if (run === 1 || run >= 8) return { gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 10 }] };
      throw new Error(`fail ${run}`);
    });
    const collector = await start(recording, clock, [a], { errors });
    for (let i = 0; i < 30; i++) await clock.advance(10_000);
    const offsets = a.runs.map((r) => (r.now.getTime() - T0) / 1000);
    // success at 0; failures at 60, 65, 75, 95, 135, 195 (5, 10, 20, 40, then 60 s); success at 255.
    expect(offsets.slice(0, 8)).toEqual([0, 60, 65, 75, 95, 135, 195, 255]);
    expect(errors.map((e) => [e.source, (e.err as Error).message])).toEqual([2, 3, 4, 5, 6, 7].map((n) => ['a', `fail ${n}`]));
    // The failures kept the report: the success after them with the same price wrote nothing.
    expect(recording.snapshots).toHaveLength(1);
    expect(collector.status()[0]).toMatchObject({ lastError: null, lastSuccessAt: new Date(T0 + 255_000).toISOString(), records: 1 });
    await collector.stop();
  });

  it('cuts a run at its timeout, aborting its signal, and never runs a source twice at once', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    let inFlight = 0;
    let most = 0;
    const aborted: unknown[] = [];
    const hang: Source = {
      name: 'hang',
      everyMs: 1_000,
      timeoutMs: 30_000,
      collect: ({ signal }) =>
        new Promise((_resolve, reject) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          signal.addEventListener('abort', () => {
            inFlight -= 1;
            aborted.push(signal.reason);
            reject(signal.reason);
          });
        }),
    };
    const collector = await start(recording, clock, [hang], { waiting: () => inFlight > 0 });
    await clock.advance(29_999);
    expect(collector.status()[0]).toMatchObject({ running: true, lastError: null });
    await clock.advance(1);
    expect(aborted).toHaveLength(1);
    expect(collector.status()[0]).toMatchObject({ running: false, lastError: 'The run was cut after 30000 ms.' });
    await clock.advance(5 * 30_000);
    expect(most).toBe(1);
    await collector.stop();
  });

  it('cuts a run whose source ignores its signal, and drops its late answer', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    let release: (a: SourceAnswer) => void = () => undefined;
    let waiting = false;
    const deaf: Source = {
      name: 'deaf',
      everyMs: MIN,
      collect: () =>
        new Promise<SourceAnswer>((resolve) => {
          waiting = true;
          release = (answer) => {
            waiting = false;
            resolve(answer);
          };
        }),
    };
    const collector = await start(recording, clock, [deaf], { timeoutMs: 10_000, waiting: () => waiting });
    await clock.advance(10_000);
    release({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 1 }] });
    await clock.settle();
    expect(recording.snapshots).toEqual([]);
    expect(collector.status()[0]?.lastError).toMatch(/cut after 10000 ms/);
    await collector.stop();
  });

  it('writes nothing from a refused answer and names every problem', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const bad = scripted('bad', MIN, () => ({
      ipos: [{ id: 'new-1', name: 'New Ltd', slug: 'new-ipo', type: 'EQ' }],
      gmpReports: [
        { ipoId: 'ipo-1', gmpPrice: 10 },
        { ipoId: 'ipo-2', gmpPrice: 1.234 },
        { ipoId: 'ipo-1', gmpPrice: 11 },
        { ipoId: 'nobody', gmpPrice: 5 },
        { ipoId: 'new-1', gmpPrice: 5, extra: true } as never,
      ],
    }));
    const collector = await start(recording, clock, [bad], { errors });
    expect(recording.writes).toBe(0);
    expect(await recording.store.findIpo({ identifier: 'new-1', gmpAt: null })).toBeNull();
    const err = errors[0]?.err as IpokitError;
    expect(err.code).toBe('ERR:DATASET');
    expect(err.problems).toEqual([
      { path: 'gmpReports[1].gmpPrice', message: 'gmpPrice 1.234 has more than 2 decimals' },
      { path: 'gmpReports[2].ipoId', message: 'ipoId "ipo-1" is already reported by gmpReports[0]' },
      { path: 'gmpReports[3].ipoId', message: 'ipoId "nobody" names no IPO in the dataset or the store' },
      { path: 'gmpReports[4].extra', message: 'a GMP report has no field "extra" (its fields are "ipoId" and "gmpPrice")' },
    ]);
    expect(err.problemCount).toBe(4);
    expect(collector.status()[0]?.lastError).toMatch(/^The source's answer has 4 problems, the first at gmpReports\[1\]\.gmpPrice: gmpPrice 1\.234 has more than 2 decimals\.$/);
    expect(collector.status()[0]?.records).toBe(0);
    await collector.stop();
  });

  it('names the dataset part\'s problems first, then the reports\'', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const bad = scripted('bad', MIN, () => ({
      gmp: [{ ipoId: 'ipo-1', timestamp: 'yesterday', sources: [] }],
      gmpReports: 'none' as never,
      other: 1,
    } as SourceAnswer));
    const collector = await start(recording, clock, [bad], { errors });
    const err = errors[0]?.err as IpokitError;
    expect(err.problems?.map((p) => p.path)).toEqual(['other', 'gmp[0].timestamp', 'gmpReports']);
    await collector.stop();
  });

  it('refuses a valid answer reporting an IPO the store does not hold, found by the write: nothing written', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const a = scripted('a', MIN, () => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 3 }, { ipoId: 'nobody', gmpPrice: 5 }] }));
    const collector = await start(recording, clock, [a], { errors });
    expect(recording.writes).toBe(0);
    const err = errors[0]?.err as IpokitError;
    expect(err.code).toBe('ERR:DATASET');
    expect(err.problems).toEqual([{ path: 'gmpReports[1].ipoId', message: 'ipoId "nobody" names no IPO in the dataset or the store' }]);
    expect(collector.status()[0]?.lastError).toBe(
      'The source\'s answer has 1 problem with stored data, at gmpReports[1].ipoId: ipoId "nobody" names no IPO in the dataset or the store; nothing was written.',
    );
    // Nothing kept of the run: the same answer, the IPO now imported, is a change again.
    expect(await recording.store.sourceReports(['a'])).toEqual([]);
    await collector.stop();
  });

  it('refuses an answer that is not an object', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const bad = scripted('bad', MIN, () => [] as never);
    const collector = await start(recording, clock, [bad], { errors });
    expect((errors[0]?.err as IpokitError).problems).toEqual([{ path: '$', message: 'a source must answer an object with "ipos", "gmp", "subscription" and/or "gmpReports", got an array' }]);
    await collector.stop();
  });

  it('loses no report when the store fails: the next run finds the change again', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const a = scripted('a', MIN, () => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 7 }] }));
    recording.failWith = new IpokitError('ERR:UNAVAILABLE', 'The store failed.');
    const collector = await start(recording, clock, [a]);
    expect(collector.status()[0]).toMatchObject({ lastError: 'The store failed.', records: 0 });
    recording.failWith = null;
    await clock.advance(5_000);
    expect(recording.snapshots.map((s) => s.timestamp - T0)).toEqual([5_000]);
    expect(collector.status()[0]).toMatchObject({ lastError: null, records: 1 });
    await collector.stop();
  });

  it('writes an answer\'s IPOs, GMP snapshots and subscription snapshots, and counts them', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const a = scripted('calendar', MIN, (run) =>
      run === 1
        ? {
            ipos: [{ id: 'new-1', name: 'New Ltd', slug: 'new-ipo', type: 'SME' }],
            gmp: [{ ipoId: 'new-1', timestamp: '2026-11-24T03:00:00Z', sources: [{ name: 'x', gmpPrice: 3 }] }],
            subscription: [{ ipoId: 'ipo-1', timestamp: '2026-11-24T03:30:00Z', times: { total: 1.5 } }],
            gmpReports: [{ ipoId: 'new-1', gmpPrice: 4 }],
          }
        : {},
    );
    const collector = await start(recording, clock, [a]);
    expect(recording.snapshots.map((s) => [s.ipoId, new Date(s.timestamp).toISOString()])).toEqual([
      ['new-1', '2026-11-24T03:00:00.000Z'],
      ['new-1', '2026-11-24T04:00:00.000Z'],
    ]);
    expect(recording.subscription).toHaveLength(1);
    expect(collector.status()[0]?.records).toBe(4);
    await collector.stop();
  });

  it('refuses a report of an IPO whose snapshot in the same answer is at the run instant', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    const errors: Array<{ err: unknown; source: string }> = [];
    const a = scripted('a', MIN, () => ({
      gmp: [{ ipoId: 'ipo-1', timestamp: new Date(T0).toISOString(), sources: [] }],
      gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 4 }],
    }));
    const collector = await start(recording, clock, [a], { errors });
    expect((errors[0]?.err as IpokitError).problems?.[0]?.path).toBe('gmpReports[0].ipoId');
    expect(recording.writes).toBe(0);
    await collector.stop();
  });
});

describe.each(BACKENDS)('startCollector on %s: stop', (backend) => {
  it('cuts the runs under way, waits for them, and sets no timer again', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore(3, backend);
    let signal: AbortSignal | null = null;
    const slow: Source = {
      name: 'slow',
      everyMs: MIN,
      collect: (context) =>
        new Promise((_resolve, reject) => {
          signal = context.signal;
          context.signal.addEventListener('abort', () => reject(context.signal.reason));
        }),
    };
    const collector = await start(recording, clock, [slow], { waiting: () => signal !== null && !signal.aborted });
    await collector.stop();
    expect((signal as AbortSignal | null)?.aborted).toBe(true);
    expect(clock.timers).toBe(0);
    // A stop is no failure: nothing recorded.
    expect(collector.status()[0]?.lastError).toBeNull();
    await collector.stop();
  });
});

describe('startCollector: a stop while a run reads its state', () => {
  it('records no failure and calls no onError (found by the faults phase)', async () => {
    const clock = new ManualClock(T0);
    const recording = await recordingStore();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reads = 0;
    const inner = recording.store.sourceStates.bind(recording.store);
    // The second read of the state (the run's, after the one at start) waits at the gate.
    recording.store.sourceStates = async (names) => {
      reads += 1;
      if (reads === 2) await gate;
      return inner(names);
    };
    const errors: Array<{ err: unknown; source: string }> = [];
    const a = scripted('a', MIN, () => ({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 1 }] }));
    const collector = await startCollector(recording.store, { sources: [a], now: clock.now, timers: clock, onError: (err, source) => errors.push({ err, source }) });
    await clock.advance(0);
    expect(reads).toBe(2);
    const stopping = collector.stop();
    open();
    await stopping;
    expect(errors).toEqual([]);
    expect(a.runs).toEqual([]);
    expect(collector.status()[0]).toMatchObject({ lastError: null, lastRunAt: null });
    expect((await recording.store.sourceStates(['a']))).toEqual([]);
  });
});
