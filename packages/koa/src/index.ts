/**
 * @ipokit/koa: the ipokit IPO API as Koa middleware (Koa 2.13+ and 3).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createIpoHandler, IpokitError, type IpoRouterArgs, type IpoRouterOptions } from '@ipokit/core';

export type { IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

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
  const mount = normalizePrefix(prefix);
  // The store and options are as IpoRouterArgs pairs them; only the prefix was taken out.
  const handle = createIpoHandler(...([store, coreOptions] as IpoRouterArgs));
  return async (ctx, next) => {
    // The target as sent, not Koa's parsed ctx.path/ctx.querystring (url.parse drops a
    // `#...` and reads `\` as `/` in some targets), so Koa and Express read the same request.
    const target = (ctx.req.url ?? '/').replace(ABSOLUTE_FORM, '');
    const q = target.indexOf('?');
    let path = q < 0 ? target : target.slice(0, q);
    if (mount !== '') {
      const under = path.slice(0, mount.length).toLowerCase() === mount && (path.length === mount.length || path[mount.length] === '/');
      if (!under) return void (await next());
      path = path.slice(mount.length) || '/';
    }
    const result = await handle({
      method: ctx.method,
      url: ctx.originalUrl,
      path,
      query: q < 0 ? '' : target.slice(q + 1),
      headers: ctx.headers,
      clientAddress: ctx.ip,
    });
    // Something else answered meanwhile (a timeout middleware), or the client left: the
    // answer has nowhere to go, and that is no error.
    const { res } = ctx;
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    // Status and headers before the body, so Koa keeps our Content-Type. The headers go
    // straight to Node's response (what ctx.set does, without its per-header dispatch);
    // Content-Length is left to Koa, which measures the string body itself (and sends
    // that length, without a body, for HEAD).
    ctx.status = result.status;
    const { headers } = result;
    for (const name in headers) {
      if (name !== 'Content-Length') res.setHeader(name, headers[name]!);
    }
    ctx.body = result.body;
  };
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string' || (prefix !== '' && !prefix.startsWith('/')) || /[?#]/.test(prefix)) {
    const got = JSON.stringify(prefix) ?? String(prefix);
    throw new IpokitError('ERR:BADPARAM', `ipoRouter option prefix must be a path starting with "/", e.g. "/ipos" (got ${got}).`, { parameter: 'prefix' });
  }
  return prefix.replace(/\/+$/, '').toLowerCase();
}
