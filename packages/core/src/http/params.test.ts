import { describe, expect, it } from 'vitest';
import { parseGmpParams, parseIpoParams, parseListParams, parseSubscriptionParams } from './params.js';
import { parseQuery } from './request.js';

const list = (q: string) => parseListParams(parseQuery(q));
const failsOn = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { parameter?: string }).parameter;
  }
  return undefined;
};

describe('parseListParams', () => {
  it('parses every parameter, enumerations ignoring case', () => {
    expect(list('status=LISTED&type=eq,Sme,EQ&source=NSE&startDate=2026-01-01&endDate=2026-12-31&year=2026&page=0002&limit=10&includeGmp=TRUE')).toEqual({
      status: 'listed', types: ['EQ', 'SME'], source: 'nse', startDate: '2026-01-01', endDate: '2026-12-31',
      year: '2026', q: null, page: 2, limit: 10, includeGmp: true,
    });
    expect(list('status=open')).toMatchObject({ types: null, source: null, page: 1, limit: 3, includeGmp: false });
  });

  it('folds case in ASCII only: no other character matches a letter (the long s, the Kelvin sign, the dotless i)', () => {
    expect(failsOn(() => list('status=open&type=%C5%BFme'))).toBe('type'); // U+017F uppercases to S
    expect(failsOn(() => list('status=%C4%B1'))).toBe('status');
    expect(failsOn(() => list('status=open&type=EQ,%C5%BFME'))).toBe('type');
    expect(failsOn(() => list('status=cloſed'))).toBe('status');
    expect(failsOn(() => list('status=open&source=b%C5%BFe'))).toBe('source');
    expect(failsOn(() => list('status=open&includeGmp=TRUE%E2%80%8B'))).toBe('includeGmp');
    expect(failsOn(() => parseGmpParams('ORBIT', parseQuery('interval=wee%E2%84%AAly')))).toBe('interval'); // U+212A lowercases to k
    expect(failsOn(() => parseGmpParams('ORBIT', parseQuery('interval=WEE%E2%84%AALY')))).toBe('interval');
    expect(parseGmpParams('ORBIT', parseQuery('interval=WeEkLy&field=MeDiAn'))).toMatchObject({ interval: 'weekly', field: 'median' });
    expect(list('status=LiStEd&type=sMe&source=BsE&includeGmp=FaLsE')).toMatchObject({ status: 'listed', types: ['SME'], source: 'bse', includeGmp: false });
  });

  it('takes limits however long, page up to 1,000,000,000', () => {
    expect(list('status=open&limit=99999999999999999999999').limit).toBe(Infinity);
    expect(list('status=open&page=1000000000').page).toBe(1_000_000_000);
    expect(failsOn(() => list('status=open&page=1000000001'))).toBe('page');
    expect(failsOn(() => list('status=open&page=000000000000000000001000000001'))).toBe('page');
    expect(list('status=open&page=000000000000000000001').page).toBe(1);
  });

  it('refuses bad values, naming the parameter', () => {
    const cases: Array<[string, string]> = [
      ['', 'status'], ['status=', 'status'], ['status=opened', 'status'], ['status=open&status=listed', 'status'],
      ['status=open&type=', 'type'], ['status=open&type=EQ,,SME', 'type'], ['status=open&type=EQ,', 'type'], ['status=open&type=IPO', 'type'],
      ['status=open&source=nyse', 'source'], ['status=open&startDate=2026-02-30', 'startDate'], ['status=open&endDate=2026-2-3', 'endDate'],
      ['status=open&startDate=0000-00-00', 'startDate'], ['status=open&year=24', 'year'], ['status=open&year=02024', 'year'],
      ['status=open&page=0', 'page'], ['status=open&page=-1', 'page'], ['status=open&page=%2B1', 'page'], ['status=open&page=1.5', 'page'],
      ['status=open&page=+1', 'page'], ['status=open&limit=0', 'limit'], ['status=open&limit=1e2', 'limit'], ['status=open&includeGmp=yes', 'includeGmp'],
      ['status=open&includeGmp=1', 'includeGmp'], ['status=%E0%A4', 'status'],
    ];
    for (const [q, parameter] of cases) expect(failsOn(() => list(q)), q).toBe(parameter);
  });

  it('answers the first invalid parameter in the order the interface lists them', () => {
    expect(failsOn(() => list('includeGmp=x&limit=x&page=x&year=x&endDate=x&startDate=x&source=x&type=x&status=x'))).toBe('status');
    expect(failsOn(() => list('includeGmp=x&limit=x&page=x&year=x&endDate=x&startDate=x&source=x&type=x&status=open'))).toBe('type');
    expect(failsOn(() => list('includeGmp=x&limit=x&page=x&year=x&endDate=x&startDate=x&source=x&status=open'))).toBe('source');
    expect(failsOn(() => list('includeGmp=x&limit=x&page=1&status=open'))).toBe('limit');
  });

  it('ignores parameters it does not list, repeated or not, and names are case-sensitive', () => {
    expect(list('status=open&foo=1&foo=2&Status=x&STATUS=y').status).toBe('open');
  });
});

describe('parseIpoParams and parseGmpParams', () => {
  it('decode the identifier once', () => {
    expect(parseIpoParams('a%2Fb', parseQuery('')).identifier).toBe('a/b');
    expect(parseIpoParams('%2541', parseQuery('')).identifier).toBe('%41');
    expect(failsOn(() => parseIpoParams('%E0%A4', parseQuery('includeGmp=x')))).toBe('identifier');
  });

  it('default to daily means and check identifier, interval, field, from, to in order', () => {
    expect(parseGmpParams('X', parseQuery(''))).toEqual({ identifier: 'X', interval: 'daily', field: 'mean', from: null, to: null });
    expect(parseGmpParams('X', parseQuery('interval=HOURLY&field=Median')).interval).toBe('hourly');
    expect(failsOn(() => parseGmpParams('X', parseQuery('to=x&from=x&field=x&interval=x')))).toBe('interval');
    expect(failsOn(() => parseGmpParams('X', parseQuery('to=x&from=x&field=x')))).toBe('field');
    expect(failsOn(() => parseGmpParams('X', parseQuery('to=x&from=x')))).toBe('from');
    expect(failsOn(() => parseGmpParams('X', parseQuery('to=2026-13-01')))).toBe('to');
    expect(failsOn(() => parseGmpParams('X', parseQuery('interval=1h')))).toBe('interval');
  });
});

describe('the list filter q (docs/spec.md#list)', () => {
  it('takes 1 to 64 code points as sent: no trimming, %, _ and \\ literal, astral characters counted once', () => {
    expect(list('status=open&q=Orbit').q).toBe('Orbit');
    expect(list('status=open&q=%20a%25_%5C').q).toBe(' a%_\\');
    expect(list('status=open&q=a+b').q).toBe('a b');
    expect(list(`status=open&q=${'x'.repeat(64)}`).q).toBe('x'.repeat(64));
    const astral = '%F0%9F%98%80'.repeat(64); // 64 code points, 128 UTF-16 units
    expect(Array.from(list(`status=open&q=${astral}`).q ?? '')).toHaveLength(64);
  });

  it('refuses an empty, repeated, too long or malformed q, naming q', () => {
    expect(failsOn(() => list('status=open&q='))).toBe('q');
    expect(failsOn(() => list('status=open&q=a&q=b'))).toBe('q');
    expect(failsOn(() => list(`status=open&q=${'x'.repeat(65)}`))).toBe('q');
    expect(failsOn(() => list(`status=open&q=${'%F0%9F%98%80'.repeat(65)}`))).toBe('q');
    expect(failsOn(() => list('status=open&q=%E0%A4'))).toBe('q');
    expect(failsOn(() => list('status=open&q=%zz'))).toBe('q');
  });
});

describe('parseSubscriptionParams', () => {
  it('reads the identifier, then from, then to, each checked whole', () => {
    expect(parseSubscriptionParams('ORBIT', parseQuery('from=2026-11-17&to=2026-11-20&interval=junk'))).toEqual({ identifier: 'ORBIT', from: '2026-11-17', to: '2026-11-20' });
    expect(parseSubscriptionParams('a%2Fb', parseQuery(''))).toEqual({ identifier: 'a/b', from: null, to: null });
    expect(failsOn(() => parseSubscriptionParams('%zz', parseQuery('from=junk')))).toBe('identifier');
    expect(failsOn(() => parseSubscriptionParams('ORBIT', parseQuery('from=2026-02-30&to=junk')))).toBe('from');
    expect(failsOn(() => parseSubscriptionParams('ORBIT', parseQuery('to=2026-13-01')))).toBe('to');
    expect(failsOn(() => parseSubscriptionParams('ORBIT', parseQuery('to=%E0%A4')))).toBe('to');
  });
});
