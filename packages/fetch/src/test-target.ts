/**
 * The servers the HTTP suite runs the fetch handler in, on Node with `@hono/node-server`:
 * the handler as the whole server (the shape of Bun, Deno and Workers), and the handler
 * under a Hono route; and what the fuzzer must know about them. For this package's tests
 * and scripts/fuzz.ts only (type imports of @ipokit/testing: no vitest); not published.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import type { AccountHttpTarget, HttpTarget, KnownBug, StartedTarget } from '@ipokit/testing';
// Straight from the source file, as scripts/fuzz.ts imports it: @ipokit/testing loads vitest.
import { describeRequest, generatedRequest } from '../../testing/src/fuzz.js';
import { accountRouter, ipoHandler } from './index.js';

/**
 * The handler alone as the server's fetch callback, with `prefix: '/ipos'` (matched
 * ignoring case, as Express matches a mount path) and the socket's address.
 *
 * @example
 * ```ts
 * testHttp({ target: fetchTarget, createStore: () => memoryStore() });
 * ```
 */
export const fetchTarget: HttpTarget = {
  name: 'fetch handler on @hono/node-server',
  start: (store, options) => serveFetch(bareHandler(store, options), '/ipos'),
  startInApp: (store, options) => serveFetch(honoApp(store, options, true).fetch, '/ipos'),
};

/**
 * The account suite's target: `accountRouter` under a Hono route, `app.all('/account/*')`
 * (and `/account` itself), signing in the account the `x-test-account` header names.
 *
 * @example
 * ```ts
 * testAccountRouter({ target: fetchAccountTarget, createStore: () => memoryStore() });
 * ```
 */
export const fetchAccountTarget: AccountHttpTarget = {
  name: 'fetch accountRouter under hono',
  start: (store, options) => {
    const handle = accountRouter<[Context]>(store, {
      ...options,
      prefix: '/account',
      account: (request: Request) => request.headers.get('x-test-account'),
      clientAddress: (_request: Request, c: Context) => getConnInfo(c).remote.address,
    });
    const app = new Hono();
    app.all('/account', (c) => handle(c.req.raw, c));
    app.all('/account/*', (c) => handle(c.req.raw, c));
    return serveFetch(app.fetch, '/account');
  },
};

/**
 * The handler under a Hono route, `app.all('/ipos/*', ...)`, as the README mounts it.
 *
 * @example
 * ```ts
 * testHttp({ target: honoTarget, createStore: () => memoryStore() });
 * ```
 */
export const honoTarget: HttpTarget = {
  name: 'hono app.all on @hono/node-server',
  start: (store, options) => serveFetch(honoApp(store, options, false).fetch, '/ipos'),
  startInApp: (store, options) => serveFetch(honoApp(store, options, true).fetch, '/ipos'),
};

/**
 * The handler alone, its client address the socket's (or, with `trustProxy`, the first
 * X-Forwarded-For entry, as Express's `trust proxy` true takes it).
 *
 * @example
 * ```ts
 * serveFetch(bareHandler(store, {}), '/ipos');
 * ```
 */
export function bareHandler(store: Store, options: IpoRouterOptions, trustProxy = false): (request: Request, env: HttpBindings) => Promise<Response> {
  return ipoHandler(store, {
    ...options,
    prefix: '/ipos',
    clientAddress: (request: Request, env: HttpBindings) =>
      trustProxy ? (request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() ?? env.incoming.socket.remoteAddress) : env.incoming.socket.remoteAddress,
  });
}

/**
 * A Hono app with the handler at `/ipos`; `inApp` adds the app around it that
 * {@link HttpTarget.startInApp} describes, in that order.
 */
function honoApp(store: Store, options: IpoRouterOptions, inApp: boolean): Hono {
  const handle = ipoHandler(store, { ...options, prefix: '/ipos', clientAddress: (_request, c: Context) => getConnInfo(c).remote.address });
  const app = new Hono();
  if (inApp) {
    // After next(): Hono drops headers set with c.header() before it when the handler
    // returns a Response of its own (as any fetch handler does).
    app.use(async (c, next) => {
      await next();
      c.header('x-app', 'before');
    });
    app.get('/health', (c) => c.text('ok'));
  }
  app.all('/ipos/*', (c) => handle(c.req.raw, c));
  if (inApp) {
    app.get('/iposX', (c) => c.text('app iposX'));
    app.get('/other', (c) => c.text('app other'));
    app.notFound((c) => c.text('app 404', 404));
  }
  return app;
}

/**
 * Serves a fetch callback with `@hono/node-server` on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * const { baseUrl, close } = await serveFetch(app.fetch, '/ipos');
 * ```
 */
export async function serveFetch(fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>, mount: string): Promise<StartedTarget> {
  const server = createAdaptorServer({ fetch: (request, env) => fetch(request, env as HttpBindings) }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${mount}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}

/**
 * Whether a fetch runtime hands the handler another request-target than the one sent: it
 * parses it as a WHATWG URL before any handler runs, resolving dot segments (`.`, `..`,
 * `%2e`) and percent-encoding what a URL cannot hold (`"`, `<`, `{`, ...); a `\` in the
 * path is answered by @hono/node-server itself with a bare 400. An absolute-form target
 * (`GET http://host/ipos/...`) reaches the handler as the same URL, so `maxUrlLength` counts
 * it without the origin, where Express counts the origin too: near the limit they differ.
 * Express and Koa see the target as sent, so these requests may be answered otherwise.
 *
 * @example
 * ```ts
 * rewrittenByRuntime('/ipos/ORBIT/..', false); // true
 * rewrittenByRuntime('/ipos/ORBIT?x=1', false); // false
 * ```
 */
export function rewrittenByRuntime(target: string, absoluteForm: boolean): boolean {
  const originForm = absoluteForm ? target.slice(target.indexOf('/', target.indexOf('//') + 2)) : target;
  const parsed = new URL(originForm, 'http://runtime.invalid');
  if (parsed.href.slice(parsed.origin.length) !== originForm) return true;
  // The origin (ASCII) pushes the target past the limit for Express only.
  const bytes = new TextEncoder().encode(originForm).length;
  return absoluteForm && bytes <= DEFAULT_MAX_URL_LENGTH && bytes + (target.length - originForm.length) > DEFAULT_MAX_URL_LENGTH;
}

/** The router's default maxUrlLength, which the fuzzer runs with. */
const DEFAULT_MAX_URL_LENGTH = 4096;

/**
 * The fuzzer's name for the requests of {@link rewrittenByRuntime}: counted, not failed (a
 * documented difference of fetch runtimes, not a defect).
 *
 * @example
 * ```ts
 * await fuzzHttp({ target: fetchTarget, createStore, runs: 1000, knownBugs: [...REPORTED_BUGS, URL_PARSED_BY_RUNTIME] });
 * ```
 */
export const URL_PARSED_BY_RUNTIME: KnownBug = {
  id: 'url-parsed-by-the-runtime',
  description: 'the runtime parsed the request-target as a WHATWG URL before the fetch handler ran (documented, not a defect)',
  matches: (_problems, request) => rewrittenByRuntime(request.target, request.absoluteForm),
};

/**
 * Whether the runtime rewrote the request-target of the fuzzer's run `index` of `seed`
 * ({@link rewrittenByRuntime}): such runs are left out when answers are compared with Express.
 *
 * @example
 * ```ts
 * compareFuzzReports(express, fetch).filter(({ index }) => !rewrittenRun(seed, index)); // []
 * ```
 */
export function rewrittenRun(seed: number, index: number): boolean {
  const request = generatedRequest(seed, index);
  // `GET <target> HTTP/1.1`. The servers' ports are unknown here: the longest origin leaves
  // out every run that any port could push past maxUrlLength (and a few more).
  const target = describeRequest(request, 'http://127.0.0.1:65535').split('\n')[0]!.split(' ')[1]!;
  return rewrittenByRuntime(target, request.absoluteForm);
}
