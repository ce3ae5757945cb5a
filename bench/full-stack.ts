/**
 * Full-stack benchmark: Express 5 with ipoRouter on each store, over HTTP, with a paid key
 * and limits that never refuse (finite, so the limiter does its work), on 1,000 IPOs, for
 * three routes: one IPO, its GMP series, a list page. Each contender runs in its own process
 * and autocannon (32 connections) drives it from this one; rounds interleave the contenders
 * (A B C ..., then reversed) and the table reports medians and the ratios the target is
 * stated in: postgresStore with its data cache >= 0.5x memoryStore, the limiter on.
 *
 * The PostgreSQL limiter stays in every postgres contender but two, which take
 * `limiter: memoryStore()` as a stand-in for a fast external limiter (a Redis one, say):
 * the difference is the share of a request's cost that is PostgreSQL's limiter.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:full-stack [-- --rounds 3 --seconds 5 --connections 32]
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
import { createAccount, createApiKey, importDataset, todayInIst, type Dataset, type DatasetSnapshot, type IpoRouterOptions, type RateLimiter, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore, type PostgresStoreOptions } from '@ipokit/storage-postgres';
import { syntheticIpo } from '../packages/storage-postgres/src/synthetic.js';
import type { BenchRow } from './rows.js';

/** Options of {@link runFullStackBench}. */
export interface FullStackBenchOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. */
  url?: string;
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

/** Add a contender with one line, e.g. a Redis limiter: `{ name: 'pg+cache+redis', note: '...', store: postgres({}), limiter: async () => redisLimiter(...) }`. */
const CONTENDERS: readonly Contender[] = [
  { name: 'memory', note: 'memoryStore()', store: async () => memoryStore() },
  { name: 'pg', note: `postgresStore, no cache (dataCacheTtlMs: 0), pool of ${POOL_SIZE}`, store: postgres({ dataCacheTtlMs: 0 }) },
  { name: 'pg+cache', note: `postgresStore with its data cache (default dataCacheTtlMs), pool of ${POOL_SIZE}`, store: postgres({}) },
  { name: 'pg+fast-limiter', note: 'no cache; limiter: memoryStore() standing in for a fast external limiter', store: postgres({ dataCacheTtlMs: 0 }), limiter: fastLimiter },
  { name: 'pg+cache+fast-limiter', note: 'data cache; limiter: memoryStore() standing in for a fast external limiter', store: postgres({}), limiter: fastLimiter },
];

const ROUTES: ReadonlyArray<{ name: string; path: (id: string) => string }> = [
  { name: 'GET /ipos/{id}', path: (id) => `/ipos/${id}` },
  { name: 'GET /ipos/{id}/gmp', path: (id) => `/ipos/${id}/gmp?interval=hourly` },
  { name: 'GET /ipos?status=listed&limit=100', path: () => '/ipos?status=listed&limit=100' },
];

/** [ours, theirs, target ours/theirs]: the target, and the ratios that explain it. */
const RATIOS: Array<[string, string, number | null]> = [
  ['pg+cache', 'memory', 0.5],
  ['pg', 'memory', null],
  ['pg+cache+fast-limiter', 'memory', null],
  ['pg+fast-limiter', 'memory', null],
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

async function measure(s: Started, path: string, seconds: number, connections: number): Promise<{ rps: number; cpuUs: number }> {
  const before = cpuSeconds(s.child.pid);
  const result = await autocannon({ url: `http://127.0.0.1:${s.port}${path}`, headers: { 'x-api-key': s.key }, connections, duration: seconds });
  const cpu = cpuSeconds(s.child.pid) - before;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: non-2xx ${result.non2xx}, errors ${result.errors}`);
  return { rps: result.requests.average, cpuUs: (cpu * 1e6) / result.requests.total };
}

/** An answer as compared across contenders: the GMP series' range moves with the clock. */
async function answerOf(s: Started, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${s.port}${path}`, { headers: { 'x-api-key': s.key } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { meta?: { from?: string; to?: string } };
  if (path.includes('/gmp')) delete body.meta;
  return JSON.stringify(body);
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

  const env = { BENCH_URL: url, BENCH_NOW: String(now) };
  const samples = new Map<string, number[]>();
  const cpuSamples = new Map<string, number[]>();
  const reference = new Map<string, string>();
  for (let round = 0; round < rounds; round++) {
    for (const c of round % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse()) {
      const s = await start(c.name, env);
      try {
        for (const route of ROUTES) {
          const path = route.path(s.id);
          const answer = await answerOf(s, path);
          if ((reference.get(path) ?? answer) !== answer) throw new Error(`${c.name} answers ${path} differently`);
          reference.set(path, answer);
          await measure(s, path, 1, connections); // warm-up
          const m = await measure(s, path, seconds, connections);
          const key = `${c.name}|${route.name}`;
          samples.set(key, [...(samples.get(key) ?? []), m.rps]);
          cpuSamples.set(key, [...(cpuSamples.get(key) ?? []), m.cpuUs]);
          log(`round ${round + 1}: ${c.name} ${route.name}: ${Math.round(m.rps)} req/s`);
        }
      } finally {
        s.child.kill();
        await new Promise((resolve) => (s.child.exitCode === null ? s.child.once('exit', resolve) : resolve(null)));
      }
    }
  }

  const rps = (name: string, route: string): number => median(samples.get(`${name}|${route}`) ?? [NaN]);
  const note = `${connections} connections, ${rounds} interleaved rounds of ${seconds} s; client, server and PostgreSQL on one 2-core machine`;
  const rows: BenchRow[] = [];
  for (const route of ROUTES) {
    for (const c of CONTENDERS) {
      const xs = samples.get(`${c.name}|${route.name}`) ?? [];
      rows.push({
        group: 'Full stack',
        name: `${route.name}: ${c.name}`,
        value: Math.round(rps(c.name, route.name)),
        unit: 'req/s',
        note: `${c.note}; samples ${xs.map((x) => Math.round(x)).join(', ')}; server CPU ${median(cpuSamples.get(`${c.name}|${route.name}`) ?? [NaN]).toFixed(0)} us/request`,
      });
    }
    for (const [ours, theirs, target] of RATIOS) {
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
