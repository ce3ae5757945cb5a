import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { addDays } from '../model/dates.js';
import {
  dueStatusChanges,
  eventsOfWrite,
  sameSubscription,
  generateWebhookSecret,
  nextAttemptAt,
  nextStatusChangeAt,
  signWebhook,
  statusChangeEventId,
  statusChanges,
  WEBHOOK_RETRY_DELAYS_MS,
  webhookSignature,
} from './events.js';
import { istDayStart } from '../model/dates.js';
import { deriveStatus } from '../model/status.js';
import { ARBITRARY_FIRST_DAY, ipoDatesArbitrary, isoDateArbitrary, makeIpo } from '@ipokit/testing';
import type { SubscriptionRecord } from '../model/types.js';

describe('statusChanges', () => {
  it('lists exactly the IST days whose derived status differs from the day before, with both statuses (property)', () => {
    fc.assert(
      fc.property(ipoDatesArbitrary(), fc.array(isoDateArbitrary(), { minLength: 1, maxLength: 20 }), (ipo, days) => {
        const changes = statusChanges(ipo);
        // ascending, one per day
        expect(changes.map((c) => c.day)).toEqual([...new Set(changes.map((c) => c.day))].sort());
        const byDay = new Map(changes.map((c) => [c.day, c]));
        for (const day of [...days, ...changes.map((c) => c.day)]) {
          const from = deriveStatus(ipo, addDays(day, -1));
          const to = deriveStatus(ipo, day);
          expect(byDay.get(day), `${JSON.stringify(ipo)} on ${day}`).toEqual(from === to ? undefined : { day, from, to });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('follows an IPO through its life, and skips what its dates skip', () => {
    expect(statusChanges({ startDate: '2026-11-20', endDate: '2026-11-24', listingDate: '2026-11-27' })).toEqual([
      { day: '2026-11-20', from: 'upcoming', to: 'open' },
      { day: '2026-11-25', from: 'open', to: 'closed' },
      { day: '2026-11-27', from: 'closed', to: 'listed' },
    ]);
    // listed the day after it closed: never closed
    expect(statusChanges({ startDate: '2026-11-20', endDate: '2026-11-24', listingDate: '2026-11-25' }).map((c) => `${c.from}>${c.to}`)).toEqual(['upcoming>open', 'open>listed']);
    // one day, no end date
    expect(statusChanges({ startDate: '2026-11-20', endDate: null, listingDate: null }).map((c) => c.day)).toEqual(['2026-11-20', '2026-11-21']);
    expect(statusChanges({ startDate: null, endDate: null, listingDate: null })).toEqual([]);
  });
});

describe('nextStatusChangeAt and dueStatusChanges', () => {
  /** Up to 8 IPOs' dates, each with an id. */
  const ipos = fc.array(ipoDatesArbitrary(), { maxLength: 8 }).map((list) => list.map((ipo, i) => ({ ...ipo, id: `ipo${i}` })));
  const first = Date.parse(`${ARBITRARY_FIRST_DAY}T00:00:00Z`) - 10 * 86_400_000;
  const instant = fc.integer({ min: first, max: first + 80 * 86_400_000 });

  it('agree: the next change is the first one due after now, at a 00:00 IST, and none is due before it (property)', () => {
    fc.assert(
      fc.property(
        ipos,
        instant,
        (list, now) => {
          const next = nextStatusChangeAt(list, now);
          const all = dueStatusChanges(list, now, Number.MAX_SAFE_INTEGER);
          expect(next).toBe(all[0]?.at ?? null);
          if (next === null) return;
          expect(istDayStart(next)).toBe(next);
          expect(dueStatusChanges(list, now, next - 1)).toEqual([]);
          const due = dueStatusChanges(list, now, next);
          expect(due.length).toBeGreaterThan(0);
          for (const change of due) {
            // at that instant the IPO's status is `to`, a millisecond before it `from`
            const ipo = list.find((i) => i.id === change.ipoId)!;
            expect(deriveStatus(ipo, change.day)).toBe(change.to);
            expect(deriveStatus(ipo, addDays(change.day, -1))).toBe(change.from);
            expect(change.at).toBe(next);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('covers consecutive spans without a gap or a repeat (a scheduler that runs now and then)', () => {
    fc.assert(
      fc.property(
        ipos,
        fc.array(fc.integer({ min: 1, max: 20 * 86_400_000 }), { minLength: 1, maxLength: 10 }),
        (list, steps) => {
          let at = first;
          const seen: string[] = [];
          for (const step of steps) {
            seen.push(...dueStatusChanges(list, at, at + step).map((c) => `${c.ipoId} ${c.day}`));
            at += step;
          }
          expect(seen).toEqual(dueStatusChanges(list, first, at).map((c) => `${c.ipoId} ${c.day}`));
        },
      ),
    );
  });

  it('happen at 00:00 IST, 18:30 UTC the day before', () => {
    const ipo = { id: 'a', startDate: '2026-11-20', endDate: '2026-11-24', listingDate: null };
    expect(nextStatusChangeAt([ipo], Date.UTC(2026, 10, 19, 12))).toBe(Date.UTC(2026, 10, 19, 18, 30));
    expect(nextStatusChangeAt([ipo], Date.UTC(2026, 10, 19, 18, 30))).toBe(Date.UTC(2026, 10, 24, 18, 30));
    expect(nextStatusChangeAt([ipo], Date.UTC(2026, 10, 24, 18, 30))).toBeNull();
  });
});

describe('statusChangeEventId', () => {
  it('is the same for the same change and differs for any other', () => {
    const id = statusChangeEventId('2026000001', 'open', '2026-11-20');
    expect(id).toMatch(/^evt_sc_[0-9a-f]{32}$/);
    expect(statusChangeEventId('2026000001', 'open', '2026-11-20')).toBe(id);
    for (const other of [
      statusChangeEventId('2026000002', 'open', '2026-11-20'),
      statusChangeEventId('2026000001', 'closed', '2026-11-20'),
      statusChangeEventId('2026000001', 'open', '2026-11-21'),
    ]) {
      expect(other).not.toBe(id);
    }
  });

  it('is `evt_sc_` and the first 32 hex digits of the SHA-256 of "ipoId\\0to\\0day": ids already stored never change', () => {
    expect(statusChangeEventId('2026000001', 'open', '2026-11-20')).toBe('evt_sc_ff4177322895f8dc67f43543febefac9');
    expect(statusChangeEventId('2026000001', 'listed', '2026-11-27')).toBe('evt_sc_ff3d7daceb9c9d76b394a3c7e8e58f5b');
  });
});

describe('Standard Webhooks signatures', () => {
  it("verify with the standardwebhooks package, and equal its own signature (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ maxLength: 200 }), async (id, text) => {
        const secret = generateWebhookSecret();
        const timestamp = Math.floor(Date.now() / 1000);
        const body = JSON.stringify({ type: 'gmp.snapshot', timestamp: new Date(timestamp * 1000).toISOString(), data: { text } });
        const signature = await signWebhook({ id, timestamp, body, secret });
        const wh = new Webhook(secret);
        expect(signature).toBe(wh.sign(id, new Date(timestamp * 1000), body));
        expect(wh.verify(body, { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toEqual(JSON.parse(body));
        // another secret does not verify it
        expect(() => new Webhook(generateWebhookSecret()).verify(body, { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toThrow();
      }),
      { numRuns: 50 },
    );
  });

  it('are the known bytes for a fixed secret, id, timestamp and a body over 1 KB (non-ASCII included)', () => {
    const secret = 'whsec_AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qh';
    const body = JSON.stringify({ type: 'ipo.updated', data: { name: 'Orbit Aerospace Ltd \u2708', pad: 'x'.repeat(1000) } });
    const signature = webhookSignature({ id: 'msg_2QSNRkjAoN1BJx7J1wtyd6uuLl4', timestamp: 1_790_000_000, body, secret });
    expect(signature).toBe('v1,H2bX8lNdChZRNCZiyOOEoyxMQdhhPsBEM+xbNwXtkFk=');
    // a second signature with the same (now prepared) secret is the same
    expect(webhookSignature({ id: 'msg_2QSNRkjAoN1BJx7J1wtyd6uuLl4', timestamp: 1_790_000_000, body, secret })).toBe(signature);
  });

  it('make secrets of 24 random bytes after whsec_, and refuse a secret without it', async () => {
    const secrets = Array.from({ length: 50 }, generateWebhookSecret);
    for (const s of secrets) {
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(atob(s.slice(6))).toHaveLength(24);
    }
    expect(new Set(secrets).size).toBe(50);
    await expect(signWebhook({ id: 'x', timestamp: 1, body: '{}', secret: 'abc' })).rejects.toThrow(/whsec_/);
  });
});

describe('the retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then gives up', () => {
    const t = 1_000;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => nextAttemptAt(n, t)! - t)).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(nextAttemptAt(8, t)).toBeNull();
    expect(WEBHOOK_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)).toBe(((27 * 60 + 35) * 60 + 5) * 1000);
  });
});

describe('subscription.snapshot events (docs/spec.md#webhooks)', () => {
  const at = Date.UTC(2026, 10, 20, 6);
  const record: SubscriptionRecord = {
    ipoId: 'a1',
    timestamp: Date.UTC(2026, 10, 20, 5, 30),
    times: { qib: 1.5, nii: null, bnii: null, snii: null, retail: 4, employee: null, shareholder: null, total: 2.25 },
  };

  it('are one per subscription snapshot written, after gmp.snapshot and before ipo.deleted, with every category in order', () => {
    const events = eventsOfWrite({ at, ipos: [], snapshots: [], subscription: [record], deleted: ['gone'] }, new Set(['subscription.snapshot', 'ipo.deleted']));
    expect(events.map((e) => e.type)).toEqual(['subscription.snapshot', 'ipo.deleted']);
    expect(events[0]!.body).toBe(
      '{"type":"subscription.snapshot","timestamp":"2026-11-20T06:00:00.000Z","data":{"ipoId":"a1","timestamp":"2026-11-20T05:30:00.000Z","times":{"qib":1.5,"nii":null,"bnii":null,"snii":null,"retail":4,"employee":null,"shareholder":null,"total":2.25}}}',
    );
    expect(eventsOfWrite({ at, ipos: [], snapshots: [], subscription: [record], deleted: [] }, new Set(['gmp.snapshot']))).toEqual([]);
  });

  it('show the IPO object of ipo.created with its latest subscription snapshot as the store gave it', () => {
    const ipo = makeIpo({ id: 'a1' });
    const [created] = eventsOfWrite({ at, ipos: [{ ipo, before: null, subscription: record }], snapshots: [], deleted: [] }, new Set(['ipo.created']));
    const data = (JSON.parse(created!.body) as { data: { subscription: unknown } }).data;
    expect(data.subscription).toEqual({ asOf: '2026-11-20T05:30:00.000Z', times: record.times });
    const [bare] = eventsOfWrite({ at, ipos: [{ ipo, before: null }], snapshots: [], deleted: [] }, new Set(['ipo.created']));
    expect((JSON.parse(bare!.body) as { data: { subscription: unknown } }).data.subscription).toBeNull();
  });

  it('sameSubscription compares every category, a missing one reading null', () => {
    expect(sameSubscription(record, { ...record, times: { ...record.times } })).toBe(true);
    expect(sameSubscription(record, { ...record, times: { ...record.times, total: 2.26 } })).toBe(false);
    expect(sameSubscription(record, { ...record, times: { ...record.times, employee: 0 } })).toBe(false);
  });
});
