/**
 * `@ipokit/core/node`: what only Node has, kept out of the runtime-neutral core. Today one
 * thing: a webhook transport on undici's dispatcher (the HTTP client Node's own `fetch` is
 * built on, without fetch's Web-stream and header machinery) over kept-alive connections,
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
import { Agent, type Dispatcher } from 'undici';
import type { WebhookRequest, WebhookTransport } from './delivery.js';
import { EarliestTimer } from './earliest-timer.js';

/** Options of {@link nodeWebhookTransport}. */
export interface NodeWebhookTransportOptions {
  /** Connections kept open to one endpoint's origin at most (the worker's `perWebhookConcurrency` bounds them too). Default 64. */
  maxSockets?: number;
}

/** Deadlines this close together share one look at the clock. */
const SWEEP_SLACK_MS = 20;

/**
 * A webhook transport on undici's dispatcher (the HTTP client under Node's own `fetch`,
 * without fetch's streams and headers machinery): connections to each origin are kept alive
 * between attempts (one request at a time on each: a `POST` is never pipelined), a redirect
 * is answered with its status and never followed, and the answer's status is the outcome as
 * soon as it arrives (its body is read and dropped). It keeps each attempt's time itself,
 * without reading the attempt's `signal`: one timer for all attempts in flight, looking when
 * the earliest may have run out (up to 20 ms after), aborts those past `timeoutMs`.
 * `close()` closes the connections (a worker's `stop()` does not).
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
  // (no time limits of undici's own: each attempt's timeoutMs is kept here; maxRedirections
  // stays 0, so a redirect is answered with its status)
  const dispatcher = new Agent({ connections: maxSockets, pipelining: 1, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });
  const inFlight = new Set<Attempt>();
  const sweep = (): void => {
    const t = performance.now();
    let next = Infinity;
    for (const a of inFlight) {
      if (a.deadline <= t) {
        inFlight.delete(a);
        a.timeOut();
      } else next = Math.min(next, a.deadline);
    }
    if (next !== Infinity) timer.by(next + SWEEP_SLACK_MS);
  };
  // (unref'd: attempts in flight keep the process alive through their connections)
  const timer = new EarliestTimer(sweep, true);
  const send = (req: WebhookRequest): Promise<{ status: number }> =>
    new Promise((resolve, reject) => {
      const target = targetOf(req.url);
      const attempt = new Attempt(performance.now() + req.timeoutMs, resolve, reject, () => inFlight.delete(attempt));
      inFlight.add(attempt);
      timer.by(attempt.deadline + SWEEP_SLACK_MS);
      dispatcher.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers: req.headers, body: req.body }, attempt);
    });
  return Object.assign(send, {
    close(): void {
      timer.clear();
      void dispatcher.destroy().catch(() => undefined);
    },
  });
}

/** A URL's origin and path, read once per URL object (the worker hands the same one to each attempt). */
const targets = new WeakMap<URL, { origin: string; path: string }>();

function targetOf(url: URL): { origin: string; path: string } {
  let target = targets.get(url);
  if (target === undefined) {
    target = { origin: url.origin, path: url.pathname + url.search };
    targets.set(url, target);
  }
  return target;
}

/** One request's handler: settles with the status when it arrives, drops the body. */
class Attempt implements Dispatcher.DispatchHandlers {
  private abort: ((err?: Error) => void) | null = null;
  private settled = false;
  private timedOut = false;

  constructor(
    readonly deadline: number,
    private readonly resolve: (value: { status: number }) => void,
    private readonly reject: (err: Error) => void,
    private readonly done: () => void,
  ) {}

  timeOut(): void {
    this.timedOut = true;
    // (before the connection: onConnect aborts it)
    this.abort?.(timeoutError());
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort(timeoutError());
  }

  onHeaders(statusCode: number): boolean {
    // (1xx informational answers are followed by the real one)
    if (statusCode >= 200 && !this.settled) {
      this.settled = true;
      this.resolve({ status: statusCode });
    }
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    this.done();
    if (!this.settled) {
      this.settled = true;
      this.reject(new Error('the request ended without an answer'));
    }
  }

  onError(err: Error): void {
    this.done();
    if (!this.settled) {
      this.settled = true;
      this.reject(this.timedOut ? timeoutError() : err);
    }
  }
}

function timeoutError(): Error {
  const err = new Error('no answer in time');
  err.name = 'TimeoutError';
  return err;
}
