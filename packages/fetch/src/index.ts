/**
 * @ipokit/fetch: the ipokit IPO API as a Web-standard fetch handler, `(Request) => Response`,
 * for Hono (on Node with `@hono/node-server`), Bun, Deno, Cloudflare Workers and anything
 * else that speaks `Request` and `Response`.
 */
import { IpokitError, type AccountRouterArgs, type IpoRouterArgs, type IpoRouterOptions } from '@ipokit/core';
import { accountHandlerOf, type AccountRouterOptions, createIpoHandler, type HandlerRequest, type HandlerResponse, normalizePrefix, outsideAnswer, targetOfUrl, targetUnder } from '@ipokit/core/adapter';
import { readAccountBody } from '@ipokit/core/backend';

export type { AccountRouterArgs, IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

/**
 * Options of the fetch handler: the core's, the path it answers under and where the
 * client address comes from. `Context` is what the runtime passes to a fetch handler
 * after the request (Hono's `c`, Bun's `server`, Deno's `info`, Workers' `env, ctx`),
 * handed on to `clientAddress`.
 */
export interface FetchIpoHandlerOptions<Context extends unknown[] = []> extends IpoRouterOptions {
  /**
   * The path the API answers under, e.g. `'/ipos'`, matched as Express's `app.use(path)`
   * does: ignoring case, at a segment boundary. Requests outside it are answered 404 with
   * the API's error body. Under a Hono route give the route's path:
   * `app.all('/ipos/*', ...)` with `prefix: '/ipos'`. Default none: every request is the API's.
   */
  prefix?: string;
  /**
   * The client address of a request, for the keyless rate limit (keyed requests count per
   * account). A `Request` carries no peer address, so the runtime has to say:
   * `getConnInfo(c).remote.address` with Hono on Node, `server.requestIP(request)?.address`
   * on Bun, `info.remoteAddr.hostname` on Deno, the `CF-Connecting-IP` header on Workers
   * (set by Cloudflare: trust it only there). Read a forwarding header only when your own
   * proxy sets it, as for Express's `trust proxy`.
   *
   * **Without it every caller without a key is `unknown`, and all of them share ONE
   * keyless window**: a single client can use it up for everyone.
   */
  clientAddress?: (request: Request, ...context: Context) => string | undefined;
}

/**
 * The handler {@link ipoHandler} builds. It resolves to the API's answer for every
 * request (it never rejects, unless `clientAddress` throws); the arguments after the
 * request go to `clientAddress`.
 */
export type FetchIpoHandler<Context extends unknown[] = []> = (request: Request, ...context: Context) => Promise<Response>;

/**
 * The three IPO routes as a fetch handler: the same status, headers and body bytes as the
 * Express and Koa routers for the same request. It reads the request-target from
 * `request.url`, as the runtime parsed it: a runtime that normalises URLs (`/ipos/x/..` is
 * `/ipos/`) has done so before the API sees the request. A HEAD request gets the GET
 * answer's status and headers (its Content-Length too) and no body.
 *
 * @example
 * ```ts
 * import { Hono, type Context } from 'hono';
 * import { serve } from '@hono/node-server';
 * import { getConnInfo } from '@hono/node-server/conninfo';
 * import { memoryStore } from '@ipokit/storage-memory';
 * import { ipoHandler } from '@ipokit/fetch';
 *
 * const handle = ipoHandler(memoryStore(), {
 *   prefix: '/ipos', // the route's path
 *   clientAddress: (_request, c: Context) => getConnInfo(c).remote.address, // else ONE keyless window for all
 * });
 * const app = new Hono();
 * app.all('/ipos/*', (c) => handle(c.req.raw, c)); // also answers /ipos itself
 * serve({ fetch: app.fetch, port: 3000 });
 *
 * // Or the handler alone as the server (Bun, Deno, Workers): answered 404 outside /ipos.
 * const response = await ipoHandler(memoryStore(), { prefix: '/ipos' })(new Request('http://localhost/ipos?status=open'));
 * ```
 */
export function ipoHandler<Context extends unknown[] = []>(...[store, options = {}]: IpoRouterArgs<FetchIpoHandlerOptions<Context>>): FetchIpoHandler<Context> {
  const { prefix, clientAddress, ...coreOptions } = options;
  checkClientAddress(clientAddress, 'ipoHandler');
  const mount = normalizePrefix(prefix, 'ipoHandler');
  // The store and options are as IpoRouterArgs pairs them; only this adapter's options were taken out.
  const handle = createIpoHandler(...([store, coreOptions] as IpoRouterArgs));
  const outside = outsideAnswer(mount, 'the IPO API');
  return async (request, ...context) => {
    const r = requestOf(request, mount, clientAddress?.(request, ...context));
    return responseOf(request, r === null ? outside : await handle(r));
  };
}

/**
 * Options of {@link accountRouter}: the fetch handler's (`prefix`, `clientAddress`), the
 * webhook settings, who is signed in (`account(request, ...context)`), and the dashboard at
 * `{prefix}/-/dashboard/`.
 */
export interface FetchAccountRouterOptions<Context extends unknown[] = []> extends FetchIpoHandlerOptions<Context>, AccountRouterOptions<[request: Request, ...context: Context]> {}

/**
 * The account holder's routes (docs/spec.md#account-router) as a fetch handler, behind your
 * app's login: the account with its windows, its keys (create, revoke, rotate), its usage,
 * the IPO routes answered for it without a key, and with `dashboard: true` the dashboard
 * page. The same status, headers and bytes as the Express and Koa account routers.
 *
 * @example
 * ```ts
 * const account = accountRouter(store, {
 *   prefix: '/account',
 *   account: (request) => sessionAccount(request), // your login: the account id or null
 *   dashboard: true, // the page at /account/-/dashboard/
 * });
 * app.all('/account/*', (c) => account(c.req.raw, c));
 * ```
 */
export function accountRouter<Context extends unknown[] = []>(...[store, options]: AccountRouterArgs<FetchAccountRouterOptions<Context>>): FetchIpoHandler<Context> {
  const { prefix, clientAddress, ...rest } = options ?? ({} as Partial<FetchAccountRouterOptions<Context>>);
  const { handle, account } = accountHandlerOf<[request: Request, ...context: Context]>(store, rest, { accountArgs: '(request, ...context)', loadDashboard: () => import('@ipokit/dashboard') });
  checkClientAddress(clientAddress, 'accountRouter');
  const mount = normalizePrefix(prefix, 'ipoHandler');
  const outside = outsideAnswer(mount, 'the account router');
  return async (request, ...context) => {
    const r = requestOf(request, mount, clientAddress?.(request, ...context), true);
    if (r === null) return responseOf(request, outside);
    const accountId = (await account(request, ...context)) ?? null;
    const body = request.method === 'POST' && request.body !== null ? await readAccountBody(request.body as unknown as AsyncIterable<Uint8Array>) : null;
    return responseOf(request, await handle({ ...r, accountId, body }));
  };
}

/** The request as the core takes it, or null when it is outside the prefix. */
function requestOf(request: Request, mount: string, clientAddress: string | undefined, account = false): HandlerRequest | null {
  const url = targetOfUrl(request.url);
  const target = targetUnder(url, mount);
  if (target === null) return null;
  return {
    method: request.method,
    url,
    path: target.path,
    query: target.query,
    // The core reads no other headers (the account routes: Content-Type too); Headers.get
    // joins repeated lines with ', ' as Node does, so a repeated key reads as under Express.
    headers: account
      ? { 'x-api-key': request.headers.get('x-api-key') ?? undefined, 'content-type': request.headers.get('content-type') ?? undefined }
      : { 'x-api-key': request.headers.get('x-api-key') ?? undefined },
    clientAddress,
  };
}

/** HEAD: the core's headers as they are, Content-Length of the GET body included, and no body; 204: no body. */
function responseOf(request: Request, result: HandlerResponse): Response {
  return new Response(request.method === 'HEAD' || result.status === 204 ? null : (result.bytes ?? result.body), { status: result.status, headers: result.headers });
}

function checkClientAddress(clientAddress: unknown, fn: string): void {
  if (clientAddress !== undefined && typeof clientAddress !== 'function') {
    throw new IpokitError('ERR:BADPARAM', `${fn} option clientAddress must be a function (request, ...context) => string | undefined.`, { parameter: 'clientAddress' });
  }
}
