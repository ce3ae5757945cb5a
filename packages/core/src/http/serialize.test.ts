import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from './handler.js';
import { ipoAnswer, ipoJson, ipoJsonBytes, toWireIpo } from './serialize.js';
import { IPO_STATUSES } from '../model/status.js';
import { ipoRecordArbitrary, makeIpo, makeSnapshot, snapshotRecordArbitrary, subscriptionRecordArbitrary } from '@ipokit/testing';
import type { IpoRecord } from '../model/types.js';

describe('ipoJson', () => {
  it('writes the bytes of JSON.stringify(toWireIpo(...)) for any record, status, gmp and subscription snapshot, frozen or not, cached or not (property)', () => {
    const gmp = fc.oneof(fc.constant(undefined), fc.constant(null), snapshotRecordArbitrary(['x']));
    // A few subscription snapshots, drawn from (so repeated, as a store hands them out), frozen or not.
    const latest = fc.oneof(fc.constant(undefined), fc.constant(null), subscriptionRecordArbitrary(['x']), subscriptionRecordArbitrary(['x']).map((r) => Object.freeze({ ...r, times: Object.freeze(r.times) })));
    fc.assert(
      fc.property(
        ipoRecordArbitrary(),
        fc.boolean(),
        fc.array(latest, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.constantFrom(...IPO_STATUSES), gmp, fc.nat(2)), { minLength: 1, maxLength: 8 }),
        (record, frozen, snapshots, uses) => {
          if (frozen) Object.freeze(record);
          for (const [status, snapshot, pick] of uses) {
            const subscription = snapshots[pick % snapshots.length];
            expect(ipoJson(record, status, snapshot, subscription)).toBe(JSON.stringify(toWireIpo(record, status, snapshot, subscription)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('derives priceBand and issueSizeCrore, and the GMP figures from the band\'s high, cached or not', () => {
    const record = Object.freeze(makeIpo({ id: 'a1', priceRange: '210-221', issueSize: '24.50 Crore' }));
    const gmp = makeSnapshot('a1', '2026-11-19T09:00:00.000Z', { ipowatch: 3120 });
    for (let i = 0; i < 2; i++) {
      const text = ipoJson(record, 'listed', gmp);
      expect(text).toContain('"mediaCoverageLinks":[],"priceBand":{"low":210,"high":221},"issueSizeCrore":24.5,"registrar":null,');
      expect(text).toContain('"aggregations":{"mean":31.2,"median":31.2,"min":31.2,"max":31.2,"mode":31.2},"estimatedListingPrice":252.2,"gmpPercent":14.12,"sources":');
    }
    const unpriced = ipoJson(Object.freeze(makeIpo({ id: 'a1', priceRange: null })), 'listed', gmp);
    expect(unpriced).toContain('"priceBand":null,"issueSizeCrore":null,');
    expect(unpriced).toContain('"estimatedListingPrice":null,"gmpPercent":null,');
  });

  it('shows a record stored before the fields of docs/spec.md#ipo-object 28-34 existed with them unknown', () => {
    const full = makeIpo({ id: 'a1', priceRange: '95-100' });
    const legacy = Object.fromEntries(
      Object.entries(full).filter(([key]) => !['registrar', 'leadManagers', 'marketMaker', 'sector', 'listingPrices'].includes(key)),
    ) as unknown as IpoRecord;
    expect(toWireIpo(legacy, 'open')).toEqual(toWireIpo(full, 'open'));
    expect(ipoJson(Object.freeze(legacy), 'open')).toBe(JSON.stringify(toWireIpo(full, 'open')));
    expect(JSON.stringify(toWireIpo(legacy, 'open'))).toContain('"registrar":null,"leadManagers":[],"marketMaker":null,"sector":null,"listingPrices":[],"subscription":null}');
  });
});

describe('ipoAnswer', () => {
  it('is {"ipo":...} and its UTF-8 length for any record and run of statuses, frozen (kept) or not (property)', () => {
    const utf8 = new TextEncoder();
    fc.assert(
      fc.property(
        ipoRecordArbitrary(),
        fc.boolean(),
        fc.array(fc.option(subscriptionRecordArbitrary(['x']).map((r) => Object.freeze({ ...r, times: Object.freeze(r.times) })), { nil: null }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.constantFrom(...IPO_STATUSES), fc.nat(2)), { minLength: 1, maxLength: 6 }),
        (record, frozen, snapshots, uses) => {
          if (frozen) Object.freeze(record);
          for (const [status, pick] of uses) {
            const subscription = snapshots[pick % snapshots.length]!;
            const text = JSON.stringify({ ipo: toWireIpo(record, status, undefined, subscription) });
            const { text: got, bytes } = ipoAnswer(record, status, utf8Length, subscription);
            expect({ got, bytes }).toEqual({ got: text, bytes: utf8.encode(text).length });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('measures a frozen record once per status, and every time when the record is not frozen', () => {
    const [record] = fc.sample(ipoRecordArbitrary(), { numRuns: 1, seed: 7 });
    let measured = 0;
    const measure = (text: string) => (measured++, utf8Length(text));
    const loose = { ...record! };
    ipoAnswer(loose, 'open', measure);
    ipoAnswer(loose, 'open', measure);
    expect(measured).toBe(2);
    const frozen = Object.freeze({ ...record! });
    ipoAnswer(frozen, 'open', measure);
    ipoAnswer(frozen, 'open', measure);
    expect(measured).toBe(3);
    // the status moved on (an IST midnight): measured again, then kept again
    expect(ipoAnswer(frozen, 'closed', measure).text).toContain('"status":"closed"');
    ipoAnswer(frozen, 'closed', measure);
    expect(measured).toBe(4);
  });
});

describe('ipoJsonBytes', () => {
  it('is the UTF-8 of ipoJson without GMP for a frozen record and subscription snapshot, kept; null for a record that is not frozen (property)', () => {
    const utf8 = new TextEncoder();
    fc.assert(
      fc.property(
        ipoRecordArbitrary(),
        fc.boolean(),
        fc.option(subscriptionRecordArbitrary(['x']).map((r) => Object.freeze({ ...r, times: Object.freeze(r.times) })), { nil: null }),
        fc.array(fc.constantFrom(...IPO_STATUSES), { minLength: 1, maxLength: 4 }),
        (record, frozen, subscription, statuses) => {
          if (frozen) Object.freeze(record);
          for (const status of statuses) {
            const bytes = ipoJsonBytes(record, status, subscription);
            if (!frozen) expect(bytes).toBeNull();
            else expect(bytes).toEqual(utf8.encode(ipoJson(record, status, undefined, subscription)));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
