/**
 * A source's answer, checked (docs/spec.md#sources): its dataset part by the core's dataset
 * rules, its GMP reports by the same price rule, every problem named in one pass.
 */
import { IpokitError, type DatasetProblem, type IpoStore } from '@ipokit/core';
import { IPO_FIELDS, quote, readGmpPrice, unstoredIpoIds, validateDatasetForStore, type DatasetRecords } from '@ipokit/core/backend';

/** How many problems a refusal lists at most (as a dataset's). */
export const MAX_PROBLEMS = 1_000;

const ID_RE = new RegExp(IPO_FIELDS.id.schema.pattern ?? '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$');
const REPORT_KEYS: ReadonlySet<string> = new Set(['ipoId', 'gmpPrice']);

/** A checked answer: its dataset records and its reports (prices in paise). */
export interface CheckedAnswer {
  data: DatasetRecords;
  reports: Array<{ ipoId: string; paise: number | null }>;
}

/**
 * Checks what a source's run resolved to, made at the run's instant `at`: the dataset part
 * (`ipos`, `gmp`, `subscription`) as `importDataset` checks a dataset, and `gmpReports`: an
 * array of `{ ipoId, gmpPrice }`, at most one per IPO, each IPO in the answer or the store,
 * each price as a dataset's source price; no GMP snapshot of the answer may be of a reported
 * IPO at `at` (the combined snapshot goes there).
 *
 * @throws {IpokitError} `ERR:DATASET` naming every problem (the first 1,000, dataset parts
 * first, then the reports), or `ERR:UNAVAILABLE` when the store fails.
 *
 * @example
 * ```ts
 * const { data, reports } = await checkAnswer({ gmpReports: [{ ipoId: '2026000001', gmpPrice: 42 }] }, store, Date.now());
 * // reports: [{ ipoId: '2026000001', paise: 4200 }]
 * ```
 */
export async function checkAnswer(answer: unknown, store: Pick<IpoStore, 'findIpo'>, at: number): Promise<CheckedAnswer> {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    const problem = { path: '$', message: `a source must answer an object with "ipos", "gmp", "subscription" and/or "gmpReports", got ${describe(answer)}` };
    throw refusal([problem], 1);
  }
  const { gmpReports, ...dataset } = answer as Record<string, unknown>;
  let data: DatasetRecords = { ipos: [], snapshots: [], subscription: [] };
  let problems: DatasetProblem[] = [];
  let count = 0;
  try {
    data = await validateDatasetForStore(dataset, store);
  } catch (err) {
    if (!(err instanceof IpokitError) || err.code !== 'ERR:DATASET') throw err;
    problems = [...(err.problems ?? [])];
    count = err.problemCount ?? problems.length;
  }
  const checked = checkReports(gmpReports);
  const reportProblems = checked.problems;
  if (checked.reports.length > 0) {
    // The combined snapshot of a reported IPO goes at `at`: the answer's own may not be there.
    const snapshotAt = new Set(data.snapshots.filter((s) => s.timestamp === at).map((s) => s.ipoId));
    for (const { index, report } of checked.reports) {
      if (snapshotAt.has(report.ipoId)) {
        reportProblems.push({ index, problem: { path: `gmpReports[${index}].ipoId`, message: `ipoId ${quote(report.ipoId)} has a GMP snapshot in this answer at the run's instant, where the snapshot combined from the reports goes` } });
      }
    }
  }
  if (checked.reports.length > 0 && (count > 0 || reportProblems.length > 0)) {
    // Refused anyway: a report of an IPO neither in the answer nor stored is named now, with
    // the rest (as validateDatasetForStore names snapshots'). A valid answer's are the store's
    // to find, in the write (a conflict of the combined snapshot): no lookup per report.
    const given = datasetIpoIds(dataset);
    const outside = [...new Set(checked.reports.map((r) => r.report.ipoId).filter((id) => !given.has(id)))];
    const unknown = new Set(outside.length === 0 ? [] : await unstoredIpoIds(store, outside));
    for (const { index, report } of checked.reports) {
      if (unknown.has(report.ipoId)) {
        reportProblems.push({ index, problem: { path: `gmpReports[${index}].ipoId`, message: `ipoId ${quote(report.ipoId)} names no IPO in the dataset or the store` } });
      }
    }
  }
  if (count > 0 || reportProblems.length > 0) {
    reportProblems.sort((a, b) => a.index - b.index);
    throw refusal([...problems, ...reportProblems.map((p) => p.problem)], count + reportProblems.length);
  }
  return { data, reports: checked.reports.map((r) => r.report) };
}

/** The ids of the answer's IPO records that have a well-formed id (whether or not the rest is valid). */
function datasetIpoIds(dataset: Record<string, unknown>): Set<string> {
  const ids = new Set<string>();
  const ipos = dataset['ipos'];
  if (!Array.isArray(ipos)) return ids;
  for (const ipo of ipos as unknown[]) {
    if (typeof ipo === 'object' && ipo !== null && typeof (ipo as { id?: unknown }).id === 'string') ids.add((ipo as { id: string }).id);
  }
  return ids;
}

function checkReports(value: unknown): {
  reports: Array<{ index: number; report: { ipoId: string; paise: number | null } }>;
  problems: Array<{ index: number; problem: DatasetProblem }>;
} {
  const reports: Array<{ index: number; report: { ipoId: string; paise: number | null } }> = [];
  const problems: Array<{ index: number; problem: DatasetProblem }> = [];
  if (value === undefined) return { reports, problems };
  if (!Array.isArray(value)) {
    problems.push({ index: -1, problem: { path: 'gmpReports', message: `gmpReports must be an array of { "ipoId", "gmpPrice" } objects, got ${describe(value)}` } });
    return { reports, problems };
  }
  const seen = new Map<string, number>();
  value.forEach((item: unknown, index) => {
    const add = (label: string, message: string) => problems.push({ index, problem: { path: `gmpReports[${index}]${label}`, message } });
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      add('', `a GMP report must be an object with "ipoId" and "gmpPrice", got ${describe(item)}`);
      return;
    }
    const record = item as Record<string, unknown>;
    for (const key of Object.keys(record)) if (!REPORT_KEYS.has(key)) add(`.${[...key.slice(0, 200)].slice(0, 100).join('')}`, `a GMP report has no field ${quote(key)} (its fields are "ipoId" and "gmpPrice")`);
    const ipoId = record['ipoId'];
    let id: string | null = null;
    if (typeof ipoId !== 'string') add('.ipoId', ipoId === undefined ? 'ipoId is required' : `ipoId must be a string, got ${describe(ipoId)}`);
    else if (!ID_RE.test(ipoId)) add('.ipoId', `ipoId ${quote(ipoId)} is not an IPO id: an id is 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-", starting with a letter or digit`);
    else {
      const earlier = seen.get(ipoId);
      if (earlier === undefined) {
        seen.set(ipoId, index);
        id = ipoId;
      } else add('.ipoId', `ipoId ${quote(ipoId)} is already reported by gmpReports[${earlier}]`);
    }
    const price = readGmpPrice(record['gmpPrice']);
    if ('problem' in price) add('.gmpPrice', price.problem);
    else if (id !== null && problems.every((p) => p.index !== index)) reports.push({ index, report: { ipoId: id, paise: price.paise } });
  });
  return { reports, problems };
}

function refusal(problems: DatasetProblem[], count: number): IpokitError {
  const first = problems[0];
  const where = first === undefined ? '' : `, ${count === 1 ? '' : 'the first '}at ${first.path}: ${first.message}`;
  return new IpokitError('ERR:DATASET', `The source's answer has ${count} problem${count === 1 ? '' : 's'}${where}.`, {
    problems: problems.slice(0, MAX_PROBLEMS),
    problemCount: count,
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
