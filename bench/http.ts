/**
 * HTTP benchmark: each contender runs in its own process; autocannon drives it from this one.
 * Contenders: `ipokit serve` itself (startServer on node:http, limits and access log off)
 * against a bare node:http server answering the same bytes; our Express, Koa and fetch (Hono
 * on @hono/node-server) adapters, each against bare routes of its framework answering the
 * same bytes, and Express against a hand-rolled app.
 * Rounds interleave the contenders (A B C ..., then reversed) and the table reports medians
 * of req/s and the ratios the targets are stated in.
 *
 *   node --conditions=source --import tsx bench/http.ts [--rounds 3] [--seconds 5] [--connections 32] [--only ipokit-fetch,bare-hono]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import type { BenchRow } from './rows.js';

export interface HttpBenchOptions {
  rounds?: number;
  seconds?: number;
  connections?: number;
  /** The contenders to run (default all); a target ratio is reported when both of its sides run. */
  only?: readonly string[];
}

const CONTENDERS = ['ipokit-serve', 'bare-node', 'ipokit-express', 'bare-express', 'handrolled-express', 'ipokit-koa', 'bare-koa', 'ipokit-fetch', 'bare-hono'] as const;
type Contender = (typeof CONTENDERS)[number];
const ROUTE_NAMES = ['GET /ipos/{id}', 'GET /ipos?status=listed&limit=100'];
/** [ours, theirs, target ratio ours/theirs] */
const TARGETS: Array<[Contender, Contender, number]> = [
  ['ipokit-serve', 'bare-node', 0.8],
  ['ipokit-express', 'bare-express', 0.95],
  ['ipokit-express', 'handrolled-express', 1.15],
  ['ipokit-koa', 'bare-koa', 0.9],
  ['ipokit-fetch', 'bare-hono', 0.9],
];
const serverFile = fileURLToPath(new URL('./http-server.ts', import.meta.url));

export interface Started {
  child: ChildProcess;
  port: number;
  key: string;
  paths: string[];
}

/**
 * Starts a contender of bench/http-server.ts in its own process.
 *
 * @example
 * ```ts
 * const s = await start('ipokit-express'); // { child, port, key, paths }
 * ```
 */
export async function start(name: string): Promise<Started> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', serverFile, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { port: number; key: string; paths: string[] }) };
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

/** req/s, and the server's CPU microseconds per request (less sensitive to a busy machine). */
export async function measure(s: Started, path: string, seconds: number, connections: number): Promise<{ rps: number; cpuUs: number }> {
  const before = cpuSeconds(s.child.pid);
  const result = await autocannon({ url: `http://127.0.0.1:${s.port}${path}`, headers: { 'x-api-key': s.key }, connections, duration: seconds });
  const cpu = cpuSeconds(s.child.pid) - before;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: non-2xx ${result.non2xx}, errors ${result.errors}`);
  return { rps: result.requests.average, cpuUs: (cpu * 1e6) / result.requests.total };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Runs every contender on both routes and returns one row per contender and route, and one
 * per target ratio.
 *
 * @example
 * ```ts
 * const rows = await runHttpBench({ rounds: 3, seconds: 5 });
 * ```
 */
export async function runHttpBench(options: HttpBenchOptions = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 3;
  const seconds = options.seconds ?? 5;
  const connections = options.connections ?? 32;
  const unknown = (options.only ?? []).filter((name) => !(CONTENDERS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown contender ${unknown.join(', ')}; one of ${CONTENDERS.join(', ')}`);
  const contenders = options.only === undefined ? CONTENDERS : CONTENDERS.filter((name) => options.only!.includes(name));
  const samples = new Map<string, number[]>();
  const cpuSamples = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? contenders : [...contenders].reverse()) {
      const s = await start(name);
      try {
        for (const [i, path] of s.paths.entries()) {
          await measure(s, path, 1, connections); // warm-up
          const key = `${name}|${ROUTE_NAMES[i]}`;
          const m = await measure(s, path, seconds, connections);
          samples.set(key, [...(samples.get(key) ?? []), m.rps]);
          cpuSamples.set(key, [...(cpuSamples.get(key) ?? []), m.cpuUs]);
        }
      } finally {
        s.child.kill();
      }
    }
  }
  const rps = (name: Contender, route: string): number => median(samples.get(`${name}|${route}`) ?? [NaN]);
  const cpuUs = (name: Contender, route: string): number => median(cpuSamples.get(`${name}|${route}`) ?? [NaN]);
  const rows: BenchRow[] = [];
  const note = `${connections} connections, ${rounds} interleaved rounds of ${seconds} s, client and server on one 2-core machine`;
  for (const route of ROUTE_NAMES) {
    for (const name of contenders) {
      const xs = samples.get(`${name}|${route}`) ?? [];
      rows.push({
        group: 'HTTP',
        name: `${route}: ${name}`,
        value: Math.round(rps(name, route)),
        unit: 'req/s',
        note: `samples ${xs.map((x) => Math.round(x)).join(', ')}; server CPU ${cpuUs(name, route).toFixed(1)} us/request`,
      });
    }
    for (const [ours, theirs, target] of TARGETS) {
      if (!contenders.includes(ours) || !contenders.includes(theirs)) continue;
      const ratio = rps(ours, route) / rps(theirs, route);
      const cpuRatio = cpuUs(theirs, route) / cpuUs(ours, route);
      rows.push({
        group: 'HTTP',
        name: `${route}: ${ours} / ${theirs}`,
        value: Number(ratio.toFixed(2)),
        unit: 'x',
        target: `>= ${target}`,
        pass: ratio >= target,
        note: `${note}; by server CPU per request ${cpuRatio.toFixed(2)}x`,
      });
    }
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
  const rows = await runHttpBench({
    rounds: Number(args.get('rounds') ?? 3),
    seconds: Number(args.get('seconds') ?? 5),
    connections: Number(args.get('connections') ?? 32),
    ...(args.has('only') ? { only: args.get('only')!.split(',') } : {}),
  });
  const { formatRows } = await import('./rows.js');
  console.log(formatRows(rows));
}
