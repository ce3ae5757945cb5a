/**
 * Core benchmarks of the memory store, without HTTP:
 *
 * - GMP bucketing of 1,000,000 snapshots into 5-minute buckets, the way the handler does it
 *   (`store.gmpBuckets` then `toSeriesPoints`), against "the floor": one pass over typed
 *   arrays computing the same per-bucket means with the same rounding;
 * - list pages over 100,000 IPOs: p50 and p99 latency of `store.listIpos` for every status,
 *   page 1 and the last page, with and without filters and with `gmpAt`;
 * - memory held per 1,000,000 snapshots (3 sources each), measured in a child process
 *   started with `--expose-gc` (see `core-memory.ts`).
 *
 * Timings take a warm-up and several rounds and report medians (these machines are noisy).
 *
 *   node --conditions=source --import tsx bench/core.ts [--only gmp,list,memory]
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Exchange, type IpoStatus, type IpoType, todayInIst } from '@ipokit/core';
import { addDays, type GmpBucketQuery, type IpoRecord, type ListQuery, paiseToRupees, roundDiv, type SnapshotRecord, toSeriesPoints } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { formatRows, type BenchRow } from './rows.js';

export type { BenchRow };

/** Which parts {@link runCoreBench} runs; all by default. */
export interface CoreBenchOptions {
  only?: ReadonlyArray<'gmp' | 'list' | 'memory' | 'limits'>;
}

/**
 * Runs the core benchmarks and resolves to their rows.
 *
 * @example
 * ```ts
 * const rows = await runCoreBench();
 * console.log(formatRows(rows));
 * ```
 */
export async function runCoreBench(options: CoreBenchOptions = {}): Promise<BenchRow[]> {
  const only = new Set(options.only ?? ['gmp', 'list', 'memory', 'limits']);
  // The list pages run first: the GMP part leaves a large heap behind for the collector.
  const list = only.has('list') ? await benchListPages() : [];
  const gmp = only.has('gmp') ? await benchGmpBuckets() : [];
  const memory = only.has('memory') ? await benchSnapshotMemory() : [];
  const limits = only.has('limits') ? await benchRateLimit() : [];
  return [...gmp, ...list, ...memory, ...limits];
}

// ---------------------------------------------------------------------------------------
// (a) GMP bucketing

const GMP_SNAPSHOTS = 1_000_000;
const GMP_STEP_MS = 15_000;
const FIVE_MINUTES = 5 * 60_000;
const GMP_TARGET_RATIO = 3;
/** No paise value reaches 2^31 in magnitude (docs/spec.md#numbers: below 1e9), so this marks a null. */
const NULL_PAISE = -0x80000000;
const SOURCE_NAMES = ['investorgain', 'ipocentral', 'ipowatch'] as const;

async function benchGmpBuckets(): Promise<BenchRow[]> {
  const group = 'GMP series';
  const t0 = Date.UTC(2025, 0, 1);
  const ipo = makeIpo({ id: '2025000001', symbol: 'GMPBENCH', startDate: '2025-01-01' });
  const store = memoryStore();
  // The floor's columns, filled from the same records as the store.
  const timestamps = new Float64Array(GMP_SNAPSHOTS);
  const means = new Int32Array(GMP_SNAPSHOTS);
  const random = mulberry32(42);
  let base = 5_000;
  await store.writeDataset({ ipos: [ipo], snapshots: [] });
  const CHUNK = 100_000;
  for (let first = 0; first < GMP_SNAPSHOTS; first += CHUNK) {
    const chunk: SnapshotRecord[] = [];
    for (let i = first; i < Math.min(GMP_SNAPSHOTS, first + CHUNK); i++) {
      base += Math.round((random() - 0.5) * 40);
      const s = gmpSnapshot(ipo.id, t0 + i * GMP_STEP_MS, base, random);
      timestamps[i] = s.timestamp;
      means[i] = s.aggregations.mean ?? NULL_PAISE;
      chunk.push(s);
    }
    const conflicts = await store.writeDataset({ ipos: [], snapshots: chunk });
    if (conflicts.length > 0) throw new Error(`import refused: ${JSON.stringify(conflicts[0])}`);
  }
  const query: GmpBucketQuery = { ipoId: ipo.id, field: 'mean', from: t0, to: t0 + GMP_SNAPSHOTS * GMP_STEP_MS, size: FIVE_MINUTES, origin: 0 };

  // The first read after a write builds the store's read columns: timed once, apart.
  const firstStart = performance.now();
  await store.gmpBuckets(query);
  const firstRead = performance.now() - firstStart;

  const ours = async () => toSeriesPoints(await store.gmpBuckets(query));
  const floor = () => floorSeries(timestamps, means, query);

  // Both must give the same series.
  const a = await ours();
  const b = floor();
  if (a.length !== b.starts.length) throw new Error(`series lengths differ: ${a.length} and ${b.starts.length}`);
  a.forEach((p, i) => {
    const price = b.prices[i] as number;
    if (Date.parse(p.timestamp) !== b.starts[i] || (p.price === null ? !Number.isNaN(price) : p.price !== price)) {
      throw new Error(`point ${i} differs: ${JSON.stringify(p)} and ${b.starts[i]}, ${price}`);
    }
  });

  // What the floor computes, through the store: the buckets and each bucket's rounded mean.
  const roundedMeans = async () => (await store.gmpBuckets(query)).map((bk) => (bk.count === 0 ? null : paiseToRupees(roundDiv(bk.sum, bk.count))));

  // Rounds interleave the contenders, so that noise from other processes hits all of them.
  const [oursMs, bucketsOnlyMs, meansMs, floorMs] = await interleavedMedians([ours, () => store.gmpBuckets(query), roundedMeans, floor], { warmup: 3, rounds: 11 });
  const ratio = (meansMs as number) / (floorMs as number);
  const pointsRatio = (oursMs as number) / (floorMs as number);
  await store.close?.();
  const note = `${GMP_SNAPSHOTS.toLocaleString('en-US')} snapshots, one every 15 s, ${a.length.toLocaleString('en-US')} buckets of 5 min, field mean`;
  return [
    { group, name: 'ours: store.gmpBuckets + the rounded mean of each bucket (median)', value: round(meansMs as number, 2), unit: 'ms', note },
    { group, name: 'of which store.gmpBuckets alone (median)', value: round(bucketsOnlyMs as number, 2), unit: 'ms', note: `${round((bucketsOnlyMs as number) / (floorMs as number), 2)} x the floor` },
    { group, name: 'floor: one pass over typed arrays (median)', value: round(floorMs as number, 2), unit: 'ms', note: 'Float64Array timestamps, Int32Array paise; same rounding' },
    { group, name: 'ratio ours / floor', value: round(ratio, 2), unit: 'x', target: `<= ${GMP_TARGET_RATIO}`, pass: ratio <= GMP_TARGET_RATIO, note: 'the same means, verified' },
    {
      group,
      name: 'the whole series as the handler builds it: + ISO timestamp and point object per bucket (median)',
      value: round(oursMs as number, 2),
      unit: 'ms',
      note: `${round(pointsRatio, 2)} x the floor, which writes no timestamps`,
    },
    { group, name: 'first read after the import (builds the read columns)', value: round(firstRead, 1), unit: 'ms', note: 'once per write that touches the IPO' },
  ];
}


/** A snapshot with three sources around `base` paise; one in 50 has none that reported. */
function gmpSnapshot(ipoId: string, timestamp: number, base: number, random: () => number): SnapshotRecord {
  if (random() < 0.02) return makeSnapshot(ipoId, timestamp, {});
  const prices: Record<string, number | null> = {};
  for (const name of SOURCE_NAMES) prices[name] = random() < 0.05 ? null : base + Math.round((random() - 0.5) * 500);
  return makeSnapshot(ipoId, timestamp, prices);
}

/**
 * The floor: the series of a bucket query from sorted typed columns in one pass, a
 * division per bucket and a comparison per snapshot, then the same rounding as
 * `toSeriesPoints`. Sums stay numbers: this data keeps them far inside the safe range.
 */
function floorSeries(timestamps: Float64Array, values: Int32Array, q: GmpBucketQuery): { starts: Float64Array; prices: Float64Array } {
  const lo = firstAtLeast(timestamps, q.from);
  const hi = firstAtLeast(timestamps, q.to + 1);
  const { size, origin } = q;
  const starts: number[] = [];
  const prices: number[] = [];
  let i = lo;
  while (i < hi) {
    const start = origin + Math.floor(((timestamps[i] as number) - origin) / size) * size;
    const end = start + size;
    let sum = 0;
    let count = 0;
    for (; i < hi && (timestamps[i] as number) < end; i++) {
      const v = values[i] as number;
      if (v === NULL_PAISE) continue;
      sum += v;
      count++;
    }
    starts.push(start);
    prices.push(count === 0 ? NaN : paiseToRupees(roundDiv(sum, count)));
  }
  return { starts: Float64Array.from(starts), prices: Float64Array.from(prices) };
}

function firstAtLeast(keys: Float64Array, x: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---------------------------------------------------------------------------------------
// (b) List pages

const LIST_IPOS = 100_000;
const LIST_LIMIT = 100;
const LIST_TARGET_P99_MS = 1;
const LIST_ROUNDS = 5;
const LIST_CALLS_PER_ROUND = 300;
const LIST_WARMUP_CALLS = 200;

async function benchListPages(): Promise<BenchRow[]> {
  const group = 'List page';
  const now = Date.now();
  const today = todayInIst(now);
  const ipos = generateIpos(LIST_IPOS, today, mulberry32(7));
  // A few snapshots for one IPO in four, for the gmpAt queries.
  const snapshots: SnapshotRecord[] = [];
  const random = mulberry32(8);
  for (let k = 0; k < ipos.length; k += 4) {
    const ipo = ipos[k] as IpoRecord;
    if (ipo.startDate === null) continue;
    const opens = Date.parse(`${ipo.startDate}T03:30:00Z`);
    for (let j = 0; j < 4; j++) snapshots.push(gmpSnapshot(ipo.id, opens - (j + 1) * 86_400_000, 3_000, random));
  }
  const store = memoryStore();
  const conflicts = await store.writeDataset({ ipos, snapshots });
  if (conflicts.length > 0) throw new Error(`import refused: ${JSON.stringify(conflicts[0])}`);

  const base = (status: IpoStatus): ListQuery => ({ status, today, types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: LIST_LIMIT, gmpAt: null });
  const year = String(Number(today.slice(0, 4)) - 2);
  const filters: Array<[string, Partial<ListQuery>]> = [
    ['no filter', {}],
    ['type=SME', { types: ['SME'] }],
    ['source=bse', { source: 'bse' }],
    [`year=${year}`, { year }],
    [`type=EQ,SME source=nse year=${year}`, { types: ['EQ', 'SME'], source: 'nse', year }],
    ['gmpAt=now', { gmpAt: now }],
  ];

  // The first list after a write rebuilds the indexes: timed once, apart.
  const buildStart = performance.now();
  await store.listIpos(base('listed'));
  const buildMs = performance.now() - buildStart;

  const rows: BenchRow[] = [];
  const counts: string[] = [];
  let worst = { p99: 0, name: '' };
  for (const status of ['upcoming', 'open', 'closed', 'listed', 'announced'] as const) {
    counts.push(`${status} ${(await store.listIpos(base(status))).count}`);
    for (const [label, filter] of filters) {
      const q0 = { ...base(status), ...filter };
      const { count } = await store.listIpos(q0);
      const lastOffset = count === 0 ? 0 : Math.floor((count - 1) / LIST_LIMIT) * LIST_LIMIT;
      for (const [page, offset] of [['page 1', 0], [`last page (${lastOffset / LIST_LIMIT + 1})`, lastOffset]] as const) {
        if (page !== 'page 1' && lastOffset === 0) continue; // one page only: the same query
        const q = { ...q0, offset };
        const { p50, p99 } = await latency(async () => store.listIpos(q));
        const name = `${status}, ${page}, ${label}`;
        if (p99 > worst.p99) worst = { p99, name };
        rows.push({
          group,
          name,
          value: round(p99 * 1000, 1),
          unit: 'µs p99',
          target: `<= ${LIST_TARGET_P99_MS * 1000} µs`,
          pass: p99 <= LIST_TARGET_P99_MS,
          note: `p50 ${round(p50 * 1000, 1)} µs; ${count.toLocaleString('en-US')} matches`,
        });
      }
    }
  }
  await store.close?.();
  rows.unshift(
    { group, name: 'worst p99 over every list query below', value: round(worst.p99 * 1000, 1), unit: 'µs', target: `<= ${LIST_TARGET_P99_MS * 1000} µs`, pass: worst.p99 <= LIST_TARGET_P99_MS, note: worst.name },
    {
      group,
      name: 'first list after the import (builds the indexes)',
      value: round(buildMs, 1),
      unit: 'ms',
      note: `${LIST_IPOS.toLocaleString('en-US')} IPOs (${counts.join(', ')}), ${snapshots.length.toLocaleString('en-US')} snapshots; limit ${LIST_LIMIT}; once per write`,
    },
  );
  return rows;
}

/**
 * Valid IPOs with startDates spread from about 7 years before `today` to 30 days after:
 * 2% announced (no dates), of the rest 8% never listed; issues stay open 1 to 5 days and
 * list 3 to 7 days after they close, so most are listed and a few upcoming, open or closed.
 */
function generateIpos(n: number, today: string, random: () => number): IpoRecord[] {
  const spanDays = 7 * 365 + 30;
  const first = addDays(today, -7 * 365);
  const words = ['Aarav', 'Bharat', 'Chola', 'Deccan', 'Everest', 'Ganga', 'Himalaya', 'Indus', 'Jaipur', 'Kaveri', 'Lotus', 'Malabar', 'Narmada', 'Orbit', 'Pioneer', 'Quest'];
  const kinds = ['Industries', 'Finance', 'Technologies', 'Foods', 'Textiles', 'Infra', 'Pharma', 'Energy'];
  const out: IpoRecord[] = [];
  for (let k = 0; k < n; k++) {
    const type: IpoType = random() < 0.6 ? 'EQ' : random() < 0.9 ? 'SME' : 'DEBT';
    const exchanges: Exchange[] = type === 'SME' ? [random() < 0.6 ? 'nse' : 'bse'] : type === 'EQ' ? ['nse', 'bse'] : random() < 0.5 ? ['nse'] : ['nse', 'bse'];
    let startDate: string | null = null;
    let endDate: string | null = null;
    let listingDate: string | null = null;
    if (random() >= 0.02) {
      startDate = addDays(first, Math.floor(random() * spanDays));
      endDate = addDays(startDate, 1 + Math.floor(random() * 5));
      if (random() >= 0.08) listingDate = addDays(endDate, 3 + Math.floor(random() * 5));
    }
    const name = `${words[Math.floor(random() * words.length)]} ${kinds[Math.floor(random() * kinds.length)]} ${k.toString(36)}`;
    out.push(makeIpo({ id: String(2_000_000_000 + k), name, symbol: `SYM${k.toString(36).toUpperCase()}`, slug: `ipo-${k}`, type, exchanges, startDate, endDate, listingDate, priceRange: '95-100', minQty: 150, minAmount: 15_000, issueSize: '192cr' }));
  }
  return out;
}

/** p50 and p99 (ms) of one call: the median over rounds of each round's percentiles. */
async function latency(call: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < LIST_WARMUP_CALLS; i++) await call();
  const p50s: number[] = [];
  const p99s: number[] = [];
  const samples = new Float64Array(LIST_CALLS_PER_ROUND);
  for (let r = 0; r < LIST_ROUNDS; r++) {
    for (let i = 0; i < LIST_CALLS_PER_ROUND; i++) {
      const t = performance.now();
      await call();
      samples[i] = performance.now() - t;
    }
    samples.sort();
    p50s.push(samples[Math.floor(0.5 * (LIST_CALLS_PER_ROUND - 1))] as number);
    p99s.push(samples[Math.ceil(0.99 * (LIST_CALLS_PER_ROUND - 1))] as number);
  }
  return { p50: median(p50s), p99: median(p99s) };
}

// ---------------------------------------------------------------------------------------
// (c) Memory

/** Runs `core-memory.ts` in a child process with `--expose-gc` and turns its report into rows. */
async function benchSnapshotMemory(): Promise<BenchRow[]> {
  const file = fileURLToPath(new URL('./core-memory.ts', import.meta.url));
  const child = spawn(process.execPath, ['--expose-gc', '--conditions=source', '--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const last = lines.at(-1);
  if (code !== 0 || last === undefined) throw new Error(`core-memory.ts exited with ${code}`);
  const report = JSON.parse(last) as MemoryReport;
  const group = 'Memory';
  const perSnapshot = (bytes: number) => bytes / report.snapshots;
  const note = `${report.snapshots.toLocaleString('en-US')} snapshots of ${report.ipos.toLocaleString('en-US')} IPOs, 3 sources each; heapUsed + arrayBuffers after GC`;
  return [
    { group, name: 'held after writeDataset, per snapshot', value: round(perSnapshot(report.afterImport), 1), unit: 'bytes', note },
    { group, name: 'held after writeDataset, per million snapshots', value: round(report.afterImport / 1e6, 1), unit: 'MB' },
    { group, name: 'held once read (read columns built), per snapshot', value: round(perSnapshot(report.afterRead), 1), unit: 'bytes', note: 'after one series and one latest-snapshot read per IPO' },
    { group, name: 'held once read, per million snapshots', value: round(report.afterRead / 1e6, 1), unit: 'MB' },
  ];
}

/** What `core-memory.ts` prints: bytes held by the snapshots in each state. */
export interface MemoryReport {
  ipos: number;
  snapshots: number;
  afterImport: number;
  afterRead: number;
}

// ---------------------------------------------------------------------------------------
// Rate limits

/**
 * One `store.hitRateLimit` on two windows, with a small quota and with one "high enough
 * never to trip": ten requests per millisecond, so the large windows hold 600,000 hits.
 */
async function benchRateLimit(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const CALLS = 200_000;
  for (const quota of [6, 1_000_000]) {
    const store = memoryStore();
    const windows = [
      { key: 'acct:bench', quota, ms: 60_000 },
      { key: 'gmp:bench', quota, ms: 60_000 },
    ];
    let now = Date.UTC(2026, 10, 20);
    let admitted = 0;
    const batch = async (): Promise<void> => {
      for (let i = 0; i < CALLS; i++) {
        if (i % 10 === 0) now++;
        if ((await store.hitRateLimit({ now, windows })).admitted) admitted++;
      }
    };
    const [ms] = await interleavedMedians([batch], { warmup: 1, rounds: 5 });
    await store.close?.();
    rows.push({
      group: 'Rate limit',
      name: `store.hitRateLimit, two windows of quota ${quota.toLocaleString('en-US')} (median)`,
      value: round(((ms as number) / CALLS) * 1000, 3),
      unit: 'µs per call',
      note: `${CALLS.toLocaleString('en-US')} calls per round, 10 per ms; ${admitted.toLocaleString('en-US')} admitted over all rounds`,
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------
// Helpers

/** Median wall time (ms) of each function, after a warm-up, in rounds that run each once. */
async function interleavedMedians(fns: ReadonlyArray<() => unknown>, o: { warmup: number; rounds: number }): Promise<number[]> {
  for (let i = 0; i < o.warmup; i++) for (const fn of fns) await fn();
  const times = fns.map((): number[] => []);
  for (let r = 0; r < o.rounds; r++) {
    for (let k = 0; k < fns.length; k++) {
      const t = performance.now();
      await (fns[k] as () => unknown)();
      (times[k] as number[]).push(performance.now() - t);
    }
  }
  return times.map(median);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A small seeded PRNG, so every run measures the same data. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--only');
  const only = i > 0 ? ((process.argv[i + 1] ?? '').split(',') as CoreBenchOptions['only']) : undefined;
  const started = performance.now();
  const rows = await runCoreBench(only === undefined ? {} : { only });
  console.log(`Core benchmarks, Node ${process.version}, ${Math.round((performance.now() - started) / 1000)} s`);
  console.log(formatRows(rows));
}
