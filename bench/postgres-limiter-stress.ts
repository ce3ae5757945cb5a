/**
 * A stress test of the PostgreSQL limiter (not part of `npm test`: it takes a minute and
 * needs a real server). Many connections hit overlapping sets of windows at once, through
 * stores that sweep on every hit or every few hits, first with clocks up to 2 s apart and
 * jumps that let windows go idle (so sweeps and requests race for the same rows), then in
 * bursts at one instant. It fails (exit 1) on any error (a deadlock among them), on a window
 * whose count or oldest hit differs from the hits it holds, on an orphaned hit, and when a
 * window admitted more than its quota in any 60 s.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --conditions=source --import tsx bench/postgres-limiter-stress.ts [--calls 160000]
 */
import pg from 'pg';
import { migrate, postgresStore } from '@ipokit/storage-postgres';

const URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = 'ipokit_limiter_stress';
const LANES = 16;
const at = process.argv.indexOf('--calls');
const CALLS = at >= 0 ? Number(process.argv[at + 1]) : 160_000;
const KEYS = ['acct:a', 'gmp:a', 'acct:b', 'gmp:b', 'addr:x', 'addr:y'];
const QUOTA: Record<string, number> = { 'acct:a': 5, 'gmp:a': 2, 'acct:b': 7, 'gmp:b': 3, 'addr:x': 4, 'addr:y': 1 };

const pool = new pg.Pool({ connectionString: URL, max: LANES });
await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
await migrate(pool, { schema: SCHEMA });
const stores = [1, 3, 1000].map((every) => postgresStore({ client: pool, schema: SCHEMA, rateLimitSweepEvery: every }));
const errors: string[] = [];
let clock = Date.UTC(2026, 10, 20);
let seed = 42;
const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = (lane: number): Array<{ key: string; quota: number; ms: number }> => {
  const keys = KEYS.filter(() => random() < 0.35);
  if (keys.length === 0) keys.push(KEYS[lane % KEYS.length]!);
  return keys.sort(() => random() - 0.5).map((key) => ({ key, quota: QUOTA[key]!, ms: 60_000 }));
};
const hit = async (lane: number, now: number, windows: Array<{ key: string; quota: number; ms: number }>): Promise<boolean> => {
  try {
    return (await stores[lane % stores.length]!.hitRateLimit({ now, windows })).admitted;
  } catch (err) {
    errors.push(String((err as Error).cause ?? err));
    return false;
  }
};

// 1. skewed clocks, idle windows, sweeps racing requests
let t = performance.now();
let left = CALLS;
await Promise.all(
  Array.from({ length: LANES }, async (_, lane) => {
    while (left-- > 0) {
      clock += random() < 0.05 ? 30_000 : random() * 50;
      await hit(lane, Math.round(clock + (random() * 2 - 1) * 2_000), pick(lane));
    }
  }),
);
console.log(`${CALLS} calls from ${LANES} connections, clocks up to 2 s apart: ${((performance.now() - t) / 1000).toFixed(1)} s, ${errors.length} errors`);
const { rows: bad } = await pool.query(
  `SELECT w.key, w.n_hits, w.oldest_ts, count(h.ts)::int AS n, min(h.ts) AS m
   FROM ${SCHEMA}.rate_windows w LEFT JOIN ${SCHEMA}.rate_hits h ON h.window_id = w.id
   GROUP BY w.key, w.n_hits, w.oldest_ts HAVING w.n_hits <> count(h.ts) OR w.oldest_ts IS DISTINCT FROM min(h.ts)`,
);
const { rows: orphans } = await pool.query(
  `SELECT count(*)::int AS n FROM ${SCHEMA}.rate_hits h WHERE NOT EXISTS (SELECT 1 FROM ${SCHEMA}.rate_windows w WHERE w.id = h.window_id)`,
);

// 2. bursts at one instant each: no window admits more than its quota in any 60 s
const admitted: Array<{ now: number; keys: string[] }> = [];
t = performance.now();
for (let b = 0; b < 1_500; b++) {
  clock += random() < 0.1 ? 20_000 + random() * 40_000 : random() * 3_000;
  const now = Math.round(clock);
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      const windows = pick(lane);
      if (await hit(lane, now, windows)) admitted.push({ now, keys: windows.map((w) => w.key) });
    }),
  );
}
let overQuota = 0;
for (const key of KEYS) {
  const times = admitted.filter((a) => a.keys.includes(key)).map((a) => a.now).sort((a, b) => a - b);
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 60_000) j++;
    if (i - j + 1 > QUOTA[key]!) overQuota++;
  }
}
console.log(`1,500 bursts of ${LANES} at one instant: ${((performance.now() - t) / 1000).toFixed(1)} s, ${admitted.length} admitted`);
await pool.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
await pool.end();

const failures = [
  ...new Set(errors).values(),
  ...bad.map((r) => `window ${r.key}: n_hits ${r.n_hits}, oldest ${r.oldest_ts}; holds ${r.n} hits, the oldest ${r.m}`),
  ...(Number(orphans[0].n) > 0 ? [`${orphans[0].n} hits of no window`] : []),
  ...(overQuota > 0 ? [`${overQuota} admissions over a quota`] : []),
];
if (failures.length > 0) {
  console.error(`FAILED:\n${failures.join('\n')}`);
  process.exit(1);
}
console.log('no error, every window consistent, no admission over a quota');
