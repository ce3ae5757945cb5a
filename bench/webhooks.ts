/**
 * Webhooks (docs/spec.md#webhooks) measured side by side, in one run:
 *
 * 1. **Deliveries per second** from one worker (`startWebhookWorker` with its defaults:
 *    64 attempts in flight, 4 per endpoint, 16 per account; through fetch, and through
 *    nodeWebhookTransport as `ipokit worker` sends) to a local receiver in a process of its
 *    own, 16 endpoints on it (4 accounts of 4), each event signed; on the memory store and on PostgreSQL (a pool of
 *    10). The clock starts when the worker does, with every delivery already pending, and
 *    stops when the receiver has answered them all. Targets: >= 10,000/s in memory (the
 *    median of three runs), >= 2,000/s on PostgreSQL. Beside it, the transport alone
 *    sending as many requests to the same receiver, with nothing else to do.
 * 2. **From an import's commit to the first attempt**, with the worker idle (woken by
 *    LISTEN/NOTIFY on PostgreSQL, by the store's callback in memory): one IPO imported at a
 *    time, 100 times, 20 ms apart; the time from `importDataset` resolving to the receiver
 *    seeing the request, on one machine's clock. Target: p50 <= 50 ms.
 * 3. **Event recording's cost on a 10,000-snapshot import** on PostgreSQL: the same import
 *    (new snapshots each round) with no endpoint and with one endpoint taking `gmp.snapshot`
 *    (its 10,000 events recorded in the import's transaction as 2 `snapshot_changes` rows),
 *    rounds alternating; the median of each. Target: <= 1.15x. And the fan-out of those rows
 *    into 10,000 events and deliveries afterwards, as a worker's claims make it, timed apart.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:webhooks [-- --only=import]
 *
 * Without a PostgreSQL answering at DATABASE_URL its rows are left out with one line.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createAccount, createWebhook, importDataset, type AccountStore, type IpoStore, type WebhookStore } from '@ipokit/core';
import { startWebhookWorker, type WebhookTransport } from '@ipokit/webhooks';
import { nodeWebhookTransport } from '@ipokit/webhooks/node';

/** The receivers are local: loopback is opened explicitly (docs/spec.md#webhooks). */
const LOOPBACK = ['127.0.0.0/8', '::1/128'];
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { formatRows, type BenchRow } from './rows.js';

type BenchStore = IpoStore & AccountStore & WebhookStore & { close?: () => Promise<void> };

/** Options of {@link runWebhooksBench}. */
export interface WebhooksBenchOptions {
  databaseUrl?: string;
  /** Deliveries per throughput run. */
  deliveries?: number;
  /** Rounds of the import comparison, per shape. */
  rounds?: number;
  /** The parts to run (default all): `--only import,latency` on the command line. */
  parts?: ReadonlyArray<'throughput' | 'latency' | 'import'>;
  log?: (line: string) => void;
}

const SCHEMA = 'ipokit_bench_webhooks';
const ENDPOINTS = 16;
const HOUR = 3_600_000;

/** The receiver process, and how to ask it things. */
interface Receiver {
  port: number;
  ask<T>(message: object): Promise<T>;
  stop(): void;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url)), [], { execArgv: ['--conditions=source', '--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)));
  // One question at a time: answers come back in order.
  let queue: Promise<unknown> = Promise.resolve();
  const ask = <T>(message: object): Promise<T> => {
    const answer = queue.then(() => new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(message);
    }));
    queue = answer.catch(() => undefined);
    return answer;
  };
  return { port, ask, stop: () => child.kill() };
}

/**
 * `count` endpoints on the receiver taking `events`, four to a pro account (so that the
 * worker's defaults, 64 in flight, 4 per endpoint and 16 per account, are what is measured:
 * one account's endpoints alone would be held to its 16).
 */
async function endpoints(store: BenchStore, receiver: Receiver, events: string[], count = ENDPOINTS): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const account = i % 4 === 0 ? await createAccount(store, { name: `Bench ${i / 4}`, plan: 'pro', gmpAddon: true }) : null;
    const owner = account?.id ?? (await store.getWebhook(ids[ids.length - 1]!))!.accountId;
    ids.push((await createWebhook(store, { accountId: owner, url: `http://127.0.0.1:${receiver.port}/hooks/${i}`, events }, { webhookAllowedNetworks: LOOPBACK })).id);
  }
  return ids;
}

const ipos = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, name: `Bench ${prefix}${i}`, slug: `${prefix.replace(/[^a-z0-9]+/g, "")}-${i}`, type: "EQ" as const }));

/** Part 1: every delivery pending, then one worker sends them all. */
async function throughput(store: BenchStore, receiver: Receiver, deliveries: number, transport?: WebhookTransport): Promise<number> {
  await endpoints(store, receiver, ['ipo.created']);
  const perEndpoint = Math.ceil(deliveries / ENDPOINTS);
  for (let done = 0; done < perEndpoint; done += 1_000) await importDataset(store, { ipos: ipos(`t${done}-`, Math.min(1_000, perEndpoint - done)) });
  const total = perEndpoint * ENDPOINTS;
  await receiver.ask({ ask: 'reset' });
  const started = performance.now();
  const worker = startWebhookWorker(store, { allowInsecureWebhooks: true, webhookAllowedNetworks: LOOPBACK, onError: (err) => console.error(err), ...(transport === undefined ? {} : { transport }) });
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const { count } = await receiver.ask<{ count: number }>({ ask: 'count' });
    if (count >= total) break;
  }
  const seconds = (performance.now() - started) / 1_000;
  await worker.stop();
  return Math.round(total / seconds);
}

/** Requests/s of the worker's transport alone, 64 at a time, to the receiver's endpoints, headers made once: what is left when signing, the store and the worker are taken away. */
async function transportAlone(receiver: Receiver, requests: number, transport: WebhookTransport): Promise<number> {
  const body = JSON.stringify({ type: 'ipo.created', timestamp: new Date().toISOString(), data: { id: 'bench', name: 'Bench IPO Limited', status: 'upcoming' } });
  const headers = { 'content-type': 'application/json', 'webhook-timestamp': '1790000000', 'webhook-signature': `v1,${'A'.repeat(44)}`, 'user-agent': 'ipokit-webhooks', 'webhook-id': 'bench' };
  const urls = Array.from({ length: ENDPOINTS }, (_, i) => new URL(`http://127.0.0.1:${receiver.port}/hooks/${i}`));
  const signal = new AbortController().signal;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < requests; i = next++) await transport({ url: urls[i % ENDPOINTS]!, headers, body, timeoutMs: 15_000, signal });
    }),
  );
  return Math.round(requests / ((performance.now() - started) / 1_000));
}

/** Part 2: the p50 and p95 of commit-to-first-attempt, ms. */
async function latency(store: BenchStore, receiver: Receiver): Promise<{ p50: number; p95: number }> {
  const account = await createAccount(store, { name: 'Latency', plan: 'pro', gmpAddon: true });
  const hook = await createWebhook(store, { accountId: account.id, url: `http://127.0.0.1:${receiver.port}/latency`, events: ['ipo.created'] }, { webhookAllowedNetworks: LOOPBACK });
  const worker = startWebhookWorker(store, { allowInsecureWebhooks: true, webhookAllowedNetworks: LOOPBACK, pollIntervalMs: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 300)); // idle: LISTEN set up, nothing due
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    await importDataset(store, { ipos: ipos(`l${i}-`, 1) });
    const committed = performance.timeOrigin + performance.now();
    const [delivery] = (await store.listDeliveries({ webhookId: hook.id, before: null, limit: 1 }))!;
    let at: number | null = null;
    for (let waited = 0; at === null && waited < 5_000; waited += 2) {
      at = (await receiver.ask<{ at: number | null }>({ ask: 'arrival', id: delivery!.eventId })).at;
      if (at === null) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (at === null) throw new Error('a delivery did not arrive within 5 s');
    times.push(Math.max(0, at - committed));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await worker.stop();
  times.sort((a, b) => a - b);
  return { p50: times[49]!, p95: times[94]! };
}

/**
 * Part 3: medians of a 10,000-snapshot import without and with an endpoint taking
 * gmp.snapshot, ms; and of the fan-out of the second's events into events and deliveries
 * afterwards (what a worker's claims do, off the import's path), ms.
 */
async function importCost(databaseUrl: string, rounds: number, log: (line: string) => void): Promise<{ without: number; with: number; fanOut: number }> {
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const results: { without: number[]; with: number[]; fanOut: number[] } = { without: [], with: [], fanOut: [] };
  try {
    for (const shape of ['without', 'with'] as const) {
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA}_${shape} CASCADE`);
      await migrate(admin, { schema: `${SCHEMA}_${shape}` });
    }
    const stores = {
      without: postgresStore({ client: admin, schema: `${SCHEMA}_without` }) as BenchStore,
      with: postgresStore({ client: admin, schema: `${SCHEMA}_with` }) as BenchStore,
    };
    const receiver = { port: 9 } as Receiver; // never sent to: no worker runs
    const [hook] = await endpoints(stores.with, receiver, ['gmp.snapshot'], 1); // one endpoint: 10,000 events, 10,000 deliveries
    for (const shape of ['without', 'with'] as const) await importDataset(stores[shape], { ipos: ipos('s', 100) });
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let round = 0; round < rounds; round++) {
      for (const shape of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
        // 100 IPOs x 100 new snapshots
        const gmp = Array.from({ length: 10_000 }, (_, i) => ({
          ipoId: `s${i % 100}`,
          timestamp: new Date(start + (round * 100 + Math.floor(i / 100)) * HOUR).toISOString(),
          sources: [{ name: 'ipowatch', gmpPrice: 40 + (i % 13) }, { name: 'investorgain', gmpPrice: 38.5 + (i % 7) }],
        }));
        const t = performance.now();
        await importDataset(stores[shape], { gmp });
        results[shape].push(performance.now() - t);
        if (shape === 'with') {
          // a listing makes every pending delivery first, as a worker's claims do
          const f = performance.now();
          await stores.with.listDeliveries({ webhookId: hook!, before: null, limit: 1 });
          results.fanOut.push(performance.now() - f);
        }
      }
      log(
        `webhooks: import round ${round + 1}/${rounds}: without ${results.without.at(-1)!.toFixed(0)} ms, with ${results.with.at(-1)!.toFixed(0)} ms (fan-out afterwards ${results.fanOut.at(-1)!.toFixed(0)} ms)`,
      );
    }
    for (const shape of ['without', 'with'] as const) await stores[shape].close?.();
  } finally {
    await admin.end();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { without: median(results.without), with: median(results.with), fanOut: median(results.fanOut) };
}

/**
 * Runs the three parts and returns their rows.
 *
 * @example
 * ```ts
 * console.log(formatRows(await runWebhooksBench({ databaseUrl: process.env.DATABASE_URL })));
 * ```
 */
export async function runWebhooksBench(options: WebhooksBenchOptions = {}): Promise<BenchRow[]> {
  const log = options.log ?? ((line: string) => console.error(line));
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const deliveries = options.deliveries ?? 32_000;
  const want = (part: 'throughput' | 'latency' | 'import'): boolean => options.parts === undefined || options.parts.includes(part);
  const rows: BenchRow[] = [];
  const receiver = await startReceiver();
  const node = nodeWebhookTransport({ allowedNetworks: LOOPBACK });
  try {
    if (want('throughput')) {
      log('webhooks: throughput, memory store');
      const memoryFetch = await throughput(memoryStore(), receiver, deliveries);
      rows.push({ group: 'Webhooks', name: `deliveries/s, one worker, memory store (${ENDPOINTS} endpoints, defaults: fetch)`, value: memoryFetch, unit: '/s' });
      // (three runs, and the median: one run of a few seconds moves by a third on this kind of machine)
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) runs.push(await throughput(memoryStore(), receiver, deliveries, node));
      const memory = [...runs].sort((a, b) => a - b)[1]!;
      rows.push({
        group: 'Webhooks',
        name: `deliveries/s, one worker, memory store (${ENDPOINTS} endpoints, nodeWebhookTransport as ipokit worker runs)`,
        value: memory,
        unit: '/s',
        target: '>= 10,000',
        pass: memory >= 10_000,
        note: `median of ${runs.map((r) => r.toLocaleString('en-US')).join(', ')}`,
      });
      const bare = await transportAlone(receiver, deliveries, node);
      rows.push({
        group: 'Webhooks',
        name: 'the same transport alone (64 at a time, no signing, no store, no worker) to the same receiver, requests/s',
        value: bare,
        unit: '/s',
        note: `the worker: ${(memory / bare).toFixed(2)}x`,
      });
    }
    if (want('latency')) {
      log('webhooks: latency, memory store');
      const memLatency = await latency(memoryStore(), receiver);
      rows.push({ group: 'Webhooks', name: 'write to first attempt, memory store, p50', value: round1(memLatency.p50), unit: 'ms', note: `p95 ${round1(memLatency.p95)} ms` });
    }

    const admin = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    let reachable = true;
    try {
      await admin.query('SELECT 1');
    } catch {
      reachable = false;
    }
    if (!reachable) {
      await admin.end();
      log(`webhooks: no PostgreSQL at ${databaseUrl}: its rows are left out`);
      return rows;
    }
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await migrate(admin, { schema: SCHEMA });
      const pgStore = postgresStore({ client: admin, schema: SCHEMA }) as BenchStore;
      if (want('throughput')) {
        log('webhooks: throughput, PostgreSQL');
        const onPg = await throughput(pgStore, receiver, Math.min(deliveries, 16_000), node);
        rows.push({ group: 'Webhooks', name: `deliveries/s, one worker, PostgreSQL (pool of 10, ${ENDPOINTS} endpoints, nodeWebhookTransport)`, value: onPg, unit: '/s', target: '>= 2,000', pass: onPg >= 2_000 });
      }
      if (want('latency')) {
        log('webhooks: latency, PostgreSQL');
        const pgLatency = await latency(pgStore, receiver);
        rows.push({ group: 'Webhooks', name: 'import commit to first attempt, PostgreSQL (LISTEN/NOTIFY), p50', value: round1(pgLatency.p50), unit: 'ms', target: '<= 50', pass: pgLatency.p50 <= 50, note: `p95 ${round1(pgLatency.p95)} ms` });
      }
      await pgStore.close?.();
    } finally {
      await admin.end();
    }
    if (!want('import')) return rows;
    log('webhooks: a 10,000-snapshot import with and without event recording');
    const cost = await importCost(databaseUrl, options.rounds ?? 9, log);
    const ratio = cost.with / cost.without;
    rows.push({
      group: 'Webhooks',
      name: '10,000-snapshot import on PostgreSQL, recording 10,000 gmp.snapshot events vs none',
      value: Math.round(ratio * 100) / 100,
      unit: 'x',
      target: '<= 1.15',
      pass: ratio <= 1.15,
      note: `${Math.round(cost.with)} vs ${Math.round(cost.without)} ms (medians)`,
    });
    rows.push({
      group: 'Webhooks',
      name: 'their fan-out into 10,000 events and deliveries afterwards (worker claims, off the import)',
      value: Math.round(cost.fanOut),
      unit: 'ms',
    });
  } finally {
    receiver.stop();
    node.close();
  }
  return rows;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const rows = await runWebhooksBench(only === undefined ? {} : { parts: only.split(',') as WebhooksBenchOptions['parts'] });
  console.log(formatRows(rows));
}
