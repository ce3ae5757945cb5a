/**
 * Data in (docs/spec.md#datasets): importing and deleting IPOs, and the problems of a write
 * that conflicts with stored data. Every failure is an `IpokitError`.
 */
import { IpokitError, storeCall, type DatasetProblem } from '../model/errors.js';
import type { DatasetConflict, IpoStore } from '../model/types.js';
import { MAX_DATASET_PROBLEMS, quote, validateDatasetForStore, type DatasetCounts } from './dataset.js';

/**
 * Validates a whole dataset (a parsed JSON object) and upserts it: nothing is written
 * unless every record is valid and consistent with what is stored. Returns how many IPO
 * records, GMP snapshots and subscription snapshots it wrote. On a store with webhook
 * endpoints, the write's events are recorded with it, stamped with `options.now` (default
 * the system clock).
 *
 * @example
 * ```ts
 * const { ipos, snapshots, subscription } = await importDataset(store, JSON.parse(await readFile('data.json', 'utf8')));
 * ```
 */
export async function importDataset(store: IpoStore, dataset: unknown, options: { now?: () => Date } = {}): Promise<DatasetCounts> {
  // A refused dataset names its snapshots of unknown IPOs with its other problems, at once.
  const { ipos, snapshots, subscription } = await validateDatasetForStore(dataset, store);
  const at = (options.now ?? (() => new Date()))().getTime();
  const conflicts = await storeCall(() => store.writeDataset({ ipos, snapshots, subscription }, { at }));
  if (conflicts.length > 0) throw datasetConflictError(conflicts, ipos, snapshots, conflicts.length, subscription);
  return { ipos: ipos.length, snapshots: snapshots.length, subscription: subscription.length };
}

/**
 * Deletes IPOs (with their snapshots) by id; unknown ids are skipped. On a store with
 * webhook endpoints, each IPO removed is an `ipo.deleted` event at `options.now`.
 *
 * @example
 * ```ts
 * await deleteIpos(store, ['2023552877']); // { ipos: 1, snapshots: 412 }
 * ```
 */
export async function deleteIpos(store: IpoStore, ids: readonly string[], options: { now?: () => Date } = {}): Promise<{ ipos: number; snapshots: number }> {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
    throw new IpokitError('ERR:BADPARAM', 'deleteIpos needs an array of IPO ids.', { parameter: 'ids' });
  }
  const at = (options.now ?? (() => new Date()))().getTime();
  return storeCall(() => store.deleteIpos([...new Set(ids)], { at }));
}


/**
 * The `ERR:DATASET` error `importDataset` throws for a valid dataset that conflicts with
 * stored data (docs/spec.md#datasets): a GMP or subscription snapshot whose IPO is neither
 * in the dataset nor stored, a symbol or slug held by a stored IPO the dataset does not
 * replace. Its problems are in dataset order (IPOs, symbol before slug, then GMP snapshots,
 * then subscription snapshots), the first {@link MAX_DATASET_PROBLEMS} of them, worded and
 * quoted as the checker's. `snapshots` and `subscription` give the ipoIds of the GMP and
 * subscription snapshots by index. A streaming import, which cannot hold every snapshot,
 * passes the conflicts it needs for those (all of the IPOs', the first
 * {@link MAX_DATASET_PROBLEMS} of each snapshot part's), the two lists with only those
 * places filled, and the total as `conflictCount`.
 *
 * @example
 * ```ts
 * const conflicts = await store.writeDataset({ ipos, snapshots, subscription });
 * if (conflicts.length > 0) throw datasetConflictError(conflicts, ipos, snapshots, conflicts.length, subscription);
 * ```
 */
export function datasetConflictError(
  conflicts: readonly DatasetConflict[],
  ipos: ReadonlyArray<{ symbol: string | null; slug: string } | undefined>,
  snapshots: ReadonlyArray<{ ipoId: string } | undefined>,
  conflictCount: number = conflicts.length,
  subscription: ReadonlyArray<{ ipoId: string } | undefined> = [],
): IpokitError {
  const problems = conflictProblems(conflicts, ipos, snapshots, subscription);
  const count = Math.max(conflictCount, problems.length);
  return new IpokitError('ERR:DATASET', `The dataset has ${count} problem(s) with stored data; nothing was written.`, {
    problems: problems.slice(0, MAX_DATASET_PROBLEMS),
    problemCount: count,
  });
}

function conflictProblems(
  conflicts: readonly DatasetConflict[],
  ipos: ReadonlyArray<{ symbol: string | null; slug: string } | undefined>,
  snapshots: ReadonlyArray<{ ipoId: string } | undefined>,
  subscription: ReadonlyArray<{ ipoId: string } | undefined>,
): DatasetProblem[] {
  const ordered = [...conflicts].sort((a, b) => rank(a) - rank(b));
  return ordered.map((c) => {
    if (c.kind === 'unknown-ipo') {
      const ipoId = snapshots[c.snapshot]?.ipoId ?? '';
      return { path: `gmp[${c.snapshot}].ipoId`, message: `ipoId ${quote(ipoId)} names no IPO in the dataset or the store` };
    }
    if (c.kind === 'unknown-ipo-subscription') {
      const ipoId = subscription[c.snapshot]?.ipoId ?? '';
      return { path: `subscription[${c.snapshot}].ipoId`, message: `ipoId ${quote(ipoId)} names no IPO in the dataset or the store` };
    }
    if (c.kind === 'symbol-taken') {
      return { path: `ipos[${c.ipo}].symbol`, message: `symbol ${quote(ipos[c.ipo]?.symbol ?? '')} is already held by the stored IPO ${quote(c.holder)}` };
    }
    return { path: `ipos[${c.ipo}].slug`, message: `slug ${quote(ipos[c.ipo]?.slug ?? '')} is already held by the stored IPO ${quote(c.holder)}` };
  });
}

/**
 * Dataset order: IPOs (symbol before slug), then GMP snapshots, then subscription snapshots.
 * An index is below 2^32 (an array's), so each part's ranks stay below the next part's.
 */
function rank(c: DatasetConflict): number {
  if (c.kind === 'unknown-ipo') return 2 ** 33 + c.snapshot;
  if (c.kind === 'unknown-ipo-subscription') return 2 ** 34 + c.snapshot;
  return c.ipo * 2 + (c.kind === 'slug-taken' ? 1 : 0);
}
