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
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import express from 'express';
import pg from 'pg';
import { createAccount, createApiKey, importDataset, type Dataset, type IpoRouterOptions, type Store } from '@ipokit/core';
import { createIpoHandler, type IpoHandler } from '@ipokit/core/adapter';
import { ipoRouter } from '@ipokit/express';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { generateDataset } from '@ipokit/cli';
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

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
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

  // PostgreSQL: two schemas of one database.
  const url = options.url ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  try {
    const stores: Store[] = [];
    for (const [schema, data] of [['ipokit_bench_before16', withoutNewFields(dataset)], ['ipokit_bench_after16', dataset]] as const) {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await migrate(pool, { schema });
      // No data cache: every page is the SQL's (with the default cache a repeated page is
      // served from memory, which would hide the subscription join).
      const store = postgresStore({ client: pool, schema, dataCacheTtlMs: 0 });
      await importDataset(store, data);
      stores.push(store);
    }
    const [before, after] = stores as [Store, Store];
    const pgResult = await compareLists(
      { handle: createIpoHandler(before, OPTIONS), key: await keyed(before) },
      { handle: createIpoHandler(after, OPTIONS), key: await keyed(after) },
      200,
      5,
    );
    rows.push(...listRows('PostgreSQL (data cache off)', pgResult));
    for (const store of stores) await store.close?.();
  } finally {
    await pool.end();
  }

  // The subscription route against the one-IPO route, over HTTP on Express.
  const counts = new Map<string, number>();
  for (const s of dataset.subscription ?? []) counts.set(s.ipoId, (counts.get(s.ipoId) ?? 0) + 1);
  const [id, points] = [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0]!;
  const app = express();
  app.use('/ipos', ipoRouter(memAfter, OPTIONS));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const key = await keyed(memAfter);
  const rounds = options.rounds ?? 3;
  const seconds = options.seconds ?? 5;
  const samples: Record<'ipo' | 'subscription', number[]> = { ipo: [], subscription: [] };
  const paths = { ipo: `/ipos/${id}`, subscription: `/ipos/${id}/subscription` };
  const run = async (path: string, duration: number): Promise<number> => {
    const result = await autocannon({ url: `http://127.0.0.1:${port}${path}`, headers: { 'x-api-key': key }, connections: 32, duration });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: non-2xx ${result.non2xx}, errors ${result.errors}`);
    return result.requests.average;
  };
  try {
    await run(paths.ipo, 1);
    await run(paths.subscription, 1);
    for (let r = 0; r < rounds; r++) {
      const order: Array<'ipo' | 'subscription'> = r % 2 === 0 ? ['ipo', 'subscription'] : ['subscription', 'ipo'];
      for (const route of order) samples[route].push(await run(paths[route], seconds));
    }
  } finally {
    server.close();
  }
  const ipo = median(samples.ipo);
  const sub = median(samples.subscription);
  const note = `32 connections, ${rounds} interleaved rounds of ${seconds} s; the IPO with the most snapshots (${points})`;
  rows.push(
    { group: 'IPO data', name: 'GET /ipos/{id} on Express (memory store)', value: Math.round(ipo), unit: 'req/s', note: `samples ${samples.ipo.map(Math.round).join(', ')}` },
    { group: 'IPO data', name: 'GET /ipos/{id}/subscription on Express (memory store)', value: Math.round(sub), unit: 'req/s', note: `samples ${samples.subscription.map(Math.round).join(', ')}` },
    { group: 'IPO data', name: 'subscription route / one-IPO route', value: round(sub / ipo, 2), unit: 'x', target: '>= 0.9', pass: sub / ipo >= 0.9, note },
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
