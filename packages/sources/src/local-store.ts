/**
 * A collector's reports, states and locks kept in the process (docs/spec.md#sources), over
 * any IPO store: what a store that is not a `SourceStore` (the memory store) runs with.
 */
import type { IpoStore } from '@ipokit/core';
import type { SourceReport, SourceRunWrite, SourceState, SourceStore, WriteOptions } from '@ipokit/core/backend';
import { compareCodePoints } from '@ipokit/core/backend';
import { changedReports } from './rules.js';

/**
 * A {@link SourceStore} kept in this process over `store`: each run's data and combined
 * snapshots are one `store.writeDataset`, and the reports and state are kept once it has
 * written. Runs take turns, so each combines the others' reports. Only one process can share
 * it: a collector on a store of its own (PostgreSQL's) shares them between processes.
 *
 * @example
 * ```ts
 * const sources = localSourceStore(memoryStore());
 * await sources.withSourceLock('ipowatch', async () => 'ran'); // { value: 'ran' }
 * ```
 */
export function localSourceStore(store: IpoStore): SourceStore {
  const states = new Map<string, SourceState>();
  /** Reports by source, then ipoId. */
  const reports = new Map<string, Map<string, SourceReport>>();
  const locks = new Set<string>();
  let turn: Promise<unknown> = Promise.resolve();
  /** Runs `fn` after every write before it: one write at a time. */
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = turn.then(fn, fn);
    turn = result.catch(() => undefined);
    return result;
  };
  const sorted = (source: string): SourceReport[] =>
    [...(reports.get(source)?.values() ?? [])].sort((a, b) => compareCodePoints(a.ipoId, b.ipoId));

  return {
    async withSourceLock<T>(source: string, fn: () => Promise<T>): Promise<{ value: T } | null> {
      if (locks.has(source)) return null;
      locks.add(source);
      try {
        return { value: await fn() };
      } finally {
        locks.delete(source);
      }
    },

    async sourceStates(names) {
      return names.flatMap((name) => {
        const state = states.get(name);
        return state === undefined ? [] : [{ ...state }];
      });
    },

    async sourceReports(names) {
      return [...new Set(names)].sort(compareCodePoints).flatMap((name) => sorted(name).map((r) => ({ ...r })));
    },

    async saveSourceState(state) {
      states.set(state.source, { ...state });
    },

    writeSourceRun(run: SourceRunWrite, options?: WriteOptions) {
      return inTurn(async () => {
        const own = reports.get(run.source) ?? new Map<string, SourceReport>();
        const changed = changedReports([...own.values()], run.reports);
        const next = new Map(own);
        for (const r of run.reports) next.set(r.ipoId, { source: run.source, ipoId: r.ipoId, paise: r.paise, at: run.at });
        const wanted = new Set(changed);
        const every: SourceReport[] = [];
        for (const [name, byIpo] of reports) {
          if (name === run.source) continue;
          for (const r of byIpo.values()) if (wanted.has(r.ipoId)) every.push(r);
        }
        for (const r of next.values()) if (wanted.has(r.ipoId)) every.push(r);
        const combined = changed.length === 0 ? [] : run.combine(every, changed);
        const snapshots = [...run.data.snapshots, ...combined];
        const { ipos, subscription } = run.data;
        // A run that brought nothing new (an unchanged file, the same prices) writes no data.
        const empty = ipos.length === 0 && snapshots.length === 0 && subscription.length === 0;
        const conflicts = empty ? [] : await store.writeDataset({ ipos, snapshots, subscription }, options?.at === undefined ? {} : { at: options.at });
        if (conflicts.length > 0) return { conflicts, combined: 0 };
        reports.set(run.source, next);
        states.set(run.source, { ...run.state });
        return { conflicts: [], combined: combined.length };
      });
    },
  };
}
