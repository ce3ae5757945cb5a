/**
 * @ipokit/fetch: the ipokit IPO API as a Web-standard fetch handler, `(Request) => Response`,
 * for Hono (on Node with `@hono/node-server`), Bun, Deno, Cloudflare Workers and anything
 * else that speaks `Request` and `Response`.
 */
import { createIpoHandler, IpokitError, type IpoRouterArgs, type IpoRouterOptions } from '@ipokit/core';
import { errorBody } from '@ipokit/core/backend';

export type { IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

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
  if (clientAddress !== undefined && typeof clientAddress !== 'function') {
    throw new IpokitError('ERR:BADPARAM', 'ipoHandler option clientAddress must be a function (request, ...context) => string | undefined.', { parameter: 'clientAddress' });
  }
  const mount = normalizePrefix(prefix);
  // The store and options are as IpoRouterArgs pairs them; only this adapter's options were taken out.
  const handle = createIpoHandler(...([store, coreOptions] as IpoRouterArgs));
  const outside = outsideAnswer(mount);
  return async (request, ...context) => {
    const target = requestTarget(request.url);
    const q = target.indexOf('?');
    let path = q < 0 ? target : target.slice(0, q);
    if (mount !== '') {
      const under = path.slice(0, mount.length).toLowerCase() === mount && (path.length === mount.length || path[mount.length] === '/');
      if (!under) return new Response(request.method === 'HEAD' ? null : outside.body, { status: 404, headers: { ...outside.headers } });
      path = path.slice(mount.length) || '/';
    }
    const result = await handle({
      method: request.method,
      url: target,
      path,
      query: q < 0 ? '' : target.slice(q + 1),
      // The core reads no other header (HandlerRequest); Headers.get joins repeated lines
      // with ', ' as Node does, so a repeated key reads as it does under Express.
      headers: { 'x-api-key': request.headers.get('x-api-key') ?? undefined },
      clientAddress: clientAddress?.(request, ...context),
    });
    // HEAD: the core's headers as they are, Content-Length of the GET body included.
    return new Response(request.method === 'HEAD' ? null : result.body, { status: result.status, headers: result.headers });
  };
}

/**
 * The request-target of an absolute URL: everything after `scheme://authority`, as the
 * runtime serialised it. Sliced, not re-parsed with `new URL`: that would cost a parse per
 * request, and the runtime has already parsed it once.
 */
function requestTarget(url: string): string {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash < 0 ? '/' : url.slice(slash);
}

/** The 404 of a request outside the prefix, built once: it never changes. */
function outsideAnswer(mount: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(errorBody('ERR:NOTFOUND', `No such route: the IPO API answers under ${mount}.`));
  return {
    body,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'private, no-store',
      'Content-Length': String(new TextEncoder().encode(body).length),
    },
  };
}

function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string' || (prefix !== '' && !prefix.startsWith('/')) || /[?#]/.test(prefix)) {
    const got = JSON.stringify(prefix) ?? String(prefix);
    throw new IpokitError('ERR:BADPARAM', `ipoHandler option prefix must be a path starting with "/", e.g. "/ipos" (got ${got}).`, { parameter: 'prefix' });
  }
  return prefix.replace(/\/+$/, '').toLowerCase();
}
