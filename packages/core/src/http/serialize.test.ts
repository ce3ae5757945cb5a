import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from './handler.js';
import { ipoAnswer, ipoJson, toWireIpo } from './serialize.js';
import { IPO_STATUSES } from '../model/status.js';
import { ipoRecordArbitrary, snapshotRecordArbitrary } from '@ipokit/testing';

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

describe('ipoAnswer', () => {
  it('is {"ipo":...} and its UTF-8 length for any record and run of statuses, frozen (kept) or not (property)', () => {
    const utf8 = new TextEncoder();
    fc.assert(
      fc.property(ipoRecordArbitrary(), fc.boolean(), fc.array(fc.constantFrom(...IPO_STATUSES), { minLength: 1, maxLength: 6 }), (record, frozen, statuses) => {
        if (frozen) Object.freeze(record);
        for (const status of statuses) {
          const text = JSON.stringify({ ipo: toWireIpo(record, status) });
          const { text: got, bytes } = ipoAnswer(record, status, utf8Length);
          expect({ got, bytes }).toEqual({ got: text, bytes: utf8.encode(text).length });
        }
      }),
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
