/**
 * Full-stack benchmark: Express 5 with ipoRouter on each store, over HTTP, with a paid key
 * and limits that never refuse (finite, so the limiter does its work), on 1,000 IPOs, for
 * three routes: one IPO, its GMP series, a list page. Each contender runs in its own process
 * and autocannon (32 connections) drives it from this one; rounds interleave the contenders
 * (A B C ..., then reversed) and the table reports medians and the ratios the target is
 * stated in: postgresStore with its data cache and the Redis limiter >= 0.5x memoryStore
 * (with PostgreSQL's own limiter the ratio is printed too: that limiter is most of the cost).
 *
 * The PostgreSQL limiter stays in the postgres contenders but those that take another:
 * `limiter: memoryStore()`, the floor any external limiter could reach (one in-process
 * call; the difference is the share of a request's cost that is PostgreSQL's limiter), and
 * `redisLimiter` from @ipokit/limiter-redis on the Redis at REDIS_URL. The "x2" contenders
 * run two app processes on the one database (and Redis), as a deployment of several
 * instances does, each driven by half the connections; their rate is the sum. Without a
 * Redis answering, the Redis contenders are left out with one line.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:full-stack [-- --rounds 3 --seconds 5 --connections 32]
 *
 * The clock is the real one, so the GMP series' range moves with every request (as in
 * production); answers are checked equal across contenders before measuring.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import express from 'express';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createAccount, createApiKey, importDataset, todayInIst, type Dataset, type DatasetSnapshot, type IpoRouterOptions, type RateLimiter, type Store } from '@ipokit/core';
import { addDays } from '@ipokit/core/backend';
import { ipoRouter } from '@ipokit/express';
import { redisLimiter } from '@ipokit/limiter-redis';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore, type PostgresStoreOptions } from '@ipokit/storage-postgres';
import { syntheticIpo } from '../packages/storage-postgres/src/synthetic.js';
import type { BenchRow } from './rows.js';

/** Options of {@link runFullStackBench}. */
export interface FullStackBenchOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. */
  url?: string;
  /** Default: REDIS_URL, else redis://127.0.0.1:6379; the Redis contenders run when it answers. */
  redisUrl?: string;
  rounds?: number;
  seconds?: number;
  connections?: number;
  /** Progress (default: to stderr). */
  log?: (line: string) => void;
}

/** One contender: the store the router is given, and the limiter when it is not the store's own. */
interface Contender {
  name: string;
  /** What it is, for the table. */
  note: string;
  store: (url: string) => Promise<Store>;
  limiter?: () => Promise<RateLimiter>;
  /** App processes sharing the load (default 1). */
  processes?: number;
  /** Only these routes (default all). */
  routes?: readonly string[];
  /** Needs the Redis at REDIS_URL. */
  redis?: boolean;
}

const SCHEMA = 'ipokit_bench_full';
const IPOS = 1_000;
/** The IPO the one-IPO and GMP routes ask for: listed, with 30 days of snapshots every 15 minutes. */
const TARGET = 501;
const MINUTE = 60_000;
const DAY = 86_400_000;
const POOL_SIZE = 10;
/** Quotas no run can reach: every request is charged, none refused. */
const ROUTER: IpoRouterOptions = {
  limits: { paid: { perMinute: 100_000_000, gmpPerMinute: 100_000_000 } },
  // the paid plan reads the GMP series too (the default preview ended in 2026)
  gmpPreviewEnds: '9999-12-31',
};

const postgres =
  (options: Omit<PostgresStoreOptions, 'client' | 'schema'>) =>
  async (url: string): Promise<Store> =>
    postgresStore({ ...options, client: new pg.Pool({ connectionString: url, max: POOL_SIZE }), schema: SCHEMA });
/** As a fast external limiter would be (one in-process call): the stand-in of the comparison. */
const fastLimiter = async (): Promise<RateLimiter> => memoryStore();
/** The Redis limiter on BENCH_REDIS_URL, under a prefix of this run (its windows expire by themselves). */
const redis = async (): Promise<RateLimiter> => {
  const client = new Redis(process.env.BENCH_REDIS_URL!);
  client.on('error', (err) => console.error('redis:', err.message));
  return redisLimiter({ client, prefix: `ipokit-bench:${process.env.BENCH_NOW}:` });
};
const ONE_IPO = ['GET /ipos/{id}'];

/** Add a contender with one line. */
const CONTENDERS: readonly Contender[] = [
  { name: 'memory', note: 'memoryStore()', store: async () => memoryStore() },
  { name: 'pg', note: `postgresStore, no cache (dataCacheTtlMs: 0), pool of ${POOL_SIZE}`, store: postgres({ dataCacheTtlMs: 0 }) },
  { name: 'pg+cache', note: `postgresStore with its data cache (default dataCacheTtlMs), pool of ${POOL_SIZE}`, store: postgres({}) },
  { name: 'pg+fast-limiter', note: 'no cache; limiter: memoryStore() standing in for a fast external limiter', store: postgres({ dataCacheTtlMs: 0 }), limiter: fastLimiter },
  { name: 'pg+cache+fast-limiter', note: 'data cache; limiter: memoryStore() standing in for a fast external limiter', store: postgres({}), limiter: fastLimiter },
  { name: 'pg+redis', note: 'no cache; limiter: redisLimiter (ioredis)', store: postgres({ dataCacheTtlMs: 0 }), limiter: redis, redis: true },
  { name: 'pg+cache+redis', note: 'data cache; limiter: redisLimiter (ioredis)', store: postgres({}), limiter: redis, redis: true },
  { name: 'pg+cache x2', note: `2 app processes, each postgresStore with its data cache and a pool of ${POOL_SIZE}`, store: postgres({}), processes: 2, routes: ONE_IPO },
  { name: 'pg+cache+redis x2', note: '2 app processes, each with the data cache and redisLimiter', store: postgres({}), limiter: redis, processes: 2, routes: ONE_IPO, redis: true },
];

const ROUTES: ReadonlyArray<{ name: string; path: (id: string) => string }> = [
  { name: 'GET /ipos/{id}', path: (id) => `/ipos/${id}` },
  { name: 'GET /ipos/{id}/gmp', path: (id) => `/ipos/${id}/gmp?interval=hourly` },
  { name: 'GET /ipos?status=listed&limit=100', path: () => '/ipos?status=listed&limit=100' },
];

/** [ours, theirs, target ours/theirs]: the target, and the ratios that explain it. */
const RATIOS: Array<[string, string, number | null]> = [
  ['pg+cache+redis', 'memory', 0.5],
  ['pg+cache', 'memory', null],
  ['pg', 'memory', null],
  ['pg+cache+fast-limiter', 'memory', null],
  ['pg+fast-limiter', 'memory', null],
  ['pg+redis', 'pg', null],
  ['pg+cache+redis', 'pg+cache', null],
  ['pg+cache+redis x2', 'pg+cache x2', null],
];

/**
 * The dataset of every contender, the same for the same `now`: 1,000 synthetic IPOs with a
 * snapshot every 12 hours over the 30 days before now, and the target IPO one every 15
 * minutes (2,880: the hourly series has 720 buckets).
 *
 * @example
 * ```ts
 * await importDataset(memoryStore(), benchDataset(Date.now()));
 * ```
 */
export function benchDataset(now: number): Dataset {
  const ipos = Array.from({ length: IPOS }, (_, i) => syntheticIpo(i, IPOS, todayInIst(now)));
  const gmp: DatasetSnapshot[] = [];
  const last = Math.floor(now / (15 * MINUTE)) * 15 * MINUTE - 15 * MINUTE;
  ipos.forEach((ipo, i) => {
    const step = i === TARGET ? 15 * MINUTE : 12 * 60 * MINUTE;
    for (let t = last; t > last - 30 * DAY; t -= step) {
      const k = Math.round(t / step);
      const price = (n: number): number => ((i * 7 + k * 13 + n * 29) % 400) / 2 - 20;
      gmp.push({
        ipoId: ipo.id,
        timestamp: new Date(t).toISOString(),
        sources: [
          { name: 'investorgain', gmpPrice: price(1) },
          { name: 'ipowatch', gmpPrice: price(2) },
          { name: 'chittorgarh', gmpPrice: k % 5 === 0 ? null : price(3) },
        ],
      });
    }
  });
  return { ipos, gmp };
}

const FILE = fileURLToPath(import.meta.url);

interface Started {
  child: ChildProcess;
  port: number;
  key: string;
  id: string;
}

async function start(name: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', FILE, '--serve', name], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { port: number; key: string; id: string }) };
}

/** CPU seconds (user + system) the server process has used so far; NaN where /proc is missing. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
  } catch {
    return NaN;
  }
}

/** Drives every process of a contender at once, the connections split among them; rates summed. */
async function measure(started: readonly Started[], path: string, seconds: number, connections: number): Promise<{ rps: number; cpuUs: number }> {
  const cpu = (): number => started.reduce((sum, s) => sum + cpuSeconds(s.child.pid), 0);
  const before = cpu();
  const results = await Promise.all(
    started.map((s) =>
      autocannon({ url: `http://127.0.0.1:${s.port}${path}`, headers: { 'x-api-key': s.key }, connections: Math.ceil(connections / started.length), duration: seconds }),
    ),
  );
  const used = cpu() - before;
  const non2xx = results.reduce((n, r) => n + r.non2xx, 0);
  const errors = results.reduce((n, r) => n + r.errors, 0);
  if (non2xx > 0 || errors > 0) throw new Error(`${path}: non-2xx ${non2xx}, errors ${errors}`);
  const total = results.reduce((n, r) => n + r.requests.total, 0);
  return { rps: results.reduce((sum, r) => sum + r.requests.average, 0), cpuUs: (used * 1e6) / total };
}

/**
 * An answer as compared across contenders. The clock is real and a run lasts half an hour,
 * so the GMP route is compared over fixed IST days, the 30 before the load's (the default
 * range moves with the clock and drops its oldest bucket each hour).
 */
async function answerOf(s: Started, path: string, now: number): Promise<string> {
  const today = todayInIst(now);
  const fixed = path.includes('/gmp') ? `${path}&from=${addDays(today, -30)}&to=${addDays(today, -1)}` : path;
  const res = await fetch(`http://127.0.0.1:${s.port}${fixed}`, { headers: { 'x-api-key': s.key } });
  if (res.status !== 200) throw new Error(`${fixed}: ${res.status} ${await res.text()}`);
  return await res.text();
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Loads the dataset into PostgreSQL, runs every contender on every route and returns one
 * row per contender and route, and the ratios.
 *
 * @example
 * ```ts
 * const rows = await runFullStackBench({ rounds: 3, seconds: 5 });
 * ```
 */
export async function runFullStackBench(options: FullStackBenchOptions = {}): Promise<BenchRow[]> {
  const url = options.url ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const rounds = options.rounds ?? 3;
  const seconds = options.seconds ?? 5;
  const connections = options.connections ?? 32;
  const log = options.log ?? ((line: string) => console.error(line));
  const redisUrl = options.redisUrl ?? (process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  const withRedis = await answers(redisUrl);
  if (!withRedis) log(`no Redis answers at ${redisUrl}: the Redis contenders are left out`);
  const contenders = CONTENDERS.filter((c) => withRedis || c.redis !== true);
  const now = Date.now();
  const dataset = benchDataset(now);
  const loading = performance.now();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await migrate(pool, { schema: SCHEMA });
    await importDataset(postgresStore({ client: pool, schema: SCHEMA, dataCacheTtlMs: 0 }), dataset);
    await pool.query(`VACUUM ANALYZE ${SCHEMA}.ipos, ${SCHEMA}.snapshots`);
  } finally {
    await pool.end();
  }
  log(`loaded ${IPOS} IPOs and ${dataset.gmp?.length ?? 0} snapshots in ${((performance.now() - loading) / 1000).toFixed(1)} s`);

  const env = { BENCH_URL: url, BENCH_NOW: String(now), BENCH_REDIS_URL: redisUrl };
  const samples = new Map<string, number[]>();
  const cpuSamples = new Map<string, number[]>();
  const reference = new Map<string, string>();
  for (let round = 0; round < rounds; round++) {
    for (const c of round % 2 === 0 ? contenders : [...contenders].reverse()) {
      const started: Started[] = [];
      try {
        for (let p = 0; p < (c.processes ?? 1); p++) started.push(await start(c.name, env));
        for (const route of ROUTES.filter((r) => c.routes === undefined || c.routes.includes(r.name))) {
          const path = route.path(started[0]!.id);
          for (const s of started) {
            const answer = await answerOf(s, path, now);
            if ((reference.get(path) ?? answer) !== answer) throw new Error(`${c.name} answers ${path} differently`);
            reference.set(path, answer);
          }
          await measure(started, path, 1, connections); // warm-up
          const m = await measure(started, path, seconds, connections);
          const key = `${c.name}|${route.name}`;
          samples.set(key, [...(samples.get(key) ?? []), m.rps]);
          cpuSamples.set(key, [...(cpuSamples.get(key) ?? []), m.cpuUs]);
          log(`round ${round + 1}: ${c.name} ${route.name}: ${Math.round(m.rps)} req/s`);
        }
      } finally {
        for (const s of started) {
          s.child.kill();
          await new Promise((resolve) => (s.child.exitCode === null ? s.child.once('exit', resolve) : resolve(null)));
        }
      }
    }
  }

  const rps = (name: string, route: string): number => median(samples.get(`${name}|${route}`) ?? [NaN]);
  const note = `${connections} connections, ${rounds} interleaved rounds of ${seconds} s; client, server and PostgreSQL on one 2-core machine`;
  const rows: BenchRow[] = [];
  for (const route of ROUTES) {
    for (const c of contenders) {
      const xs = samples.get(`${c.name}|${route.name}`);
      if (xs === undefined) continue;
      rows.push({
        group: 'Full stack',
        name: `${route.name}: ${c.name}`,
        value: Math.round(rps(c.name, route.name)),
        unit: 'req/s',
        note: `${c.note}; samples ${xs.map((x) => Math.round(x)).join(', ')}; server CPU ${median(cpuSamples.get(`${c.name}|${route.name}`) ?? [NaN]).toFixed(0)} us/request`,
      });
    }
    for (const [ours, theirs, target] of RATIOS) {
      if (!samples.has(`${ours}|${route.name}`) || !samples.has(`${theirs}|${route.name}`)) continue;
      const ratio = rps(ours, route.name) / rps(theirs, route.name);
      rows.push({
        group: 'Full stack',
        name: `${route.name}: ${ours} / ${theirs}`,
        value: Number(ratio.toFixed(2)),
        unit: 'x',
        ...(target === null ? {} : { target: `>= ${target}`, pass: ratio >= target }),
        note,
      });
    }
    // A request's cost is 1 / rate: what the PostgreSQL limiter adds to it, with the cache on.
    const limiterShare = 1 - rps('pg+cache', route.name) / rps('pg+cache+fast-limiter', route.name);
    rows.push({
      group: 'Full stack',
      name: `${route.name}: share of pg+cache's cost that is the PostgreSQL limiter`,
      value: Math.round(limiterShare * 100),
      unit: '%',
      note: '1 - rate(pg+cache) / rate(pg+cache+fast-limiter)',
    });
  }
  return rows;
}

/** Whether a Redis answers PING at `url` within a second. */
async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A contender's server (this file with `--serve <name>`): prints `{ port, key, id }`. */
async function serve(name: string): Promise<void> {
  const contender = CONTENDERS.find((c) => c.name === name);
  if (contender === undefined) throw new Error(`unknown contender ${name}; one of ${CONTENDERS.map((c) => c.name).join(', ')}`);
  const url = process.env.BENCH_URL ?? '';
  const store = await contender.store(url);
  // PostgreSQL contenders read what the driver loaded; memory imports the same dataset.
  if (name === 'memory') await importDataset(store, benchDataset(Number(process.env.BENCH_NOW)));
  const account = await createAccount(store, { name: 'bench', plan: 'paid' });
  const { key } = await createApiKey(store, { accountId: account.id, label: 'bench' });
  const limiter = contender.limiter === undefined ? undefined : await contender.limiter();
  const app = express();
  app.use('/ipos', limiter === undefined ? ipoRouter(store, ROUTER) : ipoRouter(store, { ...ROUTER, limiter }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const id = syntheticIpo(TARGET, IPOS, todayInIst(Number(process.env.BENCH_NOW))).id;
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, key, id })}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
  const serving = args.get('serve');
  if (serving !== undefined) {
    // Exit on a signal without waiting for the pool (the driver has what it needs).
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
    await serve(serving);
  } else {
    const rows = await runFullStackBench({
      rounds: Number(args.get('rounds') ?? 3),
      seconds: Number(args.get('seconds') ?? 5),
      connections: Number(args.get('connections') ?? 32),
    });
    const { formatRows } = await import('./rows.js');
    console.log(formatRows(rows));
  }
}
