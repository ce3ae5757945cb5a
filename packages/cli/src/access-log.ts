/**
 * The access log of `ipokit serve` and `npm start`: one line per request, written when its
 * response is done (or the client left), as text or as one JSON object a line. It names
 * the method, the request-target (the values of secret-like query parameters and anything
 * shaped like an API key replaced by `***`; the x-api-key header is never read), the
 * status, the time taken, the client address (as the framework reads it, so behind
 * `trustProxy` proxies the address they forwarded) and the account whose key the request
 * was charged to.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '@ipokit/core';
import type { KeyGrant, RateLimitOutcome, RateLimitWindow, StoreCallOptions } from '@ipokit/core/backend';

/** One request, as the access log tells it. */
export interface AccessLogEntry {
  /** When the request arrived, ISO-8601 UTC. */
  time: string;
  method: string;
  /** The request-target as sent, secrets replaced by `***`. */
  path: string;
  status: number;
  /** Milliseconds from the request's arrival to the end of its response, to 0.1 ms. */
  ms: number;
  /** The client address; null when unknown. */
  address: string | null;
  /** The account of the request's valid API key; null without one (or before the key was read). */
  account: string | null;
  /** True when the client left before the whole response was sent. */
  aborted?: boolean;
}

/** What a request learns about itself while it is answered. */
export interface RequestRecord {
  /** The client address as the framework reads it (`req.ip`, `ctx.ip`). */
  address: string | null;
  /** The account the request was charged to. */
  account: string | null;
}

/** The record of the request under way, for code that runs on its behalf (the store). */
export const requestRecords = new AsyncLocalStorage<RequestRecord>();

/** The longest request-target logged; longer ones are cut (Node takes up to 16 KB of headers). */
export const MAX_LOGGED_TARGET = 2048;

/** Names of query parameters whose values are never logged: any that contains one of these. */
const SECRET_NAME = /key|token|secret|passw|pwd|auth|sig|session|credential|jwt|cookie/i;
/** An ipokit API key, wherever it appears (pasted into a path by mistake). */
const API_KEY = /ipk_[A-Za-z0-9]{32}/g;

/**
 * A request-target fit for a log line: printable ASCII only (anything else percent-encoded),
 * at most {@link MAX_LOGGED_TARGET} characters, the value of every secret-like query
 * parameter (`api_key`, `token`, `password`, ...) and any API key replaced by `***`.
 *
 * @example
 * ```ts
 * redactTarget('/ipos?status=open&api_key=ipk_abc'); // '/ipos?status=open&api_key=***'
 * ```
 */
export function redactTarget(target: string): string {
  let text = target.replace(/[^\x21-\x7e]|["\\]/gu, percentEncoded).replace(API_KEY, 'ipk_***');
  const q = text.indexOf('?');
  if (q >= 0) {
    const query = text
      .slice(q + 1)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 0) return pair;
        return SECRET_NAME.test(safeDecode(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=***` : pair;
      })
      .join('&');
    text = `${text.slice(0, q)}?${query}`;
  }
  return text.length > MAX_LOGGED_TARGET ? `${text.slice(0, MAX_LOGGED_TARGET)}...` : text;
}

/** A character as `%XX` bytes (U+FFFD for a lone surrogate, which has no UTF-8). */
function percentEncoded(c: string): string {
  try {
    return encodeURIComponent(c);
  } catch {
    return '%EF%BF%BD';
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * One log line (without its newline): text, `TIME METHOD TARGET STATUS MSms ADDRESS ACCOUNT`
 * (`-` for what is unknown, ` aborted` when the client left), or one JSON object.
 *
 * @example
 * ```ts
 * formatAccessLog({ time: '2026-11-23T06:30:00.000Z', method: 'GET', path: '/ipos?status=open', status: 200, ms: 3.2, address: '203.0.113.9', account: 'acct_1' }, 'text');
 * // '2026-11-23T06:30:00.000Z GET /ipos?status=open 200 3.2ms 203.0.113.9 acct_1'
 * ```
 */
export function formatAccessLog(entry: AccessLogEntry, format: 'text' | 'json'): string {
  if (format === 'json') return JSON.stringify(entry);
  const word = (text: string | null) => (text === null || text === '' ? '-' : text.replace(/[^\x21-\x7e]/g, '?'));
  return `${entry.time} ${word(entry.method)} ${entry.path} ${entry.status} ${entry.ms}ms ${word(entry.address)} ${word(entry.account)}${entry.aborted ? ' aborted' : ''}`;
}

/** A `node:http` request listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Wraps a request listener so that each request is logged once its response is done: the
 * listener runs inside the request's {@link RequestRecord}, which the framework's first
 * middleware fills with the client address and {@link observeAccounts} with the account.
 *
 * @example
 * ```ts
 * const server = createServer(withAccessLog(app, (entry) => process.stdout.write(`${formatAccessLog(entry, 'text')}\n`)));
 * ```
 */
export function withAccessLog(listener: RequestListener, log: (entry: AccessLogEntry) => void): RequestListener {
  return (req, res) => {
    const time = new Date().toISOString();
    const start = performance.now();
    // Read now: Express rewrites req.url below its mount path while it routes.
    const target = req.url ?? '/';
    const record: RequestRecord = { address: null, account: null };
    res.once('close', () => {
      const entry: AccessLogEntry = {
        time,
        method: req.method ?? '-',
        path: redactTarget(target),
        status: res.statusCode,
        ms: Math.round((performance.now() - start) * 10) / 10,
        address: record.address ?? req.socket.remoteAddress ?? null,
        account: record.account,
      };
      if (!res.writableFinished) entry.aborted = true;
      try {
        log(entry);
      } catch {
        // A log that cannot be written must not take the server down.
      }
    });
    requestRecords.run(record, () => listener(req, res));
  };
}

/**
 * The store as the router should see it when requests are logged: the same store, which
 * also writes into the current request's record the account the core found for its key
 * (a key lookup) or charged (its rate-limit window). Everything else passes through.
 *
 * @example
 * ```ts
 * const handler = ipoRouter(observeAccounts(store));
 * ```
 */
export function observeAccounts(store: Store): Store {
  const findApiKey = async (hash: string, call?: StoreCallOptions): Promise<KeyGrant | null> => {
    const record = requestRecords.getStore();
    const grant = await store.findApiKey(hash, call);
    if (record !== undefined && grant !== null && !grant.revoked) record.account = grant.accountId;
    return grant;
  };
  const hitRateLimit = (input: { now: number; windowMs: number; windows: RateLimitWindow[] }, call?: StoreCallOptions): RateLimitOutcome | Promise<RateLimitOutcome> => {
    const record = requestRecords.getStore();
    if (record !== undefined) {
      // `acct:<id>` (or, with that window off, `gmp:<id>`): the request's valid key's account.
      const charged = input.windows.find((w) => w.key.startsWith('acct:')) ?? input.windows.find((w) => w.key.startsWith('gmp:'));
      if (charged !== undefined) record.account = charged.key.slice(charged.key.indexOf(':') + 1);
    }
    return store.hitRateLimit(input, call);
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      if (property === 'findApiKey') return findApiKey;
      if (property === 'hitRateLimit') return hitRateLimit;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined) {
        method = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });
}
