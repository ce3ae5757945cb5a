/**
 * `@ipokit/core/adapter`: what every framework adapter (`@ipokit/express`, `@ipokit/koa`,
 * `@ipokit/fetch`, or yours) needs, written once: the handlers it wraps
 * ({@link createIpoHandler}, {@link createAccountHandler}) and the settings they resolve,
 * the request-target as the core reads it, the `prefix` option and its matching, the answer
 * outside the prefix, and the account router's options with the dashboard loaded on
 * demand. An adapter is then the translation only:
 * its framework's request into a {@link HandlerRequest}, a {@link HandlerResponse} into its
 * framework's answer. Runtime-neutral, like the rest of the core.
 *
 * @example
 * ```ts
 * import { createIpoHandler, normalizePrefix, originForm, targetUnder } from '@ipokit/core/adapter';
 *
 * const mount = normalizePrefix('/ipos', 'ipoRouter');
 * const handle = createIpoHandler(memoryStore());
 * const target = targetUnder(originForm(req.url), mount); // null: not the API's
 * if (target !== null) await handle({ method: req.method, url: req.url, ...target, headers: req.headers, clientAddress: req.ip });
 * ```
 */

export {
  accountHandlerOf,
  normalizePrefix,
  originForm,
  outsideAnswer,
  targetOfUrl,
  targetUnder,
  type AccountRouterOptions,
  type AdapterAccountHandler,
  type DashboardLoader,
  type TargetParts,
} from './http/adapter.js';
// The handlers the adapters wrap (docs/spec.md#adapters, #account-router).
export { createIpoHandler, type HandlerRequest, type HandlerResponse, type IpoHandler } from './http/handler.js';
export {
  createAccountHandler,
  DASHBOARD_KEY_ID,
  MAX_ACCOUNT_BODY_BYTES,
  type AccountHandler,
  type AccountHandlerOptions,
  type AccountRequest,
  type AccountRequestBody,
  type DashboardAsset,
  type DashboardAssets,
} from './http/account-handler.js';
// The settings as the handlers resolve them (docs/spec.md#settings).
export { DEFAULT_OPTIONS, resolveOptions, type ResolvedOptions } from './model/options.js';
