import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ipoJson, toWireIpo } from './serialize.js';
import { IPO_STATUSES } from './status.js';
import { ipoRecordArbitrary, snapshotRecordArbitrary } from './testing/arbitraries.js';

describe('ipoJson', () => {
  it('writes the bytes of JSON.stringify(toWireIpo(...)) for any record, status and gmp, frozen or not, cached or not (property)', () => {
    const gmp = fc.oneof(fc.constant(undefined), fc.constant(null), snapshotRecordArbitrary(['x']));
    fc.assert(
      fc.property(ipoRecordArbitrary(), fc.boolean(), fc.array(fc.tuple(fc.constantFrom(...IPO_STATUSES), gmp), { minLength: 1, maxLength: 6 }), (record, frozen, uses) => {
        if (frozen) Object.freeze(record);
        for (const [status, snapshot] of uses) {
          expect(ipoJson(record, status, snapshot)).toBe(JSON.stringify(toWireIpo(record, status, snapshot)));
        }
      }),
      { numRuns: 300 },
    );
  });
});
