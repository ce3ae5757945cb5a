/**
 * @ipokit/express: the ipokit IPO API as Express middleware (Express 4.18+ and 5).
 */
import type { NextFunction, Request, Response } from 'express';
import { createIpoHandler, type IpoRouterArgs } from '@ipokit/core';

export type { IpoRouterArgs, IpoRouterOptions } from '@ipokit/core';

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
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

export function ipoRouter(...args: IpoRouterArgs): IpoRequestHandler {
  const handle = createIpoHandler(...args);
  return (req, res, next) => {
    // req.url is the target below the mount; req.originalUrl is the target as sent.
    // Node keeps an absolute-form target (`GET http://host/ipos/X`, RFC 9112 3.2.2) as is.
    let url = req.url.replace(ABSOLUTE_FORM, '');
    const sent = req.originalUrl.replace(ABSOLUTE_FORM, '');
    // Express 4 strips the slash after the mount too (`/ipos//gmp` -> `/gmp`): put it back.
    const mount = sent.endsWith(url) ? sent.slice(0, sent.length - url.length) : '';
    if (mount.endsWith('/')) url = sent.slice(mount.length - 1);
    const q = url.indexOf('?');
    handle({
      method: req.method,
      url: req.originalUrl,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      headers: req.headers,
      clientAddress: req.ip,
    }).then((result) => {
      // Something else answered meanwhile (a timeout middleware), or the client left: the
      // answer has nowhere to go, and that is no error.
      if (res.headersSent || res.writableEnded || res.destroyed) return;
      // Write the core's bytes as they are: res.send would add an ETag and answer 304s.
      res.writeHead(result.status, result.headers);
      res.end(result.body);
    }, next);
  };
}
