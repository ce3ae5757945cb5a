/**
 * The webhook capability's conformance checks (`WebhookStore`, docs/spec.md#webhooks): endpoints,
 * the events a data write records with it, status changes at IST midnights, and the
 * deliveries' claims, leases, settling, listing, replay and pruning. Random write sequences
 * are compared with the reference store, whose webhook part is the core's `MemoryOutbox`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AccountStore, type EventType, type IpoStore, todayInIst, type WebhookStore } from '@ipokit/core';
import { type ClaimedDelivery, type DeliveryEventType, type DeliveryResult, DISABLED_ERROR, type IpoRecord, type SnapshotRecord, statusChangeEventId, toGmpSnapshot, toIsoUtc, toWireIpo, type WebhookRecord } from '@ipokit/core/backend';
import { makeIpo, makeSnapshot, makeSubscription } from './arbitraries.js';
import { referenceStore } from './reference-store.js';

/** What the webhook checks need: the IPO data, accounts and webhooks of one backend. */
export type WebhookTestStore = IpoStore & AccountStore & WebhookStore;

/** Options of {@link testWebhookStore}. */
export interface TestWebhookStoreOptions {
  name?: string;
  /** A fresh, empty store with IPO data, accounts and webhooks. */
  createStore: () => WebhookTestStore | Promise<WebhookTestStore>;
  destroyStore?: (store: WebhookTestStore) => void | Promise<void>;
  /** Runs of the random write sequences compared with the reference (default 30). */
  propertyRuns?: number;
}

/**
 * Registers the webhook endpoint checks with vitest.
 *
 * @example
 * ```ts
 * testWebhookStore({ name: 'memoryStore', createStore: () => memoryStore() });
 * ```
 */
export function testWebhookStore(options: TestWebhookStoreOptions): void {
  const check = (name: string, fn: (store: WebhookTestStore) => Promise<void>, timeout?: number) =>
    it(name, { timeout: timeout ?? 15_000 }, async () => {
      const store = await options.createStore();
      try {
        await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
        await store.insertAccount({ id: 'acct_2', name: 'Two', plan: 'pro', gmpAddon: false, createdAt: '2026-11-20T10:00:00.000Z' });
        await fn(store);
      } finally {
        await options.destroyStore?.(store);
      }
    });
  const hook = (id: string, accountId: string, createdAt = '2026-11-20T10:00:00.000Z'): WebhookRecord => ({
    id,
    accountId,
    url: `https://example.com/hooks/${encodeURIComponent(id)}?q=\u{1F600}`,
    events: ['ipo.created', 'ipo.status_changed'],
    description: id === 'wh_none' ? null : `hook ${id} \u{1F600}`,
    secret: `whsec_${'A'.repeat(32)}`,
    createdAt,
    disabledAt: null,
    pausedAt: null,
    previousSecret: null,
    previousSecretExpiresAt: null,
  });

  describe(options.name ?? 'WebhookStore', () => {
    check('insertWebhook then getWebhook and listWebhooks give it back exactly; unknown ids are null', async (store) => {
      const a = hook('wh_a', 'acct_1');
      expect(await store.insertWebhook(a, NO_CAP)).toBe('ok');
      expect(await store.getWebhook('wh_a')).toEqual(a);
      expect(await store.listWebhooks('acct_1')).toEqual([a]);
      expect(await store.listWebhooks('acct_2')).toEqual([]);
      expect(await store.listWebhooks('acct_9')).toBeNull();
      expect(await store.getWebhook('wh_b')).toBeNull();
      expect(await store.getWebhook('WH_A')).toBeNull();
      const none = hook('wh_none', 'acct_2');
      expect(await store.insertWebhook(none, NO_CAP)).toBe('ok');
      expect(await store.getWebhook('wh_none')).toEqual(none);
    });

    check("insertWebhook: 'too-many-webhooks' (nothing stored) once the account has maxPerAccount endpoints, disabled ones counted; other accounts unaffected", async (store) => {
      expect(await store.insertWebhook(hook('wh_1', 'acct_1'), { maxPerAccount: 2 })).toBe('ok');
      expect(await store.insertWebhook({ ...hook('wh_2', 'acct_1'), disabledAt: '2026-11-21T00:00:00.000Z' }, { maxPerAccount: 2 })).toBe('ok');
      expect(await store.insertWebhook(hook('wh_3', 'acct_1'), { maxPerAccount: 2 })).toBe('too-many-webhooks');
      expect(await store.getWebhook('wh_3')).toBeNull();
      expect(await store.insertWebhook(hook('wh_4', 'acct_2'), { maxPerAccount: 2 })).toBe('ok');
      expect(await store.insertWebhook(hook('wh_3', 'acct_1'), { maxPerAccount: 3 })).toBe('ok');
      expect(await store.deleteWebhook('wh_1')).toBe(true);
      expect(await store.insertWebhook(hook('wh_5', 'acct_1'), { maxPerAccount: 3 })).toBe('ok');
      expect(await store.insertWebhook(hook('wh_9', 'acct_9'), { maxPerAccount: 0 })).toBe('not-found');
    });

    check('insertWebhook: concurrent inserts never pass the cap', async (store) => {
      const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => store.insertWebhook(hook(`wh_c${i}`, 'acct_1'), { maxPerAccount: 5 })));
      expect(outcomes.filter((o) => o === 'ok').length).toBe(5);
      expect(outcomes.filter((o) => o === 'too-many-webhooks').length).toBe(19);
      expect((await store.listWebhooks('acct_1'))!.length).toBe(5);
    });

    check("insertWebhook: 'not-found' for an unknown account, storing nothing", async (store) => {
      expect(await store.insertWebhook(hook('wh_a', 'acct_9'), NO_CAP)).toBe('not-found');
      expect(await store.getWebhook('wh_a')).toBeNull();
    });

    check('listWebhooks: ordered by createdAt, then id in code-point order; an account sees its own only', async (store) => {
      const hooks = [
        hook('wh_b', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_\u{1F600}', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_\uFFFD', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_z', 'acct_1', '2026-11-20T10:00:00.500Z'),
        hook('wh_A', 'acct_1', '2026-11-20T10:00:01.000Z'),
        hook('wh_other', 'acct_2', '2026-11-20T09:00:00.000Z'),
      ];
      for (const h of hooks) expect(await store.insertWebhook(h, NO_CAP)).toBe('ok');
      expect((await store.listWebhooks('acct_1'))?.map((h) => h.id)).toEqual(['wh_z', 'wh_A', 'wh_b', 'wh_\uFFFD', 'wh_\u{1F600}']);
      expect((await store.listWebhooks('acct_2'))?.map((h) => h.id)).toEqual(['wh_other']);
    });

    check('deleteWebhook removes it (true), and is false for an unknown id', async (store) => {
      expect(await store.insertWebhook(hook('wh_a', 'acct_1'), NO_CAP)).toBe('ok');
      expect(await store.insertWebhook(hook('wh_b', 'acct_1'), NO_CAP)).toBe('ok');
      expect(await store.deleteWebhook('wh_a')).toBe(true);
      expect(await store.deleteWebhook('wh_a')).toBe(false);
      expect(await store.deleteWebhook('wh_nope')).toBe(false);
      expect(await store.getWebhook('wh_a')).toBeNull();
      expect((await store.listWebhooks('acct_1'))?.map((h) => h.id)).toEqual(['wh_b']);
    });

    check('records given and returned are copies: changing one changes nothing stored', async (store) => {
      const a = hook('wh_a', 'acct_1');
      expect(await store.insertWebhook(a, NO_CAP)).toBe('ok');
      a.events.push('gmp.snapshot');
      a.url = 'https://changed.example';
      const got = (await store.getWebhook('wh_a'))!;
      got.events.length = 0;
      (await store.listWebhooks('acct_1'))![0]!.events.push('ipo.deleted');
      expect(await store.getWebhook('wh_a')).toEqual(hook('wh_a', 'acct_1'));
    });
  });

  const name = options.name ?? 'WebhookStore';
  describe(`${name}: events`, () => eventChecks(check, hook));
  describe(`${name}: deliveries`, () => deliveryChecks(check, hook));
  describe(`${name}: status changes`, () => statusChecks(check, hook));
  describe(`${name}: changes by the account holder`, () => holderChecks(check, hook));
  describe(`${name}: against the reference`, () => {
    check(
      'random writes and deletions record the same events, with the same deliveries, as the reference store',
      async (store) => {
        await fc.assert(
          fc.asyncProperty(writeSequenceArbitrary(), async (steps) => compareWithReference(store, steps)),
          { numRuns: options.propertyRuns ?? 30 },
        );
      },
      120_000,
    );
  });
}

type Check = (name: string, fn: (store: WebhookTestStore) => Promise<void>, timeout?: number) => void;
type Hook = (id: string, accountId: string, createdAt?: string) => WebhookRecord;

// The instants of the checks: 2026-11-24 10:00 IST, and the midnight that starts the 25th.
const T = Date.parse('2026-11-24T04:30:00.000Z');
const MIDNIGHT_25 = Date.parse('2026-11-24T18:30:00.000Z');
const DAY = 86_400_000;
const LEASE = 60_000;
/** No cap on an account's endpoints. */
const NO_CAP = { maxPerAccount: Infinity };
const ALL: EventType[] = ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'gmp.snapshot', 'subscription.snapshot'];

/** Claims everything due at `now` (generous limits). */
const claimAll = (store: WebhookStore, now: number, extra: Partial<Parameters<WebhookStore['claimDeliveries']>[0]> = {}): Promise<ClaimedDelivery[]> =>
  store.claimDeliveries({ now, limit: 1_000, perWebhook: 1_000, perAccount: 1_000, leaseMs: LEASE, busy: new Map(), busyAccounts: new Map(), ...extra });

/** A claimed delivery's parts that do not depend on random ids, for comparing. */
interface Shape {
  webhookId: string;
  type: DeliveryEventType;
  body: unknown;
}
const shape = (c: ClaimedDelivery): Shape => ({ webhookId: c.delivery.webhookId, type: c.delivery.eventType, body: JSON.parse(c.body) });

function sortShapes(shapes: Shape[]): Shape[] {
  const key = (s: Shape): string => `${s.webhookId}\u0000${s.type}\u0000${JSON.stringify(s.body)}`;
  return [...shapes].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const result = (c: ClaimedDelivery, at: number, fields: Partial<DeliveryResult> = {}): DeliveryResult => ({
  id: c.delivery.id,
  lease: c.lease,
  at,
  delivered: true,
  status: 200,
  error: null,
  nextAttemptAt: null,
  disableBefore: at - 5 * DAY,
  ...fields,
});

const withTypes = (h: WebhookRecord, events: EventType[]): WebhookRecord => ({ ...h, events });

function eventChecks(check: Check, hook: Hook): void {
  // Open on 2026-11-24 (IST): opened on the 20th, closes after the 26th.
  const ipo = makeIpo({ id: 'ipo1', symbol: 'ONE', startDate: '2026-11-20', endDate: '2026-11-26', listingDate: '2026-12-01' });
  const snap = makeSnapshot('ipo1', '2026-11-24T04:00:00.000Z', { a: 4_200, b: 4_000 });

  check('without endpoints a write records nothing; with them, one pending delivery per event and taking endpoint, due at the write', async (store) => {
    expect(await store.writeDataset({ ipos: [makeIpo({ id: 'early' })], snapshots: [] }, { at: T - 10 })).toEqual([]);
    expect(await store.insertWebhook(withTypes(hook('wh_all', 'acct_1'), ALL), NO_CAP)).toBe('ok');
    expect(await store.insertWebhook(withTypes(hook('wh_created', 'acct_2'), ['ipo.created']), NO_CAP)).toBe('ok');
    expect(await store.writeDataset({ ipos: [ipo], snapshots: [snap] }, { at: T })).toEqual([]);
    expect(await claimAll(store, T - 1)).toEqual([]);
    const claimed = await claimAll(store, T);
    const created = { type: 'ipo.created', timestamp: toIsoUtc(T), data: toWireIpo(ipo, 'open') };
    const gmp = {
      type: 'gmp.snapshot',
      timestamp: toIsoUtc(T),
      data: { ipoId: 'ipo1', timestamp: '2026-11-24T04:00:00.000Z', aggregations: toGmpSnapshot(snap).aggregations },
    };
    expect(sortShapes(claimed.map(shape))).toEqual(
      sortShapes([
        { webhookId: 'wh_all', type: 'ipo.created', body: created },
        { webhookId: 'wh_all', type: 'gmp.snapshot', body: gmp },
        { webhookId: 'wh_created', type: 'ipo.created', body: created },
      ]),
    );
    for (const c of claimed) {
      expect(c.delivery).toMatchObject({ state: 'pending', attempts: 0, createdAt: T, nextAttemptAt: T, lastAttemptAt: null, lastStatus: null, lastError: null });
      expect(c.delivery.id).toMatch(/^dlv_/);
      expect(c.url).toBe(hook(c.delivery.webhookId, 'x').url);
      expect(c.secret).toBe(`whsec_${'A'.repeat(32)}`);
    }
    // One event per change: both endpoints' ipo.created deliveries carry one event id.
    const ids = claimed.filter((c) => c.delivery.eventType === 'ipo.created').map((c) => c.delivery.eventId);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^evt_/);
  });

  check('an unchanged rewrite records nothing; a change is ipo.updated, with ipo.status_changed when the status on that IST day moves', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_all', 'acct_1'), ALL), NO_CAP);
    await store.writeDataset({ ipos: [ipo], snapshots: [snap] }, { at: T });
    await claimAll(store, T);
    const same = makeSnapshot('ipo1', '2026-11-24T04:00:00.000Z', { b: 4_000, a: 4_200 });
    expect(await store.writeDataset({ ipos: [makeIpo({ ...ipo })], snapshots: [same] }, { at: T + 1 })).toEqual([]);
    expect(await claimAll(store, T + 1)).toEqual([]);
    // The closing date moves to yesterday: open -> closed today.
    const moved = { ...ipo, endDate: '2026-11-23', about: 'Now closed' };
    const changedSnap = makeSnapshot('ipo1', '2026-11-24T04:00:00.000Z', { a: 4_300, b: 4_000 });
    await store.writeDataset({ ipos: [moved], snapshots: [changedSnap] }, { at: T + 2 });
    const claimed = (await claimAll(store, T + 2)).map(shape);
    expect(sortShapes(claimed)).toEqual(
      sortShapes([
        { webhookId: 'wh_all', type: 'ipo.updated', body: { type: 'ipo.updated', timestamp: toIsoUtc(T + 2), data: toWireIpo(moved, 'closed') } },
        {
          webhookId: 'wh_all',
          type: 'ipo.status_changed',
          body: { type: 'ipo.status_changed', timestamp: toIsoUtc(T + 2), data: { id: 'ipo1', from: 'open', to: 'closed' } },
        },
        {
          webhookId: 'wh_all',
          type: 'gmp.snapshot',
          body: {
            type: 'gmp.snapshot',
            timestamp: toIsoUtc(T + 2),
            data: { ipoId: 'ipo1', timestamp: '2026-11-24T04:00:00.000Z', aggregations: toGmpSnapshot(changedSnap).aggregations },
          },
        },
      ]),
    );
  });

  check('subscription.snapshot per new or changed subscription snapshot ({ ipoId, timestamp, times }, every category); the IPO object of ipo.created and ipo.updated shows its latest subscription snapshot at the write', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_sub', 'acct_1'), ['subscription.snapshot', 'ipo.created', 'ipo.updated']), NO_CAP);
    const first = makeSubscription('ipo1', '2026-11-24T04:00:00.000Z', { retail: 1.5, total: 0.75 });
    const later = makeSubscription('ipo1', '2026-11-25T04:00:00.000Z', { total: 9 }); // after the write's instant
    const event = (at: number, s: typeof first): Shape => ({
      webhookId: 'wh_sub',
      type: 'subscription.snapshot',
      body: { type: 'subscription.snapshot', timestamp: toIsoUtc(at), data: { ipoId: s.ipoId, timestamp: toIsoUtc(s.timestamp), times: s.times } },
    });
    // Claims what is due and settles it delivered, so that nothing comes back when its lease ends.
    const take = async (at: number): Promise<Shape[]> => {
      const claimed = await claimAll(store, at);
      await store.finishDeliveries(claimed.map((c) => result(c, at)));
      return claimed.map(shape);
    };
    expect(await store.writeDataset({ ipos: [ipo], snapshots: [], subscription: [later, first] }, { at: T })).toEqual([]);
    const created = { type: 'ipo.created', timestamp: toIsoUtc(T), data: toWireIpo(ipo, 'open', undefined, first) };
    expect(sortShapes(await take(T))).toEqual(sortShapes([{ webhookId: 'wh_sub', type: 'ipo.created', body: created }, event(T, later), event(T, first)]));
    expect(JSON.stringify(created.data.subscription)).toBe('{"asOf":"2026-11-24T04:00:00.000Z","times":{"qib":null,"nii":null,"bnii":null,"snii":null,"retail":1.5,"employee":null,"shareholder":null,"total":0.75}}');
    // The same snapshots again: nothing; one category moved: that snapshot alone.
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [first, later] }, { at: T + 1 })).toEqual([]);
    expect(await take(T + 1)).toEqual([]);
    const moved = makeSubscription('ipo1', '2026-11-24T04:00:00.000Z', { retail: 1.5, total: 0.8 });
    expect(await store.writeDataset({ ipos: [], snapshots: [], subscription: [moved, later] }, { at: T + 2 })).toEqual([]);
    expect(await take(T + 2)).toEqual([event(T + 2, moved)]);
    // A write a day later: the IPO object shows the snapshot that is now the latest.
    const renamed = { ...ipo, name: 'Renamed' };
    expect(await store.writeDataset({ ipos: [renamed], snapshots: [] }, { at: T + DAY })).toEqual([]);
    expect(await take(T + DAY)).toEqual([
      { webhookId: 'wh_sub', type: 'ipo.updated', body: { type: 'ipo.updated', timestamp: toIsoUtc(T + DAY), data: toWireIpo(renamed, 'open', undefined, later) } },
    ]);
    // deleteIpos takes the IPO's subscription snapshots with it: an IPO written again under that id shows none.
    await store.deleteIpos(['ipo1'], { at: T + DAY + 1 });
    expect(await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T + DAY + 2 })).toEqual([]);
    expect(await take(T + DAY + 2)).toEqual([
      { webhookId: 'wh_sub', type: 'ipo.created', body: { type: 'ipo.created', timestamp: toIsoUtc(T + DAY + 2), data: toWireIpo(ipo, 'open') } },
    ]);
  });

  check('the status change an import causes has the id every process gives that change', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_sc', 'acct_1'), ['ipo.status_changed']), NO_CAP);
    await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T });
    await store.writeDataset({ ipos: [{ ...ipo, startDate: '2026-11-25', endDate: '2026-11-27' }], snapshots: [] }, { at: T + 5 });
    const claimed = await claimAll(store, T + 5);
    expect(claimed.map((c) => c.delivery.eventId)).toEqual([statusChangeEventId('ipo1', 'upcoming', todayInIst(T + 5))]);
  });

  check('deleteIpos records ipo.deleted for each IPO it removed, and nothing for unknown ids', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_del', 'acct_1'), ['ipo.deleted']), NO_CAP);
    await store.writeDataset({ ipos: [ipo, makeIpo({ id: 'ipo2' })], snapshots: [snap] }, { at: T });
    expect(await store.deleteIpos(['ipo2', 'nope', 'ipo1'], { at: T + 7 })).toEqual({ ipos: 2, snapshots: 1 });
    const claimed = (await claimAll(store, T + 7)).map(shape);
    const deleted = (id: string): Shape => ({ webhookId: 'wh_del', type: 'ipo.deleted', body: { type: 'ipo.deleted', timestamp: toIsoUtc(T + 7), data: { id } } });
    expect(sortShapes(claimed)).toEqual(sortShapes([deleted('ipo1'), deleted('ipo2')]));
    expect(await store.deleteIpos(['ipo1'], { at: T + 8 })).toEqual({ ipos: 0, snapshots: 0 });
    expect(await claimAll(store, T + 8)).toEqual([]);
  });

  check('a refused write (its conflicts returned) records no event', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_all', 'acct_1'), ALL), NO_CAP);
    await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T });
    await claimAll(store, T);
    const clash = makeIpo({ id: 'ipo2', symbol: 'one' });
    const conflicts = await store.writeDataset({ ipos: [clash], snapshots: [makeSnapshot('nope', T, { a: 1 })] }, { at: T + 1 });
    expect(conflicts.length).toBe(2);
    expect(await claimAll(store, T + 1)).toEqual([]);
  });

  check('a disabled endpoint gets no deliveries, and a deleted one loses its own', async (store) => {
    await store.insertWebhook({ ...withTypes(hook('wh_off', 'acct_1'), ALL), disabledAt: '2026-11-20T00:00:00.000Z' }, NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_gone', 'acct_1'), ALL), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_on', 'acct_2'), ['ipo.created']), NO_CAP);
    await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T });
    expect(await store.deleteWebhook('wh_gone')).toBe(true);
    expect((await claimAll(store, T)).map((c) => c.delivery.webhookId)).toEqual(['wh_on']);
    expect(await store.listDeliveries({ webhookId: 'wh_gone', before: null, limit: 10 })).toBeNull();
    expect(await store.listDeliveries({ webhookId: 'wh_off', before: null, limit: 10 })).toEqual([]);
  });
}

function deliveryChecks(check: Check, hook: Hook): void {
  /** Endpoints wh_a and wh_b taking ipo.created, and `n` IPOs created at T + i. */
  const setUp = async (store: WebhookTestStore, n: number): Promise<void> => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created']), NO_CAP);
    for (let i = 0; i < n; i++) await store.writeDataset({ ipos: [makeIpo({ id: `ipo${i}` })], snapshots: [] }, { at: T + i });
  };
  const ipoOf = (c: ClaimedDelivery): string => (JSON.parse(c.body) as { data: { id: string } }).data.id;
  const pairs = (cs: ClaimedDelivery[]): string[][] => cs.map((c) => [c.delivery.webhookId, ipoOf(c)]);
  const list = async (store: WebhookStore, webhookId = 'wh_a') => (await store.listDeliveries({ webhookId, before: null, limit: 100 }))!;

  check('claims take turns across accounts (then earliest first), at most limit and perWebhook less what busy says is in flight; a leased delivery is claimed again only when its lease ran out', async (store) => {
    await setUp(store, 4);
    // wh_b has 2 in flight (none more), wh_a 1 (one more)
    const first = await store.claimDeliveries({ now: T + 10, limit: 3, perWebhook: 2, perAccount: 100, leaseMs: LEASE, busyAccounts: new Map(), busy: new Map([['wh_b', 2], ['wh_a', 1]]) });
    expect(pairs(first)).toEqual([['wh_a', 'ipo0']]);
    const next = await store.claimDeliveries({ now: T + 10, limit: 3, perWebhook: 2, perAccount: 100, leaseMs: LEASE, busyAccounts: new Map(), busy: new Map([['wh_b', 5], ['wh_a', 1]]) });
    expect(pairs(next)).toEqual([['wh_a', 'ipo1']]);
    const second = await store.claimDeliveries({ now: T + 10, limit: 3, perWebhook: 2, perAccount: 100, leaseMs: LEASE, busyAccounts: new Map(), busy: new Map() });
    // (each account's first, earliest first; then each account's second)
    expect(pairs(second)).toEqual([
      ['wh_b', 'ipo0'],
      ['wh_a', 'ipo2'],
      ['wh_b', 'ipo1'],
    ]);
    const rest = await claimAll(store, T + 10);
    expect(pairs(rest)).toEqual([
      ['wh_b', 'ipo2'],
      ['wh_a', 'ipo3'],
      ['wh_b', 'ipo3'],
    ]);
    expect(await claimAll(store, T + 10 + LEASE - 1)).toEqual([]);
    // The leases run out: all eight are claimable again, under new leases (a worker that died loses nothing).
    const again = await claimAll(store, T + 10 + LEASE);
    expect(again.length).toBe(8);
    const old = new Set([...first, ...next, ...second, ...rest].map((c) => c.lease));
    expect(again.every((c) => !old.has(c.lease))).toBe(true);
    // An old lease settles nothing now.
    await store.finishDeliveries([result(first[0]!, T + 10 + LEASE + 1)]);
    expect((await list(store)).every((d) => d.state === 'pending' && d.attempts === 0)).toBe(true);
  });

  check('claims: an account gets at most perAccount less busyAccounts, its endpoints taking turns; each claim names its account', async (store) => {
    for (const id of ['wh_a1', 'wh_a2', 'wh_a3']) await store.insertWebhook(withTypes(hook(id, 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created']), NO_CAP);
    for (let i = 0; i < 4; i++) await store.writeDataset({ ipos: [makeIpo({ id: `ipo${i}` })], snapshots: [] }, { at: T + i });
    const base = { now: T + 10, perWebhook: 4, leaseMs: LEASE, busy: new Map<string, number>() };
    // acct_1 has 2 in flight of its 3: one more (its third, so after acct_2's first two), from
    // its first endpoint by id; acct_2 up to 3.
    const first = await store.claimDeliveries({ ...base, limit: 100, perAccount: 3, busyAccounts: new Map([['acct_1', 2]]) });
    expect(pairs(first)).toEqual([
      ['wh_b', 'ipo0'],
      ['wh_b', 'ipo1'],
      ['wh_a1', 'ipo0'],
      ['wh_b', 'ipo2'],
    ]);
    expect(first.map((c) => c.accountId)).toEqual(['acct_2', 'acct_2', 'acct_1', 'acct_2']);
    // acct_1 at its perAccount: none of its; acct_2's last.
    const second = await store.claimDeliveries({ ...base, limit: 100, perAccount: 3, busyAccounts: new Map([['acct_1', 3]]) });
    expect(pairs(second)).toEqual([['wh_b', 'ipo3']]);
    // Within acct_1, its endpoints take turns (by what each has in flight, then due, then order made, then id).
    const third = await store.claimDeliveries({ ...base, limit: 4, perAccount: 100, busy: new Map([['wh_a2', 1]]), busyAccounts: new Map() });
    expect(pairs(third)).toEqual([
      ['wh_a3', 'ipo0'],
      ['wh_a1', 'ipo1'],
      ['wh_a2', 'ipo0'],
      ['wh_a3', 'ipo1'],
    ]);
  });

  check('claims follow the fair order of WebhookStore.claimDeliveries for random backlogs, in-flight counts and limits', async (store) => {
    const accounts = ['acct_1', 'acct_2'];
    const hooks = ['wh_p', 'wh_q', 'wh_r', 'wh_s'];
    const owner = (h: string): string => (h === 'wh_s' ? 'acct_2' : 'acct_1');
    for (const h of hooks) await store.insertWebhook(withTypes(hook(h, owner(h)), ['ipo.created']), NO_CAP);
    // Each write one event at its own instant (so the order made is the creation order); some
    // endpoints miss some writes (they were not subscribed... they take every ipo.created, so
    // instead a delivery of each is settled or retried to spread their due times).
    let at = T;
    let seq = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          writes: fc.integer({ min: 0, max: 4 }),
          retry: fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3 })), { maxLength: 6 }),
          busy: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 4, maxLength: 4 }),
          busyAccounts: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 2, maxLength: 2 }),
          perWebhook: fc.integer({ min: 1, max: 4 }),
          perAccount: fc.integer({ min: 1, max: 8 }),
          limit: fc.integer({ min: 1, max: 12 }),
        }),
        async (c) => {
          for (let i = 0; i < c.writes; i++) await store.writeDataset({ ipos: [makeIpo({ id: `fair${seq++}` })], snapshots: [] }, { at: (at += 10) });
          // Some deliveries get an attempt that fails and comes back due a little later.
          if (c.retry.length > 0) {
            const taken = await claimAll(store, (at += 10), { limit: c.retry.length });
            await store.finishDeliveries(
              taken.map((t, i) => result(t, at, { delivered: c.retry[i]![0], status: 500, error: 'answered 500', nextAttemptAt: c.retry[i]![0] ? null : at + 1 + c.retry[i]![1] })),
            );
          }
          at += 10;
          // What is due, per endpoint, as the listing shows it (each write made one per endpoint).
          const due: Array<{ webhookId: string; accountId: string; id: string; next: number; made: number }> = [];
          for (const h of hooks) {
            for (const d of (await store.listDeliveries({ webhookId: h, before: null, limit: 10_000 }))!) {
              if (d.state === 'pending' && d.nextAttemptAt! <= at) due.push({ webhookId: h, accountId: owner(h), id: d.id, next: d.nextAttemptAt!, made: d.createdAt });
            }
          }
          const busy = new Map(hooks.map((h, i) => [h, c.busy[i]!]));
          const busyAccounts = new Map(accounts.map((a, i) => [a, c.busyAccounts[i]!]));
          const expected = fairOrder(due, { limit: c.limit, perWebhook: c.perWebhook, perAccount: c.perAccount, busy, busyAccounts });
          const got = await store.claimDeliveries({ now: at, limit: c.limit, perWebhook: c.perWebhook, perAccount: c.perAccount, leaseMs: 1, busy, busyAccounts });
          expect(got.map((g) => g.delivery.id)).toEqual(expected);
          // The leases end at once (leaseMs 1): the next run sees them due again.
          at += 1;
        },
      ),
      { numRuns: 25 },
    );
  }, 60_000);

  check('finishDeliveries settles under the lease only: delivered, failed with a retry, and failed for good', async (store) => {
    await setUp(store, 3);
    const [c0, c1, c2] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    await store.finishDeliveries([
      result(c0!, T + 20),
      result(c1!, T + 21, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 5_021 }),
      result(c2!, T + 22, { delivered: false, status: null, error: 'timed out after 15000 ms', nextAttemptAt: null }),
      // Another lease's result is ignored.
      result({ ...c0!, lease: 'not-the-lease' }, T + 23, { delivered: false, status: 500, error: 'x', nextAttemptAt: T + 9_999 }),
    ]);
    const byId = new Map((await list(store)).map((d) => [d.id, d]));
    expect(byId.get(c0!.delivery.id)).toMatchObject({ state: 'delivered', attempts: 1, nextAttemptAt: null, lastAttemptAt: T + 20, lastStatus: 200, lastError: null });
    expect(byId.get(c1!.delivery.id)).toMatchObject({ state: 'pending', attempts: 1, nextAttemptAt: T + 5_021, lastAttemptAt: T + 21, lastStatus: 500, lastError: 'answered 500' });
    expect(byId.get(c2!.delivery.id)).toMatchObject({ state: 'failed', attempts: 1, nextAttemptAt: null, lastAttemptAt: T + 22, lastStatus: null, lastError: 'timed out after 15000 ms' });
    // A settled lease settles nothing more.
    await store.finishDeliveries([result(c1!, T + 30)]);
    expect((await list(store)).find((d) => d.id === c1!.delivery.id)!.state).toBe('pending');
    // The retry is due at its time, and only then.
    expect(await claimAll(store, T + 5_020, { busy: new Map([['wh_b', 1_000]]) })).toEqual([]);
    const retry = await claimAll(store, T + 5_021, { busy: new Map([['wh_b', 1_000]]) });
    expect(retry.map((c) => c.delivery.id)).toEqual([c1!.delivery.id]);
    expect(retry[0]!.delivery.attempts).toBe(1);
    await store.finishDeliveries([result(retry[0]!, T + 5_030)]);
    expect((await list(store)).find((d) => d.id === c1!.delivery.id)).toMatchObject({ state: 'delivered', attempts: 2, lastError: null });
  });

  check('an endpoint failing since disableBefore or earlier is disabled and its pending deliveries fail; a success ends the streak', async (store) => {
    await setUp(store, 3);
    const [c0, c1, c2] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    const fail = (c: ClaimedDelivery, at: number, disableBefore: number): DeliveryResult =>
      result(c, at, { delivered: false, status: 503, error: 'answered 503', nextAttemptAt: at + 1_000_000, disableBefore });
    // Fails at T+100 (the streak starts), then a success ends it.
    await store.finishDeliveries([fail(c0!, T + 100, T + 50)]);
    await store.finishDeliveries([result(c1!, T + 200)]);
    // A new streak starts at T+300: failing since T+300 is not failing since T+250 or earlier.
    await store.finishDeliveries([fail(c2!, T + 300, T + 250)]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).toBeNull();
    const [r0] = await claimAll(store, T + 100 + 1_000_000, { busy: new Map([['wh_b', 1_000]]) });
    expect(r0!.delivery.id).toBe(c0!.delivery.id);
    await store.finishDeliveries([fail(r0!, T + 1_000_200, T + 300)]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).toBe(toIsoUtc(T + 1_000_200));
    const listed = await list(store);
    expect(listed.filter((d) => d.state === 'pending')).toEqual([]);
    expect(listed.find((d) => d.id === c2!.delivery.id)).toMatchObject({ state: 'failed', lastError: DISABLED_ERROR, attempts: 1 });
    expect(listed.find((d) => d.id === c0!.delivery.id)).toMatchObject({ state: 'failed', lastError: DISABLED_ERROR, lastStatus: 503, attempts: 2 });
    expect(await claimAll(store, T + 100_000_000, { busy: new Map([['wh_b', 1_000]]) })).toEqual([]);
    // The other endpoint is not touched.
    expect((await store.getWebhook('wh_b'))!.disabledAt).toBeNull();
    expect((await claimAll(store, T + 100_000_000)).length).toBe(3);
  });

  check('an attempt in flight when its endpoint is disabled, and failing after, is not tried again', async (store) => {
    await setUp(store, 2);
    const [c0, c1] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    await store.finishDeliveries([result(c0!, T + 100, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 200, disableBefore: T + 100 })]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).toBe(toIsoUtc(T + 100));
    await store.finishDeliveries([result(c1!, T + 150, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 250, disableBefore: T + 150 - 5 * DAY })]);
    expect(await claimAll(store, T + 1_000, { busy: new Map([['wh_b', 1_000]]) })).toEqual([]);
    expect((await list(store)).map((d) => d.state)).toEqual(['failed', 'failed']);
    expect((await list(store)).find((d) => d.id === c1!.delivery.id)).toMatchObject({ attempts: 1, lastStatus: 500, nextAttemptAt: null });
  });

  check('listDeliveries: newest first, paged with before; null for an unknown endpoint, [] after an unknown delivery', async (store) => {
    await setUp(store, 5);
    const all = await list(store);
    expect(all.map((d) => d.createdAt)).toEqual([T + 4, T + 3, T + 2, T + 1, T]);
    expect(all.every((d) => d.webhookId === 'wh_a' && d.eventType === 'ipo.created' && d.state === 'pending')).toBe(true);
    const page1 = (await store.listDeliveries({ webhookId: 'wh_a', before: null, limit: 2 }))!;
    const page2 = (await store.listDeliveries({ webhookId: 'wh_a', before: page1[1]!.id, limit: 2 }))!;
    const page3 = (await store.listDeliveries({ webhookId: 'wh_a', before: page2[1]!.id, limit: 2 }))!;
    expect([...page1, ...page2, ...page3]).toEqual(all);
    expect(await store.listDeliveries({ webhookId: 'wh_nope', before: null, limit: 2 })).toBeNull();
    expect(await store.listDeliveries({ webhookId: 'wh_a', before: 'dlv_nope', limit: 2 })).toEqual([]);
  });

  check('replayDelivery: a new pending delivery of the same event to the same endpoint, due now; null for another endpoint', async (store) => {
    await setUp(store, 1);
    const [c] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    await store.finishDeliveries([result(c!, T + 20, { delivered: false, status: 410, error: 'answered 410', nextAttemptAt: null })]);
    expect(await store.replayDelivery({ webhookId: 'wh_b', of: c!.delivery.id, id: 'dlv_x', now: T + 30 })).toBeNull();
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: 'dlv_nope', id: 'dlv_x', now: T + 30 })).toBeNull();
    const again = await store.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_again', now: T + 30 });
    expect(again).toEqual({
      id: 'dlv_again',
      webhookId: 'wh_a',
      eventId: c!.delivery.eventId,
      eventType: 'ipo.created',
      createdAt: T + 30,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: T + 30,
      lastAttemptAt: null,
      lastStatus: null,
      lastError: null,
      lastResponseBody: null,
    });
    // A replay of a delivery still pending (dlv_again) returns it and adds nothing.
    const before = (await list(store)).length;
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: 'dlv_again', id: 'dlv_more', now: T + 31 })).toEqual(again);
    expect((await list(store)).length).toBe(before);
    const [r] = await claimAll(store, T + 30, { busy: new Map([['wh_b', 1_000]]) });
    expect(r!.delivery.id).toBe('dlv_again');
    expect(r!.body).toBe(c!.body);
    // ...and while it is leased, too.
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: 'dlv_again', id: 'dlv_more', now: T + 32 })).toMatchObject({ id: 'dlv_again', state: 'pending' });
    expect((await list(store)).length).toBe(before);
  });

  check('replayDelivery: replaying a settled delivery while an earlier replay of it is still pending answers that replay and adds nothing (issue 33); once it settled, a replay adds one again', async (store) => {
    await setUp(store, 1);
    const [c] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    await store.finishDeliveries([result(c!, T + 20, { delivered: false, status: 410, error: 'answered 410', nextAttemptAt: null })]);
    const d2 = (await store.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_d2', now: T + 30 }))!;
    expect(d2.id).toBe('dlv_d2');
    // D1 (failed) replayed again while D2 is pending: D2, nothing added.
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_d3', now: T + 31 })).toEqual(d2);
    expect((await list(store)).map((d) => d.id).sort()).toEqual([c!.delivery.id, 'dlv_d2'].sort());
    // ...and while D2 is leased.
    const [r] = await claimAll(store, T + 40, { busy: new Map([['wh_b', 1_000]]) });
    expect(r!.delivery.id).toBe('dlv_d2');
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_d3', now: T + 41 })).toMatchObject({ id: 'dlv_d2', state: 'pending' });
    await store.finishDeliveries([result(r!, T + 50)]);
    // D2 delivered: a replay of D1 (or of D2) is a new delivery.
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: c!.delivery.id, id: 'dlv_d3', now: T + 60 })).toMatchObject({ id: 'dlv_d3', state: 'pending', eventId: c!.delivery.eventId });
    expect(await store.replayDelivery({ webhookId: 'wh_a', of: 'dlv_d2', id: 'dlv_d4', now: T + 61 })).toMatchObject({ id: 'dlv_d3' });
    expect((await list(store)).length).toBe(3);
  });

  check('pruneDeliveries forgets settled deliveries older than before, never pending ones, and keeps events other deliveries need', async (store) => {
    await setUp(store, 3);
    const [c0, c1] = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    await store.finishDeliveries([result(c0!, T + 20), result(c1!, T + 40, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: null })]);
    expect(await store.pruneDeliveries({ before: T + 30, keepPerWebhook: 10_000 })).toBe(1);
    expect((await list(store)).some((d) => d.id === c0!.delivery.id)).toBe(false);
    expect(await store.pruneDeliveries({ before: T + 1_000_000, keepPerWebhook: 10_000 })).toBe(1);
    expect((await list(store)).length).toBe(1);
    expect((await list(store, 'wh_b')).length).toBe(3);
    // wh_b's deliveries of the pruned events still carry their bodies (wh_a's third is still leased).
    const bodies = (await claimAll(store, T + 10)).map((c) => (JSON.parse(c.body) as { type: string }).type);
    expect(bodies).toEqual(['ipo.created', 'ipo.created', 'ipo.created']);
  });

  check('pruneDeliveries keeps at most keepPerWebhook settled deliveries per endpoint (the newest), and every pending one', async (store) => {
    await setUp(store, 6);
    const claimed = await claimAll(store, T + 10, { busy: new Map([['wh_b', 1_000]]) });
    // Settle five of wh_a's six (created at T+0..T+4); the sixth stays pending.
    await store.finishDeliveries(claimed.slice(0, 5).map((c, i) => result(c, T + 20 + i, i % 2 === 0 ? {} : { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: null })));
    expect(await store.pruneDeliveries({ before: T, keepPerWebhook: 2 })).toBe(3);
    const left = await list(store);
    expect(left.map((d) => [d.createdAt, d.state])).toEqual([
      [T + 5, 'pending'],
      [T + 4, 'delivered'],
      [T + 3, 'failed'],
    ]);
    expect((await list(store, 'wh_b')).length).toBe(6);
    expect(await store.pruneDeliveries({ before: T, keepPerWebhook: 2 })).toBe(0);
  });

  check("a listing shows the endpoint's deliveries of every write, however much another endpoint is owed", async (store) => {
    await store.insertWebhook(withTypes(hook('wh_big', 'acct_1'), ['gmp.snapshot', 'ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_small', 'acct_2'), ['ipo.created']), NO_CAP);
    const ipo = makeIpo({ id: 'big' });
    const snapshots = Array.from({ length: 300 }, (_, i) => makeSnapshot('big', toIsoUtc(T - 1_000_000 + i * 1_000), { a: 100 + i }));
    await store.writeDataset({ ipos: [ipo], snapshots }, { at: T });
    await store.writeDataset({ ipos: [makeIpo({ id: 'small' })], snapshots: [] }, { at: T + 1 });
    expect((await list(store, 'wh_small')).map((d) => d.createdAt)).toEqual([T + 1, T]);
    expect((await store.listDeliveries({ webhookId: 'wh_big', before: null, limit: 1_000 }))!.length).toBe(302);
  });

  check('watchDeliveries, where a backend has it, wakes after a write records deliveries', async (store) => {
    if (store.watchDeliveries === undefined) return;
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    let wakes = 0;
    const stop = await store.watchDeliveries(() => wakes++);
    try {
      await store.writeDataset({ ipos: [makeIpo({ id: 'w1' })], snapshots: [] }, { at: T });
      for (let i = 0; i < 250 && wakes === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(wakes).toBeGreaterThan(0);
    } finally {
      await stop();
    }
  });
}

function holderChecks(check: Check, hook: Hook): void {
  const list = async (store: WebhookStore, webhookId = 'wh_a') => (await store.listDeliveries({ webhookId, before: null, limit: 100 }))!;
  const write = (store: WebhookTestStore, id: string, at: number) => store.writeDataset({ ipos: [makeIpo({ id })], snapshots: [] }, { at });

  check('updateWebhook: events, description and pausedAt change (null for an unknown id); a pause keeps its first instant; the record read back is the one answered', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    expect(await store.updateWebhook('wh_nope', { description: 'x' })).toBeNull();
    const changed = (await store.updateWebhook('wh_a', { events: ['ipo.created', 'gmp.snapshot'], description: null }))!;
    expect(changed).toEqual({ ...withTypes(hook('wh_a', 'acct_1'), ['ipo.created', 'gmp.snapshot']), description: null });
    const paused = (await store.updateWebhook('wh_a', { pausedAt: '2026-11-24T05:00:00.000Z' }))!;
    expect(paused.pausedAt).toBe('2026-11-24T05:00:00.000Z');
    expect((await store.updateWebhook('wh_a', { pausedAt: '2026-11-24T06:00:00.000Z' }))!.pausedAt).toBe('2026-11-24T05:00:00.000Z');
    expect(await store.getWebhook('wh_a')).toEqual(paused);
    expect((await store.listWebhooks('acct_1'))![0]).toEqual(paused);
    expect((await store.updateWebhook('wh_a', { pausedAt: null }))!.pausedAt).toBeNull();
    expect((await store.updateWebhook('wh_a', {}))).toEqual({ ...paused, pausedAt: null });
  });

  check('a paused endpoint gets no attempts: its deliveries are made and stay pending (events still fan out to it), and are claimed after the resume', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created']), NO_CAP);
    await store.updateWebhook('wh_a', { pausedAt: toIsoUtc(T) });
    await write(store, 'ipo0', T + 1);
    await write(store, 'ipo1', T + 2);
    const claimed = await claimAll(store, T + 10);
    expect(claimed.map((c) => c.delivery.webhookId)).toEqual(['wh_b', 'wh_b']);
    expect((await list(store)).map((d) => d.state)).toEqual(['pending', 'pending']);
    expect(await claimAll(store, T + 20)).toEqual([]);
    await store.updateWebhook('wh_a', { pausedAt: null });
    const after = await claimAll(store, T + 30);
    expect(after.map((c) => [c.delivery.webhookId, JSON.parse(c.body).data.id])).toEqual([
      ['wh_a', 'ipo0'],
      ['wh_a', 'ipo1'],
    ]);
  });

  check('outboxStats: counts what is owed per event and endpoint, made or not (paused endpoints included, disabled ones not), and the creation instant of the oldest', async (store) => {
    // (a store without the optional method has no gauges: nothing to check)
    if (store.outboxStats === undefined) return;
    const stats = () => store.outboxStats!();
    expect(await stats()).toEqual({ pending: 0, oldestAt: null });
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created', 'gmp.snapshot']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_c', 'acct_2'), ['ipo.deleted']), NO_CAP);
    expect(await stats()).toEqual({ pending: 0, oldestAt: null });
    // Two IPOs to two endpoints, three snapshots to one: 7 owed, none made yet.
    await store.writeDataset({ ipos: [makeIpo({ id: 'ipo0' }), makeIpo({ id: 'ipo1' })], snapshots: [] }, { at: T + 1 });
    await store.writeDataset({ ipos: [], snapshots: [1, 2, 3].map((i) => makeSnapshot('ipo0', T - i * 60_000, { a: 4_000 + i })) }, { at: T + 2 });
    expect(await stats()).toEqual({ pending: 7, oldestAt: T + 1 });
    // Made and leased: still owed.
    const claimed = await claimAll(store, T + 10);
    expect(claimed.length).toBe(7);
    expect(await stats()).toEqual({ pending: 7, oldestAt: T + 1 });
    // wh_a's delivered; wh_b's ipo.created ones retry later, its snapshots fail for good.
    await store.finishDeliveries(
      claimed.map((c) =>
        c.delivery.webhookId === 'wh_a'
          ? result(c, T + 20)
          : c.delivery.eventType === 'ipo.created'
            ? result(c, T + 20, { delivered: false, status: 503, error: 'answered 503', nextAttemptAt: T + 60_000 })
            : result(c, T + 20, { delivered: false, status: 410, error: 'answered 410', nextAttemptAt: null }),
      ),
    );
    expect(await stats()).toEqual({ pending: 2, oldestAt: T + 1 });
    // Paused: its backlog is still counted, and grows with the writes it is owed.
    await store.updateWebhook('wh_b', { pausedAt: toIsoUtc(T + 30) });
    await write(store, 'ipo2', T + 40);
    expect(await stats()).toEqual({ pending: 4, oldestAt: T + 1 });
    const due = await claimAll(store, T + 120_000);
    expect(due.map((c) => c.delivery.webhookId)).toEqual(['wh_a']); // (wh_b's wait for the resume)
    await store.finishDeliveries([result(due[0]!, T + 120_000)]);
    const delivered = due[0]!.delivery;
    expect(await stats()).toEqual({ pending: 3, oldestAt: T + 1 });
    // A replay is one more, created when it was asked for.
    await store.replayDelivery({ webhookId: 'wh_a', of: delivered.id, id: 'dlv_again', now: T + 200_000 });
    expect(await stats()).toEqual({ pending: 4, oldestAt: T + 1 });
    await store.replayDelivery({ webhookId: 'wh_a', of: 'dlv_again', id: 'dlv_more', now: T + 200_001 });
    expect(await stats()).toEqual({ pending: 4, oldestAt: T + 1 });
    // wh_b deleted: what is left is wh_a's replay.
    expect(await store.deleteWebhook('wh_b')).toBe(true);
    expect(await stats()).toEqual({ pending: 1, oldestAt: T + 200_000 });
    // A disabled endpoint's are never sent: not counted.
    const [last] = await claimAll(store, T + 300_000);
    await store.finishDeliveries([result(last!, T + 6 * DAY, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 7 * DAY, disableBefore: T + 6 * DAY })]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).not.toBeNull();
    await write(store, 'ipo3', T + 6 * DAY + 1);
    expect(await stats()).toEqual({ pending: 0, oldestAt: null });
  });

  check('updateWebhook: new event types apply to the events recorded after the change', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created', 'ipo.updated']), NO_CAP);
    await write(store, 'ipo0', T + 1);
    await store.updateWebhook('wh_a', { events: ['ipo.updated'] });
    await write(store, 'ipo1', T + 2);
    await store.writeDataset({ ipos: [makeIpo({ id: 'ipo0', name: 'Renamed' })], snapshots: [] }, { at: T + 3 });
    const mine = (await claimAll(store, T + 10)).filter((c) => c.delivery.webhookId === 'wh_a');
    expect(mine.map((c) => [c.delivery.eventType, JSON.parse(c.body).data.id])).toEqual([
      ['ipo.created', 'ipo0'],
      ['ipo.updated', 'ipo0'],
    ]);
  });

  check('resume (pausedAt null) enables an endpoint the worker disabled: its failing streak ends, it takes the events recorded from then on, its old deliveries stay failed', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await write(store, 'ipo0', T);
    const [c] = await claimAll(store, T + 1);
    await store.finishDeliveries([result(c!, T + 6 * DAY, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 7 * DAY, disableBefore: T + 6 * DAY })]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).toBe(toIsoUtc(T + 6 * DAY));
    await write(store, 'ipo1', T + 6 * DAY + 1);
    const back = (await store.updateWebhook('wh_a', { pausedAt: null }))!;
    expect(back.disabledAt).toBeNull();
    expect(back.pausedAt).toBeNull();
    await write(store, 'ipo2', T + 6 * DAY + 2);
    const claimed = await claimAll(store, T + 6 * DAY + 10);
    expect(claimed.map((x) => JSON.parse(x.body).data.id)).toEqual(['ipo2']);
    // (the streak began afresh: one failure now does not disable it again)
    await store.finishDeliveries([result(claimed[0]!, T + 6 * DAY + 20, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + 7 * DAY, disableBefore: T + DAY + 20 })]);
    expect((await store.getWebhook('wh_a'))!.disabledAt).toBeNull();
    expect((await list(store)).find((d) => d.id === c!.delivery.id)!.state).toBe('failed');
  });

  check('rotate: the old secret becomes previousSecret with its expiry, atomically; claims carry both', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    const old = hook('wh_a', 'acct_1').secret;
    const next = `whsec_${'B'.repeat(32)}`;
    const rotated = (await store.updateWebhook('wh_a', { rotate: { secret: next, previousSecretExpiresAt: toIsoUtc(T + DAY) } }))!;
    expect(rotated).toMatchObject({ secret: next, previousSecret: old, previousSecretExpiresAt: toIsoUtc(T + DAY) });
    await write(store, 'ipo0', T);
    const [c] = await claimAll(store, T + 1);
    expect(c).toMatchObject({ secret: next, previousSecret: old, previousSecretExpiresAt: T + DAY });
    const third = `whsec_${'C'.repeat(32)}`;
    expect(await store.updateWebhook('wh_a', { rotate: { secret: third, previousSecretExpiresAt: toIsoUtc(T + 2 * DAY) } })).toMatchObject({ secret: third, previousSecret: next });
  });

  check('addDelivery: a pending delivery of an event for this endpoint alone, due now, whatever its types; getDelivery gives it with its body; a disabled endpoint\'s ends failed', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_a', 'acct_1'), ['ipo.created']), NO_CAP);
    await store.insertWebhook(withTypes(hook('wh_b', 'acct_2'), ['ipo.created']), NO_CAP);
    const event = { id: 'evt_test1', type: 'webhook.test' as const, at: T, body: '{"type":"webhook.test","timestamp":"x","data":{"webhookId":"wh_a","message":"A test event from ipokit."}}' };
    expect(await store.addDelivery({ webhookId: 'wh_nope', id: 'dlv_t0', event, now: T })).toBeNull();
    const added = (await store.addDelivery({ webhookId: 'wh_a', id: 'dlv_t1', event, now: T }))!;
    expect(added).toEqual({ id: 'dlv_t1', webhookId: 'wh_a', eventId: 'evt_test1', eventType: 'webhook.test', createdAt: T, state: 'pending', attempts: 0, nextAttemptAt: T, lastAttemptAt: null, lastStatus: null, lastError: null, lastResponseBody: null });
    expect(await list(store, 'wh_b')).toEqual([]);
    expect(await store.getDelivery({ webhookId: 'wh_a', id: 'dlv_t1' })).toEqual({ ...added, body: event.body });
    expect(await store.getDelivery({ webhookId: 'wh_b', id: 'dlv_t1' })).toBeNull();
    const [c] = await claimAll(store, T);
    expect(c).toMatchObject({ delivery: { id: 'dlv_t1' }, body: event.body, url: hook('wh_a', 'acct_1').url });
    // The answer's body is kept with the status (the first 1 KB, as the worker gives it).
    await store.finishDeliveries([result(c!, T + 5, { delivered: false, status: 500, error: 'answered 500', nextAttemptAt: T + DAY, responseBody: 'down \u{1F600} for now' })]);
    expect(await store.getDelivery({ webhookId: 'wh_a', id: 'dlv_t1' })).toMatchObject({ state: 'pending', attempts: 1, lastStatus: 500, lastResponseBody: 'down \u{1F600} for now', body: event.body });
    // Replayed as any delivery; pruned as any (its event goes with it).
    await store.deleteWebhook('wh_a');
    expect(await store.getDelivery({ webhookId: 'wh_a', id: 'dlv_t1' })).toBeNull();
    await store.insertWebhook({ ...withTypes(hook('wh_off', 'acct_1'), ['ipo.created']), disabledAt: toIsoUtc(T) }, NO_CAP);
    expect(await store.addDelivery({ webhookId: 'wh_off', id: 'dlv_t2', event: { ...event, id: 'evt_test2' }, now: T })).toMatchObject({ state: 'failed', lastError: DISABLED_ERROR, nextAttemptAt: null });
  });
}

function statusChecks(check: Check, hook: Hook): void {
  // Both open on the 25th (IST); ipo1 closes after the 26th and lists on Dec 1, ipo2 closes after the 25th.
  const ipo = makeIpo({ id: 'ipo1', startDate: '2026-11-25', endDate: '2026-11-26', listingDate: '2026-12-01' });
  const other = makeIpo({ id: 'ipo2', startDate: '2026-11-25', endDate: '2026-11-25' });
  const opened = (id: string): Shape => ({
    webhookId: 'wh_sc',
    type: 'ipo.status_changed',
    body: { type: 'ipo.status_changed', timestamp: toIsoUtc(MIDNIGHT_25), data: { id, from: 'upcoming', to: 'open' } },
  });

  check('recordStatusChanges records the changes at the midnights it passes, once, and tells the next one', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_sc', 'acct_1'), ['ipo.status_changed']), NO_CAP);
    await store.writeDataset({ ipos: [ipo, other], snapshots: [] }, { at: T });
    expect(await store.recordStatusChanges({ now: T })).toEqual({ recorded: 0, nextAt: MIDNIGHT_25 });
    expect(await store.recordStatusChanges({ now: MIDNIGHT_25 - 1 })).toEqual({ recorded: 0, nextAt: MIDNIGHT_25 });
    expect(await store.recordStatusChanges({ now: MIDNIGHT_25 + 5 })).toEqual({ recorded: 2, nextAt: MIDNIGHT_25 + DAY });
    const claimed = await claimAll(store, MIDNIGHT_25 + 5);
    expect(sortShapes(claimed.map(shape))).toEqual(sortShapes([opened('ipo1'), opened('ipo2')]));
    expect(claimed.map((c) => c.delivery.eventId).sort()).toEqual(
      [statusChangeEventId('ipo1', 'open', '2026-11-25'), statusChangeEventId('ipo2', 'open', '2026-11-25')].sort(),
    );
    expect(claimed.every((c) => c.delivery.nextAttemptAt === MIDNIGHT_25 + 5)).toBe(true);
    // Covered already: nothing again, nor from an instant before.
    expect((await store.recordStatusChanges({ now: MIDNIGHT_25 + 10 })).recorded).toBe(0);
    expect((await store.recordStatusChanges({ now: MIDNIGHT_25 + 1 })).recorded).toBe(0);
    // Two midnights at once: ipo2 closes on the 26th, ipo1 on the 27th.
    expect(await store.recordStatusChanges({ now: MIDNIGHT_25 + 2 * DAY + 1 })).toEqual({ recorded: 2, nextAt: Date.parse('2026-11-30T18:30:00.000Z') });
  });

  check('concurrent recordStatusChanges calls at one midnight record each change once', async (store) => {
    await store.insertWebhook(withTypes(hook('wh_sc', 'acct_1'), ['ipo.status_changed']), NO_CAP);
    await store.writeDataset({ ipos: [ipo, other], snapshots: [] }, { at: T });
    await store.recordStatusChanges({ now: T });
    const results = await Promise.all([0, 1, 2, 3, 4].map((i) => store.recordStatusChanges({ now: MIDNIGHT_25 + i })));
    expect(results.reduce((n, r) => n + r.recorded, 0)).toBe(2);
    expect((await claimAll(store, MIDNIGHT_25 + 10)).length).toBe(2);
  });

  check('a midnight passed while no endpoint takes status changes stays unrecorded', async (store) => {
    await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T });
    expect((await store.recordStatusChanges({ now: MIDNIGHT_25 + 1_000 })).recorded).toBe(0);
    await store.insertWebhook(withTypes(hook('wh_sc', 'acct_1'), ['ipo.status_changed']), NO_CAP);
    expect((await store.recordStatusChanges({ now: MIDNIGHT_25 + 2_000 })).recorded).toBe(0);
  });

  check("a store's first call covers from the midnight that began its IST day", async (store) => {
    await store.insertWebhook(withTypes(hook('wh_sc', 'acct_1'), ['ipo.status_changed']), NO_CAP);
    await store.writeDataset({ ipos: [ipo], snapshots: [] }, { at: T });
    expect(await store.recordStatusChanges({ now: MIDNIGHT_25 + 3_600_000 })).toEqual({ recorded: 1, nextAt: MIDNIGHT_25 + 2 * DAY });
  });
}

// ---------------------------------------------------------------------------------------
// Random write sequences, compared with the reference.

type Step = { kind: 'write'; ipos: IpoRecord[]; snapshots: SnapshotRecord[] } | { kind: 'delete'; ids: string[] };

const IDS = ['a', 'b', 'c'];
const DAYS = ['2026-11-22', '2026-11-24', '2026-11-25', '2026-11-27', null];

function writeSequenceArbitrary(): fc.Arbitrary<Step[]> {
  const ipo = fc
    .record({ id: fc.constantFrom(...IDS), start: fc.constantFrom(...DAYS), end: fc.constantFrom(...DAYS), about: fc.constantFrom(null, 'x', '\u{1F600}') })
    .map(({ id, start, end, about }) => makeIpo({ id, startDate: start, endDate: start !== null && end !== null && end < start ? start : end, about }));
  const snapshot = fc
    .record({ id: fc.constantFrom(...IDS), minute: fc.integer({ min: 0, max: 2 }), a: fc.constantFrom(null, 100, 150), b: fc.constantFrom(null, -250) })
    .map(({ id, minute, a, b }) => makeSnapshot(id, T - 3_600_000 + minute * 60_000, { a, b }));
  const write = fc
    .record({
      ipos: fc.uniqueArray(ipo, { maxLength: 3, selector: (i) => i.id }),
      snapshots: fc.uniqueArray(snapshot, { maxLength: 4, selector: (x) => `${x.ipoId}@${x.timestamp}` }),
    })
    .map((w): Step => ({ kind: 'write', ...w }));
  const del = fc.uniqueArray(fc.constantFrom(...IDS, 'zz'), { minLength: 1, maxLength: 2 }).map((ids): Step => ({ kind: 'delete', ids }));
  return fc.array(fc.oneof({ weight: 3, arbitrary: write }, { weight: 1, arbitrary: del }), { minLength: 1, maxLength: 8 });
}

/**
 * Runs the steps on the store and on a fresh reference store, with the same two endpoints,
 * and compares what each step recorded (the deliveries it made due). The store under test
 * is reused across runs: each run clears the IPOs it uses and its endpoints.
 */
async function compareWithReference(store: WebhookTestStore, steps: Step[]): Promise<void> {
  const reference = referenceStore();
  const run = Math.random().toString(36).slice(2, 10);
  const hooks = [
    { id: `wh_${run}_all`, events: ALL },
    { id: `wh_${run}_sc`, events: ['ipo.status_changed', 'ipo.deleted'] as EventType[] },
  ];
  await reference.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
  await store.deleteIpos([...IDS]);
  for (const s of [store, reference]) {
    for (const h of hooks) {
      await s.insertWebhook({
        id: h.id,
        accountId: 'acct_1',
        url: 'https://example.com/h',
        events: h.events,
        description: null,
        secret: `whsec_${'A'.repeat(32)}`,
        createdAt: '2026-11-20T10:00:00.000Z',
        disabledAt: null,
        pausedAt: null,
        previousSecret: null,
        previousSecretExpiresAt: null,
      }, NO_CAP);
    }
  }
  const ours = (cs: ClaimedDelivery[]): ClaimedDelivery[] => cs.filter((c) => hooks.some((h) => h.id === c.delivery.webhookId));
  try {
    let at = T;
    for (const step of steps) {
      at += 1_000;
      const outcomes: unknown[] = [];
      for (const s of [store, reference]) {
        if (step.kind === 'write') outcomes.push(await s.writeDataset({ ipos: structuredClone(step.ipos), snapshots: structuredClone(step.snapshots) }, { at }));
        else outcomes.push(await s.deleteIpos([...step.ids], { at }));
      }
      expect(outcomes[0]).toEqual(outcomes[1]);
      // The backlog the write left, before anything is fanned out (a store without the optional method: not compared).
      if (store.outboxStats !== undefined) expect(await store.outboxStats()).toEqual(await reference.outboxStats!());
      const got = ours(await claimAll(store, at));
      const want = ours(await claimAll(reference, at));
      expect(sortShapes(got.map(shape))).toEqual(sortShapes(want.map(shape)));
      const statusIds = (cs: ClaimedDelivery[]): string[] => cs.filter((c) => c.delivery.eventType === 'ipo.status_changed').map((c) => c.delivery.eventId).sort();
      expect(statusIds(got)).toEqual(statusIds(want));
      await store.finishDeliveries(got.map((c) => result(c, at)));
      await reference.finishDeliveries(want.map((c) => result(c, at)));
    }
  } finally {
    for (const h of hooks) await store.deleteWebhook(h.id);
    await store.deleteIpos([...IDS]);
  }
}

/**
 * The claim order of `WebhookStore.claimDeliveries`, written out plainly over what the
 * listings show as due (`made`, the creation instant, stands for the order made: each write
 * of the check makes one delivery per endpoint at an instant of its own). Ids in claim order.
 */
function fairOrder(
  due: ReadonlyArray<{ webhookId: string; accountId: string; id: string; next: number; made: number }>,
  o: { limit: number; perWebhook: number; perAccount: number; busy: ReadonlyMap<string, number>; busyAccounts: ReadonlyMap<string, number> },
): string[] {
  type Item = (typeof due)[number] & { rw: number; ra: number };
  const tie = (a: Item, b: Item): number => a.next - b.next || a.made - b.made || (a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0);
  const groups = <K extends string>(items: Item[], key: (i: Item) => K): Map<K, Item[]> => {
    const m = new Map<K, Item[]>();
    for (const i of items) m.set(key(i), [...(m.get(key(i)) ?? []), i]);
    return m;
  };
  const kept: Item[] = [];
  for (const [hookId, items] of groups(due.map((d) => ({ ...d, rw: 0, ra: 0 })), (i) => i.webhookId)) {
    const busy = o.busy.get(hookId) ?? 0;
    items.sort(tie);
    items.slice(0, Math.max(0, o.perWebhook - busy)).forEach((i, n) => kept.push({ ...i, rw: busy + n + 1 }));
  }
  const ranked: Item[] = [];
  for (const [account, items] of groups(kept, (i) => i.accountId)) {
    const busy = o.busyAccounts.get(account) ?? 0;
    items.sort((a, b) => a.rw - b.rw || tie(a, b));
    items.slice(0, Math.max(0, o.perAccount - busy)).forEach((i, n) => ranked.push({ ...i, ra: busy + n + 1 }));
  }
  ranked.sort((a, b) => a.ra - b.ra || tie(a, b));
  return ranked.slice(0, o.limit).map((i) => i.id);
}
