/**
 * `upstreamSource`: mirrors another API with ipokit's interface (the hosted service, or another
 * ipokit server) through `@ipokit/client`, within that API's limits (docs/spec.md#sources).
 */
import { createClient, isIpokitApiError, type FetchLike, type Ipo, type IpokitClient, type WaitInfo } from '@ipokit/client';
import { STATUS_VALUES, type DatasetSnapshot, type DatasetSubscription, type IpoStatus } from '@ipokit/core';
import type { Source, SourceAnswer } from './types.js';

/** What {@link UpstreamSourceOptions.onWait} is told: the client's {@link WaitInfo} and the source's name. */
export interface UpstreamWaitInfo extends WaitInfo {
  /** The name of the source that waits. */
  source: string;
}

/**
 * Options of {@link upstreamSource}.
 *
 * @example
 * ```ts
 * const options: UpstreamSourceOptions = {
 *   baseUrl: 'https://api.example.com/ipos',
 *   apiKey: process.env.UPSTREAM_KEY ?? '',
 *   statuses: ['open', 'upcoming'],
 *   onWait: ({ source, ms }) => console.error(`${source}: rate limited, waiting ${Math.ceil(ms / 1000)} s`),
 * };
 * ```
 */
export interface UpstreamSourceOptions {
  /** The URL the upstream API is mounted at, e.g. `https://api.example.com/ipos`. */
  baseUrl: string;
  /** The upstream's API key, sent as `x-api-key`; it never appears in an error message. */
  apiKey: string;
  /** The source's name (1 to 64 of A-Z, a-z, 0-9, ".", "_", "-"). Default `'upstream'`. */
  name?: string;
  /** How often it runs, in milliseconds (at least 1,000). Default 300,000 (5 minutes). */
  everyMs?: number;
  /**
   * How long a run may take before it is cut, in milliseconds. Default 600,000 (10 minutes):
   * waiting out the upstream's 429s takes time (6 requests a minute by default).
   */
  timeoutMs?: number;
  /** The statuses whose lists are read, in this order. Default every status (`STATUS_VALUES` of `@ipokit/core`). */
  statuses?: readonly IpoStatus[];
  /**
   * Ask the lists for each IPO's latest GMP snapshot (`includeGmp=true`) and answer them as
   * GMP snapshots. It needs a pro key with the GMP add-on: any other key makes every run fail
   * with 403 `ERR:PLAN`. Default true.
   */
  includeGmp?: boolean;
  /** Answer each IPO's latest subscription snapshot (field 35 of the IPO object). Default true. */
  subscription?: boolean;
  /** The `fetch` the client calls (tests, other runtimes). Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** How the client waits before a retry after a 429 (default `setTimeout`); tests inject their own. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called before each wait after a 429 with the client's {@link WaitInfo} and the source's name. Default none. */
  onWait?: (info: UpstreamWaitInfo) => void;
}

/** The retries after a 429: generous, since the run's `timeoutMs` bounds a run anyway. */
const RETRY = { retries: 10, maxDelayMs: 60_000 } as const;
/** The largest page a paid or pro key gets by default: fewer requests per run. */
const PAGE_LIMIT = 100;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * A source that mirrors an API with ipokit's interface: each run reads every page of the list
 * of each status (`limit=100`, with `includeGmp=true` unless turned off), waiting out the
 * upstream's 429s with the client's retry (each wait told to `onWait`), and answers the IPO
 * objects as they came (a dataset ignores their derived fields), each IPO's latest GMP
 * snapshot and its latest subscription snapshot. An IPO met twice in a run (its status
 * changed between two lists) is answered once, as last seen. The run's `signal` reaches every
 * request and wait, so a cut run stops at once. An error of the upstream (401, 403 `ERR:PLAN`,
 * a network failure) rejects the run with a message naming the source, the upstream and the
 * status. Bad options throw a `TypeError` or `RangeError` at once.
 *
 * Snapshots the upstream received between two runs, other than the latest of each IPO, are
 * not seen: run it at least as often as the upstream's snapshots arrive to keep each one.
 *
 * @example
 * ```ts
 * const hosted = upstreamSource({
 *   baseUrl: 'https://api.example.com/ipos',
 *   apiKey: process.env.UPSTREAM_KEY ?? '',
 *   everyMs: 10 * 60_000,
 *   onWait: ({ source, ms }) => console.error(`${source}: waiting ${Math.ceil(ms / 1000)} s for the upstream's limits`),
 * });
 * // A collector runs it every everyMs; by hand, one run:
 * const answer = await hosted.collect({ now: new Date(), signal: AbortSignal.timeout(hosted.timeoutMs ?? 600_000) });
 * await importDataset(store, answer);
 * ```
 */
export function upstreamSource(options: UpstreamSourceOptions): Source {
  if (typeof options !== 'object' || options === null) throw new TypeError('upstreamSource needs an options object with baseUrl and apiKey.');
  const name = options.name ?? 'upstream';
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new TypeError(`upstreamSource: name must be 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-"; got ${JSON.stringify(name)}.`);
  }
  const everyMs = options.everyMs ?? 300_000;
  if (typeof everyMs !== 'number' || !Number.isSafeInteger(everyMs) || everyMs < 1_000) {
    throw new RangeError(`upstreamSource: everyMs must be a whole number of milliseconds >= 1000; got ${String(everyMs)}.`);
  }
  const timeoutMs = options.timeoutMs ?? 600_000;
  if (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new RangeError(`upstreamSource: timeoutMs must be a whole number of milliseconds >= 1; got ${String(timeoutMs)}.`);
  }
  if (typeof options.apiKey !== 'string' || options.apiKey === '') {
    throw new TypeError('upstreamSource: apiKey must be the upstream API key (a non-empty string): without one the list answers a partial page.');
  }
  const statuses = checkStatuses(options.statuses);
  const includeGmp = flag('includeGmp', options.includeGmp);
  const withSubscription = flag('subscription', options.subscription);
  const onWait = options.onWait;
  if (onWait !== undefined && typeof onWait !== 'function') throw new TypeError('upstreamSource: onWait must be a function.');

  const client = createClient({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    retry: RETRY,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
    ...(onWait === undefined ? {} : { onWait: (info: WaitInfo) => onWait({ ...info, source: name }) }),
  });
  const upstream = `upstream source "${name}" (${redact(options.baseUrl)})`;

  return {
    name,
    everyMs,
    timeoutMs,
    async collect({ signal }) {
      if (signal.aborted) throw abortReason(signal);
      try {
        const ipos = await untilAborted(readAll(client, statuses, includeGmp, signal), signal);
        return answerOf(ipos, includeGmp, withSubscription);
      } catch (error) {
        if (signal.aborted) throw abortReason(signal);
        throw runError(upstream, error, userInfo(options.baseUrl));
      }
    },
  };
}

// ---------------------------------------------------------------------------------------

/** Every IPO of every status's list, once each (the last seen), in the order first met. */
async function readAll(client: IpokitClient, statuses: readonly IpoStatus[], includeGmp: boolean, signal: AbortSignal): Promise<Ipo[]> {
  const byId = new Map<string, Ipo>();
  for (const status of statuses) {
    const params = includeGmp ? { status, limit: PAGE_LIMIT, includeGmp: true, signal } : { status, limit: PAGE_LIMIT, signal };
    for await (const page of client.pages(params)) {
      for (const ipo of page.ipos) byId.set(ipo.id, ipo);
      // A custom fetch may ignore the signal: no further request once the run is cut.
      if (signal.aborted) throw abortReason(signal);
    }
  }
  return [...byId.values()];
}

/** The answer: the IPOs as they came, with their latest GMP and subscription snapshots as a dataset gives them. */
function answerOf(ipos: Ipo[], includeGmp: boolean, withSubscription: boolean): SourceAnswer {
  const answer: SourceAnswer = { ipos };
  if (includeGmp) {
    const gmp: DatasetSnapshot[] = [];
    for (const ipo of ipos) {
      if (ipo.gmp === undefined || ipo.gmp === null) continue;
      gmp.push({ ipoId: ipo.id, timestamp: ipo.gmp.lastUpdatedAt, sources: ipo.gmp.sources.map((s) => ({ name: s.name, gmpPrice: s.gmpPrice })) });
    }
    answer.gmp = gmp;
  }
  if (withSubscription) {
    const subscription: DatasetSubscription[] = [];
    for (const ipo of ipos) {
      if (ipo.subscription === null || ipo.subscription === undefined) continue;
      subscription.push({ ipoId: ipo.id, timestamp: ipo.subscription.asOf, times: { ...ipo.subscription.times } });
    }
    answer.subscription = subscription;
  }
  return answer;
}

/** The error a failed run rejects with: the upstream, the status and code when it answered, and the cause. */
function runError(upstream: string, error: unknown, secret: string | null): Error {
  if (isIpokitApiError(error)) {
    const hint =
      error.status === 401
        ? ': check the source\'s apiKey'
        : error.code === 'ERR:PLAN'
          ? ': includeGmp needs a pro key with the GMP add-on (or set includeGmp: false)'
          : error.status === 429
            ? ': still rate limited after the retries'
            : '';
    return new Error(`${upstream} answered HTTP ${error.status} ${error.code}${hint}. ${error.detail}`, { cause: error });
  }
  let why = error instanceof Error ? error.message : String(error);
  // fetch may quote the URL, user info and all.
  if (secret !== null) why = why.split(secret).join('');
  return new Error(`${upstream} could not be read (no HTTP status: the request failed): ${why}`, { cause: error });
}

/** Rejects with the signal's reason as soon as it aborts, even when a custom `fetch` ignores it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

const USER_INFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/@]*@)/i;

/** The base URL without user info, so that no password reaches a message. */
function redact(baseUrl: string): string {
  return baseUrl.replace(USER_INFO, '$1');
}

/** The base URL's user info (`user:password@`), or null. */
function userInfo(baseUrl: string): string | null {
  return USER_INFO.exec(baseUrl)?.[2] ?? null;
}

function checkStatuses(value: readonly IpoStatus[] | undefined): readonly IpoStatus[] {
  if (value === undefined) return STATUS_VALUES;
  if (!Array.isArray(value) || value.length === 0) throw new TypeError(`upstreamSource: statuses must be a non-empty array of ${STATUS_VALUES.join(', ')}.`);
  for (const status of value) {
    if (!(STATUS_VALUES as readonly unknown[]).includes(status)) {
      throw new TypeError(`upstreamSource: statuses holds ${JSON.stringify(status)}; each must be one of ${STATUS_VALUES.join(', ')}.`);
    }
  }
  return [...new Set(value)];
}

function flag(name: string, value: boolean | undefined): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') throw new TypeError(`upstreamSource: ${name} must be a boolean.`);
  return value;
}
