/** The framework adapters' shared plumbing; the `@ipokit/core/adapter` entry (src/adapter.ts) lists it. */import { createAccountHandler, type AccountHandler, type AccountHandlerOptions, type AccountRouterArgs, type DashboardAssets } from './account-handler.js';
import { IpokitError } from '../model/errors.js';
import type { HandlerResponse, IpoRouterArgs } from './handler.js';
import { originForm } from './request.js';
import { errorBody } from './serialize.js';

export { originForm };

/**
 * The request-target of an absolute URL (a fetch `Request`'s `url`): everything after
 * `scheme://authority`, as the runtime serialised it, `/` when nothing follows. Sliced, not
 * re-parsed with `new URL`: that would cost a parse per request, and the runtime has parsed
 * it once already.
 *
 * @example
 * ```ts
 * targetOfUrl('http://localhost:3000/ipos?status=open'); // '/ipos?status=open'
 * ```
 */
export function targetOfUrl(url: string): string {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash < 0 ? '/' : url.slice(slash);
}

/**
 * The `prefix` option as {@link targetUnder} matches it: `''` when not given (every request
 * is the router's), else the path lower-cased without trailing slashes. Anything but a path
 * starting with `/` (without `?` or `#`) throws `ERR:BADPARAM` at start-up, naming `fn`.
 *
 * @example
 * ```ts
 * normalizePrefix('/IPOS/', 'ipoRouter'); // '/ipos'
 * normalizePrefix(undefined, 'ipoRouter'); // ''
 * normalizePrefix('ipos', 'ipoRouter'); // throws: ipoRouter option prefix must be a path starting with "/" ...
 * ```
 */
export function normalizePrefix(prefix: string | undefined, fn: string): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string' || (prefix !== '' && !prefix.startsWith('/')) || /[?#]/.test(prefix)) {
    const got = JSON.stringify(prefix) ?? String(prefix);
    throw new IpokitError('ERR:BADPARAM', `${fn} option prefix must be a path starting with "/", e.g. "/ipos" (got ${got}).`, { parameter: 'prefix' });
  }
  return prefix.replace(/\/+$/, '').toLowerCase();
}

/** The path (below the mount) and the raw query of a request-target, as {@link HandlerRequest} takes them. */
export interface TargetParts {
  path: string;
  query: string;
}

/**
 * An origin-form request-target split into its path below `mount` and its query, or null
 * when it is outside the mount. `mount` is a {@link normalizePrefix} result, matched as
 * Express's `app.use(path)` matches: ignoring case, at a segment boundary (`/iposx` is
 * outside `/ipos`); `''` takes every target.
 *
 * @example
 * ```ts
 * targetUnder('/IPOS/X?a=1', '/ipos'); // { path: '/X', query: 'a=1' }
 * targetUnder('/ipos', '/ipos'); // { path: '/', query: '' }
 * targetUnder('/iposx', '/ipos'); // null
 * ```
 */
export function targetUnder(target: string, mount: string): TargetParts | null {
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  if (mount !== '') {
    const under = path.slice(0, mount.length).toLowerCase() === mount && (path.length === mount.length || path[mount.length] === '/');
    if (!under) return null;
    path = path.slice(mount.length) || '/';
  }
  return { path, query: q < 0 ? '' : target.slice(q + 1) };
}

/**
 * The 404 (`ERR:NOTFOUND`, the API's error body) of a request outside the prefix, for an
 * adapter that has no next handler to pass it to; built once, as it never changes.
 * `what` names the router in the detail.
 *
 * @example
 * ```ts
 * const outside = outsideAnswer('/ipos', 'the IPO API');
 * outside.status; // 404; outside.body: '{"status":"404",...,"detail":"No such route: the IPO API answers under /ipos.",...}'
 * ```
 */
export function outsideAnswer(mount: string, what: string): HandlerResponse {
  const body = JSON.stringify(errorBody('ERR:NOTFOUND', `No such route: ${what} answers under ${mount}.`));
  return {
    status: 404,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'private, no-store',
      'Content-Length': String(new TextEncoder().encode(body).length),
    },
    body,
  };
}

/**
 * Options of every adapter's `accountRouter`: the IPO router's (for its IPO routes), the
 * webhook settings, who is signed in, and the dashboard. `Args` are what the adapter hands
 * to `account`: Express's `req`, Koa's `ctx`, a fetch `Request` and the runtime's context.
 */
export interface AccountRouterOptions<Args extends unknown[]> extends Omit<AccountHandlerOptions, 'dashboardAssets'> {
  /**
   * The signed-in account's id, from your app's own login (a session, a cookie, a token),
   * or null when nobody is signed in (answered 401). ipokit never sees a password.
   */
  account: (...args: Args) => string | null | undefined | Promise<string | null | undefined>;
  /** Serve the dashboard page at `{mount}/-/dashboard/` (default false). */
  dashboard?: boolean;
}

/** How an adapter loads `@ipokit/dashboard` (only when `dashboard: true`): `() => import('@ipokit/dashboard')`. */
export type DashboardLoader = () => Promise<{ dashboardAssets: DashboardAssets }>;

/** What {@link accountHandlerOf} builds: the core's handler and the app's `account` function. */
export interface AdapterAccountHandler<Args extends unknown[]> {
  handle: AccountHandler;
  account: AccountRouterOptions<Args>['account'];
}

/**
 * The account handler of an adapter's `accountRouter`, from its store and options (those
 * of the adapter's own, such as `prefix`, taken out first). Checks that `account` is a
 * function (`ERR:BADPARAM`, its parameters shown as `accountArgs`), and with
 * `dashboard: true` loads the dashboard's files with `loadDashboard`: the adapter, which
 * depends on `@ipokit/dashboard`, imports it; the core does not.
 *
 * @example
 * ```ts
 * const { prefix, ...options } = given;
 * const { handle, account } = accountHandlerOf(store, options, { accountArgs: '(req)', loadDashboard: () => import('@ipokit/dashboard') });
 * const answer = await handle({ ...request, accountId: (await account(req)) ?? null, body: null });
 * ```
 */
export function accountHandlerOf<Args extends unknown[]>(
  store: AccountRouterArgs<AccountRouterOptions<Args>>[0],
  options: Partial<AccountRouterOptions<Args>> | undefined,
  how: { accountArgs: string; loadDashboard: DashboardLoader },
): AdapterAccountHandler<Args> {
  const { account, dashboard, ...core } = options ?? {};
  if (typeof account !== 'function') {
    throw new IpokitError('ERR:BADPARAM', `accountRouter needs the option account: ${how.accountArgs} => the signed-in account id, or null.`, { parameter: 'account' });
  }
  const handlerOptions: AccountHandlerOptions = dashboard === true ? { ...core, dashboardAssets: how.loadDashboard().then((m) => m.dashboardAssets) } : core;
  // The store and options are as the adapter's AccountRouterArgs paired them; only account and dashboard were taken out.
  return { account, handle: createAccountHandler(...([store, handlerOptions] as IpoRouterArgs<AccountHandlerOptions>)) };
}
