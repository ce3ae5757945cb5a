/**
 * The collector's store conformance checks (`SourceStore`, docs/spec.md#sources): the run lock
 * of a source, sources' states and reports, and a run's atomic write (which reports changed,
 * what `combine` is given, the combined snapshots, their events, the rollback on a conflict,
 * and runs of different sources taking turns). Strictly the interface: any `SourceStore`
 * over any `IpoStore` runs it (a PostgreSQL store, an in-process one).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AccountStore, IpoStore, WebhookStore } from '@ipokit/core';
import {
  type ClaimedDelivery,
  compareCodePoints,
  type IpoRecord,
  type SnapshotRecord,
  type SourceReport,
  type SourceRunWrite,
  type SourceState,
  type SourceStore,
  type SubscriptionRecord,
  toGmpSnapshot,
  toIsoUtc,
} from '@ipokit/core/backend';
import { makeIpo, makeSnapshot } from './arbitraries.js';

/** What the source checks need: the IPO data and the collector's part of one backend. */
export type SourceTestStore = IpoStore & SourceStore;

/** A fresh store for one check, and how to close it. */
export interface SourceTestTarget {
  store: SourceTestStore;
  close?: () => void | Promise<void>;
}

/** Options of {@link testSourceStore}. */
export interface TestSourceStoreOptions {
  /** Random sequences of runs compared with the model (default 20). */
  propertyRuns?: number;
  /** Leaves out the lock checks, saying so in a skipped check's name (a backend that cannot take them in this test setup). */
  skipLock?: string;
}

/**
 * Registers the `SourceStore` checks with vitest. `factory` gives a fresh, empty store for
 * each check. When the store is also a `WebhookStore` and an `AccountStore`, the events of a
 * run are checked too.
 *
 * @example
 * ```ts
 * testSourceStore('postgresStore', async () => {
 *   const store = await db.emptyStore();
 *   return { store, close: () => store.close?.() };
 * });
 * ```
 */
export function testSourceStore(name: string, factory: () => SourceTestTarget | Promise<SourceTestTarget>, options: TestSourceStoreOptions = {}): void {
  const check = (title: string, fn: (store: SourceTestStore) => Promise<void>, timeout = 20_000): void => {
    it(title, { timeout }, async () => {
      const { store, close } = await factory();
      try {
        await fn(store);
      } finally {
        await close?.();
      }
    });
  };

  describe(`${name}: SourceStore`, () => {
    if (options.skipLock !== undefined) {
      it.skip(`withSourceLock checks: ${options.skipLock}`, () => undefined);
    } else {
      lockChecks(check);
    }
    stateChecks(check);
    reportChecks(check);
    runChecks(check);
    check(
      'random runs of several sources: reports, changes, what combine is given and the snapshots written equal a model (property)',
      (store) => modelProperty(store, options.propertyRuns ?? 20),
      120_000,
    );
  });
}

type Check = (title: string, fn: (store: SourceTestStore) => Promise<void>, timeout?: number) => void;

// 2026-11-24 10:00 IST, and instants after it.
const T = Date.parse('2026-11-24T04:30:00.000Z');
const MINUTE = 60_000;

/** A source's state with these fields (the rest as before a first run). */
function state(source: string, fields: Partial<SourceState> = {}): SourceState {
  return { source, lastRunAt: null, lastSuccessAt: null, lastError: null, records: 0, failures: 0, nextRunAt: T, ...fields };
}

/** What one call of `combine` was given (copies). */
interface CombineCall {
  reports: SourceReport[];
  changed: string[];
}

/** The collector's rule in small: one snapshot per changed IPO at `at`, of every source's report of it. */
function combineAll(at: number): SourceRunWrite['combine'] {
  return (reports, changed) => changed.map((id) => makeSnapshot(id, at, Object.fromEntries(reports.filter((r) => r.ipoId === id).map((r) => [r.source, r.paise]))));
}

interface RunParts {
  data?: Partial<SourceRunWrite['data']>;
  combine?: SourceRunWrite['combine'];
  state?: SourceState;
}

/** A run of `source` at `at`, whose `combine` (by default {@link combineAll}) records what it is given in `calls`. */
function runOf(source: string, at: number, reports: Array<[string, number | null]>, parts: RunParts = {}): { run: SourceRunWrite; calls: CombineCall[] } {
  const calls: CombineCall[] = [];
  const combine = parts.combine ?? combineAll(at);
  const run: SourceRunWrite = {
    source,
    at,
    data: { ipos: [], snapshots: [], subscription: [], ...parts.data },
    reports: reports.map(([ipoId, paise]) => ({ ipoId, paise })),
    combine(given, changed) {
      calls.push({ reports: given.map((r) => ({ ...r })), changed: [...changed] });
      return combine(given, changed);
    },
    state: parts.state ?? state(source, { lastRunAt: at, lastSuccessAt: at, nextRunAt: at + MINUTE }),
  };
  return { run, calls };
}

/** Reports as `sourceReports` orders them: by source, then ipoId, in code-point order. */
function ordered(reports: readonly SourceReport[]): SourceReport[] {
  return [...reports].sort((a, b) => compareCodePoints(a.source, b.source) || compareCodePoints(a.ipoId, b.ipoId));
}

/** The IPOs `combine` was told changed, over every call (a store may call it with none changed, or not call it). */
function changedOf(calls: readonly CombineCall[]): string[] {
  return calls.flatMap((c) => c.changed);
}

/** Waits (polling, 5 ms apart) until `condition` holds; fails after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited >= 10_000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function lockChecks(check: Check): void {
  check('withSourceLock runs fn and resolves to { value }; while it runs, the same source resolves to null without calling fn; other sources are free', async (store) => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = false;
    const first = store.withSourceLock('alpha', async () => {
      inside = true;
      await gate;
      return { answer: 42 };
    });
    await until(() => inside, 'the first holder runs');
    let called = false;
    expect(
      await store.withSourceLock('alpha', async () => {
        called = true;
        return 1;
      }),
    ).toBeNull();
    expect(called).toBe(false);
    expect(await store.withSourceLock('beta', async () => 'beta ran')).toEqual({ value: 'beta ran' });
    open();
    expect(await first).toEqual({ value: { answer: 42 } });
    // released once fn settled
    expect(await store.withSourceLock('alpha', async () => undefined)).toEqual({ value: undefined });
  });

  check('withSourceLock: of many callers at once, one runs at a time; the lock is free once it settled', async (store) => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let running = 0;
    let most = 0;
    let settled = 0;
    const calls = Array.from({ length: 8 }, (_, i) =>
      store
        .withSourceLock('many', async () => {
          running += 1;
          most = Math.max(most, running);
          await gate;
          running -= 1;
          return i;
        })
        .finally(() => (settled += 1)),
    );
    await until(() => settled + running === calls.length, 'every caller ran or was turned away');
    open();
    const results = await Promise.all(calls);
    expect(most).toBe(1);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await store.withSourceLock('many', async () => 'free')).toEqual({ value: 'free' });
  });

  check('withSourceLock: when fn rejects, it rejects with that error and the lock is released', async (store) => {
    const boom = new Error('the run failed');
    await expect(
      store.withSourceLock('alpha', async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await store.withSourceLock('alpha', async () => 'again')).toEqual({ value: 'again' });
    // and a rejection while another source is held leaves that one held
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = false;
    const beta = store.withSourceLock('beta', async () => {
      inside = true;
      await gate;
      return 'beta';
    });
    await until(() => inside, 'beta runs');
    await expect(
      store.withSourceLock('alpha', async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await store.withSourceLock('beta', async () => 'second')).toBeNull();
    open();
    expect(await beta).toEqual({ value: 'beta' });
  });
}

function stateChecks(check: Check): void {
  check('saveSourceState then sourceStates: each stored state in the order named, names not stored left out; a save replaces', async (store) => {
    expect(await store.sourceStates(['alpha'])).toEqual([]);
    const a = state('alpha');
    const b = state('beta', { lastRunAt: T, lastSuccessAt: T - MINUTE, lastError: 'HTTP 503 \u{1F600} from upstream', records: 2 ** 40, failures: 3, nextRunAt: T + 5_000 });
    const c = state('c.under_score-9', { lastRunAt: 0, lastSuccessAt: 0, records: 1, nextRunAt: 0 });
    for (const x of [a, b, c]) await store.saveSourceState(x);
    expect(await store.sourceStates(['c.under_score-9', 'alpha', 'nope', 'beta'])).toEqual([c, a, b]);
    expect(await store.sourceStates([])).toEqual([]);
    const a2 = state('alpha', { lastRunAt: T + 1, lastError: null, records: 7, failures: 0, nextRunAt: T + MINUTE });
    await store.saveSourceState(a2);
    expect(await store.sourceStates(['alpha', 'beta'])).toEqual([a2, b]);
    // an error again, then cleared
    const a3 = { ...a2, lastError: 'timed out', failures: 1 };
    await store.saveSourceState(a3);
    expect(await store.sourceStates(['alpha'])).toEqual([a3]);
  });

  check('states given and returned are copies: changing one changes nothing stored', async (store) => {
    const a = state('alpha', { records: 3 });
    await store.saveSourceState(a);
    a.records = 99;
    const [got] = await store.sourceStates(['alpha']);
    expect(got).toEqual(state('alpha', { records: 3 }));
    got!.failures = 42;
    expect(await store.sourceStates(['alpha'])).toEqual([state('alpha', { records: 3 })]);
  });
}

function reportChecks(check: Check): void {
  check('sourceReports: every stored report of the sources named, by source then ipoId in code-point order', async (store) => {
    const none: SourceRunWrite['combine'] = () => [];
    const ids = ['ipo-b', 'ipo-B', 'ipo-\u{1F600}', 'ipo-\uFFFD', 'ipo-a'];
    const sources = ['zeta', 'Alpha', '9-nine', 'alpha', 'a.b', 'a_b'];
    let at = T;
    for (const source of sources) {
      const { run } = runOf(
        source,
        (at += 1_000),
        ids.map((id, i) => [id, i === 2 ? null : (i + 1) * 100]),
        { combine: none },
      );
      expect(await store.writeSourceRun(run)).toEqual({ conflicts: [], combined: 0 });
    }
    const all = await store.sourceReports(sources);
    expect(all).toHaveLength(sources.length * ids.length);
    expect(all).toEqual(ordered(all));
    expect(all.map((r) => `${r.source} ${r.ipoId}`).slice(0, 5)).toEqual(['9-nine ipo-B', '9-nine ipo-a', '9-nine ipo-b', '9-nine ipo-\uFFFD', '9-nine ipo-\u{1F600}']);
    expect(all.slice(0, 5).map((r) => [r.paise, r.at])).toEqual([
      [200, T + 3_000],
      [500, T + 3_000],
      [100, T + 3_000],
      [400, T + 3_000],
      [null, T + 3_000],
    ]);
    // the order of the names given does not matter; names without reports add nothing
    const some = await store.sourceReports(['zeta', 'nope', 'a_b']);
    expect(some).toEqual(all.filter((r) => r.source === 'a_b' || r.source === 'zeta'));
    expect(some.map((r) => r.source)).toEqual([...Array<string>(5).fill('a_b'), ...Array<string>(5).fill('zeta')]);
    expect(await store.sourceReports([])).toEqual([]);
    expect(await store.sourceReports(['nope'])).toEqual([]);
  });
}

function runChecks(check: Check): void {
  check('writeSourceRun: a report changes when none is stored or its price differs (null is a price of its own); every report moves to the run; changed in reports order; the state is stored', async (store) => {
    const none: SourceRunWrite['combine'] = () => [];
    // first run: all new
    const r1 = runOf('alpha', T, [['i3', 200], ['i1', 100], ['i2', null]], { combine: none });
    expect(await store.writeSourceRun(r1.run)).toEqual({ conflicts: [], combined: 0 });
    expect(changedOf(r1.calls)).toEqual(['i3', 'i1', 'i2']);
    expect(await store.sourceStates(['alpha'])).toEqual([r1.run.state]);
    // same price (a number, null), another price, a new IPO
    const t2 = T + MINUTE;
    const r2 = runOf('alpha', t2, [['i4', 50], ['i1', 100], ['i2', null], ['i3', 300]], { combine: none });
    expect(await store.writeSourceRun(r2.run)).toEqual({ conflicts: [], combined: 0 });
    expect(changedOf(r2.calls)).toEqual(['i4', 'i3']);
    expect(await store.sourceReports(['alpha'])).toEqual([
      { source: 'alpha', ipoId: 'i1', paise: 100, at: t2 },
      { source: 'alpha', ipoId: 'i2', paise: null, at: t2 },
      { source: 'alpha', ipoId: 'i3', paise: 300, at: t2 },
      { source: 'alpha', ipoId: 'i4', paise: 50, at: t2 },
    ]);
    expect(await store.sourceStates(['alpha'])).toEqual([r2.run.state]);
    // a number to null, null to 0 (a number); an IPO not in the run keeps its report and instant
    const t3 = T + 2 * MINUTE;
    const r3 = runOf('alpha', t3, [['i1', null], ['i2', 0], ['i3', 300]], { combine: none });
    expect(await store.writeSourceRun(r3.run)).toEqual({ conflicts: [], combined: 0 });
    expect(changedOf(r3.calls)).toEqual(['i1', 'i2']);
    expect(await store.sourceReports(['alpha'])).toEqual([
      { source: 'alpha', ipoId: 'i1', paise: null, at: t3 },
      { source: 'alpha', ipoId: 'i2', paise: 0, at: t3 },
      { source: 'alpha', ipoId: 'i3', paise: 300, at: t3 },
      { source: 'alpha', ipoId: 'i4', paise: 50, at: t2 },
    ]);
    // nothing changed: combine is given nothing (if called at all), and the instants still move
    const t4 = T + 3 * MINUTE;
    const r4 = runOf('alpha', t4, [['i1', null], ['i2', 0]], { combine: none });
    expect(await store.writeSourceRun(r4.run)).toEqual({ conflicts: [], combined: 0 });
    expect(r4.calls.every((c) => c.changed.length === 0 && c.reports.length === 0)).toBe(true);
    expect((await store.sourceReports(['alpha'])).map((r) => r.at)).toEqual([t4, t4, t3, t2]);
    // a run without reports stores its state all the same
    const r5 = runOf('alpha', T + 4 * MINUTE, [], { combine: none, state: state('alpha', { records: 12, nextRunAt: T + 5 * MINUTE }) });
    expect(await store.writeSourceRun(r5.run)).toEqual({ conflicts: [], combined: 0 });
    expect(await store.sourceStates(['alpha'])).toEqual([r5.run.state]);
  });

  check("writeSourceRun: combine is given every source's reports of the changed IPOs alone, as they are with this run's in", async (store) => {
    const none: SourceRunWrite['combine'] = () => [];
    await store.writeSourceRun(runOf('beta', T, [['i1', 400], ['i5', 500]], { combine: none }).run);
    await store.writeSourceRun(runOf('gamma', T + 1, [['i1', null], ['i2', 700]], { combine: none }).run);
    await store.writeSourceRun(runOf('alpha', T + 2, [['i1', 100], ['i2', 200], ['i3', 300]], { combine: none }).run);
    const t = T + MINUTE;
    const { run, calls } = runOf('alpha', t, [['i3', 300], ['i1', 150], ['i2', 200]], { combine: none });
    expect(await store.writeSourceRun(run)).toEqual({ conflicts: [], combined: 0 });
    expect(changedOf(calls)).toEqual(['i1']);
    expect(ordered(calls.flatMap((c) => c.reports))).toEqual([
      { source: 'alpha', ipoId: 'i1', paise: 150, at: t },
      { source: 'beta', ipoId: 'i1', paise: 400, at: T },
      { source: 'gamma', ipoId: 'i1', paise: null, at: T + 1 },
    ]);
  });

  check('writeSourceRun: the combined snapshots are written after run.data (IPOs of the run included) and read back through findIpo and gmpBuckets', async (store) => {
    const old = makeIpo({ id: 'old', symbol: 'OLD' });
    expect(await store.writeDataset({ ipos: [old], snapshots: [] })).toEqual([]);
    const fresh = makeIpo({ id: 'fresh', symbol: 'FRESH' });
    const own = makeSnapshot('old', T - MINUTE, { alpha: 900 });
    const sub: SubscriptionRecord = { ipoId: 'fresh', timestamp: T - MINUTE, times: subscriptionTimes(1.5) };
    const r1 = runOf('alpha', T, [['fresh', 4_200], ['old', 1_000]], { data: { ipos: [fresh], snapshots: [own], subscription: [sub] } });
    expect(await store.writeSourceRun(r1.run)).toEqual({ conflicts: [], combined: 2 });
    expect(await store.findIpo({ identifier: 'fresh', gmpAt: T, subscriptionAt: T })).toEqual({ ipo: fresh, gmp: makeSnapshot('fresh', T, { alpha: 4_200 }), subscription: sub });
    expect((await store.findIpo({ identifier: 'old', gmpAt: T - 1 }))?.gmp).toEqual(own);
    expect((await store.findIpo({ identifier: 'old', gmpAt: T }))?.gmp).toEqual(makeSnapshot('old', T, { alpha: 1_000 }));
    // another source's run combines both sources' reports of what it changed
    const t2 = T + MINUTE;
    const r2 = runOf('beta', t2, [['fresh', 4_000], ['old', null]]);
    expect(await store.writeSourceRun(r2.run)).toEqual({ conflicts: [], combined: 2 });
    const both = makeSnapshot('fresh', t2, { alpha: 4_200, beta: 4_000 });
    expect((await store.findIpo({ identifier: 'FRESH', gmpAt: t2 }))?.gmp).toEqual(both);
    expect((await store.findIpo({ identifier: 'old', gmpAt: t2 }))?.gmp).toEqual(makeSnapshot('old', t2, { alpha: 1_000 }));
    const buckets = await store.gmpBuckets({ ipoId: 'fresh', field: 'mean', from: T - MINUTE, to: t2, size: MINUTE, origin: T });
    expect(buckets.map((b) => ({ start: b.start, sum: Number(b.sum), count: b.count }))).toEqual([
      { start: T, sum: 4_200, count: 1 },
      { start: t2, sum: 4_100, count: 1 },
    ]);
    // nothing changed: nothing combined, nothing new written
    const r3 = runOf('beta', t2 + MINUTE, [['fresh', 4_000]]);
    expect(await store.writeSourceRun(r3.run)).toEqual({ conflicts: [], combined: 0 });
    expect((await store.findIpo({ identifier: 'fresh', gmpAt: t2 + MINUTE }))?.gmp).toEqual(both);
  });

  check('writeSourceRun records the events of what it writes, as writeDataset does: a gmp.snapshot per combined snapshot at the write', async (store) => {
    if (!isWebhookStore(store)) {
      // (the store records no events: nothing to check)
      expect(await store.writeSourceRun(runOf('alpha', T, []).run)).toEqual({ conflicts: [], combined: 0 });
      return;
    }
    await store.writeDataset({ ipos: [makeIpo({ id: 'ipo1', symbol: 'ONE' })], snapshots: [] }, { at: T - 10 });
    await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
    expect(
      await store.insertWebhook(
        {
          id: 'wh_gmp',
          accountId: 'acct_1',
          url: 'https://example.com/hooks/gmp',
          events: ['gmp.snapshot'],
          description: null,
          secret: `whsec_${'A'.repeat(32)}`,
          createdAt: '2026-11-20T10:00:00.000Z',
          disabledAt: null,
          pausedAt: null,
          previousSecret: null,
          previousSecretExpiresAt: null,
        },
        { maxPerAccount: Infinity },
      ),
    ).toBe('ok');
    const at = T + 5;
    const { run } = runOf('alpha', T, [['ipo1', 4_200]]);
    expect(await store.writeSourceRun(run, { at })).toEqual({ conflicts: [], combined: 1 });
    const claimed = await store.claimDeliveries({ now: at, limit: 100, perWebhook: 100, perAccount: 100, leaseMs: MINUTE, busy: new Map(), busyAccounts: new Map() });
    expect(claimed.map((c: ClaimedDelivery) => ({ webhookId: c.delivery.webhookId, type: c.delivery.eventType, body: JSON.parse(c.body) as unknown }))).toEqual([
      {
        webhookId: 'wh_gmp',
        type: 'gmp.snapshot',
        body: {
          type: 'gmp.snapshot',
          timestamp: toIsoUtc(at),
          data: { ipoId: 'ipo1', timestamp: toIsoUtc(T), aggregations: toGmpSnapshot(makeSnapshot('ipo1', T, { alpha: 4_200 })).aggregations },
        },
      },
    ]);
  });

  check('writeSourceRun: a combined snapshot of an unknown IPO is an unknown-ipo conflict at its index after run.data.snapshots; nothing is written, reports and state neither', async (store) => {
    await store.writeDataset({ ipos: [makeIpo({ id: 'known', symbol: 'KNOWN' })], snapshots: [] });
    const before = runOf('alpha', T, [['known', 100], ['ghost-old', null]], { combine: () => [] });
    await store.writeSourceRun(before.run);
    await store.writeSourceRun(runOf('beta', T, [['known', 300]], { combine: () => [] }).run);
    const reports = await store.sourceReports(['alpha', 'beta']);
    const states = await store.sourceStates(['alpha', 'beta']);

    const t = T + MINUTE;
    const fresh = makeIpo({ id: 'fresh', symbol: 'FRESH' });
    const own = makeSnapshot('known', t - 1, { alpha: 150 });
    const { run, calls } = runOf('alpha', t, [['fresh', 10], ['known', 150], ['ghost', 200], ['ghost-old', null]], {
      data: { ipos: [fresh], snapshots: [own] },
      state: state('alpha', { lastRunAt: t, lastSuccessAt: t, records: 99, nextRunAt: t + MINUTE }),
    });
    expect(await store.writeSourceRun(run)).toEqual({ conflicts: [{ kind: 'unknown-ipo', snapshot: 3 }], combined: 0 });
    expect(changedOf(calls)).toEqual(['fresh', 'known', 'ghost']);
    expect(await store.sourceReports(['alpha', 'beta'])).toEqual(reports);
    expect(await store.sourceStates(['alpha', 'beta'])).toEqual(states);
    expect(await store.findIpo({ identifier: 'fresh', gmpAt: null })).toBeNull();
    expect((await store.findIpo({ identifier: 'known', gmpAt: t }))?.gmp ?? null).toBeNull();

    // the same run without the unknown IPO is written whole
    const again = runOf('alpha', t, [['fresh', 10], ['known', 150], ['ghost-old', null]], { data: { ipos: [fresh], snapshots: [own] } });
    expect(await store.writeSourceRun(again.run)).toEqual({ conflicts: [], combined: 2 });
    expect((await store.findIpo({ identifier: 'known', gmpAt: t }))?.gmp).toEqual(makeSnapshot('known', t, { alpha: 150, beta: 300 }));
  });

  check("writeSourceRun: a conflict of run.data (an unknown IPO's snapshot, a symbol taken) writes nothing either", async (store) => {
    await store.writeDataset({ ipos: [makeIpo({ id: 'holder', symbol: 'TAKEN' })], snapshots: [] });
    const taken = makeIpo({ id: 'taker', symbol: 'taken' });
    const { run } = runOf('alpha', T, [['holder', 100]], {
      data: { ipos: [taken], snapshots: [makeSnapshot('nowhere', T - 1, { alpha: 1 })] },
    });
    const result = await store.writeSourceRun(run);
    expect(result.combined).toBe(0);
    expect(result.conflicts).toEqual(expect.arrayContaining([{ kind: 'unknown-ipo', snapshot: 0 }, { kind: 'symbol-taken', ipo: 0, holder: 'holder' }]));
    expect(result.conflicts).toHaveLength(2);
    expect(await store.sourceReports(['alpha'])).toEqual([]);
    expect(await store.sourceStates(['alpha'])).toEqual([]);
    expect((await store.findIpo({ identifier: 'holder', gmpAt: T }))?.gmp ?? null).toBeNull();
    expect(await store.findIpo({ identifier: 'taker', gmpAt: null })).toBeNull();
  });

  check("writeSourceRun: runs of two sources at once for one IPO take turns: the later one's combine sees the earlier one's report", async (store) => {
    await store.writeDataset({ ipos: [makeIpo({ id: 'ipo1', symbol: 'ONE' })], snapshots: [] });
    for (let round = 0; round < 3; round++) {
      const a = runOf('alpha', T + round * MINUTE, [['ipo1', 100 + round]]);
      const b = runOf('beta', T + round * MINUTE + 1, [['ipo1', 200 + round]]);
      const results = await Promise.all([store.writeSourceRun(a.run), store.writeSourceRun(b.run)]);
      expect(results).toEqual([
        { conflicts: [], combined: 1 },
        { conflicts: [], combined: 1 },
      ]);
      const seen = [...a.calls, ...b.calls].map((c) => ordered(c.reports).map((r) => `${r.source}=${r.paise}`));
      // one of them ran first and saw its own report with the other's previous one (none in the first round)
      expect(seen).toContainEqual([`alpha=${100 + round}`, `beta=${200 + round}`]);
      expect(seen).toHaveLength(2);
    }
  });
}

/** Every category at `value` times. */
function subscriptionTimes(value: number): SubscriptionRecord['times'] {
  return { qib: value, nii: value, bnii: value, snii: value, retail: value, employee: value, shareholder: value, total: value };
}

type EventTestStore = SourceTestStore & WebhookStore & AccountStore;

function isWebhookStore(store: SourceTestStore): store is EventTestStore {
  const s = store as Partial<EventTestStore>;
  return typeof s.insertWebhook === 'function' && typeof s.claimDeliveries === 'function' && typeof s.insertAccount === 'function';
}

const MODEL_IPOS = ['p1', 'p2', 'p3'] as const;
const MODEL_SOURCES = ['a', 'b', 'c'] as const;

/**
 * Random runs of three sources over three IPOs against a model: after each run the stored
 * reports equal the model's, `combine` was told exactly the IPOs whose report changed and
 * given every source's report of those, and the latest snapshot of each IPO is the one
 * combined last. Each sequence uses sources and IPOs of its own on the one store.
 */
async function modelProperty(store: SourceTestStore, runs: number): Promise<void> {
  const price = fc.constantFrom<number | null>(null, 0, 100, 250);
  const runArbitrary = fc.record({
    source: fc.constantFrom(...MODEL_SOURCES),
    reports: fc.uniqueArray(fc.tuple(fc.constantFrom(...MODEL_IPOS), price), { selector: ([id]) => id, maxLength: 3 }),
  });
  let sequence = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(runArbitrary, { minLength: 1, maxLength: 10 }), async (steps) => {
      const prefix = `s${++sequence}`;
      const ipo = (id: string): string => `${prefix}-${id}`;
      const source = (name: string): string => `${prefix}-${name}`;
      const ipos: IpoRecord[] = MODEL_IPOS.map((id) => makeIpo({ id: ipo(id), symbol: ipo(id).toUpperCase() }));
      expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
      const model = new Map<string, SourceReport>();
      const latest = new Map<string, SnapshotRecord>();
      let at = T;
      for (const step of steps) {
        at += 1_000;
        const name = source(step.source);
        const reports = step.reports.map(([id, paise]): [string, number | null] => [ipo(id), paise]);
        const changed = reports.filter(([id, paise]) => {
          const stored = model.get(`${name}\u0000${id}`);
          return stored === undefined || stored.paise !== paise;
        });
        for (const [id, paise] of reports) model.set(`${name}\u0000${id}`, { source: name, ipoId: id, paise, at });
        const changedIds = changed.map(([id]) => id);
        const given = ordered([...model.values()].filter((r) => changedIds.includes(r.ipoId)));
        const { run, calls } = runOf(name, at, reports);
        expect(await store.writeSourceRun(run)).toEqual({ conflicts: [], combined: changedIds.length });
        expect(changedOf(calls)).toEqual(changedIds);
        expect(ordered(calls.flatMap((c) => c.reports))).toEqual(given);
        for (const snapshot of combineAll(at)(given, changedIds)) latest.set(snapshot.ipoId, snapshot);
        expect(await store.sourceReports(MODEL_SOURCES.map(source))).toEqual(ordered([...model.values()]));
      }
      for (const id of MODEL_IPOS) {
        expect((await store.findIpo({ identifier: ipo(id), gmpAt: at }))?.gmp ?? null).toEqual(latest.get(ipo(id)) ?? null);
      }
    }),
    { numRuns: runs },
  );
}
