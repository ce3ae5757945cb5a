// The written-out wire type is the table's: `npm run typecheck` (CI) fails when a field is in
// one and not the other, or differs in type, optionality or nullability. (The wire's key
// order, the table's, is pinned by the serializer's byte-for-byte tests.)
import { describe, expectTypeOf, it } from 'vitest';
import type { IpoShape } from './ipo-fields.js';
import type { Ipo } from './types.js';

describe('Ipo is the static type of IPO_FIELDS', () => {
  it('field for field (checked by the type checker)', () => {
    expectTypeOf<Ipo>().toEqualTypeOf<IpoShape>();
  });
});
