import { describe, expect, it } from 'vitest';
import { createAccountHandler, MAX_ACCOUNT_BODY_BYTES, parsedAccountBody, type AccountRequest, type DashboardAssets } from './account-handler.js';
import { referenceStore } from '@ipokit/testing';

// The dashboard's files are looked up by a name the request chose. Only the files given are
// files: a name an object inherits (`__proto__`, `toString`, `constructor`, ...) is a path
// like any other unknown one, a 404 with the error body, never a 500.

const ASSETS: DashboardAssets = Object.freeze({
  '': Object.freeze({ contentType: 'text/html; charset=utf-8', body: '<!doctype html><script src="app.js"></script>' }),
  'app.js': Object.freeze({ contentType: 'text/javascript; charset=utf-8', body: 'void 0;' }),
});

/** Every name `Object.prototype` has (its own names, so a new one is tested when it appears). */
const INHERITED = Object.getOwnPropertyNames(Object.prototype);

function request(path: string, method = 'GET'): AccountRequest {
  return { method, url: `/account${path}`, path, query: '', headers: {}, clientAddress: '127.0.0.1', accountId: null, body: null };
}

describe('dashboard files', () => {
  it('answers a name that Object.prototype has as an unknown file: 404 with the error body, nothing reported', async () => {
    expect(INHERITED).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']));
    const errors: unknown[] = [];
    const handle = createAccountHandler(referenceStore(), { dashboardAssets: ASSETS, onError: (e) => errors.push(e) });
    for (const name of INHERITED) {
      for (const path of [`/-/dashboard/${name}`, `/-/dashboard/assets/${name}`, `/-/dashboard/${name}/x`]) {
        for (const method of ['GET', 'HEAD']) {
          const res = await handle(request(path, method));
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(res.headers['Content-Type'], path).toBe('application/json; charset=utf-8');
          if (method === 'GET') expect(JSON.parse(res.body), path).toEqual({ status: '404', title: 'Not Found', detail: 'The dashboard has no such file.', code: 'ERR:NOTFOUND' });
        }
      }
    }
    expect(errors).toEqual([]);
  });

  it('still serves the files it was given, by their own names', async () => {
    const handle = createAccountHandler(referenceStore(), { dashboardAssets: Promise.resolve(ASSETS) });
    const page = await handle(request('/-/dashboard/'));
    expect(page.status).toBe(200);
    expect(page.body).toBe(ASSETS['']!.body);
    const script = await handle(request('/-/dashboard/app.js'));
    expect(script.status).toBe(200);
    expect(script.headers['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toBe('void 0;');
    expect((await handle(request('/-/dashboard/nope.js'))).status).toBe(404);
  });

  it('reads only the own files of an asset object whose prototype has more (a file is what the object itself holds)', async () => {
    const inherited = { 'secret.js': { contentType: 'text/javascript; charset=utf-8', body: 'leak' } };
    const assets: DashboardAssets = Object.assign(Object.create(inherited) as Record<string, never>, ASSETS);
    const handle = createAccountHandler(referenceStore(), { dashboardAssets: assets });
    expect((await handle(request('/-/dashboard/secret.js'))).status).toBe(404);
    expect((await handle(request('/-/dashboard/app.js'))).status).toBe(200);
  });
});

// A body the host app's parser read (express.json() takes 100 KB) may nest thousands deep;
// its size was measured with JSON.stringify, which recursed out of the stack: a 500.
describe('parsedAccountBody', () => {
  const bytes = (text: string): number => new TextEncoder().encode(text).byteLength;
  /** Arrays nested `depth` deep under `label`, holding what JSON.stringify writes in every form (escapes, UTF-8, numbers, keys) and `pad` x's. */
  const deepText = (depth: number, pad: number): string =>
    `{"label":${'['.repeat(depth)}{"k é\\t":[1,-2.5,1e+21,true,null,"é\\n\\u0001\\"😀"],"z":{},"y":[]},"${'x'.repeat(pad)}"${']'.repeat(depth)}}`;

  it('measures a value nested thousands deep against the 10 KB limit as its JSON text, exactly', () => {
    expect(JSON.stringify(JSON.parse(deepText(2, 3)))).toBe(deepText(2, 3)); // written as JSON.stringify writes it
    for (const depth of [4_000, 5_000]) {
      const pad = MAX_ACCOUNT_BODY_BYTES - bytes(deepText(depth, 0));
      expect(bytes(deepText(depth, pad))).toBe(MAX_ACCOUNT_BODY_BYTES);
      const fits = JSON.parse(deepText(depth, pad)) as unknown;
      expect(parsedAccountBody(fits), `depth ${depth}`).toEqual({ json: fits });
      expect(parsedAccountBody(JSON.parse(deepText(depth, pad + 1))), `depth ${depth}`).toEqual({ tooLarge: true });
    }
    for (const depth of [6_000, 40_000, 100_000]) expect(parsedAccountBody(JSON.parse(deepText(depth, 0))), `depth ${depth}`).toEqual({ tooLarge: true });
    const objects = JSON.parse('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)) as unknown;
    expect(parsedAccountBody(objects)).toEqual({ tooLarge: true });
  });

  it('measures a shallow value as before: strings as UTF-8, with their escapes', () => {
    for (const label of ['x'.repeat(MAX_ACCOUNT_BODY_BYTES - 12), 'é'.repeat((MAX_ACCOUNT_BODY_BYTES - 12) / 2), '\n'.repeat((MAX_ACCOUNT_BODY_BYTES - 12) / 2)]) {
      expect(bytes(JSON.stringify({ label }))).toBe(MAX_ACCOUNT_BODY_BYTES);
      expect(parsedAccountBody({ label })).toEqual({ json: { label } });
      expect(parsedAccountBody({ label: `${label}x` })).toEqual({ tooLarge: true });
    }
  });
});

// POST /webhooks (docs/spec.md#webhooks, only the public internet): URLs aimed inside are 400 on url;
// the router option webhookAllowedNetworks opens the operator's networks.
describe('POST /webhooks and webhookAllowedNetworks', () => {
  const post = (accountId: string, url: string): AccountRequest => ({
    ...request('/webhooks', 'POST'),
    headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
    accountId,
    body: { text: JSON.stringify({ url, events: ['ipo.created'] }) },
  });

  it('refuses a loopback or private URL unless the router opens its network', async () => {
    const store = referenceStore();
    const { createAccount } = await import('../accounts/admin.js');
    const acct = await createAccount(store, { name: 'Acme', plan: 'pro' });
    const closed = createAccountHandler(store, {});
    for (const url of ['http://127.0.0.1:9000/h', 'http://[::1]:9000/h', 'http://localhost:9000/h', 'http://10.1.2.3/h', 'https://a:b@example.com/h']) {
      const res = await closed(post(acct.id, url));
      expect(res.status, url).toBe(400);
      expect(JSON.parse(res.body), url).toMatchObject({ code: 'ERR:BADPARAM', meta: { parameter: 'url' } });
    }
    const open = createAccountHandler(store, { webhookAllowedNetworks: ['127.0.0.0/8', '::1/128', '10.1.0.0/16'] });
    for (const url of ['http://127.0.0.1:9000/h', 'http://[::1]:9000/h', 'http://localhost:9000/h', 'http://10.1.2.3/h']) {
      const res = await open(post(acct.id, url));
      expect(res.status, `${url} ${res.body}`).toBe(201);
    }
    expect((await open(post(acct.id, 'http://10.2.0.1/h'))).status).toBe(400);
  });
});
