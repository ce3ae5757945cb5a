import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError, STATUS_VALUES, type Store } from '@ipokit/core';
import { type DatasetItem, type GmpBucketQuery, type IpoRecord, type ListQuery, type SubscriptionRecord } from '@ipokit/core/backend';
import { SUBSCRIPTION_CATEGORIES, type SubscriptionTimes } from '@ipokit/core';
import { datasetArbitrary, instantArbitrary, ipoDatesArbitrary, isoDateArbitrary, makeIpo, makeSnapshot, snapshotRecordArbitrary, testIpoStore } from '@ipokit/testing';
import type { PostgresClient } from './client.js';
import { dataChannel } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { importDatasetStream } from './stream-import.js';
import { interceptQueries, openTestDatabase, type TestDatabase } from './test-database.js';
import { timelineFits } from './timeline.js';

// The read cache of IPO data (docs/spec.md#storage): its answers are exactly the database's,
// a write through any store object on the same client is seen at once, one through another
// client (another process) as soon as its NOTIFY arrives, and within dataCacheTtlMs when
// notifications are lost; its memory is bounded and close() gives its connection back.

const url = process.env.DATABASE_URL;
const KIND = url ? 'PostgreSQL' : 'PGlite';

let db: TestDatabase;
/** db.client, counting every statement (the store cannot LISTEN through this wrapper). */
let counting: PostgresClient;
let statements = 0;
beforeAll(async () => {
  db = await openTestDatabase('cache');
  counting = interceptQueries(db.client, (text, params, next) => {
    statements += 1;
    return next(text, params);
  });
}, 60_000);
afterAll(() => db.close());

// ---------------------------------------------------------------------------------------
// Exactness: the whole IPO data suite (its examples and fast-check properties against the
// reference) with every read made twice, the second answered from memory.

testIpoStore({
  name: `postgresStore with the data cache on ${KIND}: every read made twice, the second from memory`,
  createStore: async () => {
    await db.clear();
    return repeatingReads(postgresStore({ client: counting, schema: db.schema, dataCacheTtlMs: 60_000 }));
  },
  destroyStore: (store) => store.close?.(),
});

/**
 * The store with each read made twice: the second must equal the first and, when the
 * cache keeps such an answer, cost no statement. Checked only when no other call of the
 * store ran meanwhile (the suite also reads during writes, on purpose).
 */
function repeatingReads(store: Store): Store {
  const running = new Set<{ alone: boolean }>();
  const call = async <T>(fn: () => Promise<T>, check?: (first: T) => Promise<void>): Promise<T> => {
    const me = { alone: running.size === 0 };
    for (const other of running) other.alone = false;
    running.add(me);
    try {
      const first = await fn();
      if (check !== undefined && me.alone) await check(first);
      return first;
    } finally {
      running.delete(me);
    }
  };
  const twice =
    <T>(read: () => Promise<T>, kept: (first: T) => boolean) =>
    async (first: T): Promise<void> => {
      const before = statements;
      const second = await read();
      expect(second).toEqual(first);
      if (kept(first)) expect(statements - before, 'a repeated read went to the database').toBe(0);
    };
  return {
    ...store,
    writeDataset: (input) => call(() => store.writeDataset(input)),
    deleteIpos: (ids) => call(() => store.deleteIpos(ids)),
    listIpos: (q, c) => {
      const read = async () => store.listIpos(q, c);
      return call(read, twice(read, () => Number.isSafeInteger(q.offset) && Number.isSafeInteger(q.limit)));
    },
    findIpo: (q, c) => {
      const read = async () => store.findIpo(q, c);
      return call(read, twice(read, (first) => first !== null));
    },
    gmpBuckets: (q, c) => {
      const read = async () => store.gmpBuckets(q, c);
      return call(read, twice(read, () => timelineFits(q)));
    },
  };
}

describe(`the data cache on ${KIND}`, () => {
  it('answers as an uncached store through random writes, deletions and reads at random clocks (property)', async () => {
    const arb = datasetArbitrary({ minIpos: 1, maxIpos: 6, maxSnapshots: 30 }).chain((universe) => {
      const ids = universe.ipos.map((i) => i.id);
      const identifiers = [...universe.ipos.flatMap((i) => [i.id, i.slug.toUpperCase(), ...(i.symbol === null ? [] : [i.symbol.toLowerCase()])]), 'nope'];
      const instants = [0, ...universe.snapshots.flatMap((x) => [x.timestamp - 1, x.timestamp, x.timestamp + 1])];
      // the request clock: anywhere, on a snapshot's instant or next to it, or no gmp at all
      const clock = fc.oneof(instantArbitrary(), fc.constantFrom(...instants));
      const gmpAt = fc.oneof(fc.constant(null), clock);
      // subscription snapshots near the GMP ones (so that both move on a page), read at the request clock too
      const subscriptionAt = fc.oneof(fc.constant(null), clock);
      const subscription = fc.record({
        ipoId: fc.constantFrom(...ids),
        timestamp: fc.constantFrom(...instants),
        times: fc.array(fc.option(fc.integer({ min: 0, max: 999_999_999 }), { nil: null }), { minLength: 8, maxLength: 8 }),
      }).map(({ ipoId, timestamp, times }): SubscriptionRecord => {
        const full = {} as SubscriptionTimes;
        SUBSCRIPTION_CATEGORIES.forEach((c, i) => (full[c] = times[i] === null || times[i] === undefined ? null : times[i] / 100));
        return { ipoId, timestamp, times: full };
      });
      const q = fc.option(fc.constantFrom('a', 'E', 'o', '-', '%', 'zz', ...universe.ipos.map((i) => i.name.slice(1, 3))), { freq: 2 });
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('write' as const),
          ipos: fc.subarray(universe.ipos),
          revised: fc.boolean(),
          dates: fc.array(ipoDatesArbitrary(), { minLength: ids.length, maxLength: ids.length }),
          snapshots: fc.subarray(universe.snapshots),
          more: fc.array(snapshotRecordArbitrary(ids), { maxLength: 6 }),
          subscription: fc.array(subscription, { maxLength: 6 }),
        }),
        fc.record({ kind: fc.constant('delete' as const), ids: fc.subarray([...ids, 'nope']) }),
        fc.record({ kind: fc.constant('find' as const), q: fc.record({ identifier: fc.constantFrom(...identifiers), gmpAt, subscriptionAt }) }),
        fc.record({
          kind: fc.constant('list' as const),
          q: fc.record<ListQuery>({
            status: fc.constantFrom(...STATUS_VALUES),
            today: isoDateArbitrary(),
            types: fc.option(fc.subarray(['EQ', 'SME', 'DEBT'] as const, { minLength: 1 }).map((t) => [...t])),
            source: fc.option(fc.constantFrom('nse' as const, 'bse' as const)),
            startDate: fc.option(isoDateArbitrary(), { freq: 4 }),
            endDate: fc.option(isoDateArbitrary(), { freq: 4 }),
            year: fc.option(fc.constantFrom('2026', '2027'), { freq: 4 }),
            offset: fc.nat(3),
            limit: fc.integer({ min: 1, max: 4 }),
            gmpAt,
            q,
            subscriptionAt,
          }),
        }),
        fc.record({
          kind: fc.constant('buckets' as const),
          q: fc
            .record({
              ipoId: fc.constantFrom(...ids, 'nope'),
              field: fc.constantFrom('mean' as const, 'median' as const, 'min' as const, 'max' as const, 'mode' as const),
              grid: fc.constantFrom({ size: 300_000, origin: 0 }, { size: 3_600_000, origin: 0 }, { size: 604_800_000, origin: 345_600_000 }),
              a: clock,
              b: clock,
            })
            .map(({ ipoId, field, grid, a, b }): GmpBucketQuery => ({ ipoId, field, from: Math.min(a, b), to: Math.max(a, b), ...grid })),
        }),
      );
      return fc.tuple(fc.constant(universe), fc.array(op, { minLength: 5, maxLength: 30 }));
    });
    await fc.assert(
      fc.asyncProperty(arb, async ([universe, ops]) => {
        await db.clear();
        // writes go through `cached`; `other` shares its client (so learns of them at once)
        const cached = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 60_000 });
        const other = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 60_000 });
        const plain = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 0 });
        const same = async <T>(read: (store: Store) => Promise<T>, label: string): Promise<void> => {
          const want = await read(plain);
          for (const store of [cached, cached, other]) expect(await read(store), label).toEqual(want);
        };
        try {
          for (const op of ops) {
            if (op.kind === 'write') {
              const ipos = op.revised
                ? op.ipos.map((ipo) => ({ ...ipo, name: `${ipo.name} (revised)`, ...op.dates[universe.ipos.indexOf(ipo)] }))
                : op.ipos;
              await cached.writeDataset({ ipos, snapshots: uniqueSnapshots([...op.more, ...op.snapshots]), subscription: uniqueSnapshots(op.subscription) });
            } else if (op.kind === 'delete') {
              await cached.deleteIpos(op.ids);
            } else if (op.kind === 'find') {
              await same(async (s) => s.findIpo(op.q), JSON.stringify(op.q));
            } else if (op.kind === 'list') {
              await same(async (s) => s.listIpos(op.q), JSON.stringify(op.q));
            } else {
              await same(async (s) => s.gmpBuckets(op.q), JSON.stringify(op.q));
            }
          }
        } finally {
          await Promise.all([cached.close?.(), other.close?.(), plain.close?.()]);
        }
      }),
      { numRuns: 30 },
    );
  }, 240_000);

  it('a write through one store object is seen at once by another on the same client, and by the streaming import', async () => {
    await db.clear();
    const writer = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 0 });
    const reader = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 60_000 });
    try {
      await writer.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      expect(await nameOf(reader)).toBe('v1');
      await writer.writeDataset({ ipos: [orbit('v2')], snapshots: [] });
      expect(await nameOf(reader)).toBe('v2');
      await importDatasetStream({ client: db.client, schema: db.schema }, itemsOf([orbit('v3')]));
      expect(await nameOf(reader)).toBe('v3');
      await writer.deleteIpos(['orbit']);
      expect(await reader.findIpo({ identifier: 'ORBIT', gmpAt: null })).toBeNull();
    } finally {
      await Promise.all([writer.close?.(), reader.close?.()]);
    }
  });

  it('a write through another client is seen as soon as its notification arrives', async () => {
    await db.clear();
    const second = await secondClient();
    const writer = postgresStore({ client: db.client, schema: db.schema });
    // a TTL no test waits for: only the notification can tell it
    const reader = postgresStore({ client: second.client, schema: db.schema, dataCacheTtlMs: 600_000 });
    try {
      await writer.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      expect(await nameOf(reader)).toBe('v1'); // cached; LISTEN starts
      await listening(db.schema, SECOND);
      for (const name of ['v2', 'v3']) {
        await writer.writeDataset({ ipos: [orbit(name)], snapshots: [] });
        await msUntil(async () => (await nameOf(reader)) === name, 30_000); // long before the TTL: only the notification can tell it
      }
    } finally {
      await Promise.all([writer.close?.(), reader.close?.()]);
      await second.close();
    }
  });

  it('without notifications (a client it cannot LISTEN on) a write elsewhere is seen within dataCacheTtlMs, not before the cache confirms', async () => {
    await db.clear();
    const TTL = 1_000;
    const writer = postgresStore({ client: db.client, schema: db.schema });
    const deaf = postgresStore({ client: interceptQueries(db.client, (t, p, next) => next(t, p)), schema: db.schema, dataCacheTtlMs: TTL });
    try {
      await writer.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      expect(await nameOf(deaf)).toBe('v1');
      const confirmed = performance.now(); // the read's statement was sent before this
      await writer.writeDataset({ ipos: [orbit('v2')], snapshots: [] });
      // the cache answers (a moment ago it confirmed the data), stale by design
      if (performance.now() - confirmed < TTL) expect(await nameOf(deaf)).toBe('v1');
      // a read that starts dataCacheTtlMs after the confirmation asks the database
      await sleepUntil(confirmed + TTL);
      expect(await nameOf(deaf)).toBe('v2');
    } finally {
      await Promise.all([writer.close?.(), deaf.close?.()]);
    }
  });

  it('is bounded in memory: entries larger than dataCacheMaxBytes are not kept, and answers stay exact', async () => {
    await db.clear();
    const tiny = postgresStore({ client: counting, schema: db.schema, dataCacheMaxBytes: 1 });
    const roomy = postgresStore({ client: counting, schema: db.schema });
    const t0 = Date.UTC(2026, 10, 1);
    const snapshots = Array.from({ length: 50 }, (_, i) => makeSnapshot('orbit', t0 + i * 60_000, { a: 100 + i }));
    try {
      await roomy.writeDataset({ ipos: [orbit('v1')], snapshots });
      const q: GmpBucketQuery = { ipoId: 'orbit', field: 'mean', from: t0, to: t0 + 3_600_000, size: 300_000, origin: 0 };
      const costs = async (store: Store): Promise<number> => {
        const before = statements;
        expect(await nameOf(store)).toBe('v1');
        expect((await store.gmpBuckets(q)).map((b) => b.count)).toEqual(Array.from({ length: 10 }, () => 5));
        return statements - before;
      };
      await costs(tiny);
      await costs(roomy);
      expect(await costs(tiny)).toBe(2);
      expect(await costs(roomy)).toBe(0);
    } finally {
      await Promise.all([tiny.close?.(), roomy.close?.()]);
    }
  });

  it('checks its options, and dataCacheTtlMs: 0 reads the database every time', async () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      expect(() => postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: bad })).toThrow(/dataCacheTtlMs must be/);
    }
    for (const bad of [0, -5, 0.5]) {
      expect(() => postgresStore({ client: db.client, schema: db.schema, dataCacheMaxBytes: bad })).toThrow(/dataCacheMaxBytes must be/);
    }
    await db.clear();
    const off = postgresStore({ client: counting, schema: db.schema, dataCacheTtlMs: 0 });
    try {
      await off.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      const before = statements;
      for (let i = 0; i < 3; i++) expect(await nameOf(off)).toBe('v1');
      expect(statements - before).toBe(3);
    } finally {
      await off.close?.();
    }
  });

  it('a closed store answers nothing from its cache', async () => {
    await db.clear();
    const store = postgresStore({ client: db.client, schema: db.schema });
    await store.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
    expect(await nameOf(store)).toBe('v1');
    await store.close?.();
    const err = await Promise.resolve(store.findIpo({ identifier: 'ORBIT', gmpAt: null })).catch((e: unknown) => e);
    expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
  });
});

describe.skipIf(!url)('the LISTEN connection (PostgreSQL; skipped without DATABASE_URL)', () => {
  it('is one connection of the pool per client and schema, given back by the last close(), and never holds pool.end() up', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    const held = () => pool.totalCount - pool.idleCount;
    try {
      const writer = postgresStore({ client: db.client, schema: db.schema });
      await db.clear();
      await writer.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      await writer.close?.();
      const a = postgresStore({ client: pool, schema: db.schema });
      const b = postgresStore({ client: pool, schema: db.schema });
      expect(await nameOf(a)).toBe('v1');
      expect(await nameOf(b)).toBe('v1');
      await msUntil(async () => held() === 1);
      expect(held()).toBe(1);
      await a.close?.();
      expect(held()).toBe(1); // b still caches
      await b.close?.();
      expect(held()).toBe(0);
      // a store never closed: pool.end() resolves all the same
      const forgotten = postgresStore({ client: pool, schema: db.schema });
      expect(await nameOf(forgotten)).toBe('v1');
      await msUntil(async () => held() === 1);
      expect(held()).toBe(1);
    } finally {
      await pool.end(); // a LISTEN connection still held would keep this waiting until the test's timeout
    }
  });

  it('when it drops, writes are seen within dataCacheTtlMs; it comes back by itself, and with it the notifications', async () => {
    await db.clear();
    const TTL = 1_000;
    const pool = new pg.Pool({ connectionString: url, max: 4, application_name: DROPPED });
    pool.on('error', () => undefined); // the LISTEN connection is killed on purpose
    const writer = postgresStore({ client: db.client, schema: db.schema });
    const short = postgresStore({ client: pool, schema: db.schema, dataCacheTtlMs: TTL });
    const long = postgresStore({ client: pool, schema: db.schema, dataCacheTtlMs: 600_000 });
    try {
      await writer.writeDataset({ ipos: [orbit('v1')], snapshots: [] });
      expect(await nameOf(short)).toBe('v1');
      expect(await nameOf(long)).toBe('v1');
      // both reads went to the database (the two stores share what the pool knows): the
      // last confirmation of v1 was sent before this
      const confirmed = performance.now();
      const pid = await listening(db.schema, DROPPED);
      await db.client.query('SELECT pg_terminate_backend($1)', [pid]);
      await writer.writeDataset({ ipos: [orbit('v2')], snapshots: [] }); // its NOTIFY is lost
      if (performance.now() - confirmed < TTL) expect(await nameOf(short)).toBe('v1');
      await sleepUntil(confirmed + TTL);
      expect(await nameOf(short)).toBe('v2');
      // a read after the connection was lost listens again
      await msUntil(async () => {
        await nameOf(long);
        return (await listeners(db.schema, DROPPED)).length === 1;
      }, 5_000);
      expect(await listeners(db.schema, DROPPED)).toHaveLength(1);
      // `long` confirms only every 300 s: only the notification can tell it now
      await writer.writeDataset({ ipos: [orbit('v3')], snapshots: [] });
      await msUntil(async () => (await nameOf(long)) === 'v3', 30_000); // long before the TTL: only the notification can tell it
    } finally {
      await Promise.all([writer.close?.(), short.close?.(), long.close?.()]);
      await pool.end();
    }
  });
});

// ---------------------------------------------------------------------------------------

function orbit(name: string): IpoRecord {
  return makeIpo({ id: 'orbit', name, symbol: 'ORBIT', slug: 'orbit-ipo', startDate: '2026-11-20', endDate: '2026-11-24' });
}

async function nameOf(store: Store): Promise<string | undefined> {
  return (await store.findIpo({ identifier: 'ORBIT', gmpAt: null }))?.ipo.name;
}

/** Snapshots with the first of each (ipoId, instant): a write's input is free of duplicates. */
function uniqueSnapshots<T extends { ipoId: string; timestamp: number }>(snapshots: T[]): T[] {
  const seen = new Set<string>();
  return snapshots.filter((x) => {
    const key = `${x.ipoId}\u0000${x.timestamp}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Waits until `performance.now()` has passed `at`. */
async function sleepUntil(at: number): Promise<void> {
  while (performance.now() <= at) await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(at - performance.now()))));
}

/** How many ms until `done()` holds, polling every 10 ms; fails after `limitMs`. */

async function msUntil(done: () => Promise<boolean>, limitMs = 3_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await done()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`not done after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The `application_name` of the test's own pools: their LISTEN is told apart from others' (PostgreSQL). */
const SECOND = 'ipokit-cache-test-second';
const DROPPED = 'ipokit-cache-test-dropped';

/** The backends of `application` listening for the schema's data version (PostgreSQL). */
async function listeners(schema: string, application: string): Promise<number[]> {
  const { rows } = await db.client.query(`SELECT pid FROM pg_stat_activity WHERE query = $1 AND state = 'idle' AND application_name = $2`, [
    `LISTEN "${dataChannel(schema)}"`,
    application,
  ]);
  return rows.map((r) => (r as { pid: number }).pid);
}

/** Waits until the schema's LISTEN has run: its backend on PostgreSQL, a moment on PGlite. */
async function listening(schema: string, application: string): Promise<number> {
  if (db.kind === 'pglite') {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return 0;
  }
  await msUntil(async () => (await listeners(schema, application)).length === 1);
  return (await listeners(schema, application))[0]!;
}

/**
 * Another client object on the same database, as another process would have: a second
 * pool on PostgreSQL; on PGlite (one per process) the same instance behind another object.
 */
async function secondClient(): Promise<{ client: PostgresClient; close(): Promise<void> }> {
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 3, application_name: SECOND });
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

/** The items the streaming import reads for a dataset of these IPOs. */
function itemsOf(ipos: IpoRecord[]): () => AsyncIterable<DatasetItem> {
  return async function* items() {
    yield { kind: 'key', key: 'ipos' };
    yield { kind: 'value', key: 'ipos', value: [] };
    for (const [index, value] of ipos.entries()) yield { kind: 'ipo', index, value };
  };
}
