/**
 * Webhook fan-out on PostgreSQL (issue #29 defect 4, docs/spec.md#webhooks), store-level:
 *
 * 1. **A victim's listing beside a big fan-out**: account "big" with E endpoints taking
 *    `gmp.snapshot`, one write of 1,000 snapshots (E x 1,000 deliveries owed), then account
 *    "victim"'s one endpoint lists its deliveries (`limit` 5). E = 100 and 1,000. Target:
 *    well under a second.
 * 2. **A victim's delivery behind a big account**: account "big" with 300 endpoints x 1,000
 *    events owed, then the victim's one event; a simulated worker (64 attempts in flight, 4
 *    per endpoint, 16 per account, each attempt 20 ms, settled as delivered) claims until the
 *    victim's delivery is claimed: how long after its write, and how many attempts went first.
 * 3. **Making 100,000 deliveries at 1,000 endpoints**: 100 snapshots written, then claims
 *    (limit 1,000, as many per endpoint and account as asked) until all 100,000 are claimed,
 *    settled at once; the total time.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx --conditions=source bench/webhook-fanout.ts [-- --only=listing,lateness,make] [--cut=120000]
 *
 * `--cut` bounds each measure (ms): a measure that has not ended then is reported as "> cut".
 */
import pg from 'pg';
import type { IpoStore, Store, WebhookStore } from '@ipokit/core';
import type { ClaimedDelivery, WebhookRecord } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { formatRows, type BenchRow } from './rows.js';

type BenchStore = Store & IpoStore & WebhookStore;
const SCHEMA = 'ipokit_bench_fanout';
const T = Date.parse('2026-11-24T04:30:00.000Z');
const LEASE = 60_000;

function hook(id: string, accountId: string, events: string[]): WebhookRecord {
  return { id, accountId, url: `https://example.com/${id}`, events, description: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null };
}

async function freshStore(pool: pg.Pool): Promise<BenchStore> {
  await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await migrate(pool, { schema: SCHEMA });
  const store = postgresStore({ client: pool, schema: SCHEMA }) as unknown as BenchStore;
  for (const id of ['big', 'victim']) await store.insertAccount({ id, name: id, plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
  return store;
}

/** Endpoints big_0.. of account big taking `events` (no cap: the bench is the operator). */
async function bigEndpoints(store: BenchStore, n: number, events: string[]): Promise<void> {
  for (let i = 0; i < n; i++) await store.insertWebhook(hook(`wh_big_${String(i).padStart(4, '0')}`, 'big', events), { maxPerAccount: Infinity });
}

const snapshots = (n: number, ipo: string, from: number) => Array.from({ length: n }, (_, i) => makeSnapshot(ipo, from - i * 60_000, { a: 100 + (i % 50) }));

/** `fn`'s time in ms, or null when it has not ended after `cut` ms (it goes on in the background). */
async function timed(fn: () => Promise<unknown>, cut: number): Promise<number | null> {
  const start = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = await Promise.race([fn().then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), cut)))]);
  clearTimeout(timer);
  return done ? performance.now() - start : null;
}

async function listing(pool: pg.Pool, endpoints: number, cut: number): Promise<BenchRow> {
  const store = await freshStore(pool);
  await bigEndpoints(store, endpoints, ['gmp.snapshot']);
  await store.insertWebhook(hook('wh_victim', 'victim', ['ipo.created', 'gmp.snapshot']), { maxPerAccount: 10 });
  await store.writeDataset({ ipos: [makeIpo({ id: 'big_ipo' })], snapshots: [] }, { at: T });
  const writeMs = await timed(() => store.writeDataset({ ipos: [], snapshots: snapshots(1_000, 'big_ipo', T) }, { at: T + 1 }), cut);
  const ms = await timed(() => store.listDeliveries({ webhookId: 'wh_victim', before: null, limit: 5 }), cut);
  return {
    group: 'fan-out',
    name: `victim's listing (limit 5) beside ${endpoints.toLocaleString('en-US')} endpoints x 1,000 snapshots`,
    value: ms === null ? cut : Math.round(ms),
    unit: ms === null ? 'ms (cut: not done)' : 'ms',
    target: '< 1,000 ms',
    pass: ms !== null && ms < 1_000,
    note: `the write: ${writeMs === null ? `> ${cut}` : Math.round(writeMs)} ms`,
  };
}

async function lateness(pool: pg.Pool, cut: number): Promise<BenchRow[]> {
  const store = await freshStore(pool);
  await bigEndpoints(store, 300, ['gmp.snapshot']);
  await store.writeDataset({ ipos: [makeIpo({ id: 'big_ipo' })], snapshots: [] }, { at: T });
  // (made after big_ipo's creation: its one event is the victim's own)
  await store.insertWebhook(hook('wh_victim', 'victim', ['ipo.created']), { maxPerAccount: 10 });
  await store.writeDataset({ ipos: [], snapshots: snapshots(1_000, 'big_ipo', T) }, { at: T + 1 });
  // a worker already busy with the big account's backlog when the victim's event comes
  const busy = new Map<string, number>();
  const busyAccounts = new Map<string, number>();
  let inFlight = 0;
  let attempts = 0;
  let victimAt: number | null = null;
  let victimWritten = 0;
  let before = 0;
  const started = performance.now();
  const finishes: Array<Promise<void>> = [];
  const attempt = (c: ClaimedDelivery): void => {
    const account = c.accountId ?? (c.delivery.webhookId === 'wh_victim' ? 'victim' : 'big');
    busy.set(c.delivery.webhookId, (busy.get(c.delivery.webhookId) ?? 0) + 1);
    busyAccounts.set(account, (busyAccounts.get(account) ?? 0) + 1);
    inFlight++;
    attempts++;
    finishes.push(
      new Promise<void>((resolve) => setTimeout(resolve, 20)).then(async () => {
        await store.finishDeliveries([{ id: c.delivery.id, lease: c.lease, at: T + 2, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: 0 }]);
        busy.set(c.delivery.webhookId, busy.get(c.delivery.webhookId)! - 1);
        busyAccounts.set(account, busyAccounts.get(account)! - 1);
        inFlight--;
      }),
    );
  };
  let wrote = false;
  while (victimAt === null && performance.now() - started < cut) {
    if (!wrote && attempts >= 2_000) {
      wrote = true;
      await store.writeDataset({ ipos: [makeIpo({ id: 'victim_ipo' })], snapshots: [] }, { at: T + 2 });
      victimWritten = performance.now();
      before = attempts;
    }
    const room = 64 - inFlight;
    if (room > 0) {
      const claimed = await store.claimDeliveries({ now: T + 10, limit: room, perWebhook: 4, perAccount: 16, leaseMs: LEASE, busy, busyAccounts });
      for (const c of claimed) {
        if (c.delivery.webhookId === 'wh_victim') victimAt = performance.now();
        else if (victimAt === null) attempt(c);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.allSettled(finishes);
  const ms = victimAt === null ? null : victimAt - victimWritten;
  return [
    {
      group: 'fairness',
      name: "victim's delivery claimed after its write, behind 300 endpoints x 1,000 events of another account",
      value: ms === null ? cut : Math.round(ms),
      unit: ms === null ? 'ms (cut: not claimed)' : 'ms',
      target: '<= about one attempt (20 ms here) + a claim',
      note: `${(attempts - before).toLocaleString('en-US')} attempts of the big account claimed after the victim's write and before its delivery; worker: 64 in flight, 4/endpoint, 16/account, 20 ms/attempt`,
    },
  ];
}

async function make(pool: pg.Pool, cut: number): Promise<BenchRow> {
  const store = await freshStore(pool);
  await bigEndpoints(store, 1_000, ['gmp.snapshot']);
  await store.writeDataset({ ipos: [makeIpo({ id: 'big_ipo' })], snapshots: [] }, { at: T });
  await store.writeDataset({ ipos: [], snapshots: snapshots(100, 'big_ipo', T) }, { at: T + 1 });
  let claimedAll = 0;
  const ms = await timed(async () => {
    for (;;) {
      const claimed = await store.claimDeliveries({ now: T + 10, limit: 1_000, perWebhook: 1_000, perAccount: 1_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });
      if (claimed.length === 0) break;
      claimedAll += claimed.length;
      await store.finishDeliveries(claimed.map((c) => ({ id: c.delivery.id, lease: c.lease, at: T + 11, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: 0 })));
    }
  }, cut);
  return {
    group: 'fan-out',
    name: 'making and claiming 100,000 deliveries (1,000 endpoints x 100 snapshots), claims of 1,000',
    value: ms === null ? cut : Math.round(ms),
    unit: ms === null ? 'ms (cut: not done)' : 'ms',
    note: `${claimedAll.toLocaleString('en-US')} claimed; ${ms === null ? '' : `${Math.round((claimedAll / ms) * 1000).toLocaleString('en-US')} deliveries/s`}`,
  };
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') {
    console.log('webhook-fanout: no DATABASE_URL, nothing measured.');
    return;
  }
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['listing', 'lateness', 'make'];
  const cut = Number(process.argv.find((a) => a.startsWith('--cut='))?.slice(6) ?? 120_000);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const rows: BenchRow[] = [];
  try {
    if (only.includes('listing')) for (const e of [100, 1_000]) rows.push(await listing(pool, e, cut));
    if (only.includes('lateness')) rows.push(...(await lateness(pool, cut)));
    if (only.includes('make')) rows.push(await make(pool, cut));
  } finally {
    console.log(formatRows(rows));
    await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`).catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
  process.exit(0);
}

await main();
