/**
 * The cost of what IPO readers look at first (docs/spec.md#subscription, fields 28 to 35), side
 * by side in one run:
 * - the 100-row list page (`status=listed&limit=100`, in process through the core handler)
 *   on the demo dataset as it was before these fields (no registrar, lead managers, market
 *   maker, sector, listing prices, subscription snapshots) against the same dataset with
 *   them, on the memory store and on PostgreSQL, interleaved (target: with >= 0.9x without,
 *   i.e. within 10%);
 * - `GET /ipos/{id}/subscription` against `GET /ipos/{id}` of the same IPO over HTTP on
 *   Express (autocannon, interleaved rounds; target >= 0.9x).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:ipo-data
 *
 * `runIpoDataBench()` returns the figures as rows for bench/run.ts.
 */
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createAccount, createApiKey, importDataset, type Dataset, type IpoRouterOptions, type Store } from '@ipokit/core';
import { createIpoHandler, type IpoHandler } from '@ipokit/core/adapter';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { generateDataset } from '@ipokit/cli';
import { measure, median, start } from './http.js';
import type { BenchRow } from './rows.js';

const NOW = Date.UTC(2026, 10, 22, 6, 30);
const OPTIONS: IpoRouterOptions = { now: () => new Date(NOW), limits: { paid: { perMinute: 100_000_000, gmpPerMinute: 100_000_000 } } };
const LIST = { path: '/', query: 'status=listed&limit=100' };

/** Options of {@link runIpoDataBench}. */
export interface IpoDataBenchOptions {
  /** Default: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. */
  url?: string;
  /** HTTP rounds and seconds per measurement (default 3 and 5). */
  rounds?: number;
  seconds?: number;
}

/** The demo dataset without the fields and records that came with docs/spec.md fields 30 to 35. */
function withoutNewFields(dataset: Dataset): Dataset {
  return {
    ipos: (dataset.ipos ?? []).map(({ registrar: _r, leadManagers: _l, marketMaker: _m, sector: _s, listingPrices: _p, ...ipo }) => ipo),
    gmp: dataset.gmp ?? [],
  };
}

async function keyed(store: Store): Promise<string> {
  const account = await createAccount(store, { name: 'bench', plan: 'paid' });
  return (await createApiKey(store, { accountId: account.id, label: 'bench' })).key;
}

/** Microseconds per list page through the handler: `runs` calls, the median of 5 batches. */
async function listCost(handle: IpoHandler, key: string, runs: number): Promise<number> {
  const request = { method: 'GET', url: `/ipos?${LIST.query}`, path: LIST.path, query: LIST.query, headers: { 'x-api-key': key }, clientAddress: '127.0.0.1' };
  const batches: number[] = [];
  for (let b = 0; b < 5; b++) {
    const started = performance.now();
    for (let i = 0; i < runs; i++) {
      const res = await handle(request);
      if (res.status !== 200) throw new Error(`list: ${res.status} ${res.body}`);
    }
    batches.push(((performance.now() - started) * 1000) / runs);
  }
  return median(batches);
}

/** Interleaves the two list contenders for `rounds` rounds; the medians of their costs (us). */
async function compareLists(before: { handle: IpoHandler; key: string }, after: { handle: IpoHandler; key: string }, runs: number, rounds: number): Promise<{ before: number; after: number; bytes: [number, number] }> {
  const a: number[] = [];
  const b: number[] = [];
  await listCost(before.handle, before.key, runs); // warm-up
  await listCost(after.handle, after.key, runs);
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      a.push(await listCost(before.handle, before.key, runs));
      b.push(await listCost(after.handle, after.key, runs));
    } else {
      b.push(await listCost(after.handle, after.key, runs));
      a.push(await listCost(before.handle, before.key, runs));
    }
  }
  const size = async (c: { handle: IpoHandler; key: string }): Promise<number> =>
    Buffer.byteLength((await c.handle({ method: 'GET', url: `/ipos?${LIST.query}`, path: LIST.path, query: LIST.query, headers: { 'x-api-key': c.key }, clientAddress: '127.0.0.1' })).body);
  return { before: median(a), after: median(b), bytes: [await size(before), await size(after)] };
}

function listRows(store: string, r: { before: number; after: number; bytes: [number, number] }): BenchRow[] {
  const ratio = r.before / r.after;
  return [
    { group: 'IPO data', name: `list of 100 (listed), ${store}: the fields as before (no subscription)`, value: round(r.before, 1), unit: 'us', note: `${r.bytes[0].toLocaleString('en-US')} bytes a page` },
    { group: 'IPO data', name: `list of 100 (listed), ${store}: with fields 28 to 35 filled`, value: round(r.after, 1), unit: 'us', note: `${r.bytes[1].toLocaleString('en-US')} bytes a page` },
    { group: 'IPO data', name: `list of 100, ${store}: throughput with / without`, value: round(ratio, 2), unit: 'x', target: '>= 0.9', pass: ratio >= 0.9, note: 'in process through the core handler, interleaved, medians' },
  ];
}

const round = (x: number, d: number): number => Number(x.toFixed(d));

/**
 * Runs the measurements and returns them as rows.
 *
 * @example
 * ```ts
 * const rows = await runIpoDataBench({ rounds: 3, seconds: 5 });
 * ```
 */
export async function runIpoDataBench(options: IpoDataBenchOptions = {}): Promise<BenchRow[]> {
  const dataset = generateDataset({ today: '2026-11-22', now: NOW });
  if ((dataset.subscription ?? []).length === 0) throw new Error('the demo dataset has no subscription snapshots');
  const rows: BenchRow[] = [];

  // Memory store.
  const memBefore = memoryStore();
  const memAfter = memoryStore();
  await importDataset(memBefore, withoutNewFields(dataset));
  await importDataset(memAfter, dataset);
  const mem = await compareLists(
    { handle: createIpoHandler(memBefore, OPTIONS), key: await keyed(memBefore) },
    { handle: createIpoHandler(memAfter, OPTIONS), key: await keyed(memAfter) },
    2_000,
    5,
  );
  rows.push(...listRows('memory store', mem));

  // PostgreSQL: two schemas of one database, read with the store's default data cache (1 s:
  // under load a page is mostly the cache's) and without it (every page the SQL's).
  const url = options.url ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  try {
    const schemas = [['ipokit_bench_before16', withoutNewFields(dataset)], ['ipokit_bench_after16', dataset]] as const;
    for (const [schema, data] of schemas) {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await migrate(pool, { schema });
      const store = postgresStore({ client: pool, schema });
      await importDataset(store, data);
      await store.close?.();
    }
    for (const [label, cache] of [['PostgreSQL', {}], ['PostgreSQL, data cache off', { dataCacheTtlMs: 0 }]] as const) {
      const before: Store = postgresStore({ client: pool, schema: schemas[0][0], ...cache });
      const after: Store = postgresStore({ client: pool, schema: schemas[1][0], ...cache });
      const result = await compareLists(
        { handle: createIpoHandler(before, OPTIONS), key: await keyed(before) },
        { handle: createIpoHandler(after, OPTIONS), key: await keyed(after) },
        'dataCacheTtlMs' in cache ? 200 : 2_000,
        5,
      );
      rows.push(...listRows(label, result));
      await before.close?.();
      await after.close?.();
    }
  } finally {
    await pool.end();
  }

  // The subscription route against the one-IPO route, over HTTP on Express: our router in a
  // process of its own (bench/http-server.ts), autocannon here.
  const rounds = options.rounds ?? 3;
  const seconds = options.seconds ?? 5;
  const server = await start('ipokit-express-subscription');
  const samples: Array<[number[], number[]]> = [[[], []], [[], []]];
  try {
    for (const path of server.paths) await measure(server, path, 1, 32); // warm-up
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const m = await measure(server, server.paths[i]!, seconds, 32);
        samples[i]![0].push(m.rps);
        samples[i]![1].push(m.cpuUs);
      }
    }
  } finally {
    server.child.kill();
  }
  const [ipo, sub] = samples.map(([rps]) => median(rps)) as [number, number];
  const [ipoCpu, subCpu] = samples.map(([, cpu]) => median(cpu)) as [number, number];
  const note = `32 connections, ${rounds} interleaved rounds of ${seconds} s, the server in its own process; the IPO with the most snapshots (${server.paths[1]})`;
  rows.push(
    { group: 'IPO data', name: 'GET /ipos/{id} on Express (memory store)', value: Math.round(ipo), unit: 'req/s', note: `samples ${samples[0]![0].map(Math.round).join(', ')}; server CPU ${ipoCpu.toFixed(1)} us/request` },
    { group: 'IPO data', name: 'GET /ipos/{id}/subscription on Express (memory store)', value: Math.round(sub), unit: 'req/s', note: `samples ${samples[1]![0].map(Math.round).join(', ')}; server CPU ${subCpu.toFixed(1)} us/request` },
    { group: 'IPO data', name: 'subscription route / one-IPO route', value: round(sub / ipo, 2), unit: 'x', target: '>= 0.9', pass: sub / ipo >= 0.9, note: `${note}; by server CPU per request ${(ipoCpu / subCpu).toFixed(2)}x` },
  );
  await memBefore.close?.();
  await memAfter.close?.();
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await runIpoDataBench();
  const { formatRows } = await import('./rows.js');
  console.log(formatRows(rows));
}
