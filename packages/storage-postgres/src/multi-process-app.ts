/**
 * One app instance of the multi-process test (not published): Express with the router on
 * a postgresStore. With DATABASE_URL it has its own pg.Pool; without, its queries go to
 * the parent process's PGlite over IPC (PGlite lives in one process). Prints its port.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { ipoRouter } from '@ipokit/express';
import type { PostgresClient } from './client.js';
import { postgresStore } from './postgres-store.js';

/** A query sent to the parent, and its answer. */
export interface BridgeQuery {
  id: number;
  text: string;
  params: unknown[];
}
export interface BridgeAnswer {
  id: number;
  rows?: unknown[];
  error?: { message: string; code?: string };
}

function bridgeClient(): PostgresClient {
  let next = 0;
  const waiting = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }>();
  process.on('message', (m: BridgeAnswer) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else w?.resolve(m.rows ?? []);
  });
  return {
    query: (text, params = []) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: (rows) => resolve({ rows }), reject });
        process.send?.({ id, text, params } satisfies BridgeQuery);
      }),
    // Statements from several processes interleave on the parent's one PGlite, so a
    // transaction cannot be run here; the test's requests need none (reads and hits).
    transaction: () => Promise.reject(new Error('the IPC bridge to PGlite runs no transactions')),
  };
}

const url = process.env.DATABASE_URL;
const client: PostgresClient = url ? new pg.Pool({ connectionString: url, max: 10 }) : bridgeClient();
const cacheTtl = process.env.IPOKIT_DATA_CACHE_TTL_MS;
const store = postgresStore({ client, schema: process.env.IPOKIT_SCHEMA ?? 'ipokit', ...(cacheTtl === undefined ? {} : { dataCacheTtlMs: Number(cacheTtl) }) });
// A pinned clock (IPOKIT_NOW), or one that moves from there when IPOKIT_CLOCK=moving.
const pinned = Number(process.env.IPOKIT_NOW);
const started = performance.now();
const now = process.env.IPOKIT_CLOCK === 'moving' ? () => new Date(pinned + Math.floor(performance.now() - started)) : () => new Date(pinned);
const app = express();
app.use(
  '/ipos',
  ipoRouter(store, {
    now,
    limits: JSON.parse(process.env.IPOKIT_LIMITS ?? '{}') as Record<string, never>,
    keyCacheTtlMs: Number(process.env.IPOKIT_KEY_CACHE_TTL_MS ?? 5_000),
    ...(process.env.IPOKIT_STORE_TIMEOUT_MS === undefined ? {} : { storeTimeoutMs: Number(process.env.IPOKIT_STORE_TIMEOUT_MS) }),
  }),
);
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  const end = (client as { end?: () => Promise<void> }).end;
  if (end === undefined) process.exit(0);
  else void end.call(client).finally(() => process.exit(0));
});
