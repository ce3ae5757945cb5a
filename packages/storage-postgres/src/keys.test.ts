import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, isIpokitError, listApiKeys, type Plan, type Store } from '@ipokit/core';
import { type AccountRecord, type ActiveKeyLimits, type ApiKeyRecord } from '@ipokit/core/backend';
import { migrate, migrateUpTo, SCHEMA_VERSION } from './migrations.js';
import { postgresStore } from './postgres-store.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// Key expiry, rotation and last use (migration 5): the plan limits count the keys active at
// the caller's `now`; a rotation is one atomic step under the account's lock; a use keeps the
// later instant; and a schema of version 4 upgrades with its keys working as before. A
// rotation keeps the key's expiry and names the key it replaced (migration 10), and a schema
// of version 9 upgrades without rewriting its keys.

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('keys');
});
afterAll(() => db.close());

const url = process.env.DATABASE_URL;
const kind = url ? 'PostgreSQL' : 'PGlite';

const LIMITS: ActiveKeyLimits = { free: 1, paid: 2, pro: Infinity };
const T0 = '2026-11-20T10:00:00.000Z';
const T1 = '2026-11-20T11:00:00.000Z';
const T2 = '2026-11-20T12:00:00.000Z';
const T3 = '2026-11-20T13:00:00.000Z';

function account(id: string, plan: Plan): AccountRecord {
  return { id, name: `Account ${id}`, plan, gmpAddon: false, createdAt: T0 };
}

function key(id: string, accountId: string, more: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id,
    accountId,
    hash: `hash-${id}`,
    prefix: `ipk_${id}`.slice(0, 12),
    label: `label ${id}`,
    createdAt: T0,
    revokedAt: null,
    expiresAt: null,
    lastUsedAt: null,
    rotatedFrom: null,
    ...more,
  };
}

/** What rotateApiKey takes of the new key. */
function fresh(id: string, createdAt = T0): Pick<ApiKeyRecord, 'id' | 'hash' | 'prefix' | 'createdAt'> {
  return { id, hash: `hash-${id}`, prefix: `ipk_${id}`.slice(0, 12), createdAt };
}

/**
 * Opens every connection of the test pool (8) before a race, so that concurrent calls run at
 * once instead of queueing for connections still being opened. Nothing to do on PGlite.
 */
async function warmPool(): Promise<void> {
  if (url) await Promise.all(Array.from({ length: 8 }, () => db.client.query('SELECT pg_sleep(0.02)')));
}

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const store = await db.emptyStore();
  try {
    await fn(store);
  } finally {
    await store.close?.();
  }
}

describe(`postgresStore keys: expiry, rotation, last use (${kind})`, () => {
  it('insertApiKey counts the keys active at now: an expired or revoked key takes no place', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_free', 'free'));
      // a key that expires at T1
      expect(await store.insertApiKey({ key: key('k1', 'acct_free', { expiresAt: T1 }), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      // before T1 it is active: the free plan's one key
      expect(await store.insertApiKey({ key: key('k2', 'acct_free'), maxActiveKeys: LIMITS, now: T0 })).toBe('too-many-keys');
      expect(await store.insertApiKey({ key: key('k2', 'acct_free'), maxActiveKeys: LIMITS, now: '2026-11-20T10:59:59.999Z' })).toBe('too-many-keys');
      // from T1 on it is expired (expires_at <= now)
      expect(await store.insertApiKey({ key: key('k2', 'acct_free', { createdAt: T1 }), maxActiveKeys: LIMITS, now: T1 })).toBe('ok');
      expect(await store.insertApiKey({ key: key('k3', 'acct_free', { createdAt: T1 }), maxActiveKeys: LIMITS, now: T1 })).toBe('too-many-keys');
      // a revoked key takes no place either
      expect(await store.revokeApiKey({ id: 'k2', at: T2 })).toBe(true);
      expect(await store.insertApiKey({ key: key('k3', 'acct_free', { createdAt: T2 }), maxActiveKeys: LIMITS, now: T2 })).toBe('ok');
      // a key that is not active itself is stored as given, even on a full account
      expect(await store.insertApiKey({ key: key('k4', 'acct_free', { createdAt: T2, expiresAt: T2, lastUsedAt: T1 }), maxActiveKeys: LIMITS, now: T2 })).toBe('ok');
      expect(await store.insertApiKey({ key: key('k5', 'acct_free', { createdAt: T2, revokedAt: T2 }), maxActiveKeys: LIMITS, now: T2 })).toBe('ok');
      expect(await store.insertApiKey({ key: key('k6', 'nobody'), maxActiveKeys: LIMITS, now: T2 })).toBe('not-found');
      expect(await store.listApiKeys('acct_free')).toEqual([
        key('k1', 'acct_free', { expiresAt: T1 }),
        key('k2', 'acct_free', { createdAt: T1, revokedAt: T2 }),
        key('k3', 'acct_free', { createdAt: T2 }),
        key('k4', 'acct_free', { createdAt: T2, expiresAt: T2, lastUsedAt: T1 }),
        key('k5', 'acct_free', { createdAt: T2, revokedAt: T2 }),
      ]);
    }));

  it('updateAccount counts the keys active at now', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_paid', 'paid'));
      expect(await store.insertApiKey({ key: key('a', 'acct_paid', { expiresAt: T1 }), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      expect(await store.insertApiKey({ key: key('b', 'acct_paid'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      // two active keys at T0: too many for the free plan; nothing changes
      expect(await store.updateAccount({ id: 'acct_paid', plan: 'free', gmpAddon: true, maxActiveKeys: LIMITS, now: T0 })).toBe('too-many-keys');
      expect(await store.getAccount('acct_paid')).toEqual(account('acct_paid', 'paid'));
      // at T1 key a has expired: one active key, which the free plan allows
      expect(await store.updateAccount({ id: 'acct_paid', plan: 'free', gmpAddon: true, maxActiveKeys: LIMITS, now: T1 })).toEqual({
        ...account('acct_paid', 'free'),
        gmpAddon: true,
      });
      expect(await store.updateAccount({ id: 'nobody', plan: 'free', maxActiveKeys: LIMITS, now: T1 })).toBe('not-found');
    }));

  it('rotateApiKey: a free account rotates its one key, holds two during the overlap, and rotates nothing else meanwhile', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_free', 'free'));
      expect(await store.insertApiKey({ key: key('old', 'acct_free'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      const rotate = (id: string, newId: string, now: string) => store.rotateApiKey({ id, key: fresh(newId, now), now, overlapEndsAt: T2, maxActiveKeys: LIMITS });

      expect(await rotate('nothing', 'x', T0)).toBe('not-found');
      const created = await rotate('old', 'new', T0);
      expect(created).toEqual(key('new', 'acct_free', { label: 'label old', rotatedFrom: 'old' }));
      expect(await store.listApiKeys('acct_free')).toEqual([key('new', 'acct_free', { label: 'label old', rotatedFrom: 'old' }), key('old', 'acct_free', { expiresAt: T2 })]);

      // during the overlap both keys are active: rotating either would make three
      const before = await store.listApiKeys('acct_free');
      expect(await rotate('old', 'new2', T1)).toBe('too-many-keys');
      expect(await rotate('new', 'new2', T1)).toBe('too-many-keys');
      expect(await store.listApiKeys('acct_free')).toEqual(before);
      expect(await store.findApiKey('hash-new2')).toBeNull();

      // once the overlap ends the old key is expired: 'inactive'; the new one rotates
      expect(await rotate('old', 'new2', T2)).toBe('inactive');
      expect(await rotate('new', 'new2', T2)).toEqual(key('new2', 'acct_free', { label: 'label old', createdAt: T2, rotatedFrom: 'new' }));
      // a revoked key is inactive at any time
      await store.insertAccount(account('acct_pro', 'pro'));
      expect(await store.insertApiKey({ key: key('gone', 'acct_pro'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      expect(await store.revokeApiKey({ id: 'gone', at: T1 })).toBe(true);
      expect(await store.rotateApiKey({ id: 'gone', key: fresh('gone2'), now: T0, overlapEndsAt: T2, maxActiveKeys: LIMITS })).toBe('inactive');
      expect(await store.listApiKeys('acct_pro')).toEqual([key('gone', 'acct_pro', { revokedAt: T1 })]);
    }));

  it("rotateApiKey sets the old key's expiry to the earlier of its own and the overlap's end, and gives the new key the old one's", () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_pro', 'pro'));
      for (const [id, expiresAt] of [['soon', T1], ['late', T3], ['never', null]] as const) {
        expect(await store.insertApiKey({ key: key(id, 'acct_pro', { expiresAt }), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
        expect(await store.rotateApiKey({ id, key: fresh(`${id}-2`), now: T0, overlapEndsAt: T2, maxActiveKeys: LIMITS })).toEqual(
          key(`${id}-2`, 'acct_pro', { label: `label ${id}`, expiresAt, rotatedFrom: id }),
        );
      }
      const keys = await store.listApiKeys('acct_pro');
      const expiry = Object.fromEntries((keys ?? []).map((k) => [k.id, k.expiresAt]));
      expect(expiry).toEqual({ soon: T1, late: T2, never: T2, 'soon-2': T1, 'late-2': T3, 'never-2': null });
    }));

  it('admits exactly one of 20 concurrent rotations of a free account\'s key', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_free', 'free'));
      expect(await store.insertApiKey({ key: key('old', 'acct_free'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      await warmPool();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.rotateApiKey({ id: 'old', key: fresh(`new${i}`), now: T0, overlapEndsAt: T2, maxActiveKeys: LIMITS })),
      );
      const created = results.filter((r): r is ApiKeyRecord => typeof r === 'object');
      expect(created).toHaveLength(1);
      expect(results.filter((r) => r === 'too-many-keys')).toHaveLength(19);
      expect(await store.listApiKeys('acct_free')).toEqual([created[0], key('old', 'acct_free', { expiresAt: T2 })]);
    }));

  it("admits exactly a paid account's cap of 20 concurrent key creations, and one of 20 concurrent rotations and creations at the cap", () =>
    withStore(async (store) => {
      const capped: ActiveKeyLimits = { free: 1, paid: 5, pro: Infinity };
      await store.insertAccount(account('acct_paid', 'paid'));
      expect(await store.insertApiKey({ key: key('first', 'acct_paid'), maxActiveKeys: capped, now: T0 })).toBe('ok');
      await warmPool();
      const inserts = await Promise.all(Array.from({ length: 20 }, (_, i) => store.insertApiKey({ key: key(`ins${i}`, 'acct_paid'), maxActiveKeys: capped, now: T0 })));
      expect(inserts.filter((r) => r === 'ok')).toHaveLength(4);
      expect(inserts.filter((r) => r === 'too-many-keys')).toHaveLength(16);
      const held = await store.listApiKeys('acct_paid');
      expect(held).toHaveLength(5);
      // At the cap: a rotation passes while the others number fewer than the cap (the new key
      // takes the old one's place), a creation only below it. Whatever the order, the first
      // rotation leaves 6 active and nothing passes after it, and no creation passes before.
      const ids = (held ?? []).map((k) => k.id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? store.rotateApiKey({ id: ids[(i / 2) % ids.length]!, key: fresh(`rot${i}`), now: T0, overlapEndsAt: T2, maxActiveKeys: capped })
            : store.insertApiKey({ key: key(`more${i}`, 'acct_paid'), maxActiveKeys: capped, now: T0 }),
        ),
      );
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(1);
      expect(results.filter((r) => r === 'too-many-keys')).toHaveLength(19);
      expect(await store.listApiKeys('acct_paid')).toHaveLength(6);
    }));

  it('createApiKey: exactly maxKeysPerAccount (default 100) of 150 concurrent creations on a paid account, the rest ERR:PLAN', () =>
    withStore(async (store) => {
      const acct = await createAccount(store, { name: 'Acme', plan: 'paid' });
      await warmPool();
      const results = await Promise.allSettled(Array.from({ length: 150 }, (_, i) => createApiKey(store, { accountId: acct.id, label: `k${i}` })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(100);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused).toHaveLength(50);
      for (const r of refused) expect(isIpokitError(r.reason, 'ERR:PLAN'), String(r.reason)).toBe(true);
      expect(await listApiKeys(store, { accountId: acct.id })).toHaveLength(100);
    }));

  it('serialises rotations with key creations: concurrent rotations and inserts never exceed what a serial order allows', () =>
    withStore(async (store) => {
      // A free account's one key: a rotation passes only while no other key is active, an
      // insert only while no key is; whatever the order, one rotation passes and no insert.
      await store.insertAccount(account('acct_free', 'free'));
      expect(await store.insertApiKey({ key: key('old', 'acct_free'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      await warmPool();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? store.rotateApiKey({ id: 'old', key: fresh(`rot${i}`), now: T0, overlapEndsAt: T2, maxActiveKeys: LIMITS })
            : store.insertApiKey({ key: key(`ins${i}`, 'acct_free'), maxActiveKeys: LIMITS, now: T0 }),
        ),
      );
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(1);
      expect(results.filter((r) => r === 'ok')).toHaveLength(0);
      expect(await store.listApiKeys('acct_free')).toHaveLength(2);
    }));

  it('recordKeyUse keeps the later instant, ignores unknown keys, and honours the deadline', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_paid', 'paid'));
      expect(await store.insertApiKey({ key: key('k', 'acct_paid'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      const lastUsed = async () => (await store.listApiKeys('acct_paid'))?.[0]?.lastUsedAt;
      expect(await lastUsed()).toBeNull();
      await store.recordKeyUse({ id: 'k', at: T1 });
      expect(await lastUsed()).toBe(T1);
      // another process recorded a use before this one's, later: the later one stays
      await store.recordKeyUse({ id: 'k', at: T0 }, { deadline: performance.now() + 5_000 });
      expect(await lastUsed()).toBe(T1);
      await store.recordKeyUse({ id: 'k', at: T2 }, { deadline: performance.now() + 5_000 });
      expect(await lastUsed()).toBe(T2);
      await expect(store.recordKeyUse({ id: 'unknown', at: T2 })).resolves.toBeUndefined();
      // a call whose deadline has passed does not start
      await expect(store.recordKeyUse({ id: 'k', at: T3 }, { deadline: performance.now() - 1 })).rejects.toMatchObject({ code: 'ERR:UNAVAILABLE' });
      expect(await lastUsed()).toBe(T2);
      // the use changes nothing else
      expect(await store.listApiKeys('acct_paid')).toEqual([key('k', 'acct_paid', { lastUsedAt: T2 })]);
    }));

  it('findApiKey returns the key\'s expiry', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_paid', 'paid'));
      expect(await store.insertApiKey({ key: key('k', 'acct_paid'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      const grant = { keyId: 'k', accountId: 'acct_paid', plan: 'paid', gmpAddon: false, revoked: false };
      expect(await store.findApiKey('hash-k')).toEqual({ ...grant, expiresAt: null });
      expect(await store.rotateApiKey({ id: 'k', key: fresh('k2'), now: T0, overlapEndsAt: T1, maxActiveKeys: LIMITS })).toMatchObject({ id: 'k2' });
      expect(await store.findApiKey('hash-k', { deadline: performance.now() + 5_000 })).toEqual({ ...grant, expiresAt: T1 });
      expect(await store.findApiKey('hash-k2')).toEqual({ ...grant, keyId: 'k2', expiresAt: null });
    }));

  it.skipIf(!url)('a rotation waits for a revocation under way in another session, and then finds the key inactive (PostgreSQL)', () =>
    withStore(async (store) => {
      await store.insertAccount(account('acct_paid', 'paid'));
      expect(await store.insertApiKey({ key: key('k', 'acct_paid'), maxActiveKeys: LIMITS, now: T0 })).toBe('ok');
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`UPDATE "${db.schema}".api_keys SET revoked_at = $2 WHERE id = $1`, ['k', T0]);
        let settled = false;
        const rotation = store.rotateApiKey({ id: 'k', key: fresh('k2'), now: T1, overlapEndsAt: T2, maxActiveKeys: LIMITS }).finally(() => {
          settled = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(settled).toBe(false);
        await other.query('COMMIT');
        expect(await rotation).toBe('inactive');
        expect(await store.listApiKeys('acct_paid')).toEqual([key('k', 'acct_paid', { revokedAt: T0 })]);
      } finally {
        await other.end();
      }
    }));

  it('migration 5 keeps the keys of a version 4 schema working, and the functions of version 4 keep working after it', async () => {
    const schema = `${db.schema}_v4`;
    const q = async (text: string, params: unknown[] = []) => (await db.client.query(text, params)).rows as Array<Record<string, unknown>>;
    try {
      expect(await migrateUpTo(db.client, { schema }, 4)).toEqual([1, 2, 3, 4]);
      // a process of version 4 makes an account and keys, and revokes one
      await q(`INSERT INTO "${schema}".accounts (id, name, plan, gmp_addon, created_at) VALUES ('acct', 'Account acct', 'paid', false, $1)`, [T0]);
      const oldInsert = (id: string, now: string) =>
        q(`SELECT "${schema}".insert_api_key($1, 'acct', $2, $3, $4, $5, 1, 2, 'Infinity') AS r`, [id, `hash-${id}`, `ipk_${id}`, `label ${id}`, now]);
      expect(await oldInsert('a', T0)).toEqual([{ r: 'ok' }]);
      expect(await oldInsert('b', T0)).toEqual([{ r: 'ok' }]);
      await q(`UPDATE "${schema}".api_keys SET revoked_at = $1 WHERE id = 'b'`, [T0]);

      // (and 6: the store needs the latest schema)
      expect(await migrate(db.client, { schema })).toEqual(versionsFrom(5));
      const store = postgresStore({ client: db.client, schema });
      try {
        // the keys of before: no expiry, no use
        expect(await store.listApiKeys('acct')).toEqual([key('a', 'acct'), key('b', 'acct', { revokedAt: T0 })]);
        expect(await store.findApiKey('hash-a')).toEqual({ keyId: 'a', accountId: 'acct', plan: 'paid', gmpAddon: false, revoked: false, expiresAt: null });
        await store.recordKeyUse({ id: 'a', at: T1 });
        // a rotates (paid: 2 keys), and its overlap ends at T2
        expect(await store.rotateApiKey({ id: 'a', key: fresh('c', T1), now: T1, overlapEndsAt: T2, maxActiveKeys: LIMITS })).toEqual(
          key('c', 'acct', { label: 'label a', createdAt: T1, rotatedFrom: 'a' }),
        );
        expect(await store.listApiKeys('acct')).toEqual([
          key('a', 'acct', { expiresAt: T2, lastUsedAt: T1 }),
          key('b', 'acct', { revokedAt: T0 }),
          key('c', 'acct', { label: 'label a', createdAt: T1, rotatedFrom: 'a' }),
        ]);

        // A process of version 4, still running (a rolling deploy): its functions count the
        // expired key a as active, which is only stricter. At T3 this version admits a key
        // and a move to the free plan; version 4 refuses both.
        expect(await oldInsert('d', T3)).toEqual([{ r: 'too-many-keys' }]);
        expect(await q(`SELECT plan FROM "${schema}".update_account('acct', 'free', NULL, 1, 2, 'Infinity')`)).toEqual([{ plan: null }]);
        expect(await store.updateAccount({ id: 'acct', plan: 'free', maxActiveKeys: LIMITS, now: T3 })).toEqual({ ...account('acct', 'free') });
        expect(await q(`SELECT plan FROM "${schema}".update_account('acct', 'paid', NULL, 1, 2, 'Infinity')`)).toEqual([{ plan: 'paid' }]);
        expect(await store.insertApiKey({ key: key('d', 'acct', { createdAt: T3 }), maxActiveKeys: LIMITS, now: T3 })).toBe('ok');
        // and the key it makes is one of this version's: never expiring, never used
        expect(await q(`SELECT "${schema}".insert_api_key('e', 'acct', 'hash-e', 'ipk_e', 'label e', $1, 1, 10, 'Infinity') AS r`, [T3])).toEqual([{ r: 'ok' }]);
        expect((await store.listApiKeys('acct'))?.at(-1)).toEqual(key('e', 'acct', { createdAt: T3 }));
      } finally {
        await store.close?.();
      }
    } finally {
      await db.client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('migration 10 adds rotated_from without rewriting the keys of a version 9 schema; a process of version 9 rotating after it keeps the expiry too', async () => {
    const schema = `${db.schema}_v9`;
    const q = async (text: string, params: unknown[] = []) => (await db.client.query(text, params)).rows as Array<Record<string, unknown>>;
    const oldRotate = (id: string, newId: string, now: string) =>
      q(`SELECT * FROM "${schema}".rotate_api_key($1, $2, $3, $4, $5, $5, $6, 1, 2, 'Infinity')`, [id, newId, `hash-${newId}`, `ipk_${newId}`, now, T2]);
    try {
      expect(await migrateUpTo(db.client, { schema }, 9)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // a process of version 9: an account, a trial key, and a rotation of it (which lost the expiry)
      await q(`INSERT INTO "${schema}".accounts (id, name, plan, gmp_addon, created_at) VALUES ('acct', 'Account acct', 'pro', false, $1)`, [T0]);
      const insert = (id: string, expires: string | null) =>
        q(`SELECT "${schema}".insert_api_key_at($1, 'acct', $2, $3, $4, $5, NULL, $6, NULL, $5, 1, 2, 'Infinity') AS r`, [id, `hash-${id}`, `ipk_${id}`, `label ${id}`, T0, expires]);
      expect(await insert('t', T3)).toEqual([{ r: 'ok' }]);
      expect(await oldRotate('t', 't2', T0)).toEqual([{ r_status: 'ok', r_account: 'acct', r_label: 'label t' }]);
      expect(await insert('u', T3)).toEqual([{ r: 'ok' }]);
      const file = async () => (await q(`SELECT relfilenode::text AS f FROM pg_class WHERE oid = '"${schema}".api_keys'::regclass`))[0]!.f;
      const before = await file();

      expect(await migrate(db.client, { schema })).toEqual(versionsFrom(10));
      // a nullable column without a default: the table's file is the same, no row was rewritten
      expect(await file()).toBe(before);
      const store = postgresStore({ client: db.client, schema });
      try {
        // the keys of before replaced none this version knows of; t2 is as version 9 made it
        expect(await store.listApiKeys('acct')).toEqual([key('t', 'acct', { expiresAt: T2 }), key('t2', 'acct', { label: 'label t' }), key('u', 'acct', { expiresAt: T3 })]);
        // version 9, still running (a rolling deploy), rotates u: its function's answer as before, this version's rotation
        expect(await oldRotate('u', 'u2', T1)).toEqual([{ r_status: 'ok', r_account: 'acct', r_label: 'label u' }]);
        expect((await store.listApiKeys('acct'))?.find((k) => k.id === 'u2')).toEqual(key('u2', 'acct', { label: 'label u', createdAt: T1, expiresAt: T3, rotatedFrom: 'u' }));
        expect(await oldRotate('u', 'u3', T3)).toEqual([{ r_status: 'inactive', r_account: null, r_label: null }]);
        // and this version rotates u2 with its expiry
        expect(await store.rotateApiKey({ id: 'u2', key: fresh('u4', T1), now: T1, overlapEndsAt: T2, maxActiveKeys: LIMITS })).toEqual(
          key('u4', 'acct', { label: 'label u', createdAt: T1, expiresAt: T3, rotatedFrom: 'u2' }),
        );
      } finally {
        await store.close?.();
      }
    } finally {
      await db.client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

/** The versions `migrate` applies to a schema at version `first - 1`: `first` up to this package's. */
function versionsFrom(first: number): number[] {
  return Array.from({ length: SCHEMA_VERSION - first + 1 }, (_, i) => first + i);
}
