import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIpokitError } from '@ipokit/core';
import type { SourceRunWrite, SourceState } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot, testSourceStore } from '@ipokit/testing';
import { advisoryKey, migrate, migrateUpTo } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// The collector's part of the PostgreSQL store (migration 13): the shared SourceStore suite,
// then what only PostgreSQL shows: the migration, the session lock across pools and its
// release when the session dies, the connection it holds, deletions, a combine that throws.

const KIND = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
const URL_ = process.env.DATABASE_URL;

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('sources');
});
afterAll(() => db.close());

testSourceStore(`postgresStore (${KIND})`, async () => {
  const store = await db.emptyStore();
  return { store, close: () => store.close?.() };
});

const T = Date.parse('2026-11-24T04:30:00.000Z');

function state(source: string, fields: Partial<SourceState> = {}): SourceState {
  return { source, lastRunAt: T, lastSuccessAt: T, lastError: null, records: 1, failures: 0, nextRunAt: T + 60_000, ...fields };
}

function run(source: string, at: number, reports: Array<[string, number | null]>, combine: SourceRunWrite['combine'] = () => []): SourceRunWrite {
  return { source, at, data: { ipos: [], snapshots: [], subscription: [] }, reports: reports.map(([ipoId, paise]) => ({ ipoId, paise })), combine, state: state(source) };
}

describe(`migration 13 (${KIND})`, () => {
  it('adds source_reports and source_states without rewriting a row; a version 12 process deletes on', async () => {
    const schema = `${db.schema}_v12`;
    const q = async (text: string, params: unknown[] = []) => (await db.client.query(text, params)).rows as Array<Record<string, unknown>>;
    try {
      expect(await migrateUpTo(db.client, { schema }, 12)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      await q(
        `INSERT INTO "${schema}".ipos (id, name, symbol_folded, slug, type, on_nse, on_bse, start_date, end_date, listing_date, doc)
         VALUES ('old', 'Old', 'old', 'old', 'EQ', true, false, NULL, NULL, NULL, $1::json)`,
        [JSON.stringify(makeIpo({ id: 'old', name: 'Old', symbol: 'OLD', slug: 'old' }))],
      );
      await q(`INSERT INTO "${schema}".snapshots (ipo_id, ts, sources, agg_mean) VALUES ('old', $1, '[]', NULL)`, [T]);
      const rowsOf = async () => [
        ...(await q(`SELECT ctid::text, xmin::text FROM "${schema}".ipos`)),
        ...(await q(`SELECT ctid::text, xmin::text FROM "${schema}".snapshots`)),
        ...(await q(`SELECT relname, relfilenode::text FROM pg_class WHERE oid IN ('"${schema}".ipos'::regclass, '"${schema}".snapshots'::regclass) ORDER BY relname`)),
      ];
      const before = await rowsOf();
      // (13, then whatever later versions there are)
      expect((await migrate(db.client, { schema }))[0]).toBe(13);
      expect(await migrate(db.client, { schema })).toEqual([]);
      expect(await rowsOf()).toEqual(before);
      const columns = async (table: string) =>
        q(
          `SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull FROM pg_attribute
           WHERE attrelid = '"${schema}".${table}'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
        );
      expect(await columns('source_reports')).toEqual([
        { attname: 'source', type: 'text', attnotnull: true },
        { attname: 'ipo_id', type: 'text', attnotnull: true },
        { attname: 'paise', type: 'bigint', attnotnull: false },
        { attname: 'at', type: 'bigint', attnotnull: true },
      ]);
      expect(await columns('source_states')).toEqual([
        { attname: 'source', type: 'text', attnotnull: true },
        { attname: 'last_run_at', type: 'bigint', attnotnull: false },
        { attname: 'last_success_at', type: 'bigint', attnotnull: false },
        { attname: 'last_error', type: 'text', attnotnull: false },
        { attname: 'records', type: 'bigint', attnotnull: true },
        { attname: 'failures', type: 'integer', attnotnull: true },
        { attname: 'next_run_at', type: 'bigint', attnotnull: true },
      ]);

      const store = postgresStore({ client: db.client, schema, dataCacheTtlMs: 0 });
      try {
        expect(await store.writeSourceRun(run('alpha', T, [['old', 100]], (reports, changed) => changed.map((id) => makeSnapshot(id, T + 1, { alpha: 100 }))))).toEqual({
          conflicts: [],
          combined: 1,
        });
        // a process of version 12 deletes as it did: the IPO and its snapshots go, its reports stay (read by no one but a collector)
        await q(
          `WITH gone_snapshots AS (DELETE FROM "${schema}".snapshots WHERE ipo_id = ANY ($1::text[]) RETURNING 1),
                gone_ipos AS (DELETE FROM "${schema}".ipos WHERE id = ANY ($1::text[]) RETURNING 1)
           SELECT (SELECT count(*) FROM gone_ipos)::int AS ipos`,
          [['old']],
        );
        expect(await store.findIpo({ identifier: 'old', gmpAt: null })).toBeNull();
        expect((await store.sourceReports(['alpha'])).map((r) => r.ipoId)).toEqual(['old']);
      } finally {
        await store.close?.();
      }
    } finally {
      await q(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

describe(`postgresStore as a SourceStore, beyond the suite (${KIND})`, () => {
  it("deleteIpos deletes the deleted IPOs' reports of every source, and no other", async () => {
    const store = await db.emptyStore();
    await store.writeDataset({ ipos: [makeIpo({ id: 'gone', symbol: 'GONE' }), makeIpo({ id: 'kept', symbol: 'KEPT' })], snapshots: [] });
    await store.writeSourceRun(run('alpha', T, [['gone', 1], ['kept', 2]]));
    await store.writeSourceRun(run('beta', T, [['gone', null]]));
    expect(await store.deleteIpos(['gone'])).toEqual({ ipos: 1, snapshots: 0 });
    expect(await store.sourceReports(['alpha', 'beta'])).toEqual([{ source: 'alpha', ipoId: 'kept', paise: 2, at: T }]);
    await store.close?.();
  });

  it('a combine that throws rejects the write with its own error; nothing is written', async () => {
    const store = await db.emptyStore();
    await store.writeSourceRun(run('alpha', T, [['i1', 1]]));
    const boom = new Error('combine failed');
    await expect(
      store.writeSourceRun(
        run('alpha', T + 1, [['i1', 2]], () => {
          throw boom;
        }),
      ),
    ).rejects.toBe(boom);
    expect(await store.sourceReports(['alpha'])).toEqual([{ source: 'alpha', ipoId: 'i1', paise: 1, at: T }]);
    await store.close?.();
  });

  it('a run reporting an IPO twice is refused (ERR:BADPARAM) before anything is written', async () => {
    const store = await db.emptyStore();
    const err = await store.writeSourceRun(run('alpha', T, [['i1', 1], ['i1', 2]])).catch((e: unknown) => e);
    expect(isIpokitError(err) && err.code).toBe('ERR:BADPARAM');
    expect(await store.sourceReports(['alpha'])).toEqual([]);
    await store.close?.();
  });

  it('prices and instants up to the safe integers read back exactly (bigint columns)', async () => {
    const store = await db.emptyStore();
    const big = Number.MAX_SAFE_INTEGER;
    await store.writeSourceRun({ ...run('alpha', big, [['i1', big - 1]]), state: state('alpha', { records: big, nextRunAt: big, lastRunAt: big, failures: 2 ** 31 - 1 }) });
    expect(await store.sourceReports(['alpha'])).toEqual([{ source: 'alpha', ipoId: 'i1', paise: big - 1, at: big }]);
    expect(await store.sourceStates(['alpha'])).toEqual([state('alpha', { records: big, nextRunAt: big, lastRunAt: big, failures: 2 ** 31 - 1 })]);
    await store.close?.();
  });

  it('two store objects on one client share the locks of this process', async () => {
    const one = await db.emptyStore();
    const two = postgresStore({ client: db.client, schema: db.schema });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = false;
    const held = one.withSourceLock('alpha', async () => {
      inside = true;
      await gate;
    });
    while (!inside) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await two.withSourceLock('alpha', async () => 'two')).toBeNull();
    open();
    expect(await held).toEqual({ value: undefined });
    expect(await two.withSourceLock('alpha', async () => 'two')).toEqual({ value: 'two' });
    await one.close?.();
    await two.close?.();
  });
});

// Two pools are two processes to PostgreSQL: each its own sessions.
if (URL_) describe('source locks across processes (two pools, PostgreSQL)', acrossProcesses);
else it.skip('source locks across pools and sessions lost: needs PostgreSQL (DATABASE_URL); PGlite is one session in this process', () => undefined);

function acrossProcesses(): void {
  const pools: pg.Pool[] = [];
  const pool = (max = 4): pg.Pool => {
    const p = new pg.Pool({ connectionString: URL_, max });
    // (a connection ended by pg_terminate_backend while idle in the pool)
    p.on('error', () => undefined);
    pools.push(p);
    return p;
  };
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  /** The backends holding the source's advisory lock (int4 keys are shown as oids). */
  const holders = async (source: string): Promise<number[]> => {
    const [k1, k2] = advisoryKey(`"${db.schema}".source.${source}`);
    const { rows } = await db.client.query(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
         AND classid::bigint = (($1::bigint + 4294967296) % 4294967296) AND objid::bigint = (($2::bigint + 4294967296) % 4294967296)`,
      [k1, k2],
    );
    return (rows as Array<{ pid: number }>).map((r) => r.pid);
  };

  it('one holder at a time across pools; the lock is held by one session while fn runs and by none after', async () => {
    const a = postgresStore({ client: pool(), schema: db.schema });
    const b = postgresStore({ client: pool(), schema: db.schema });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = false;
    const held = a.withSourceLock('alpha', async () => {
      inside = true;
      await gate;
      return 'a';
    });
    while (!inside) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await holders('alpha')).toHaveLength(1);
    expect(await b.withSourceLock('alpha', async () => 'b')).toBeNull();
    // another source is free in the other process, and both are held by one session of a's pool
    let innerHolders: number[] = [];
    expect(
      await a.withSourceLock('beta', async () => {
        innerHolders = [...(await holders('alpha')), ...(await holders('beta'))];
        return 'a2';
      }),
    ).toEqual({ value: 'a2' });
    expect(new Set(innerHolders).size).toBe(1);
    open();
    expect(await held).toEqual({ value: 'a' });
    expect(await holders('alpha')).toEqual([]);
    expect(await b.withSourceLock('alpha', async () => 'b')).toEqual({ value: 'b' });
    await a.close?.();
    await b.close?.();
  });

  it('a holder whose session dies (its connection ended) releases the lock: another process takes the source; the first carries on', async () => {
    const poolA = pool();
    const a = postgresStore({ client: poolA, schema: db.schema });
    const b = postgresStore({ client: pool(), schema: db.schema });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside = false;
    const held = a.withSourceLock('alpha', async () => {
      inside = true;
      await gate;
      return 'a';
    });
    while (!inside) await new Promise((resolve) => setTimeout(resolve, 5));
    const [pid] = await holders('alpha');
    expect(pid).toBeTypeOf('number');
    expect(await b.withSourceLock('alpha', async () => 'b')).toBeNull();
    await db.client.query('SELECT pg_terminate_backend($1)', [pid]);
    // (the signal is sent at once; the backend ends, and its locks go, a moment later)
    for (let i = 0; i < 1_000 && (await holders('alpha')).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await b.withSourceLock('alpha', async () => 'b took it')).toEqual({ value: 'b took it' });
    // the first holder's fn finishes; its release finds its session gone and does nothing
    open();
    expect(await held).toEqual({ value: 'a' });
    // and it takes locks again, on a new connection
    expect(await a.withSourceLock('alpha', async () => 'a again')).toEqual({ value: 'a again' });
    expect(await a.sourceStates(['alpha'])).toEqual([]);
    await a.close?.();
    await b.close?.();
  });

  it('a run whose lock was lost (its session ended) cannot write: writeSourceRun and saveSourceState refuse, nothing written', async () => {
    const a = postgresStore({ client: pool(), schema: db.schema });
    const b = postgresStore({ client: pool(), schema: db.schema });
    await db.clear();
    await a.writeDataset({ ipos: [makeIpo({ id: 'ipo1', symbol: 'ONE' })], snapshots: [] });
    const outcome = await a.withSourceLock('gamma', async () => {
      const [pid] = await holders('gamma');
      await db.client.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 1_000 && (await holders('gamma')).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      // Another process may now run the source: this run's write must not land beside it.
      expect(await b.withSourceLock('gamma', async () => 'b')).toEqual({ value: 'b' });
      const write = await a.writeSourceRun(run('gamma', T, [['ipo1', 100]], (_r, changed) => changed.map((id) => makeSnapshot(id, T, {})))).catch((e: unknown) => e);
      const save = await a.saveSourceState(state('gamma', { lastError: 'x' })).catch((e: unknown) => e);
      return [write, save];
    });
    for (const err of outcome?.value ?? []) {
      expect(isIpokitError(err) && err.code, String(err)).toBe('ERR:UNAVAILABLE');
      expect((err as Error).message).toMatch(/lock of source "gamma" was lost/);
    }
    expect(await a.sourceReports(['gamma'])).toEqual([]);
    expect(await a.sourceStates(['gamma'])).toEqual([]);
    // Outside a lock (or with the lock held), the writes go on as before.
    expect(await a.withSourceLock('gamma', () => a.writeSourceRun(run('gamma', T, [['ipo1', 100]])))).toEqual({ value: { conflicts: [], combined: 0 } });
    await a.close?.();
    await b.close?.();
  });

  it('writeSourceRun of two processes for one IPO take turns: the later combine sees the earlier report', async () => {
    const a = postgresStore({ client: pool(), schema: db.schema });
    const b = postgresStore({ client: pool(), schema: db.schema });
    await db.clear();
    await a.writeDataset({ ipos: [makeIpo({ id: 'ipo1', symbol: 'ONE' })], snapshots: [] });
    const seen: string[][] = [];
    const combine: SourceRunWrite['combine'] = (reports, changed) => {
      seen.push(reports.map((r) => `${r.source}=${r.paise}`));
      return changed.map((id) => makeSnapshot(id, T, {}));
    };
    const results = await Promise.all([
      a.writeSourceRun({ ...run('alpha', T, [['ipo1', 100]], combine) }),
      b.writeSourceRun({ ...run('beta', T + 1, [['ipo1', 200]], (r, c) => combine(r, c).map((x) => ({ ...x, timestamp: T + 1 }))) }),
    ]);
    expect(results).toEqual([
      { conflicts: [], combined: 1 },
      { conflicts: [], combined: 1 },
    ]);
    expect(seen).toContainEqual(['alpha=100', 'beta=200']);
    await a.close?.();
    await b.close?.();
  });

  it('the lock connection goes back to the pool after each run, sound and without listeners of ours', async () => {
    const p = pool(2);
    const store = postgresStore({ client: p, schema: db.schema, dataCacheTtlMs: 0 });
    for (let i = 0; i < 15; i++) expect(await store.withSourceLock(`s${i % 3}`, async () => i)).toEqual({ value: i });
    expect(p.totalCount).toBeLessThanOrEqual(2);
    const connection = await p.connect();
    try {
      expect(connection.listenerCount('error')).toBe(0);
      expect(connection.listenerCount('end')).toBe(0);
      const { rows } = await connection.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`);
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      connection.release();
    }
    await store.close?.();
  });

  it('a pool with no connection to spare for the lock rejects withSourceLock with ERR:UNAVAILABLE, saying why', async () => {
    // max 2: one for the data cache's LISTEN, one for the store's calls
    const store = postgresStore({ client: pool(2), schema: db.schema });
    const err = await store.withSourceLock('alpha', async () => 'ran').catch((e: unknown) => e);
    expect(isIpokitError(err) && err.code).toBe('ERR:UNAVAILABLE');
    expect((err as Error).message).toMatch(/none to spare/);
    await store.close?.();
  });
}
