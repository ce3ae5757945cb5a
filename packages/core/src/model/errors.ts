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
  | 'ERR:TOOLARGE'
  | 'ERR:URITOOLONG'
  | 'ERR:MEDIATYPE'
  | 'ERR:RATELIMIT'
  | 'ERR:INTERNAL'
  | 'ERR:UNAVAILABLE'
  | 'ERR:DATASET';

/** One problem found in a dataset: where (`ipos[2].endDate`) and what. */
export interface DatasetProblem {
  path: string;
  message: string;
}

/** The codes that can reach a client: every one but `ERR:DATASET`, which only functions throw. */
export type WireErrorCode = Exclude<ErrorCode, 'ERR:DATASET'>;

/**
 * The one table of what each code means on the wire: the HTTP status and the error body's
 * `title` (the status's reason phrase). An answer names only its code; the rest is looked up.
 */
export const WIRE_ERRORS: Readonly<Record<WireErrorCode, { readonly status: number; readonly title: string }>> = Object.freeze({
  'ERR:BADPARAM': { status: 400, title: 'Bad Request' },
  'ERR:INVLDKEY': { status: 401, title: 'Unauthorized' },
  'ERR:PLAN': { status: 403, title: 'Forbidden' },
  'ERR:NOTFOUND': { status: 404, title: 'Not Found' },
  'ERR:METHOD': { status: 405, title: 'Method Not Allowed' },
  'ERR:TOOLARGE': { status: 413, title: 'Content Too Large' },
  'ERR:URITOOLONG': { status: 414, title: 'URI Too Long' },
  'ERR:MEDIATYPE': { status: 415, title: 'Unsupported Media Type' },
  'ERR:RATELIMIT': { status: 429, title: 'Too Many Requests' },
  'ERR:INTERNAL': { status: 500, title: 'Internal Server Error' },
  'ERR:UNAVAILABLE': { status: 503, title: 'Service Unavailable' },
});

/** `meta.info` of the keyless partial list (docs/spec.md#list). */
export const KEYLESS_INFO = 'To get all IPOs, please provide a valid API key.';

/** Options of {@link IpokitError}. */
export interface IpokitErrorOptions {
  cause?: unknown;
  /** For `ERR:DATASET`: the first 1,000 problems, in dataset order. */
  problems?: DatasetProblem[];
  /** For `ERR:DATASET`: how many problems there were in all. */
  problemCount?: number;
  /** For `ERR:BADPARAM`: the parameter at fault. */
  parameter?: string;
  /**
   * For `ERR:UNAVAILABLE` thrown by a store: the store refused the call at once to shed load
   * (too many calls waiting), rather than failing it; `onStoreCall` reports it as `'shed'`.
   */
  shed?: boolean;
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
  readonly shed?: boolean;

  constructor(code: ErrorCode, message: string, options: IpokitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.problems !== undefined) this.problems = options.problems;
    if (options.problemCount !== undefined) this.problemCount = options.problemCount;
    if (options.parameter !== undefined) this.parameter = options.parameter;
    if (options.shed !== undefined) this.shed = options.shed;
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

/**
 * Runs a store call: an IpokitError passes as it is, any other failure is `ERR:UNAVAILABLE`.
 *
 * @example
 * ```ts
 * const account = await storeCall(() => store.getAccount(id));
 * ```
 */
export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isIpokitError(err)) throw err;
    throw new IpokitError('ERR:UNAVAILABLE', 'The store failed.', { cause: err });
  }
}

/**
 * A 400 error naming a parameter.
 *
 * @example
 * ```ts
 * throw badParam('from', 'from must not be after to.');
 * ```
 */
export function badParam(parameter: string, detail: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', detail, { parameter });
}
