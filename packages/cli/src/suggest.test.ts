import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from './suggest.js';

/** Plain Levenshtein (no swaps), the textbook way: a reference to bound the distance with. */
function levenshtein(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) row.push(Math.min(previous[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1), previous[j]! + 1, row[j - 1]! + 1));
    previous = row;
  }
  return previous[t.length]!;
}

// A small alphabet, so that random texts share characters and swaps.
const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 9 });

describe('editDistance (Damerau-Levenshtein)', () => {
  it.each([
    ['', '', 0],
    ['', 'abc', 3],
    ['migrat', 'migrate', 1],
    ['acount', 'account', 1],
    ['craete', 'create', 1],
    ['lsit', 'list', 1],
    ['kitten', 'sitting', 3],
    // the optimal-string-alignment variant says 3 here (it edits no substring twice)
    ['ca', 'abc', 2],
    ['😀x', 'x😀', 1],
    ['é', 'e', 1],
  ])('%j to %j is %i', (a, b, expected) => {
    expect(editDistance(a, b)).toBe(expected);
    expect(editDistance(b, a)).toBe(expected);
  });

  it('is a metric: zero exactly for equal texts, symmetric, and within the triangle inequality', () => {
    fc.assert(
      fc.property(text, text, text, (a, b, c) => {
        expect(editDistance(a, b) === 0).toBe(a === b);
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, c)).toBeLessThanOrEqual(editDistance(a, b) + editDistance(b, c));
      }),
      { numRuns: 2000 },
    );
  });

  it('lies between Levenshtein halved and Levenshtein (a swap is two of its edits), and between the lengths’ difference and the longer length', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const d = editDistance(a, b);
        const lev = levenshtein(a, b);
        expect(d).toBeLessThanOrEqual(lev);
        expect(d).toBeGreaterThanOrEqual(Math.ceil(lev / 2));
        expect(d).toBeGreaterThanOrEqual(Math.abs(a.length - b.length));
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
  });

  it('counts one swap of two adjacent characters as one edit', () => {
    fc.assert(
      fc.property(text, fc.nat(), (a, at) => {
        fc.pre(a.length >= 2);
        const i = at % (a.length - 1);
        const swapped = a.slice(0, i) + a[i + 1]! + a[i]! + a.slice(i + 2);
        expect(editDistance(a, swapped)).toBe(a[i] === a[i + 1] ? 0 : 1);
      }),
    );
  });
});

describe('closestName', () => {
  const commands = ['serve', 'migrate', 'import', 'push', 'collect', 'sources', 'accounts', 'keys', 'webhooks', 'worker', 'usage', 'demo-data'];

  it.each([
    ['migrat', 'migrate'],
    ['serv', 'serve'],
    ['imprt', 'import'],
    ['webhoks', 'webhooks'],
    ['Serve', 'serve'],
    // a prefix of one name only, too far by distance
    ['demo', 'demo-data'],
    ['acc', 'accounts'],
  ])('%j: %j', (typed, expected) => expect(closestName(typed, commands)).toBe(expected));

  it.each([
    ['xyz'],
    // a prefix of two names, and too far from both
    ['w'],
    [''],
    ['migrations'],
    ['a'.repeat(100_000)],
  ])('%j: none', (typed) => expect(closestName(typed, commands)).toBeUndefined());

  it('allows max(1, floor(length / 3)) edits', () => {
    expect(closestName('ab', ['xb'])).toBe('xb');
    expect(closestName('ab', ['xy'])).toBeUndefined();
    expect(closestName('abcdef', ['abxyef'])).toBe('abxyef');
    expect(closestName('abcdef', ['axyzef'])).toBeUndefined();
  });

  it('prefers the closer name, and the first of equally close ones', () => {
    expect(closestName('abcdefgh', ['abcdefxy', 'abcdefgx'])).toBe('abcdefgx');
    expect(closestName('keys', ['key', 'keys2', 'keyss'])).toBe('key');
    expect(closestName('cat', ['bat', 'hat'])).toBe('bat');
  });

  it('never suggests what is not a name, nor a name farther than allowed', () => {
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 6 }), (typed, names) => {
        const found = closestName(typed, names);
        if (found === undefined) return;
        expect(names).toContain(found);
        const close = editDistance(typed, found) <= Math.max(1, Math.floor(typed.length / 3));
        expect(close || (typed !== '' && names.filter((n) => n.startsWith(typed)).length === 1)).toBe(true);
      }),
    );
  });
});
