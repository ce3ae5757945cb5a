import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import { ipoRouter as expressRouter } from '@ipokit/express';
import { FIXTURE_NOW, seedFixture, type FixtureKeys } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { fetchTarget, honoTarget } from './test-target.js';

// Differential test: Express, the fetch handler as the whole server and the fetch handler
// under a Hono route, each on its own store seeded alike, get the same generated requests
// in the same order and must answer the same status, the same bytes and the same headers
// (the framework's own Date/Connection/X-Powered-By aside). Hono's routing is its own
// business: it matches `/ipos/*` case-sensitively, so it is compared on `/ipos` only.
//
// Not generated: dot segments (`/ipos/.`, `/ipos/..`). A fetch handler reads request.url,
// which the runtime has parsed as a WHATWG URL (dot segments resolved) before any handler
// runs, while Express hands the router the target as sent (fetch.test.ts shows it).

const FRAMEWORK_HEADERS = new Set(['date', 'connection', 'keep-alive', 'x-powered-by']);
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'];
const MOUNTS = ['/ipos', '/IPOS', '/Ipos'];
const PATHS = [
  '', '/', '//', '/ORBIT', '/ORBIT/', '/orbit', '/ORBIT//', '/ORBIT/gmp', '/ORBIT/gmp/', '/ORBIT/GMP', '/ORBIT/gmp/x',
  '/orbit-aerospace-ipo', '/2026000001', '/NOPE', '/a%2Fb', '/%4FRBIT', '/%E0%A4%85', '/%ZZ', '/%', '//gmp', '/a/b/c',
  '/ORBIT%20', '/x'.repeat(70), '/-/openapi.json',
];
const NAMES = ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'page', 'limit', 'includeGmp', 'interval', 'field', 'from', 'to', 'Status', 'x'];
const VALUES = [
  '', 'open', 'LISTED', 'upcoming', 'closed', 'announced', 'nope', 'EQ', 'sme,debt', 'EQ,', 'nse', 'BSE', '2026-11-20', '2026-02-30',
  '2026-13-01', '0000-00-00', '2026', '1', '0', '-1', '1e3', '00002', '99999999999999999999', '100', 'true', 'FALSE', '5m', 'hourly',
  'weekly', 'median', 'mode', '%41', '%zz', '+', '%E2%82%B9',
];

interface Side {
  origin: string;
  keys: FixtureKeys;
  close(): Promise<void>;
}

const options: IpoRouterOptions = {
  now: () => new Date(FIXTURE_NOW),
  // generous for keys, the default for callers without one: 429s happen too
  limits: { free: { perMinute: 1e6, gmpPerMinute: 1e6 }, paid: { perMinute: 1e6, gmpPerMinute: 1e6 }, pro: { perMinute: 1e6, gmpPerMinute: 1e6 } },
  onError: () => {},
};

let express5: Side;
let bare: Side;
let hono: Side;
/** Express again, on its own store, for the requests Hono gets (its keyless windows fill apart). */
let express5ForHono: Side;

beforeAll(async () => {
  const start = async (run: (store: ReturnType<typeof memoryStore>) => Promise<{ baseUrl: string; close(): Promise<void> }>): Promise<Side> => {
    const store = memoryStore();
    const { keys } = await seedFixture(store);
    const started = await run(store);
    return { origin: new URL(started.baseUrl).origin, keys, close: started.close };
  };
  const expressApp = async (store: ReturnType<typeof memoryStore>) => {
    const app = express();
    app.use('/ipos', expressRouter(store, options));
    return serve(http.createServer(app));
  };
  [express5, bare, hono, express5ForHono] = await Promise.all([
    start(expressApp),
    start((store) => fetchTarget.start(store, options)),
    start((store) => honoTarget.start(store, options)),
    start(expressApp),
  ]);
});

afterAll(async () => {
  await Promise.all([express5, bare, hono, express5ForHono].map((s) => s?.close()));
});

const query = fc
  .array(fc.tuple(fc.constantFrom(...NAMES), fc.option(fc.constantFrom(...VALUES), { nil: undefined })), { maxLength: 6 })
  .map((parts) => parts.map(([n, v]) => (v === undefined ? n : `${n}=${v}`)).join('&'));
const requestArb = (mounts: readonly string[]) =>
  fc.record({
    method: fc.constantFrom(...METHODS),
    mount: fc.constantFrom(...mounts),
    path: fc.constantFrom(...PATHS),
    query: fc.option(query, { nil: undefined }),
    key: fc.constantFrom<keyof FixtureKeys | 'none' | 'empty'>('none', 'empty', 'free', 'paid', 'pro', 'proGmp', 'revoked', 'wrong'),
  });

describe('the fetch handler answers as Express does', () => {
  for (const [name, mounts, side, reference] of [
    ['as the whole server', MOUNTS, () => bare, () => express5],
    ['under a Hono route', ['/ipos'], () => hono, () => express5ForHono],
  ] as const) {
    it(`${name}: the same status, bytes and headers for generated requests (property)`, async () => {
      let compared = 0;
      await fc.assert(
        fc.asyncProperty(requestArb(mounts), async (r) => {
          const target = r.mount + r.path + (r.query === undefined ? '' : `?${r.query}`);
          const [x, y] = await Promise.all([send(reference(), target, r.method, r.key), send(side(), target, r.method, r.key)]);
          expect(y.status, `${r.method} ${target}`).toBe(x.status);
          expect(y.body, `${r.method} ${target}`).toBe(x.body);
          expect(y.headers, `${r.method} ${target}`).toEqual(x.headers);
          compared += 1;
        }),
        { numRuns: 400 },
      );
      expect(compared).toBeGreaterThanOrEqual(400);
    });
  }
});

async function serve(server: http.Server): Promise<{ baseUrl: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/ipos`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(side: Side, target: string, method: string, key: keyof FixtureKeys | 'none' | 'empty'): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const url = new URL(side.origin);
  const headers: Record<string, string> = {};
  if (key === 'empty') headers['x-api-key'] = '';
  else if (key !== 'none') headers['x-api-key'] = side.keys[key];
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: target, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined && !FRAMEWORK_HEADERS.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
