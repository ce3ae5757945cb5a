/**
 * The health checks of `ipokit serve` and `npm start`, at the root of the server (outside
 * the API's mount, so no key and no rate-limit window): `GET /healthz` answers 200 while
 * the process serves, without touching the store; `GET /readyz` makes one cheap store call
 * and answers 200 when the store answers, 503 when it fails or takes longer than the
 * router's `storeTimeoutMs`.
 */
import type { Store } from '@ipokit/core';
import { HEALTH_PATHS } from './config.js';

/** A health check's answer. */
export interface HealthAnswer {
  status: 200 | 503;
  headers: Record<string, string>;
  /** `{"status":"ok"}` or `{"status":"unavailable"}`. */
  body: string;
}

/** Options of {@link healthChecks}. */
export interface HealthOptions {
  /** How long `/readyz` waits for the store. */
  timeoutMs: number;
  /** Receives why the store was not ready. */
  onError?: (err: unknown) => void;
}

/**
 * The health checks over a store: a function that answers `GET` and `HEAD` of `/healthz`
 * and `/readyz` (null for any other request, which is not theirs). Readiness checks that
 * arrive while one is under way share its answer, so probes never pile up on the store.
 *
 * @example
 * ```ts
 * const health = healthChecks(store, { timeoutMs: 5000 });
 * const answer = await health('GET', '/readyz'); // { status: 200, body: '{"status":"ok"}', ... }
 * ```
 */
export function healthChecks(store: Store, options: HealthOptions): (method: string, path: string) => Promise<HealthAnswer> | null {
  let probing: Promise<boolean> | null = null;
  const ready = (): Promise<boolean> => {
    probing ??= probe(store, options).finally(() => {
      probing = null;
    });
    return probing;
  };
  return (method, path) => {
    if (method !== 'GET' && method !== 'HEAD') return null;
    if (path === HEALTH_PATHS.live) return Promise.resolve(answer(200));
    if (path === HEALTH_PATHS.ready) return ready().then((ok) => answer(ok ? 200 : 503));
    return null;
  };
}

/** One store call that cannot match anything: no IPO identifier is `-`. */
async function probe(store: Store, { timeoutMs, onError }: HealthOptions): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      store.findIpo({ identifier: '-', gmpAt: null }, { deadline: performance.now() + timeoutMs }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`readiness check: the store did not answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return true;
  } catch (err) {
    onError?.(err);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function answer(status: 200 | 503): HealthAnswer {
  const body = JSON.stringify({ status: status === 200 ? 'ok' : 'unavailable' });
  return {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) },
    body,
  };
}
