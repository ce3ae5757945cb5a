import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset, isIpokitError, type EventType, type Store, type WebhookStore } from '@ipokit/core';
import { type ClaimedDelivery, type DeliveryRecord, type DeliveryResult, type WebhookRecord } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot, referenceStore, toDataset } from '@ipokit/testing';
import type { PostgresClient } from './client.js';
import { advisoryKey, deliveriesChannel, migrate, migrateUpTo, SCHEMA_VERSION } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { importDatasetStream } from './stream-import.js';
import { failingOnSnapshotInsert, interceptQueries, openTestDatabase, type TestDatabase } from './test-database.js';

// Webhooks on PostgreSQL (migration 6, docs/spec.md#webhooks), beyond the shared suite: events
// are recorded in the write's own transaction (a write that fails records none, and wakes no
// worker); concurrent claims never share a delivery; concurrent status-change recorders of
// several processes record each change once; watchDeliveries on every kind of client; the
// claim, lease and settling rules against the core's MemoryOutbox in random sequences; and
// a schema of version 5 upgrading.

const url = process.env.DATABASE_URL;
const KIND = url ? 'PostgreSQL' : 'PGlite';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('webhooks');
});
afterAll(() => db.close());

// 2026-11-24 10:00 IST, and the midnight that starts the 25th.
const T = Date.parse('2026-11-24T04:30:00.000Z');
const MIDNIGHT_25 = Date.parse('2026-11-24T18:30:00.000Z');
const ALL: EventType[] = ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'gmp.snapshot'];
const LEASE = 60_000;

function hook(id: string, events: EventType[], accountId = 'acct_1'): WebhookRecord {
  return { id, accountId, url: `https://example.com/${id}`, events, description: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null };
}

/** A fresh store over emptied tables, with account acct_1 and these endpoints. */
async function storeWith(hooks: WebhookRecord[]): Promise<Store & WebhookStore> {
  const store = await db.emptyStore();
  await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
  for (const h of hooks) expect(await store.insertWebhook(h, { maxPerAccount: 10 })).toBe('ok');
  return store;
}

async function count(table: string, schema = db.schema): Promise<number> {
  const { rows } = await db.client.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`);
  return Number((rows[0] as { n: number }).n);
}

const claimAll = (store: WebhookStore, now: number): Promise<ClaimedDelivery[]> =>
  store.claimDeliveries({ now, limit: 100_000, perWebhook: 100_000, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });

/** Claims until nothing is left due at `now` (a claim makes a bounded part of what is owed), in claim order. */
async function drain(store: WebhookStore, now: number): Promise<ClaimedDelivery[]> {
  const all: ClaimedDelivery[] = [];
  for (;;) {
    const got = await claimAll(store, now);
    if (got.length === 0) return all;
    all.push(...got);
  }
}

/**
 * A client on the test database whose statements matching `match` stop, before they run or
 * after (their transaction still open), until `release()`; `paused` resolves when the first
 * one has. For tests of two connections meeting on a lock.
 */
function pausing(match: RegExp, at: 'before' | 'after'): { client: PostgresClient; paused: Promise<void>; release: () => void } {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached = (): void => undefined;
  const paused = new Promise<void>((resolve) => (reached = resolve));
  const client = interceptQueries(db.client, async (text, params, next) => {
    if (!match.test(text)) return next(text, params);
    if (at === 'before') {
      reached();
      await released;
      return next(text, params);
    }
    const result = await next(text, params);
    reached();
    await released;
    return result;
  });
  return { client, paused, release };
}

/** A store with endpoint wh_all taking ipo.created, and one delivery to it, claimed and delivered: one a prune may take. */
async function settledDelivery(): Promise<{ store: Store & WebhookStore; claimed: ClaimedDelivery }> {
  const store = await storeWith([hook('wh_all', ['ipo.created'])]);
  await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
  const [claimed] = await claimAll(store, T);
  await store.finishDeliveries([{ id: claimed!.delivery.id, lease: claimed!.lease, at: T + 1, delivered: true, status: 204, error: null, nextAttemptAt: null, disableBefore: 0 }]);
  return { store, claimed: claimed! };
}

/** The items the streaming import reads for a dataset held as an object. */
function itemsOf(dataset: { ipos: unknown[]; gmp: unknown[] }, fail?: { after: number }) {
  return async function* items() {
    let n = 0;
    for (const key of ['ipos', 'gmp'] as const) {
      yield { kind: 'key' as const, key };
      yield { kind: 'value' as const, key, value: [] };
      for (const [index, value] of dataset[key].entries()) {
        if (fail !== undefined && ++n > fail.after) throw new Error('the source broke (injected)');
        yield key === 'ipos' ? { kind: 'ipo' as const, index, value } : { kind: 'snapshot' as const, index, value };
      }
    }
  };
}

/** How many ms until `done()` holds, polling every 10 ms; fails after `limitMs`. */
async function msUntil(done: () => boolean | Promise<boolean>, limitMs = 3_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await done()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`not done after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Another client object on the same database, as another process has: a pool of its own on
 * PostgreSQL; on PGlite (one per process) the same instance behind another object.
 */
function otherClient(): { client: PostgresClient; close(): Promise<void> } {
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    return { client: pool, close: () => pool.end() };
  }
  const target = db.client;
  const client = new Proxy(target, {
    get(t, property) {
      const value: unknown = Reflect.get(t, property, t);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
  return { client, close: async () => undefined };
}

describe(`webhook events are the write's own (${KIND})`, () => {
  const ipos = Array.from({ length: 3 }, (_, i) => makeIpo({ id: `new${i}`, symbol: `NEW${i}`, startDate: '2026-11-10' }));
  const snapshots = Array.from({ length: 6_000 }, (_, i) => makeSnapshot(`new${i % 3}`, Date.UTC(2026, 10, 1) + i * 60_000, { a: 100 + (i % 7) }));

  it('a write refused for its conflicts records no event and no delivery (writeDataset and the streaming import)', async () => {
    const store = await storeWith([hook('wh_all', ALL)]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'keep', symbol: 'KEEP' })], snapshots: [] }, { at: T });
    await claimAll(store, T);
    const [events, deliveries] = [await count('events'), await count('deliveries')];
    const clash = [makeIpo({ id: 'x1', symbol: 'keep' }), makeIpo({ id: 'x2' })];
    expect((await store.writeDataset({ ipos: clash, snapshots: [makeSnapshot('x2', T, { a: 1 })] }, { at: T + 1 })).length).toBe(1);
    const err = await importDatasetStream({ client: db.client, schema: db.schema, at: T + 2 }, itemsOf(toDataset({ ipos: clash, snapshots: [] }))).catch((e: unknown) => e);
    expect(isIpokitError(err, 'ERR:DATASET')).toBe(true);
    expect([await count('events'), await count('deliveries')]).toEqual([events, deliveries]);
    expect(await claimAll(store, T + 10)).toEqual([]);
  });

  it('a write that fails halfway (after events of its first batches were recorded) records none, and wakes no watcher', { timeout: 90_000 }, async () => {
    const store = await storeWith([hook('wh_all', ALL)]);
    let wakes = 0;
    const stop = await store.watchDeliveries!(() => wakes++);
    try {
      // writeDataset: the IPOs and the first 5,000 snapshots (with their events) are written, the second batch (1,000) fails
      const broken = postgresStore({ client: failingOnSnapshotInsert(db.client, 2), schema: db.schema });
      const err = await importDataset(broken, toDataset({ ipos, snapshots }), { now: () => new Date(T) }).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
      // the streaming import: the source breaks after 4,000 records, mid-transaction
      const source = await importDatasetStream({ client: db.client, schema: db.schema, at: T, batchSize: 1_000 }, itemsOf(toDataset({ ipos, snapshots }), { after: 4_000 })).catch(
        (e: unknown) => e,
      );
      expect((source as Error).message).toBe('the source broke (injected)');
      // and one that fails after its NOTIFY was sent: PostgreSQL drops it with the rollback
      let notified = false;
      const late = interceptQueries(db.client, (text, params, next) => {
        if (notified) return Promise.reject(new Error('lost after the NOTIFY (injected)'));
        if (text.includes('pg_notify')) notified = true;
        return next(text, params);
      });
      const afterNotify = await postgresStore({ client: late, schema: db.schema }).writeDataset({ ipos, snapshots: snapshots.slice(0, 10) }, { at: T }).catch((e: unknown) => e);
      expect(notified).toBe(true);
      expect(isIpokitError(afterNotify, 'ERR:UNAVAILABLE')).toBe(true);
      expect([await count('ipos'), await count('snapshots'), await count('owed'), await count('events'), await count('deliveries'), await count('snapshot_changes')]).toEqual([0, 0, 0, 0, 0, 0]);
      await sleep(300);
      expect(wakes).toBe(0);
      // The same import, whole: 3 ipo.created events owed (migration 11), and 6,000 gmp.snapshot
      // events as a row of snapshot_changes per batch (migration 9), no delivery made yet, one
      // NOTIFY; a listing makes some (bounded), claims the rest.
      await importDatasetStream({ client: db.client, schema: db.schema, at: T, batchSize: 1_000 }, itemsOf(toDataset({ ipos, snapshots })));
      expect([await count('owed'), await count('deliveries'), await count('snapshot_changes')]).toEqual([3, 0, 6]);
      await msUntil(() => wakes > 0);
      expect(await store.listDeliveries({ webhookId: 'wh_all', before: null, limit: 1 })).toHaveLength(1);
      expect(await count('deliveries')).toBe(4_096);
      expect((await drain(store, T)).length).toBe(6_003);
      expect([await count('events'), await count('deliveries'), await count('snapshot_changes')]).toEqual([6_003, 6_003, 0]);
    } finally {
      await stop();
    }
  });

  it('the streaming import records the events writeDataset records, in the same order', async () => {
    const hooks = [hook('wh_all', ALL), hook('wh_gmp', ['gmp.snapshot', 'ipo.updated'])];
    const first = { ipos: [makeIpo({ id: 'a', startDate: '2026-11-20', endDate: '2026-11-26' }), makeIpo({ id: 'b' })], snapshots: [makeSnapshot('a', T - 60_000, { x: 100 })] };
    const second = {
      ipos: [makeIpo({ id: 'a', startDate: '2026-11-20', endDate: '2026-11-23' }), makeIpo({ id: 'b' }), makeIpo({ id: 'c' })],
      snapshots: [makeSnapshot('a', T - 60_000, { x: 100 }), makeSnapshot('a', T, { x: 120 }), makeSnapshot('c', T, { y: 5 })],
    };
    const claimed = async (write: (store: Store & WebhookStore, data: typeof first, at: number) => Promise<unknown>) => {
      const store = await storeWith(hooks);
      await write(store, first, T);
      await drain(store, T);
      await write(store, second, T + 1);
      return (await drain(store, T + 1)).map((c) => [c.delivery.webhookId, c.delivery.eventType, JSON.parse(c.body)]);
    };
    const direct = await claimed((store, data, at) => store.writeDataset(data, { at }));
    const streamed = await claimed((_, data, at) => importDatasetStream({ client: db.client, schema: db.schema, at, batchSize: 1 }, itemsOf(toDataset(data))));
    expect(streamed).toEqual(direct);
    // in the owed order per endpoint, the endpoints of the account taking turns (the claim's rule)
    expect(direct.map(([w, type]) => `${w} ${type}`)).toEqual([
      'wh_all ipo.updated',
      'wh_gmp ipo.updated',
      'wh_all ipo.status_changed',
      'wh_gmp gmp.snapshot',
      'wh_all ipo.created',
      'wh_gmp gmp.snapshot',
      'wh_all gmp.snapshot',
      'wh_all gmp.snapshot',
    ]);
  });

  it('a write records its gmp.snapshot events as snapshot_changes rows; claims fan them out a thousand at a time as the write saw them, whatever happened since', async () => {
    const store = await storeWith([hook('wh_gmp', ['gmp.snapshot']), hook('wh_off', ['gmp.snapshot'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' }), makeIpo({ id: 'b' })], snapshots: [] }, { at: T });
    const written = Array.from({ length: 2_500 }, (_, i) => makeSnapshot(i % 2 === 0 ? 'a' : 'b', T - i * 60_000, { x: 100 + (i % 9) }));
    expect(await store.writeDataset({ ipos: [], snapshots: written }, { at: T + 1 })).toEqual([]);
    // a row per statement (of up to 5,000), nothing built or made yet
    expect([await count('snapshot_changes'), await count('owed'), await count('deliveries')]).toEqual([1, 0, 0]);
    // since the write: a snapshot rewritten, IPO b deleted, one endpoint disabled, one made
    await store.writeDataset({ ipos: [], snapshots: [makeSnapshot('a', T, { x: 999 })] }, { at: T + 2 });
    await store.deleteIpos(['b'], { at: T + 3 });
    await db.client.query(`UPDATE "${db.schema}".webhooks SET disabled_at = '2026-11-24T05:00:00.000Z' WHERE id = 'wh_off'`);
    expect(await store.insertWebhook(hook('wh_new', ['gmp.snapshot']), { maxPerAccount: 10 })).toBe('ok');
    // a claim that needs one delivery builds the row's first 1,000 snapshots' events, marks them
    // done, and makes at most 512 deliveries of them (migration 11)
    const first = await store.claimDeliveries({ now: T + 10, limit: 1, perWebhook: 100_000, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });
    expect(first).toHaveLength(1);
    expect([await count('owed'), await count('deliveries')]).toEqual([1_000, 512]);
    const { rows: marks } = await db.client.query(`SELECT done, cardinality(ipo_ids) AS n FROM "${db.schema}".snapshot_changes ORDER BY seq`);
    expect(marks).toEqual([
      { done: 1_000, n: 2_500 },
      { done: 0, n: 1 },
    ]);
    const claimed = [...first, ...(await drain(store, T + 10))];
    expect(await count('snapshot_changes')).toBe(0);
    // the write's 2,500 events, then the rewrite's one, to wh_gmp alone, in the write's order
    expect(claimed.map((c) => c.delivery.webhookId)).toEqual(Array(2_501).fill('wh_gmp'));
    const sent = claimed.map((c) => JSON.parse(c.body) as { timestamp: string; data: { ipoId: string; timestamp: string; aggregations: { mean: number } } });
    expect(sent.slice(0, 2_500).map((b) => [b.data.ipoId, Date.parse(b.data.timestamp), b.data.aggregations.mean])).toEqual(
      written.map((w) => [w.ipoId, w.timestamp, (w.aggregations.mean ?? 0) / 100]),
    );
    expect(new Set(sent.slice(0, 2_500).map((b) => b.timestamp))).toEqual(new Set([new Date(T + 1).toISOString()]));
    expect(sent[2_500]!.data).toMatchObject({ ipoId: 'a', timestamp: new Date(T).toISOString(), aggregations: { mean: 9.99 } });
    // each delivery made at its write's instant, due then
    expect(claimed.map((c) => c.delivery.createdAt)).toEqual([...Array(2_500).fill(T + 1), T + 2]);
    // writing the same snapshots again (but the one rewritten since) changes nothing, and records nothing
    expect(await store.writeDataset({ ipos: [], snapshots: written.filter((w) => w.ipoId === 'a' && w.timestamp !== T) }, { at: T + 20 })).toEqual([]);
    expect(await count('snapshot_changes')).toBe(0);
  });

  it('workers fanning out at once make each event once: 2 claimers on other clients, 8 rows', async () => {
    const store = await storeWith([hook('wh_gmp', ['gmp.snapshot'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    // 8 writes of 1,000: 8 rows
    for (let w = 0; w < 8; w++) {
      await store.writeDataset({ ipos: [], snapshots: Array.from({ length: 1_000 }, (_, i) => makeSnapshot('a', T - (w * 1_000 + i) * 60_000, { x: 100 })) }, { at: T + 1 });
    }
    expect(await count('snapshot_changes')).toBe(8);
    const others = [otherClient(), otherClient()];
    try {
      const claimers = others.map((o) => postgresStore({ client: o.client, schema: db.schema }));
      const got = await Promise.all(claimers.map((c) => c.claimDeliveries({ now: T + 10, limit: 500, perWebhook: 100_000, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() })));
      // each built rows the other did not hold, and took what was made (the second may find the
      // first's made deliveries enough, and take what the first left); none made or taken twice
      expect(got[0]!.length + got[1]!.length).toBeGreaterThanOrEqual(500);
      const rest = await drain(store, T + 10);
      expect(new Set([...got.flat(), ...rest].map((c) => c.delivery.id)).size).toBe(8_000);
      expect([await count('snapshot_changes'), await count('events'), await count('deliveries')]).toEqual([0, 8_000, 8_000]);
      const { rows } = await db.client.query(`SELECT count(DISTINCT body)::int AS n FROM "${db.schema}".events`);
      expect((rows[0] as { n: number }).n).toBe(8_000);
      await Promise.all(claimers.map((c) => c.close?.()));
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });

  // A claim locks what it may take, and a claim that runs meanwhile takes the rest. The claim
  // used to lock up to perWebhook due rows of each endpoint (here all 8,000) to pick 500, so
  // a second worker claiming while it ran got none (the test above then failed now and then).
  it.runIf(url)('a claim holds only the rows it can take: a second claim meanwhile takes the next ones (two connections: PostgreSQL only)', async () => {
    const store = await storeWith([hook('wh_gmp', ['gmp.snapshot'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [], snapshots: Array.from({ length: 8_000 }, (_, i) => makeSnapshot('a', T - i * 60_000, { x: 100 })) }, { at: T + 1 });
    await store.listDeliveries({ webhookId: 'wh_gmp', before: null, limit: 1 }); // every row fanned out
    const held = new pg.Client({ connectionString: url });
    const other = otherClient();
    await held.connect();
    try {
      const first = postgresStore({ client: held, schema: db.schema });
      const second = postgresStore({ client: other.client, schema: db.schema });
      const claim = (s: WebhookStore) => s.claimDeliveries({ now: T + 10, limit: 500, perWebhook: 100_000, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });
      // the first claim's statement runs in a transaction left open: its row locks stay held
      await held.query('BEGIN');
      const a = await claim(first);
      const b = await claim(second);
      await held.query('COMMIT');
      expect([a.length, b.length]).toEqual([500, 500]);
      expect(new Set([...a, ...b].map((c) => c.delivery.id)).size).toBe(1_000);
      await Promise.all([first.close?.(), second.close?.()]);
    } finally {
      await held.end();
      await other.close();
    }
  });
  // A row of snapshot_changes is built a thousand at a time, each step moving its `done` on. A
  // listing that meets a step in progress (a claim's) answers without waiting for it (#29
  // defect 4: a listing waits for no other work), with what is made; later claims build the
  // rest, as that step left the row: not the step's thousand again.
  it.runIf(url)('a listing that meets a row being built does not wait for it; the rest is built once (two connections: PostgreSQL only)', async () => {
    const store = await storeWith([hook('wh_gmp', ['gmp.snapshot'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [], snapshots: Array.from({ length: 2_500 }, (_, i) => makeSnapshot('a', T - i * 60_000, { x: 100 + i })) }, { at: T + 1 });
    // the claim's first step stops before it moves `done` on, holding the row
    const { client: slow, paused, release } = pausing(/SET done = done \+/, 'before');
    const other = otherClient();
    try {
      const claimer = postgresStore({ client: slow, schema: db.schema });
      const lister = postgresStore({ client: other.client, schema: db.schema });
      const claiming = claimer.claimDeliveries({ now: T + 10, limit: 1, perWebhook: 100_000, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });
      await paused;
      let listedWhileHeld = false;
      let holding = true;
      const listing = lister.listDeliveries({ webhookId: 'wh_gmp', before: null, limit: 1 }).then(() => {
        listedWhileHeld = holding;
      });
      await sleep(300);
      holding = false;
      release();
      expect(await claiming).toHaveLength(1);
      await listing;
      expect(listedWhileHeld).toBe(true);
      await drain(store, T + 10);
      expect([await count('snapshot_changes'), await count('events'), await count('deliveries')]).toEqual([0, 2_500, 2_500]);
      const { rows } = await db.client.query(`SELECT count(DISTINCT body)::int AS n FROM "${db.schema}".events`);
      expect((rows[0] as { n: number }).n).toBe(2_500);
      await Promise.all([claimer.close?.(), lister.close?.()]);
    } finally {
      await other.close();
    }
  });
  // A prune deletes a settled delivery and then its event, once no delivery names it. A replay
  // of that delivery that read it before the prune committed inserts a new delivery of the
  // event; its foreign-key check then waits for the prune, which deletes the event. The
  // replay failed with PostgreSQL's foreign-key error (ERR:UNAVAILABLE); the delivery it
  // replays is gone, so it is not found: null, as when the prune committed first.
  it.runIf(url)('a replay racing the prune that removes its delivery and event finds nothing, and fails no check (two connections: PostgreSQL only)', async () => {
    const { claimed } = await settledDelivery();
    // the prune stops after deleting the event, before it commits
    const { client: slow, paused, release } = pausing(/DELETE FROM \S+\.events/, 'after');
    const other = otherClient();
    try {
      const pruner = postgresStore({ client: slow, schema: db.schema });
      const replayer = postgresStore({ client: other.client, schema: db.schema });
      const pruning = pruner.pruneDeliveries({ before: T + 1_000, keepPerWebhook: 10_000 });
      await paused;
      let settled = false;
      const replaying = replayer.replayDelivery({ webhookId: 'wh_all', of: claimed.delivery.id, id: 'dlv_replayed', now: T + 2 }).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      void replaying.then(() => (settled = true));
      await sleep(300);
      // the replay waits for the prune (its foreign-key check on the event)
      expect(settled).toBe(false);
      release();
      expect(await pruning).toBe(1);
      expect(await replaying).toEqual({ value: null });
      expect([await count('events'), await count('deliveries')]).toEqual([0, 0]);
      await Promise.all([pruner.close?.(), replayer.close?.()]);
    } finally {
      release();
      await other.close();
    }
  });
  it.runIf(url)('a prune while a replay of its delivery is uncommitted keeps the event, and the replayed delivery sends it (two connections: PostgreSQL only)', async () => {
    const { store, claimed } = await settledDelivery();
    // the replay stops after inserting its delivery, before it commits
    const { client: slow, paused, release } = pausing(/INSERT INTO \S+\.deliveries/, 'after');
    const other = otherClient();
    try {
      const replayer = postgresStore({ client: slow, schema: db.schema });
      const pruner = postgresStore({ client: other.client, schema: db.schema });
      const replaying = replayer.replayDelivery({ webhookId: 'wh_all', of: claimed.delivery.id, id: 'dlv_replayed', now: T + 2 });
      await paused;
      // the prune does not wait: it takes the settled delivery and leaves the event, which the replay holds
      expect(await pruner.pruneDeliveries({ before: T + 1_000, keepPerWebhook: 10_000 })).toBe(1);
      release();
      expect(await replaying).toMatchObject({ id: 'dlv_replayed', state: 'pending' });
      const again = await claimAll(store, T + 2);
      expect(again.map((c) => [c.delivery.id, c.body])).toEqual([['dlv_replayed', claimed.body]]);
      await Promise.all([pruner.close?.(), replayer.close?.()]);
    } finally {
      release();
      await other.close();
    }
  });
});

describe(`webhook deliveries under concurrency (${KIND})`, () => {
  it('4 concurrent claimers over 2,000 pending deliveries get disjoint sets that cover them all', async () => {
    const store = await storeWith([hook('wh_a', ['ipo.created']), hook('wh_b', ['ipo.created'])]);
    await store.writeDataset({ ipos: Array.from({ length: 1_000 }, (_, i) => makeIpo({ id: `ipo${i}` })), snapshots: [] }, { at: T });
    const others = [otherClient(), otherClient()];
    // two store objects on this client, two on others (other processes)
    const claimers = [store, postgresStore({ client: db.client, schema: db.schema }), ...others.map((o) => postgresStore({ client: o.client, schema: db.schema }))];
    try {
      const got = await Promise.all(
        claimers.map(async (claimer) => {
          const mine: string[] = [];
          // (an empty claim is tried again a few times, as a worker polls: deliveries are made
          // by claims, and another claimer may be making the next ones right then)
          for (let empty = 0; empty < 5; ) {
            const batch = await claimer.claimDeliveries({ now: T, limit: 37, perWebhook: 25, perAccount: 100_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map() });
            if (batch.length === 0) {
              empty++;
              await sleep(20);
              continue;
            }
            empty = 0;
            mine.push(...batch.map((c) => c.delivery.id));
          }
          return mine;
        }),
      );
      const all = got.flat();
      expect(all.length).toBe(2_000);
      expect(new Set(all).size).toBe(2_000);
      if (url) expect(got.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
      expect(await claimAll(store, T + LEASE - 1)).toEqual([]);
    } finally {
      for (const c of claimers) await c.close?.();
      for (const o of others) await o.close();
    }
  });

  it('3 processes calling recordStatusChanges at one midnight record each change once', async () => {
    const store = await storeWith([hook('wh_sc', ['ipo.status_changed'])]);
    // 50 IPOs open on the 25th (IST)
    const ipos = Array.from({ length: 50 }, (_, i) => makeIpo({ id: `sc${i}`, startDate: '2026-11-25', endDate: '2026-11-27' }));
    await store.writeDataset({ ipos, snapshots: [] }, { at: T });
    await store.recordStatusChanges({ now: T });
    const others = [otherClient(), otherClient(), otherClient()];
    const processes = others.map((o) => postgresStore({ client: o.client, schema: db.schema }));
    try {
      for (let round = 0; round < 3; round++) {
        const now = MIDNIGHT_25 + round * 86_400_000;
        const results = await Promise.all(processes.flatMap((p, i) => [p.recordStatusChanges({ now: now + i }), p.recordStatusChanges({ now: now + i + 1 })]));
        // the 25th: 50 open; the 26th: nothing; the 27th: nothing (they close after the 27th)
        expect(results.reduce((n, r) => n + r.recorded, 0)).toBe(round === 0 ? 50 : 0);
        expect(results.every((r) => r.nextAt === Date.parse('2026-11-27T18:30:00.000Z'))).toBe(true);
      }
      expect((await claimAll(store, MIDNIGHT_25 + 3 * 86_400_000)).length).toBe(50);
    } finally {
      for (const p of processes) await p.close?.();
      for (const o of others) await o.close();
    }
  });
});

describe(`watchDeliveries (${KIND})`, () => {
  /** The clients a store may be given here, each with its own store object. */
  const clients: Array<[string, () => Promise<{ client: PostgresClient; close(): Promise<void> }>]> = url
    ? [
        ['a pool', async () => { const pool = new pg.Pool({ connectionString: url, max: 3 }); return { client: pool, close: () => pool.end() }; }],
        ['one pg.Client', async () => { const c = new pg.Client({ connectionString: url }); await c.connect(); return { client: c, close: () => c.end() }; }],
      ]
    : [['PGlite', async () => ({ client: db.client, close: async () => undefined })]];

  for (const [name, open] of clients) {
    it(`on ${name}: wakes after a commit that adds deliveries (a write of another process, a replay, a status change), not after a rollback nor a write that adds none`, { timeout: 60_000 }, async () => {
      const setup = await storeWith([hook('wh_a', ['ipo.created', 'ipo.status_changed'])]);
      await setup.close?.();
      const opened = await open();
      const other = otherClient();
      const watcher = postgresStore({ client: opened.client, schema: db.schema });
      const writer = postgresStore({ client: other.client, schema: db.schema });
      let wakes = 0;
      const stop = await watcher.watchDeliveries!(() => wakes++);
      try {
        // (a notification arrives within milliseconds; none is waited for 400 ms)
        const woke = async (what: () => Promise<unknown>, limitMs = 2_000): Promise<boolean> => {
          const before = wakes;
          await what();
          try {
            await msUntil(() => wakes > before, limitMs);
            return true;
          } catch {
            return false;
          }
        };
        expect(await woke(() => writer.writeDataset({ ipos: [makeIpo({ id: 'w1', startDate: '2026-11-25' })], snapshots: [] }, { at: T }))).toBe(true);
        // nothing changed: no event, no delivery, no wake
        expect(await woke(() => writer.writeDataset({ ipos: [makeIpo({ id: 'w1', startDate: '2026-11-25' })], snapshots: [] }, { at: T + 1 }), 400)).toBe(false);
        const failing = postgresStore({ client: failingOnSnapshotInsert(other.client, 1), schema: db.schema });
        expect(await woke(() => failing.writeDataset({ ipos: [makeIpo({ id: 'w2' })], snapshots: [makeSnapshot('w2', T, { a: 1 })] }, { at: T }).catch(() => undefined), 400)).toBe(false);
        const [c] = await claimAll(writer, T);
        // (a pending delivery replayed adds nothing: this one is settled first)
        await writer.finishDeliveries([{ id: c!.delivery.id, lease: c!.lease, at: T + 1, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: 0 }]);
        expect(await woke(() => writer.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_replayed', now: T + 5 }))).toBe(true);
        await writer.recordStatusChanges({ now: T });
        expect(await woke(() => writer.recordStatusChanges({ now: MIDNIGHT_25 + 1 }))).toBe(true);
        // the watcher's own writes too
        expect(await woke(() => watcher.writeDataset({ ipos: [makeIpo({ id: 'w3' })], snapshots: [] }, { at: T + 6 }))).toBe(true);
      } finally {
        await stop();
        await watcher.close?.();
        await writer.close?.();
        await other.close();
        await opened.close();
      }
      // stopped: no more wakes
      const after = wakes;
      const store = postgresStore({ client: db.client, schema: db.schema });
      await store.writeDataset({ ipos: [makeIpo({ id: 'w4' })], snapshots: [] }, { at: T + 7 });
      await sleep(200);
      expect(wakes).toBe(after);
    });
  }

  it.skipIf(!url)('on a pool: holds one connection of its own while it runs (the store runs one call fewer), gives it back on stop, and never holds pool.end() up', async () => {
    await storeWith([hook('wh_a', ['ipo.created'])]);
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    const held = () => pool.totalCount - pool.idleCount;
    const store = postgresStore({ client: pool, schema: db.schema, dataCacheTtlMs: 0 });
    const stop = await store.watchDeliveries!(() => undefined);
    expect(held()).toBe(1);
    const listening = async () =>
      (await db.client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${deliveriesChannel(db.schema)}"`])).rows[0] as { n: number };
    expect((await listening()).n).toBeGreaterThanOrEqual(1);
    await stop();
    expect(held()).toBe(0);
    // a pool of 1 (or one the cache already narrowed to 1) has none to spare: polling alone, and a stop all the same
    const small = new pg.Pool({ connectionString: url, max: 1 });
    const none = await postgresStore({ client: small, schema: db.schema }).watchDeliveries!(() => undefined);
    expect(small.totalCount - small.idleCount).toBe(0);
    await none();
    await small.end();
    // never stopped: pool.end() resolves all the same
    await store.watchDeliveries!(() => undefined);
    await pool.end(); // a LISTEN connection still held would keep this waiting until the test's timeout
  });
});

describe(`watchDeliveries when it cannot listen, or stops listening (${KIND})`, () => {
  it('on a client that cannot LISTEN (a wrapper without notifications) resolves all the same: the worker polls', async () => {
    await storeWith([hook('wh_a', ['ipo.created'])]);
    const wrapped = postgresStore({ client: interceptQueries(db.client, (text, params, next) => next(text, params)), schema: db.schema });
    let wakes = 0;
    const stop = await wrapped.watchDeliveries!(() => wakes++);
    await wrapped.writeDataset({ ipos: [makeIpo({ id: 'p1' })], snapshots: [] }, { at: T });
    await sleep(200);
    expect(wakes).toBe(0);
    await stop();
    await wrapped.close?.();
  });

  it.skipIf(!url)('on a pool: when its connection is lost it listens again by itself, and wakes then (notifications may have been missed)', async () => {
    await storeWith([hook('wh_a', ['ipo.created'])]);
    const pool = new pg.Pool({ connectionString: url, max: 3, application_name: 'ipokit-webhooks-test-dropped' });
    pool.on('error', () => undefined); // the LISTEN connection is killed on purpose
    const store = postgresStore({ client: pool, schema: db.schema, dataCacheTtlMs: 0 });
    const writer = postgresStore({ client: db.client, schema: db.schema });
    let wakes = 0;
    const stop = await store.watchDeliveries!(() => wakes++);
    const listener = async () =>
      (
        await db.client.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'ipokit-webhooks-test-dropped' AND query = $1`, [
          `LISTEN "${deliveriesChannel(db.schema)}"`,
        ])
      ).rows as Array<{ pid: number }>;
    try {
      await msUntil(async () => (await listener()).length === 1);
      await db.client.query('SELECT pg_terminate_backend($1)', [(await listener())[0]!.pid]);
      await writer.writeDataset({ ipos: [makeIpo({ id: 'l1' })], snapshots: [] }, { at: T }); // maybe missed
      await msUntil(() => wakes > 0, 5_000);
      await msUntil(async () => (await listener()).length === 1, 5_000);
      const before = wakes;
      await writer.writeDataset({ ipos: [makeIpo({ id: 'l2' })], snapshots: [] }, { at: T + 1 });
      await msUntil(() => wakes > before);
    } finally {
      await stop();
      await writer.close?.();
      await store.close?.();
      await pool.end();
    }
  });
});

// Issue #29 defect 4: 1,000 endpoints x 1,000 snapshots made 1,001,000 delivery rows, in the
// write (IPO events) or before any listing (snapshot events), and one account's backlog went
// out before another's delivery. A write now owes its events once (`owed`, and snapshot_changes
// slots), each endpoint's deliveries are made later, in bounded pieces, by claims (fairly) and
// by its own listing; docs/spec.md#storage.
describe(`bounded fan-out, fair claims, cap, replay, prune by count (${KIND})`, () => {
  const many = (n: number, account = 'acct_big', events: EventType[] = ['ipo.created', 'gmp.snapshot']) =>
    Array.from({ length: n }, (_, i) => hook(`wh_${account}_${String(i).padStart(3, '0')}`, events, account));
  /** A store with acct_1 (the victim, wh_v) and acct_big holding `n` endpoints. */
  const bigStore = async (n: number): Promise<Store & WebhookStore> => {
    const store = await storeWith([hook('wh_v', ['ipo.created', 'gmp.snapshot'])]);
    await store.insertAccount({ id: 'acct_big', name: 'Big', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
    for (const h of many(n)) expect(await store.insertWebhook(h, { maxPerAccount: 1_000 })).toBe('ok');
    return store;
  };
  const claimInput = (now: number, limit: number, perWebhook: number, perAccount: number) => ({ now, limit, perWebhook, perAccount, leaseMs: LEASE, busy: new Map<string, number>(), busyAccounts: new Map<string, number>() });

  it('a write owes its events once, whatever the number of endpoints: no delivery row is made in it', async () => {
    await bigStore(40);
    const store = postgresStore({ client: db.client, schema: db.schema });
    // 25 IPOs created: 41 endpoints take ipo.created (1,025 deliveries owed)
    await store.writeDataset({ ipos: Array.from({ length: 25 }, (_, i) => makeIpo({ id: `i${i}` })), snapshots: [] }, { at: T });
    expect([await count('deliveries'), await count('owed')]).toEqual([0, 25]);
    // then made on demand: all 1,025, each once
    expect((await claimAll(store, T)).length).toBe(41 * 25);
    expect(await count('deliveries')).toBe(41 * 25);
    await store.close?.();
  });

  it("a victim's listing makes its own deliveries only, never the other endpoints'", async () => {
    const store = await bigStore(30);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [], snapshots: Array.from({ length: 300 }, (_, i) => makeSnapshot('a', T - i * 60_000, { x: 100 + i })) }, { at: T + 1 });
    const listed = await store.listDeliveries({ webhookId: 'wh_v', before: null, limit: 5 });
    expect(listed!.map((d) => [d.eventType, d.createdAt])).toEqual(Array(5).fill(['gmp.snapshot', T + 1]));
    // its 301 deliveries; the 30 other endpoints' 9,030 are still owed
    expect(await count('deliveries')).toBe(301);
    const { rows } = await db.client.query(`SELECT DISTINCT webhook_id FROM "${db.schema}".deliveries`);
    expect(rows).toEqual([{ webhook_id: 'wh_v' }]);
  });

  it('claims make deliveries in bounded pieces: a claim of 10 makes about what it can take, not the backlog', async () => {
    const store = await bigStore(20);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [], snapshots: Array.from({ length: 1_000 }, (_, i) => makeSnapshot('a', T - i * 60_000, { x: 100 })) }, { at: T + 1 });
    const got = await store.claimDeliveries(claimInput(T + 10, 10, 4, 8));
    expect(got).toHaveLength(10);
    // 21 endpoints x 1,001 owed; at most 4 (perWebhook) made per endpoint
    expect(await count('deliveries')).toBeLessThanOrEqual(21 * 4);
  });

  it("claims share accounts fairly (the exact rule of WebhookStore.claimDeliveries) and name the endpoint's account", async () => {
    const store = await bigStore(3);
    // 4 endpoints (the victim's wh_v, 3 of acct_big) owe b0..b3 at T, then v at T + 1
    await store.writeDataset({ ipos: Array.from({ length: 4 }, (_, i) => makeIpo({ id: `b${i}` })), snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [makeIpo({ id: 'v' })], snapshots: [] }, { at: T + 1 });
    const got = await store.claimDeliveries({ ...claimInput(T + 10, 6, 2, 3), busy: new Map([['wh_acct_big_000', 1]]), busyAccounts: new Map([['acct_big', 1]]) });
    const ipo = (c: ClaimedDelivery) => (JSON.parse(c.body) as { data: { id: string } }).data.id;
    // per endpoint at most 2 less busy; per account at most 3 less busyAccounts (acct_big: 2);
    // then by busyAccounts + rankInAccount, nextAttemptAt, owed order, webhook id
    // (wh_v: b0, b1 ranked 1, 2; acct_big: 001's b0 and 002's b0 ranked 1, 2, then 000's b0
    // (busy 1 + rank 1) and the b1s, past perAccount less busyAccounts)
    expect(got.map((c) => [c.accountId, c.delivery.webhookId, ipo(c)])).toEqual([
      ['acct_1', 'wh_v', 'b0'],
      ['acct_big', 'wh_acct_big_001', 'b0'],
      ['acct_1', 'wh_v', 'b1'],
      ['acct_big', 'wh_acct_big_002', 'b0'],
    ]);
  });

  it('insertWebhook keeps the cap under concurrency: 30 at once with a cap of 10 store 10', async () => {
    const store = await storeWith([]);
    const others = [otherClient(), otherClient(), otherClient()];
    const stores = others.map((o) => postgresStore({ client: o.client, schema: db.schema }));
    try {
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3]!.insertWebhook(hook(`wh_cap_${i}`, ['ipo.created']), { maxPerAccount: 10 })));
      expect(results.filter((r) => r === 'ok').length).toBe(10);
      expect(results.filter((r) => r === 'too-many-webhooks').length).toBe(20);
      expect((await store.listWebhooks('acct_1'))!.length).toBe(10);
      expect(await store.insertWebhook(hook('wh_x', ['ipo.created'], 'acct_nope'), { maxPerAccount: 10 })).toBe('not-found');
    } finally {
      for (const s of stores) await s.close?.();
      for (const o of others) await o.close();
    }
  });

  it('replaying a pending delivery returns it and adds nothing; a settled one gets a new pending delivery after everything owed', async () => {
    const store = await storeWith([hook('wh_all', ['ipo.created'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    const [pending] = (await store.listDeliveries({ webhookId: 'wh_all', before: null, limit: 10 }))!;
    expect(await store.replayDelivery({ webhookId: 'wh_all', of: pending!.id, id: 'dlv_again', now: T + 5 })).toEqual(pending);
    expect(await count('deliveries')).toBe(1);
    const [c] = await claimAll(store, T);
    await store.finishDeliveries([{ id: c!.delivery.id, lease: c!.lease, at: T + 1, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: 0 }]);
    // a write owed at T + 2, and the replay at T + 2: the write's delivery comes first
    await store.writeDataset({ ipos: [makeIpo({ id: 'b' })], snapshots: [] }, { at: T + 2 });
    expect(await store.replayDelivery({ webhookId: 'wh_all', of: pending!.id, id: 'dlv_again', now: T + 2 })).toMatchObject({ id: 'dlv_again', state: 'pending', nextAttemptAt: T + 2 });
    const order = await claimAll(store, T + 2);
    expect(order.map((x) => (JSON.parse(x.body) as { data: { id: string } }).data.id)).toEqual(['b', 'a']);
  });

  it('pruneDeliveries also keeps at most keepPerWebhook settled deliveries per endpoint (newest), never pending ones', async () => {
    const store = await storeWith([hook('wh_a', ['ipo.created']), hook('wh_b', ['ipo.created'])]);
    for (let i = 0; i < 5; i++) await store.writeDataset({ ipos: [makeIpo({ id: `p${i}` })], snapshots: [] }, { at: T + i });
    const claimed = await claimAll(store, T + 10);
    // all settled but wh_b's last one (retried later)
    await store.finishDeliveries(
      claimed.map((c) => {
        const last = c.delivery.webhookId === 'wh_b' && c.delivery.createdAt === T + 4;
        return { id: c.delivery.id, lease: c.lease, at: T + 20, delivered: !last, status: last ? 500 : 200, error: last ? 'answered 500' : null, nextAttemptAt: last ? T + 99_999 : null, disableBefore: 0 };
      }),
    );
    expect(await store.pruneDeliveries({ before: T, keepPerWebhook: 2 })).toBe(3 + 2);
    const left = async (id: string) => (await store.listDeliveries({ webhookId: id, before: null, limit: 10 }))!.map((d) => [d.createdAt, d.state]);
    expect(await left('wh_a')).toEqual([[T + 4, 'delivered'], [T + 3, 'delivered']]);
    expect(await left('wh_b')).toEqual([[T + 4, 'pending'], [T + 3, 'delivered'], [T + 2, 'delivered']]);
    // events left without deliveries went (p0, p1)
    expect(await count('events')).toBe(3);
  });

  // Owed places are taken under the data lock (a cursor never passes one still to come). A
  // status change at midnight must not wait for a long import holding it: it is left for the
  // next call, which the answer makes due at once.
  it.runIf(url)('recordStatusChanges does not wait for a write holding the data lock: nothing recorded, due again at once; recorded once the write is done (PostgreSQL only)', async () => {
    const store = await storeWith([hook('wh_sc', ['ipo.status_changed'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'sc', startDate: '2026-11-25', endDate: '2026-11-27' })], snapshots: [] }, { at: T });
    await store.recordStatusChanges({ now: T });
    const held = new pg.Client({ connectionString: url });
    await held.connect();
    try {
      await held.query('BEGIN');
      await held.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', advisoryKey(`"${db.schema}".data`));
      // the lock is held until after this answers: waiting for it would never end (the test's timeout)
      const during = await store.recordStatusChanges({ now: MIDNIGHT_25 + 1 });
      expect(during.recorded).toBe(0);
      expect(during.nextAt).toBeLessThanOrEqual(MIDNIGHT_25 + 1);
      await held.query('COMMIT');
      expect(await store.recordStatusChanges({ now: MIDNIGHT_25 + 2 })).toEqual({ recorded: 1, nextAt: Date.parse('2026-11-27T18:30:00.000Z') });
      expect((await claimAll(store, MIDNIGHT_25 + 2)).map((c) => c.delivery.eventType)).toEqual(['ipo.status_changed']);
    } finally {
      await held.end();
    }
  });

  it('pruneDeliveries stops after a bounded amount of work (10,000 deliveries a call)', { timeout: 60_000 }, async () => {
    const store = await storeWith([hook('wh_a', ['ipo.created'])]);
    await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [] }, { at: T });
    const [c] = await claimAll(store, T);
    await store.finishDeliveries([{ id: c!.delivery.id, lease: c!.lease, at: T + 1, delivered: true, status: 200, error: null, nextAttemptAt: null, disableBefore: 0 }]);
    // 12,000 more settled deliveries of that event
    await db.client.query(
      `INSERT INTO "${db.schema}".deliveries (id, event_id, webhook_id, created_at, state, attempts, last_attempt_at)
       SELECT 'dlv_bulk_' || g, $1, 'wh_a', $2::bigint, 'delivered', 1, $2::bigint FROM generate_series(1, 12000) AS g`,
      [c!.delivery.eventId, T + 1],
    );
    expect(await store.pruneDeliveries({ before: T + 2, keepPerWebhook: 10_000 })).toBe(10_000);
    expect(await store.pruneDeliveries({ before: T + 2, keepPerWebhook: 10_000 })).toBe(2_001);
    expect(await count('events')).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------
// Claims, leases, settling, disabling, replay and pruning against the core's MemoryOutbox
// (the reference store's), step by step, with every answer compared exactly: the order of
// each claim, every delivery's record, and the endpoints.

type Op =
  | { kind: 'write'; ids: string[]; start: number; about: string | null; snap: number | null }
  | { kind: 'delete'; ids: string[] }
  | { kind: 'claim'; limit: number; perWebhook: number; perAccount: number; busy: number[]; busyAccounts: number[] }
  | { kind: 'finish'; picks: Array<{ pick: number; outcome: 'ok' | 'retry' | 'fail'; retryMs: number; disable: 'now' | 'soon' | 'never' }> }
  | { kind: 'tick'; ms: number }
  | { kind: 'replay'; pick: number; hook: number }
  | { kind: 'prune'; back: number; keep: number }
  | { kind: 'status' };

const HOOKS: WebhookRecord[] = [
  hook('wh_1', ALL),
  hook('wh_2', ['ipo.created', 'gmp.snapshot']),
  hook('wh_3', ['ipo.status_changed', 'ipo.deleted', 'ipo.updated']),
  hook('wh_4', ['ipo.created', 'ipo.updated', 'gmp.snapshot'], 'acct_2'),
];
const ACCOUNTS = ['acct_1', 'acct_2'];
const STARTS = ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26'];

function opArbitrary(): fc.Arbitrary<Op> {
  const ids = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 3 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), ids, start: fc.nat(STARTS.length - 1), about: fc.constantFrom(null, 'x', 'y'), snap: fc.option(fc.nat(3)) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), ids }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('claim' as const),
        limit: fc.integer({ min: 0, max: 5 }),
        perWebhook: fc.integer({ min: 1, max: 3 }),
        perAccount: fc.integer({ min: 1, max: 5 }),
        busy: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: HOOKS.length, maxLength: HOOKS.length }),
        busyAccounts: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: ACCOUNTS.length, maxLength: ACCOUNTS.length }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('finish' as const),
        picks: fc.array(fc.record({
            pick: fc.nat(),
            outcome: fc.constantFrom('ok' as const, 'retry' as const, 'fail' as const),
            retryMs: fc.constantFrom(0, 5_000, 600_000),
            disable: fc.constantFrom('now' as const, 'soon' as const, 'never' as const),
          }), {
          minLength: 1,
          maxLength: 4,
        }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(1_000, 30_000, LEASE, 6 * 3_600_000) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat(), hook: fc.nat(2) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), back: fc.constantFrom(0, 30_000, 3_600_000), keep: fc.constantFrom(1, 2, 10_000) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('status' as const) }) },
  );
}

/** A delivery without its random ids (the event's unless a status change's; the delivery's unless a replay named it), for comparing. */
function plain(d: DeliveryRecord): DeliveryRecord {
  return { ...d, id: d.id.startsWith('dlv_replay_') ? d.id : '?', eventId: d.eventId.startsWith('evt_sc_') ? d.eventId : '?' };
}

/** An endpoint's deliveries without their random ids, in an order of their own. */
async function deliveriesOf(store: WebhookStore, webhookId: string): Promise<string[] | null> {
  const listed = await store.listDeliveries({ webhookId, before: null, limit: 1_000 });
  return listed === null ? null : listed.map((d) => JSON.stringify(plain(d))).sort();
}

async function runModel(ops: Op[]): Promise<void> {
  const store = await storeWith([]);
  const model = referenceStore();
  await model.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
  for (const s of [store, model]) await s.insertAccount({ id: 'acct_2', name: 'Two', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
  for (const h of HOOKS) for (const s of [store, model]) expect(await s.insertWebhook(h, { maxPerAccount: 10 })).toBe('ok');
  // every pair claimed (ours, the model's)
  const claims: Array<[ClaimedDelivery, ClaimedDelivery]> = [];
  let now = T;
  let replays = 0;
  try {
    for (const op of ops) {
      const both = async <R>(fn: (s: Store & WebhookStore) => Promise<R>): Promise<[R, R]> => [await fn(store), await fn(model)];
      if (op.kind === 'write') {
        const ipos = op.ids.map((id) => makeIpo({ id, startDate: STARTS[op.start]!, endDate: '2026-11-26', about: op.about }));
        const snapshots = op.snap === null ? [] : op.ids.map((id) => makeSnapshot(id, T + 60_000 * (op.snap! % 2), { s: 100 + op.snap! }));
        const [a, b] = await both((s) => s.writeDataset({ ipos: structuredClone(ipos), snapshots: structuredClone(snapshots) }, { at: now }));
        expect(a).toEqual(b);
      } else if (op.kind === 'delete') {
        const [a, b] = await both((s) => s.deleteIpos([...op.ids], { at: now }));
        expect(a).toEqual(b);
      } else if (op.kind === 'claim') {
        const input = {
          now,
          limit: op.limit,
          perWebhook: op.perWebhook,
          perAccount: op.perAccount,
          leaseMs: LEASE,
          busy: new Map(op.busy.flatMap((n, i) => (n > 0 ? [[HOOKS[i]!.id, n] as const] : []))),
          busyAccounts: new Map(op.busyAccounts.flatMap((n, i) => (n > 0 ? [[ACCOUNTS[i]!, n] as const] : []))),
        };
        const [a, b] = await both((s) => s.claimDeliveries(input));
        // the same deliveries, in the same order
        expect(a.map((c) => ({ ...c, delivery: plain(c.delivery), lease: '' }))).toEqual(b.map((c) => ({ ...c, delivery: plain(c.delivery), lease: '' })));
        for (let i = 0; i < a.length; i++) claims.push([a[i]!, b[i]!]);
      } else if (op.kind === 'finish') {
        if (claims.length === 0) continue;
        const results: Array<[DeliveryResult, DeliveryResult]> = op.picks.map((p, i) => {
          const [a, b] = claims[p.pick % claims.length]!;
          const at = now + i;
          const base = { at, delivered: p.outcome === 'ok', status: p.outcome === 'ok' ? 200 : 500, error: p.outcome === 'ok' ? null : 'answered 500' };
          const rest = {
            ...base,
            nextAttemptAt: p.outcome === 'retry' ? at + p.retryMs : null,
            disableBefore: p.disable === 'now' ? at : p.disable === 'soon' ? at - 40_000 : 0,
          };
          return [
            { id: a.delivery.id, lease: a.lease, ...rest },
            { id: b.delivery.id, lease: b.lease, ...rest },
          ];
        });
        await store.finishDeliveries(results.map(([a]) => a));
        await model.finishDeliveries(results.map(([, b]) => b));
      } else if (op.kind === 'tick') {
        now += op.ms;
      } else if (op.kind === 'replay') {
        if (claims.length === 0) continue;
        const [a, b] = claims[op.pick % claims.length]!;
        const id = `dlv_replay_${++replays}`;
        const webhookId = HOOKS[op.hook]!.id;
        // (the core refuses a replay on a disabled endpoint before it reaches the store: the
        // store's answer to one is not pinned, MemoryOutbox keeps it pending, PostgreSQL ends it
        // as failed at the next claim as every pending delivery of a disabled endpoint)
        if (((await model.getWebhook(webhookId))?.disabledAt ?? null) !== null) continue;
        const got = await store.replayDelivery({ webhookId, of: a.delivery.id, id, now });
        const want = await model.replayDelivery({ webhookId, of: b.delivery.id, id, now });
        expect(got === null ? null : plain(got)).toEqual(want === null ? null : plain(want));
      } else if (op.kind === 'prune') {
        // (the newest kept are by createdAt, then by the deliveries' random ids: a tie at the
        // edge would keep different ones in each store, so such a prune keeps them all)
        let keep = op.keep;
        for (const h of HOOKS) {
          const settled = (await model.listDeliveries({ webhookId: h.id, before: null, limit: 1_000 }))!.filter((d) => d.state !== 'pending');
          if (settled.length > keep && settled[keep - 1]!.createdAt === settled[keep]!.createdAt) keep = 10_000;
        }
        const [a, b] = await both((s) => s.pruneDeliveries({ before: now - op.back, keepPerWebhook: keep }));
        expect(a).toBe(b);
      } else {
        const [a, b] = await both((s) => s.recordStatusChanges({ now }));
        expect(a).toEqual(b);
      }
      // Every endpoint and every delivery, as both hold them.
      for (const h of HOOKS) {
        expect(await store.getWebhook(h.id)).toEqual(await model.getWebhook(h.id));
        expect(await deliveriesOf(store, h.id)).toEqual(await deliveriesOf(model, h.id));
      }
    }
  } finally {
    await store.close?.();
    await model.close?.();
  }
}

describe(`claims, leases and settling against MemoryOutbox (${KIND})`, () => {
  it('an attempt in flight when its endpoint was disabled, retried later, ends as failed at the next claim, due or not; an old lease settles nothing', async () => {
    await runModel([
      { kind: 'write', ids: ['a', 'b'], start: 0, about: null, snap: null },
      { kind: 'claim', limit: 5, perWebhook: 3, perAccount: 5, busy: [0, 3, 3, 3], busyAccounts: [0, 0] },
      // the first fails for 40 s and more: wh_1 is disabled while the second is in flight
      { kind: 'finish', picks: [{ pick: 0, outcome: 'retry', retryMs: 5_000, disable: 'now' }] },
      { kind: 'finish', picks: [{ pick: 1, outcome: 'retry', retryMs: 600_000, disable: 'never' }] },
      { kind: 'claim', limit: 0, perWebhook: 1, perAccount: 5, busy: [0, 0, 0, 0], busyAccounts: [0, 0] },
      // leases run out, and a result under one of them comes late
      { kind: 'claim', limit: 5, perWebhook: 3, perAccount: 5, busy: [0, 0, 0, 0], busyAccounts: [0, 0] },
      { kind: 'tick', ms: LEASE },
      { kind: 'claim', limit: 1, perWebhook: 1, perAccount: 5, busy: [0, 0, 0, 0], busyAccounts: [0, 0] },
      { kind: 'finish', picks: [{ pick: 2, outcome: 'ok', retryMs: 0, disable: 'never' }] },
      { kind: 'replay', pick: 0, hook: 0 },
      { kind: 'claim', limit: 5, perWebhook: 3, perAccount: 5, busy: [0, 0, 0, 0], busyAccounts: [0, 0] },
    ]);
  });

  it('random writes, claims, finishes, clock moves, replays, prunes and status changes leave both the same (property)', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary(), { minLength: 5, maxLength: 40 }), (ops) => runModel(ops)),
      { numRuns: Number(process.env.MODEL_RUNS ?? (url ? 60 : 40)) },
    );
  });
});

describe(`migrations 6 to 11 (${KIND})`, () => {
  it('upgrades a version 5 schema, its data kept; a process of version 5 writes on, recording nothing; this version records events', async () => {
    const schema = `${db.schema}_v5`;
    const q = async (text: string, params: unknown[] = []) => (await db.client.query(text, params)).rows as Array<Record<string, unknown>>;
    try {
      expect(await migrateUpTo(db.client, { schema }, 5)).toEqual([1, 2, 3, 4, 5]);
      await q(`INSERT INTO "${schema}".accounts (id, name, plan, gmp_addon, created_at) VALUES ('acct_1', 'One', 'pro', true, '2026-11-20T10:00:00.000Z')`);
      await q(
        `INSERT INTO "${schema}".ipos (id, name, symbol_folded, slug, type, on_nse, on_bse, start_date, end_date, listing_date, doc)
         VALUES ('old', 'old', NULL, 'old', 'EQ', true, false, '2026-11-25', '2026-11-27', NULL, $1::json)`,
        [JSON.stringify(makeIpo({ id: 'old', startDate: '2026-11-25', endDate: '2026-11-27' }))],
      );
      // (6 up to this package's version: later migrations are not about webhooks)
      expect(await migrate(db.client, { schema })).toEqual(Array.from({ length: SCHEMA_VERSION - 5 }, (_, i) => 6 + i));
      expect(await migrate(db.client, { schema })).toEqual([]);
      // migrations 8 and 9: the rows that live from a write to the next claim are not compressed
      expect(await q(`SELECT attstorage FROM pg_attribute WHERE attrelid = '"${schema}".snapshot_events'::regclass AND attname = 'snapshots'`)).toEqual([{ attstorage: 'e' }]);
      expect(
        await q(`SELECT attname, attstorage FROM pg_attribute WHERE attrelid = '"${schema}".snapshot_changes'::regclass AND attnum > 0 AND attstorage <> 'p' ORDER BY attnum`),
      ).toEqual([...['ipo_ids', 'ts', 'agg_mean', 'agg_median', 'agg_min', 'agg_max', 'agg_mode'].map((attname) => ({ attname, attstorage: 'e' })), { attname: 'places', attstorage: 'x' }]);
      const store = postgresStore({ client: db.client, schema });
      try {
        expect(await store.insertWebhook(hook('wh_all', ALL), { maxPerAccount: 10 })).toBe('ok');
        // a process of version 5 writes as it did (its statement, no events)
        await q(`UPDATE "${schema}".ipos SET doc = $1::json WHERE id = 'old'`, [JSON.stringify(makeIpo({ id: 'old', name: 'renamed', startDate: '2026-11-25', endDate: '2026-11-27' }))]);
        expect(await count('events', schema)).toBe(0);
        // this version: the IPO of before is updated, a new one created, and its status changes recorded
        expect(await store.writeDataset({ ipos: [makeIpo({ id: 'old', startDate: '2026-11-25', endDate: '2026-11-27' }), makeIpo({ id: 'new' })], snapshots: [] }, { at: T })).toEqual([]);
        expect((await claimAll(store, T)).map((c) => c.delivery.eventType).sort()).toEqual(['ipo.created', 'ipo.updated']);
        expect(await store.recordStatusChanges({ now: MIDNIGHT_25 + 1 })).toEqual({ recorded: 1, nextAt: Date.parse('2026-11-27T18:30:00.000Z') });
        // a process of version 8 (a rolling deploy) records a snapshot's event as a snapshot_events row
        await q(`INSERT INTO "${schema}".snapshot_events (at, up_to, snapshots) SELECT $1, max(seq), $2::json FROM "${schema}".webhooks`, [
          T + 1,
          JSON.stringify([['new', T - 60_000, 5_000, 5_000, 4_000, 6_000, null]]),
        ]);
        // this version records one as a snapshot_changes row (migration 9)
        expect(await store.writeDataset({ ipos: [], snapshots: [makeSnapshot('new', T, { a: 100 })] }, { at: T + 2 })).toEqual([]);
        expect([await count('snapshot_events', schema), await count('snapshot_changes', schema)]).toEqual([1, 1]);
        // the claim fans out both, the older row first
        const sent = (await claimAll(store, T + 2)).map((c) => [c.delivery.eventType, c.delivery.createdAt, (JSON.parse(c.body) as { data: unknown }).data]);
        expect(sent).toEqual([
          ['gmp.snapshot', T + 1, { ipoId: 'new', timestamp: new Date(T - 60_000).toISOString(), aggregations: { mean: 50, median: 50, min: 40, max: 60, mode: null } }],
          ['gmp.snapshot', T + 2, { ipoId: 'new', timestamp: new Date(T).toISOString(), aggregations: expect.objectContaining({ mean: 1 }) as unknown }],
        ]);
        expect([await count('snapshot_events', schema), await count('snapshot_changes', schema)]).toEqual([0, 0]);
        // a process of version 10 (a rolling deploy, migration 11): its write makes an event and
        // its delivery at once (no place), and records a snapshot's event as a snapshot_changes
        // row without places; this version's claim sends both, the one without a place first
        const body = JSON.stringify({ type: 'ipo.deleted', timestamp: new Date(T + 3).toISOString(), data: { id: 'gone' } });
        await q(`INSERT INTO "${schema}".events (id, type, at, body) VALUES ('evt_v10', 'ipo.deleted', $1, $2)`, [T + 3, body]);
        await q(
          `INSERT INTO "${schema}".deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at) VALUES ('dlv_v10', 'evt_v10', 'wh_all', $1, 'pending', 0, $1)`,
          [T + 3],
        );
        await q(
          `INSERT INTO "${schema}".snapshot_changes (at, up_to, ipo_ids, ts, agg_mean, agg_median, agg_min, agg_max, agg_mode)
           SELECT $1, max(seq), ARRAY['new'], ARRAY[$2::bigint], ARRAY[7000::bigint], ARRAY[7000::bigint], ARRAY[7000::bigint], ARRAY[7000::bigint], ARRAY[NULL::bigint]
           FROM "${schema}".webhooks`,
          [T + 3, T - 120_000],
        );
        const late = (await claimAll(store, T + 3)).map((c) => [c.delivery.id === 'dlv_v10' ? c.body : c.delivery.eventType, c.delivery.createdAt]);
        expect(late).toEqual([
          [body, T + 3],
          ['gmp.snapshot', T + 3],
        ]);
        expect([await count('snapshot_changes', schema), await count('deliveries', schema)]).toEqual([0, 7]);
      } finally {
        await store.close?.();
      }
    } finally {
      await db.client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
