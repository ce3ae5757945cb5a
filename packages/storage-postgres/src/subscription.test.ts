import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventType, type Store, type WebhookStore } from '@ipokit/core';
import { type ClaimedDelivery, type IpoRecord, type ListQuery, type SubscriptionRecord } from '@ipokit/core/backend';
import { SUBSCRIPTION_CATEGORIES, type SubscriptionTimes } from '@ipokit/core';
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import { migrate, migrateUpTo } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// Section 16 on PostgreSQL (migration 12), beyond the shared suites: the migration rewrites
// no row; `q` is a plain substring match folding A-Z alone; subscription snapshots read back
// exactly, on list and find (with the data cache on and off), in the series, through
// deletions, and as webhook events.

const KIND = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('subscription');
});
afterAll(() => db.close());

const T = Date.parse('2026-11-24T04:30:00.000Z');
const HOUR = 3_600_000;

/** A subscription snapshot with these categories given (the rest null). */
function sub(ipoId: string, timestamp: number, given: Partial<SubscriptionTimes>): SubscriptionRecord {
  const times = {} as SubscriptionTimes;
  for (const c of SUBSCRIPTION_CATEGORIES) times[c] = given[c] ?? null;
  return { ipoId, timestamp, times };
}

/** The list of every status the IPOs below have: announced (no dates). */
function list(extra: Partial<ListQuery> = {}): ListQuery {
  return { status: 'announced', today: '2026-11-24', types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 100, gmpAt: null, ...extra };
}

async function count(table: string, schema = db.schema): Promise<number> {
  const { rows } = await db.client.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`);
  return Number((rows[0] as { n: number }).n);
}

const CACHES = [
  ['with the data cache', {}],
  ['without the data cache', { dataCacheTtlMs: 0 }],
] as const;

describe(`migration 12 (${KIND})`, () => {
  it('adds subscription snapshots and the subscription usage route without rewriting a row; a version 11 process deletes on', async () => {
    const schema = `${db.schema}_v11`;
    const q = async (text: string, params: unknown[] = []) => (await db.client.query(text, params)).rows as Array<Record<string, unknown>>;
    try {
      expect(await migrateUpTo(db.client, { schema }, 11)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      // a process of version 11: an IPO, a GMP snapshot, usage counted
      await q(
        `INSERT INTO "${schema}".ipos (id, name, symbol_folded, slug, type, on_nse, on_bse, start_date, end_date, listing_date, doc)
         VALUES ('old', 'Old', 'old', 'old', 'EQ', true, false, NULL, NULL, NULL, $1::json)`,
        [JSON.stringify(makeIpo({ id: 'old', name: 'Old', symbol: 'OLD', slug: 'old' }))],
      );
      await q(`INSERT INTO "${schema}".snapshots (ipo_id, ts, sources, agg_mean) VALUES ('old', $1, '[]', NULL)`, [T]);
      await q(`INSERT INTO "${schema}".key_usage (account_id, day, key_id, route, admitted) VALUES ('acct', '2026-11-24', 'key', 'gmp', 3)`);
      const rowsOf = async () =>
        [
          ...(await q(`SELECT ctid::text, xmin::text FROM "${schema}".ipos`)),
          ...(await q(`SELECT ctid::text, xmin::text FROM "${schema}".snapshots`)),
          ...(await q(`SELECT ctid::text, xmin::text FROM "${schema}".key_usage`)),
          ...(await q(
            `SELECT relname, relfilenode::text FROM pg_class WHERE oid IN ('"${schema}".ipos'::regclass, '"${schema}".snapshots'::regclass, '"${schema}".key_usage'::regclass) ORDER BY relname`,
          )),
        ];
      const before = await rowsOf();

      // (12 and 13, then whatever later versions there are)
      expect((await migrate(db.client, { schema })).slice(0, 2)).toEqual([12, 13]);
      expect(await migrate(db.client, { schema })).toEqual([]);
      // every row where it was, as it was (same tuple, same writing transaction), every table's file the same
      expect(await rowsOf()).toEqual(before);
      // the categories are exact decimals with 2 places, in the core's order
      expect(
        await q(
          `SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull FROM pg_attribute
           WHERE attrelid = '"${schema}".subscription_snapshots'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
        ),
      ).toEqual([
        { attname: 'ipo_id', type: 'text', attnotnull: true },
        { attname: 'ts', type: 'bigint', attnotnull: true },
        ...SUBSCRIPTION_CATEGORIES.map((attname) => ({ attname, type: 'numeric(9,2)', attnotnull: false })),
      ]);
      // the usage check takes the new route (validated), and still refuses others
      await q(`INSERT INTO "${schema}".key_usage (account_id, day, key_id, route, admitted) VALUES ('acct', '2026-11-24', 'key', 'subscription', 1)`);
      await expect(q(`INSERT INTO "${schema}".key_usage (account_id, day, key_id, route) VALUES ('acct', '2026-11-24', 'key', 'nope')`)).rejects.toThrow();
      expect(await q(`SELECT convalidated FROM pg_constraint WHERE conname = 'key_usage_route_check' AND conrelid = '"${schema}".key_usage'::regclass`)).toEqual([
        { convalidated: true },
      ]);

      const store = postgresStore({ client: db.client, schema });
      try {
        expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [sub('old', T, { total: 2.5 })] })).toEqual([]);
        expect(await store.findIpo({ identifier: 'old', gmpAt: T, subscriptionAt: T })).toEqual({
          ipo: makeIpo({ id: 'old', name: 'Old', symbol: 'OLD', slug: 'old' }),
          gmp: expect.objectContaining({ timestamp: T }) as unknown,
          subscription: sub('old', T, { total: 2.5 }),
        });
        // a process of version 11 deletes as it did (its statement): the subscription snapshots go too
        await q(
          `WITH gone_snapshots AS (DELETE FROM "${schema}".snapshots WHERE ipo_id = ANY ($1::text[]) RETURNING 1),
                gone_ipos AS (DELETE FROM "${schema}".ipos WHERE id = ANY ($1::text[]) RETURNING 1)
           SELECT (SELECT count(*) FROM gone_ipos)::int AS ipos`,
          [['old']],
        );
        expect(await count('subscription_snapshots', schema)).toBe(0);
        expect(await store.findIpo({ identifier: 'old', gmpAt: null, subscriptionAt: T })).toBeNull();
      } finally {
        await store.close?.();
      }
    } finally {
      await db.client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

describe.each(CACHES)(`q on ${KIND} (%s)`, (_, options) => {
  const names: Array<[string, string, string | null, IpoRecord['type']]> = [
    ['elan-up', 'Élan Foods', 'ELAN', 'EQ'],
    ['elan-low', 'élan Foods', null, 'DEBT'],
    ['pct', '100% Pure Oils', 'PURE', 'EQ'],
    ['under', 'A_B Industries', 'A_B', 'SME'],
    ['slash', 'Back\\slash Ltd', 'BSL', 'EQ'],
    ['mixed', 'Mixed CASE Textiles', 'MIX', 'EQ'],
    ['plain', 'Orbit Ventures', 'ORBIT', 'SME'],
  ];
  const ipos = names.map(([id, name, symbol, type]) => makeIpo({ id, name, symbol, type }));
  let store: Store & WebhookStore;
  beforeAll(async () => {
    store = await db.emptyStore(options);
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
  });
  afterAll(() => store.close?.());

  const matches = async (q: string, extra: Partial<ListQuery> = {}): Promise<{ ids: string[]; count: number }> => {
    const page = await store.listIpos(list({ q, ...extra }));
    return { ids: page.rows.map((r) => r.ipo.id), count: page.count };
  };

  it('folds A-Z alone: É and é stay apart, e matches neither', async () => {
    expect(await matches('É')).toEqual({ ids: ['elan-up'], count: 1 });
    expect(await matches('é')).toEqual({ ids: ['elan-low'], count: 1 });
    expect(await matches('élan')).toEqual({ ids: ['elan-low'], count: 1 });
    expect(await matches('ÉLAN')).toEqual({ ids: ['elan-up'], count: 1 });
    expect(await matches('LAN FOODS')).toEqual({ ids: ['elan-up', 'elan-low'], count: 2 });
    expect(await matches('case')).toEqual({ ids: ['mixed'], count: 1 });
    expect(await matches('mIxEd cAsE')).toEqual({ ids: ['mixed'], count: 1 });
  });

  it('takes % _ and \\ literally', async () => {
    expect(await matches('%')).toEqual({ ids: ['pct'], count: 1 });
    expect(await matches('0%')).toEqual({ ids: ['pct'], count: 1 });
    expect(await matches('_')).toEqual({ ids: ['under'], count: 1 });
    expect(await matches('a_b')).toEqual({ ids: ['under'], count: 1 });
    expect(await matches('\\')).toEqual({ ids: ['slash'], count: 1 });
    expect(await matches('k\\s')).toEqual({ ids: ['slash'], count: 1 });
    expect(await matches('%%')).toEqual({ ids: [], count: 0 });
    expect(await matches('A%B')).toEqual({ ids: [], count: 0 });
  });

  it('matches the symbol too, and combines with the other filters, the order and the page', async () => {
    expect(await matches('pure')).toEqual({ ids: ['pct'], count: 1 });
    // in the symbol alone
    expect(await matches('bsl')).toEqual({ ids: ['slash'], count: 1 });
    // announced: by name in code points ('1' < 'A' < ... < 'É' < 'é'), then id; "Élan Foods" by its symbol ELAN
    expect(await matches('e')).toEqual({ ids: ['pct', 'under', 'mixed', 'plain', 'elan-up'], count: 5 });
    expect(await matches('e', { types: ['SME'] })).toEqual({ ids: ['under', 'plain'], count: 2 });
    expect(await matches('e', { offset: 1, limit: 2 })).toEqual({ ids: ['under', 'mixed'], count: 5 });
    expect(await matches('e', { status: 'upcoming' })).toEqual({ ids: [], count: 0 });
    expect(await matches('zzz')).toEqual({ ids: [], count: 0 });
  });
});

describe.each(CACHES)(`subscription snapshots on ${KIND} (%s)`, (_, options) => {
  let store: Store & WebhookStore;
  beforeAll(async () => {
    store = await db.emptyStore(options);
  });
  afterAll(() => store.close?.());

  it('each row carries its latest snapshot at subscriptionAt, read back exactly; a later write is seen by the next read', async () => {
    const a = makeIpo({ id: 'a', name: 'Alpha', symbol: 'ALPHA' });
    const b = makeIpo({ id: 'b', name: 'Beta' });
    const c = makeIpo({ id: 'c', name: 'Gamma' });
    const early = sub('a', T - HOUR, { qib: 0.01, nii: 12.5, retail: 0, total: 9_999_999.99 });
    const later = sub('a', T, { qib: 1.1, bnii: 3.33, snii: 100, employee: 7.07, shareholder: 0.5, total: 42 });
    const future = sub('a', T + HOUR, { total: 99 });
    const ofB = sub('b', T - 2 * HOUR, { total: 1 });
    expect(await store.writeDataset({ ipos: [a, b, c], snapshots: [], subscription: [later, early, future, ofB] })).toEqual([]);

    // without subscriptionAt: no key at all
    expect((await store.findIpo({ identifier: 'a', gmpAt: null }))!).toEqual({ ipo: a });
    expect(Object.keys((await store.listIpos(list())).rows[0]!)).toEqual(['ipo']);

    const at = async (when: number) => {
      const page = await store.listIpos(list({ subscriptionAt: when }));
      const found = await Promise.all(['alpha', 'b', 'c'].map((identifier) => store.findIpo({ identifier, gmpAt: null, subscriptionAt: when })));
      expect(found.map((r) => r?.subscription)).toEqual(page.rows.map((r) => r.subscription));
      return page.rows.map((r) => r.subscription);
    };
    expect(await at(T - 3 * HOUR)).toEqual([null, null, null]);
    expect(await at(T - 2 * HOUR)).toEqual([null, ofB, null]);
    expect(await at(T - HOUR)).toEqual([early, ofB, null]);
    expect(await at(T - 1)).toEqual([early, ofB, null]);
    expect(await at(T)).toEqual([later, ofB, null]);
    expect(await at(T + HOUR)).toEqual([future, ofB, null]);
    // printed as written
    const [shown] = await at(T - HOUR);
    expect(JSON.stringify(shown!.times)).toBe('{"qib":0.01,"nii":12.5,"bnii":null,"snii":null,"retail":0,"employee":null,"shareholder":null,"total":9999999.99}');

    // a replacement at the same instant, and one for c: the next reads see them
    const replaced = sub('a', T, { total: 43.25 });
    const ofC = sub('c', T, { qib: 2 });
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [replaced, ofC] })).toEqual([]);
    expect(await at(T)).toEqual([replaced, ofB, ofC]);
    expect(await store.subscriptionSeries({ ipoId: 'a', from: 0, to: T + HOUR })).toEqual([early, replaced, future]);

    // with gmp too: both, each at its own instant
    expect(await store.writeDataset({ ipos: [], snapshots: [makeSnapshot('a', T - HOUR, { x: 500 })] })).toEqual([]);
    const both = await store.findIpo({ identifier: 'alpha', gmpAt: T, subscriptionAt: T - HOUR });
    expect(both?.gmp?.timestamp).toBe(T - HOUR);
    expect(both?.subscription).toEqual(early);
  });

  it('any value of 2 decimals below 10,000,000 reads back as the same number (property)', async () => {
    await store.writeDataset({ ipos: [makeIpo({ id: 'p' })], snapshots: [] });
    const cents = fc.option(fc.integer({ min: 0, max: 999_999_999 }), { nil: null });
    await fc.assert(
      fc.asyncProperty(fc.array(cents, { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 1_000 }), async (values, k) => {
        const given: Partial<SubscriptionTimes> = {};
        SUBSCRIPTION_CATEGORIES.forEach((c, i) => (given[c] = values[i] === null ? null : values[i]! / 100));
        const record = sub('p', T + k, given);
        expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [record] })).toEqual([]);
        const [read] = await store.subscriptionSeries({ ipoId: 'p', from: T + k, to: T + k });
        expect(read).toEqual(record);
        expect(JSON.stringify(read)).toBe(JSON.stringify(record));
        expect((await store.findIpo({ identifier: 'p', gmpAt: null, subscriptionAt: T + k }))?.subscription).toEqual(record);
      }),
      { numRuns: 40 },
    );
  });

  it('the series: ascending, both bounds inclusive, one IPO alone', async () => {
    await store.writeDataset({
      ipos: [makeIpo({ id: 's1' }), makeIpo({ id: 's2' })],
      snapshots: [],
      subscription: [sub('s1', T + 2, { total: 2 }), sub('s2', T + 1, { total: 9 }), sub('s1', T, { total: 0 }), sub('s1', T + 1, { total: 1 }), sub('s1', T + 3, { total: 3 })],
    });
    const series = async (from: number, to: number) => (await store.subscriptionSeries({ ipoId: 's1', from, to })).map((x) => x.times.total);
    expect(await series(T, T + 3)).toEqual([0, 1, 2, 3]);
    expect(await series(T + 1, T + 2)).toEqual([1, 2]);
    expect(await series(T + 1, T + 1)).toEqual([1]);
    expect(await series(T - 10, T - 1)).toEqual([]);
    expect(await series(T + 4, T + 10)).toEqual([]);
    expect(await store.subscriptionSeries({ ipoId: 'nope', from: 0, to: T + 10 })).toEqual([]);
  });

  it('a snapshot of an IPO neither written nor stored is a conflict, and nothing is written', async () => {
    const before = await count('subscription_snapshots');
    expect(
      await store.writeDataset({
        ipos: [makeIpo({ id: 'n1' })],
        snapshots: [makeSnapshot('ghost', T, { x: 1 })],
        subscription: [sub('n1', T, { total: 1 }), sub('ghost', T, { total: 1 }), sub('a', T + 5, { total: 1 }), sub('ghost2', T, { total: 1 })],
      }),
    ).toEqual([
      { kind: 'unknown-ipo', snapshot: 0 },
      { kind: 'unknown-ipo-subscription', snapshot: 1 },
      { kind: 'unknown-ipo-subscription', snapshot: 3 },
    ]);
    expect(await count('subscription_snapshots')).toBe(before);
    expect(await store.findIpo({ identifier: 'n1', gmpAt: null })).toBeNull();
  });

  it('deleting an IPO deletes its subscription snapshots (the GMP count unchanged), and the next reads see it', async () => {
    await store.writeDataset({ ipos: [makeIpo({ id: 'd1' }), makeIpo({ id: 'd2' })], snapshots: [makeSnapshot('d1', T, { x: 1 })], subscription: [sub('d1', T, { total: 1 }), sub('d1', T + 1, { total: 2 }), sub('d2', T, { total: 3 })] });
    expect((await store.findIpo({ identifier: 'd1', gmpAt: null, subscriptionAt: T + 1 }))?.subscription?.times.total).toBe(2);
    expect(await store.subscriptionSeries({ ipoId: 'd1', from: 0, to: T + 1 })).toHaveLength(2);
    expect(await store.deleteIpos(['d1'])).toEqual({ ipos: 1, snapshots: 1 });
    const { rows } = await db.client.query(`SELECT ipo_id FROM "${db.schema}".subscription_snapshots WHERE ipo_id IN ('d1', 'd2')`);
    expect(rows).toEqual([{ ipo_id: 'd2' }]);
    expect(await store.subscriptionSeries({ ipoId: 'd1', from: 0, to: T + 1 })).toEqual([]);
    expect(await store.findIpo({ identifier: 'd1', gmpAt: null, subscriptionAt: T + 1 })).toBeNull();
    // written again, it starts with none
    await store.writeDataset({ ipos: [makeIpo({ id: 'd1' })], snapshots: [] });
    expect((await store.findIpo({ identifier: 'd1', gmpAt: null, subscriptionAt: T + 1 }))?.subscription).toBeNull();
  });
});

describe(`events of a subscription write (${KIND})`, () => {
  const ALL: EventType[] = ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'gmp.snapshot', 'subscription.snapshot'];

  async function storeWith(events: EventType[]): Promise<Store & WebhookStore> {
    const store = await db.emptyStore();
    await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
    const hook = { id: 'wh', accountId: 'acct_1', url: 'https://example.com/wh', events, description: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null };
    expect(await store.insertWebhook(hook, { maxPerAccount: 10 })).toBe('ok');
    return store;
  }
  const claim = async (store: WebhookStore, now: number): Promise<Array<{ type: string; data: Record<string, unknown> }>> => {
    const all: ClaimedDelivery[] = [];
    for (;;) {
      const got = await store.claimDeliveries({ now, limit: 1000, perWebhook: 1000, perAccount: 1000, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
      if (got.length === 0) break;
      all.push(...got);
    }
    return all.map((c) => JSON.parse(c.body) as { type: string; data: Record<string, unknown> });
  };

  it('subscription.snapshot per new or changed snapshot, after the IPO events; each IPO object shows its latest snapshot at the write', async () => {
    const store = await storeWith(ALL);
    try {
      const a = makeIpo({ id: 'a' });
      const b = makeIpo({ id: 'b' });
      await store.writeDataset(
        { ipos: [a, b], snapshots: [makeSnapshot('a', T - HOUR, { x: 100 })], subscription: [sub('a', T - HOUR, { total: 1.5 }), sub('a', T + HOUR, { total: 9 }), sub('a', T, { qib: 2 })] },
        { at: T },
      );
      const first = await claim(store, T);
      expect(first.map((e) => e.type)).toEqual(['ipo.created', 'ipo.created', 'gmp.snapshot', 'subscription.snapshot', 'subscription.snapshot', 'subscription.snapshot']);
      // the IPO object: the latest at the write's instant (not the one after it); none for b
      expect(first[0]!.data.subscription).toEqual({ asOf: new Date(T).toISOString(), times: sub('a', T, { qib: 2 }).times });
      expect(first[1]!.data.subscription).toBeNull();
      expect(first.slice(3).map((e) => e.data)).toEqual([
        { ipoId: 'a', timestamp: new Date(T - HOUR).toISOString(), times: sub('a', 0, { total: 1.5 }).times },
        { ipoId: 'a', timestamp: new Date(T + HOUR).toISOString(), times: sub('a', 0, { total: 9 }).times },
        { ipoId: 'a', timestamp: new Date(T).toISOString(), times: sub('a', 0, { qib: 2 }).times },
      ]);

      // the same again: nothing new; one changed (12.5 written as 12.50 is the same): one event
      await store.writeDataset({ ipos: [], snapshots: [], subscription: [sub('a', T - HOUR, { total: 1.5 }), sub('a', T, { qib: 2 })] }, { at: T + 1 });
      expect(await claim(store, T + 1)).toEqual([]);
      await store.writeDataset({ ipos: [], snapshots: [], subscription: [sub('a', T - HOUR, { total: 1.5 }), sub('a', T, { qib: 2, nii: 0 })] }, { at: T + 2 });
      expect((await claim(store, T + 2)).map((e) => [e.type, e.data.timestamp, (e.data.times as SubscriptionTimes).nii])).toEqual([['subscription.snapshot', new Date(T).toISOString(), 0]]);

      // b updated with an older snapshot of its own while a later one is stored: the stored one shows
      await store.writeDataset({ ipos: [], snapshots: [], subscription: [sub('b', T - 1, { total: 5 })] }, { at: T + 3 });
      await claim(store, T + 3);
      await store.writeDataset({ ipos: [{ ...b, name: 'B renamed' }], snapshots: [], subscription: [sub('b', T - 2, { total: 4 })] }, { at: T + 4 });
      const updated = await claim(store, T + 4);
      expect(updated.map((e) => e.type)).toEqual(['ipo.updated', 'subscription.snapshot']);
      expect(updated[0]!.data.subscription).toEqual({ asOf: new Date(T - 1).toISOString(), times: sub('b', 0, { total: 5 }).times });
      // a's update with a snapshot at the stored one's instant: the written one replaces it
      await store.writeDataset({ ipos: [{ ...a, name: 'A renamed' }], snapshots: [], subscription: [sub('a', T, { qib: 3 })] }, { at: T + 5 });
      const replaced = await claim(store, T + 5);
      expect(replaced[0]!.data.subscription).toEqual({ asOf: new Date(T).toISOString(), times: sub('a', 0, { qib: 3 }).times });
    } finally {
      await store.close?.();
    }
  });

  it('without endpoints taking them, a subscription write records nothing', async () => {
    const store = await storeWith(['ipo.deleted']);
    try {
      await store.writeDataset({ ipos: [makeIpo({ id: 'a' })], snapshots: [], subscription: [sub('a', T, { total: 1 })] }, { at: T });
      expect(await claim(store, T)).toEqual([]);
      expect(await count('owed')).toBe(0);
      expect(await count('subscription_snapshots')).toBe(1);
    } finally {
      await store.close?.();
    }
  });
});
