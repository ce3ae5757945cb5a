import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeClientAddress, parseQuery, routePath } from './request.js';

describe('routePath', () => {
  it('routes the three operations and tolerates one trailing slash', () => {
    expect(routePath('/')).toEqual({ kind: 'list' });
    expect(routePath('')).toEqual({ kind: 'list' });
    expect(routePath('/ORBIT')).toEqual({ kind: 'ipo', rawIdentifier: 'ORBIT' });
    expect(routePath('/ORBIT/')).toEqual({ kind: 'ipo', rawIdentifier: 'ORBIT' });
    expect(routePath('/ORBIT/gmp')).toEqual({ kind: 'gmp', rawIdentifier: 'ORBIT' });
    expect(routePath('/ORBIT/gmp/')).toEqual({ kind: 'gmp', rawIdentifier: 'ORBIT' });
    expect(routePath('/a%2Fb/gmp')).toEqual({ kind: 'gmp', rawIdentifier: 'a%2Fb' });
  });

  it('treats empty segments, extra segments and other names as unknown', () => {
    for (const p of ['//gmp', '/ORBIT//', '/ORBIT/GMP', '/ORBIT/gmp/x', '/a/b', 'ORBIT', '/ORBIT/gmp//']) {
      expect(routePath(p)).toEqual({ kind: 'unknown' });
    }
  });
});

describe('parseQuery', () => {
  it('splits on & and the first =, keeps repeats, leaves values raw', () => {
    const q = parseQuery('status=open&status=listed&x&a=b=c&&type=EQ%2CSME&n+m=1');
    expect(q.get('status')).toEqual(['open', 'listed']);
    expect(q.get('x')).toEqual(['']);
    expect(q.get('a')).toEqual(['b=c']);
    expect(q.get('type')).toEqual(['EQ%2CSME']);
    expect(q.get('n m')).toEqual(['1']);
  });

  it('drops names that cannot be decoded', () => {
    expect([...parseQuery('%zz=1&%E0%A4=2&ok=3').keys()]).toEqual(['ok']);
  });
});

describe('normalizeClientAddress', () => {
  it('unwraps IPv4-mapped IPv6 and groups IPv6 by /64', () => {
    expect(normalizeClientAddress('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeClientAddress('::FFFF:7f00:1')).toBe('127.0.0.1');
    expect(normalizeClientAddress('1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeClientAddress('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(normalizeClientAddress('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(normalizeClientAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(normalizeClientAddress('::1')).toBe('0:0:0:0::/64');
    expect(normalizeClientAddress(undefined)).toBe('unknown');
    // the frameworks trim the entries of X-Forwarded-For; so does this
    expect(normalizeClientAddress(' 1.2.3.4 ')).toBe('1.2.3.4');
  });

  it('drops a port that a proxy appended, for IPv4 and bracketed IPv6', () => {
    expect(normalizeClientAddress('203.0.113.7:49152')).toBe('203.0.113.7');
    expect(normalizeClientAddress('203.0.113.7:0')).toBe('203.0.113.7');
    expect(normalizeClientAddress('[2001:db8:1:2::1]:443')).toBe('2001:db8:1:2::/64');
    expect(normalizeClientAddress('[2001:db8:1:2::1]')).toBe('2001:db8:1:2::/64');
    expect(normalizeClientAddress('[::ffff:203.0.113.7]:8080')).toBe('203.0.113.7');
    // without brackets the last group is part of the address, not a port
    expect(normalizeClientAddress('2001:db8:1:2::1:443')).toBe('2001:db8:1:2::/64');
  });

  it('puts everything that is not an IPv4 or IPv6 address in one shared window, whatever its size', () => {
    for (const junk of [
      'not an address', 'junk-1', 'x'.repeat(16_384), '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.4:65536', '1.2.3.4:', '1.2.3.4:-1',
      '1.2.3.4:80:80', '[1.2.3.4]:80', '2001:db8::1]:80', '[2001:db8::1', '[2001:db8::1]:x', '2001:db8:::1', '12345::', 'g::1',
      // legacy forms some parsers read as octal or as one number: never an address here
      '203.000.113.007', '0203.0.113.7', '010.0.0.1', '3405803783', '0xcb.0.113.7', '203.0x00.113.7', '1.2.3.04',
      'fe80::1%', 'fe80::1%[x', 'fe80::1%eth0%1', ' ', 'unknown', 'localhost', '::ffff:1.2.3.256', '\u0661.2.3.4', '1.2.3.4\u00a0x',
    ]) {
      expect(normalizeClientAddress(junk), junk.slice(0, 40)).toBe('unknown');
    }
  });

  it('agrees with node:net on what is an address, and its result is short and stable (property)', () => {
    const chars = fc.constantFrom(...'0123456789abcdefABCDEF:.%[]x '.split(''));
    const candidates = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV4Extended(),
      fc.string({ unit: chars, maxLength: 45 }),
      fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70_000 })).map(([ip, port]) => `${ip}:${port}`),
      fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 70_000 })).map(([ip, port]) => `[${ip}]:${port}`),
    );
    fc.assert(
      fc.property(candidates, (text) => {
        const got = normalizeClientAddress(text);
        const bare = withoutPort(text.trim());
        if (bare === null || isIP(bare) === 0) {
          expect(got).toBe('unknown');
        } else {
          expect(got).not.toBe('unknown');
          expect(got.length).toBeLessThanOrEqual(24);
          expect(normalizeClientAddress(bare)).toBe(got);
        }
        // a normalised address normalises to itself (IPv4) or to the same /64 (IPv6)
        if (got !== 'unknown' && !got.endsWith('/64')) expect(normalizeClientAddress(got)).toBe(got);
      }),
      { numRuns: 2_000 },
    );
  });
});

/** The address without a port a proxy appended (`a.b.c.d:p`, `[v6]:p`, `[v6]`), or null when the port is not one. */
function withoutPort(text: string): string | null {
  const v4 = /^([0-9.]+):([0-9]+)$/.exec(text);
  if (v4 !== null) return isIP(v4[1]!) === 4 && v4[2]!.length <= 5 && Number(v4[2]) <= 65_535 ? v4[1]! : null;
  const v6 = /^\[([^\]]*)\](?::([0-9]+))?$/.exec(text);
  if (v6 !== null) return isIP(v6[1]!) === 6 && (v6[2] === undefined || (v6[2].length <= 5 && Number(v6[2]) <= 65_535)) ? v6[1]! : null;
  return text;
}
