/**
 * The one error class of ipokit and the code -> HTTP status table.
 */

/** Every error code ipokit uses, on the wire and in thrown errors. */
export type ErrorCode =
  | 'ERR:BADPARAM'
  | 'ERR:INVLDKEY'
  | 'ERR:PLAN'
  | 'ERR:NOTFOUND'
  | 'ERR:METHOD'
  | 'ERR:URITOOLONG'
  | 'ERR:RATELIMIT'
  | 'ERR:INTERNAL'
  | 'ERR:UNAVAILABLE'
  | 'ERR:DATASET';

/** One problem found in a dataset: where (`ipos[2].endDate`) and what. */
export interface DatasetProblem {
  path: string;
  message: string;
}

/** HTTP status of each code that can reach a client. `ERR:DATASET` never does. */
export const HTTP_STATUS_OF: Readonly<Record<Exclude<ErrorCode, 'ERR:DATASET'>, number>> = {
  'ERR:BADPARAM': 400,
  'ERR:INVLDKEY': 401,
  'ERR:PLAN': 403,
  'ERR:NOTFOUND': 404,
  'ERR:METHOD': 405,
  'ERR:URITOOLONG': 414,
  'ERR:RATELIMIT': 429,
  'ERR:INTERNAL': 500,
  'ERR:UNAVAILABLE': 503,
};

/** HTTP reason phrases used as the `title` of error bodies. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  414: 'URI Too Long',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Options of {@link IpokitError}. */
export interface IpokitErrorOptions {
  cause?: unknown;
  /** For `ERR:DATASET`: the first 1,000 problems, in dataset order. */
  problems?: DatasetProblem[];
  /** For `ERR:DATASET`: how many problems there were in all. */
  problemCount?: number;
  /** For `ERR:BADPARAM`: the parameter at fault. */
  parameter?: string;
}

/**
 * The single error class thrown by ipokit functions and stores.
 *
 * @example
 * ```ts
 * try {
 *   await importDataset(store, dataset);
 * } catch (err) {
 *   if (err instanceof IpokitError && err.code === 'ERR:DATASET') console.error(err.problems);
 * }
 * ```
 */
export class IpokitError extends Error {
  override readonly name = 'IpokitError';
  readonly code: ErrorCode;
  readonly problems?: DatasetProblem[];
  readonly problemCount?: number;
  readonly parameter?: string;

  constructor(code: ErrorCode, message: string, options: IpokitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.problems !== undefined) this.problems = options.problems;
    if (options.problemCount !== undefined) this.problemCount = options.problemCount;
    if (options.parameter !== undefined) this.parameter = options.parameter;
  }
}

/**
 * Tells whether a value is an {@link IpokitError}, also across copies of the package
 * (an ESM and a CJS build loaded side by side).
 *
 * @example
 * ```ts
 * if (isIpokitError(err, 'ERR:NOTFOUND')) return null;
 * ```
 */
export function isIpokitError(value: unknown, code?: ErrorCode): value is IpokitError {
  if (!(value instanceof Error) || value.name !== 'IpokitError') return false;
  return code === undefined || (value as IpokitError).code === code;
}
