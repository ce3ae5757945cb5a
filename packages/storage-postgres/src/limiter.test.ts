import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// The limiter's table stays small: windows whose hits have all left are deleted by the
// periodic sweep (an index range scan of at most 1,000 rows), not by a scan per request.

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('limiter');
});
afterAll(() => db.close());

const rows = async (): Promise<string[]> =>
  (await db.client.query(`SELECT key FROM "${db.schema}".rate_windows ORDER BY key`)).rows.map((r) => (r as { key: string }).key);

describe('postgresStore limiter state', () => {
  it('forgets windows whose hits have all left, every rateLimitSweepEvery hits, and keeps live ones', async () => {
    await db.emptyStore();
    const store = postgresStore({ client: db.client, schema: db.schema, rateLimitSweepEvery: 4 });
    const hit = (now: number, key: string) => store.hitRateLimit({ now, windowMs: 60_000, windows: [{ key, quota: 5 }] });
    for (const key of ['addr:a', 'addr:b', 'addr:c']) expect((await hit(0, key)).admitted).toBe(true);
    expect(await rows()).toEqual(['addr:a', 'addr:b', 'addr:c']);
    // the 4th hit sweeps, but at t = 59,999 every window still holds a live hit
    expect((await hit(59_999, 'addr:d')).admitted).toBe(true);
    expect(await rows()).toEqual(['addr:a', 'addr:b', 'addr:c', 'addr:d']);
    for (const key of ['addr:a', 'addr:e', 'addr:f']) await hit(60_000, key);
    // the 8th hit sweeps at t = 60,500: b and c left at 60,000; a was hit again, d is live
    await hit(60_500, 'addr:g');
    expect(await rows()).toEqual(['addr:a', 'addr:d', 'addr:e', 'addr:f', 'addr:g']);
    // a swept window starts again from nothing
    expect((await hit(60_600, 'addr:b')).windows).toEqual([{ count: 1, oldest: 60_600, blocking: null }]);
  });

  it('a refused request writes nothing, and a window keeps at most quota hits', async () => {
    await db.emptyStore();
    const store = postgresStore({ client: db.client, schema: db.schema });
    for (let t = 0; t < 10; t++) await store.hitRateLimit({ now: t, windowMs: 60_000, windows: [{ key: 'acct:x', quota: 3 }] });
    const { rows: [row] } = await db.client.query(`SELECT hits FROM "${db.schema}".rate_windows WHERE key = 'acct:x'`);
    expect((row as { hits: number[] }).hits.map(Number)).toEqual([0, 1, 2]);
  });
});
