/**
 * `@ipokit/core/node`: what only Node has, kept out of the runtime-neutral core. Today one
 * thing: a webhook transport on `node:http` and `node:https` with kept-alive connections,
 * which a worker on Node sends through several times faster than through `fetch`
 * (docs/spec.md#webhooks). Nothing else in the core imports this file.
 *
 * @example
 * ```ts
 * import { startWebhookWorker } from '@ipokit/core';
 * import { nodeWebhookTransport } from '@ipokit/core/node';
 *
 * const worker = startWebhookWorker(store, { transport: nodeWebhookTransport() });
 * ```
 */
import http from 'node:http';
import https from 'node:https';
import type { WebhookRequest, WebhookTransport } from './delivery.js';

/** Options of {@link nodeWebhookTransport}. */
export interface NodeWebhookTransportOptions {
  /** Connections kept open to one endpoint's host at most (the worker's `perWebhookConcurrency` bounds them too). Default 64. */
  maxSockets?: number;
}

/**
 * A webhook transport on Node's own HTTP clients: connections are kept alive between
 * attempts, a redirect is answered with its status and never followed, the attempt's signal
 * aborts the request. `close()` closes the idle connections (a worker's `stop()` does not).
 *
 * @example
 * ```ts
 * const transport = nodeWebhookTransport();
 * const worker = startWebhookWorker(store, { transport });
 * // on shutdown
 * await worker.stop();
 * transport.close();
 * ```
 */
export function nodeWebhookTransport(options: NodeWebhookTransportOptions = {}): WebhookTransport & { close(): void } {
  const maxSockets = options.maxSockets ?? 64;
  if (!Number.isSafeInteger(maxSockets) || maxSockets < 1) throw new TypeError('maxSockets must be a whole number of at least 1.');
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets }), https: new https.Agent({ keepAlive: true, maxSockets }) };
  const send = (request: WebhookRequest): Promise<{ status: number }> =>
    new Promise((resolve, reject) => {
      const secure = request.url.protocol === 'https:';
      const req = (secure ? https : http).request(
        request.url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': String(new TextEncoder().encode(request.body).byteLength) },
          agent: secure ? agents.https : agents.http,
          signal: request.signal,
        },
        (res) => {
          res.on('error', reject);
          res.on('aborted', () => reject(new Error('the answer was cut off')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
          res.resume(); // the body is not needed: read and dropped
        },
      );
      req.on('error', reject);
      req.end(request.body);
    });
  return Object.assign(send, {
    close(): void {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
