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
    expect(normalizeClientAddress('not an address')).toBe('not an address');
  });
});
