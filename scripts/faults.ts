/**
 * Fault injection under load (`npm run faults`): PostgreSQL is stopped and started again,
 * over and over, while two app processes (Express and Koa, each with its own pg.Pool) serve
 * a steady load and this process keeps importing small datasets. It counts every request
 * and fails (exit 1) if any answer is other than 200 or a clean 503 ERR:UNAVAILABLE, if an
 * app process crashes or sees an unhandled rejection, if a pool keeps a connection checked
 * out afterwards, if the service does not recover by itself after every fault, or if any
 * import is found half written.
 *
 *   npm run faults -- [--cycles 10] [--mode restart|proxy] [--workers 24] [--stall-seconds 10] [--stall-rate 150] [--redis-cycles 4]
 *                     [--webhook-cycles 3] [--collector-cycles 3] [--only webhooks|collector|webhook-abuse]
 *
 * Then a stall: another session locks the IPO table for `--stall-seconds` while requests
 * keep coming at `--stall-rate` a second whatever the answers (the apps shed load beyond
 * their bound on waiting calls); it reports how long after the lock is released the first
 * request is answered 200, and fails if a request sent after the release is not. Some
 * requests ask the app's own timeout middleware to answer first (`x-fault-timeout-ms`): the
 * router must then do nothing.
 *
 * Then Redis: two more apps keep their limits on a throwaway redis-server (Express failing
 * closed, Koa failing open) under load while it is killed and started again `--redis-cycles`
 * times. The closed app must answer only 200 or a clean 503 (and some 503s while Redis is
 * down), the open one only 200, and both must recover by themselves, their limits landing in
 * the new Redis. Without redis-server on the machine this phase is skipped with one line.
 *
 * Then webhooks (docs/spec.md#webhooks): two webhook worker processes
 * (packages/storage-postgres/src/webhook-worker-app.ts, each with its own pg.Pool) deliver
 * to a local receiver with two endpoints the `ipo.created` and `gmp.snapshot` events of small
 * imports (new IPOs with a snapshot each) made here without pause, while, `--webhook-cycles` times, a worker is killed with kill -9 in
 * the middle of attempts and replaced, and the database is stopped and started again. Then
 * the imports stop and the workers drain (bounded), and it fails unless every event of every
 * import that committed reached both endpoints at least once, no delivery failed or is left
 * pending, an import refused by an outage left no event, and no worker ended but those
 * killed (an unhandled rejection ends one). `--webhook-cycles 0` skips this phase, `--only
 * webhooks` runs it alone.
 *
 * Then the collector (scripts/faults-collector.ts, docs/spec.md#sources): two collector
 * processes (scripts/faults-collector-app.ts, each with its own pg.Pool) run the same sources
 * on one schema, sources that time out, fail, answer junk or answer refused data beside a
 * marker price, while, `--collector-cycles` times, a collector is killed with kill -9 in the
 * middle of a run and replaced, and the database is stopped and started again. It fails
 * unless no snapshot or report holds the marker (nothing written from a refused answer),
 * every run whose write resolved holds its changed reports in the snapshots at its instant
 * (none lost from an accepted answer), no snapshot is at an instant no write began, runs of
 * one source never overlap across the processes (but where an outage took the lock's
 * connection), no source wrote twice at one instant, every source succeeds again by itself
 * once the outages end (and stopping the collectors records no failure), and no collector
 * ended but those killed. `--collector-cycles 0` skips
 * this phase, `--only collector` runs it alone.
 *
 * Then webhook abuse (scripts/faults-webhook-abuse.ts), on the memory store and on
 * PostgreSQL: an account with the most endpoints it may have, hanging, slow and failing, and
 * a 2,000-snapshot import, beside another account whose deliveries must stay on time while
 * memory and descriptors stay bounded. `--only webhook-abuse` runs it alone (and needs no
 * outage, so `--mode proxy` with DATABASE_URL is enough).
 *
 * `restart` (the default when PostgreSQL's binaries are installed) runs a throwaway cluster
 * and stops it for real (`pg_ctl stop`, alternating `-m immediate`, a crash, and `-m fast`);
 * `proxy` puts a TCP proxy before DATABASE_URL and cuts every connection through it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createAccount, createWebhook, importDataset, isIpokitError } from '@ipokit/core';
import { FIXTURE_NOW, IPO_IDS, seedFixture } from '@ipokit/testing';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
// The storage package's test proxy (not published), by path.
import { cuttableProxy } from '../packages/storage-postgres/src/test-proxy.js';
// The Redis package's throwaway server (not published), by path.
import { redisServerPath, throwawayRedis } from '../packages/limiter-redis/src/test-redis.js';
import type { FaultAppStats } from './faults-app.js';
import { webhookAbuse } from './faults-webhook-abuse.js';
import { collectorOutages } from './faults-collector.js';
import { memoryStore } from '@ipokit/storage-memory';
// The storage package's webhook worker process (not published), by path.
import type { WorkerAppStats } from '../packages/storage-postgres/src/webhook-worker-app.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const CYCLES = Number(args.get('cycles') ?? 10);
const WORKERS = Number(args.get('workers') ?? 24);
const SCHEMA = 'ipokit_faults';
const SNAPSHOTS_PER_IMPORT = 25;
const STALL_SECONDS = Number(args.get('stall-seconds') ?? 10);
const STALL_RATE = Number(args.get('stall-rate') ?? 150);
const REDIS_CYCLES = Number(args.get('redis-cycles') ?? 4);
const WEBHOOK_CYCLES = Number(args.get('webhook-cycles') ?? 3);
const COLLECTOR_CYCLES = Number(args.get('collector-cycles') ?? 3);
/** `--only webhooks`, `--only collector` or `--only webhook-abuse`: that phase alone. */
const ONLY = args.get('only');
/** What an app's own timeout middleware answers (scripts/faults-app.ts). */
const ANSWERED_FIRST = 'answered first by the app';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// --- the database and how to take it away ---------------------------------------------

interface Faultable {
  url: string;
  describe: string;
  down(kind: number): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

function pgBin(): string | null {
  if (!existsSync('/usr/lib/postgresql')) return null;
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (['initdb', 'pg_ctl', 'postgres'].every((t) => existsSync(join(dir, t)))) return dir;
  }
  return null;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function throwawayCluster(bin: string): Promise<Faultable> {
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, toolArgs: string[]): string =>
    execFileSync(asRoot ? 'runuser' : join(bin, tool), asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...toolArgs] : toolArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const tmp = mkdtempSync(join(tmpdir(), 'ipokit-faults-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(tmp, uid, gid);
  }
  const data = join(tmp, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const opts = `-k ${tmp} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const start = (): void => void run('pg_ctl', ['-D', data, '-l', join(tmp, 'postgres.log'), '-w', '-t', '60', '-o', opts, 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    describe: `a throwaway PostgreSQL cluster (${bin}) stopped with pg_ctl, alternately -m immediate (a crash) and -m fast`,
    down: async (kind) => void run('pg_ctl', ['-D', data, '-m', kind % 2 === 0 ? 'immediate' : 'fast', '-w', '-t', '60', 'stop']),
    up: async () => start(),
    close: async () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

async function proxiedServer(url: string): Promise<Faultable> {
  const proxy = await cuttableProxy(new URL(url));
  const via = new URL(url);
  via.host = `127.0.0.1:${proxy.port}`;
  return { url: via.toString(), describe: `DATABASE_URL through a TCP proxy that cuts every connection and refuses new ones`, down: proxy.cut, up: proxy.restore, close: proxy.close };
}

// --- the apps and the load --------------------------------------------------------------

interface App {
  name: string;
  child: ChildProcess;
  origin: string;
  exited: boolean;
}

async function startApp(framework: 'express' | 'koa', url: string, env: NodeJS.ProcessEnv = {}, name: string = framework): Promise<App> {
  const file = fileURLToPath(new URL('./faults-app.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file, framework], {
    env: { ...process.env, ...env, DATABASE_URL: url, IPOKIT_SCHEMA: SCHEMA, IPOKIT_NOW: String(FIXTURE_NOW) },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${name} app exited with ${code}`)));
  });
  const app: App = { name, child, origin: `http://127.0.0.1:${port}`, exited: false };
  child.once('exit', () => (app.exited = true));
  return app;
}

function statsOf(app: App): Promise<FaultAppStats> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${app.name} did not answer stats`)), 5_000);
    app.child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m as FaultAppStats);
    });
    app.child.send('stats');
  });
}

interface Tally {
  ok: number;
  unavailable: number;
  /** 503s of the app's own timeout middleware, which answered before the router. */
  answeredFirst: number;
  /** Anything else: a defect. */
  bad: Map<string, number>;
}

const LEAK = /127\.0\.0\.1|localhost|SELECT|INSERT|ECONN|stack|at \w+ \(|ipk_/;

async function send(origin: string, path: string, key: string, tally: Tally, extra: Record<string, string> = {}): Promise<number> {
  let status: number;
  let text: string;
  try {
    const res = await fetch(`${origin}${path}`, { headers: { 'x-api-key': key, ...extra }, signal: AbortSignal.timeout(10_000) });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const what = `no answer (${(err as Error).name})`;
    tally.bad.set(what, (tally.bad.get(what) ?? 0) + 1);
    return 0;
  }
  if (status === 200) tally.ok++;
  else if (status === 503 && text === ANSWERED_FIRST) tally.answeredFirst++;
  else if (status === 503 && JSON.parse(text).code === 'ERR:UNAVAILABLE' && !LEAK.test(text)) tally.unavailable++;
  else {
    const what = `${status} ${text.slice(0, 120)}`;
    tally.bad.set(what, (tally.bad.get(what) ?? 0) + 1);
  }
  return status;
}

// --- the run ------------------------------------------------------------------------------

async function main(): Promise<void> {
  const bin = pgBin();
  const mode = args.get('mode') ?? (bin !== null ? 'restart' : 'proxy');
  if (mode === 'restart' && bin === null) throw new Error('--mode restart needs PostgreSQL installed (/usr/lib/postgresql/*/bin)');
  if (mode === 'proxy' && !process.env.DATABASE_URL) throw new Error('--mode proxy needs DATABASE_URL');
  if (ONLY !== undefined && ONLY !== 'webhooks' && ONLY !== 'collector' && ONLY !== 'webhook-abuse') {
    throw new Error(`--only takes webhooks, collector or webhook-abuse, got ${JSON.stringify(ONLY)}`);
  }
  const db = mode === 'restart' ? await throwawayCluster(bin!) : await proxiedServer(process.env.DATABASE_URL!);
  const problems: string[] = [];
  const lines: string[] = [];
  try {
    if (ONLY === undefined) {
      console.log(`faults: ${db.describe}; ${CYCLES} cycles, ${WORKERS} concurrent clients over Express and Koa`);
      const service = await serviceOutages(db, mode);
      problems.push(...service.problems);
      lines.push(...service.lines);
    } else console.log(`faults: ${db.describe}; the ${ONLY} phase only`);
    if (ONLY === undefined || ONLY === 'webhooks') {
      if (WEBHOOK_CYCLES > 0) {
        const webhooks = await webhookOutages(db, mode);
        problems.push(...webhooks.problems);
        lines.push(...webhooks.lines);
      } else lines.push('webhooks:           skipped (--webhook-cycles 0)');
    }
    if (ONLY === undefined || ONLY === 'collector') {
      if (COLLECTOR_CYCLES > 0) {
        const collector = await collectorOutages(db, { cycles: COLLECTOR_CYCLES, mode });
        problems.push(...collector.problems);
        lines.push(...collector.lines);
      } else lines.push('collector:          skipped (--collector-cycles 0)');
    }
    if (ONLY === undefined || ONLY === 'webhook-abuse') {
      for (const target of ['memory', 'postgres'] as const) {
        console.log(`webhook abuse: on ${target}`);
        const abuse = await webhookAbuse(target === 'memory' ? { name: 'memory', store: memoryStore(), close: async () => undefined } : await abusePostgres(db.url));
        problems.push(...abuse.problems);
        lines.push(...abuse.lines);
      }
    }
  } finally {
    await db.close();
  }

  console.log('');
  for (const line of lines) console.log(line);
  if (problems.length > 0) {
    console.log(`\nFAILED:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    process.exitCode = 1;
  } else {
    const held = [
      ...(ONLY === undefined ? ['no crash, no unhandled rejection, no leaked connection, no answer but 200 or a clean 503, nothing half written or lost'] : []),
      ...(WEBHOOK_CYCLES > 0 && (ONLY === undefined || ONLY === 'webhooks') ? ['every event of a committed import delivered at least once, none failed, no worker crashed'] : []),
      ...(COLLECTOR_CYCLES > 0 && (ONLY === undefined || ONLY === 'collector')
        ? ['no snapshot written from a refused answer and none lost from an accepted one, no source run twice at once, every source recovered, no collector crashed']
        : []),
      ...(ONLY === undefined || ONLY === 'webhook-abuse' ? ["another account's deliveries on time beside an abusive one, memory and descriptors bounded"] : []),
    ];
    console.log(`result:             ${held.join('; ')}`);
  }
}

/** The abuse phase's PostgreSQL store: a schema of its own on the phase's server. */
async function abusePostgres(url: string): Promise<{ name: string; store: ReturnType<typeof postgresStore>; close(): Promise<void> }> {
  const schema = 'ipokit_faults_abuse';
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await migrate(pool, { schema });
  const store = postgresStore({ client: pool, schema });
  return {
    name: 'postgres',
    store,
    close: async () => {
      await store.close?.();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    },
  };
}

/**
 * The first phases: two apps under load while the database is stopped and started again
 * `--cycles` times, then the stall, then the Redis outages. Resolves to what went wrong
 * and the lines of the summary.
 */
async function serviceOutages(db: Faultable, mode: string): Promise<{ problems: string[]; lines: string[] }> {
  const admin = new pg.Pool({ connectionString: db.url, max: 2, connectionTimeoutMillis: 1_000 });
  admin.on('error', () => {});
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(admin, { schema: SCHEMA });
  const seeded = await seedFixture(postgresStore({ client: admin, schema: SCHEMA }));
  const apps = [await startApp('express', db.url), await startApp('koa', db.url)];
  const paths: Array<[string, string]> = [
    ['/ipos/ORBIT', seeded.keys.paid],
    ['/ipos?status=listed&limit=10', seeded.keys.paid],
    ['/ipos/ORBIT/gmp?interval=hourly', seeded.keys.proGmp],
  ];

  const tally: Tally = { ok: 0, unavailable: 0, answeredFirst: 0, bad: new Map() };
  let running = true;
  let sent = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const app = apps[(w + i) % apps.length]!;
      const [path, key] = paths[(w + i) % paths.length]!;
      sent++;
      // every fifth request lets the app's timeout middleware answer after 1.5 s
      const status = await send(app.origin, path, key, tally, i % 5 === 0 ? { 'x-fault-timeout-ms': '1500' } : {});
      if (status === 503) await sleep(20); // a client backing off a little, as real ones do
    }
  };

  // Imports while the faults happen: each adds its own snapshots; none may be half written.
  const imports: Array<{ n: number; ok: boolean }> = [];
  const importer = async (): Promise<void> => {
    const store = postgresStore({ client: admin, schema: SCHEMA });
    for (let n = 0; running; n++) {
      const base = Date.UTC(2030, 0, 1) + n * SNAPSHOTS_PER_IMPORT * 60_000;
      const gmp = Array.from({ length: SNAPSHOTS_PER_IMPORT }, (_, i) => ({
        ipoId: IPO_IDS.orbit,
        timestamp: new Date(base + i * 60_000).toISOString(),
        sources: [{ name: 'faults', gmpPrice: n % 100 }],
      }));
      try {
        await importDataset(store, { gmp });
        imports.push({ n, ok: true });
      } catch {
        imports.push({ n, ok: false });
        await sleep(50);
      }
    }
  };

  const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
  const importing = importer();
  const recoveries: number[] = [];
  let stall: Stall | undefined;
  const per: Array<{ ok: number; unavailable: number }> = [];
  try {
    await sleep(1_000);
    for (let c = 0; c < CYCLES; c++) {
      const before = { ok: tally.ok, unavailable: tally.unavailable };
      await db.down(c);
      await sleep(500 + Math.round(Math.random() * 1_500));
      await db.up();
      // Recovered when every app answers every path 200 again, without any restart.
      const t0 = performance.now();
      for (;;) {
        const probe: Tally = { ok: 0, unavailable: 0, answeredFirst: 0, bad: tally.bad };
        for (const app of apps) for (const [path, key] of paths) await send(app.origin, path, key, probe);
        if (probe.ok === apps.length * paths.length) break;
        if (performance.now() - t0 > 30_000) throw new Error(`cycle ${c + 1}: not recovered 30 s after the database came back`);
        await sleep(50);
      }
      recoveries.push(Math.round(performance.now() - t0));
      await sleep(1_000 + Math.round(Math.random() * 1_000));
      per.push({ ok: tally.ok - before.ok, unavailable: tally.unavailable - before.unavailable });
      console.log(`cycle ${c + 1}/${CYCLES}: ${per.at(-1)!.ok} x 200, ${per.at(-1)!.unavailable} x 503, recovered ${recoveries.at(-1)} ms after restart`);
    }
    stall = await stalled(db.url, apps, paths, tally);
    console.log(
      `stall: ${stall.sent} requests at ${STALL_RATE}/s while the IPO table was locked for ${STALL_SECONDS} s; ` +
        `first 200 ${stall.firstOkMs} ms after the release; ${stall.lateFailures} requests sent after it not answered 200`,
    );
  } finally {
    running = false;
    await Promise.all(workers);
    await importing;
  }
  const redis = await redisOutages(db.url, paths);

  // Quiet now: nothing may be left checked out, nothing unhandled, nobody crashed.
  await sleep(500);
  const problems: string[] = [];
  for (const app of apps) {
    if (app.exited) {
      problems.push(`${app.name} app crashed`);
      continue;
    }
    const s = await statsOf(app);
    console.log(`${app.name}: ${JSON.stringify(s)}`);
    if (s.unhandledRejections > 0) problems.push(`${app.name}: ${s.unhandledRejections} unhandled rejections`);
    if (s.uncaughtExceptions > 0) problems.push(`${app.name}: ${s.uncaughtExceptions} uncaught exceptions`);
    if (s.poolTotal - s.poolIdle > 0 || s.poolWaiting > 0) problems.push(`${app.name}: ${s.poolTotal - s.poolIdle} pool connections still checked out, ${s.poolWaiting} waiting`);
  }
  for (const [what, n] of tally.bad) problems.push(`${n} x ${what}`);
  problems.push(...(redis?.problems ?? []));
  if (stall !== undefined && stall.lateFailures > 0) problems.push(`${stall.lateFailures} requests sent after the stall ended were not answered 200`);

  const counts = await admin.query<{ n: string; c: string }>(
    `SELECT ((ts - $1) / ($2 * 60000))::text AS n, count(*)::text AS c FROM ${SCHEMA}.snapshots WHERE ts >= $1 GROUP BY 1`,
    [Date.UTC(2030, 0, 1), SNAPSHOTS_PER_IMPORT],
  );
  const stored = new Map(counts.rows.map((r) => [Number(r.n), Number(r.c)]));
  let half = 0;
  let lost = 0;
  for (const { n, ok } of imports) {
    const c = stored.get(n) ?? 0;
    if (c !== 0 && c !== SNAPSHOTS_PER_IMPORT) half++;
    if (ok && c !== SNAPSHOTS_PER_IMPORT) lost++;
  }
  if (half > 0) problems.push(`${half} imports half written`);
  if (lost > 0) problems.push(`${lost} imports reported done but not stored`);

  for (const app of apps) app.child.kill('SIGTERM');
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
  await admin.end();

  const sorted = [...recoveries].sort((a, b) => a - b);
  const lines = [
    `faults injected:    ${CYCLES} (${mode})`,
    `requests:           ${sent + (stall?.sent ?? 0)} sent: ${tally.ok} x 200, ${tally.unavailable} x 503 ERR:UNAVAILABLE, ` +
      `${tally.answeredFirst} x 503 by the app's own timeout first, ${[...tally.bad.values()].reduce((a, b) => a + b, 0)} other`,
  ];
  if (stall !== undefined) lines.push(`stall:              first 200 ${stall.firstOkMs} ms after the database answered again; ${stall.lateFailures} requests sent after it not answered 200`);
  lines.push(`recovery:           every cycle; median ${sorted[sorted.length >> 1]} ms, worst ${sorted.at(-1)} ms after the database was back`);
  lines.push(redis === null ? 'redis:              skipped (no redis-server on this machine)' : `redis:              ${redis.summary}`);
  lines.push(`imports:            ${imports.length} (${imports.filter((i) => i.ok).length} done, ${imports.filter((i) => !i.ok).length} refused by the outage); half written: ${half}; done but lost: ${lost}`);
  return { problems, lines };
}

interface RedisReport {
  summary: string;
  problems: string[];
}

/**
 * The Redis phase: two apps with their limits on a throwaway redis-server (Express failing
 * closed, Koa failing open), under load, while the server is killed and started again.
 * Null when this machine has no redis-server.
 */
async function redisOutages(dbUrl: string, paths: Array<[string, string]>): Promise<RedisReport | null> {
  if (redisServerPath() === null) return null;
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let server = await throwawayRedis(port);
  const closed = await startApp('express', dbUrl, { IPOKIT_REDIS_URL: url }, 'express+redis (fail closed)');
  const open = await startApp('koa', dbUrl, { IPOKIT_REDIS_URL: url, IPOKIT_LIMITER_FAIL_OPEN: '1' }, 'koa+redis (fail open)');
  const apps = [closed, open];
  const tallies = new Map(apps.map((app) => [app, { ok: 0, unavailable: 0, answeredFirst: 0, bad: new Map<string, number>() } as Tally]));
  const problems: string[] = [];
  const probe = new Redis(url, { lazyConnect: true, enableOfflineQueue: false });
  probe.on('error', () => {});
  let running = true;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const app = apps[(w + i) % apps.length]!;
      const [path, key] = paths[(w + i) % paths.length]!;
      const status = await send(app.origin, path, key, tallies.get(app)!);
      if (status === 503) await sleep(20);
    }
  };
  const workers = Array.from({ length: Math.max(2, WORKERS >> 1) }, (_, w) => worker(w));
  const recoveries: number[] = [];
  const refusedWhileDown: number[] = [];
  try {
    await sleep(1_000);
    for (let c = 0; c < REDIS_CYCLES; c++) {
      const before = tallies.get(closed)!.unavailable;
      await server.stop(); // SIGKILL: a crash, nothing saved
      // Longer than two deadlines (storeTimeoutMs, 2 s): each worker alternates the apps and a
      // request waits at most a deadline, so every worker sends the fail-closed app a request
      // that waits out its deadline while Redis is down. (A shorter outage can end before the
      // deadline of every request the fail-closed app has under way: those are then admitted.)
      await sleep(4_500 + Math.round(Math.random() * 1_000));
      server = await throwawayRedis(port);
      // Recovered when both apps answer every path 200 and the limits are in the new Redis.
      const t0 = performance.now();
      for (;;) {
        const check: Tally = { ok: 0, unavailable: 0, answeredFirst: 0, bad: new Map() };
        for (const app of apps) for (const [path, key] of paths) await send(app.origin, path, key, check);
        if (probe.status !== 'ready') await probe.connect().catch(() => {});
        const windows = probe.status === 'ready' ? await probe.keys('ipokit:rl:*').catch(() => []) : [];
        if (check.ok === apps.length * paths.length && windows.length > 0) break;
        if (performance.now() - t0 > 30_000) throw new Error(`redis cycle ${c + 1}: not recovered 30 s after Redis came back`);
        await sleep(50);
      }
      recoveries.push(Math.round(performance.now() - t0));
      // The 503s of the outage: a request waits up to its deadline (2 s), so some of those
      // sent while Redis was down are answered after it came back.
      refusedWhileDown.push(tallies.get(closed)!.unavailable - before);
      console.log(`redis cycle ${c + 1}/${REDIS_CYCLES}: fail-closed app ${refusedWhileDown.at(-1)} x 503 for the outage; recovered ${recoveries.at(-1)} ms after restart`);
      await sleep(1_000);
    }
  } finally {
    running = false;
    await Promise.all(workers);
    probe.disconnect();
  }
  await sleep(500);
  for (const app of apps) {
    const t = tallies.get(app)!;
    for (const [what, n] of t.bad) problems.push(`${app.name}: ${n} x ${what}`);
    if (app.exited) problems.push(`${app.name} app crashed`);
    else {
      const s = await statsOf(app);
      if (s.unhandledRejections > 0 || s.uncaughtExceptions > 0) problems.push(`${app.name}: ${s.unhandledRejections} unhandled rejections, ${s.uncaughtExceptions} uncaught exceptions`);
    }
  }
  if (tallies.get(open)!.unavailable > 0) problems.push(`${open.name}: ${tallies.get(open)!.unavailable} x 503 (it must admit while Redis is down)`);
  if (refusedWhileDown.some((n) => n === 0)) problems.push(`${closed.name}: no 503 during an outage (${refusedWhileDown.join(', ')}): the outage did not reach it`);
  for (const app of apps) app.child.kill('SIGTERM');
  await server.stop();
  const c = tallies.get(closed)!;
  const o = tallies.get(open)!;
  const sorted = [...recoveries].sort((a, b) => a - b);
  return {
    summary:
      `${REDIS_CYCLES} kills of redis-server; fail closed ${c.ok} x 200, ${c.unavailable} x 503; fail open ${o.ok} x 200, ${o.unavailable} x 503; ` +
      `recovered every time, median ${sorted[sorted.length >> 1]} ms, worst ${sorted.at(-1)} ms`,
    problems,
  };
}

interface Stall {
  sent: number;
  /** From the lock's release to the first 200 answered. */
  firstOkMs: number;
  /** Requests sent after the release whose answer was not 200: a backlog of stale calls. */
  lateFailures: number;
}

/**
 * Locks the IPO table from another session while requests arrive at a steady rate (sent
 * whatever the answers, as independent clients do), then releases it.
 */
async function stalled(url: string, apps: App[], paths: Array<[string, string]>, tally: Tally): Promise<Stall> {
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${SCHEMA}.ipos IN ACCESS EXCLUSIVE MODE`);
  let sent = 0;
  let released = Infinity;
  let firstOk = Infinity;
  let lateFailures = 0;
  const pending: Array<Promise<unknown>> = [];
  const fire = (): void => {
    const app = apps[sent % apps.length]!;
    const [path, key] = paths[sent % paths.length]!;
    sent++;
    const after = performance.now() >= released;
    pending.push(
      send(app.origin, path, key, tally).then((status) => {
        if (status === 200 && performance.now() >= released) firstOk = Math.min(firstOk, performance.now());
        if (after && status !== 200) lateFailures++;
      }),
    );
  };
  const timer = setInterval(fire, 1000 / STALL_RATE);
  await sleep(STALL_SECONDS * 1000);
  await locker.query('COMMIT');
  released = performance.now();
  await sleep(1_000);
  clearInterval(timer);
  await Promise.all(pending);
  await locker.end();
  return { sent, firstOkMs: Math.round(firstOk - released), lateFailures };
}

// --- webhooks -------------------------------------------------------------------------------

const WH_SCHEMA = 'ipokit_faults_webhooks';
const WORKER_APP = fileURLToPath(new URL('../packages/storage-postgres/src/webhook-worker-app.ts', import.meta.url));
/** New IPOs per import of the webhooks phase: each one an `ipo.created` event. */
const IPOS_PER_IMPORT = 5;
/** The events of each IPO an import of the webhooks phase makes: its creation, and its one snapshot's. */
const WH_EVENTS = ['ipo.created', 'gmp.snapshot'] as const;
/** The workers' lease and timeout: short, so that the attempts of a killed worker are made again soon. */
const WH_LEASE_MS = 4_000;
const WH_TIMEOUT_MS = 2_000;
/** The longest wait, once the imports stop, for every delivery to be settled. */
const DRAIN_LIMIT_MS = 60_000;

/** A webhook worker process (packages/storage-postgres/src/webhook-worker-app.ts). */
interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Killed on purpose (kill -9): its end is no crash. */
  killed: boolean;
  /** Stopped at the end (SIGTERM): it must exit 0. */
  stopping: boolean;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts a worker process on the phase's schema; any end of it that this script did not
 * ask for (a crash, an unhandled rejection: the process exits 70) is a problem.
 */
async function startWorker(url: string, name: string, problems: string[]): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', WORKER_APP], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      IPOKIT_SCHEMA: WH_SCHEMA,
      IPOKIT_WORKER_NAME: name,
      IPOKIT_LEASE_MS: String(WH_LEASE_MS),
      IPOKIT_TIMEOUT_MS: String(WH_TIMEOUT_MS),
      IPOKIT_POLL_MS: '250',
      // the outages make many store errors on purpose: counted (stats), not printed
      IPOKIT_QUIET_ERRORS: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const worker: WorkerProcess = { name, child, killed: false, stopping: false, exit };
  void exit.then(({ code, signal }) => {
    if (!worker.killed && !worker.stopping) problems.push(`webhook worker ${name} ended by itself (${code === null ? signal : `exit ${code}`})`);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
      exit.then(({ code, signal }) => Promise.reject(new Error(`webhook worker ${name} exited (${code ?? signal}) before it was ready`))),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`webhook worker ${name} not ready after 30 s`)), 30_000))),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return worker;
}

function workerStats(worker: WorkerProcess): Promise<WorkerAppStats> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook worker ${worker.name} did not answer stats`)), 5_000);
    worker.child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m as WorkerAppStats);
    });
    worker.child.send('stats');
  });
}

/** The endpoints' receiver: counts what reached it. */
interface WebhookReceiver {
  port: number;
  /** Requests per endpoint path and `webhook-id` (the event's id). */
  seen: Map<string, number>;
  /** The endpoint paths each event reached, by its type and IPO (read from the body: `ipo.created whf0x1`). */
  reached: Map<string, Set<string>>;
  requests: number;
  /** Requests read and not yet answered, per worker (`x-ipokit-test-worker`). */
  inFlight: Map<string, number>;
  close(): Promise<void>;
}

async function webhookReceiver(problems: string[]): Promise<WebhookReceiver> {
  const r: WebhookReceiver = { port: 0, seen: new Map(), reached: new Map(), requests: 0, inFlight: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const worker = String(req.headers['x-ipokit-test-worker']);
    let closed = false;
    r.inFlight.set(worker, (r.inFlight.get(worker) ?? 0) + 1);
    res.once('close', () => {
      closed = true;
      r.inFlight.set(worker, (r.inFlight.get(worker) ?? 1) - 1);
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests++;
      const path = req.url ?? '';
      const key = `${path} ${String(req.headers['webhook-id'])}`;
      r.seen.set(key, (r.seen.get(key) ?? 0) + 1);
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id?: string; ipoId?: string } };
        const what = `${event.type} ${event.data.id ?? event.data.ipoId}`;
        const paths = r.reached.get(what) ?? new Set<string>();
        paths.add(path);
        r.reached.set(what, paths);
      } catch {
        problems.push(`the receiver got a body that is not an event: ${Buffer.concat(chunks).toString('utf8').slice(0, 80)}`);
      }
      // Answered after a little while, as a real endpoint is: attempts stay in flight long
      // enough for a kill to land in the middle of some.
      setTimeout(() => closed || res.writeHead(204).end(), 10 + Math.random() * 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return r;
}

/**
 * The webhooks phase: two worker processes deliver the events of small imports (new IPOs
 * with a snapshot each, so `ipo.created`, and `gmp.snapshot` fanned out by the workers'
 * claims) made here without pause, to a local receiver with two endpoints, while
 * a worker is killed (kill -9, in the middle of attempts) and replaced, and the database is
 * stopped and started again, `--webhook-cycles` times each. Then the imports stop, the
 * workers drain, and every event of every import that committed must have reached both
 * endpoints at least once, no delivery may have failed, nothing may be left pending, and no
 * worker may have ended but those killed.
 */
async function webhookOutages(db: Faultable, mode: string): Promise<{ problems: string[]; lines: string[] }> {
  const began = performance.now();
  const problems: string[] = [];
  const pool = new pg.Pool({ connectionString: db.url, max: 4, connectionTimeoutMillis: 1_000 });
  pool.on('error', () => {});
  await pool.query(`DROP SCHEMA IF EXISTS ${WH_SCHEMA} CASCADE`);
  await migrate(pool, { schema: WH_SCHEMA });
  // (no data cache: it would hold a connection for LISTEN, and this process reads no IPO)
  const store = postgresStore({ client: pool, schema: WH_SCHEMA, dataCacheTtlMs: 0 });
  const receiver = await webhookReceiver(problems);
  const account = await createAccount(store, { name: 'Faults', plan: 'pro', gmpAddon: true });
  const paths = new Map<string, string>();
  for (const path of ['/hooks/a', '/hooks/b']) {
    const { id } = await createWebhook(store, { accountId: account.id, url: `http://127.0.0.1:${receiver.port}${path}`, events: [...WH_EVENTS] }, { webhookAllowedNetworks: ['127.0.0.0/8', '::1/128'] });
    paths.set(id, path);
  }
  let named = 0;
  const workers: WorkerProcess[] = [];
  const live = (): WorkerProcess[] => workers.filter((w) => !w.killed && !w.stopping);
  for (let i = 0; i < 2; i++) workers.push(await startWorker(db.url, `w${++named}`, problems));
  console.log(`webhooks: 2 worker processes (lease ${WH_LEASE_MS} ms, timeout ${WH_TIMEOUT_MS} ms), 2 endpoints, ${IPOS_PER_IMPORT} new IPOs per import; ${WEBHOOK_CYCLES} cycles of kill -9 and database stop`);

  // Imports all along: those refused by an outage must have committed nothing.
  const imports: Array<{ ids: string[]; ok: boolean }> = [];
  const importErrors = new Map<string, number>();
  let importing = true;
  const importer = (async () => {
    for (let n = 0; importing; n++) {
      const ids = Array.from({ length: IPOS_PER_IMPORT }, (_, i) => `whf${n}x${i}`);
      try {
        await importDataset(store, {
          ipos: ids.map((id, i) => ({ id, name: `Faults ${id}`, slug: `whf-${n}-${i}`, type: 'EQ' })),
          gmp: ids.map((ipoId) => ({ ipoId, timestamp: '2026-11-20T10:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 40 }] })),
        });
        imports.push({ ids, ok: true });
      } catch (err) {
        imports.push({ ids, ok: false });
        // (an outage is ERR:UNAVAILABLE; anything else means the phase is broken)
        if (!isIpokitError(err, 'ERR:UNAVAILABLE')) importErrors.set(String(err), (importErrors.get(String(err)) ?? 0) + 1);
      }
      await sleep(100);
    }
  })();

  let kills = 0;
  let midDelivery = 0;
  let stops = 0;
  const downFor: number[] = [];
  try {
    await sleep(1_500);
    for (let c = 0; c < WEBHOOK_CYCLES; c++) {
      // (a) kill -9 a worker, in the middle of attempts if it has some within 3 s, and start another
      const victims = live();
      const victim = victims[c % victims.length]!;
      const waitFrom = performance.now();
      while ((receiver.inFlight.get(victim.name) ?? 0) === 0 && performance.now() - waitFrom < 3_000) await sleep(2);
      const inFlight = receiver.inFlight.get(victim.name) ?? 0;
      victim.killed = true;
      victim.child.kill('SIGKILL');
      await victim.exit;
      kills++;
      if (inFlight > 0) midDelivery++;
      const replacement = await startWorker(db.url, `w${++named}`, problems);
      workers.push(replacement);
      await sleep(1_500 + Math.round(Math.random() * 1_000));
      // (b) the database stopped, and started again
      const downAt = performance.now();
      await db.down(c);
      stops++;
      await sleep(1_000 + Math.round(Math.random() * 1_000));
      await db.up();
      for (;;) {
        if (await pool.query('SELECT 1').then(() => true, () => false)) break;
        if (performance.now() - downAt > 60_000) throw new Error(`webhooks cycle ${c + 1}: the database does not answer 60 s after it was started again`);
        await sleep(50);
      }
      downFor.push(Math.round(performance.now() - downAt));
      console.log(
        `webhooks cycle ${c + 1}/${WEBHOOK_CYCLES}: killed ${victim.name} with ${inFlight} requests in flight, started ${replacement.name}; ` +
          `database down ${downFor.at(-1)} ms; ${imports.length} imports, ${receiver.requests} requests received so far`,
      );
      await sleep(1_500 + Math.round(Math.random() * 1_000));
    }
  } finally {
    importing = false;
    await importer;
  }

  // Drain: every delivery settled, within a bound.
  const stoppedImporting = performance.now();
  let pending = -1;
  for (;;) {
    // (deliveries pending, and gmp.snapshot events not fanned out yet)
    pending = await pool.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM ${WH_SCHEMA}.deliveries WHERE state = 'pending') + (SELECT count(*) FROM ${WH_SCHEMA}.snapshot_changes))::int AS n`,
    ).then(
      (r) => r.rows[0]!.n,
      () => -1,
    );
    if (pending === 0 || performance.now() - stoppedImporting > DRAIN_LIMIT_MS) break;
    await sleep(200);
  }
  const drainMs = Math.round(performance.now() - stoppedImporting);
  if (pending !== 0) problems.push(`webhooks: ${pending} deliveries still pending ${DRAIN_LIMIT_MS / 1000} s after the imports stopped`);

  // The workers left: their counts, then a clean stop (SIGTERM drains; exit 0).
  const stopping = live();
  const stats = await Promise.all(stopping.map((w) => workerStats(w).catch(() => null)));
  const lastStats = { storeErrors: stats.reduce((n, s) => n + (s?.storeErrors ?? 0), 0), attempts: stats.reduce((n, s) => n + (s?.attempts ?? 0), 0) };
  for (const w of stopping) {
    w.stopping = true;
    w.child.kill('SIGTERM');
  }
  for (const w of stopping) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([w.exit, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 20_000)))]);
    clearTimeout(timer);
    if (ended === null) {
      w.child.kill('SIGKILL');
      problems.push(`webhook worker ${w.name} did not stop within 20 s of SIGTERM`);
    } else if (ended.code !== 0) problems.push(`webhook worker ${w.name} exited ${ended.code ?? ended.signal} on SIGTERM`);
  }

  // What was stored, and what reached the receiver.
  const stored = new Set((await pool.query<{ id: string }>(`SELECT id FROM ${WH_SCHEMA}.ipos`)).rows.map((r) => r.id));
  const rows = (
    await pool.query<{ event: string; what: string; webhook: string; state: string }>(
      `SELECT e.id AS event, e.type || ' ' || coalesce(e.body::json -> 'data' ->> 'id', e.body::json -> 'data' ->> 'ipoId') AS what, d.webhook_id AS webhook, d.state
       FROM ${WH_SCHEMA}.deliveries AS d JOIN ${WH_SCHEMA}.events AS e ON e.id = d.event_id`,
    )
  ).rows;
  const events = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${WH_SCHEMA}.events`)).rows[0]!.n;
  const byEvent = new Map<string, typeof rows>();
  for (const r of rows) byEvent.set(r.what, [...(byEvent.get(r.what) ?? []), r]);
  const eventsOf = (id: string): string[] => WH_EVENTS.map((type) => `${type} ${id}`);
  const committed: string[] = [];
  let done = 0;
  let refused = 0;
  let ambiguous = 0;
  let half = 0;
  let lost = 0;
  let leftBehind = 0;
  for (const imp of imports) {
    const n = imp.ids.filter((id) => stored.has(id)).length;
    if (n !== 0 && n !== imp.ids.length) half++;
    if (imp.ok) {
      done++;
      if (n !== imp.ids.length) lost++;
      committed.push(...imp.ids);
    } else if (n === imp.ids.length) {
      // refused, but committed all the same (the connection was lost at COMMIT): its events count
      ambiguous++;
      committed.push(...imp.ids);
    } else {
      refused++;
      for (const what of imp.ids.flatMap(eventsOf)) if (byEvent.has(what) || receiver.reached.has(what)) leftBehind++;
    }
  }
  let unrecorded = 0;
  let unreceived = 0;
  for (const what of committed.flatMap(eventsOf)) {
    const ds = byEvent.get(what) ?? [];
    if (new Set(ds.map((d) => d.webhook)).size !== paths.size) unrecorded++;
    if ((receiver.reached.get(what)?.size ?? 0) !== paths.size) unreceived++;
  }
  const rowsUnreceived = rows.filter((r) => !receiver.seen.has(`${paths.get(r.webhook)} ${r.event}`)).length;
  const states = new Map<string, number>();
  for (const r of rows) states.set(r.state, (states.get(r.state) ?? 0) + 1);
  const duplicates = receiver.requests - receiver.seen.size;

  if (done === 0) problems.push('webhooks: no import committed, so nothing was tested');
  for (const [what, n] of importErrors) problems.push(`webhooks: ${n} imports failed otherwise than by the outage: ${what}`);
  if (half > 0) problems.push(`webhooks: ${half} imports half written`);
  if (lost > 0) problems.push(`webhooks: ${lost} imports reported done but not stored`);
  if (leftBehind > 0) problems.push(`webhooks: ${leftBehind} events of imports refused by the outage were recorded or sent`);
  if (unrecorded > 0) problems.push(`webhooks: ${unrecorded} events of committed imports lack a delivery per endpoint`);
  if (unreceived > 0) problems.push(`webhooks: ${unreceived} events of committed imports did not reach every endpoint`);
  if (rowsUnreceived > 0) problems.push(`webhooks: ${rowsUnreceived} deliveries whose (endpoint, webhook-id) never reached the receiver`);
  if ((states.get('failed') ?? 0) > 0) problems.push(`webhooks: ${states.get('failed')} deliveries failed`);
  if (rows.length !== committed.length * WH_EVENTS.length * paths.size) {
    problems.push(`webhooks: ${rows.length} deliveries for ${committed.length} committed IPOs, ${WH_EVENTS.length} events each and ${paths.size} endpoints`);
  }

  await receiver.close();
  await pool.query(`DROP SCHEMA IF EXISTS ${WH_SCHEMA} CASCADE`).catch(() => {});
  await pool.end();
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  const sortedDown = [...downFor].sort((a, b) => a - b);
  return {
    problems,
    lines: [
      `webhooks:           ${seconds} s; ${kills} workers killed with kill -9 (${midDelivery} in the middle of attempts) and replaced; ` +
        `${stops} database stops (${mode}), down a median ${sortedDown[sortedDown.length >> 1] ?? 0} ms`,
      `webhook imports:    ${imports.length} (${done} done, ${refused} refused by the outage, ${ambiguous} refused but committed); half written: ${half}; done but lost: ${lost}; ` +
        `events of refused imports recorded or sent: ${leftBehind}`,
      `webhook deliveries: ${events} events, ${rows.length} deliveries (${[...states].map(([state, n]) => `${n} ${state}`).join(', ')}); ` +
        `${receiver.requests} requests received, ${duplicates} duplicates; committed events not received: ${unreceived}; ` +
        `drained ${drainMs} ms after the imports stopped; the last workers reported ${lastStats.storeErrors} store errors and made ${lastStats.attempts} attempts`,
    ],
  };
}

await main();
