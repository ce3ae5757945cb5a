/**
 * `ipokit serve` on node:http itself (the default framework, `node`): one request listener
 * that hands each request to the core's handlers, with no framework on the request path.
 * It answers as the Express app of `--framework express` does, route for route: the routes
 * outside the mount first (health checks, the push route), then the home route at `/`, the
 * demo's sign-in, the account router, and the API at its mount; anything else is the
 * API's 404. The client address follows X-Forwarded-For as Express's `trust proxy N` does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import { originForm, targetUnder, type AccountHandler, type HandlerResponse, type IpoHandler } from '@ipokit/core/adapter';
import { errorBody, readAccountBody } from '@ipokit/core/backend';
import type { RequestListener } from './access-log.js';

/** An answer the listener writes as it is: status, headers (Content-Length included) and body. */
export interface NodeAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body's bytes, sent instead of `body` when present (the core's list pages). */
  bytes?: Uint8Array;
}

/** The routes of {@link nodeApp}, in the order they are tried. */
export interface NodeAppOptions {
  /**
   * Tried first, for every request (health checks, the push route): an answer, or null when
   * the request is not theirs. `path` is the request-target's path, without its query.
   */
  first?: (method: string, path: string, req: IncomingMessage) => Promise<NodeAnswer> | null;
  /** `GET /` (and HEAD): this value as JSON. Leave it out when the API answers at the root. */
  home?: unknown;
  /** A GET page at a fixed path (the demo's sign-in), answered from the raw query string. */
  page?: { path: string; answer: (query: string) => NodeAnswer };
  /** The account router: its handler, its mount (`/account`) and who is signed in. */
  account?: { handle: AccountHandler; mount: string; accountOf: (req: IncomingMessage) => string | null | undefined | Promise<string | null | undefined> };
  /** The IPO API: its handler and its mount as `normalizePrefix` gives it (`''` for the root). */
  api: { handle: IpoHandler; mount: string };
  /** The answer outside every route (the API's 404, `outsideAnswer`). */
  outside: NodeAnswer;
  /** How many proxies append to X-Forwarded-For (Express's `trust proxy N`). Default 0. */
  trustProxy?: number;
  /** Told each request's client address before it is answered (the access log's record). */
  onAddress?: (address: string | undefined) => void;
  /** Receives what a handler threw; the request is answered 500 with the API's error body. */
  onError: (err: unknown) => void;
}

/**
 * The request listener of `ipokit serve --framework node`: the routes of `options`, each
 * answered through the core's handlers, the same status, headers and bytes as the Express
 * app of `--framework express` (without `X-Powered-By` and Express's ETag on `/`). A HEAD
 * request gets GET's headers and no body (node:http drops it). A handler that throws is
 * logged with `onError` and answered 500; a client that left is not answered.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createIpoHandler, outsideAnswer } from '@ipokit/core/adapter';
 *
 * const listener = nodeApp({ api: { handle: createIpoHandler(memoryStore()), mount: '/ipos' }, outside: outsideAnswer('/ipos', 'the IPO API'), onError: console.error });
 * createServer(listener).listen(3000);
 * ```
 */
export function nodeApp(options: NodeAppOptions): RequestListener {
  const { first, page, account, api, outside, onAddress, onError } = options;
  const trustProxy = options.trustProxy ?? 0;
  const home = options.home === undefined ? null : jsonAnswer(200, options.home);
  const pagePath = page?.path.toLowerCase();
  const failed = (res: ServerResponse) => (err: unknown) => fail(res, err, onError);
  return (req, res) => {
    const url = req.url ?? '/';
    // Node keeps an absolute-form target (`GET http://host/ipos/X`, RFC 9112 3.2.2) as sent.
    const target = url.charCodeAt(0) === 47 /* / */ ? url : originForm(url) || '/';
    const method = req.method ?? 'GET';
    const clientAddress = trustProxy === 0 ? req.socket.remoteAddress : forwardedAddress(req, trustProxy);
    if (onAddress !== undefined) onAddress(clientAddress);
    try {
      if (first !== undefined) {
        const answering = first(method, pathOf(target), req);
        if (answering !== null) return void answering.then((answer) => send(res, answer), failed(res));
      }
      if (home !== null || page !== undefined) {
        const path = pathOf(target);
        const get = method === 'GET' || method === 'HEAD';
        if (home !== null && get && path === '/') return send(res, home);
        if (page !== undefined && get && withoutSlash(path).toLowerCase() === pagePath) return send(res, page.answer(queryOf(target)));
      }
      if (account !== undefined) {
        const under = targetUnder(target, account.mount);
        if (under !== null) return void answerAccount(req, account, { method, url, path: under.path, query: under.query, headers: req.headers, clientAddress }).then((answer) => send(res, answer), failed(res));
      }
      const under = targetUnder(target, api.mount);
      if (under === null) return send(res, outside);
      api.handle({ method, url, path: under.path, query: under.query, headers: req.headers, clientAddress }).then((answer) => send(res, answer), failed(res));
    } catch (err) {
      fail(res, err, onError);
    }
  };
}

/**
 * The client address as Express's `trust proxy N` reads it, by the same library (proxy-addr):
 * the connection's address followed by the X-Forwarded-For entries from right to left; the
 * first `hops` of them are trusted proxies, so the address after them is the client's (the
 * leftmost entry when there are fewer).
 *
 * @example
 * ```ts
 * // connection from 10.0.0.2, X-Forwarded-For: 203.0.113.9, 10.0.0.1
 * forwardedAddress(req, 1); // '10.0.0.1'
 * forwardedAddress(req, 2); // '203.0.113.9'
 * forwardedAddress(req, 5); // '203.0.113.9'
 * ```
 */
export function forwardedAddress(req: Pick<IncomingMessage, 'headers' | 'socket'>, hops: number): string | undefined {
  if (hops <= 0) return req.socket.remoteAddress;
  // proxy-addr reads only the header and the socket's address; undefined when the socket has none
  return proxyaddr(req as IncomingMessage, (_address, i) => i < hops) as string | undefined;
}

async function answerAccount(req: IncomingMessage, account: NonNullable<NodeAppOptions['account']>, request: Parameters<IpoHandler>[0]): Promise<HandlerResponse> {
  const accountId = (await account.accountOf(req)) ?? null;
  const body = req.method === 'POST' ? await readAccountBody(req) : null;
  return account.handle({ ...request, accountId, body });
}

function send(res: ServerResponse, answer: NodeAnswer): void {
  // The client left meanwhile: the answer has nowhere to go, and that is no error.
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  res.writeHead(answer.status, answer.headers);
  const { bytes } = answer;
  res.end(bytes === undefined ? answer.body : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

const INTERNAL = jsonAnswer(500, errorBody('ERR:INTERNAL', 'The server failed to answer this request; the error is in its log.'), 'private, no-store');

function fail(res: ServerResponse, err: unknown, onError: (err: unknown) => void): void {
  // A client that left mid-request (its body cut short) is no server error.
  if (res.destroyed) return;
  try {
    onError(err);
  } catch {
    // A log that cannot be written must not take the server down.
  }
  if (!res.headersSent) send(res, INTERNAL);
  else if (!res.writableEnded) res.destroy();
}

function jsonAnswer(status: number, value: unknown, cacheControl?: string): NodeAnswer {
  const body = JSON.stringify(value);
  const bytes = Buffer.from(body);
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(bytes.byteLength) };
  if (cacheControl !== undefined) headers['Cache-Control'] = cacheControl;
  return { status, headers, body, bytes };
}

/** The path of a request-target: up to its query or fragment. */
function pathOf(target: string): string {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 63 /* ? */ || c === 35 /* # */) return target.slice(0, i);
  }
  return target;
}

/** The raw query of a request-target, without its fragment. */
function queryOf(target: string): string {
  const q = target.indexOf('?');
  if (q < 0) return '';
  const hash = target.indexOf('#', q);
  return target.slice(q + 1, hash < 0 ? undefined : hash);
}

/** Express's routes match with a trailing slash or without. */
function withoutSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
