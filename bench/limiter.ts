/**
 * The Redis limiter against the PostgreSQL limiter, side by side in one run: 3 processes
 * (each its own client) decide requests for ONE hot account as fast as they can, on the
 * real clock, with a 60 s window and a quota high enough never to refuse (5,000,000: a
 * window keeps min(quota, hits) entries, so it holds every hit of the run, which lasts
 * about 40 s: some 600,000 on Redis here, 6 MB). Each call carries a deadline, as on the
 * request path.
 * Rounds alternate between the two so that the machine's noise hits both alike; the
 * median round of each is reported. Target: Redis >= 5x PostgreSQL.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:limiter [-- --rounds 5 --seconds 3]
 *
 * After the run every admitted hit must be in the window: the Redis list and the
 * PostgreSQL rows of the hot account hold exactly the decisions made (none refused).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { RateLimiter } from '@ipokit/core';
import { redisLimiter } from '@ipokit/limiter-redis';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { formatRows, type BenchRow } from './rows.js';

type Backend = 'redis' | 'postgres';

/** Options of {@link runLimiterComparison}. */
export interface LimiterComparisonOptions {
  redisUrl?: string;
  databaseUrl?: string;
  processes?: number;
  /** Rounds per backend, alternating. */
  rounds?: number;
  seconds?: number;
  /** Calls in flight per process: Redis on one connection (pipelined), PostgreSQL one per pooled connection. */
  redisInFlight?: number;
  postgresConnections?: number;
}

const WINDOW_MS = 60_000;
const QUOTA = 5_000_000;
const KEY = 'acct:bench-hot';
const SCHEMA = 'ipokit_bench_rl';

type ToWorker = { seconds: number } | { stop: true };
type FromWorker = { ready: true } | { decisions: number; admitted: number; ms: number };

/**
 * Runs the comparison and returns its rows.
 *
 * @example
 * ```ts
 * const rows = await runLimiterComparison({ rounds: 3, seconds: 2 });
 * rows.find((r) => r.name.startsWith('Redis / PostgreSQL'))?.value; // e.g. 8.1
 * ```
 */
export async function runLimiterComparison(options: LimiterComparisonOptions = {}): Promise<BenchRow[]> {
  const redisUrl = options.redisUrl ?? (process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  const databaseUrl = options.databaseUrl ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const processes = options.processes ?? 3;
  const rounds = options.rounds ?? 5;
  const seconds = options.seconds ?? 3;
  const redisInFlight = options.redisInFlight ?? 16;
  const postgresConnections = options.postgresConnections ?? 4;
  const prefix = `ipokit-bench:${randomBytes(4).toString('hex')}:`;

  const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const redis = new Redis(redisUrl);
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(admin, { schema: SCHEMA });
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
  const pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';

  const spawnWorkers = (backend: Backend): ChildProcess[] =>
    Array.from({ length: processes }, () =>
      fork(fileURLToPath(import.meta.url), ['--worker'], {
        execArgv: ['--conditions=source', '--import', 'tsx'],
        env: {
          ...process.env,
          BENCH_BACKEND: backend,
          BENCH_REDIS_URL: redisUrl,
          BENCH_DATABASE_URL: databaseUrl,
          BENCH_PREFIX: prefix,
          BENCH_IN_FLIGHT: String(backend === 'redis' ? redisInFlight : postgresConnections),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
  const inbox = new Map<ChildProcess, Array<(m: FromWorker) => void>>();
  const next = (w: ChildProcess): Promise<FromWorker> => new Promise((resolve) => inbox.get(w)!.push(resolve));
  const workers: Record<Backend, ChildProcess[]> = { redis: spawnWorkers('redis'), postgres: spawnWorkers('postgres') };
  const all = [...workers.redis, ...workers.postgres];
  for (const w of all) {
    inbox.set(w, []);
    w.on('message', (m: FromWorker) => inbox.get(w)!.shift()?.(m));
  }
  const perSecond: Record<Backend, number[]> = { redis: [], postgres: [] };
  const totals: Record<Backend, { decisions: number; admitted: number }> = { redis: { decisions: 0, admitted: 0 }, postgres: { decisions: 0, admitted: 0 } };
  try {
    await Promise.all(all.map(next));
    // round 0 of each warms connections, the script cache and the JIT up: counted in the
    // totals (its hits are in the window) but not in the rates
    for (let round = 0; round <= rounds; round++) {
      for (const backend of ['redis', 'postgres'] as const) {
        const replies = workers[backend].map(next);
        for (const w of workers[backend]) w.send({ seconds: round === 0 ? 1 : seconds } satisfies ToWorker);
        const done = (await Promise.all(replies)) as Array<{ decisions: number; admitted: number; ms: number }>;
        const decisions = done.reduce((a, d) => a + d.decisions, 0);
        totals[backend].decisions += decisions;
        totals[backend].admitted += done.reduce((a, d) => a + d.admitted, 0);
        if (round > 0) perSecond[backend].push(decisions / (Math.max(...done.map((d) => d.ms)) / 1000));
      }
    }
    const inRedis = await redis.llen(`${prefix}acct:{bench-hot}`);
    const inPostgres = Number(
      (await admin.query<{ n: number }>(`SELECT n_hits AS n FROM ${SCHEMA}.rate_windows WHERE key = $1`, [KEY])).rows[0]?.n ?? 0,
    );
    const r = median(perSecond.redis);
    const p = median(perSecond.postgres);
    const shape = `${processes} processes, one account, quota ${QUOTA.toLocaleString('en-US')} per 60 s (never refusing), ${rounds} alternating rounds of ${seconds} s`;
    return [
      {
        group: 'Limiter',
        name: `Redis ${redisVersion} (ioredis, ${redisInFlight} in flight per process): decisions per second, median round`,
        value: Math.round(r),
        unit: 'decisions/s',
        note: `rounds: ${perSecond.redis.map(Math.round).join(', ')}; ${shape}`,
      },
      {
        group: 'Limiter',
        name: `PostgreSQL ${pgVersion} (pg, ${postgresConnections} connections per process): decisions per second, median round`,
        value: Math.round(p),
        unit: 'decisions/s',
        note: `rounds: ${perSecond.postgres.map(Math.round).join(', ')}`,
      },
      { group: 'Limiter', name: 'Redis / PostgreSQL', value: Math.round((r / p) * 10) / 10, unit: 'x', target: '>= 5', pass: r / p >= 5 },
      {
        group: 'Limiter',
        name: 'every decision admitted and kept in the window (Redis, PostgreSQL)',
        value: Number(totals.redis.admitted === totals.redis.decisions && inRedis === totals.redis.decisions && totals.postgres.admitted === totals.postgres.decisions && inPostgres === totals.postgres.decisions),
        unit: '(1 = yes)',
        target: '1',
        pass: inRedis === totals.redis.decisions && inPostgres === totals.postgres.decisions && totals.redis.admitted === totals.redis.decisions && totals.postgres.admitted === totals.postgres.decisions,
        note: `Redis ${totals.redis.admitted}/${totals.redis.decisions} admitted, list holds ${inRedis}; PostgreSQL ${totals.postgres.admitted}/${totals.postgres.decisions}, window holds ${inPostgres}`,
      },
    ];
  } finally {
    for (const w of all) if (w.connected) w.send({ stop: true } satisfies ToWorker);
    await Promise.all(all.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.once('exit', resolve)))));
    await redis.unlink(`${prefix}acct:{bench-hot}`);
    await redis.quit();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** One process: its own client and limiter; on each round, as many decisions as it can make in the time given. */
async function worker(): Promise<void> {
  const backend = process.env.BENCH_BACKEND as Backend;
  const inFlight = Number(process.env.BENCH_IN_FLIGHT);
  let limiter: RateLimiter;
  let close: () => Promise<void>;
  if (backend === 'redis') {
    const client = new Redis(process.env.BENCH_REDIS_URL!);
    limiter = redisLimiter({ client, prefix: process.env.BENCH_PREFIX! });
    close = async () => void (await client.quit());
  } else {
    const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: inFlight });
    await Promise.all(Array.from({ length: inFlight }, () => pool.query('SELECT 1')));
    limiter = postgresStore({ client: pool, schema: SCHEMA });
    close = () => pool.end();
  }
  const windows = [{ key: KEY, quota: QUOTA, ms: WINDOW_MS }];
  process.on('message', (m: ToWorker) => {
    if ('stop' in m) {
      void close().finally(() => process.exit(0));
      return;
    }
    void (async () => {
      const started = performance.now();
      const until = started + m.seconds * 1000;
      let decisions = 0;
      let admitted = 0;
      const lane = async (): Promise<void> => {
        while (performance.now() < until) {
          const r = await limiter.hitRateLimit({ now: Date.now(), windows }, { deadline: performance.now() + 2_000 });
          decisions += 1;
          if (r.admitted) admitted += 1;
        }
      };
      await Promise.all(Array.from({ length: inFlight }, lane));
      process.send!({ decisions, admitted, ms: performance.now() - started } satisfies FromWorker);
    })();
  });
  process.send!({ ready: true } satisfies FromWorker);
}

const arg = (name: string): number | undefined => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : undefined;
};

if (process.argv.includes('--worker')) {
  await worker();
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = await runLimiterComparison({ rounds: arg('--rounds'), seconds: arg('--seconds') });
  console.log(formatRows(rows));
  process.exitCode = rows.every((r) => r.pass !== false) ? 0 : 1;
}
