/**
 * The streaming import at scale: writes a dataset file of 100,000 IPOs and 10,000,000
 * snapshots (streamed to a temporary directory, never held), imports it into DATABASE_URL
 * under a throwaway schema the way `ipokit import` does (two passes, one transaction), and
 * prints the time, rows per second and peak RSS of each step. The schema and the file are
 * removed afterwards.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run import:big [-- --snapshots 1000000 --ipos 10000 --batch-size 5000 --keep-file]
 */
import { createWriteStream, rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { importDatasetStream, migrate, type StreamImportProgress } from '@ipokit/storage-postgres';
import { readDatasetFile } from '../packages/cli/src/import.js';
import { syntheticIpo } from '../packages/storage-postgres/src/synthetic.js';

const { values } = parseArgs({
  options: {
    ipos: { type: 'string', default: '100000' },
    snapshots: { type: 'string', default: '10000000' },
    'batch-size': { type: 'string', default: '5000' },
    'keep-file': { type: 'boolean', default: false },
  },
  strict: true,
});
const IPOS = Number(values.ipos);
const SNAPSHOTS = Number(values.snapshots);
const BATCH = Number(values['batch-size']);
const TODAY = '2026-11-22';
const SOURCES = ['ipowatch', 'investorgain', 'ipocentral'];

const url = process.env.DATABASE_URL;
if (url === undefined || url === '') {
  console.error('set DATABASE_URL=postgres://... (the import goes into a throwaway schema there)');
  process.exit(2);
}
if (![IPOS, SNAPSHOTS, BATCH].every((n) => Number.isSafeInteger(n) && n > 0)) {
  console.error('--ipos, --snapshots and --batch-size must be whole numbers above 0');
  process.exit(2);
}

/** Peak RSS, sampled (the kernel's high-water mark is printed too, at the end). */
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 100);
const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;
const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString('en-US')}/s`;
const log = (line: string) => process.stderr.write(`${line}\n`);

const dir = await mkdtemp(join(tmpdir(), 'ipokit-import-big-'));
const file = join(dir, 'big.json');
const schema = `ipokit_import_big_${process.pid}`;
const APP = `ipokit-import-big-${process.pid}`;
const pool = new pg.Pool({ connectionString: url, max: 2, application_name: APP });
pool.on('error', (err) => log(`pool: ${err.message}`));

// Ctrl-C: the file goes, the import's connection is ended (its open transaction holds the
// tables), then the schema is dropped.
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
  log('interrupted: removing the file and the schema');
  rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: url });
  void admin
    .connect()
    .then(() => admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [APP]))
    .then(() => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
    .catch((err: Error) => log(`could not drop schema ${schema}: ${err.message}`))
    .finally(() => process.exit(130));
});

try {
  // 1. The file, written as a stream: IPOs, then snapshots in time order across IPOs (one a
  // minute per IPO), three sources each.
  let started = performance.now();
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('{"ipos":[');
  let chunk: string[] = [];
  for (let i = 0; i < IPOS; i++) {
    chunk.push(JSON.stringify(syntheticIpo(i, IPOS, TODAY)));
    if (chunk.length === 1000) {
      await write(`${i < 1000 ? '' : ','}${chunk.join(',')}`);
      chunk = [];
    }
  }
  if (chunk.length > 0) await write(`${IPOS <= chunk.length ? '' : ','}${chunk.join(',')}`);
  await write('],"gmp":[');
  chunk = [];
  const t0 = Date.UTC(2026, 0, 1);
  const ids = Array.from({ length: IPOS }, (_, i) => syntheticIpo(i, IPOS, TODAY).id);
  let written = 0;
  for (let j = 0; j < SNAPSHOTS; j++) {
    const ts = new Date(t0 + Math.floor(j / IPOS) * 60_000).toISOString();
    const prices = SOURCES.map((name, k) => `{"name":"${name}","gmpPrice":${k === 2 && j % 3 === 0 ? 'null' : ((j * (k + 7)) % 40_000) / 4}}`);
    chunk.push(`{"ipoId":"${ids[j % IPOS]}","timestamp":"${ts}","sources":[${prices.join(',')}]}`);
    if (chunk.length === 5000) {
      await write(`${written === 0 ? '' : ','}${chunk.join(',')}`);
      written += chunk.length;
      chunk = [];
      if (written % 1_000_000 === 0) log(`writing the file: ${written.toLocaleString('en-US')} snapshots`);
    }
  }
  if (chunk.length > 0) await write(`${written === 0 ? '' : ','}${chunk.join(',')}`);
  await write(']}');
  out.end();
  await once(out, 'finish');
  const size = (await stat(file)).size;
  const writeMs = performance.now() - started;
  log(`file: ${IPOS.toLocaleString('en-US')} IPOs, ${SNAPSHOTS.toLocaleString('en-US')} snapshots, ${mb(size)} written in ${(writeMs / 1000).toFixed(1)} s`);

  // 2. The import, as `ipokit import` runs it.
  await migrate(pool, { schema });
  const read = { bytes: 0 };
  const passes = new Map<1 | 2, { start: number; end: number; p: StreamImportProgress }>();
  let lastLog = 0;
  started = performance.now();
  const result = await importDatasetStream(
    {
      client: pool,
      schema,
      batchSize: BATCH,
      onProgress: (p) => {
        const now = performance.now();
        const pass = passes.get(p.pass) ?? { start: passes.get(1)?.end ?? started, end: now, p };
        pass.end = now;
        pass.p = p;
        passes.set(p.pass, pass);
        if (now - lastLog > 10_000) {
          lastLog = now;
          const n = p.ipos + p.snapshots;
          log(`pass ${p.pass}: ${Math.floor((100 * read.bytes) / size)}% of the file, ${n.toLocaleString('en-US')} records, ${rate(n, now - pass.start)}, RSS ${mb(process.memoryUsage.rss())}`);
        }
      },
    },
    () => readDatasetFile(file, { progress: read }),
  );
  const importMs = performance.now() - started;
  const rows = result.ipos + result.snapshots;
  const [stored] = (await pool.query(`SELECT (SELECT count(*) FROM ${schema}.ipos)::int AS ipos, (SELECT count(*) FROM ${schema}.snapshots)::int AS snapshots`)).rows as Array<{ ipos: number; snapshots: number }>;

  clearInterval(sampler);
  const lines = [
    `imported ${result.ipos.toLocaleString('en-US')} IPOs and ${result.snapshots.toLocaleString('en-US')} snapshots (${mb(size)} of JSON) in ${(importMs / 1000).toFixed(1)} s: ${rate(rows, importMs)} rows overall`,
    ...[...passes.entries()].map(
      ([n, p]) => `  pass ${n} (${n === 1 ? 'check' : 'write, one transaction'}): ${((p.end - p.start) / 1000).toFixed(1)} s, ${rate(p.p.ipos + p.p.snapshots, p.end - p.start)} rows`,
    ),
    `  stored: ${stored?.ipos} IPOs, ${stored?.snapshots} snapshots`,
    `  peak RSS: ${mb(peakRss)} sampled, ${mb(process.resourceUsage().maxRSS * 1024)} high-water mark (the file is ${mb(size)})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} catch (err) {
  // Interrupted: the import failed because its connection was ended; the handler exits.
  if (interrupted) await new Promise(() => undefined);
  throw err;
} finally {
  clearInterval(sampler);
  if (!interrupted) {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((err: Error) => log(`could not drop schema ${schema}: ${err.message}`));
    await pool.end();
    if (values['keep-file']) log(`kept ${file}`);
    else await rm(dir, { recursive: true, force: true });
  }
}
