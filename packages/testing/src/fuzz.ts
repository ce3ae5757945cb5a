/**
 * Fuzzing over real HTTP (docs/spec.md#errors, #requests; issue "reliability and security under hostile
 * input"): fast-check generates hostile but valid HTTP/1.1 requests under the mount (odd
 * paths, percent-encoding, unicode, long and repeated parameters, huge numbers, impossible
 * dates, odd header values), sends them with `node:http` so the request-target goes out
 * verbatim, and checks every response against the contract: never a 5xx, only the
 * contract's statuses, every error in the one error shape with the code and title of its
 * status, the common headers, `Content-Length`, HEAD without a body (and as GET would
 * answer), 2xx bodies of the route's shape. An oracle written from the contract's text
 * (not from the core) also predicts the outcome of the order of evaluation (docs/spec.md#requests):
 * 414, unknown path, method, key, then which parameter a 400 names, the 403s of the plan,
 * which fixture IPO an identifier resolves to (docs/spec.md#one-ipo) and the GMP range (docs/spec.md#gmp-series).
 *
 * What is NOT generated, and why (each would be answered by Node's own HTTP parser or
 * client before any middleware runs, so it would test Node, not this library):
 * - bytes outside 0x21-0x7E in the request-target: `http.request` refuses spaces, control
 *   characters and code points above U+00FF, and the server's parser (llhttp, strict)
 *   answers DEL and every byte >= 0x80 with a bare `400` (so non-ASCII travels
 *   percent-encoded, as a URL must carry it);
 * - control characters (other than HTAB) and DEL in header values: the client refuses
 *   them and the parser answers a bare `400`; header names that are not tokens, likewise;
 * - `Expect` (Node answers `417` itself to anything but 100-continue), `Transfer-Encoding`
 *   and a `Content-Length` that does not match the body (request framing: a bare `400`,
 *   or a server waiting for bytes that never come), `Upgrade` and the `CONNECT` method
 *   (Node hands those to 'upgrade'/'connect' listeners, never to the app), and methods
 *   llhttp does not know (a bare `400`; the client upper-cases methods anyway);
 * - requests whose request line and headers pass 16 KiB (`--max-http-header-size`: a bare
 *   `431`): the generator keeps them under 14,000 bytes.
 * Should any request still be refused by Node (a bare 400/431 with `Connection: close`
 * and no body, which the library never sends), it is counted as `refusedByNode`, not as a
 * failure.
 *
 * "Ambiguous" requests: a target holding `#`, or an absolute-form target holding `\`.
 * Express hands the core the raw target; Koa's `ctx.path`/`ctx.querystring` come from
 * `url.parse` for such targets, which drops the fragment and turns `\` into `/` (and
 * Express 4 routes absolute-form targets through it too), so the adapters see different
 * paths (a parity defect, reported). They get every check but those that depend on which
 * route was asked, and they are left out of {@link compareFuzzReports}.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import type { IpoRouterOptions } from '@ipokit/core';
import { GMP_FIELDS } from '@ipokit/core';
import { IPO_FIELDS } from '@ipokit/core/backend';
import type { GmpField, GmpInterval, Store } from '@ipokit/core';
import { EXPECTED_ORDER, FIXTURE_NOW, FIXTURE_TODAY, expectedIpo, expectedSeries, expectedSubscriptionSeries, fixtureDataset, seedFixture, type FixtureKeys } from './http-fixture.js';
import type { HttpTarget, StartedTarget } from './http-suite.js';
import { SPEC_CODES as CODES, SPEC_TITLES as TITLES } from './spec-error-tables.js';

// ---------------------------------------------------------------------------------------
// Public surface

/** The name of a fixture key ({@link FixtureKeys}). */
export type FixtureKeyName = keyof FixtureKeys;

/**
 * One piece of a header value: literal text (each character one byte: HTAB, 0x20-0x7E or
 * 0x80-0xFF), or a fixture key, known only once the fixture is seeded, filled in at send
 * time (optionally upper- or lower-cased, or cut short).
 */
export type HeaderPart = string | { key: FixtureKeyName; transform?: 'upper' | 'lower' | 'truncate' };

/** A generated request, before the fixture keys and the server's address are known. */
export interface FuzzRequest {
  /** GET mostly; HEAD; other methods Node's parser knows. */
  method: string;
  /** Bit i set: letter i of the mount path is sent in the other case (when the mount ignores case). */
  mountCase: number;
  /** Send the request-target in absolute-form (`http://127.0.0.1:port/ipos/...`). */
  absoluteForm: boolean;
  /** The path below the mount as sent: `''` or starting with `/`; never holds `?`. */
  path: string;
  /** The query as sent, without `?`; null sends no `?` at all. */
  query: string | null;
  /** When set, an unknown parameter pads the request-target to exactly this many bytes. */
  padTo: number | null;
  /** The `x-api-key` header: its name as written and one value per header line; null sends none. */
  apiKey: { name: string; lines: HeaderPart[][] } | null;
  /** Other header lines, names unique (case-insensitively) and never `x-api-key`. */
  headers: Array<[string, string]>;
  /** A request body (sent with a matching Content-Length), or null. */
  body: string | null;
  /** How far the clock moves before this request, in runs with the contract's limits. */
  advanceMs: number;
}

/** A request as it went out, everything filled in. */
export interface SentRequest {
  method: string;
  /** The request-target exactly as sent (the origin included in absolute-form). */
  target: string;
  /** The part of the target below the mount: the path, then `?` and the query if any. */
  below: string;
  absoluteForm: boolean;
  /** Header lines in the order sent (`x-api-key` lines included). */
  headerLines: Array<[string, string]>;
  body: string | null;
  /**
   * `x-api-key` as the server sees it: each line trimmed of spaces and tabs, the lines
   * joined with `, ` (Node's rule); null when no line was sent.
   */
  apiKey: string | null;
}

/** A response as received. */
export interface FuzzResponse {
  status: number;
  /** Lowercased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

/** What {@link checkFuzzResponse} needs to know about the server it talks to. */
export interface FuzzExpectations {
  /** The fixture keys of the store (to tell valid keys, and to check none leaks). */
  keys: FixtureKeys;
  /** The router's `maxUrlLength` (default 4,096). */
  maxUrlLength: number;
  /**
   * The quotas a `RateLimit-Limit` header or a 429's `meta.quotaPerMinute` may show;
   * empty when every window is off (then no RateLimit-* header may appear).
   */
  quotas: readonly number[];
  /** Whether a 429 may happen (false under quotas too large to reach). */
  rateLimited: boolean;
  /**
   * The router's clock (epoch ms) when it stands still, for the checks that depend on it
   * (GMP ranges ending now); null when it moves. Either way it is at or after
   * {@link FIXTURE_NOW}, after the default GMP preview ended.
   */
  now: number | null;
}

/** Options of {@link fuzzHttp}. */
export interface FuzzHttpOptions {
  target: HttpTarget;
  /** Returns an EMPTY store; the fixture is imported into it. */
  createStore: () => Store | Promise<Store>;
  /** Called at the end with the store `createStore` returned. */
  destroyStore?: (store: Store) => void | Promise<void>;
  /** How many generated requests to send (HEAD companions and replays come on top). */
  runs: number;
  /** fast-check seed; random when absent (it is in the report and in every failure). */
  seed?: number;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /**
   * Share of the runs sent last, to a router with the contract's default limits (6 per
   * minute, GMP 3) and a clock that moves 0-3 s per request (now and then a minute), so
   * that 429s happen and windows drain.
   * The rest go to a router whose quotas are too large to reach. Default 0.1.
   */
  limitedShare?: number;
  /**
   * Whether the target matches its mount ignoring case, as Express's `app.use(path)` and
   * the Koa router's `prefix` do (default true; false for koa-mount).
   */
  mountIgnoresCase?: boolean;
  /** Called now and then with the number of runs done. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Defects already reported: a response whose problems one of these recognises is
   * counted in {@link FuzzReport.knownBugs} instead of failing the run.
   */
  knownBugs?: readonly KnownBug[];
}

/** A defect of the library that was found and reported, recognised by its symptoms. */
export interface KnownBug {
  /** Short id, e.g. `'gmp-field-before-interval'`. */
  id: string;
  /** What is wrong, and where. */
  description: string;
  /** True when these problems of this request are this defect (and nothing else). */
  matches(problems: readonly string[], request: SentRequest, response: FuzzResponse | null): boolean;
}

/** Counts by status code, e.g. `{ "200": 512, "400": 230 }`. */
export type StatusCounts = Record<string, number>;

/** What a fuzzing run did. */
export interface FuzzReport {
  target: string;
  seed: number;
  /** Generated requests sent. */
  runs: number;
  /** Every request sent: runs, HEAD companions and replays. */
  requests: number;
  statuses: StatusCounts;
  /** Answered by Node's HTTP parser before any middleware (bare 400/431); not failures. */
  refusedByNode: number;
  /** Runs by the route their path names (docs/spec.md#requests), `ambiguous` when adapters may differ. */
  routes: Record<FuzzRoute, number>;
  phases: Array<{ name: string; runs: number; statuses: StatusCounts }>;
  /** HEAD requests answered again by a GET and compared (same status and headers, Content-Length of the GET body). */
  headCompared: number;
  /** Responses that broke the contract in a way a {@link KnownBug} recognised, by its id. */
  knownBugs: Record<string, number>;
  /**
   * One entry per run of the first phase (its clock stands still, so nothing depends on
   * the order of requests): `status:hash-of-body` (HEAD: of Content-Length), `''` for an
   * ambiguous path. Every adapter on every store must give the same list for the same
   * seed and runs: compare them with {@link compareFuzzReports}.
   */
  responses: string[];
  elapsedMs: number;
}

/** A response that broke the contract: what was sent, what came back, and why it is wrong. */
export class FuzzViolation extends Error {
  override readonly name = 'FuzzViolation';
  constructor(
    message: string,
    readonly problems: string[],
    /** The request as sent, as text (fixture keys shown as `<keys.name>`). */
    readonly request: string,
    /** The response, as text (body cut at 2,000 bytes). */
    readonly response: string,
    readonly seed: number,
    /** Where it was: phase and index of the run. */
    readonly position: string,
    /** Whether sending the same request again, alone, broke the contract again. */
    readonly reproduced: boolean | null,
  ) {
    super(message);
  }
}

/**
 * Defects of the library this fuzzer found, as reported (remove an entry when its fix
 * lands: the fuzzer then fails on any recurrence). Pass them as `knownBugs` to keep a run
 * going past them; each is counted in {@link FuzzReport.knownBugs}.
 *
 * @example
 * ```ts
 * await fuzzHttp({ target, createStore, runs: 1000, knownBugs: REPORTED_BUGS });
 * ```
 */
export const REPORTED_BUGS: readonly KnownBug[] = [
  // Both bugs this fuzzer found (gmp-field-before-interval: a 400 naming field before
  // interval was checked; gmp-to-year-0: to=0000-01-01 without from) are fixed; add new
  // ones here while they are open.
];

/**
 * The arbitrary of hostile requests under the mount (see the module comment for what is
 * deliberately left out).
 *
 * @example
 * ```ts
 * import fc from 'fast-check';
 * const [request] = fc.sample(fuzzRequestArbitrary(), { numRuns: 1, seed: 42 });
 * request.method; // e.g. 'GET'
 * ```
 */
export function fuzzRequestArbitrary(): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methodArb,
      mountCase: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.nat(31) }),
      absoluteForm: fc.oneof({ weight: 19, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      path: pathArb,
      query: queryArb,
      padTo: fc.oneof(
        { weight: 30, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom(4095, 4096, 4097, 4098, 4200, 9000) },
      ),
      apiKey: apiKeyArb,
      headers: otherHeadersArb,
      body: fc.oneof({ weight: 19, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: bodyArb }),
      advanceMs: fc.oneof({ weight: 30, arbitrary: fc.nat(3_000) }, { weight: 1, arbitrary: fc.constantFrom(0, 1, 59_999, 60_000, 61_000) }),
    })
    .filter((r) => estimatedHeadBytes(r) < 14_000 && TARGET_CHARS.test(r.path) && (r.query === null || TARGET_CHARS.test(r.query)));
}

/**
 * Checks one response against the contract; returns the problems found (none: it
 * conforms). Never 5xx (the store is healthy, so a 500 or 503 is a failure), a status of
 * the contract, the error body `{status,title,detail,code,meta?}` with the code and title
 * of the status and the meta of docs/spec.md#errors, the common headers, `Content-Length` equal to
 * the body bytes, no body on HEAD, a 2xx body of the route's shape, and the order of
 * evaluation of docs/spec.md#requests.
 *
 * @example
 * ```ts
 * const problems = checkFuzzResponse(sent, response, { keys, maxUrlLength: 4096, quotas: [6, 3], rateLimited: true, now: null });
 * if (problems.length > 0) throw new Error(problems.join('\n'));
 * ```
 */
export function checkFuzzResponse(req: SentRequest, res: FuzzResponse, x: FuzzExpectations): string[] {
  const problems: string[] = [];
  const fail = (p: string): void => {
    problems.push(p);
  };
  const h = res.headers;
  const text = res.body.toString('utf8');
  const head = req.method === 'HEAD';

  // -- every response
  if (res.status >= 500) fail(`a ${res.status}: the store is healthy, so no 5xx may happen`);
  if (!ALL_STATUSES.includes(res.status)) fail(`status ${res.status} is none of the contract's (${ALL_STATUSES.join(', ')})`);
  if (h['content-type'] !== JSON_TYPE) fail(`content-type is ${show(h['content-type'])}, not ${JSON_TYPE}`);
  if (h['cache-control'] !== CACHE_CONTROL) fail(`cache-control is ${show(h['cache-control'])}, not ${CACHE_CONTROL}`);
  if (h['etag'] !== undefined) fail('an ETag was sent');
  if (h['transfer-encoding'] !== undefined) fail(`transfer-encoding ${show(h['transfer-encoding'])} was sent instead of a Content-Length`);
  const length = h['content-length'];
  if (length === undefined || !/^[0-9]+$/.test(length)) fail(`content-length is ${show(length)}`);
  if (head) {
    if (res.body.length !== 0) fail(`a HEAD answer has a body of ${res.body.length} bytes`);
  } else if (length !== String(res.body.length)) {
    fail(`content-length ${show(length)} but the body has ${res.body.length} bytes`);
  }
  for (const [name, key] of Object.entries(x.keys)) {
    if (text.includes(key)) fail(`the body holds the key ${name}`);
  }
  if (req.apiKey !== null && req.apiKey.length >= 12 && res.status !== 200 && text.includes(req.apiKey)) fail('the body quotes the x-api-key that was sent');
  if (/\n\s+at |node_modules|\.ts:\d|\.js:\d/.test(text)) fail('the body looks like a stack trace');

  // -- what docs/spec.md#requests says about this request
  const expected = expectationsOf(req, x);
  const rate = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((n) => h[n]);
  const stepOne = res.status === 414 || res.status === 405 || (res.status === 404 && expected.route === 'unknown');
  if (stepOne) {
    for (const n of RATE_HEADERS) if (h[n] !== undefined) fail(`${n} on a ${res.status} (step 1: no window counts it)`);
  } else if (res.status < 500 && !(res.status === 404 && expected.route === 'ambiguous')) {
    if (x.quotas.length === 0) {
      for (const n of RATE_HEADERS) if (h[n] !== undefined) fail(`${n} although every window is off`);
    } else {
      const [limit, remaining, reset] = rate;
      if (limit === undefined || !x.quotas.map(String).includes(limit)) fail(`ratelimit-limit is ${show(limit)}, not one of ${x.quotas.join(', ')}`);
      if (remaining === undefined || !/^[0-9]+$/.test(remaining) || Number(remaining) > Number(limit)) fail(`ratelimit-remaining is ${show(remaining)}`);
      if (reset === undefined || !/^[0-9]+$/.test(reset) || Number(reset) > 60) fail(`ratelimit-reset is ${show(reset)}`);
      if (res.status !== 429 && h['retry-after'] !== undefined) fail(`retry-after on a ${res.status}`);
    }
  }
  if (expected.allowed !== null && !expected.allowed.includes(res.status)) {
    fail(`status ${res.status}, but the contract allows only ${expected.allowed.join(', ')} here (${expected.why})`);
  }
  if (res.status === 405 && h['allow'] !== 'GET, HEAD') fail(`a 405 with Allow ${show(h['allow'])}, not "GET, HEAD"`);
  if (res.status === 429 && !x.rateLimited) fail('a 429 under quotas too large to reach');

  if (head) {
    // HEAD answers as GET would: the Content-Length of the body GET sends
    const text = expected.body?.text;
    if (res.status === 200 && text !== undefined && length !== String(Buffer.byteLength(text))) fail(`a HEAD with content-length ${show(length)}, but the GET body has ${Buffer.byteLength(text)} bytes`);
    return problems;
  }

  // -- the body
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail(`the body is not JSON: ${show(text.slice(0, 200))}`);
    return problems;
  }
  if (JSON.stringify(body) !== text) fail('the body is not compact JSON (re-serialising it changes the bytes)');
  if (res.status >= 200 && res.status < 300) {
    if (res.status !== 200) fail(`a ${res.status}: the only success is 200`);
    checkSuccessBody(body, expected, fail);
  } else {
    checkErrorBody(body, res, expected, fail);
  }
  return problems;
}

/**
 * Sends generated requests to one adapter on one store and checks every answer
 * ({@link checkFuzzResponse}). Seeds the fixture, starts the target, sends
 * `runs * (1 - limitedShare)` requests to a router with quotas too large to reach (every
 * HEAD is also sent as GET and compared), then the rest to a router with the contract's
 * default limits and a moving clock (429s). Throws a {@link FuzzViolation} on the first
 * response that breaks the contract (after sending the same request once more, alone).
 *
 * @example
 * ```ts
 * const report = await fuzzHttp({ target: expressTarget(EXPRESS_VERSIONS[0]!), createStore: () => memoryStore(), runs: 1000 });
 * console.log(report.statuses); // { '200': 331, '400': 262, ... }
 * ```
 */
export async function fuzzHttp(options: FuzzHttpOptions): Promise<FuzzReport> {
  const seed = options.seed ?? (Math.random() * 0x7fffffff) | 0;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const limitedRuns = Math.round(options.runs * Math.min(1, Math.max(0, options.limitedShare ?? 0.1)));
  const phases: PhasePlan[] = [
    { name: 'quotas out of reach', runs: options.runs - limitedRuns, limited: false },
    { name: 'contract limits', runs: limitedRuns, limited: true },
  ];
  const report: FuzzReport = {
    target: options.target.name,
    seed,
    runs: 0,
    requests: 0,
    statuses: {},
    refusedByNode: 0,
    routes: { list: 0, ipo: 0, gmp: 0, subscription: 0, unknown: 0, ambiguous: 0 },
    phases: [],
    headCompared: 0,
    knownBugs: {},
    responses: [],
    elapsedMs: 0,
  };
  const started = performance.now();
  const store = await options.createStore();
  const errors: unknown[] = [];
  const clock = { now: FIXTURE_NOW };
  let server: StartedTarget | null = null;
  try {
    const { keys } = await seedFixture(store);
    const arbitrary = fuzzRequestArbitrary();
    let offset = 0;
    for (const phase of phases) {
      if (phase.runs === 0) continue;
      const routerOptions: IpoRouterOptions = {
        now: () => new Date(clock.now),
        onError: (error) => {
          errors.push(error);
        },
        ...(phase.limited ? {} : { limits: OUT_OF_REACH }),
      };
      server = await options.target.start(store, routerOptions);
      const base = new URL(server.baseUrl);
      const ctx: PhaseContext = {
        host: base.hostname,
        port: Number(base.port),
        mount: base.pathname.replace(/\/$/, ''),
        mountIgnoresCase: options.mountIgnoresCase ?? true,
        keys,
        expectations: {
          keys,
          maxUrlLength: 4096,
          quotas: phase.limited ? [DEFAULT_QUOTA, DEFAULT_GMP_QUOTA] : [GENEROUS],
          rateLimited: phase.limited,
          now: phase.limited ? null : clock.now,
        },
        agent: new http.Agent({ keepAlive: true, maxSockets: concurrency }),
      };
      const counts: StatusCounts = {};
      try {
        await runPhase({ phase, ctx, arbitrary, seed, offset, concurrency, clock, errors, report, counts, onProgress: options.onProgress, total: options.runs, knownBugs: options.knownBugs ?? [] });
      } finally {
        ctx.agent.destroy();
        const running = server;
        server = null;
        await running.close();
      }
      report.phases.push({ name: phase.name, runs: phase.runs, statuses: counts });
      offset += phase.runs;
    }
  } finally {
    try {
      await server?.close();
    } finally {
      await options.destroyStore?.(store);
    }
  }
  report.elapsedMs = Math.round(performance.now() - started);
  return report;
}

/**
 * Renders a request as HTTP/1.1 text, fixture keys as `<keys.name>`.
 *
 * @example
 * ```ts
 * describeRequest(request); // 'GET /ipos/ORBIT HTTP/1.1\r\nx-api-key: <keys.paid>\r\n...'
 * ```
 */
export function describeRequest(r: FuzzRequest, origin = 'http://127.0.0.1:PORT', mount = '/ipos', mountIgnoresCase = true, compact = false): string {
  const below = padded(r, origin, mountOf(r, mount, mountIgnoresCase));
  const target = (r.absoluteForm ? origin : '') + mountOf(r, mount, mountIgnoresCase) + below;
  // a long run of one character reads as `<2000 x "A">` in reports (exact, but short)
  const shown = compact ? target.replace(/(.)\1{15,}/g, (run, c: string) => `<${run.length} x ${JSON.stringify(c)}>`) : target;
  const lines = [`${r.method} ${shown} HTTP/1.1`];
  for (const [name, value] of headerLinesOf(r, null)) lines.push(`${name}: ${printable(value)}`);
  return `${lines.join('\n')}\n${r.body === null ? '' : `\n${printable(r.body)}`}`;
}

/**
 * The request {@link fuzzHttp} generates for run `index` (counted over all phases) of a
 * seed, e.g. to show the request behind a difference that {@link compareFuzzReports} found.
 *
 * @example
 * ```ts
 * describeRequest(generatedRequest(42, 1234));
 * ```
 */
export function generatedRequest(seed: number, index: number): FuzzRequest {
  const batch = fc.sample(fuzzRequestArbitrary(), { seed: batchSeed(seed, index), numRuns: BATCH });
  return batch[index % BATCH] as FuzzRequest;
}

/**
 * Where two runs of the same seed and runs (other adapters or stores) answered the first
 * phase differently: the run indexes and both fingerprints (status and body hash). The
 * contract wants the same bytes from every adapter and every store, so this is empty.
 *
 * @example
 * ```ts
 * compareFuzzReports(expressOnMemory, koaOnPostgres); // []
 * ```
 */
export function compareFuzzReports(a: FuzzReport, b: FuzzReport): Array<{ index: number; a: string; b: string }> {
  if (a.seed !== b.seed) throw new Error(`compareFuzzReports: seeds differ (${a.seed}, ${b.seed})`);
  const out: Array<{ index: number; a: string; b: string }> = [];
  const n = Math.min(a.responses.length, b.responses.length);
  for (let i = 0; i < n; i++) {
    const x = a.responses[i] ?? '';
    const y = b.responses[i] ?? '';
    if (x !== '' && y !== '' && x !== y) out.push({ index: i, a: x, b: y });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Constants of the contract

const JSON_TYPE = 'application/json; charset=utf-8';
const CACHE_CONTROL = 'private, no-store';
const KEYLESS_INFO = 'To get all IPOs, please provide a valid API key.';
const ALL_STATUSES: readonly number[] = [200, 400, 401, 403, 404, 405, 414, 429];
const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'] as const;
const GENEROUS = 1_000_000;
const DEFAULT_QUOTA = 6;
const DEFAULT_GMP_QUOTA = 3;
const OUT_OF_REACH: NonNullable<IpoRouterOptions['limits']> = {
  free: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
  paid: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
  pro: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
  keyless: { perMinute: GENEROUS },
};
const MAX_LIST_LIMIT: Readonly<Record<Plan, number>> = { free: 1, paid: 100, pro: 100, proGmp: 100 };
const LIST_PARAMS = ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'q', 'page', 'limit', 'includeGmp'];
const IPO_PARAMS = ['identifier', 'includeGmp'];
const GMP_PARAMS = ['identifier', 'interval', 'field', 'from', 'to'];
const SUBSCRIPTION_PARAMS = ['identifier', 'from', 'to'];
/** The longest `q`, in code points. */
const MAX_Q = 64;
/** The subscription route's default start: the earliest instant a dataset may hold. */
const EARLIEST = Date.UTC(2000, 0, 1);
/** A subscription series point's keys, in wire order. */
const POINT_KEYS = 'timestamp,qib,nii,bnii,snii,retail,employee,shareholder,total';
const STATUSES = ['open', 'upcoming', 'listed', 'closed', 'announced'];
const INTERVALS = ['5m', '10m', '15m', '30m', 'hourly', 'daily', 'weekly'];
const FIELDS: readonly string[] = GMP_FIELDS;
/** The IPO object's keys but `gmp`, in wire order: the one definition's (the serializer is checked against it). */
const IPO_KEYS = Object.keys(IPO_FIELDS).filter((key) => key !== 'gmp');
const PLAN_OF: Readonly<Record<FixtureKeyName, Plan | null>> = {
  free: 'free',
  paid: 'paid',
  paid2: 'paid',
  pro: 'pro',
  proGmp: 'proGmp',
  revoked: null,
  wrong: null,
};
const VALID_KEYS: readonly FixtureKeyName[] = ['free', 'paid', 'paid2', 'pro', 'proGmp'];

// ---------------------------------------------------------------------------------------
// Generators

const hexByte = (b: number, lower: boolean): string => {
  const hex = b.toString(16).padStart(2, '0');
  return `%${lower ? hex : hex.toUpperCase()}`;
};
/** What a request-target may carry (see the module comment). */
const TARGET_CHARS = /^[\x21-\x7e]*$/;
/** Printable ASCII as the request-target may carry it (0x21-0x7E). */
const PRINTABLE = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i));
const SEGMENT_CHARS = PRINTABLE.filter((c) => c !== '/' && c !== '?' && c !== '#');
const VALUE_CHARS = PRINTABLE.filter((c) => c !== '&' && c !== '#');
/** The fixture's IPOs, by the fields that identify them. */
const FIXTURE_IPOS: ReadonlyArray<{ id: string; name: string; symbol: string | null; slug: string; type: string; exchanges: readonly string[]; startDate: string | null; endDate: string | null }> = (
  fixtureDataset().ipos ?? []
).map((i) => ({
  id: i.id,
  name: i.name,
  symbol: typeof i.symbol === 'string' ? i.symbol : null,
  slug: i.slug,
  type: i.type,
  exchanges: i.exchanges ?? [],
  startDate: i.startDate ?? null,
  endDate: i.endDate ?? null,
}));
/** Every identifier of the fixture: ids, symbols and slugs. */
const FIXTURE_IDENTIFIERS: readonly string[] = FIXTURE_IPOS.flatMap((i) => (i.symbol === null ? [i.id, i.slug] : [i.id, i.slug, i.symbol]));

/** Flips the case of the letters whose bit is set, and percent-encodes the characters whose (other) bit is set. */
function mangle(text: string, caseMask: number, encodeMask: number, lowerHex: boolean): string {
  let out = '';
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    let c = chars[i] as string;
    if ((caseMask >>> (i % 31)) & 1) c = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
    if ((encodeMask >>> (i % 31)) & 1) c = Array.from(Buffer.from(c, 'utf8'), (b) => hexByte(b, lowerHex)).join('');
    out += c;
  }
  return out;
}

const maskArb = fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.nat() }, { weight: 1, arbitrary: fc.constant(0x7fffffff) });
const rareMaskArb = fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat() });

/** A word with its case and encoding mangled (`ORBIT`, `oRbIt`, `%4FRBIT`). */
function mangled(words: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(words, maskArb, rareMaskArb, fc.boolean()).map(([w, c, e, lower]) => mangle(w, c, e, lower));
}

const methodArb = fc.oneof(
  { weight: 78, arbitrary: fc.constant('GET') },
  { weight: 12, arbitrary: fc.constant('HEAD') },
  {
    weight: 10,
    arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'SEARCH', 'LOCK', 'M-SEARCH', 'COPY', 'MOVE', 'REPORT', 'NOTIFY', 'MKCOL'),
  },
);

const printableString = (chars: readonly string[], maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...chars), maxLength });

const percentBytesArb = fc
  .tuple(fc.array(fc.nat(255), { minLength: 1, maxLength: 8 }), fc.boolean())
  .map(([bytes, lower]) => bytes.map((b) => hexByte(b, lower)).join(''));

const percentUnicodeArb = fc
  .oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }))
  .map((s) => encodeURIComponent(s.toWellFormed()));

const MALFORMED = [
  '%', '%%', '%2', '%ZZ', '%G1', '%u0041', '%%41', '%-1', 'a%', '%E0%A4', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%FF', '%FE%FF', '%00',
  '%0A', '%0D%0A', '%2F', '%2f', 'a%2Fb', '%5C', '%3F', '%23', '%25', '%2525', '%252F', '%C3', '%E2%82', '%F0%9F%92', '%80', '%BF',
];
const malformedArb = fc.constantFrom(...MALFORMED);
const hostileCharsArb = fc.constantFrom(
  '\\', '..', '.', '...', '%2E', '%2e%2E', '.%2E', ';', ';a=b', ':', '@', '~', '!', '$', "'", '(', ')', '*', '+', ',', '=', '&', '"', '<', '>', '{', '}', '|', '^', '`', '[', ']',
  'R&D', 'r%26d', '%20', '+', 'a+b', '%2B', 'NUL', 'con', '%7E', 'gmp', 'GMP', '%67mp',
);
const longArb = fc
  .tuple(fc.integer({ min: 65, max: 6_000 }), fc.constantFrom('x', 'A', '%41', 'ORBIT', '9', '%00', '%E2%82%B9'))
  .map(([n, unit]) => unit.repeat(Math.max(1, Math.ceil(n / unit.length))));

/** One path segment of any kind (may be empty). */
const hostileSegmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: printableString(SEGMENT_CHARS, 20) },
  { weight: 4, arbitrary: percentBytesArb },
  { weight: 4, arbitrary: malformedArb },
  { weight: 3, arbitrary: percentUnicodeArb },
  { weight: 4, arbitrary: hostileCharsArb },
  { weight: 2, arbitrary: longArb },
  { weight: 1, arbitrary: fc.constant('#frag') },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.oneof(mangled(fc.constantFrom(...FIXTURE_IDENTIFIERS)), malformedArb, percentBytesArb, hostileCharsArb), { minLength: 2, maxLength: 4 })
      .map((parts) => parts.join('')),
  },
);

const identifierSegmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 14, arbitrary: mangled(fc.constantFrom(...FIXTURE_IDENTIFIERS)) },
  { weight: 2, arbitrary: fc.constantFrom('NOPE', 'nope-ipo', '0', '2026000000', 'orbit.', 'ORBIT-', '_ORBIT', 'a'.repeat(128), 'a'.repeat(129)) },
  { weight: 3, arbitrary: hostileSegmentArb },
);

const gmpSegmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constant('gmp') },
  { weight: 4, arbitrary: mangled(fc.constant('gmp')) },
  { weight: 1, arbitrary: fc.constantFrom('gmp ', 'gmp%20', 'gmp.', 'gmps', 'gm', 'gmp%00', '%67%6D%70', 'g%6Dp', 'gmp;x', 'gmp%2F', 'history') },
);

const subscriptionSegmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constant('subscription') },
  { weight: 4, arbitrary: mangled(fc.constant('subscription')) },
  { weight: 1, arbitrary: fc.constantFrom('subscription ', 'subscriptions', 'subscriptio', 'Subscription', '%73ubscription', 'subscription%00', 'subscription;x', 'sub', 'subscription%2F') },
);

const trailingArb = fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constant('/') }, { weight: 1, arbitrary: fc.constant('//') });

const pathArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom('', '/') },
  { weight: 28, arbitrary: fc.tuple(identifierSegmentArb, trailingArb).map(([s, t]) => `/${s}${t}`) },
  { weight: 28, arbitrary: fc.tuple(identifierSegmentArb, gmpSegmentArb, trailingArb).map(([s, g, t]) => `/${s}/${g}${t}`) },
  { weight: 20, arbitrary: fc.tuple(identifierSegmentArb, subscriptionSegmentArb, trailingArb).map(([s, g, t]) => `/${s}/${g}${t}`) },
  {
    weight: 14,
    arbitrary: fc
      .tuple(fc.array(fc.tuple(fc.constantFrom('/', '/', '/', '//', '///'), fc.oneof(hostileSegmentArb, identifierSegmentArb, gmpSegmentArb, subscriptionSegmentArb)), { maxLength: 5 }), trailingArb)
      .map(([parts, t]) => (parts.length === 0 ? `/${t}` : parts.map(([sep, s]) => sep + s).join('') + t)),
  },
);

// ---- query values

const cased = (words: readonly string[]): fc.Arbitrary<string> => mangled(fc.constantFrom(...words));

const ymd = (y: number, m: number, d: number): string => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
const nearDayArb = fc.integer({ min: -140, max: 90 }).map((days) => new Date(FIXTURE_NOW + days * 86_400_000).toISOString().slice(0, 10));
const dateArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: nearDayArb },
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      '2026-13-01', '0000-00-00', '2026-02-30', '2026-02-29', '2026-04-31', '2026-00-10', '2026-11-00', '2026-11-32', '9999-12-32', '2100-02-29',
      '2024-02-29', '2000-02-29', '0000-01-01', '0001-01-01', '9999-12-31', '1970-01-01', '1969-12-31', '2000-01-01', '1900-02-29', '0000-02-29',
    ),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.boolean())
      .map(([y, m, d, padded]) => (padded ? ymd(y, m, d) : `${y}-${m}-${d}`)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        nearDayArb,
        fc.constantFrom('T00:00:00Z', 'T23:59:59.999Z', 'T24:00:00Z', 'T25:61:61Z', 'T06:30:00', 't06:30:00z', 'T00:00:00.0000001Z', '+00:00'),
        fc.constantFrom('', 'Z', '+05:30', '%2B05:30', '-23:59', '+24:00', '-00:00', '+0530', '+14:00', '%2B99:99', 'Europe/Paris'),
      )
      .map(([d, t, z]) => d + t + z),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '2026-11-20+', '+2026-11-20', '-002026-11-20', '+002026-11-20', '2026-11-20%00', '%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96-11-20', '2026/11/20',
      '20261120', '2026-W47-7', '2026-326', '2026-11', '2026', '11-20-2026', '2026-1-2', '2026-11-20T', '%202026-11-20', '2026%2D11%2D20', '2026-11-2O',
      '١٩٧٠-٠١-٠١', 'yesterday', 'now', 'null', 'undefined', '1764000000000',
    ),
  },
);

const numberArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 120 }).map(String) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 120 })).map(([z, n]) => '0'.repeat(z) + String(n)) },
  { weight: 3, arbitrary: fc.integer({ min: 16, max: 90 }).map((n) => '9'.repeat(n)) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '99999999999999999999999', '1000000000', '1000000001', '999999999', '2147483647', '2147483648', '4294967296', '9007199254740991', '9007199254740993',
      '18446744073709551616', '0', '00', '000', '-0', '-1', '+1', '%2B1', '1.5', '1.0', '1.', '.5', '1e3', '1E%2B2', '1e-2', '1e309', '-9e999', '0x10',
      '0b1', '0o7', 'Infinity', '-Infinity', 'NaN', '%201', '1%20', '1_000', '1,000', '%EF%BC%91', '%D9%A1', '4.9e-324', '1n', '١',
    ),
  },
);

const hostileValueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('', '+', '++', '%20', '=', '==', '?', '/', 'null', 'undefined', '[]', '{}', 'true', 'false') },
  { weight: 3, arbitrary: malformedArb },
  { weight: 3, arbitrary: percentBytesArb },
  { weight: 3, arbitrary: percentUnicodeArb },
  { weight: 4, arbitrary: printableString(VALUE_CHARS, 24) },
  { weight: 3, arbitrary: numberArb },
  { weight: 3, arbitrary: dateArb },
  { weight: 1, arbitrary: fc.constantFrom('wee%E2%84%AAly', '%C5%BFme', 'OPEN%C4%B0', 'op%C4%B1n', '%EF%BD%8F%EF%BD%90%EF%BD%85%EF%BD%8E', 'open%E2%80%8B', 'x#y') },
  { weight: 1, arbitrary: longArb },
);

const PARAM_VALUES: Readonly<Record<string, fc.Arbitrary<string>>> = {
  status: cased(STATUSES),
  type: fc.oneof(
    fc.subarray(['EQ', 'SME', 'DEBT', 'eq', 'Sme', 'debt'], { minLength: 1 }).map((t) => t.join(',')),
    fc.constantFrom('EQ,', ',EQ', 'EQ,,SME', 'EQ%2CSME', 'EQ,EQ,EQ', 'BOND', 'EQ,%20SME', 'EQ+SME', 'E%51'),
  ),
  source: fc.oneof(cased(['nse', 'bse']), fc.constantFrom('nse,bse', 'NSE%20', 'nyse', 'n%73e')),
  startDate: dateArb,
  endDate: dateArb,
  from: dateArb,
  to: dateArb,
  year: fc.oneof(fc.constantFrom('2026', '2025', '2027', '0000', '9999', '202', '20260', '02026', '2O26', '%32026'), fc.integer({ min: 0, max: 9999 }).map((y) => String(y).padStart(4, '0'))),
  page: numberArb,
  limit: numberArb,
  includeGmp: fc.oneof(cased(['true', 'false']), fc.constantFrom('yes', '1', '0', 'on', 'TRUE%20', 't')),
  interval: fc.oneof(cased(INTERVALS), fc.constantFrom('1h', '5M', '60m', '1d', '1w', 'monthly', 'hour', '5m,daily', '%35m')),
  field: fc.oneof(cased(FIELDS), fc.constantFrom('avg', 'average', 'mean,max', 'MEAN%00', 'med')),
  q: fc.oneof(
    mangled(fc.constantFrom(...(fixtureDataset().ipos ?? []).flatMap((i) => [i.name, ...(typeof i.symbol === 'string' ? [i.symbol] : [])]).map((t) => encodeURIComponent(t)))),
    fc.constantFrom('orb', 'ORB', 'e', 'nova', 'r%26d', '%C3%A9clair', '%C3%89CLAIR', '%25', '_', '%5C', '+', '%20orbit', 'a'.repeat(64), 'a'.repeat(65), '%F0%9F%98%80'.repeat(64), '%F0%9F%98%80'.repeat(65), '%E2%84%AA'),
  ),
};
const KNOWN_NAMES = Object.keys(PARAM_VALUES);
const ODD_NAMES = [
  'foo', 'Status', 'STATUS', 'status%20', '%20status', 'status%00', '%73tatus', 'sta%74us', 'status+', 'x%ZZ', '', 'page[]', 'limit%20', 'include_gmp',
  'includegmp', 'includeGMP', 'INTERVAL', 'From', 'status[0]', '__proto__', 'constructor', 'hasOwnProperty', 'toString', '%E0%A4', '%C3%A9', '&', '=',
  'pad', 'x'.repeat(300),
];

const partArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 50, arbitrary: fc.constantFrom(...KNOWN_NAMES).chain((n) => (PARAM_VALUES[n] as fc.Arbitrary<string>).map((v) => `${n}=${v}`)) },
  { weight: 25, arbitrary: fc.tuple(fc.constantFrom(...KNOWN_NAMES), hostileValueArb).map(([n, v]) => `${n}=${v}`) },
  { weight: 10, arbitrary: fc.tuple(fc.oneof(fc.constantFrom(...ODD_NAMES), mangled(fc.constantFrom(...KNOWN_NAMES))), fc.oneof(hostileValueArb, cased(STATUSES))).map(([n, v]) => `${n}=${v}`) },
  { weight: 5, arbitrary: fc.oneof(fc.constantFrom(...KNOWN_NAMES), fc.constantFrom(...ODD_NAMES)) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...KNOWN_NAMES), fc.constantFrom('=', '==', '=a=b', '%3D')).map(([n, v]) => `${n}=${v}`) },
);

/** A real calendar date: near the fixture's today mostly, else anywhere in 0000-9999. */
const realDateArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: nearDayArb },
  { weight: 1, arbitrary: fc.constantFrom('0000-01-01', '0001-01-01', '9999-12-31', '2024-02-29', '2000-02-29', '1970-01-01', '1969-12-31', '0000-02-29') },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -62_167_219_200_000 / 86_400_000, max: 253_402_214_400_000 / 86_400_000 }).map((day) => {
      const d = new Date(day * 86_400_000);
      return ymd(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
    }),
  },
);
/** A valid whole number for page or limit, extremes included. */
const validNumberArb = (max: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max }).map(String) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max })).map(([z, n]) => '0'.repeat(z) + String(n)) },
    { weight: 1, arbitrary: fc.constantFrom('1000000000', '999999999', '2147483648', '9007199254740993', '9'.repeat(40), '000000000000000000001') },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 1_000_000_000 }).map(String) },
  );

/** Valid (if extreme) parameters of the three routes (a route ignores the others): answers that are mostly 200. */
const plausibleQueryArb: fc.Arbitrary<string> = fc
  .tuple(
    cased(STATUSES),
    fc.subarray(
      [
        fc.subarray(['EQ', 'SME', 'DEBT'], { minLength: 1 }).map((t) => `type=${t.join(',')}`),
        cased(['nse', 'bse']).map((v) => `source=${v}`),
        realDateArb.map((d) => `startDate=${d}`),
        realDateArb.map((d) => `endDate=${d}`),
        fc.oneof(fc.constantFrom('2025', '2026', '2027', '0000', '0001', '1969', '1970', '9999'), fc.integer({ min: 0, max: 9999 }).map((y) => String(y).padStart(4, '0'))).map((y) => `year=${y}`),
        validNumberArb(6).map((n) => `page=${n}`),
        validNumberArb(150).map((n) => `limit=${n}`),
        cased(['true', 'false']).map((v) => `includeGmp=${v}`),
        cased(INTERVALS).map((v) => `interval=${v}`),
        cased(FIELDS).map((v) => `field=${v}`),
        realDateArb.map((d) => `from=${d}`),
        realDateArb.map((d) => `to=${d}`),
        fc.constantFrom('orbit', 'ORB', 'e', 'nova', 'r%26d', '%C3%89CLAIR', 'ltd').map((v) => `q=${v}`),
      ],
      { maxLength: 4 },
    ),
  )
  .chain(([status, arbs]) => fc.tuple(...arbs).map((parts) => [`status=${status}`, ...parts].join('&')));

const joinParts = (parts: string[], leading: boolean, trailing: boolean, doubled: number): string => {
  const out = parts.slice();
  if (doubled > 0 && out.length > 1) out.splice(doubled % out.length, 0, '');
  return (leading ? '&' : '') + out.join('&') + (trailing ? '&' : '');
};

const queryArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.constantFrom('', '&', '&&', '=', '?', '??status=open') },
  { weight: 30, arbitrary: plausibleQueryArb },
  {
    weight: 40,
    arbitrary: fc
      .tuple(fc.array(partArb, { maxLength: 8 }), fc.boolean(), fc.oneof({ weight: 1, arbitrary: fc.boolean() }, { weight: 6, arbitrary: fc.constant(false) }), fc.nat(8))
      .map(([parts, statusFirst, leading, doubled]) => joinParts(statusFirst ? ['status=open', ...parts] : parts, leading, doubled === 7, doubled === 3 ? 5 : 0)),
  },
  // repeated keys: one part sent several times
  { weight: 6, arbitrary: fc.tuple(partArb, fc.integer({ min: 2, max: 5 }), fc.array(partArb, { maxLength: 3 })).map(([p, n, rest]) => [...new Array<string>(n).fill(p), ...rest].join('&')) },
  // many parameters
  { weight: 4, arbitrary: fc.array(partArb, { minLength: 30, maxLength: 300 }).map((parts) => parts.join('&')) },
  // one very long value
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...KNOWN_NAMES, 'foo'), longArb, fc.boolean()).map(([n, v, withStatus]) => `${withStatus ? 'status=open&' : ''}${n}=${v}`) },
);

// ---- headers

const ws = fc.constantFrom('', '', '', ' ', '  ', '\t', ' \t ');
const latin1Arb = fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 });
/** Characters a header value may hold (HTAB, 0x20-0x7E, 0x80-0xFF). */
const headerTextArb = fc.string({
  unit: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 1, arbitrary: fc.constant(0x09) }, { weight: 3, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});

const keyLineArb: fc.Arbitrary<HeaderPart[]> = fc.oneof(
  { weight: 70, arbitrary: fc.tuple(ws, fc.constantFrom(...VALID_KEYS), ws).map(([a, key, b]) => [a, { key }, b]) },
  { weight: 8, arbitrary: fc.constantFrom<FixtureKeyName>('revoked', 'wrong').map((key) => [{ key }]) },
  { weight: 5, arbitrary: fc.constantFrom('', '   ', '\t').map((t): HeaderPart[] => [t]) },
  { weight: 5, arbitrary: headerTextArb.map((t) => [t]) },
  { weight: 2, arbitrary: latin1Arb.map((t) => [t]) },
  { weight: 2, arbitrary: fc.integer({ min: 100, max: 6_000 }).map((n) => [`ipk_${'A'.repeat(n)}`]) },
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...VALID_KEYS), fc.constantFrom('upper', 'lower', 'truncate', 'prefix', 'suffix', 'nbsp', 'pair', 'comma')).map(([key, how]): HeaderPart[] => {
      switch (how) {
        case 'upper':
        case 'lower':
        case 'truncate':
          return [{ key, transform: how }];
        case 'prefix':
          return ['x', { key }];
        case 'suffix':
          return [{ key }, '\u00e9'];
        case 'nbsp':
          return ['\u00a0', { key }];
        case 'pair':
          return [{ key }, ', ', { key: 'paid' }];
        default:
          return [{ key }, ','];
      }
    }),
  },
);

const apiKeyArb: fc.Arbitrary<FuzzRequest['apiKey']> = fc.oneof(
  { weight: 15, arbitrary: fc.constant(null) },
  {
    weight: 85,
    arbitrary: fc
      .tuple(
        fc.oneof({ weight: 8, arbitrary: fc.constant('x-api-key') }, { weight: 1, arbitrary: fc.constantFrom('X-API-KEY', 'X-Api-Key') }),
        fc.oneof({ weight: 9, arbitrary: keyLineArb.map((l) => [l]) }, { weight: 1, arbitrary: fc.array(keyLineArb, { minLength: 2, maxLength: 3 }) }),
      )
      .map(([name, lines]) => ({ name, lines })),
  },
);

const OTHER_HEADERS: ReadonlyArray<[string, fc.Arbitrary<string>]> = [
  ['Host', fc.constantFrom('localhost', 'EXAMPLE.com:80', '[::1]:1', 'a'.repeat(300), 'evil.example', '127.0.0.1:1', '_')],
  [
    'X-Forwarded-For',
    fc.constantFrom(
      '1.2.3.4', '::1', 'garbage', '999.999.999.999, ::ffff:1.2.3.4', '', ', , ,', '1.1.1.1'.repeat(40),
      // what proxies and clients put there: ports, brackets, legacy forms, junk of any size
      '203.0.113.7:49152', '[2001:db8::1]:443', '203.000.113.007', '0x7f.1', 'x'.repeat(2_000), '1.2.3.4, 203.0.113.7:1',
    ),
  ],
  ['Content-Type', fc.constantFrom('application/json', 'text/plain; charset=latin1', 'multipart/form-data; boundary=x', '\u00ff/\u00fe', '')],
  ['Accept', fc.constantFrom('text/html', 'application/xml', '*/*;q=0', 'application/json;q=0', '')],
  ['Accept-Encoding', fc.constantFrom('gzip, br, *', 'identity;q=0', 'x-garbage')],
  ['If-None-Match', fc.constantFrom('*', '"abc"', 'W/"x"')],
  ['If-Modified-Since', fc.constantFrom('Thu, 01 Jan 2099 00:00:00 GMT', 'garbage')],
  ['Range', fc.constantFrom('bytes=0-10', 'bytes=-1', 'items=0-5')],
  ['Cookie', headerTextArb],
  ['User-Agent', fc.oneof(headerTextArb, fc.integer({ min: 500, max: 4_000 }).map((n) => 'U'.repeat(n)))],
  ['Origin', fc.constantFrom('https://evil.example', 'null')],
  ['X-HTTP-Method-Override', fc.constantFrom('POST', 'DELETE', 'GET')],
  ['Connection', fc.constantFrom('close', 'keep-alive', 'x-api-key')],
  ['Authorization', fc.constantFrom('Bearer ipk_0000000000000000000000000000WRNG', 'Basic Og==')],
  ['X-Odd', fc.oneof(headerTextArb, latin1Arb)],
  ['Forwarded', fc.constantFrom('for=1.2.3.4', 'for="[::1]"')],
];

const otherHeadersArb: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
  {
    weight: 2,
    arbitrary: fc
      .subarray(OTHER_HEADERS.slice(), { maxLength: 4 })
      .chain((chosen) => fc.tuple(...chosen.map(([name, value]) => value.map((v): [string, string] => [name, v]))).map((lines): Array<[string, string]> => lines)),
  },
);

const bodyArb = fc.oneof(fc.constantFrom('{}', '{"status":"open"}', 'status=open', '\u00ff\u00fe'), headerTextArb);

// ---------------------------------------------------------------------------------------
// Sending

interface PhasePlan {
  name: string;
  runs: number;
  limited: boolean;
}

interface PhaseContext {
  host: string;
  port: number;
  mount: string;
  mountIgnoresCase: boolean;
  keys: FixtureKeys;
  expectations: FuzzExpectations;
  agent: http.Agent;
}

/** The route a request's path names (docs/spec.md#requests), or `ambiguous` when the adapters may see different paths. */
export type FuzzRoute = 'list' | 'ipo' | 'gmp' | 'subscription' | 'unknown' | 'ambiguous';
type Plan = 'free' | 'paid' | 'pro' | 'proGmp';

interface Outcome {
  sent: SentRequest;
  response: FuzzResponse | null;
  /** Why there is no response. */
  failure?: string;
}

const BATCH = 256;
const REQUEST_TIMEOUT_MS = 15_000;

async function runPhase(args: {
  phase: PhasePlan;
  ctx: PhaseContext;
  arbitrary: fc.Arbitrary<FuzzRequest>;
  seed: number;
  offset: number;
  concurrency: number;
  clock: { now: number };
  errors: unknown[];
  report: FuzzReport;
  counts: StatusCounts;
  onProgress: ((done: number, total: number) => void) | undefined;
  total: number;
  knownBugs: readonly KnownBug[];
}): Promise<void> {
  const { phase, ctx, arbitrary, seed, offset, clock, errors, report, counts } = args;
  let next = 0;
  let batch: FuzzRequest[] = [];
  let batchStart = 0;
  // The first response that broke the contract; `suspect` is a request that conformed but
  // was in flight when onError was called (the call may belong to another request).
  let found: Found | null = null;
  let suspect: Found | null = null;
  const errorsAtStart = errors.length;
  const take = (): { index: number; request: FuzzRequest } | null => {
    if (found !== null || suspect !== null || next >= phase.runs) return null;
    const index = next++;
    if (index >= batchStart + batch.length) {
      batchStart = index - (index % BATCH);
      const absolute = offset + batchStart;
      // one batch of values per seed: the same seed gives the same requests
      batch = fc.sample(arbitrary, { seed: batchSeed(seed, absolute), numRuns: BATCH });
    }
    return { index, request: batch[index - batchStart] as FuzzRequest };
  };
  const position = (index: number): string => `phase "${phase.name}", run ${index} (seed ${seed}, batch offset ${offset + index - (index % BATCH)})`;

  const worker = async (): Promise<void> => {
    for (let item = take(); item !== null; item = take()) {
      const { index, request } = item;
      if (phase.limited) clock.now += request.advanceMs;
      const before = errors.length;
      const outcome = await send(ctx, request);
      report.runs += 1;
      report.requests += 1;
      const problems = problemsOf(outcome, ctx.expectations);
      if (problems === null) {
        report.refusedByNode += 1;
      } else {
        const status = String(outcome.response?.status ?? 'none');
        counts[status] = (counts[status] ?? 0) + 1;
        report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      }
      report.routes[routeOf(outcome.sent)] += 1;
      if (!phase.limited) report.responses[offset + index] = fingerprint(outcome);
      if (problems !== null && problems.length === 0 && request.method === 'HEAD' && !phase.limited && outcome.response !== null) {
        // HEAD answers exactly as GET would, without a body (docs/spec.md#requests step 1)
        const head = outcome.response;
        const get = await send(ctx, { ...request, method: 'GET' });
        report.requests += 1;
        report.headCompared += 1;
        const more = problemsOf(get, ctx.expectations) ?? [];
        if (get.response !== null) more.push(...compareHeadWithGet(head, get.response));
        if (more.length > 0) {
          const known = args.knownBugs.find((bug) => bug.matches(more, get.sent, get.response));
          if (known !== undefined) report.knownBugs[known.id] = (report.knownBugs[known.id] ?? 0) + 1;
          else found ??= { request: { ...request, method: 'GET' }, outcome: get, problems: more.map((p) => `(HEAD, then the same request as GET) ${p}`), position: position(index) };
        }
      }
      const known = problems !== null && problems.length > 0 ? args.knownBugs.find((bug) => bug.matches(problems ?? [], outcome.sent, outcome.response)) : undefined;
      if (known !== undefined) {
        report.knownBugs[known.id] = (report.knownBugs[known.id] ?? 0) + 1;
      } else if (problems !== null && problems.length > 0) {
        found ??= { request, outcome, problems, position: position(index) };
      } else if (errors.length > before) {
        suspect ??= { request, outcome, problems: [`onError was called while this request was in flight: ${errorText(errors[errors.length - 1])}`], position: position(index) };
      }
      if (args.onProgress !== undefined && report.runs % 1000 === 0) args.onProgress(report.runs, args.total);
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, () => worker()));
  const blamed = found ?? suspect;
  if (blamed !== null) throw await violationOf(ctx, blamed, seed, errors);
  if (errors.length > errorsAtStart) throw new Error(`onError was called during the phase "${phase.name}" (seed ${seed}): ${errorText(errors[errors.length - 1])}`);
}

function fingerprint(outcome: Outcome): string {
  const res = outcome.response;
  if (routeOf(outcome.sent) === 'ambiguous') return '';
  if (res === null) return 'none';
  const content = outcome.sent.method === 'HEAD' ? `HEAD ${res.headers['content-length'] ?? ''}` : res.body.toString('latin1');
  return `${res.status}:${createHash('sha1').update(content, 'latin1').digest('hex').slice(0, 12)}`;
}

interface Found {
  request: FuzzRequest;
  outcome: Outcome;
  problems: string[];
  position: string;
}

function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? ` (cause: ${e.cause.name}: ${e.cause.message})` : '';
  return `${e.name}: ${e.message}${cause}`;
}

/** The fast-check seed of the batch that holds run `index` (counted over all phases). */
function batchSeed(seed: number, index: number): number {
  return (seed + Math.imul(Math.floor(index / BATCH) + 1, 0x9e3779b1)) | 0;
}

/** Problems of one outcome; null when Node's own parser refused the request (not a failure). */
function problemsOf(outcome: Outcome, x: FuzzExpectations): string[] | null {
  if (outcome.response === null) return [`no response: ${outcome.failure ?? 'unknown'}`];
  if (refusedByNode(outcome.response)) return null;
  return checkFuzzResponse(outcome.sent, outcome.response, x);
}

/** Node's parser answers malformed requests itself: a bare 400/431 with Connection: close and no body. */
function refusedByNode(res: FuzzResponse): boolean {
  const names = Object.keys(res.headers);
  return (res.status === 400 || res.status === 431) && res.body.length === 0 && names.length === 1 && res.headers['connection'] === 'close';
}

/** Sends the request once more, alone, and builds the error that reports it. */
async function violationOf(ctx: PhaseContext, found: Found, seed: number, errors: unknown[]): Promise<FuzzViolation> {
  const { request, outcome, problems, position } = found;
  let reproduced: boolean | null = null;
  try {
    const before = errors.length;
    const again = await send(ctx, request);
    const p = problemsOf(again, ctx.expectations);
    reproduced = (p !== null && p.length > 0) || errors.length > before;
  } catch {
    reproduced = null;
  }
  const origin = `http://${ctx.host}:${ctx.port}`;
  const text = describeRequest(request, origin, ctx.mount, ctx.mountIgnoresCase);
  const shown = describeRequest(request, origin, ctx.mount, ctx.mountIgnoresCase, true);
  const res = outcome.response;
  const response =
    res === null
      ? `(no response: ${outcome.failure ?? 'unknown'})`
      : `HTTP/1.1 ${res.status}\n${Object.entries(res.headers)
          .map(([n, v]) => `${n}: ${v}`)
          .join('\n')}\n\n${res.body.subarray(0, 2000).toString('utf8')}`;
  const message = [
    `The answer to a generated request breaks the contract (${position}; sent again alone it ${reproduced === null ? 'could not be checked' : reproduced ? 'breaks it again' : 'conforms'}):`,
    ...problems.map((p) => `  - ${p}`),
    '--- request',
    shown,
    '--- response',
    response,
    // What the router reported meanwhile (the cause of a 500 is only there).
    ...(errors.length === 0 ? [] : ['--- onError (the last of ' + errors.length + ')', errorText(errors[errors.length - 1]), String((errors[errors.length - 1] as Error)?.stack ?? '').split('\n').slice(0, 8).join('\n')]),
    `--- reproduce with seed ${seed}`,
  ].join('\n');
  return new FuzzViolation(message, problems, text, response, seed, position, reproduced);
}

function compareHeadWithGet(head: FuzzResponse, get: FuzzResponse): string[] {
  const problems: string[] = [];
  if (head.status !== get.status) problems.push(`HEAD answered ${head.status} but GET ${get.status}`);
  if (head.headers['content-length'] !== String(get.body.length)) {
    problems.push(`HEAD has content-length ${show(head.headers['content-length'])} but the GET body has ${get.body.length} bytes`);
  }
  const skip = new Set(['date', 'connection', 'keep-alive', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']);
  const names = new Set([...Object.keys(head.headers), ...Object.keys(get.headers)].filter((n) => !skip.has(n)));
  for (const n of names) {
    if (head.headers[n] !== get.headers[n]) problems.push(`header ${n}: HEAD ${show(head.headers[n])}, GET ${show(get.headers[n])}`);
  }
  return problems;
}

function mountOf(r: FuzzRequest, mount: string, ignoresCase: boolean): string {
  return ignoresCase ? mangle(mount, r.mountCase, 0, false) : mount;
}

/** The part below the mount, padded to `padTo` bytes of request-target when asked. */
function padded(r: FuzzRequest, origin: string, mount: string): string {
  let below = r.path + (r.query === null ? '' : `?${r.query}`);
  if (r.padTo !== null) {
    const prefix = (r.absoluteForm ? origin : '') + mount + below + (r.query === null ? '?pad=' : '&pad=');
    const missing = r.padTo - Buffer.byteLength(prefix);
    if (missing >= 0) below += (r.query === null ? '?pad=' : '&pad=') + 'p'.repeat(missing);
  }
  return below;
}

function resolvePart(part: HeaderPart, keys: FixtureKeys | null): string {
  if (typeof part === 'string') return part;
  if (keys === null) return `<keys.${part.key}${part.transform === undefined ? '' : `|${part.transform}`}>`;
  const key = keys[part.key];
  switch (part.transform) {
    case 'upper':
      return key.toUpperCase();
    case 'lower':
      return key.toLowerCase();
    case 'truncate':
      return key.slice(0, -1);
    default:
      return key;
  }
}

function headerLinesOf(r: FuzzRequest, keys: FixtureKeys | null): Array<[string, string]> {
  const lines: Array<[string, string]> = [];
  for (const line of r.apiKey?.lines ?? []) lines.push([r.apiKey?.name ?? 'x-api-key', line.map((p) => resolvePart(p, keys)).join('')]);
  for (const [name, value] of r.headers) lines.push([name, value]);
  if (r.body !== null) lines.push(['Content-Length', String(Buffer.byteLength(r.body, 'latin1'))]);
  return lines;
}

async function send(ctx: PhaseContext, r: FuzzRequest): Promise<Outcome> {
  const origin = `http://${ctx.host}:${ctx.port}`;
  const mount = mountOf(r, ctx.mount, ctx.mountIgnoresCase);
  const below = padded(r, origin, mount);
  const target = (r.absoluteForm ? origin : '') + mount + below;
  const headerLines = headerLinesOf(r, ctx.keys);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of headerLines) {
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const keyLines = headerLines.filter(([n]) => n.toLowerCase() === 'x-api-key').map(([, v]) => v.replace(/^[ \t]+|[ \t]+$/g, ''));
  const sent: SentRequest = {
    method: r.method,
    target,
    below,
    absoluteForm: r.absoluteForm,
    headerLines,
    body: r.body,
    apiKey: keyLines.length === 0 ? null : keyLines.join(', '),
  };
  const once = (agent: http.Agent | false): Promise<Outcome & { retry?: boolean }> =>
    new Promise((resolve) => {
      let settled = false;
      const done = (o: Outcome & { retry?: boolean }): void => {
        if (!settled) {
          settled = true;
          resolve(o);
        }
      };
      let req: http.ClientRequest;
      try {
        req = http.request({ host: ctx.host, port: ctx.port, method: r.method, path: target, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (err) => done({ sent, response: null, failure: `response error: ${err.message}` }));
          res.on('end', () => {
            const out: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
            }
            done({ sent, response: { status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) } });
          });
        });
      } catch (err) {
        // http.request refused the request itself: a generator bug, reported as such
        done({ sent, response: null, failure: `node:http refused to send it: ${err instanceof Error ? err.message : String(err)}` });
        return;
      }
      req.setTimeout(REQUEST_TIMEOUT_MS, () => {
        req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed just before it was reused: not the
        // server's answer to this request, so it goes again on a new connection.
        const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
        done({ sent, response: null, failure: `request error: ${err.message}`, retry: stale });
      });
      req.end(r.body === null ? undefined : Buffer.from(r.body, 'latin1'));
    });
  const first = await once(ctx.agent);
  return first.retry === true ? once(false) : first;
}

function estimatedHeadBytes(r: FuzzRequest): number {
  let n = 64 + r.method.length + r.path.length + (r.query?.length ?? 0) + (r.padTo ?? 0);
  for (const line of r.apiKey?.lines ?? []) n += 16 + line.reduce((s, p) => s + (typeof p === 'string' ? p.length : 40), 0);
  for (const [name, value] of r.headers) n += name.length + value.length + 4;
  return n;
}

// ---------------------------------------------------------------------------------------
// The oracle

interface Expected {
  route: FuzzRoute;
  /** Statuses the contract allows for this request; null when any of the contract's may do. */
  allowed: number[] | null;
  why: string;
  /** Parameters a 400 may name. */
  parameters: string[];
  /** The one parameter a 400 must name, when the oracle knows it. */
  parameter: string | null;
  /** The plan of the sent key; 'none' without a key; 'invalid' for a key no account has. */
  key: Plan | 'none' | 'invalid';
  /** What a 200 body must say, when the oracle knows it. */
  body: ExpectedBody | null;
}

interface ExpectedBody {
  /** List: meta.page and meta.limit. */
  page?: number;
  limit?: number;
  /** List: meta.count and the ids of the page, in order (when the fixture's today is known). */
  count?: number;
  ids?: string[];
  /** List or one IPO: whether each IPO carries `gmp`. */
  withGmp?: boolean;
  /** The exact body, from the fixture's reference (when the clock stands at the fixture's today). */
  text?: string;
  /** One IPO, or the series' ipoId. */
  ipoId?: string;
  interval?: string;
  field?: string;
  /** Series meta.from / meta.to (ISO-8601). */
  from?: string;
  to?: string;
}

/** The route a path below the mount names (docs/spec.md#requests), written from the contract's text. */
function routeOfPath(path: string): 'list' | 'ipo' | 'gmp' | 'subscription' | 'unknown' {
  let p = path === '' ? '/' : path;
  if (!p.startsWith('/')) return 'unknown';
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p === '/') return 'list';
  const segments = p.slice(1).split('/');
  if (segments.includes('')) return 'unknown';
  if (segments.length === 1) return 'ipo';
  if (segments.length === 2 && decodeOnce(segments[1] as string) === 'gmp') return 'gmp';
  if (segments.length === 2 && decodeOnce(segments[1] as string) === 'subscription') return 'subscription';
  return 'unknown';
}

function routeOf(req: SentRequest): FuzzRoute {
  // Koa reads a target holding '#' (and any absolute-form target) through url.parse, which
  // drops the fragment and turns '\' into '/': the adapters may then see different paths.
  if (req.below.includes('#') || (req.absoluteForm && req.below.includes('\\'))) return 'ambiguous';
  const q = req.below.indexOf('?');
  return routeOfPath(q < 0 ? req.below : req.below.slice(0, q));
}

function decodeOnce(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function keyOf(req: SentRequest, keys: FixtureKeys): Expected['key'] {
  if (req.apiKey === null || req.apiKey === '') return 'none';
  for (const name of VALID_KEYS) if (keys[name] === req.apiKey) return PLAN_OF[name] as Plan;
  return 'invalid';
}

function expectationsOf(req: SentRequest, x: FuzzExpectations): Expected {
  const route = routeOf(req);
  const key = keyOf(req, x.keys);
  const parameters =
    route === 'list' ? LIST_PARAMS : route === 'ipo' ? IPO_PARAMS : route === 'gmp' ? GMP_PARAMS : route === 'subscription' ? SUBSCRIPTION_PARAMS : [...new Set([...LIST_PARAMS, ...IPO_PARAMS, ...GMP_PARAMS])];
  const limited = x.rateLimited ? [429] : [];
  const base = { route, key, parameters, parameter: null, body: null };
  // Step 1: length, path, method. No window counts these.
  if (Buffer.byteLength(req.target) > x.maxUrlLength) return { ...base, allowed: [414], why: `the request-target has ${Buffer.byteLength(req.target)} bytes` };
  if (route === 'ambiguous') return { ...base, allowed: [200, 400, 401, 403, 404, 405, ...limited], why: 'any status but 414 (ambiguous path)' };
  if (route === 'unknown') return { ...base, allowed: [404], why: 'an unknown path under the mount (step 1)' };
  if (req.method !== 'GET' && req.method !== 'HEAD') return { ...base, allowed: [405], why: `method ${req.method} on a known route (step 1)` };
  // Step 2: key.
  if (key === 'invalid') return { ...base, allowed: [401, ...limited], why: 'a key that is sent but not valid (step 2)' };
  if (key === 'none' && route !== 'list') return { ...base, allowed: [401, ...limited], why: `no key on the ${route} route (step 2)` };
  // Step 3 may answer 429; steps 4-6: parameters, plan, lookup.
  const q = req.below.indexOf('?');
  const path = q < 0 ? req.below : req.below.slice(0, q);
  const query = parseQueryParams(q < 0 ? '' : req.below.slice(q + 1));
  const segment = path.replace(/^\//, '').split('/')[0] ?? '';
  const verdict =
    route === 'list'
      ? listVerdict(query, key, x.now)
      : route === 'ipo'
        ? ipoVerdict(segment, query, key, x.now)
        : route === 'gmp'
          ? gmpVerdict(segment, query, key, x.now)
          : subscriptionVerdict(segment, query, x.now);
  const who = key === 'none' ? 'no key' : `a ${key} key`;
  if (verdict.kind === 'unknown') {
    return { ...base, allowed: [...verdict.statuses, ...limited], why: `${req.method} ${route} route with ${who}: ${verdict.why}` };
  }
  return {
    ...base,
    allowed: [verdict.status, ...limited],
    parameter: verdict.parameter ?? null,
    body: verdict.body ?? null,
    why: `${req.method} ${route} route with ${who}: ${verdict.why}`,
  };
}

/** What steps 4-6 answer, or the statuses they may answer when the oracle cannot tell. */
type Verdict =
  | { kind: 'known'; status: number; parameter?: string; body?: ExpectedBody; why: string }
  | { kind: 'unknown'; statuses: number[]; why: string };

/** A parameter's value checked by the contract's rules: valid, invalid, or (non-ASCII case folding) left open. */
type Checked<T> = { state: 'ok'; value: T } | { state: 'absent' } | { state: 'invalid' } | { state: 'open' };

const bad = (parameter: string, why: string): Verdict => ({ kind: 'known', status: 400, parameter, why: `400 naming ${parameter}: ${why}` });
const open = (statuses: number[], why: string): Verdict => ({ kind: 'unknown', statuses, why: `the oracle leaves it open: ${why}` });

/** The query as docs/spec.md#requests reads it: decoded name -> raw values (names that do not decode are dropped). */
function parseQueryParams(query: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  if (query === '') return params;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeOnce((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
    if (name === null) continue;
    const values = params.get(name) ?? [];
    values.push(eq < 0 ? '' : part.slice(eq + 1));
    params.set(name, values);
  }
  return params;
}

/** The one decoded, non-empty value of a parameter (docs/spec.md#list: repeated, empty or malformed is invalid). */
function single(query: Map<string, string[]>, name: string): Checked<string> {
  const values = query.get(name);
  if (values === undefined) return { state: 'absent' };
  if (values.length !== 1) return { state: 'invalid' };
  const value = decodeOnce((values[0] as string).replace(/\+/g, ' '));
  return value === null || value === '' ? { state: 'invalid' } : { state: 'ok', value };
}

const asciiLower = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * An enumerated value matched ignoring ASCII case. A match that needs Unicode case mapping
 * (KELVIN SIGN for k, LONG S for s, ...) is left open: docs/spec.md#list says "case-insensitively"
 * without saying which folding.
 */
function enumerated(checked: Checked<string>, allowed: readonly string[]): Checked<string> {
  if (checked.state !== 'ok') return checked;
  const value = checked.value;
  const found = allowed.find((a) => asciiLower(a) === asciiLower(value));
  if (found !== undefined) return { state: 'ok', value: found };
  const folded = allowed.some((a) => a.toLowerCase() === value.toLowerCase() || a.toUpperCase() === value.toUpperCase());
  return folded ? { state: 'open' } : { state: 'invalid' };
}

/** 00:00:00.000Z of a real `YYYY-MM-DD` date (years 0000-9999, proleptic Gregorian), or null. */
function dateMs(text: string): number | null {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  if (m === null) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  if (days === undefined || d < 1 || d > days) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  return date.getTime();
}

function dateParam(query: Map<string, string[]>, name: string): Checked<number> {
  const c = single(query, name);
  if (c.state !== 'ok') return c as Checked<number>;
  const ms = dateMs(c.value);
  return ms === null ? { state: 'invalid' } : { state: 'ok', value: ms };
}

/** A whole number written in plain digits (docs/spec.md#list), as a bigint. */
function digitsParam(query: Map<string, string[]>, name: string, min: bigint, max: bigint | null): Checked<bigint> {
  const c = single(query, name);
  if (c.state !== 'ok') return c as Checked<bigint>;
  if (!/^[0-9]+$/.test(c.value)) return { state: 'invalid' };
  const n = BigInt(c.value);
  return n < min || (max !== null && n > max) ? { state: 'invalid' } : { state: 'ok', value: n };
}

function booleanParam(query: Map<string, string[]>, name: string): Checked<boolean> {
  const c = enumerated(single(query, name), ['true', 'false']);
  return c.state === 'ok' ? { state: 'ok', value: c.value === 'true' } : (c as Checked<boolean>);
}

/** The first parameter (in the given order) that is not valid: its name and whether it is invalid or open. */
function firstProblem(checks: ReadonlyArray<[string, Checked<unknown>]>): { name: string; state: 'invalid' | 'open' } | null {
  for (const [name, c] of checks) if (c.state === 'invalid' || c.state === 'open') return { name, state: c.state };
  return null;
}

function listVerdict(query: Map<string, string[]>, key: Plan | 'none', now: number | null): Verdict {
  const status = enumerated(single(query, 'status'), STATUSES);
  const typeText = single(query, 'type');
  let type: Checked<unknown> = typeText;
  if (typeText.state === 'ok') {
    const items = typeText.value.split(',').map((item) => enumerated({ state: 'ok', value: item }, ['EQ', 'SME', 'DEBT']));
    type = items.some((i) => i.state === 'invalid') ? { state: 'invalid' } : items.some((i) => i.state === 'open') ? { state: 'open' } : typeText;
  }
  const year = single(query, 'year');
  const qText = single(query, 'q');
  const q: Checked<string> = qText.state === 'ok' && [...qText.value].length > MAX_Q ? { state: 'invalid' } : qText;
  const page = digitsParam(query, 'page', 1n, 1_000_000_000n);
  const limit = digitsParam(query, 'limit', 1n, null);
  const includeGmp = booleanParam(query, 'includeGmp');
  const problem = firstProblem([
    ['status', status.state === 'absent' ? { state: 'invalid' } : status],
    ['type', type],
    ['source', enumerated(single(query, 'source'), ['nse', 'bse'])],
    ['startDate', dateParam(query, 'startDate')],
    ['endDate', dateParam(query, 'endDate')],
    ['year', year.state === 'ok' && !/^[0-9]{4}$/.test(year.value) ? { state: 'invalid' } : year],
    ['q', q],
    ['page', page],
    ['limit', limit],
    ['includeGmp', includeGmp],
  ]);
  if (problem?.state === 'open') return open([200, 400, 403], `${problem.name} matches only with Unicode case folding`);
  if (problem !== null) return bad(problem.name, 'the first invalid list parameter');
  const withGmp = includeGmp.state === 'ok' && includeGmp.value;
  if (withGmp && key !== 'proGmp') return { kind: 'known', status: 403, why: '403: includeGmp=true without pro + GMP add-on' };
  const asked = limit.state === 'ok' ? limit.value : 3n;
  const max = key === 'none' ? 1n : BigInt(MAX_LIST_LIMIT[key]);
  const effective = Number(asked < max ? asked : max);
  const pageNumber = key === 'none' || page.state !== 'ok' ? 1 : Number(page.value);
  const body: ExpectedBody = { page: pageNumber, limit: effective, withGmp };
  if (now !== null && istDay(now) === FIXTURE_TODAY && status.state === 'ok') {
    // docs/spec.md#list over the fixture: its own order of each status, filtered naively
    const types = typeText.state === 'ok' ? typeText.value.split(',').map((t) => t.toUpperCase()) : null;
    const source = single(query, 'source');
    const from = single(query, 'startDate');
    const to = single(query, 'endDate');
    const matches = (EXPECTED_ORDER[status.value as keyof typeof EXPECTED_ORDER] ?? []).filter((id) => {
      const ipo = FIXTURE_IPOS.find((i) => i.id === id);
      if (ipo === undefined) return false;
      if (types !== null && !types.includes(ipo.type)) return false;
      if (source.state === 'ok' && !ipo.exchanges.includes(source.value.toLowerCase())) return false;
      if (from.state === 'ok' && (ipo.startDate === null || ipo.startDate < from.value)) return false;
      if (to.state === 'ok' && (ipo.endDate === null || ipo.endDate > to.value)) return false;
      if (year.state === 'ok' && (ipo.startDate === null || !ipo.startDate.startsWith(`${year.value}-`))) return false;
      // q: name or symbol contains it, A-Z folded to a-z and nothing else
      if (q.state === 'ok' && !asciiLower(ipo.name).includes(asciiLower(q.value)) && !(ipo.symbol !== null && asciiLower(ipo.symbol).includes(asciiLower(q.value)))) return false;
      return true;
    });
    body.count = matches.length;
    body.ids = matches.slice((pageNumber - 1) * effective, pageNumber * effective);
    const meta: Record<string, unknown> = {
      count: body.count,
      countOnPage: body.ids.length,
      totalPages: Math.ceil(body.count / effective),
      page: pageNumber,
      limit: effective,
    };
    if (key === 'none') meta['info'] = KEYLESS_INFO;
    const ipos = body.ids.map((id) => expectedIpo(id, withGmp ? { today: FIXTURE_TODAY, gmpAt: now, subscriptionAt: now } : { today: FIXTURE_TODAY, subscriptionAt: now }));
    body.text = JSON.stringify({ meta, ipos });
  }
  return { kind: 'known', status: 200, body, why: `200 with every parameter valid${key === 'none' ? ' (keyless: page 1, limit 1)' : ''}` };
}

function ipoVerdict(segment: string, query: Map<string, string[]>, key: Plan | 'none', now: number | null): Verdict {
  const identifier = decodeOnce(segment);
  if (identifier === null) return bad('identifier', 'the identifier has a malformed percent-encoding');
  const includeGmp = booleanParam(query, 'includeGmp');
  if (includeGmp.state === 'open') return open([200, 400, 403, 404], 'includeGmp matches only with Unicode case folding');
  if (includeGmp.state === 'invalid') return bad('includeGmp', 'includeGmp is not true or false');
  if (includeGmp.state === 'ok' && includeGmp.value && key !== 'proGmp') return { kind: 'known', status: 403, why: '403: includeGmp=true without pro + GMP add-on' };
  const id = resolveIdentifier(identifier);
  if (id === null) return { kind: 'known', status: 404, why: `404: no fixture IPO is ${show(identifier)}` };
  const withGmp = includeGmp.state === 'ok' && includeGmp.value;
  const body: ExpectedBody = { ipoId: id, withGmp };
  if (now !== null && istDay(now) === FIXTURE_TODAY) body.text = JSON.stringify({ ipo: expectedIpo(id, withGmp ? { today: FIXTURE_TODAY, gmpAt: now, subscriptionAt: now } : { today: FIXTURE_TODAY, subscriptionAt: now }) });
  return { kind: 'known', status: 200, body, why: `200: ${show(identifier)} is IPO ${id}` };
}

const BUCKET_SIZE: Readonly<Record<string, [number, number]>> = {
  '5m': [300_000, 0],
  '10m': [600_000, 0],
  '15m': [900_000, 0],
  '30m': [1_800_000, 0],
  hourly: [3_600_000, 0],
  daily: [86_400_000, 0],
  // weeks start on Monday 00:00Z; 1970-01-05 was a Monday
  weekly: [604_800_000, 4 * 86_400_000],
};
const MAX_GMP_BUCKETS = 20_000;
const GMP_PREVIEW_ENDS = '2026-09-30';

function gmpVerdict(segment: string, query: Map<string, string[]>, key: Plan | 'none', now: number | null): Verdict {
  const identifier = decodeOnce(segment);
  if (identifier === null) return bad('identifier', 'the identifier has a malformed percent-encoding');
  const interval = enumerated(single(query, 'interval'), INTERVALS);
  const field = enumerated(single(query, 'field'), FIELDS);
  const from = dateParam(query, 'from');
  const to = dateParam(query, 'to');
  const problem = firstProblem([
    ['interval', interval],
    ['field', field],
    ['from', from],
    ['to', to],
  ]);
  if (problem?.state === 'open') return open([200, 400, 403, 404], `${problem.name} matches only with Unicode case folding`);
  if (problem !== null) return bad(problem.name, 'the first invalid series parameter');
  // docs/spec.md#gmp-series: the effective range
  const DAY = 86_400_000;
  let start: number;
  let end: number;
  if (to.state === 'ok') {
    end = to.value + DAY - 1;
    start = from.state === 'ok' ? from.value : to.value - 30 * DAY;
  } else if (now === null) {
    return open([200, 400, 403, 404], 'the range ends at the clock, unknown under a moving clock');
  } else {
    end = now;
    start = from.state === 'ok' ? from.value : now - 30 * DAY;
  }
  if (start > end) return bad('from', `start ${new Date(start).toISOString()} is after end ${new Date(end).toISOString()}`);
  const intervalName = interval.state === 'ok' ? interval.value : 'daily';
  const [size, origin] = BUCKET_SIZE[intervalName] as [number, number];
  const bucket = (t: number): number => t - ((((t - origin) % size) + size) % size);
  const buckets = (bucket(end) - bucket(start)) / size + 1;
  if (buckets > MAX_GMP_BUCKETS) return bad('interval', `${buckets} ${intervalName} buckets`);
  // the free preview ended before any instant the fuzzer's clocks show
  if (key !== 'proGmp' && istDay(now ?? FIXTURE_NOW) > GMP_PREVIEW_ENDS) return { kind: 'known', status: 403, why: '403: the series after the preview needs pro + GMP add-on' };
  const id = resolveIdentifier(identifier);
  if (id === null) return { kind: 'known', status: 404, why: `404: no fixture IPO is ${show(identifier)}` };
  const fieldName = field.state === 'ok' ? field.value : 'mean';
  const body: ExpectedBody = { ipoId: id, interval: intervalName, field: fieldName, from: new Date(start).toISOString(), to: new Date(end).toISOString() };
  if (now !== null) {
    const series = expectedSeries({
      ipoId: id,
      interval: intervalName as GmpInterval,
      field: fieldName as GmpField,
      from: single(query, 'from').state === 'ok' ? (single(query, 'from') as { value: string }).value : null,
      to: single(query, 'to').state === 'ok' ? (single(query, 'to') as { value: string }).value : null,
      now,
    });
    if (series !== 'from') body.text = JSON.stringify(series);
  }
  return { kind: 'known', status: 200, body, why: `200: the series of ${id} over ${buckets} buckets` };
}

/** docs/spec.md#subscription: identifier, from, to, then start > end; any valid key; 404 for no IPO. */
function subscriptionVerdict(segment: string, query: Map<string, string[]>, now: number | null): Verdict {
  const identifier = decodeOnce(segment);
  if (identifier === null) return bad('identifier', 'the identifier has a malformed percent-encoding');
  const from = dateParam(query, 'from');
  const to = dateParam(query, 'to');
  const problem = firstProblem([
    ['from', from],
    ['to', to],
  ]);
  if (problem !== null) return bad(problem.name, 'the first invalid subscription parameter');
  const DAY = 86_400_000;
  const start = from.state === 'ok' ? from.value : EARLIEST;
  let end: number;
  if (to.state === 'ok') end = to.value + DAY - 1;
  else if (now === null) return open([200, 400, 404], 'the range ends at the clock, unknown under a moving clock');
  else end = now;
  if (start > end) return bad('from', `start ${new Date(start).toISOString()} is after end ${new Date(end).toISOString()}`);
  const id = resolveIdentifier(identifier);
  if (id === null) return { kind: 'known', status: 404, why: `404: no fixture IPO is ${show(identifier)}` };
  const body: ExpectedBody = { ipoId: id, from: new Date(start).toISOString(), to: new Date(end).toISOString() };
  if (now !== null) {
    const raw = (name: string): string | null => {
      const c = single(query, name);
      return c.state === 'ok' ? c.value : null;
    };
    const series = expectedSubscriptionSeries({ ipoId: id, from: raw('from'), to: raw('to'), now });
    if (series !== 'from') body.text = JSON.stringify(series);
  }
  return { kind: 'known', status: 200, body, why: `200: the subscription series of ${id}` };
}

function istDay(ms: number): string {
  return new Date(ms + 330 * 60_000).toISOString().slice(0, 10);
}

/** docs/spec.md#one-ipo: id exactly, then symbol, then slug, both ignoring ASCII case only. */
function resolveIdentifier(identifier: string): string | null {
  const lower = asciiLower(identifier);
  const byId = FIXTURE_IPOS.find((i) => i.id === identifier);
  const bySymbol = FIXTURE_IPOS.find((i) => i.symbol !== null && asciiLower(i.symbol) === lower);
  const bySlug = FIXTURE_IPOS.find((i) => asciiLower(i.slug) === lower);
  return (byId ?? bySymbol ?? bySlug)?.id ?? null;
}

function checkErrorBody(body: unknown, res: FuzzResponse, expected: Expected, fail: (p: string) => void): void {
  if (!isRecord(body)) {
    fail('an error body that is not a JSON object');
    return;
  }
  const withMeta = res.status === 400 || res.status === 429;
  const keys = Object.keys(body).join(',');
  const want = withMeta ? 'status,title,detail,code,meta' : 'status,title,detail,code';
  if (keys !== want) fail(`error body keys are ${keys}, not ${want}`);
  if (body['status'] !== String(res.status)) fail(`error body status ${show(body['status'])} on a ${res.status}`);
  if (body['title'] !== TITLES[res.status]) fail(`error body title ${show(body['title'])}, not ${show(TITLES[res.status])}`);
  if (body['code'] !== CODES[res.status]) fail(`error body code ${show(body['code'])}, not ${show(CODES[res.status])}`);
  const detail = body['detail'];
  if (typeof detail !== 'string' || detail.length === 0) fail('detail is not a non-empty string');
  // a quoted value is cut to 50 characters: a detail stays short whatever was sent
  else if (detail.length > 600) fail(`detail has ${detail.length} characters`);
  const meta = body['meta'];
  if (res.status === 400) {
    if (!isRecord(meta) || Object.keys(meta).join(',') !== 'parameter' || typeof meta['parameter'] !== 'string') fail(`400 meta is ${show(meta)}, not {parameter}`);
    else if (!expected.parameters.includes(meta['parameter'])) fail(`400 names ${show(meta['parameter'])}, not a parameter of the ${expected.route} route`);
    else if (expected.parameter !== null && meta['parameter'] !== expected.parameter) fail(`400 names ${show(meta['parameter'])}, not ${show(expected.parameter)} (${expected.why})`);
  }
  if (res.status === 429) {
    const h = res.headers;
    if (!isRecord(meta) || Object.keys(meta).join(',') !== 'quotaPerMinute,expiresIn,window,quota') fail(`429 meta is ${show(meta)}, not {quotaPerMinute, expiresIn, window, quota}`);
    else {
      const q = meta['quotaPerMinute'];
      const e = meta['expiresIn'];
      // the fuzzed router runs the default limits: a minute window of 6 and a GMP minute window of 3
      const windowOf = q === DEFAULT_QUOTA ? 'minute' : 'gmp-minute';
      if (q !== DEFAULT_QUOTA && q !== DEFAULT_GMP_QUOTA) fail(`429 quotaPerMinute ${show(q)}`);
      if (meta['window'] !== windowOf || meta['quota'] !== q) fail(`429 window ${show(meta['window'])} and quota ${show(meta['quota'])} with quotaPerMinute ${show(q)}`);
      if (typeof e !== 'number' || !Number.isInteger(e) || e < 1 || e > 60) fail(`429 expiresIn ${show(e)}`);
      if (h['retry-after'] !== String(e)) fail(`429 retry-after ${show(h['retry-after'])} but expiresIn ${show(e)}`);
      if (h['ratelimit-limit'] !== String(q)) fail(`429 ratelimit-limit ${show(h['ratelimit-limit'])} but quotaPerMinute ${show(q)}`);
    }
  }
}

function checkSuccessBody(body: unknown, expected: Expected, fail: (p: string) => void): void {
  if (!isRecord(body)) {
    fail('a 200 body that is not a JSON object');
    return;
  }
  const keys = Object.keys(body).join(',');
  const shapes: Record<string, 'list' | 'ipo' | 'gmp' | 'subscription'> = { 'meta,ipos': 'list', ipo: 'ipo', 'ipoId,symbol,interval,field,series,meta': 'gmp', 'ipoId,symbol,series,meta': 'subscription' };
  const shape = shapes[keys];
  if (shape === undefined) {
    fail(`a 200 body with keys ${keys}`);
    return;
  }
  if (expected.route !== 'ambiguous' && shape !== expected.route) fail(`a ${shape} body on the ${expected.route} route`);
  if (expected.body?.text !== undefined && JSON.stringify(body) !== expected.body.text) {
    fail(`the body differs from the fixture's reference at character ${firstDifference(JSON.stringify(body), expected.body.text)}: reference ${show(expected.body.text.slice(0, 400))}`);
  }
  if (shape === 'list') {
    const meta = body['meta'];
    const ipos = body['ipos'];
    if (!isRecord(meta) || !Array.isArray(ipos)) {
      fail('list meta or ipos of the wrong type');
      return;
    }
    const keyless = expected.key === 'none';
    const metaKeys = Object.keys(meta).join(',');
    const want = keyless ? 'count,countOnPage,totalPages,page,limit,info' : 'count,countOnPage,totalPages,page,limit';
    if (expected.route !== 'ambiguous' && metaKeys !== want) fail(`list meta keys ${metaKeys}, not ${want}`);
    const { count, countOnPage, totalPages, page, limit } = meta as Record<string, unknown>;
    if (![count, countOnPage, totalPages, page, limit].every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)) {
      fail(`list meta numbers ${show(meta)}`);
      return;
    }
    const [c, on, tp, pg, lim] = [count, countOnPage, totalPages, page, limit] as number[];
    if (on !== ipos.length) fail(`countOnPage ${on} but ${ipos.length} IPOs`);
    if ((lim as number) < 1 || tp !== Math.ceil((c as number) / (lim as number))) fail(`totalPages ${tp} for count ${c} and limit ${lim}`);
    // pages partition the matches: full pages, then the rest, then empty pages (docs/spec.md#list)
    const due = Math.max(0, Math.min(lim as number, (c as number) - ((pg as number) - 1) * (lim as number)));
    if (on !== due) fail(`countOnPage ${on} on page ${pg} of ${c} matches by ${lim}, not ${due}`);
    if ((pg as number) < 1) fail(`page ${pg}`);
    if (expected.route !== 'ambiguous') {
      if (keyless && (lim !== 1 || pg !== 1 || meta['info'] !== KEYLESS_INFO)) fail(`a keyless list with limit ${lim}, page ${pg}, info ${show(meta['info'])}`);
      const plan = expected.key;
      if (plan !== 'none' && plan !== 'invalid' && (lim as number) > MAX_LIST_LIMIT[plan]) fail(`limit ${lim} above the ${plan} plan's maximum`);
    }
    const wanted = expected.body;
    if (wanted?.page !== undefined && pg !== wanted.page) fail(`list meta.page ${pg}, not ${wanted.page} (${expected.why})`);
    if (wanted?.limit !== undefined && lim !== wanted.limit) fail(`list meta.limit ${lim}, not ${wanted.limit} (${expected.why})`);
    if (wanted?.count !== undefined && c !== wanted.count) fail(`list meta.count ${c}, not ${wanted.count} (${expected.why})`);
    const ids = ipos.map((i: unknown) => (isRecord(i) ? i['id'] : undefined));
    if (wanted?.ids !== undefined && ids.join(',') !== wanted.ids.join(',')) fail(`list ids [${ids.join(',')}], not [${wanted.ids.join(',')}] (${expected.why})`);
    for (const ipo of ipos.slice(0, 3)) checkIpo(ipo, wanted?.withGmp, fail);
  } else if (shape === 'ipo') {
    checkIpo(body['ipo'], expected.body?.withGmp, fail);
    const id = isRecord(body['ipo']) ? body['ipo']['id'] : undefined;
    if (expected.body?.ipoId !== undefined && id !== expected.body.ipoId) fail(`IPO ${show(id)}, not ${expected.body.ipoId} (${expected.why})`);
  } else if (shape === 'subscription') {
    const want = expected.body;
    const { series, meta } = body as Record<string, unknown>;
    if (want !== null) {
      const m = isRecord(meta) ? meta : {};
      const got: ExpectedBody = { ipoId: body['ipoId'] as string, from: m['from'] as string, to: m['to'] as string };
      for (const k of ['ipoId', 'from', 'to'] as const) {
        if (want[k] !== undefined && got[k] !== want[k]) fail(`subscription ${k} ${show(got[k])}, not ${show(want[k])} (${expected.why})`);
      }
    }
    if (!Array.isArray(series) || !isRecord(meta) || meta['count'] !== series.length) fail(`subscription meta.count ${show(isRecord(meta) ? meta['count'] : meta)} for ${Array.isArray(series) ? series.length : 'no'} points`);
    if (isRecord(meta) && Object.keys(meta).join(',') !== 'from,to,count') fail(`subscription meta keys ${Object.keys(meta).join(',')}`);
    if (Array.isArray(series)) {
      let last = '';
      for (const point of series) {
        if (!isRecord(point) || Object.keys(point).join(',') !== POINT_KEYS || typeof point['timestamp'] !== 'string' || point['timestamp'] <= last) {
          fail(`subscription point ${show(point)} out of shape or order`);
          break;
        }
        last = point['timestamp'];
      }
    }
  } else {
    const want = expected.body;
    if (want !== null) {
      const meta = isRecord(body['meta']) ? body['meta'] : {};
      const got: ExpectedBody = { ipoId: body['ipoId'] as string, interval: body['interval'] as string, field: body['field'] as string, from: meta['from'] as string, to: meta['to'] as string };
      for (const k of ['ipoId', 'interval', 'field', 'from', 'to'] as const) {
        if (want[k] !== undefined && got[k] !== want[k]) fail(`series ${k} ${show(got[k])}, not ${show(want[k])} (${expected.why})`);
      }
    }
    const { interval, field, series, meta } = body as Record<string, unknown>;
    if (typeof interval !== 'string' || !INTERVALS.includes(interval)) fail(`series interval ${show(interval)}`);
    if (typeof field !== 'string' || !FIELDS.includes(field)) fail(`series field ${show(field)}`);
    if (!Array.isArray(series) || !isRecord(meta) || meta['count'] !== series.length) fail(`series meta.count ${show(isRecord(meta) ? meta['count'] : meta)} for ${Array.isArray(series) ? series.length : 'no'} points`);
    if (isRecord(meta) && Object.keys(meta).join(',') !== 'from,to,count') fail(`series meta keys ${Object.keys(meta).join(',')}`);
    if (Array.isArray(series)) {
      let last = '';
      for (const point of series) {
        if (!isRecord(point) || Object.keys(point).join(',') !== 'timestamp,price' || typeof point['timestamp'] !== 'string' || point['timestamp'] <= last) {
          fail(`series point ${show(point)} out of shape or order`);
          break;
        }
        last = point['timestamp'];
      }
    }
  }
}

function checkIpo(ipo: unknown, withGmp: boolean | undefined, fail: (p: string) => void): void {
  if (!isRecord(ipo)) {
    fail(`an IPO that is not an object: ${show(ipo)}`);
    return;
  }
  const keys = Object.keys(ipo);
  const hasGmp = keys[keys.length - 1] === 'gmp';
  const base = hasGmp ? keys.slice(0, -1) : keys;
  if (base.join(',') !== IPO_KEYS.join(',')) fail(`IPO keys ${keys.join(',')}`);
  if (withGmp !== undefined && hasGmp !== withGmp) fail(`an IPO ${hasGmp ? 'with' : 'without'} gmp, though includeGmp is ${withGmp}`);
  if (typeof ipo['status'] !== 'string' || !STATUSES.includes(ipo['status'])) fail(`IPO status ${show(ipo['status'])}`);
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** A header value or body for a report: printable as is, else JSON-escaped (latin1 bytes as \u00XX). */
function printable(text: string): string {
  const short = text.length > 300 ? `${text.slice(0, 300)}... (${text.length} characters)` : text;
  return /^[\x20-\x7e]*$/.test(short) ? short : JSON.stringify(short);
}
