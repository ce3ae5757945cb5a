/**
 * @ipokit/koa: the ipokit IPO API as Koa middleware (Koa 2.13+ and 3).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type AccountRouterArgs, type IpoRouterArgs, type IpoRouterOptions } from '@ipokit/core';
import { accountHandlerOf, type AccountRouterOptions, createIpoHandler, type HandlerRequest, type HandlerResponse, normalizePrefix, originForm, targetUnder } from '@ipokit/core/adapter';
import { parsedAccountBody, readAccountBody } from '@ipokit/core/backend';

export type { AccountRouterArgs, IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

/** Options of the Koa router: the core's, plus the path it answers under. */
export interface KoaIpoRouterOptions extends IpoRouterOptions {
  /**
   * The path the router answers under, e.g. `'/ipos'`, matched as Express's `app.use(path)`
   * does: ignoring case, at a segment boundary. Other requests go to the next middleware.
   * Default none: every request is the router's (for `koa-mount`).
   */
  prefix?: string;
}

/** What the router reads and sets on a Koa context (Koa 2.13+ and 3 both fit). */
export interface KoaContextLike {
  method: string;
  /** Node's request: its `url` is the target below koa-mount's mount, as sent. */
  req: IncomingMessage;
  /** Node's response: the core's headers are set on it directly. */
  res: ServerResponse;
  originalUrl: string;
  headers: IncomingHttpHeaders;
  /** The client address; follows `app.proxy`. */
  ip: string;
  status: number;
  body: unknown;
  /** Koa's request; `body` is set by a body parser (koa-bodyparser), if the app has one. */
  request?: { body?: unknown };
}

/** A Koa middleware function, as `app.use` takes it. */
export type IpoMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/**
 * The three IPO routes as Koa middleware. The client address is `ctx.ip`, so it follows
 * the app's `proxy` setting. Bad requests are answered here (400/404/...); errors from
 * middleware after it propagate to Koa untouched.
 *
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { memoryStore } from '@ipokit/storage-memory';
 * import { ipoRouter } from '@ipokit/koa';
 *
 * const app = new Koa();
 * app.use(ipoRouter(memoryStore(), { prefix: '/ipos' })); // or: app.use(mount('/ipos', ipoRouter(store)))
 * app.listen(3000);
 * ```
 */
export function ipoRouter(...[store, options = {}]: IpoRouterArgs<KoaIpoRouterOptions>): IpoMiddleware {
  const { prefix, ...coreOptions } = options;
  const mount = normalizePrefix(prefix, 'ipoRouter');
  // The store and options are as IpoRouterArgs pairs them; only the prefix was taken out.
  const handle = createIpoHandler(...([store, coreOptions] as IpoRouterArgs));
  return async (ctx, next) => {
    const request = requestOf(ctx, mount);
    if (request === null) return void (await next());
    send(ctx, await handle(request));
  };
}

/**
 * Options of {@link accountRouter}: the Koa router's (its `prefix` too), the webhook
 * settings, who is signed in (`account(ctx)`), and the dashboard at `{prefix}/-/dashboard/`.
 */
export interface KoaAccountRouterOptions extends KoaIpoRouterOptions, AccountRouterOptions<[ctx: KoaContextLike]> {}

/**
 * The account holder's routes (docs/spec.md#account-router) as Koa middleware, behind your
 * app's login: the account with its windows, its keys (create, revoke, rotate), its usage,
 * the IPO routes answered for it without a key, and with `dashboard: true` the dashboard
 * page. A body your app parsed already (koa-bodyparser) is taken as parsed.
 *
 * @example
 * ```ts
 * app.use(accountRouter(store, {
 *   prefix: '/account',
 *   account: (ctx) => ctx.state.user?.accountId ?? null, // your login
 *   dashboard: true, // the page at /account/-/dashboard/
 * }));
 * ```
 */
export function accountRouter(...[store, options]: AccountRouterArgs<KoaAccountRouterOptions>): IpoMiddleware {
  const { prefix, ...rest } = options ?? ({} as Partial<KoaAccountRouterOptions>);
  const { handle, account } = accountHandlerOf<[ctx: KoaContextLike]>(store, rest, { accountArgs: '(ctx)', loadDashboard: () => import('@ipokit/dashboard') });
  const mount = normalizePrefix(prefix, 'ipoRouter');
  return async (ctx, next) => {
    const request = requestOf(ctx, mount);
    if (request === null) return void (await next());
    const accountId = (await account(ctx)) ?? null;
    // A body the app's parser read (its stream ended) is taken as parsed; else read here.
    const body = ctx.method !== 'POST' ? null : ctx.req.readableEnded ? parsedAccountBody(ctx.request?.body) : await readAccountBody(ctx.req);
    send(ctx, await handle({ ...request, accountId, body }));
  };
}

/** The request as the core takes it, or null when it is outside the prefix. */
function requestOf(ctx: KoaContextLike, mount: string): HandlerRequest | null {
  // The target as sent, not Koa's parsed ctx.path/ctx.querystring (url.parse drops a
  // `#...` and reads `\` as `/` in some targets), so Koa and Express read the same request.
  const target = targetUnder(originForm(ctx.req.url ?? '/'), mount);
  if (target === null) return null;
  return { method: ctx.method, url: ctx.originalUrl, path: target.path, query: target.query, headers: ctx.headers, clientAddress: ctx.ip };
}

function send(ctx: KoaContextLike, result: HandlerResponse): void {
  // Something else answered meanwhile (a timeout middleware), or the client left: the
  // answer has nowhere to go, and that is no error.
  const { res } = ctx;
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  // Status and headers before the body, so Koa keeps our Content-Type. The headers go
  // straight to Node's response (what ctx.set does, without its per-header dispatch);
  // Content-Length is left to Koa, which measures the body itself (and sends that length,
  // without a body, for HEAD).
  ctx.status = result.status;
  const { headers } = result;
  for (const name in headers) {
    if (name !== 'Content-Length') res.setHeader(name, headers[name]!);
  }
  const { bytes } = result;
  ctx.body = result.status === 204 ? null : bytes === undefined ? result.body : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
