/**
 * PostgreSQL store at scale: loads 100k IPOs and 5M snapshots (once; `--reload` to redo)
 * into the schema `ipokit_bench`, then times list pages for every status, identifier
 * lookups and GMP series through the store, prints each query's plan, and exits 1 when a
 * list query scans the whole IPO table.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:postgres [-- --reload]
 */
import pg from 'pg';
import type { GmpBucketQuery, IpoStatus, ListQuery } from '@ipokit/core';
import { migrate, postgresStore, type PostgresClient } from '@ipokit/storage-postgres';
import { syntheticIpo as ipo } from '../packages/storage-postgres/src/synthetic.js';

const URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = 'ipokit_bench';
const IPOS = 100_000;
const HOT = 100; // IPOs with 30 days of one snapshot a minute (43,200 each)
const COLD_SNAPSHOTS = 7; // per other IPO
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 22, 6, 30);
const TODAY = '2026-11-22';

const pool = new pg.Pool({ connectionString: URL, max: 4 });
let last: { text: string; params: unknown[] } = { text: '', params: [] };
const recording: PostgresClient = {
  query: (text, params = []) => {
    last = { text, params };
    return pool.query(text, params);
  },
};
const store = postgresStore({ client: recording, schema: SCHEMA });

async function load(): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(pool, { schema: SCHEMA });
  let t = performance.now();
  for (let i = 0; i < IPOS; i += 10_000) {
    const ipos = Array.from({ length: Math.min(10_000, IPOS - i) }, (_, k) => ipo(i + k, IPOS, TODAY));
    const conflicts = await store.writeDataset({ ipos, snapshots: [] });
    if (conflicts.length > 0) throw new Error('conflicts');
  }
  console.log(`loaded ${IPOS} IPOs through writeDataset in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  // Snapshots in bulk, in SQL: hot IPOs get one a minute for 30 days before NOW.
  t = performance.now();
  const hotIds = Array.from({ length: HOT }, (_, k) => ipo(IPOS - 1000 + k * 3, IPOS, TODAY).id);
  await pool.query(
    `INSERT INTO ${SCHEMA}.snapshots (ipo_id, ts, sources, agg_mean, agg_median, agg_min, agg_max, agg_mode)
     SELECT id, ts, '[{"name":"a","paise":4000},{"name":"b","paise":4100}]', p, p, p - 100, p + 100, p
     FROM unnest($1::text[]) AS id, generate_series($2::bigint - 30::bigint * 86400000, $2::bigint - 60000, 60000::bigint) AS ts,
          LATERAL (SELECT (4000 + (ts / 60000) % 997 - 500)::bigint AS p) AS v`,
    [hotIds, NOW],
  );
  await pool.query(
    `INSERT INTO ${SCHEMA}.snapshots (ipo_id, ts, sources, agg_mean, agg_median, agg_min, agg_max, agg_mode)
     SELECT i.id, $1::bigint - k::bigint * 3600000, '[{"name":"a","paise":1000}]', 1000, 1000, 1000, 1000, 1000
     FROM ${SCHEMA}.ipos i, generate_series(1, $2::int) AS k WHERE NOT (i.id = ANY ($3::text[]))`,
    [NOW, COLD_SNAPSHOTS, hotIds],
  );
  await pool.query(`VACUUM ANALYZE ${SCHEMA}.ipos`);
  await pool.query(`VACUUM ANALYZE ${SCHEMA}.snapshots`);
  const [{ n }] = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.snapshots`)).rows as [{ n: number }];
  console.log(`loaded ${n} snapshots in bulk SQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

async function time(label: string, runs: number, fn: () => Promise<unknown>): Promise<{ label: string; p50: number; p99: number; plan: string }> {
  for (let i = 0; i < 5; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const q = last;
  const plan = (await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${q.text}`, q.params)).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  return { label, p50: ms[Math.floor(runs / 2)]!, p99: ms[Math.min(runs - 1, Math.floor(runs * 0.99))]!, plan };
}

async function main(): Promise<void> {
  // A finished load leaves a comment on the schema.
  const loaded = await pool.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1 AND obj_description(oid, 'pg_namespace') = 'loaded'`, [SCHEMA]);
  if (loaded.rows.length === 0 || process.argv.includes('--reload')) {
    await load();
    await pool.query(`COMMENT ON SCHEMA ${SCHEMA} IS 'loaded'`);
  }
  const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
  const base: Omit<ListQuery, 'status'> = { today: TODAY, types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 100, gmpAt: null };
  const results = [];
  for (const status of ['announced', 'upcoming', 'open', 'closed', 'listed'] as IpoStatus[]) {
    const { count } = await store.listIpos({ ...base, status, limit: 1 });
    results.push(await time(`list ${status} (count ${count}), page 1 of 100`, 200, () => store.listIpos({ ...base, status })));
    results.push(await time(`list ${status}, page 1 of 100 with includeGmp`, 200, () => store.listIpos({ ...base, status, gmpAt: NOW })));
    results.push(await time(`list ${status}, type=SME&source=nse&year=2024, page 2`, 200, () => store.listIpos({ ...base, status, types: ['SME'], source: 'nse', year: '2024', offset: 100 })));
  }
  results.push(await time('list listed, page 500 (offset 49,900)', 100, () => store.listIpos({ ...base, status: 'listed', offset: 49_900 })));
  results.push(await time('find by id', 500, () => store.findIpo({ identifier: 'B0050000', gmpAt: NOW })));
  results.push(await time('find by symbol (any case)', 500, () => store.findIpo({ identifier: 'bench50000', gmpAt: NOW })));
  results.push(await time('find by slug', 500, () => store.findIpo({ identifier: 'bench-company-50000-ipo', gmpAt: NOW })));
  const hot = `B${String(IPOS - 1000).padStart(7, '0')}`;
  const series = (size: number, origin = 0): GmpBucketQuery => ({ ipoId: hot, field: 'mean', from: NOW - 30 * DAY, to: NOW, size, origin });
  results.push(await time('GMP 30 days, 5m buckets (43,200 snapshots -> 8,640 buckets)', 50, () => store.gmpBuckets(series(300_000))));
  results.push(await time('GMP 30 days, hourly', 50, () => store.gmpBuckets(series(3_600_000))));
  results.push(await time('GMP 30 days, weekly', 50, () => store.gmpBuckets(series(7 * DAY, 4 * DAY))));

  console.log(`\nPostgreSQL ${version}, ${IPOS} IPOs, schema ${SCHEMA}; times through postgresStore, one connection at a time\n`);
  console.log('| query | p50 ms | p99 ms |\n|---|---|---|');
  for (const r of results) console.log(`| ${r.label} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`);
  let bad = false;
  for (const r of results) {
    console.log(`\n-- ${r.label}\n${r.plan}`);
    if (r.label.startsWith('list') && /Seq Scan on ipos/.test(r.plan)) bad = true;
  }
  await pool.end();
  if (bad) {
    console.error('\nA list query scans the whole ipos table: an index is not used.');
    process.exit(1);
  }
}

await main();
