/**
 * Fuzzing at scale: generated hostile requests against Express (5, 4), Koa (3, 2) and the
 * fetch handler (on @hono/node-server) on the memory store, and Express 5 and Koa 3 on the
 * PostgreSQL store (a real server when DATABASE_URL is set, else PGlite in-process). Every
 * answer is checked against the contract (`fuzzHttp` of `@ipokit/testing`); the first
 * violation is printed with the request that caused it, and the process exits 1.
 *
 *   node --conditions=source --import tsx scripts/fuzz.ts [--runs 100000] [--seed N] [--concurrency 8] [--only koa] [--tolerate-reported]
 *
 * `--runs` is the total over all combinations (default 100,000), split evenly. With
 * `--tolerate-reported`, responses that show a defect already reported (REPORTED_BUGS)
 * are counted instead of stopping the run. Every combination gets the same requests, and
 * the answers of the first phase (a clock standing still) must be the same bytes across
 * all of them (docs/spec.md#adapters: every adapter and every store answers alike); differences are
 * listed and fail the run too. The fetch handler gets the request-target as the runtime
 * parsed it (dot segments resolved, ...: rewrittenRun in packages/fetch/src/test-target.ts):
 * those requests are counted as `url-parsed-by-the-runtime` and left out of the comparison.
 */
import { parseArgs } from 'node:util';
import { memoryStore } from '@ipokit/storage-memory';
import type { Store } from '@ipokit/core';
// Straight from the source file: the package entry would also load the vitest suites.
import {
  FuzzViolation,
  REPORTED_BUGS,
  compareFuzzReports,
  describeRequest,
  fuzzHttp,
  generatedRequest,
  type FuzzReport,
  type StatusCounts,
} from '../packages/testing/src/fuzz.js';
import type { HttpTarget } from '../packages/testing/src/http-suite.js';
import { EXPRESS_VERSIONS, expressTarget } from '../packages/express/src/test-target.js';
import { koaTargets } from '../packages/koa/src/test-target.js';
import { fetchTarget, rewrittenRun, URL_PARSED_BY_RUNTIME } from '../packages/fetch/src/test-target.js';
import { openTestDatabase, type TestDatabase } from '../packages/storage-postgres/src/test-database.js';

interface Combination {
  name: string;
  target: HttpTarget;
  store: 'memory' | 'postgres';
  /** A fetch handler: the runtime may rewrite the request-target first. */
  fetch?: boolean;
}

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    only: { type: 'string' },
    'tolerate-reported': { type: 'boolean', default: false },
  },
});
const total = Number(values.runs);
const seed = values.seed === undefined ? (Math.random() * 0x7fffffff) | 0 : Number(values.seed);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(total) || total < 1 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency < 1) {
  console.error('usage: scripts/fuzz.ts [--runs N] [--seed N] [--concurrency N] [--only text] [--tolerate-reported]');
  process.exit(2);
}

const [koa3, koa2] = koaTargets().filter((t) => t.name.endsWith(', prefix'));
const pgName = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
const combinations: Combination[] = [
  ...EXPRESS_VERSIONS.map((v): Combination => ({ name: `${v.name} + memory`, target: expressTarget(v), store: 'memory' })),
  { name: 'koa 3 + memory', target: koa3!, store: 'memory' as const },
  { name: 'koa 2 + memory', target: koa2!, store: 'memory' as const },
  { name: 'fetch + memory', target: fetchTarget, store: 'memory' as const, fetch: true },
  { name: `express 5 + ${pgName}`, target: expressTarget(EXPRESS_VERSIONS[0]!), store: 'postgres' as const },
  { name: `koa 3 + ${pgName}`, target: koa3!, store: 'postgres' as const },
].filter((c) => values.only === undefined || c.name.includes(values.only));

const perCombination = Math.ceil(total / combinations.length);
console.log(`fuzzing ${combinations.length} combinations x ${perCombination} generated requests (seed ${seed}, concurrency ${concurrency})`);

let db: TestDatabase | null = null;
const reports: Array<{ name: string; report: FuzzReport; fetch: boolean }> = [];
const started = Date.now();
let exitCode = 0;
try {
  for (const c of combinations) {
    let createStore: () => Store | Promise<Store> = () => memoryStore();
    if (c.store === 'postgres') {
      db ??= await openTestDatabase('fuzz');
      const database = db;
      createStore = () => database.emptyStore();
    }
    process.stdout.write(`${c.name.padEnd(28)} `);
    const report = await fuzzHttp({
      target: c.target,
      createStore,
      destroyStore: (s) => s.close?.(),
      runs: perCombination,
      seed,
      concurrency,
      knownBugs: [...(values['tolerate-reported'] ? REPORTED_BUGS : []), ...(c.fetch === true ? [URL_PARSED_BY_RUNTIME] : [])],
      onProgress: (done) => {
        if (done % 5000 === 0) process.stdout.write('.');
      },
    });
    reports.push({ name: c.name, report, fetch: c.fetch === true });
    console.log(` ${line(report)}`);
  }
} catch (err) {
  exitCode = 1;
  console.log('');
  if (err instanceof FuzzViolation) {
    console.error(err.message);
  } else {
    console.error(err);
  }
} finally {
  await db?.close();
}

if (reports.length > 0) {
  const all: StatusCounts = {};
  const known: Record<string, number> = {};
  let runs = 0;
  let requests = 0;
  let refused = 0;
  for (const { report } of reports) {
    runs += report.runs;
    requests += report.requests;
    refused += report.refusedByNode;
    for (const [status, n] of Object.entries(report.statuses)) all[status] = (all[status] ?? 0) + n;
    for (const [id, n] of Object.entries(report.knownBugs)) known[id] = (known[id] ?? 0) + n;
  }
  console.log('');
  console.log(`total: ${runs} generated requests (${requests} sent with HEAD companions), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`statuses: ${counts(all)}; refused by Node's HTTP parser: ${refused}`);
  if (Object.keys(known).length > 0) console.log(`reported defects seen (tolerated): ${counts(known)}`);
  for (const { name, report } of reports) {
    console.log(`  ${name}: routes ${counts(report.routes)}; ${report.phases.map((p) => `${p.name} (${p.runs}): ${counts(p.statuses)}`).join('; ')}`);
  }
  // the same requests must get the same answers from every adapter on every store
  const [first, ...others] = reports;
  let differences = 0;
  for (const other of others) {
    const diff = compareFuzzReports(first!.report, other.report).filter(({ index }) => !((first!.fetch || other.fetch) && rewrittenRun(seed, index)));
    differences += diff.length;
    for (const d of diff.slice(0, 3)) {
      console.log(`\n${first!.name} and ${other.name} answer run ${d.index} differently (${d.a} vs ${d.b}):\n${describeRequest(generatedRequest(seed, d.index), undefined, undefined, undefined, true)}`);
    }
  }
  console.log(`answers compared across the ${reports.length} combinations: ${differences === 0 ? 'all the same' : `${differences} differences`}`);
  if (differences > 0) exitCode = 1;
}
process.exit(exitCode);

function line(r: FuzzReport): string {
  const seconds = r.elapsedMs / 1000;
  return `${r.runs} runs, ${r.requests} requests in ${seconds.toFixed(1)} s (${Math.round(r.requests / seconds)}/s): ${counts(r.statuses)}, refused by Node ${r.refusedByNode}, HEAD compared ${r.headCompared}`;
}

function counts(c: Record<string, number>): string {
  return Object.entries(c)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ');
}
