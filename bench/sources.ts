/**
 * The cost of data in (docs/spec.md#sources), side by side in one run:
 * - pushing 100,000 GMP snapshots (300 IPOs, 3 sources a snapshot) over HTTP to the push route
 *   of `ipokit serve` (`startServer` with `ingest`, in a process of its own:
 *   bench/ingest-server.ts) against `importDataset` of the same dataset in process, on the
 *   memory store and on PostgreSQL, as one request of the whole dataset and as 10 requests of
 *   10,000 snapshots (the in-process import then in the same 10 parts); a fresh store (a
 *   fresh schema) for every contender of every round, rounds interleaved, medians
 *   (target: push throughput >= 0.7x the import's);
 * - the collector's cost per run of one source answering GMP reports of 1,000 IPOs, driven
 *   on a manual clock and timers: prices changing every run (1,000 combined snapshots a run)
 *   against `importDataset` of 1,000 such snapshots, and a run where nothing changed (no
 *   snapshot), on the memory store and on PostgreSQL.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:sources
 *
 * `runSourcesBench()` returns the figures as rows for bench/run.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { importDataset, type Dataset, type DatasetIpo, type DatasetSnapshot, type IpoStore } from '@ipokit/core';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { startCollector, type CollectorTimers, type GmpReport } from '@ipokit/sources';
import { median } from './http.js';
import type { BenchRow } from './rows.js';

/** Options of {@link runSourcesBench}. */
export interface SourcesBenchOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. */
  url?: string;
  /** Interleaved rounds of the push measurements on the memory store (default 5) and on PostgreSQL (default 3). */
  rounds?: { memory?: number; postgres?: number };
  /** Measured collector runs of each kind on the memory store (default 15) and on PostgreSQL (default 7). */
  runs?: { memory?: number; postgres?: number };
}

const T0 = Date.UTC(2026, 10, 2, 3, 45); // 09:15 IST
const SOURCE_NAMES = ['chittorgarh', 'investorgain', 'ipowatch'] as const;
const PUSH_IPOS = 300;
const PUSH_SNAPSHOTS = 100_000;
const BATCH = 10_000;
const COLLECTOR_IPOS = 1_000;
const EVERY_MS = 60_000;
const serverFile = fileURLToPath(new URL('./ingest-server.ts', import.meta.url));
const round = (x: number, d: number): number => Number(x.toFixed(d));

/** `n` IPOs with the fields a GMP series needs (a price band), ids `B000001`... */
function benchIpos(n: number): DatasetIpo[] {
  return Array.from({ length: n }, (_, i) => {
    const k = String(i + 1).padStart(6, '0');
    const high = 100 + (i % 400);
    return { id: `B${k}`, name: `Bench Issue ${k} Ltd`, symbol: `BENCH${k}`, slug: `bench-issue-${k}-ipo`, type: 'EQ', exchanges: ['nse', 'bse'], priceRange: `${high - 5}-${high}`, minQty: 100 };
  });
}

/**
 * 100,000 snapshots of 300 IPOs, in time order as a live feed sends them: one minute after
 * another, every IPO once a minute, 3 sources each.
 */
function pushDataset(): Dataset {
  const ipos = benchIpos(PUSH_IPOS);
  const gmp: DatasetSnapshot[] = [];
  for (let i = 0; i < PUSH_SNAPSHOTS; i++) {
    const minute = Math.floor(i / PUSH_IPOS);
    const ipo = i % PUSH_IPOS;
    gmp.push({
      ipoId: ipos[ipo]!.id,
      timestamp: new Date(T0 + minute * 60_000).toISOString(),
      sources: SOURCE_NAMES.map((name, s) => ({ name, gmpPrice: ((ipo * 7 + minute * 3 + s * 11) % 9000) / 100 })),
    });
  }
  return { ipos, gmp };
}

/** The dataset in 10 parts of 10,000 snapshots, the IPOs with the first. */
function batches(dataset: Dataset): Dataset[] {
  const gmp = dataset.gmp ?? [];
  const parts: Dataset[] = [];
  for (let at = 0; at < gmp.length; at += BATCH) parts.push(at === 0 ? { ipos: dataset.ipos ?? [], gmp: gmp.slice(at, at + BATCH) } : { gmp: gmp.slice(at, at + BATCH) });
  return parts;
}

// ---------------------------------------------------------------------------------------
// The server process.

interface IngestServer {
  child: ChildProcess;
  lines: Interface;
  token: string;
  /** Sends a command and waits for its answer line. */
  send(command: object): Promise<{ port?: number; stopped?: boolean; error?: string }>;
}

async function spawnServer(maxBytes: number, url: string): Promise<IngestServer> {
  const token = randomBytes(32).toString('hex');
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', serverFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, IPOKIT_BENCH_TOKEN: token, IPOKIT_BENCH_MAX_BYTES: String(maxBytes), DATABASE_URL: url },
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench/ingest-server.ts exited with ${code}`))));
  exited.catch(() => undefined);
  return {
    child,
    lines,
    token,
    async send(command) {
      const answer = new Promise<string>((resolve) => waiting.push(resolve));
      child.stdin!.write(`${JSON.stringify(command)}\n`);
      const parsed = JSON.parse(await Promise.race([answer, exited])) as { port?: number; stopped?: boolean; error?: string };
      if (parsed.error !== undefined) throw new Error(`ingest server: ${parsed.error}`);
      return parsed;
    },
  };
}

/** CPU seconds (user + system) a process has used so far; NaN where /proc is missing. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
  } catch {
    return NaN;
  }
}

/** One POST of a JSON body to the push route; resolves to the counts written. */
function push(port: number, token: string, body: Buffer): Promise<{ ipos: number; gmp: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/-/ingest', method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, Authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`push: ${res.statusCode} ${text.slice(0, 500)}`));
          else resolve(JSON.parse(text) as { ipos: number; gmp: number });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------
// Push against import.

type Kind = 'memory' | 'postgres';
type Contender = 'import whole' | 'parse and import whole' | 'push whole' | 'import batches' | 'push batches';
/** On PostgreSQL, parsing is a small part of the time, and the part would take too long with it. */
const CONTENDERS: Record<Kind, readonly Contender[]> = {
  memory: ['import whole', 'parse and import whole', 'push whole', 'import batches', 'push batches'],
  postgres: ['import whole', 'push whole', 'import batches', 'push batches'],
};

interface PushSamples {
  ms: Record<Contender, number[]>;
  /** CPU ms of each round: this process's for an import, the server process's for a push (all threads, GC included). */
  cpuMs: Record<Contender, number[]>;
}

async function comparePushes(kind: Kind, server: IngestServer, pool: pg.Pool | null, data: { whole: Dataset; parts: Dataset[]; body: Buffer; bodies: Buffer[] }, rounds: number): Promise<PushSamples> {
  const samples: PushSamples = {
    ms: { 'import whole': [], 'parse and import whole': [], 'push whole': [], 'import batches': [], 'push batches': [] },
    cpuMs: { 'import whole': [], 'parse and import whole': [], 'push whole': [], 'import batches': [], 'push batches': [] },
  };
  let schemaSeq = 0;
  const freshSchema = async (): Promise<string> => {
    const schema = `ipokit_bench_sources_${process.pid}_${schemaSeq++}`;
    await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    return schema;
  };
  const dropSchema = async (schema: string | null): Promise<void> => {
    if (schema !== null) await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  };

  const runOne = async (contender: Contender): Promise<{ ms: number; cpuMs: number }> => {
    const schema = kind === 'postgres' ? await freshSchema() : null;
    try {
      if (!contender.startsWith('push')) {
        let store: IpoStore;
        if (schema === null) store = memoryStore();
        else {
          await migrate(pool!, { schema });
          store = postgresStore({ client: pool!, schema });
        }
        const cpu = process.cpuUsage();
        const started = performance.now();
        let written = 0;
        if (contender === 'import whole') written = (await importDataset(store, data.whole)).snapshots;
        else if (contender === 'parse and import whole') written = (await importDataset(store, JSON.parse(data.body.toString('utf8')) as unknown)).snapshots;
        else for (const part of data.parts) written += (await importDataset(store, part)).snapshots;
        const ms = performance.now() - started;
        const used = process.cpuUsage(cpu);
        if (written !== PUSH_SNAPSHOTS) throw new Error(`${contender}: wrote ${written} snapshots`);
        await store.close?.();
        return { ms, cpuMs: (used.user + used.system) / 1000 };
      }
      const { port } = await server.send({ start: { schema } });
      try {
        const cpu = cpuSeconds(server.child.pid);
        const started = performance.now();
        let written = 0;
        if (contender === 'push whole') written = (await push(port!, server.token, data.body)).gmp;
        else for (const body of data.bodies) written += (await push(port!, server.token, body)).gmp;
        const ms = performance.now() - started;
        const cpuMs = (cpuSeconds(server.child.pid) - cpu) * 1000;
        if (written !== PUSH_SNAPSHOTS) throw new Error(`${contender}: wrote ${written} snapshots`);
        return { ms, cpuMs };
      } finally {
        await server.send({ stop: true });
      }
    } finally {
      await dropSchema(schema);
    }
  };

  // On the memory store (the first measured), one warm-up of each, so that both processes'
  // code is compiled; then the rounds, each in the other order than the last.
  const contenders = CONTENDERS[kind];
  if (kind === 'memory') for (const c of contenders) await runOne(c);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse();
    for (const c of order) {
      const { ms, cpuMs } = await runOne(c);
      samples.ms[c].push(ms);
      samples.cpuMs[c].push(cpuMs);
    }
  }
  return samples;
}

function pushRows(label: string, s: PushSamples, bytes: number, rounds: number, kind: Kind): BenchRow[] {
  const m = (c: Contender) => median(s.ms[c]);
  const cpu = (c: Contender) => median(s.cpuMs[c]);
  const list = (c: Contender) => s.ms[c].map((x) => Math.round(x)).join(', ');
  const rate = (c: Contender) => Math.round(PUSH_SNAPSHOTS / (m(c) / 1000));
  const rows: BenchRow[] = [];
  for (const [shape, imp, psh, how] of [
    ['one request', 'import whole', 'push whole', `one request of ${(bytes / 2 ** 20).toFixed(1)} MiB`],
    ['10 requests of 10,000', 'import batches', 'push batches', '10 requests of 10,000 snapshots (the import in the same 10 parts)'],
  ] as const) {
    if (shape === 'one request' && s.ms['parse and import whole'].length > 0) {
      const c = 'parse and import whole';
      rows.push({
        group: 'Data in',
        name: `100,000 snapshots, ${label}: JSON.parse of the body + importDataset in process`,
        value: Math.round(m(c)),
        unit: 'ms',
        note: `${rate(c).toLocaleString('en-US')} snapshots/s; samples ${list(c)}; CPU ${Math.round(cpu(c))} ms; the push's throughput is ${round(m(c) / m(psh), 2)}x this one's (the push parses too, in a smaller heap)`,
      });
    }
    const ratio = m(imp) / m(psh);
    rows.push(
      { group: 'Data in', name: `100,000 snapshots, ${label}: importDataset in process${shape === 'one request' ? '' : ', 10 parts'}`, value: Math.round(m(imp)), unit: 'ms', note: `${rate(imp).toLocaleString('en-US')} snapshots/s; samples ${list(imp)}; CPU ${Math.round(cpu(imp))} ms` },
      { group: 'Data in', name: `100,000 snapshots, ${label}: POST /-/ingest, ${shape}`, value: Math.round(m(psh)), unit: 'ms', note: `${rate(psh).toLocaleString('en-US')} snapshots/s; samples ${list(psh)}; server CPU ${Math.round(cpu(psh))} ms` },
      { group: 'Data in', name: `push / import throughput, ${label}, ${shape}`, value: round(ratio, 2), unit: 'x', target: '>= 0.7', pass: ratio >= 0.7, note: `${how}; the server in its own process; a fresh store each time; ${rounds} interleaved rounds, medians; by CPU time (less sensitive to a busy machine${kind === 'postgres' ? "; Node's side only, not the database's" : ''}) ${round(cpu(imp) / cpu(psh), 2)}x` },
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------
// The collector.

/**
 * Timers the benchmark fires by hand: the collector's schedule timer is fired at once (after
 * the clock is moved to its due time), and {@link nextSchedule} resolves when the collector
 * sets its next one, which it does when a run has ended.
 */
class BenchTimers implements CollectorTimers {
  private seq = 0;
  private readonly pending = new Map<number, { fn: () => void; ms: number }>();
  private waiter: (() => void) | null = null;

  constructor(private readonly runTimeoutMs: number) {}

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { fn, ms });
    // The cut timer of a run is set with the run's timeout; any other is the next schedule.
    if (ms !== this.runTimeoutMs) {
      const w = this.waiter;
      this.waiter = null;
      w?.();
    }
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Resolves when the collector sets its next schedule timer. */
  nextSchedule(): Promise<void> {
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** Fires the one schedule timer pending. */
  fire(): void {
    const entry = [...this.pending].find(([, t]) => t.ms !== this.runTimeoutMs);
    if (entry === undefined) throw new Error('no schedule timer is set');
    this.pending.delete(entry[0]);
    entry[1].fn();
  }
}

interface CollectorSamples {
  changed: number[];
  unchanged: number[];
  imported: number[];
  records: number;
  /** Per measured run (changed, then unchanged): the store's findIpo calls, and ms in the store's writeSourceRun (PostgreSQL's; 0 where the store has none). */
  lookups: { changed: number[]; unchanged: number[] };
  writeMs: { changed: number[]; unchanged: number[] };
}

/** What a run asked of the store. */
interface StoreProbe {
  findIpo: number;
  writeMs: number;
}

/** The store, counting its findIpo calls and timing its writeSourceRun into `probe`. */
function probed<S extends object>(store: S, probe: StoreProbe): S {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (key === 'findIpo') {
        return (...args: unknown[]) => {
          probe.findIpo++;
          return fn.apply(target, args);
        };
      }
      if (key === 'writeSourceRun') {
        return async (...args: unknown[]) => {
          const t = performance.now();
          try {
            return await fn.apply(target, args);
          } finally {
            probe.writeMs += performance.now() - t;
          }
        };
      }
      return fn.bind(target);
    },
  });
}

/** Per-run milliseconds of the collector (changing, unchanged) and of the import of the same snapshots. */
async function compareCollector(collectorStore: IpoStore, importStore: IpoStore, runs: number, warmUp: number): Promise<CollectorSamples> {
  const ipos = benchIpos(COLLECTOR_IPOS);
  await importDataset(collectorStore, { ipos });
  await importDataset(importStore, { ipos });
  let clock = T0;
  let reports: GmpReport[] = [];
  const pricesAt = (run: number): GmpReport[] => ipos.map((ipo, i) => ({ ipoId: ipo.id, gmpPrice: ((i * 7 + run * 13) % 9000) / 100 }));
  const timeoutMs = 30_000;
  const timers = new BenchTimers(timeoutMs);
  let lastError: string | null = null;
  const first = timers.nextSchedule();
  const probe: StoreProbe = { findIpo: 0, writeMs: 0 };
  const collector = await startCollector(probed(collectorStore, probe), {
    sources: [{ name: 'bench-gmp', everyMs: EVERY_MS, collect: () => Promise.resolve({ gmpReports: reports }) }],
    now: () => new Date(clock),
    timeoutMs,
    timers,
    onError: (err) => (lastError = err instanceof Error ? err.message : String(err)),
  });
  await first;

  let run = 0;
  /** One collector run at the next minute; its milliseconds. */
  const collectorRun = async (changing: boolean): Promise<number> => {
    if (changing) reports = pricesAt(run);
    run++;
    probe.findIpo = 0;
    probe.writeMs = 0;
    clock += EVERY_MS;
    const ended = timers.nextSchedule();
    const t = performance.now();
    timers.fire();
    await ended;
    const ms = performance.now() - t;
    if (lastError !== null) throw new Error(`collector run failed: ${lastError}`);
    // The run has set its next timer; it is over once the collector has seen it end (a timer
    // fired before that would find the source still running and skip the run).
    while (collector.status()[0]?.running === true) await new Promise<void>((resolve) => setImmediate(resolve));
    return ms;
  };
  /** importDataset of 1,000 snapshots of one source at the next minute of its own. */
  let importMinute = 0;
  const importRun = async (): Promise<number> => {
    importMinute++;
    const timestamp = new Date(T0 + importMinute * EVERY_MS).toISOString();
    const prices = pricesAt(importMinute);
    const gmp: DatasetSnapshot[] = prices.map((r) => ({ ipoId: r.ipoId, timestamp, sources: [{ name: 'bench-gmp', gmpPrice: r.gmpPrice }] }));
    const t = performance.now();
    const written = await importDataset(importStore, { gmp });
    const ms = performance.now() - t;
    if (written.snapshots !== COLLECTOR_IPOS) throw new Error(`import wrote ${written.snapshots} snapshots`);
    return ms;
  };

  const samples: CollectorSamples = { changed: [], unchanged: [], imported: [], records: 0, lookups: { changed: [], unchanged: [] }, writeMs: { changed: [], unchanged: [] } };
  const measured = async (kind: 'changed' | 'unchanged'): Promise<void> => {
    samples[kind].push(await collectorRun(kind === 'changed'));
    samples.lookups[kind].push(probe.findIpo);
    samples.writeMs[kind].push(probe.writeMs);
  };
  try {
    // Warm-up: the first run (at start) wrote nothing; a few of each.
    for (let i = 0; i < warmUp; i++) {
      await collectorRun(true);
      await importRun();
      await collectorRun(false);
    }
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        await measured('changed');
        samples.imported.push(await importRun());
      } else {
        samples.imported.push(await importRun());
        await measured('changed');
      }
      await measured('unchanged');
    }
    samples.records = collector.status()[0]?.records ?? 0;
    // Every changing run wrote 1,000 snapshots, every unchanged one none.
    const expected = (warmUp + runs) * COLLECTOR_IPOS;
    if (samples.records !== expected) throw new Error(`the collector wrote ${samples.records} records, expected ${expected}`);
  } finally {
    await collector.stop();
  }
  return samples;
}

function collectorRows(label: string, s: CollectorSamples): BenchRow[] {
  const changed = median(s.changed);
  const unchanged = median(s.unchanged);
  const imported = median(s.imported);
  const ratio = changed / imported;
  const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
  const inside = (kind: 'changed' | 'unchanged'): string => {
    const write = median(s.writeMs[kind]);
    return `; per run ${median(s.lookups[kind]).toLocaleString('en-US')} store.findIpo lookups (checking the reported IPOs)${write > 0 ? `, ${write.toFixed(1)} ms in writeSourceRun` : ''}`;
  };
  return [
    { group: 'Collector', name: `one source, 1,000 IPOs, ${label}: a run where every price changed (1,000 combined snapshots)`, value: round(changed, 2), unit: 'ms', note: `${(changed / COLLECTOR_IPOS * 1000).toFixed(1)} us a snapshot; samples ${list(s.changed)}${inside('changed')}` },
    { group: 'Collector', name: `one source, 1,000 IPOs, ${label}: importDataset of the same 1,000 snapshots`, value: round(imported, 2), unit: 'ms', note: `samples ${list(s.imported)}` },
    { group: 'Collector', name: `one source, 1,000 IPOs, ${label}: collector run / import`, value: round(ratio, 2), unit: 'x', note: 'the collector\'s own cost: lock, state, checking the reports, combining, storing the reports; interleaved, medians' },
    { group: 'Collector', name: `one source, 1,000 IPOs, ${label}: a run where nothing changed (no snapshot)`, value: round(unchanged, 2), unit: 'ms', note: `${round(unchanged / imported, 2)} x the import of 1,000 snapshots; samples ${list(s.unchanged)}${inside('unchanged')}` },
  ];
}

/**
 * Runs the measurements and returns them as rows.
 *
 * @example
 * ```ts
 * const rows = await runSourcesBench({ rounds: { memory: 5, postgres: 3 } });
 * ```
 */
export async function runSourcesBench(options: SourcesBenchOptions = {}): Promise<BenchRow[]> {
  const url = options.url ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const rounds = { memory: options.rounds?.memory ?? 5, postgres: options.rounds?.postgres ?? 3 };
  const runs = { memory: options.runs?.memory ?? 15, postgres: options.runs?.postgres ?? 7 };
  const rows: BenchRow[] = [];

  const whole = pushDataset();
  const parts = batches(whole);
  const body = Buffer.from(JSON.stringify(whole));
  const bodies = parts.map((p) => Buffer.from(JSON.stringify(p)));
  // The whole dataset in one request needs more than the default 16 MiB.
  const maxBytes = Math.max(16 * 2 ** 20, 2 ** Math.ceil(Math.log2(body.length)));
  const data = { whole, parts, body, bodies };

  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const server = await spawnServer(maxBytes, url);
  try {
    rows.push(...pushRows('memory store', await comparePushes('memory', server, null, data, rounds.memory), body.length, rounds.memory, 'memory'));
    rows.push(...pushRows('PostgreSQL', await comparePushes('postgres', server, pool, data, rounds.postgres), body.length, rounds.postgres, 'postgres'));
  } finally {
    server.child.stdin!.end();
    server.lines.close();
    await new Promise((resolve) => (server.child.exitCode !== null ? resolve(null) : server.child.once('exit', resolve)));
  }

  // The collector on the memory store, then on PostgreSQL (two fresh schemas, dropped after).
  rows.push(...collectorRows('memory store', await compareCollector(memoryStore(), memoryStore(), runs.memory, 3)));
  const schemas = [`ipokit_bench_collector_${process.pid}`, `ipokit_bench_collector_import_${process.pid}`] as const;
  try {
    for (const schema of schemas) {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await migrate(pool, { schema });
    }
    // Runs come a minute or more apart, long after the data cache (1 s) has expired: every
    // lookup of a reported IPO goes to the database, as it does in a server.
    const collectorStore = postgresStore({ client: pool, schema: schemas[0], dataCacheTtlMs: 0 });
    const importStore = postgresStore({ client: pool, schema: schemas[1], dataCacheTtlMs: 0 });
    rows.push(...collectorRows('PostgreSQL (data cache off)', await compareCollector(collectorStore, importStore, runs.postgres, 2)));
    await collectorStore.close?.();
    await importStore.close?.();
  } finally {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await runSourcesBench();
  const { formatRows } = await import('./rows.js');
  console.log(formatRows(rows));
}
