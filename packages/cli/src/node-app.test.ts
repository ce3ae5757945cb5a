import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { outsideAnswer, type HandlerRequest, type HandlerResponse } from '@ipokit/core/adapter';
import { forwardedAddress, nodeApp, type NodeAppOptions } from './node-app.js';
import { startServer } from './server.js';
import { connectRaw, within } from './test-sockets.js';

// The node:http listener of `ipokit serve`: its routes in Express's order, the client address
// as Express's `trust proxy N` reads it, HEAD, the 404 outside every route, absolute-form and
// odd targets, a handler that throws, and a client that leaves before the answer.

const NOW = Date.UTC(2026, 10, 23, 6, 30);

/** Express's own answer: `req.ip` of a request with these headers, from this socket address, under `trust proxy hops`. */
function expressIp(hops: number, header: string | undefined, remoteAddress: string): string | undefined {
  const app = express();
  if (hops > 0) app.set('trust proxy', hops);
  const req = Object.create(app.request, {
    headers: { value: header === undefined ? {} : { 'x-forwarded-for': header } },
    socket: { value: { remoteAddress } },
    connection: { value: { remoteAddress } },
  }) as express.Request;
  return req.ip;
}

describe('forwardedAddress', () => {
  const fake = (header: string | undefined, remoteAddress = '10.0.0.2') =>
    ({ headers: header === undefined ? {} : { 'x-forwarded-for': header }, socket: { remoteAddress } }) as unknown as IncomingMessage;

  it.each([
    [0, '203.0.113.9, 10.0.0.1', '10.0.0.2'],
    [1, '203.0.113.9, 10.0.0.1', '10.0.0.1'],
    [2, '203.0.113.9, 10.0.0.1', '203.0.113.9'],
    [5, '203.0.113.9, 10.0.0.1', '203.0.113.9'],
    [1, undefined, '10.0.0.2'],
    [1, '', '10.0.0.2'],
    [1, ' , ,', '10.0.0.2'],
    [2, '203.0.113.9 ,  , 10.0.0.1  ', '203.0.113.9'],
    [1, 'a b', 'a b'],
  ])('trust %i, X-Forwarded-For %j: %s, as Express says', (hops, header, address) => {
    expect(forwardedAddress(fake(header), hops)).toBe(address);
    expect(expressIp(hops, header, '10.0.0.2')).toBe(address);
  });

  it("answers as Express's trust proxy N does for any header and any N (property)", () => {
    const entry = fc.constantFrom('203.0.113.9', '10.0.0.1', '::1', '2001:db8::7', 'unknown', 'a b', '', ' ', '  198.51.100.4', '192.0.2.1 ');
    const separator = fc.constantFrom(',', ', ', ' ,', ',,');
    const header = fc.option(fc.array(fc.tuple(entry, separator), { maxLength: 6 }).map((xs) => xs.map(([e, s]) => e + s).join('')), { nil: undefined });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 7 }), header, (hops, h) => {
        expect(forwardedAddress(fake(h), hops)).toBe(expressIp(hops, h, '10.0.0.2'));
      }),
      { numRuns: 500 },
    );
  });
});

describe('nodeApp', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  const json = (status: number, value: unknown): HandlerResponse => {
    const body = JSON.stringify(value);
    return { status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)) }, body };
  };

  /** Serves a nodeApp on port 0 whose API handler answers with what `api` returns (default: the request it got). */
  async function serve(options: Partial<NodeAppOptions> & { api?: NodeAppOptions['api'] }): Promise<number> {
    const app = nodeApp({
      api: { mount: '/ipos', handle: async (r: HandlerRequest) => json(200, { ...r, headers: undefined }) },
      outside: outsideAnswer('/ipos', 'the IPO API'),
      onError: () => undefined,
      ...options,
    });
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  /** One raw request (any target, any method); resolves with the status line, the headers and the body. */
  function raw(port: number, method: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path: target, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('hands the core the path below the mount, the query, the target as sent and the client address', async () => {
    const port = await serve({});
    const got = await raw(port, 'GET', '/IPOS/ORBIT/gmp?interval=hourly');
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toEqual({ method: 'GET', url: '/IPOS/ORBIT/gmp?interval=hourly', path: '/ORBIT/gmp', query: 'interval=hourly', clientAddress: '127.0.0.1' });
    // absolute-form (RFC 9112 3.2.2): the same route
    const absolute = await raw(port, 'GET', 'http://example.com/ipos/ORBIT?x=1');
    expect(JSON.parse(absolute.body)).toMatchObject({ url: 'http://example.com/ipos/ORBIT?x=1', path: '/ORBIT', query: 'x=1' });
    expect(JSON.parse((await raw(port, 'GET', '/ipos')).body)).toMatchObject({ path: '/', query: '' });
  });

  it('answers 404 with the API error body outside every route (and for odd targets), HEAD with no body', async () => {
    const port = await serve({ home: { service: 'ipokit' } });
    for (const target of ['/iposx', '/other', '*', 'http://example.com/other', '/%zz']) {
      const got = await raw(port, target === '*' ? 'OPTIONS' : 'GET', target);
      expect(got.status, target).toBe(404);
      expect(JSON.parse(got.body)).toMatchObject({ status: '404', code: 'ERR:NOTFOUND', detail: 'No such route: the IPO API answers under /ipos.' });
    }
    const home = await raw(port, 'GET', '/');
    expect([home.status, home.headers['content-type'], JSON.parse(home.body)]).toEqual([200, 'application/json; charset=utf-8', { service: 'ipokit' }]);
    // an absolute-form target without a path is `/`, as Express reads it
    expect(JSON.parse((await raw(port, 'GET', 'http://example.com')).body)).toEqual({ service: 'ipokit' });
    const head = await raw(port, 'HEAD', '/');
    expect([head.status, head.headers['content-length'], head.body]).toEqual([200, home.headers['content-length'], '']);
    // the home route is GET's only, as under Express
    expect((await raw(port, 'POST', '/')).status).toBe(404);
    const headApi = await raw(port, 'HEAD', '/ipos/X');
    expect([headApi.status, Number(headApi.headers['content-length']) > 0, headApi.body]).toEqual([200, true, '']);
  });

  it('logs what a handler throws and answers 500 with the API error body', async () => {
    const errors: unknown[] = [];
    const port = await serve({
      api: { mount: '/ipos', handle: () => Promise.reject(new Error('boom')) },
      account: { mount: '/account', accountOf: () => { throw new Error('login down'); }, handle: async () => json(200, {}) },
      onError: (e) => errors.push(e),
    });
    for (const target of ['/ipos/X', '/account/']) {
      const got = await raw(port, 'GET', target);
      expect(got.status).toBe(500);
      expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(got.body)).toMatchObject({ status: '500', code: 'ERR:INTERNAL' });
    }
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom', 'login down']);
  });

  it('writes nothing and logs nothing for a client that left before its answer', async () => {
    const errors: unknown[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const arrived = new Promise<void>((resolve) => (asked = resolve));
    const port = await serve({
      api: {
        mount: '/ipos',
        handle: async () => {
          asked();
          await held;
          return json(200, { late: true });
        },
      },
      onError: (e) => errors.push(e),
    });
    const conn = await connectRaw(port);
    conn.socket.write('GET /ipos/X HTTP/1.1\r\nHost: x\r\n\r\n');
    await arrived;
    conn.socket.destroy();
    await within(conn.closed, 1000, 'the client closing');
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toEqual([]);
    // the server still answers others
    expect((await raw(port, 'GET', '/iposx')).status).toBe(404);
  });

  it('serves the page (the demo sign-in) on GET at its path, any case, with or without a trailing slash', async () => {
    const port = await serve({ page: { path: '/demo/sign-in', answer: (query) => json(200, { query }) } });
    for (const target of ['/demo/sign-in?plan=free#x', '/DEMO/Sign-In/?plan=free']) expect(JSON.parse((await raw(port, 'GET', target)).body)).toEqual({ query: 'plan=free' });
    expect((await raw(port, 'POST', '/demo/sign-in')).status).toBe(404);
  });
});

describe.each(['node', 'express', 'koa'] as const)('startServer with %s', (framework) => {
  it('sends no X-Powered-By, on any route', async () => {
    const running = await startServer({ port: 0, framework, now: () => new Date(NOW) });
    try {
      const base = running.url.replace('localhost', '127.0.0.1');
      for (const path of ['/', '/ipos?status=listed', '/ipos/-/openapi.json', '/healthz', '/nowhere', '/account/', '/demo/sign-in']) {
        const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': running.keys!.pro }, redirect: 'manual' });
        await res.arrayBuffer();
        expect(res.headers.get('x-powered-by'), `${framework} ${path}`).toBeNull();
      }
    } finally {
      await running.close();
    }
  }, 60_000);

  it('reads the client address from X-Forwarded-For as Express does with trustProxy', async () => {
    const seen: Array<string | null> = [];
    const running = await startServer({ port: 0, framework, trustProxy: 2, now: () => new Date(NOW), accessLog: (entry) => seen.push(entry.address) });
    try {
      const base = running.url.replace('localhost', '127.0.0.1');
      const headers = ['198.51.100.4, 203.0.113.9, 10.0.0.1', '203.0.113.9', '  ,203.0.113.7 ,10.0.0.1'];
      for (const xff of headers) await (await fetch(`${base}/ipos?status=listed`, { headers: { 'x-forwarded-for': xff } })).arrayBuffer();
      await within(
        (async () => {
          while (seen.length < headers.length) await new Promise((resolve) => setTimeout(resolve, 10));
        })(),
        2000,
        'the access log lines',
      );
      expect(seen).toEqual(headers.map((xff) => expressIp(2, xff, '127.0.0.1')));
      expect(seen).toEqual(['203.0.113.9', '203.0.113.9', '203.0.113.7']);
    } finally {
      await running.close();
    }
  }, 60_000);
});
