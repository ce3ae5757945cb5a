/**
 * One app process of `npm run faults` (scripts/faults.ts): the router (Express or Koa, by
 * argv[2]) on a postgresStore over its own pg.Pool, and with IPOKIT_REDIS_URL the limits on
 * that Redis (ioredis; IPOKIT_LIMITER_FAIL_OPEN=1 admits while it is down). It prints its
 * port, counts what must stay zero (unhandled rejections, uncaught exceptions) and answers
 * `stats` over IPC with those counts and its pool's state.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import pg from 'pg';
import { Redis } from 'ioredis';
import { ipoRouter } from '@ipokit/express';
import { redisLimiter } from '@ipokit/limiter-redis';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { postgresStore } from '@ipokit/storage-postgres';

/** What the app reports when asked. */
export interface FaultAppStats {
  unhandledRejections: number;
  uncaughtExceptions: number;
  /** Calls of the router's onError (each 503 reports one). */
  reportedErrors: number;
  /** Errors emitted by the pool for idle connections that died. */
  poolErrors: number;
  /** Errors ioredis emitted while Redis was away (it reconnects by itself). */
  redisErrors: number;
  poolTotal: number;
  poolIdle: number;
  poolWaiting: number;
}

const stats: FaultAppStats = { unhandledRejections: 0, uncaughtExceptions: 0, reportedErrors: 0, poolErrors: 0, redisErrors: 0, poolTotal: 0, poolIdle: 0, poolWaiting: 0 };
process.on('unhandledRejection', () => void stats.unhandledRejections++);
process.on('uncaughtException', () => void stats.uncaughtExceptions++);

const framework = process.argv[2] === 'koa' ? 'koa' : 'express';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8, connectionTimeoutMillis: 1_000 });
pool.on('error', () => void stats.poolErrors++);
// A small bound on waiting calls, so that a stall sheds load here (the default is 1,000).
// No data cache: every request reads the database, so the faults reach it (and no LISTEN
// connection is held).
// With IPOKIT_REDIS_URL (the Redis phase) the data and key caches are on, so that what the
// phase stops is the only thing that can answer 503: a database slowed by a busy machine
// would otherwise make the app that fails open answer 503 too.
const redisPhase = process.env.IPOKIT_REDIS_URL !== undefined;
const store = postgresStore({ client: pool, schema: process.env.IPOKIT_SCHEMA ?? 'ipokit', maxWaitingCalls: 100, ...(redisPhase ? {} : { dataCacheTtlMs: 0 }) });
const redisUrl = process.env.IPOKIT_REDIS_URL;
const redis = redisUrl === undefined ? undefined : new Redis(redisUrl);
redis?.on('error', () => void stats.redisErrors++);
const options = {
  ...(redis === undefined ? {} : { limiter: redisLimiter({ client: redis }), limiterFailOpen: process.env.IPOKIT_LIMITER_FAIL_OPEN === '1' }),
  now: () => new Date(Number(process.env.IPOKIT_NOW)),
  limits: { paid: { perMinute: 1e12, gmpPerMinute: 1e12 }, pro: { perMinute: 1e12, gmpPerMinute: 1e12 } },
  // No key cache: every request reads its key from the database, the hardest case (not in
  // the Redis phase, see above).
  keyCacheTtlMs: redisPhase ? 60_000 : 0,
  storeTimeoutMs: 2_000,
  onError: () => void stats.reportedErrors++,
};

/**
 * A request timeout middleware of the app's own (connect-timeout style) that answers first
 * when the request asks for it (`x-fault-timeout-ms`): the router must then do nothing.
 */
const ANSWERED_FIRST = 'answered first by the app';
const timeoutOf = (header: string | string[] | undefined): number | null => (typeof header === 'string' ? Number(header) : null);

let server: Server;
if (framework === 'koa') {
  const app = new Koa();
  app.use(async (ctx, next) => {
    const ms = timeoutOf(ctx.get('x-fault-timeout-ms') || undefined);
    const timer = ms === null ? undefined : setTimeout(() => ctx.res.writableEnded || ctx.res.headersSent || ctx.res.writeHead(503).end(ANSWERED_FIRST), ms);
    try {
      await next();
    } finally {
      clearTimeout(timer);
    }
  });
  app.use(koaIpoRouter(store, { ...options, prefix: '/ipos' }));
  server = app.listen(0, '127.0.0.1');
} else {
  const app = express();
  app.use((req, res, next) => {
    const ms = timeoutOf(req.headers['x-fault-timeout-ms']);
    if (ms !== null) {
      const timer = setTimeout(() => res.headersSent || res.status(503).send(ANSWERED_FIRST), ms);
      res.on('close', () => clearTimeout(timer));
    }
    next();
  });
  app.use('/ipos', ipoRouter(store, options));
  server = app.listen(0, '127.0.0.1');
}
server.once('listening', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));

process.on('message', (m: unknown) => {
  if (m !== 'stats') return;
  process.send?.({ ...stats, poolTotal: pool.totalCount, poolIdle: pool.idleCount, poolWaiting: pool.waitingCount });
});
// The script that started this app was killed (or crashed): do not outlive it.
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  redis?.disconnect();
  void pool.end().finally(() => process.exit(0));
});
