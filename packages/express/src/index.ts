/**
 * @ipokit/express: the ipokit IPO API as Express middleware (Express 4.18+ and 5).
 */
import type { NextFunction, Request, Response } from 'express';
import { type AccountRouterArgs, type IpoRouterArgs } from '@ipokit/core';
import { accountHandlerOf, type AccountRouterOptions as SharedAccountRouterOptions, createIpoHandler, type HandlerRequest, type HandlerResponse, originForm, targetUnder } from '@ipokit/core/adapter';
import { parsedAccountBody, readAccountBody } from '@ipokit/core/backend';

export type { AccountRouterArgs, IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

/** An Express middleware function, as `app.use` takes it. */
export type IpoRequestHandler = (req: Request, res: Response, next: NextFunction) => void;

/**
 * The three IPO routes as Express middleware, answered under wherever it is mounted.
 * The client address is `req.ip`, so it follows the app's `trust proxy` setting.
 * Bad requests are answered here (400/404/...), never passed to Express as errors.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { memoryStore } from '@ipokit/storage-memory';
 * import { ipoRouter } from '@ipokit/express';
 *
 * const app = express();
 * app.use('/ipos', ipoRouter(memoryStore()));
 * app.listen(3000);
 * ```
 */
export function ipoRouter(...args: IpoRouterArgs): IpoRequestHandler {
  const handle = createIpoHandler(...args);
  return (req, res, next) => {
    handle(requestOf(req)).then((result) => send(res, result), next);
  };
}

/**
 * Options of {@link accountRouter}: the IPO router's (for its IPO routes), the webhook
 * settings, who is signed in (`account(req)`), and the dashboard at `{mount}/-/dashboard/`.
 */
export interface AccountRouterOptions extends SharedAccountRouterOptions<[req: Request]> {}

/**
 * The account holder's routes (docs/spec.md#account-router) as Express middleware, behind
 * your app's login: the account with its windows, its keys (create, revoke, rotate), its
 * usage, the IPO routes answered for it without a key, and with `dashboard: true` the
 * dashboard page. A body your app parsed already (`express.json()`) is taken as parsed.
 *
 * @example
 * ```ts
 * app.use('/account', requireLogin, accountRouter(store, {
 *   account: (req) => req.session.accountId ?? null, // your login
 *   dashboard: true, // the page at /account/-/dashboard/
 * }));
 * ```
 */
export function accountRouter(...[store, options]: AccountRouterArgs<AccountRouterOptions>): IpoRequestHandler {
  const { handle, account } = accountHandlerOf(store, options, { accountArgs: '(req)', loadDashboard: () => import('@ipokit/dashboard') });
  return (req, res, next) => {
    (async () => {
      const request = requestOf(req);
      const accountId = (await account(req)) ?? null;
      // A body the app's parser read (its stream ended) is taken as parsed; else read here.
      const body = req.method !== 'POST' ? null : req.readableEnded ? parsedAccountBody((req as { body?: unknown }).body) : await readAccountBody(req);
      return handle({ ...request, accountId, body });
    })().then((result) => send(res, result), next);
  };
}

/** The request as the core takes it: the target as sent, and its path and query below the mount. */
function requestOf(req: Request): HandlerRequest {
  // req.url is the target below the mount; req.originalUrl is the target as sent.
  // Node keeps an absolute-form target (`GET http://host/ipos/X`, RFC 9112 3.2.2) as is.
  let url = originForm(req.url);
  const sent = originForm(req.originalUrl);
  // Express 4 strips the slash after the mount too (`/ipos//gmp` -> `/gmp`): put it back.
  const mount = sent.endsWith(url) ? sent.slice(0, sent.length - url.length) : '';
  if (mount.endsWith('/')) url = sent.slice(mount.length - 1);
  const { path, query } = targetUnder(url, '')!;
  return { method: req.method, url: req.originalUrl, path, query, headers: req.headers, clientAddress: req.ip };
}

function send(res: Response, result: HandlerResponse): void {
  // Something else answered meanwhile (a timeout middleware), or the client left: the
  // answer has nowhere to go, and that is no error.
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  // Write the core's bytes as they are: res.send would add an ETag and answer 304s.
  res.writeHead(result.status, result.headers);
  const { bytes } = result;
  res.end(bytes === undefined ? result.body : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
