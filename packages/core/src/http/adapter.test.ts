import { describe, expect, it } from 'vitest';
import { accountHandlerOf, normalizePrefix, originForm, outsideAnswer, targetOfUrl, targetUnder } from './adapter.js';
import { referenceStore } from '@ipokit/testing';

describe('the adapter layer', () => {
  it('reads the request-target in origin-form, from absolute-form and from a fetch URL', () => {
    expect(originForm('http://example.com/ipos/X?a=1')).toBe('/ipos/X?a=1');
    expect(originForm('HTTPS://example.com:8080?a')).toBe('?a');
    expect(originForm('/ipos/http://x')).toBe('/ipos/http://x');
    expect(targetOfUrl('http://localhost:3000/ipos?status=open')).toBe('/ipos?status=open');
    expect(targetOfUrl('http://localhost:3000/')).toBe('/');
    expect(targetOfUrl('foo://host')).toBe('/');
  });

  it('matches the prefix as app.use(path) does: ignoring case, at a segment boundary', () => {
    const mount = normalizePrefix('/IPOS//', 'ipoRouter');
    expect(mount).toBe('/ipos');
    expect(targetUnder('/Ipos/X?a=1&b', mount)).toEqual({ path: '/X', query: 'a=1&b' });
    expect(targetUnder('/ipos', mount)).toEqual({ path: '/', query: '' });
    expect(targetUnder('/ipos?x', mount)).toEqual({ path: '/', query: 'x' });
    expect(targetUnder('/iposx', mount)).toBeNull();
    expect(targetUnder('/ipo', mount)).toBeNull();
    expect(targetUnder('/a?b?c', '')).toEqual({ path: '/a', query: 'b?c' });
    expect(normalizePrefix(undefined, 'ipoRouter')).toBe('');
    for (const bad of ['ipos', '/ipos?x', '/ipos#x', 7]) {
      expect(() => normalizePrefix(bad as string, 'ipoHandler')).toThrow(expect.objectContaining({ code: 'ERR:BADPARAM', parameter: 'prefix', message: expect.stringMatching(/^ipoHandler option prefix must be a path/) }));
    }
  });

  it('answers outside the prefix with the API error body and its exact length', () => {
    const outside = outsideAnswer('/ipos', 'the IPO API');
    expect(outside.status).toBe(404);
    expect(JSON.parse(outside.body)).toMatchObject({ status: '404', code: 'ERR:NOTFOUND', detail: 'No such route: the IPO API answers under /ipos.' });
    expect(outside.headers['Content-Length']).toBe(String(new TextEncoder().encode(outside.body).length));
  });

  it('builds the account handler: account required, the dashboard loaded only when asked', async () => {
    const loadDashboard = async () => ({ dashboardAssets: { '': { contentType: 'text/html; charset=utf-8', body: '<p>hi</p>' } } });
    expect(() => accountHandlerOf(referenceStore(), {}, { accountArgs: '(req)', loadDashboard })).toThrow(/accountRouter needs the option account: \(req\) =>/);
    let loads = 0;
    const counted = () => (loads++, loadDashboard());
    accountHandlerOf(referenceStore(), { account: () => null }, { accountArgs: '(req)', loadDashboard: counted });
    expect(loads).toBe(0);
    const { handle, account } = accountHandlerOf<[id: string]>(referenceStore(), { account: (id) => id, dashboard: true }, { accountArgs: '(req)', loadDashboard: counted });
    expect(loads).toBe(1);
    expect(account('acct_1')).toBe('acct_1');
    const page = await handle({ method: 'GET', url: '/-/dashboard/', path: '/-/dashboard/', query: '', headers: {}, clientAddress: '127.0.0.1', accountId: null, body: null });
    expect(page.status).toBe(200);
    expect(page.body).toBe('<p>hi</p>');
  });
});
