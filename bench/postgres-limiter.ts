/**
 * The PostgreSQL limiter under contention: processes (each its own pg.Pool and
 * postgresStore) hit one key at once, round after round, each round at a fixed instant a
 * window apart from the last (so every earlier hit has left). Each round makes more
 * attempts than the quota; exactly the quota must be admitted across all processes.
 *
 * Used by bench/postgres.ts; run alone with
 *   node --conditions=source --import tsx bench/postgres-limiter.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate, postgresStore } from '@ipokit/storage-postgres';

/** What {@link runLimiterBench} measures. */
export interface LimiterBenchResult {
  processes: number;
  concurrency: number;
  quota: number;
  attemptsPerRound: number;
  rounds: number;
  /** Attempts (admitted or refused) per second, all processes together. */
  hitsPerSecond: number;
  admittedPerSecond: number;
  /** Every round admitted exactly the quota. */
  exact: boolean;
  /** Admitted count of each round. */
  admittedByRound: number[];
}

/** Options of {@link runLimiterBench}. */
export interface LimiterBenchOptions {
  url: string;
  schema?: string;
  processes?: number;
  /** Requests in flight per process (its pool has as many connections). */
  concurrency?: number;
  quota?: number;
  /** Attempts per process per round. */
  attemptsPerProcess?: number;
  rounds?: number;
}

const WINDOW_MS = 60_000;
const BASE = Date.UTC(2026, 10, 22, 6, 30);
const KEY = 'acct:bench-hot';

type ToWorker = { round: number; now: number; attempts: number } | { stop: true };
type FromWorker = { ready: true } | { round: number; admitted: number; refused: number; ms: number };

/**
 * Spawns the processes, runs the rounds, and checks exactness.
 *
 * @example
 * ```ts
 * const r = await runLimiterBench({ url: 'postgres://postgres@127.0.0.1:5432/test' });
 * r.hitsPerSecond; // e.g. 4000
 * ```
 */
export async function runLimiterBench(options: LimiterBenchOptions): Promise<LimiterBenchResult> {
  const schema = options.schema ?? 'ipokit_bench_limiter';
  const processes = options.processes ?? 3;
  const concurrency = options.concurrency ?? 4;
  const quota = options.quota ?? 1_000;
  const attemptsPerProcess = options.attemptsPerProcess ?? 500;
  const rounds = options.rounds ?? 8;
  const admin = new pg.Pool({ connectionString: options.url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await migrate(admin, { schema });

  const workers: ChildProcess[] = [];
  const messages = new Map<ChildProcess, Array<(m: FromWorker) => void>>();
  const next = (w: ChildProcess): Promise<FromWorker> => new Promise((resolve) => messages.get(w)!.push(resolve));
  try {
    for (let i = 0; i < processes; i++) {
      const w = fork(fileURLToPath(import.meta.url), ['--worker'], {
        execArgv: ['--conditions=source', '--import', 'tsx'],
        env: { ...process.env, BENCH_URL: options.url, BENCH_SCHEMA: schema, BENCH_CONCURRENCY: String(concurrency), BENCH_QUOTA: String(quota) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      messages.set(w, []);
      w.on('message', (m: FromWorker) => messages.get(w)!.shift()?.(m));
      workers.push(w);
    }
    await Promise.all(workers.map(next));
    // round 0 warms every connection up and is not counted
    const admittedByRound: number[] = [];
    let ms = 0;
    for (let round = 0; round <= rounds; round++) {
      const now = BASE + round * (WINDOW_MS + 1_000);
      const t = performance.now();
      const replies = workers.map(next);
      for (const w of workers) w.send({ round, now, attempts: attemptsPerProcess } satisfies ToWorker);
      const done = (await Promise.all(replies)) as Array<{ admitted: number; refused: number }>;
      const elapsed = performance.now() - t;
      const admitted = done.reduce((a, d) => a + d.admitted, 0);
      if (round === 0) continue;
      ms += elapsed;
      admittedByRound.push(admitted);
    }
    const attemptsPerRound = processes * attemptsPerProcess;
    const expected = Math.min(quota, attemptsPerRound);
    return {
      processes,
      concurrency,
      quota,
      attemptsPerRound,
      rounds,
      hitsPerSecond: (attemptsPerRound * rounds) / (ms / 1000),
      admittedPerSecond: (expected * rounds) / (ms / 1000),
      exact: admittedByRound.every((a) => a === expected),
      admittedByRound,
    };
  } finally {
    for (const w of workers) w.send({ stop: true } satisfies ToWorker);
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.once('exit', resolve)))));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** What {@link runQuotaScaling} measures: the latency of one hit on one connection. */
export interface QuotaScalingResult {
  /** Median ms per hit on a window of quota 10 that is full, each hit's oldest having just left. */
  smallMs: number;
  /** The same on a window of quota 100,000 holding 100,000 hits. */
  bigMs: number;
  /** Median ms per refused hit on the full window of 100,000. */
  bigRefusedMs: number;
}

/**
 * The cost of a hit against the hits a window keeps: a window of quota 100,000 (filled in
 * bulk) and one of quota 10, both full, hit in interleaved blocks on one connection so
 * that every hit is admitted because exactly one earlier hit has just left.
 *
 * @example
 * ```ts
 * const r = await runQuotaScaling({ url });
 * r.bigMs / r.smallMs; // about 1
 * ```
 */
export async function runQuotaScaling(options: { url: string; schema?: string; hits?: number }): Promise<QuotaScalingResult> {
  const schema = options.schema ?? 'ipokit_bench_quota';
  const blocks = 10;
  const perBlock = Math.ceil((options.hits ?? 2_000) / blocks);
  const Q = 100_000;
  const pool = new pg.Pool({ connectionString: options.url, max: 1 });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await migrate(pool, { schema });
    // the two windows' clocks differ by far more than a window: no sweep (it reads one clock)
    const store = postgresStore({ client: pool, schema, rateLimitSweepEvery: 1e9 });
    const hit = (key: string, quota: number, now: number) => store.hitRateLimit({ now, windows: [{ key, quota, ms: WINDOW_MS }] });
    // big: Q - 1 hits 0.5 ms apart (0 ... 49,999), recorded in bulk, then one more at 59,999
    await hit('acct:big', Q, -WINDOW_MS);
    await pool.query(
      `WITH w AS (UPDATE ${schema}.rate_windows SET n_hits = ${Q - 1}, oldest_ts = 0, newest_ts = ${(Q - 2) / 2}, forget_sec = ${Math.floor(((Q - 2) / 2 + WINDOW_MS) / 1000)} WHERE key = 'acct:big' RETURNING id)
       , gone AS (DELETE FROM ${schema}.rate_hits WHERE window_id = (SELECT id FROM w))
       INSERT INTO ${schema}.rate_hits (window_id, ts) SELECT (SELECT id FROM w), g * 0.5 FROM generate_series(0, ${Q - 2}) AS g`,
    );
    await pool.query(`VACUUM ANALYZE ${schema}.rate_hits`);
    if (!(await hit('acct:big', Q, 59_999)).admitted) throw new Error('the window of 100,000 should have had room for one');
    // small: 10 hits 6 s apart
    for (let k = 0; k < 10; k++) await hit('acct:small', 10, k * 6_000);
    let big = 60_000;
    let small = 60_000;
    const per: { small: number[]; big: number[]; refused: number[] } = { small: [], big: [], refused: [] };
    const block = async (into: number[], fn: () => { admitted: boolean } | Promise<{ admitted: boolean }>, admitted: boolean): Promise<void> => {
      const t = performance.now();
      for (let k = 0; k < perBlock; k++) {
        const r = await fn();
        if (r.admitted !== admitted) throw new Error(`expected ${admitted ? 'an admission' : 'a refusal'}, got ${JSON.stringify(r)}`);
      }
      into.push((performance.now() - t) / perBlock);
    };
    for (let b = 0; b < blocks; b++) {
      // each hit at big + 0.5 lets exactly the hit at big - 60,000 go: admitted, still full
      await block(per.big, () => hit('acct:big', Q, (big += 0.5) - 0.5), true);
      await block(per.small, () => hit('acct:small', 10, (small += 6_000) - 6_000), true);
      await block(per.refused, () => hit('acct:big', Q, big - 0.5), false);
    }
    const [{ n }] = (await pool.query<{ n: number }>(`SELECT n_hits AS n FROM ${schema}.rate_windows WHERE key = 'acct:big'`)).rows as [{ n: number }];
    if (Number(n) !== Q) throw new Error(`the window of 100,000 holds ${n} hits`);
    return { smallMs: median(per.small), bigMs: median(per.big), bigRefusedMs: median(per.refused) };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** One process: its own pool and store; on each round, `attempts` hits, `concurrency` at a time. */
async function worker(): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY);
  const quota = Number(process.env.BENCH_QUOTA);
  const pool = new pg.Pool({ connectionString: process.env.BENCH_URL, max: concurrency });
  const store = postgresStore({ client: pool, schema: process.env.BENCH_SCHEMA });
  // open every connection before the first round
  await Promise.all(Array.from({ length: concurrency }, () => pool.query('SELECT 1')));
  process.on('message', (m: ToWorker) => {
    if ('stop' in m) {
      void pool.end().finally(() => process.exit(0));
      return;
    }
    void (async () => {
      const t = performance.now();
      let admitted = 0;
      let left = m.attempts;
      const lane = async (): Promise<void> => {
        while (left > 0) {
          left -= 1;
          const r = await store.hitRateLimit({ now: m.now, windows: [{ key: KEY, quota, ms: WINDOW_MS }] });
          if (r.admitted) admitted += 1;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      process.send!({ round: m.round, admitted, refused: m.attempts - admitted, ms: performance.now() - t } satisfies FromWorker);
    })();
  });
  process.send!({ ready: true } satisfies FromWorker);
}

if (process.argv.includes('--worker')) {
  await worker();
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const url = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  console.log(await runLimiterBench({ url }));
  console.log(await runQuotaScaling({ url }));
}
