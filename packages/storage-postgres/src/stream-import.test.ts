import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset, IpokitError, isIpokitError } from '@ipokit/core';
import { type DatasetItem } from '@ipokit/core/backend';
import { datasetArbitrary, makeIpo, makeSnapshot, toDataset } from '@ipokit/testing';
import { migrate } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { importDatasetStream, type StreamImportProgress } from './stream-import.js';
import { failingOnSnapshotInsert, openTestDatabase, type TestDatabase } from './test-database.js';

// The streaming import against importDataset: the same stored result, the same problems,
// all or nothing. `db.schema` receives streamed imports, `other` the same data through
// importDataset.

const ON = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
let db: TestDatabase;
let other: string;
beforeAll(async () => {
  db = await openTestDatabase('stream');
  other = `${db.schema}_ref`;
  await migrate(db.client, { schema: other });
});
afterAll(async () => {
  if (db.kind === 'postgres') await db.client.query(`DROP SCHEMA "${other}" CASCADE`);
  await db.close();
});

const TABLES = ['subscription_snapshots', 'snapshots', 'ipos'];
async function empty(schema: string): Promise<void> {
  for (const t of TABLES) await db.client.query(`DELETE FROM "${schema}".${t}`);
}

/** Everything stored, as the store's own reads give it, plus the rows themselves. */
async function dump(schema: string): Promise<unknown> {
  const rows = async (sql: string) => (await db.client.query(sql)).rows;
  const ipos = (await rows(`SELECT id, doc::text AS doc, symbol_folded, slug FROM "${schema}".ipos ORDER BY id`)) as Array<{ id: string }>;
  const snapshots = await rows(
    `SELECT ipo_id, ts::text AS ts, sources::text AS sources, agg_mean::text AS mean, agg_median::text AS median, agg_min::text AS min, agg_max::text AS max, agg_mode::text AS mode
     FROM "${schema}".snapshots ORDER BY ipo_id, ts`,
  );
  const subscription = await rows(`SELECT ipo_id, ts::text AS ts, to_jsonb(x)::text AS row FROM "${schema}".subscription_snapshots AS x ORDER BY ipo_id, ts`);
  const store = postgresStore({ client: db.client, schema });
  const found = [];
  for (const { id } of ipos) found.push(await store.findIpo({ identifier: id, gmpAt: Date.UTC(2030, 0, 1), subscriptionAt: Date.UTC(2030, 0, 1) }));
  return { ipos, snapshots, subscription, found };
}

/** The items a streaming reader gives for a dataset held as an object (keys in its order). */
function itemsOf(dataset: unknown): () => AsyncIterable<DatasetItem> {
  return async function* items(): AsyncGenerator<DatasetItem> {
    if (typeof dataset !== 'object' || dataset === null || Array.isArray(dataset)) {
      yield { kind: 'not-an-object', value: dataset };
      return;
    }
    for (const [key, value] of Object.entries(dataset)) {
      yield { kind: 'key', key };
      if (key !== 'ipos' && key !== 'gmp' && key !== 'subscription') continue;
      yield { kind: 'value', key, value: Array.isArray(value) ? [] : value };
      if (!Array.isArray(value)) continue;
      for (let index = 0; index < value.length; index++) {
        const element = value[index] as unknown;
        yield key === 'ipos' ? { kind: 'ipo', index, value: element } : key === 'gmp' ? { kind: 'snapshot', index, value: element } : { kind: 'subscription', index, value: element };
      }
    }
  };
}

type Outcome = { ok: unknown } | { code: string; message: string; problems: unknown; problemCount: unknown };
async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (err) {
    if (!(err instanceof IpokitError)) throw err;
    return { code: err.code, message: err.message, problems: err.problems, problemCount: err.problemCount };
  }
}

/** Imports `dataset` both ways and checks that the outcomes and the stored data are the same. */
async function both(dataset: unknown, batchSize = 3): Promise<Outcome> {
  const expected = await outcome(() => importDataset(postgresStore({ client: db.client, schema: other }), dataset));
  const got = await outcome(() => importDatasetStream({ client: db.client, schema: db.schema, batchSize }, itemsOf(dataset)));
  expect(got).toEqual(expected);
  expect(await dump(db.schema)).toEqual(await dump(other));
  return got;
}

const count = async (table: string): Promise<number> =>
  Number(((await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".${table}`)).rows[0] as { n: number }).n);

describe(`importDatasetStream (${ON})`, () => {
  it('stores what importDataset stores and refuses what it refuses, problems and conflicts alike (property)', async () => {
    // A first dataset is stored; a second, often conflicting with it (symbols and slugs
    // from small alphabets, snapshots of stored or unknown IPOs), sometimes invalid, follows.
    const second = fc.tuple(
      datasetArbitrary({ maxIpos: 6, maxSnapshots: 25 }),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 2, arbitrary: fc.array(fc.tuple(fc.constantFrom('stored', 'unknown'), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1000 })), { minLength: 1, maxLength: 4 }) },
      ),
      fc.constantFrom('as-is', 'as-is', 'replace', 'replace', 'bad-ipo', 'bad-snapshot', 'duplicate', 'gmp-first'),
    );
    await fc.assert(
      fc.asyncProperty(datasetArbitrary({ maxIpos: 6, maxSnapshots: 20 }), second, fc.integer({ min: 1, max: 7 }), async (firstData, [secondData, extra, twist], batchSize) => {
        await empty(db.schema);
        await empty(other);
        expect(await both(toDataset(firstData), batchSize)).toHaveProperty('ok');
        // 'replace': the stored IPOs again, renamed, with new prices (every record replaces one).
        const dataset = toDataset(
          twist === 'replace'
            ? {
                ipos: firstData.ipos.map((ipo) => ({ ...ipo, name: `${ipo.name} (renamed)` })),
                snapshots: firstData.snapshots.map((x) => makeSnapshot(x.ipoId, x.timestamp, { renamed: x.timestamp % 1000 })),
              }
            : secondData,
        ) as { ipos: unknown[]; gmp: unknown[] };
        for (const [kind, i, minute] of extra) {
          const ipoId = kind === 'stored' ? (firstData.ipos[i % Math.max(1, firstData.ipos.length)]?.id ?? 'nobody') : `unknown${i}`;
          dataset.gmp.push({ ipoId, timestamp: new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString(), sources: [] });
        }
        if (twist === 'bad-ipo' && dataset.ipos.length > 0) dataset.ipos.push({ ...(dataset.ipos[0] as object), endDate: '1999-01-01' });
        if (twist === 'bad-snapshot') dataset.gmp.push({ ipoId: 'x', timestamp: 'yesterday', sources: [] });
        if (twist === 'duplicate' && dataset.gmp.length > 0) dataset.gmp.unshift(dataset.gmp[dataset.gmp.length - 1]);
        const input = twist === 'gmp-first' ? { gmp: dataset.gmp, ipos: dataset.ipos } : dataset;
        await both(input, batchSize);
        // Importing the same dataset twice changes nothing.
        await both(input, batchSize);
      }),
      { numRuns: db.kind === 'postgres' ? 40 : 25 },
    );
  }, 120_000);

  it('writes a file that holds gmp before ipos (the IPOs first, reading it twice)', async () => {
    await empty(db.schema);
    await empty(other);
    const ipos = Array.from({ length: 5 }, (_, i) => makeIpo({ id: `g${i}`, symbol: `G${i}` }));
    const snapshots = Array.from({ length: 40 }, (_, i) => makeSnapshot(`g${i % 5}`, Date.UTC(2026, 10, 1) + i * 60_000, { w: i }));
    const { ipos: i, gmp } = toDataset({ ipos, snapshots });
    let reads = 0;
    const read = itemsOf({ gmp, ipos: i });
    const counted = () => {
      reads += 1;
      return read();
    };
    expect(await importDatasetStream({ client: db.client, schema: db.schema, batchSize: 7 }, counted)).toEqual({ ipos: 5, snapshots: 40, subscription: 0 });
    expect(reads).toBe(3);
    await importDataset(postgresStore({ client: db.client, schema: other }), { ipos: i, gmp });
    expect(await dump(db.schema)).toEqual(await dump(other));
  });

  it('writes subscription snapshots as importDataset does, from a file that holds them first, in batches, replacing the stored ones', async () => {
    await empty(db.schema);
    await empty(other);
    const ipos = Array.from({ length: 4 }, (_, i) => makeIpo({ id: `s${i}`, symbol: `S${i}` }));
    const snapshots = Array.from({ length: 6 }, (_, i) => makeSnapshot(`s${i % 4}`, Date.UTC(2026, 10, 1) + i * 60_000, { w: i }));
    const { ipos: i, gmp } = toDataset({ ipos, snapshots });
    const subscription = Array.from({ length: 23 }, (_, k) => ({
      ipoId: `s${k % 4}`,
      timestamp: new Date(Date.UTC(2026, 10, 1) + k * 3_600_000).toISOString(),
      times: k % 3 === 0 ? { total: k + 0.25, qib: null } : { qib: k / 100, retail: 12.5, total: 9_999_999.99 },
    }));
    let reads = 0;
    const read = itemsOf({ subscription, ipos: i, gmp });
    const counted = () => {
      reads += 1;
      return read();
    };
    expect(await importDatasetStream({ client: db.client, schema: db.schema, batchSize: 5 }, counted)).toEqual({ ipos: 4, snapshots: 6, subscription: 23 });
    // (pass 1, then IPOs, then the snapshots)
    expect(reads).toBe(3);
    await importDataset(postgresStore({ client: db.client, schema: other }), { ipos: i, gmp, subscription });
    expect(await dump(db.schema)).toEqual(await dump(other));
    expect(await count('subscription_snapshots')).toBe(23);
    // again, with new numbers for some: replaced, none added
    const again = { ipos: i, gmp, subscription: subscription.map((x, k) => (k % 2 === 0 ? { ...x, times: { nii: k } } : x)) };
    expect(await both(again, 4)).toEqual({ ok: { ipos: 4, snapshots: 6, subscription: 23 } });
    expect(await count('subscription_snapshots')).toBe(23);
  });

  it('names subscription snapshots of unknown IPOs after the GMP ones, counting them all', async () => {
    await empty(db.schema);
    await empty(other);
    const stored = toDataset({ ipos: [makeIpo({ id: 'held', symbol: 'HELD', slug: 'held' })], snapshots: [] });
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), stored);
    await importDataset(postgresStore({ client: db.client, schema: other }), stored);
    const at = (ipoId: string, minute: number) => new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString();
    const dataset = {
      subscription: [
        { ipoId: 'ghost', timestamp: at('ghost', 1), times: { total: 1 } },
        { ipoId: 'held', timestamp: at('held', 2), times: { total: 1 } },
        { ipoId: 'new', timestamp: at('new', 3), times: { total: 1 } },
        { ipoId: 'phantom', timestamp: at('phantom', 4), times: { total: 1 } },
      ],
      gmp: [{ ipoId: 'ghost', timestamp: at('ghost', 1), sources: [] }],
      ipos: [{ id: 'new', name: 'New', slug: 'new', type: 'EQ' }],
    };
    const result = await both(dataset, 2);
    expect(result).toMatchObject({ code: 'ERR:DATASET', problemCount: 3 });
    if ('problems' in result) {
      expect((result.problems as Array<{ path: string }>).map((p) => p.path)).toEqual(['gmp[0].ipoId', 'subscription[0].ipoId', 'subscription[3].ipoId']);
    }
    expect(await count('subscription_snapshots')).toBe(0);
  });

  it('names the first 1,000 snapshots of unknown IPOs and counts them all, after the IPO conflicts', async () => {
    await empty(db.schema);
    await empty(other);
    const stored = { ipos: [makeIpo({ id: 'held', symbol: 'ACME', slug: 'acme' })], snapshots: [] };
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), toDataset(stored));
    await importDataset(postgresStore({ client: db.client, schema: other }), toDataset(stored));
    const gmp = Array.from({ length: 2500 }, (_, i) => ({ ipoId: i % 2 === 0 ? 'held' : 'ghost', timestamp: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), sources: [] }));
    const dataset = { ipos: [{ id: 'new1', name: 'New', symbol: 'acme', slug: 'acme', type: 'EQ' }], gmp };
    const result = await both(dataset, 500);
    expect(result).toMatchObject({
      code: 'ERR:DATASET',
      problemCount: 2 + 1250,
      message: 'The dataset has 1252 problem(s) with stored data; nothing was written.',
    });
    if ('problems' in result) {
      const problems = result.problems as Array<{ path: string; message: string }>;
      expect(problems).toHaveLength(1000);
      expect(problems.slice(0, 3)).toEqual([
        { path: 'ipos[0].symbol', message: 'symbol "acme" is already held by the stored IPO "held"' },
        { path: 'ipos[0].slug', message: 'slug "acme" is already held by the stored IPO "held"' },
        { path: 'gmp[1].ipoId', message: 'ipoId "ghost" names no IPO in the dataset or the store' },
      ]);
      expect(problems[999]?.path).toBe('gmp[1995].ipoId');
    }
  });

  it('reports snapshots of IPOs neither in the file nor stored in the same pass as the other problems, as importDataset does', async () => {
    await empty(db.schema);
    await empty(other);
    const stored = toDataset({ ipos: [makeIpo({ id: 'held', symbol: 'HELD', slug: 'held' })], snapshots: [] });
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), stored);
    await importDataset(postgresStore({ client: db.client, schema: other }), stored);
    const at = (ipoId: string, minute: number, more: object = {}) => ({ ipoId, timestamp: new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString(), sources: [], ...more });
    const dataset = {
      gmp: [at('ghost', 1), at('held', 2), at('b2', 3), at('ghost', 4, { typo: 1 }), at('phantom', 5)],
      ipos: [{ id: 'a1', name: 'A', slug: 'a1', type: 'EQ' }, { id: 'b2', name: 'B', slug: 'b2', type: 'EQ', minQty: 0 }],
    };
    const unknown = (i: number, id: string) => ({ path: `gmp[${i}].ipoId`, message: `ipoId "${id}" names no IPO in the dataset or the store` });
    expect(await both(dataset)).toEqual({
      code: 'ERR:DATASET',
      message: 'The dataset has 5 problems, the first at ipos[1].minQty: minQty 0 is outside 1 to 2147483647.',
      problemCount: 5,
      problems: [
        { path: 'ipos[1].minQty', message: 'minQty 0 is outside 1 to 2147483647' },
        unknown(0, 'ghost'),
        { path: 'gmp[3].typo', message: 'unknown field "typo" in a GMP snapshot' },
        unknown(3, 'ghost'),
        unknown(4, 'phantom'),
      ],
    });
    expect(await count('ipos')).toBe(1);
  });

  it('writes nothing when the database fails after the first batch; readers see the old data meanwhile', async () => {
    await empty(db.schema);
    const store = postgresStore({ client: db.client, schema: db.schema });
    await importDataset(store, toDataset({ ipos: [makeIpo({ id: 'keep', symbol: 'KEEP', startDate: '2026-11-01' })], snapshots: [] }));
    const ipos = Array.from({ length: 3 }, (_, i) => makeIpo({ id: `new${i}`, symbol: `NEW${i}` }));
    const snapshots = Array.from({ length: 2_000 }, (_, i) => makeSnapshot(`new${i % 3}`, Date.UTC(2026, 10, 1) + i * 60_000, { a: 100 + (i % 7) }));
    const dataset = toDataset({ ipos: [...ipos, makeIpo({ id: 'keep', name: 'Renamed' })], snapshots });

    // While pass 2 is under way (its 1,200th snapshot read), another connection reads.
    let reads = 0;
    let seenMeanwhile: unknown = 'not read';
    const read = itemsOf(dataset);
    const readPass = async function* () {
      reads += 1;
      for await (const item of read()) {
        if (reads === 2 && item.kind === 'snapshot' && item.index === 1_200 && db.kind === 'postgres') {
          seenMeanwhile = { keep: (await store.findIpo({ identifier: 'keep', gmpAt: null }))?.ipo.name, snapshots: await count('snapshots') };
        }
        yield item;
      }
    };
    const err = await importDatasetStream({ client: failingOnSnapshotInsert(db.client, 3), schema: db.schema, batchSize: 500 }, readPass).catch((e: unknown) => e);
    expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);
    expect((err as IpokitError).message).toBe('The PostgreSQL store failed.');
    if (db.kind === 'postgres') expect(seenMeanwhile).toEqual({ keep: 'keep', snapshots: 0 });

    expect(await count('ipos')).toBe(1);
    expect(await count('snapshots')).toBe(0);
    expect((await store.findIpo({ identifier: 'keep', gmpAt: null }))?.ipo.name).toBe('keep');

    // The same import through a healthy client writes all of it.
    expect(await importDatasetStream({ client: db.client, schema: db.schema, batchSize: 500 }, itemsOf(dataset))).toEqual({ ipos: 4, snapshots: 2_000, subscription: 0 });
    expect(await count('snapshots')).toBe(2_000);
    expect((await store.findIpo({ identifier: 'keep', gmpAt: null }))?.ipo.name).toBe('Renamed');
  });

  it('passes on an error of the source in pass 2 as it is, and writes nothing', async () => {
    await empty(db.schema);
    const snapshots = Array.from({ length: 100 }, (_, i) => makeSnapshot('s1', Date.UTC(2026, 10, 1) + i * 60_000, { a: i }));
    const read = itemsOf(toDataset({ ipos: [makeIpo({ id: 's1' })], snapshots }));
    let reads = 0;
    const boom = new Error('disk gone (injected)');
    const readPass = async function* () {
      reads += 1;
      for await (const item of read()) {
        if (reads === 2 && item.kind === 'snapshot' && item.index === 50) throw boom;
        yield item;
      }
    };
    await expect(importDatasetStream({ client: db.client, schema: db.schema, batchSize: 10 }, readPass)).rejects.toBe(boom);
    expect(await count('ipos')).toBe(0);
    expect(await count('snapshots')).toBe(0);
  });

  it('refuses a source that changed between the passes, writing nothing', async () => {
    await empty(db.schema);
    const ipos = [makeIpo({ id: 'c1' }), makeIpo({ id: 'c2' })];
    const snapshots = [makeSnapshot('c1', Date.UTC(2026, 10, 1), { a: 1 })];
    const changing = (second: typeof snapshots) => {
      let reads = 0;
      return () => {
        reads += 1;
        return itemsOf(toDataset({ ipos, snapshots: reads === 1 ? snapshots : second }))();
      };
    };
    const cases: Array<[typeof snapshots, string]> = [
      [[...snapshots, makeSnapshot('c2', Date.UTC(2026, 10, 1), { a: 1 })], 'gmp[1]'],
      [[], 'a different number of records'],
    ];
    for (const [second, what] of cases) {
      const err = await importDatasetStream({ client: db.client, schema: db.schema }, changing(second)).catch((e: unknown) => e);
      expect(isIpokitError(err, 'ERR:DATASET')).toBe(true);
      expect((err as IpokitError).problems).toEqual([{ path: '$', message: `the source changed between the two passes of the import (${what})` }]);
      expect(await count('ipos')).toBe(0);
    }
  });

  it('reports progress of both passes, and checks its options and the schema first', async () => {
    await empty(db.schema);
    const snapshots = Array.from({ length: 25 }, (_, i) => makeSnapshot('p1', Date.UTC(2026, 10, 1) + i * 60_000, { a: i }));
    const seen: StreamImportProgress[] = [];
    await importDatasetStream({ client: db.client, schema: db.schema, batchSize: 10, onProgress: (p) => seen.push(p) }, itemsOf(toDataset({ ipos: [makeIpo({ id: 'p1' })], snapshots })));
    expect(seen).toEqual([
      { pass: 1, ipos: 1, snapshots: 10, subscription: 0 },
      { pass: 1, ipos: 1, snapshots: 20, subscription: 0 },
      { pass: 1, ipos: 1, snapshots: 25, subscription: 0 },
      { pass: 2, ipos: 1, snapshots: 10, subscription: 0 },
      { pass: 2, ipos: 1, snapshots: 20, subscription: 0 },
      { pass: 2, ipos: 1, snapshots: 25, subscription: 0 },
    ]);

    const none = itemsOf({});
    await expect(importDatasetStream({ client: db.client, schema: db.schema, batchSize: 0 }, none)).rejects.toMatchObject({ code: 'ERR:BADPARAM', parameter: 'batchSize' });
    await expect(importDatasetStream({ client: db.client, schema: 'not_migrated_here' }, none)).rejects.toMatchObject({
      code: 'ERR:UNAVAILABLE',
      message: expect.stringContaining('run migrate(client) first') as unknown,
    });
  });
});

