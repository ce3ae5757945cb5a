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
 * `restart` (the default when PostgreSQL's binaries are installed) runs a throwaway cluster
 * and stops it for real (`pg_ctl stop`, alternating `-m immediate`, a crash, and `-m fast`);
 * `proxy` puts a TCP proxy before DATABASE_URL and cuts every connection through it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { importDataset } from '@ipokit/core';
import { FIXTURE_NOW, IPO_IDS, seedFixture } from '@ipokit/core/testing';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
// The storage package's test proxy (not published), by path.
import { cuttableProxy } from '../packages/storage-postgres/src/test-proxy.js';
// The Redis package's throwaway server (not published), by path.
import { redisServerPath, throwawayRedis } from '../packages/limiter-redis/src/test-redis.js';
import type { FaultAppStats } from './faults-app.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const CYCLES = Number(args.get('cycles') ?? 10);
const WORKERS = Number(args.get('workers') ?? 24);
const SCHEMA = 'ipokit_faults';
const SNAPSHOTS_PER_IMPORT = 25;
const STALL_SECONDS = Number(args.get('stall-seconds') ?? 10);
const STALL_RATE = Number(args.get('stall-rate') ?? 150);
const REDIS_CYCLES = Number(args.get('redis-cycles') ?? 4);
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
  const db = mode === 'restart' ? await throwawayCluster(bin!) : await proxiedServer(process.env.DATABASE_URL!);
  console.log(`faults: ${db.describe}; ${CYCLES} cycles, ${WORKERS} concurrent clients over Express and Koa`);

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
  await db.close();

  const sorted = [...recoveries].sort((a, b) => a - b);
  console.log('');
  console.log(`faults injected:    ${CYCLES} (${mode})`);
  console.log(
    `requests:           ${sent + (stall?.sent ?? 0)} sent: ${tally.ok} x 200, ${tally.unavailable} x 503 ERR:UNAVAILABLE, ` +
      `${tally.answeredFirst} x 503 by the app's own timeout first, ${[...tally.bad.values()].reduce((a, b) => a + b, 0)} other`,
  );
  if (stall !== undefined) console.log(`stall:              first 200 ${stall.firstOkMs} ms after the database answered again; ${stall.lateFailures} requests sent after it not answered 200`);
  console.log(`recovery:           every cycle; median ${sorted[sorted.length >> 1]} ms, worst ${sorted.at(-1)} ms after the database was back`);
  if (redis === null) console.log('redis:              skipped (no redis-server on this machine)');
  else console.log(`redis:              ${redis.summary}`);
  console.log(`imports:            ${imports.length} (${imports.filter((i) => i.ok).length} done, ${imports.filter((i) => !i.ok).length} refused by the outage); half written: ${half}; done but lost: ${lost}`);
  if (problems.length > 0) {
    console.log(`\nFAILED:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log('result:             no crash, no unhandled rejection, no leaked connection, no answer but 200 or a clean 503, nothing half written or lost');
  }
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

await main();
