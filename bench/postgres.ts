/**
 * PostgreSQL store at scale. Loads 100k IPOs and 10M snapshots into the schema
 * `ipokit_bench` (once: the load is reused until `--reload` or until migrations.ts changes),
 * then measures through postgresStore:
 * - list pages for every status, identifier lookups, GMP series (p50 / p99), printing each
 *   query's plan; it exits 1 when a list query scans the whole IPO table;
 * - the 30-day 5-minute GMP series of one IPO (43,200 snapshots, 8,640 buckets) through
 *   the store against the bare SQL aggregate of the same sums and counts, interleaved on
 *   one connection (target: store <= 1.2x bare);
 * - the limiter: one hot key hit by 3 processes at once (target >= 3,000 hits/s, and exactly
 *   the quota admitted in every window), and the cost of a hit against the quota.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:postgres [-- --reload]
 *
 * `runPostgresBench()` returns the same figures as rows for bench/run.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { IpoStatus, Store } from '@ipokit/core';
import type { GmpBucket, GmpBucketQuery, ListQuery } from '@ipokit/core/backend';
import { migrate, postgresStore, type PostgresClient } from '@ipokit/storage-postgres';
import { syntheticIpo as ipo } from '../packages/storage-postgres/src/synthetic.js';
import { interceptQueries } from '../packages/storage-postgres/src/test-database.js';
import { runLimiterBench, runQuotaScaling, type LimiterBenchResult } from './postgres-limiter.js';
import type { BenchRow } from './rows.js';

/** Options of {@link runPostgresBench}. */
export interface PostgresBenchOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. */
  url?: string;
  /** Load the data again even when a finished load is there (default: `--reload` was given). */
  reload?: boolean;
  /** Progress and plans (default: to stderr). */
  log?: (line: string) => void;
}

const SCHEMA = 'ipokit_bench';
const IPOS = 100_000;
const HOT = 200; // IPOs with 30 days of one snapshot a minute (43,200 each): 8.64M snapshots
const COLD_SNAPSHOTS = 14; // per other IPO: 1.40M snapshots
const MINUTE = 60_000;
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 22, 6, 30);
const TODAY = '2026-11-22';
const HOT_ID = ipoId(IPOS - 1000);
const MIGRATIONS_FILE = fileURLToPath(new URL('../packages/storage-postgres/src/migrations.ts', import.meta.url));

interface Timed {
  label: string;
  p50: number;
  p99: number;
  plan: string;
}

/**
 * Runs every PostgreSQL measurement and returns them as rows.
 *
 * @example
 * ```ts
 * const rows = await runPostgresBench();
 * rows.filter((r) => r.pass === false); // targets missed
 * ```
 */
export async function runPostgresBench(options: PostgresBenchOptions = {}): Promise<BenchRow[]> {
  return (await measure(options)).rows;
}

async function measure(options: PostgresBenchOptions): Promise<{ rows: BenchRow[]; timed: Timed[]; version: string; badPlans: string[] }> {
  const url = options.url ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const log = options.log ?? ((line: string) => console.error(line));
  const reload = options.reload ?? process.argv.includes('--reload');
  const rows: BenchRow[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    log(`PostgreSQL ${version}`);
    rows.push(...(await ensureLoaded(pool, reload, log)));

    let last: { text: string; params: unknown[] } = { text: '', params: [] };
    const recording: PostgresClient = interceptQueries(pool, (text, params = [], next) => {
      last = { text, params };
      return next(text, params);
    });
    // The data cache off: these time the SQL.
    const store = postgresStore({ client: recording, schema: SCHEMA, dataCacheTtlMs: 0 });
    const time = async (label: string, runs: number, fn: () => Promise<unknown>): Promise<Timed> => {
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
    };

    // (c) list pages for every status, lookups, series through the store, one query at a time
    log('timing list pages, lookups and GMP series ...');
    const base: Omit<ListQuery, 'status'> = { today: TODAY, types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 100, gmpAt: null };
    const timed: Timed[] = [];
    for (const status of ['announced', 'upcoming', 'open', 'closed', 'listed'] as IpoStatus[]) {
      const { count } = await store.listIpos({ ...base, status, limit: 1 });
      timed.push(await time(`list ${status} (count ${count}), page 1 of 100`, 200, async () => store.listIpos({ ...base, status })));
      timed.push(await time(`list ${status}, page 1 of 100 with includeGmp`, 200, async () => store.listIpos({ ...base, status, gmpAt: NOW })));
      timed.push(await time(`list ${status}, type=SME&source=nse&year=2024, page 2`, 200, async () => store.listIpos({ ...base, status, types: ['SME'], source: 'nse', year: '2024', offset: 100 })));
    }
    timed.push(await time('list listed, page 500 (offset 49,900)', 100, async () => store.listIpos({ ...base, status: 'listed', offset: 49_900 })));
    timed.push(await time('find by id', 500, async () => store.findIpo({ identifier: 'B0050000', gmpAt: NOW })));
    timed.push(await time('find by symbol (any case)', 500, async () => store.findIpo({ identifier: 'bench50000', gmpAt: NOW })));
    timed.push(await time('find by slug', 500, async () => store.findIpo({ identifier: 'bench-company-50000-ipo', gmpAt: NOW })));
    timed.push(await time('GMP 30 days, 5m buckets (43,200 snapshots -> 8,640 buckets)', 50, async () => store.gmpBuckets(series(300_000))));
    timed.push(await time('GMP 30 days, hourly', 50, async () => store.gmpBuckets(series(3_600_000))));
    timed.push(await time('GMP 30 days, weekly', 50, async () => store.gmpBuckets(series(7 * DAY, 4 * DAY))));
    const badPlans = timed.filter((r) => r.label.startsWith('list') && /Seq Scan on ipos\b/.test(r.plan)).map((r) => r.label);
    for (const r of timed) {
      const group = r.label.startsWith('list') ? 'PostgreSQL list' : r.label.startsWith('find') ? 'PostgreSQL lookup' : 'PostgreSQL GMP series';
      rows.push({ group, name: `${r.label}, p50`, value: round(r.p50, 2), unit: 'ms', note: `p99 ${r.p99.toFixed(2)} ms` });
    }
    rows.push({
      group: 'PostgreSQL list',
      name: 'list queries whose plan scans the whole IPO table',
      value: badPlans.length,
      unit: 'queries',
      target: '0',
      pass: badPlans.length === 0,
      ...(badPlans.length > 0 ? { note: badPlans.join('; ') } : {}),
    });

    // (b) the 5-minute series through the store against the bare aggregate, one connection
    log('timing the 5-minute GMP series: store against bare SQL ...');
    rows.push(...(await storeAgainstBareSql(pool)));

    // (d) the limiter
    log('timing the limiter: one hot key, 3 processes (3 trials) ...');
    const trials: LimiterBenchResult[] = [];
    for (let i = 0; i < 3; i++) trials.push(await runLimiterBench({ url, processes: 3, concurrency: 4, quota: 1_000, attemptsPerProcess: 500, rounds: 8 }));
    const limiter = [...trials].sort((a, b) => a.hitsPerSecond - b.hitsPerSecond)[1]!;
    const windows = trials.flatMap((r) => r.admittedByRound);
    const expected = Math.min(limiter.quota, limiter.attemptsPerRound);
    const shape = `${limiter.processes} processes x ${limiter.concurrency} in flight, quota ${limiter.quota}, ${limiter.attemptsPerRound} attempts per window, ${limiter.rounds} windows`;
    rows.push(
      {
        group: 'PostgreSQL limiter',
        name: `one hot key: hits (admitted or refused) per second, median of 3 trials (${shape})`,
        value: Math.round(limiter.hitsPerSecond),
        unit: 'hits/s',
        target: '>= 3,000',
        pass: limiter.hitsPerSecond >= 3_000,
        note: `trials: ${trials.map((r) => Math.round(r.hitsPerSecond)).join(', ')}`,
      },
      { group: 'PostgreSQL limiter', name: 'one hot key: admitted hits per second (same trial)', value: Math.round(limiter.admittedPerSecond), unit: 'hits/s' },
      {
        group: 'PostgreSQL limiter',
        name: 'one hot key: windows that admitted exactly the quota',
        value: windows.filter((a) => a === expected).length,
        unit: `of ${windows.length}`,
        target: `${windows.length}`,
        pass: trials.every((r) => r.exact),
        note: `admitted per window: ${[...new Set(windows)].join(', ')}`,
      },
    );
    log('timing a hit against the quota ...');
    const scaling = await runQuotaScaling({ url });
    rows.push(
      { group: 'PostgreSQL limiter', name: 'one hit, window of quota 10 (full; admitted as its oldest hit leaves), one connection', value: round(scaling.smallMs, 3), unit: 'ms' },
      {
        group: 'PostgreSQL limiter',
        name: 'one hit, window of quota 100,000 holding 100,000 hits (same pattern)',
        value: round(scaling.bigMs, 3),
        unit: 'ms',
        target: '<= 1.5x quota 10',
        pass: scaling.bigMs <= 1.5 * scaling.smallMs,
        note: `${(scaling.bigMs / scaling.smallMs).toFixed(2)}x; refused on that window: ${scaling.bigRefusedMs.toFixed(3)} ms`,
      },
    );
    return { rows, timed, version, badPlans };
  } finally {
    await pool.end();
  }
}

/** (a) The data, loaded once; rows say how long the load took, or that it was reused. */
async function ensureLoaded(pool: pg.Pool, reload: boolean, log: (line: string) => void): Promise<BenchRow[]> {
  // A finished load leaves a comment on the schema naming what it loaded and the
  // migrations it was loaded with.
  const mark = `loaded: ${IPOS} IPOs, ${HOT} x 43,200 + ${IPOS - HOT} x ${COLD_SNAPSHOTS} snapshots; migrations.ts ${createHash('sha256').update(readFileSync(MIGRATIONS_FILE)).digest('hex').slice(0, 12)}`;
  const found = await pool.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1 AND obj_description(oid, 'pg_namespace') = $2`, [SCHEMA, mark]);
  if (found.rows.length > 0 && !reload) {
    log(`reusing the data in schema ${SCHEMA} (--reload to load it again)`);
    const [{ n }] = (await pool.query<{ n: number }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE oid = '${SCHEMA}.snapshots'::regclass`)).rows as [{ n: number }];
    return [{ group: 'PostgreSQL load', name: `data of an earlier load reused (about ${Math.round(n / 1e5) / 10}M snapshots)`, value: 0, unit: 's', note: 'run with --reload to time the load' }];
  }
  const rows: BenchRow[] = [];
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(pool, { schema: SCHEMA });
  const store = postgresStore({ client: pool, schema: SCHEMA });
  let t = performance.now();
  for (let i = 0; i < IPOS; i += 10_000) {
    const ipos = Array.from({ length: Math.min(10_000, IPOS - i) }, (_, k) => ipo(i + k, IPOS, TODAY));
    const conflicts = await store.writeDataset({ ipos, snapshots: [] });
    if (conflicts.length > 0) throw new Error('conflicts');
  }
  const iposSeconds = (performance.now() - t) / 1000;
  log(`loaded ${IPOS} IPOs through writeDataset in ${iposSeconds.toFixed(1)} s`);
  rows.push({ group: 'PostgreSQL load', name: `${IPOS.toLocaleString('en-US')} IPOs through store.writeDataset (10 batches)`, value: round(iposSeconds, 1), unit: 's' });

  // Snapshots in bulk, in SQL, on one connection: hot IPOs get one a minute for the 30 days
  // before NOW, the others one an hour for the last COLD_SNAPSHOTS hours. The primary key
  // and the foreign key are dropped meanwhile and made again afterwards (one sort, one
  // join), as a bulk load does; the schema ends as migrate() made it.
  t = performance.now();
  const hotIds = Array.from({ length: HOT }, (_, k) => ipoId(IPOS - 1000 + k * 3));
  const c = await pool.connect();
  try {
    await c.query(`SET synchronous_commit = off`);
    await c.query(`SET maintenance_work_mem = '512MB'`);
    await c.query(`ALTER TABLE ${SCHEMA}.snapshots DROP CONSTRAINT snapshots_ipo_id_fkey, DROP CONSTRAINT snapshots_pkey`);
    await c.query(
      `INSERT INTO ${SCHEMA}.snapshots (ipo_id, ts, sources, agg_mean, agg_median, agg_min, agg_max, agg_mode)
       SELECT id, ts, '[{"name":"a","paise":4000},{"name":"b","paise":4100}]', p, p, p - 100, p + 100, p
       FROM unnest($1::text[]) AS id, generate_series($2::bigint - 30::bigint * ${DAY}, $2::bigint - ${MINUTE}, ${MINUTE}::bigint) AS ts,
            LATERAL (SELECT (4000 + (ts / ${MINUTE}) % 997 - 500)::bigint AS p) AS v`,
      [hotIds, NOW],
    );
    await c.query(
      `INSERT INTO ${SCHEMA}.snapshots (ipo_id, ts, sources, agg_mean, agg_median, agg_min, agg_max, agg_mode)
       SELECT i.id, $1::bigint - k::bigint * 3600000, '[{"name":"a","paise":1000}]', 1000, 1000, 1000, 1000, 1000
       FROM ${SCHEMA}.ipos i, generate_series(1, $2::int) AS k WHERE NOT (i.id = ANY ($3::text[]))`,
      [NOW, COLD_SNAPSHOTS, hotIds],
    );
    const inserted = (performance.now() - t) / 1000;
    await c.query(`ALTER TABLE ${SCHEMA}.snapshots ADD CONSTRAINT snapshots_pkey PRIMARY KEY (ipo_id, ts)`);
    await c.query(`ALTER TABLE ${SCHEMA}.snapshots ADD CONSTRAINT snapshots_ipo_id_fkey FOREIGN KEY (ipo_id) REFERENCES ${SCHEMA}.ipos (id) ON DELETE CASCADE`);
    const keyed = (performance.now() - t) / 1000;
    // as autovacuum would have by then: statistics, hint bits, a visibility map
    await c.query(`VACUUM ANALYZE ${SCHEMA}.ipos`);
    await c.query(`VACUUM ANALYZE ${SCHEMA}.snapshots`);
    const [{ n }] = (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.snapshots`)).rows as [{ n: number }];
    const seconds = (performance.now() - t) / 1000;
    // so that the timings below do not share the disk with the load's checkpoints
    await c.query('CHECKPOINT').catch(() => undefined);
    log(`loaded ${n} snapshots in bulk SQL in ${seconds.toFixed(1)} s (rows ${inserted.toFixed(1)} s, keys ${(keyed - inserted).toFixed(1)} s, vacuum ${(seconds - keyed).toFixed(1)} s)`);
    rows.push({
      group: 'PostgreSQL load',
      name: `${n.toLocaleString('en-US')} snapshots in bulk SQL (generate_series), keys and VACUUM ANALYZE included`,
      value: round(seconds, 1),
      unit: 's',
      note: `rows ${inserted.toFixed(1)} s, primary and foreign key ${(keyed - inserted).toFixed(1)} s, vacuum ${(seconds - keyed).toFixed(1)} s`,
    });
    rows.push({ group: 'PostgreSQL load', name: 'whole load (IPOs and snapshots)', value: round(iposSeconds + seconds, 1), unit: 's', target: '<= 180', pass: iposSeconds + seconds <= 180 });
  } finally {
    c.release();
  }
  await pool.query(`COMMENT ON SCHEMA ${SCHEMA} IS '${mark}'`);
  return rows;
}

/**
 * (b) The 30-day 5-minute series of one hot IPO through store.gmpBuckets against the bare
 * SQL aggregate of the same sums and counts, both on one connection, interleaved (A B, then
 * B A), with medians; the results are checked to be equal first.
 */
async function storeAgainstBareSql(pool: pg.Pool): Promise<BenchRow[]> {
  const c = await pool.connect();
  try {
    const store: Store = postgresStore({ client: c, schema: SCHEMA, dataCacheTtlMs: 0 });
    const q = series(300_000);
    // The aggregate anyone would write by hand (buckets from the epoch, ts > 0), rows as pg
    // gives them (strings), with no post-processing.
    const BARE = `SELECT ts / 300000 * 300000 AS start, sum(agg_mean) AS sum, count(agg_mean) AS count
      FROM ${SCHEMA}.snapshots WHERE ipo_id = $1 AND ts BETWEEN $2 AND $3 GROUP BY 1 ORDER BY 1`;
    const bare = () => c.query<{ start: string; sum: string; count: string }>(BARE, [q.ipoId, q.from, q.to]);
    const viaStore = await store.gmpBuckets(q);
    const viaBare = (await bare()).rows;
    const same =
      viaStore.length === viaBare.length &&
      viaStore.every((b: GmpBucket, i) => {
        const r = viaBare[i]!;
        return b.start === Number(r.start) && String(b.sum) === r.sum && b.count === Number(r.count);
      });
    if (!same) throw new Error('store.gmpBuckets and the bare SQL disagree');
    const runs = 60;
    const times = { store: [] as number[], bare: [] as number[] };
    const once = async (which: 'store' | 'bare'): Promise<void> => {
      const t = performance.now();
      await (which === 'store' ? store.gmpBuckets(q) : bare());
      times[which].push(performance.now() - t);
    };
    for (let i = 0; i < 5; i++) {
      await once('store');
      await once('bare');
    }
    times.store.length = 0;
    times.bare.length = 0;
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        await once('store');
        await once('bare');
      } else {
        await once('bare');
        await once('store');
      }
    }
    const s = median(times.store);
    const b = median(times.bare);
    const group = 'PostgreSQL GMP series';
    return [
      { group, name: `30 days, 5m, ${viaStore.length} buckets of ${HOT_ID}: store.gmpBuckets, median of ${runs}`, value: round(s, 2), unit: 'ms' },
      { group, name: 'the same sums and counts by the bare SQL aggregate, same connection, interleaved', value: round(b, 2), unit: 'ms', note: BARE.replace(/\s+/g, ' ').replace(`${SCHEMA}.`, '') },
      { group, name: 'store / bare SQL', value: round(s / b, 2), unit: 'x', target: '<= 1.2', pass: s / b <= 1.2, note: 'results checked equal first' },
    ];
  } finally {
    c.release();
  }
}

function series(size: number, origin = 0): GmpBucketQuery {
  return { ipoId: HOT_ID, field: 'mean', from: NOW - 30 * DAY, to: NOW, size, origin };
}

function ipoId(i: number): string {
  return ipo(i, IPOS, TODAY).id;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}

async function main(): Promise<void> {
  const { rows, timed, version, badPlans } = await measure({ log: (line) => console.log(line) });
  console.log(`\nPostgreSQL ${version}, ${IPOS} IPOs, schema ${SCHEMA}; times through postgresStore, one connection at a time\n`);
  console.log('| group | measure | value | target | met | note |\n|---|---|---|---|---|---|');
  for (const r of rows) {
    const met = r.pass === undefined ? '' : r.pass ? 'yes' : '**no**';
    console.log(`| ${r.group} | ${r.name} | ${r.value.toLocaleString('en-US')} ${r.unit} | ${r.target ?? ''} | ${met} | ${r.note ?? ''} |`);
  }
  for (const r of timed) console.log(`\n-- ${r.label}\n${r.plan}`);
  if (badPlans.length > 0) {
    console.error('\nA list query scans the whole ipos table: an index is not used.');
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
