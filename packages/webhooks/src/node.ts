/**
 * `@ipokit/webhooks/node`: what only Node has, kept out of the runtime-neutral core. Today one
 * thing: a webhook transport on undici's dispatcher (the HTTP client Node's own `fetch` is
 * built on, without fetch's Web-stream and header machinery) over kept-alive connections,
 * which resolves names itself and connects only to the addresses the policy allows
 * (docs/spec.md#webhooks). The worker sends through it by default on Node (the `#platform`
 * import); nothing else in the core imports this file.
 *
 * @example
 * ```ts
 * import { startWebhookWorker } from '@ipokit/webhooks';
 * import { nodeWebhookTransport } from '@ipokit/webhooks/node';
 *
 * const worker = startWebhookWorker(store, { transport: nodeWebhookTransport({ maxSockets: 128 }) });
 * ```
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { buildConnector, Pool, type Dispatcher } from 'undici';
import { isAddressAllowed, parseAllowedNetworks, type AllowedNetworks } from '@ipokit/core/backend';
import { addressNotAllowedError, MAX_ANSWER_KEPT_BYTES, MAX_ANSWER_READ_BYTES, type WebhookRequest, type WebhookTransport } from './delivery.js';
import { EarliestTimer } from './earliest-timer.js';

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Options of {@link nodeWebhookTransport}. */
export interface NodeWebhookTransportOptions {
  /**
   * Requests on a socket at once, over all origins (attempts past it wait for a place, within
   * their time); when the open sockets reach it, idle kept-alive pools are closed, least
   * recently used first. Default 256.
   */
  maxSockets?: number;
  /** Connections to one origin at once (the worker's `perWebhookConcurrency` bounds an endpoint's too). Default 8. */
  maxSocketsPerOrigin?: number;
  /** Origins whose connections are kept between attempts; the least recently used past it are closed. Default 256. */
  maxOrigins?: number;
  /**
   * Networks (CIDRs) outside the public internet that may be connected to, e.g.
   * `['10.1.0.0/16']`; local receivers need `['127.0.0.0/8', '::1/128']`. Default none.
   */
  allowedNetworks?: readonly string[] | AllowedNetworks;
  /** Resolves a name to its addresses. Default `dns.lookup` with `all: true` (the system's resolver, /etc/hosts included). */
  lookup?: (hostname: string) => Promise<readonly ResolvedAddress[]>;
}

/** Deadlines this close together share one look at the clock. */
const SWEEP_SLACK_MS = 20;

/**
 * A webhook transport on undici (Node only). Each name is resolved here and only the
 * addresses the policy allows (public unicast, or `allowedNetworks`) are connected to, the
 * socket then connected to exactly such an address and checked again once connected: a name
 * that resolves, or re-resolves (DNS rebinding), to a refused address is refused with
 * `address not allowed`, and address literals are checked before any connection.
 * Connections to each origin are kept alive between attempts in a pool of at most
 * `maxSocketsPerOrigin` (one request at a time on each: a `POST` is never pipelined), pools
 * in a least-recently-used list of `maxOrigins`, and at most `maxSockets` requests on a
 * socket at once (idle pools closed to make room when the open sockets reach it). A
 * redirect is answered with its status and never followed. An attempt settles when its
 * connection is released (the body read to its end) or closed (the body past 64 KB, or its
 * time up after the status came: the status counts), so it holds its place meanwhile; the
 * first 1 KB of the body is kept. Each attempt's time is kept here, without reading the
 * attempt's `signal`: one timer for all attempts in flight. `close()` closes every connection.
 *
 * @example
 * ```ts
 * const transport = nodeWebhookTransport({ allowedNetworks: ['10.1.0.0/16'] });
 * const worker = startWebhookWorker(store, { transport, webhookAllowedNetworks: ['10.1.0.0/16'] });
 * // on shutdown
 * await worker.stop();
 * transport.close();
 * ```
 */
export function nodeWebhookTransport(options: NodeWebhookTransportOptions = {}): WebhookTransport & { close(): void } {
  const maxSockets = whole('maxSockets', options.maxSockets ?? 256);
  const perOrigin = whole('maxSocketsPerOrigin', options.maxSocketsPerOrigin ?? 8);
  const maxOrigins = whole('maxOrigins', options.maxOrigins ?? 256);
  const allowed = parseAllowedNetworks(options.allowedNetworks);
  const resolve = options.lookup ?? ((hostname: string) => dnsLookup(hostname, { all: true, verbatim: true }) as Promise<ResolvedAddress[]>);

  let openSockets = 0;
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (found) => {
        // (only the addresses the policy allows are ever handed to connect: the socket
        // connects to one of these, so a second, different answer cannot slip in)
        const usable = found.filter((a) => isAddressAllowed(a.address, allowed));
        if (usable.length === 0) {
          callback(found.length === 0 ? Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }) : addressNotAllowedError(), '', 4);
        } else if (lookupOptions.all === true) {
          callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        } else {
          const first = usable.find((a) => lookupOptions.family === undefined || lookupOptions.family === 0 || a.family === lookupOptions.family) ?? usable[0]!;
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
  const baseConnect = buildConnector({ lookup: checkedLookup, timeout: 10_000 });
  const connect: buildConnector.connector = (opts, callback) => {
    // Literals are connected to without a lookup: checked here, before any packet is sent.
    if (isIP(opts.hostname) !== 0 && !isAddressAllowed(opts.hostname, allowed)) {
      callback(addressNotAllowedError(), null);
      return;
    }
    makeRoom();
    baseConnect(opts, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      const s = socket as Socket;
      if (s.remoteAddress === undefined || !isAddressAllowed(s.remoteAddress, allowed)) {
        s.destroy();
        callback(addressNotAllowedError(), null);
        return;
      }
      openSockets++;
      s.once('close', () => openSockets--);
      callback(null, s);
    });
  };

  /** Pools by origin, least recently used first. */
  const pools = new Map<string, { pool: Pool; busy: number }>();
  const poolFor = (origin: string): { pool: Pool; busy: number } => {
    let entry = pools.get(origin);
    if (entry !== undefined) pools.delete(origin);
    else {
      // (no time limits of undici's own: each attempt's timeoutMs is kept here; no
      // redirections, so a redirect is answered with its status)
      entry = { pool: new Pool(origin, { connections: perOrigin, pipelining: 1, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000, connect }), busy: 0 };
    }
    pools.set(origin, entry);
    if (pools.size > maxOrigins) evictIdle(() => pools.size > maxOrigins);
    return entry;
  };
  /** Closes idle pools, least recently used first, while `more()` holds. */
  const evictIdle = (more: () => boolean): void => {
    for (const [origin, entry] of pools) {
      if (!more()) return;
      if (entry.busy > 0) continue;
      pools.delete(origin);
      void entry.pool.destroy().catch(() => undefined);
    }
  };
  /** Before a new socket: idle kept-alive connections go first when the sockets are at the bound. */
  const makeRoom = (): void => {
    if (openSockets >= maxSockets) evictIdle(() => openSockets >= maxSockets);
  };

  const inFlight = new Set<Attempt>();
  const waiting: Array<() => void> = [];
  let active = 0;
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
  let closed = false;

  const send = (req: WebhookRequest): Promise<{ status: number; body?: string }> =>
    new Promise((resolvePromise, reject) => {
      if (closed) {
        reject(new Error('the transport is closed'));
        return;
      }
      const target = targetOf(req.url);
      let entry: { pool: Pool; busy: number } | null = null;
      const attempt = new Attempt(performance.now() + req.timeoutMs, resolvePromise, reject, () => {
        inFlight.delete(attempt);
        if (entry !== null) {
          entry.busy--;
          active--;
          waiting.shift()?.();
        } else {
          const at = waiting.indexOf(start);
          if (at !== -1) waiting.splice(at, 1);
        }
      });
      const start = (): void => {
        if (attempt.finished) return;
        active++;
        entry = poolFor(target.origin);
        entry.busy++;
        entry.pool.dispatch({ path: target.path, method: 'POST', headers: req.headers, body: req.body }, attempt);
      };
      inFlight.add(attempt);
      timer.by(attempt.deadline + SWEEP_SLACK_MS);
      // Each attempt in flight holds at most one socket: past maxSockets, it waits its turn.
      if (active < maxSockets) start();
      else waiting.push(start);
    });
  return Object.assign(send, {
    close(): void {
      closed = true;
      timer.clear();
      for (const a of inFlight) a.timeOut();
      waiting.length = 0;
      for (const { pool } of pools.values()) void pool.destroy().catch(() => undefined);
      pools.clear();
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

/**
 * One request's handler: notes the status when it arrives, reads the body to 64 KB (keeping
 * 1 KB), and settles when the connection is released (complete) or closed (error, abort).
 */
class Attempt implements Dispatcher.DispatchHandlers {
  private abort: ((err?: Error) => void) | null = null;
  private status: number | null = null;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private readBytes = 0;
  private timedOut = false;
  finished = false;

  constructor(
    readonly deadline: number,
    private readonly resolve: (value: { status: number; body?: string }) => void,
    private readonly reject: (err: Error) => void,
    private readonly done: () => void,
  ) {}

  timeOut(): void {
    if (this.finished) return;
    this.timedOut = true;
    if (this.abort !== null) this.abort(timeoutError());
    else this.onError(timeoutError()); // (waiting for a place, or before the connection)
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort(timeoutError());
  }

  onHeaders(statusCode: number): boolean {
    // (1xx informational answers are followed by the real one)
    if (statusCode >= 200 && this.status === null) this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.keptBytes < MAX_ANSWER_KEPT_BYTES) {
      const part = chunk.subarray(0, MAX_ANSWER_KEPT_BYTES - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.readBytes += chunk.length;
    // Past 64 KB the connection is closed rather than read on: the status is known.
    if (this.readBytes > MAX_ANSWER_READ_BYTES) this.abort?.(new Error('the answer is longer than 64 KB'));
    return true;
  }

  onComplete(): void {
    this.settle(null);
  }

  onError(err: Error): void {
    this.settle(err);
  }

  private settle(err: Error | null): void {
    if (this.finished) return;
    this.finished = true;
    this.done();
    if (this.status !== null) this.resolve({ status: this.status, body: Buffer.concat(this.kept).toString('utf8') });
    else this.reject(this.timedOut ? timeoutError() : (err ?? new Error('the request ended without an answer')));
  }
}

function timeoutError(): Error {
  const err = new Error('no answer in time');
  err.name = 'TimeoutError';
  return err;
}

function whole(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a whole number of at least 1.`);
  return value;
}
