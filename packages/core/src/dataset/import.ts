/**
 * Data in (docs/spec.md#datasets): importing and deleting IPOs, and the problems of a write
 * that conflicts with stored data. Every failure is an `IpokitError`.
 */
import { IpokitError, storeCall, type DatasetProblem } from '../model/errors.js';
import type { DatasetConflict, IpoStore } from '../model/types.js';
import { MAX_DATASET_PROBLEMS, validateDatasetForStore } from './dataset.js';

/**
 * Validates a whole dataset (a parsed JSON object) and upserts it: nothing is written
 * unless every record is valid and consistent with what is stored. On a store with webhook
 * endpoints, the write's events are recorded with it, stamped with `options.now` (default
 * the system clock).
 *
 * @example
 * ```ts
 * const { ipos, snapshots } = await importDataset(store, JSON.parse(await readFile('data.json', 'utf8')));
 * ```
 */
export async function importDataset(store: IpoStore, dataset: unknown, options: { now?: () => Date } = {}): Promise<{ ipos: number; snapshots: number }> {
  // A refused dataset names its snapshots of unknown IPOs with its other problems, at once.
  const { ipos, snapshots } = await validateDatasetForStore(dataset, store);
  const at = (options.now ?? (() => new Date()))().getTime();
  const conflicts = await storeCall(() => store.writeDataset({ ipos, snapshots }, { at }));
  if (conflicts.length > 0) throw datasetConflictError(conflicts, ipos, snapshots);
  return { ipos: ipos.length, snapshots: snapshots.length };
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
 * stored data (docs/spec.md#datasets): a snapshot whose IPO is neither in the dataset nor stored, a
 * symbol or slug held by a stored IPO the dataset does not replace. Its problems are in
 * dataset order (IPOs, symbol before slug, then snapshots), the first
 * {@link MAX_DATASET_PROBLEMS} of them. A streaming import, which cannot hold every
 * snapshot, passes the conflicts it needs for those (all of the IPOs', the first of the
 * snapshots'), `snapshots` with only their places filled, and the total as `conflictCount`.
 *
 * @example
 * ```ts
 * const conflicts = await store.writeDataset({ ipos, snapshots });
 * if (conflicts.length > 0) throw datasetConflictError(conflicts, ipos, snapshots);
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
      return { path: `gmp[${c.snapshot}].ipoId`, message: `ipoId ${JSON.stringify(ipoId)} names no IPO in the dataset or the store` };
    }
    if (c.kind === 'unknown-ipo-subscription') {
      const ipoId = subscription[c.snapshot]?.ipoId ?? '';
      return { path: `subscription[${c.snapshot}].ipoId`, message: `ipoId ${JSON.stringify(ipoId)} names no IPO in the dataset or the store` };
    }
    if (c.kind === 'symbol-taken') {
      return { path: `ipos[${c.ipo}].symbol`, message: `symbol ${JSON.stringify(ipos[c.ipo]?.symbol)} is already held by the stored IPO ${JSON.stringify(c.holder)}` };
    }
    return { path: `ipos[${c.ipo}].slug`, message: `slug ${JSON.stringify(ipos[c.ipo]?.slug)} is already held by the stored IPO ${JSON.stringify(c.holder)}` };
  });
}

/** Dataset order: IPOs (symbol before slug), then GMP snapshots, then subscription snapshots. */
function rank(c: DatasetConflict): number {
  if (c.kind === 'unknown-ipo') return 3 * 2 ** 32 + c.snapshot;
  if (c.kind === 'unknown-ipo-subscription') return 4 * 2 ** 32 + c.snapshot;
  return c.ipo * 2 + (c.kind === 'slug-taken' ? 1 : 0);
}
