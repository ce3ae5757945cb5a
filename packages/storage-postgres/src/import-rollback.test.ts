import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset, isIpokitError } from '@ipokit/core';
import { makeIpo, makeSnapshot, toDataset } from '@ipokit/testing';
import { postgresStore } from './postgres-store.js';
import { failingOnSnapshotInsert, openTestDatabase, type TestDatabase } from './test-database.js';

// An import is all or nothing even when the database fails halfway: here the second batch
// of snapshots fails after the IPOs and the first batch were written in the transaction.

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('rollback');
});
afterAll(() => db.close());


describe(`postgresStore import (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('a failure halfway through an import rolls all of it back', async () => {
    await db.emptyStore();
    const before = toDataset({ ipos: [makeIpo({ id: 'keep', symbol: 'KEEP', startDate: '2026-11-01' })], snapshots: [] });
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), before);

    const ipos = Array.from({ length: 3 }, (_, i) => makeIpo({ id: `new${i}`, symbol: `NEW${i}`, startDate: '2026-11-10' }));
    const snapshots = Array.from({ length: 12_000 }, (_, i) => makeSnapshot(`new${i % 3}`, Date.UTC(2026, 10, 1) + i * 60_000, { a: 100 + (i % 7) }));
    const broken = postgresStore({ client: failingOnSnapshotInsert(db.client, 2), schema: db.schema });
    const err = await importDataset(broken, toDataset({ ipos: [...ipos, makeIpo({ id: 'keep', name: 'Renamed' })], snapshots })).catch((e: unknown) => e);
    expect(isIpokitError(err, 'ERR:UNAVAILABLE')).toBe(true);

    // Nothing of it is there: not the new IPOs, not the first batch, not the rename.
    const store = postgresStore({ client: db.client, schema: db.schema });
    const count = async (table: string) => Number((await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".${table}`)).rows.map((r) => (r as { n: number }).n)[0]);
    expect(await count('ipos')).toBe(1);
    expect(await count('snapshots')).toBe(0);
    expect((await store.findIpo({ identifier: 'keep', gmpAt: null }))?.ipo.name).toBe('keep');

    // The same import through a healthy client then writes all of it.
    await importDataset(store, toDataset({ ipos, snapshots }));
    expect(await count('snapshots')).toBe(12_000);
  });
});
