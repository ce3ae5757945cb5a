import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RateLimitOutcome, type RateLimitWindow, type Store } from '@ipokit/core';
import { describeWindow } from '@ipokit/core/backend';
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
    const hit = (t: number) => store.hitRateLimit({ now: t, windowMs: 60_000, windows: [{ key: 'acct:x', quota: 3 }] });
    for (let t = 0; t < 3; t++) expect((await hit(t)).admitted).toBe(true);
    // the row version (and any lock on it) as the last admitted request left it
    const version = async () => (await db.client.query(`SELECT xmin::text, xmax::text, ctid::text FROM "${db.schema}".rate_windows WHERE key = 'acct:x'`)).rows[0];
    const before = await version();
    for (let t = 3; t < 10; t++) expect((await hit(t)).admitted).toBe(false);
    // refused while full: not even a row lock was taken
    expect(await version()).toEqual(before);
    expect(await hits('acct:x')).toEqual([0, 1, 2]);
    expect(await windowRow('acct:x')).toEqual({ n_hits: 3, oldest_ts: 0 });
  });

  it('keeps the semantics of a sorted list when hits arrive out of order (clock skew)', async () => {
    await db.emptyStore();
    const store = postgresStore({ client: db.client, schema: db.schema });
    const model = new Map<string, number[]>();
    const w = [{ key: 'acct:skew', quota: 4 }];
    // processes whose clocks differ by up to 2 s, hit in turn, over three windows
    const times = [10_000, 9_000, 11_500, 8_000, 12_000, 69_000, 68_500, 70_000, 71_000, 67_999, 129_000, 128_000, 130_500];
    for (const now of times) {
      expect(await store.hitRateLimit({ now, windowMs: 60_000, windows: w }), `at ${now}`).toEqual(sortedModelHit(model, now, 60_000, w));
    }
    expect(await hits('acct:skew')).toEqual(model.get('acct:skew'));
  });

  it('stays consistent under concurrent requests on overlapping windows, with clocks apart and a sweep on every hit', async () => {
    await db.emptyStore();
    // three stores (as three processes would have) on one client; every hit also sweeps
    const stores = [0, 1, 2].map(() => postgresStore({ client: db.client, schema: db.schema, rateLimitSweepEvery: 1 }));
    const keys = ['acct:a', 'gmp:a', 'acct:b', 'gmp:b', 'addr:x', 'addr:y'];
    const quota = (key: string) => 1 + (key.charCodeAt(key.length - 1) % 4);
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    let clock = Date.UTC(2026, 10, 20);
    const lane = async (n: number): Promise<void> => {
      for (let k = 0; k < n; k++) {
        clock += random() < 0.05 ? 30_000 : random() * 200;
        const now = Math.round(clock + (random() * 2 - 1) * 2_000); // clocks up to 2 s apart
        const picked = keys.filter(() => random() < 0.35);
        const windows = (picked.length > 0 ? picked : [keys[k % keys.length]!]).map((key) => ({ key, quota: quota(key) }));
        const outcome = await stores[k % 3]!.hitRateLimit({ now, windowMs: 60_000, windows });
        for (const [i, w] of outcome.windows.entries()) expect(w.count).toBeLessThanOrEqual(windows[i]!.quota);
      }
    };
    await Promise.all(Array.from({ length: 8 }, () => lane(150)));
    // every window's count and oldest hit are those of the hits it holds; no hit is orphaned
    const { rows } = await db.client.query(
      `SELECT w.key, w.n_hits, w.oldest_ts, count(h.ts)::int AS n, min(h.ts) AS m
       FROM "${db.schema}".rate_windows w LEFT JOIN "${db.schema}".rate_hits h ON h.window_id = w.id GROUP BY w.key, w.n_hits, w.oldest_ts`,
    );
    for (const r of rows as Array<{ key: string; n_hits: number; oldest_ts: number | null; n: number; m: number | null }>) {
      expect({ key: r.key, n: Number(r.n_hits), oldest: r.oldest_ts === null ? null : Number(r.oldest_ts) }).toEqual({ key: r.key, n: r.n, oldest: r.m === null ? null : Number(r.m) });
    }
    const orphans = await db.client.query(
      `SELECT count(*)::int AS n FROM "${db.schema}".rate_hits h WHERE NOT EXISTS (SELECT 1 FROM "${db.schema}".rate_windows w WHERE w.id = h.window_id)`,
    );
    expect(Number((orphans.rows[0] as { n: number }).n)).toBe(0);
  }, 60_000);

  it('a quota of 100,000: exact at the edges, and a hit costs the same with 100,000 hits kept as with 10', async () => {
    await db.emptyStore();
    const store = postgresStore({ client: db.client, schema: db.schema });
    const Q = 100_000;
    const w = [{ key: 'acct:big', quota: Q }];
    const hit = (now: number) => store.hitRateLimit({ now, windowMs: 60_000, windows: w });
    // Fill the window in bulk, as if recorded one by one: Q - 1 hits at 0, 0.5, 1, ... 49,999 ms.
    const id = await windowId(store, 'acct:big');
    await db.client.query(`INSERT INTO "${db.schema}".rate_hits (window_id, ts) SELECT $1::bigint, g * 0.5 FROM generate_series(0, ${Q - 2}) AS g`, [id]);
    await db.client.query(`UPDATE "${db.schema}".rate_windows SET n_hits = n_hits + ${Q - 1}, newest_ts = ${(Q - 2) * 0.5} WHERE key = 'acct:big'`);
    await db.client.query(`ANALYZE "${db.schema}".rate_hits`);
    // at 59,999 the window holds Q - 1 hits: room for one more, then it is full
    expect(await hit(59_999)).toEqual({ admitted: true, windows: [{ count: Q, oldest: 0, blocking: 0 }] });
    expect(await hit(59_999.25)).toEqual({ admitted: false, windows: [{ count: Q, oldest: 0, blocking: 0 }] });
    // at 60,000 the hit at 0 leaves (now - t < windowMs no longer holds): room for exactly one
    expect(await hit(60_000)).toEqual({ admitted: true, windows: [{ count: Q, oldest: 0.5, blocking: 0.5 }] });
    expect(await hit(60_000)).toEqual({ admitted: false, windows: [{ count: Q, oldest: 0.5, blocking: 0.5 }] });
    // at 61,000 the 2,000 hits 0.5 ... 1,000 have left: exactly 2,000 are admitted
    let admitted = 0;
    for (let k = 0; k < 2_001; k++) admitted += (await hit(61_000)).admitted ? 1 : 0;
    expect(admitted).toBe(2_000);
    expect(await hit(61_000)).toEqual({ admitted: false, windows: [{ count: Q, oldest: 1_000.5, blocking: 1_000.5 }] });
    expect(await windowRow('acct:big')).toEqual({ n_hits: Q, oldest_ts: 1_000.5 });

    // The cost of a hit does not grow with the hits a window keeps: refusals on a full
    // window, and admissions where each one's oldest hit has just left, on the window of
    // 100,000 hits and on one of 10.
    const timed = async (key: string, quota: number, times: number[]): Promise<number> => {
      const t = performance.now();
      for (const now of times) await store.hitRateLimit({ now, windowMs: 60_000, windows: [{ key, quota }] });
      return performance.now() - t;
    };
    const N = 300;
    const steps = (from: number, step: number) => Array.from({ length: N }, (_, k) => from + k * step);
    await timed('acct:small', 10, steps(0, 6_000)); // ten to fill, then one leaves per hit
    const smallAdmitted = await timed('acct:small', 10, steps(N * 6_000, 6_000));
    const smallRefused = await timed('acct:small', 10, steps((2 * N - 1) * 6_000, 0));
    const bigRefused = await timed('acct:big', Q, steps(61_000, 0));
    const bigAdmitted = await timed('acct:big', Q, steps(61_000.5, 0.5));
    expect(await windowRow('acct:big')).toEqual({ n_hits: Q, oldest_ts: 1_000.5 + N * 0.5 });
    // Generous bounds for noisy machines; the one-array-per-window design took ~100x longer here.
    expect(bigRefused, `refused: ${bigRefused} ms vs ${smallRefused} ms`).toBeLessThan(smallRefused * 3 + 100);
    expect(bigAdmitted, `admitted: ${bigAdmitted} ms vs ${smallAdmitted} ms`).toBeLessThan(smallAdmitted * 3 + 100);
  }, 60_000);
});

async function hits(key: string): Promise<number[]> {
  const { rows } = await db.client.query(
    `SELECT h.ts FROM "${db.schema}".rate_hits h JOIN "${db.schema}".rate_windows w ON w.id = h.window_id WHERE w.key = $1 ORDER BY h.ts`,
    [key],
  );
  return rows.map((r) => Number((r as { ts: number }).ts));
}

async function windowRow(key: string): Promise<{ n_hits: number; oldest_ts: number | null }> {
  const { rows } = await db.client.query(`SELECT n_hits, oldest_ts FROM "${db.schema}".rate_windows WHERE key = $1`, [key]);
  const r = rows[0] as { n_hits: number; oldest_ts: number | null };
  return { n_hits: Number(r.n_hits), oldest_ts: r.oldest_ts === null ? null : Number(r.oldest_ts) };
}

/** The window's id, created by one hit far in the past (which has left by the next one). */
async function windowId(store: Store, key: string): Promise<number> {
  await store.hitRateLimit({ now: -1_000_000, windowMs: 60_000, windows: [{ key, quota: 1 }] });
  const { rows } = await db.client.query(`SELECT id FROM "${db.schema}".rate_windows WHERE key = $1`, [key]);
  return Number((rows[0] as { id: number }).id);
}

/** slidingWindowHit's rule on a sorted list of live hits (the order of arrival does not matter). */
function sortedModelHit(model: Map<string, number[]>, now: number, windowMs: number, windows: RateLimitWindow[]): RateLimitOutcome {
  const live = windows.map((w) => (model.get(w.key) ?? []).filter((t) => now - t < windowMs).sort((a, b) => a - b));
  const admitted = live.every((h, i) => h.length < windows[i]!.quota);
  const after = live.map((h) => (admitted ? [...h, now].sort((a, b) => a - b) : h));
  if (admitted) windows.forEach((w, i) => model.set(w.key, after[i]!));
  return { admitted, windows: after.map((h, i) => describeWindow(h, windows[i]!.quota)) };
}
