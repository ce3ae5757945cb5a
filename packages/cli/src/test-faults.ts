/**
 * For the tests of what the server does when its database misbehaves: a PostgreSQL client
 * (PGlite or a `pg.Pool`) whose queries can be made slow or failing while the test runs,
 * everything else (transactions, the pool's connections) passing through untouched.
 */
import type { PostgresClient } from '@ipokit/storage-postgres';

/** What the client does to a query whose text matches `pattern`. */
export type Fault = { kind: 'none' } | { kind: 'fail'; pattern: RegExp } | { kind: 'delay'; pattern: RegExp; ms: number };

/** A client with a fault switch. */
export interface FaultyClient {
  client: PostgresClient;
  /** Sets the fault for the queries from now on. */
  set(fault: Fault): void;
}

/**
 * Wraps a client: `query` obeys the current fault, every other property is the client's.
 *
 * @example
 * ```ts
 * const faulty = faultyClient(db.client);
 * faulty.set({ kind: 'fail', pattern: /rate_limit_hit/ });
 * ```
 */
export function faultyClient(inner: PostgresClient): FaultyClient {
  let fault: Fault = { kind: 'none' };
  const query = async (text: string, params?: unknown[]): Promise<{ rows: unknown[] }> => {
    const now = fault;
    if (now.kind !== 'none' && now.pattern.test(text)) {
      if (now.kind === 'fail') throw Object.assign(new Error('injected database failure'), { code: 'ECONNRESET' });
      await new Promise((resolve) => setTimeout(resolve, now.ms));
    }
    return inner.query(text, params);
  };
  const client = new Proxy(inner, {
    get(target, property) {
      if (property === 'query') return query;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    client,
    set: (next) => {
      fault = next;
    },
  };
}
