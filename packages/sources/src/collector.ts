/**
 * The collector (docs/spec.md#sources): runs each source on its schedule, one run of a source
 * at a time and in one process at a time, cuts a run at its timeout, checks and writes what
 * it answers, combines the sources' GMP reports into snapshots, and backs off a failing
 * source. Its state is the store's when the store is a `SourceStore` (PostgreSQL), else
 * this process's. On an injected clock and timers, so that it runs anywhere the core does
 * and tests need no real waiting.
 */
import { IpokitError, type IpoStore } from '@ipokit/core';
import { datasetConflictError, quote, toIsoUtc, type DatasetConflict, type SnapshotRecord, type SourceState, type SourceStore } from '@ipokit/core/backend';
import { checkAnswer, MAX_PROBLEMS, type CheckedAnswer } from './answer.js';
import { localSourceStore } from './local-store.js';
import { combineReports, DEFAULT_STALE_AFTER_MS, DEFAULT_TIMEOUT_MS, MIN_EVERY_MS, nextRunDelay, staleCount } from './rules.js';
import type { Source, SourceStatus } from './types.js';

/** The timers a collector schedules with: `globalThis`'s by default; tests pass a manual clock's. */
export interface CollectorTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of {@link startCollector}. */
export interface CollectorOptions {
  /** The sources, each with a unique name. */
  sources: readonly Source[];
  /** The clock: runs' instants, snapshots' timestamps, staleness. Default `() => new Date()`. */
  now?: () => Date;
  /** How old a report may be and still go into a snapshot, ms. Default 6 hours. */
  staleAfterMs?: number;
  /** How long a run may take before it is cut, ms (a source's own `timeoutMs` wins). Default 30,000. */
  timeoutMs?: number;
  /** Called with each failed run's error and the source's name (the collector goes on). Default: nothing; `status()` shows the last error. */
  onError?: (err: unknown, source: string) => void;
  /** How the collector waits. Default `globalThis.setTimeout` and `clearTimeout`. */
  timers?: CollectorTimers;
}

/** A running collector: it keeps the process alive, as a listening server does, until stopped. */
export interface Collector {
  /** Stops scheduling, cuts the runs under way and waits for them to end. */
  stop(): Promise<void>;
  /** Each source's state as this process last saw it, in the order of `sources`. */
  status(): SourceStatus[];
}

const NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;

interface Slot {
  source: Source;
  timeoutMs: number;
  state: SourceState | null;
  /**
   * When each of its stored reports was made, by IPO id (for `staleReports`): a store keeps
   * one report per source and IPO, so a written run sets its reports' times here itself and
   * the store is read only at start and after another process ran the source.
   */
  reportAts: Map<string, number>;
  timer: unknown;
  running: Promise<void> | null;
  controller: AbortController | null;
}

/**
 * Starts running `sources` against `store` (docs/spec.md#sources): each at once, then every
 * `everyMs` from the start of its last run (after a failure, the backoff from the failure:
 * 5 s doubling, at most `everyMs`). On a store that keeps the collector's state (PostgreSQL),
 * a source another process ran lately runs when that run said it is due. A run's
 * answer is checked as a dataset is; a refused answer writes nothing and names every problem
 * (`status()`, `onError`). After a run that changed any of its GMP reports of an IPO, one
 * snapshot of that IPO is written at the run's instant, holding every source's latest report
 * no older than `staleAfterMs`. Every write is atomic and records its webhook events.
 *
 * @throws {IpokitError} `ERR:BADPARAM` for bad options (a name, a duplicate, an interval).
 *
 * @example
 * ```ts
 * const collector = await startCollector(store, {
 *   sources: [upstreamSource({ baseUrl: 'https://api.example.com/ipos', apiKey: process.env.UPSTREAM_KEY! })],
 *   onError: (err, source) => console.error(`[${source}]`, err),
 * });
 * process.on('SIGTERM', () => void collector.stop());
 * ```
 */
export async function startCollector(store: IpoStore, options: CollectorOptions): Promise<Collector> {
  const clock = options.now ?? (() => new Date());
  const now = (): number => clock().getTime();
  const timers: CollectorTimers = options.timers ?? {
    setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
    clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
  const defaultTimeout = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const onError = options.onError ?? (() => undefined);
  if (!Array.isArray(options.sources)) throw badParam('sources', 'startCollector needs `sources`, an array of sources.');
  const slots = new Map<string, Slot>();
  options.sources.forEach((source, i) => {
    if (typeof source !== 'object' || source === null || typeof source.collect !== 'function') {
      throw badParam('sources', `sources[${i}] is not a source: it needs a name, everyMs and a collect function.`);
    }
    if (typeof source.name !== 'string' || !NAME_RE.test(source.name)) {
      throw badParam('sources', `sources[${i}].name must be 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-", got ${JSON.stringify(source.name)}.`);
    }
    if (slots.has(source.name)) throw badParam('sources', `sources[${i}].name ${JSON.stringify(source.name)} is already the name of another source.`);
    if (!Number.isSafeInteger(source.everyMs) || source.everyMs < MIN_EVERY_MS) {
      throw badParam('sources', `sources[${i}].everyMs must be a whole number of milliseconds, at least ${MIN_EVERY_MS}, got ${String(source.everyMs)}.`);
    }
    const timeoutMs = source.timeoutMs === undefined ? defaultTimeout : positive(`sources[${i}].timeoutMs`, source.timeoutMs);
    slots.set(source.name, { source, timeoutMs, state: null, reportAts: new Map(), timer: null, running: null, controller: null });
  });
  const shared: SourceStore = isSourceStore(store) ? store : localSourceStore(store);
  const names = [...slots.keys()];
  for (const state of await shared.sourceStates(names)) {
    const slot = slots.get(state.source);
    if (slot !== undefined) slot.state = state;
  }
  await refreshReports(shared, slots, names);
  let stopped = false;

  const schedule = (slot: Slot, at: number): void => {
    if (stopped) return;
    if (slot.timer !== null) timers.clearTimeout(slot.timer);
    slot.timer = timers.setTimeout(() => {
      slot.timer = null;
      if (stopped || slot.running !== null) return;
      slot.running = due(slot).finally(() => {
        slot.running = null;
      });
    }, Math.max(0, at - now()));
  };

  /** A source's due time came: run it, unless another process runs it or ran it lately. */
  const due = async (slot: Slot): Promise<void> => {
    const { name, everyMs } = slot.source;
    let next: number;
    try {
      const held = await shared.withSourceLock(name, () => runLocked(slot));
      next = held === null ? now() + everyMs : held.value;
    } catch (err) {
      // The store failed around the run (its lock, its state): try again after the backoff.
      report(err, name);
      next = now() + nextRunDelay(everyMs, 1);
    }
    schedule(slot, next);
  };

  const report = (err: unknown, name: string): void => {
    try {
      onError(err, name);
    } catch {
      // A failing onError must not stop the collector.
    }
  };

  /** One run under the source's lock; resolves to when the source is due next. */
  const runLocked = async (slot: Slot): Promise<number> => {
    const { source } = slot;
    const [stored] = await shared.sourceStates([source.name]);
    const at = now();
    // Stopped while the state was read: the run does not start (and is no failure).
    if (stopped) return at;
    if (stored !== undefined) {
      // Another process ran it since this one looked: its reports' times are read again.
      if (slot.state === null || stored.lastRunAt !== slot.state.lastRunAt) await refreshReports(shared, slots, [source.name]);
      slot.state = stored;
      // ... and it is due when that run said.
      if (stored.nextRunAt > at) return stored.nextRunAt;
    }
    const before = stored ?? { source: source.name, lastRunAt: null, lastSuccessAt: null, lastError: null, records: 0, failures: 0, nextRunAt: at };
    const controller = new AbortController();
    slot.controller = controller;
    try {
      const answer = await cut(source.collect({ now: new Date(at), signal: controller.signal, lastSuccessAt: before.lastSuccessAt === null ? null : new Date(before.lastSuccessAt) }), slot.timeoutMs, controller, timers);
      if (stopped) throw controller.signal.reason;
      const checked = await checkAnswer(answer, store, at);
      const written = checked.data.ipos.length + checked.data.snapshots.length + checked.data.subscription.length;
      const state: SourceState = { source: source.name, lastRunAt: at, lastSuccessAt: at, lastError: null, records: before.records + written, failures: 0, nextRunAt: at + source.everyMs };
      let combined: SnapshotRecord[] = [];
      const result = await shared.writeSourceRun(
        {
          source: source.name,
          at,
          data: checked.data,
          reports: checked.reports,
          combine: (reports, changed) => {
            combined = combineReports(reports, changed, at, staleAfterMs);
            state.records = before.records + written + combined.length;
            return combined;
          },
          state,
        },
        { at: now() },
      );
      if (result.conflicts.length > 0) throw conflictError(result.conflicts, checked, combined);
      slot.state = state;
      for (const r of checked.reports) slot.reportAts.set(r.ipoId, at);
      return state.nextRunAt;
    } catch (err) {
      // A run the stop cut is not a failure.
      if (stopped) return at;
      // The backoff counts from the failure: a run cut after its timeout is not tried again at once.
      const failures = before.failures + 1;
      const state: SourceState = { ...before, lastRunAt: at, lastError: errorText(err), failures, nextRunAt: now() + nextRunDelay(source.everyMs, failures) };
      report(err, source.name);
      slot.state = state;
      await shared.saveSourceState(state);
      return state.nextRunAt;
    } finally {
      slot.controller = null;
    }
  };

  for (const slot of slots.values()) schedule(slot, now());

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const slot of slots.values()) {
        if (slot.timer !== null) timers.clearTimeout(slot.timer);
        slot.timer = null;
        slot.controller?.abort(new IpokitError('ERR:UNAVAILABLE', 'The collector was stopped.'));
      }
      await Promise.all([...slots.values()].map((slot) => slot.running));
    },
    status() {
      const at = now();
      return [...slots.values()].map((slot) => toStatus(slot, at, staleAfterMs));
    },
  };
}

/**
 * Each source's status as a {@link SourceStore} keeps it, for a process that does not run the
 * collector itself (`ipokit sources`, `GET /-/sources`): its state and how many of its reports
 * are stale at `now`. A source that has never run shows nulls.
 *
 * @example
 * ```ts
 * const statuses = await sourceStatuses(store, ['upstream'], { now: new Date() });
 * console.log(statuses[0]?.lastSuccessAt);
 * ```
 */
export async function sourceStatuses(store: SourceStore, names: readonly string[], options: { now?: Date; staleAfterMs?: number } = {}): Promise<SourceStatus[]> {
  const at = (options.now ?? new Date()).getTime();
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const states = new Map((await store.sourceStates(names)).map((s) => [s.source, s]));
  const reports = await store.sourceReports(names);
  return names.map((name) => {
    const state = states.get(name) ?? null;
    const ats = reports.filter((r) => r.source === name).map((r) => r.at);
    return statusOf(name, state, ats, at, staleAfterMs, false);
  });
}

/**
 * Whether a store keeps a collector's state itself (a {@link SourceStore}: PostgreSQL's), so that
 * several processes share it.
 *
 * @example
 * ```ts
 * isSourceStore(memoryStore()); // false
 * ```
 */
export function isSourceStore(store: object): store is SourceStore {
  const s = store as Partial<SourceStore>;
  return typeof s.withSourceLock === 'function' && typeof s.writeSourceRun === 'function' && typeof s.sourceStates === 'function' && typeof s.sourceReports === 'function' && typeof s.saveSourceState === 'function';
}

async function refreshReports(store: SourceStore, slots: Map<string, Slot>, names: readonly string[]): Promise<void> {
  const reports = await store.sourceReports(names);
  for (const name of names) {
    const slot = slots.get(name);
    if (slot !== undefined) slot.reportAts = new Map();
  }
  for (const r of reports) slots.get(r.source)?.reportAts.set(r.ipoId, r.at);
}

function toStatus(slot: Slot, at: number, staleAfterMs: number): SourceStatus {
  return statusOf(slot.source.name, slot.state, [...slot.reportAts.values()], at, staleAfterMs, slot.running !== null);
}

function statusOf(name: string, state: SourceState | null, reportAts: readonly number[], at: number, staleAfterMs: number, running: boolean): SourceStatus {
  const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : toIsoUtc(ms));
  return {
    name,
    lastRunAt: iso(state?.lastRunAt),
    lastSuccessAt: iso(state?.lastSuccessAt),
    lastError: state?.lastError ?? null,
    records: state?.records ?? 0,
    staleReports: staleCount(reportAts.map((a) => ({ at: a })), at, staleAfterMs),
    nextRunAt: iso(state?.nextRunAt),
    running,
  };
}

/** `promise`, or a rejection once `ms` have passed (the run's signal then aborts). */
function cut<T>(promise: Promise<T>, ms: number, controller: AbortController, timers: CollectorTimers): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = timers.setTimeout(() => {
      const err = new IpokitError('ERR:UNAVAILABLE', `The run was cut after ${ms} ms.`);
      controller.abort(err);
      reject(err);
    }, ms);
    // A stop aborts the signal: the run ends then, whatever the source does.
    const onAbort = () => reject(controller.signal.reason);
    controller.signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        timers.clearTimeout(timer);
        controller.signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        timers.clearTimeout(timer);
        controller.signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** The refusal of a run whose write conflicted: the answer's own places, then the reports'. */
function conflictError(conflicts: readonly DatasetConflict[], checked: CheckedAnswer, combined: readonly SnapshotRecord[]): IpokitError {
  const n = checked.data.snapshots.length;
  const own = conflicts.filter((c) => c.kind !== 'unknown-ipo' || c.snapshot < n);
  const problems = own.length === 0 ? [] : (datasetConflictError(own, checked.data.ipos, checked.data.snapshots, own.length, checked.data.subscription).problems ?? []);
  const reportIndex = new Map(checked.reports.map((r, i) => [r.ipoId, i]));
  for (const c of conflicts) {
    if (c.kind !== 'unknown-ipo' || c.snapshot < n) continue;
    const ipoId = combined[c.snapshot - n]?.ipoId ?? '';
    problems.push({ path: `gmpReports[${reportIndex.get(ipoId) ?? 0}].ipoId`, message: `ipoId ${quote(ipoId)} names no IPO in the dataset or the store` });
  }
  const count = conflicts.length;
  const first = problems[0];
  const where = first === undefined ? '' : `, ${count === 1 ? '' : 'the first '}at ${first.path}: ${first.message}`;
  return new IpokitError('ERR:DATASET', `The source's answer has ${count} problem${count === 1 ? '' : 's'} with stored data${where}; nothing was written.`, {
    problems: problems.slice(0, MAX_PROBLEMS),
    problemCount: count,
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function positive(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw badParam(name, `${name} must be a positive number of milliseconds, got ${String(value)}.`);
  }
  return value;
}

function badParam(parameter: string, message: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', message, { parameter });
}
