import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import { ipoRouter as expressRouter } from '@ipokit/express';
import { FIXTURE_NOW, seedFixture, type FixtureKeys } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { ipoRouter as koaRouter } from './index.js';

// Differential test: Express and Koa, each on its own store seeded alike, get the same
// generated requests in the same order and must answer the same status, the same bytes
// and the same headers (the framework's own Date/Connection/X-Powered-By aside).

const FRAMEWORK_HEADERS = new Set(['date', 'connection', 'keep-alive', 'x-powered-by']);
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'];
const MOUNTS = ['/ipos', '/IPOS', '/Ipos'];
const PATHS = [
  '', '/', '//', '/ORBIT', '/ORBIT/', '/orbit', '/ORBIT//', '/ORBIT/gmp', '/ORBIT/gmp/', '/ORBIT/GMP', '/ORBIT/gmp/x',
  '/orbit-aerospace-ipo', '/2026000001', '/NOPE', '/a%2Fb', '/%4FRBIT', '/%E0%A4%85', '/%ZZ', '/%', '//gmp', '/a/b/c',
  '/.', '/..', '/ORBIT%20', '/x'.repeat(70),
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

let sides: [Side, Side];

beforeAll(async () => {
  const a = memoryStore();
  const b = memoryStore();
  const [fa, fb] = [await seedFixture(a), await seedFixture(b)];
  const app = express();
  app.use('/ipos', expressRouter(a, options));
  const koa = new Koa();
  koa.use(koaRouter(b, { ...options, prefix: '/ipos' }));
  sides = [await serve(http.createServer(app), fa.keys), await serve(http.createServer(koa.callback()), fb.keys)];
});

afterAll(async () => {
  await Promise.all(sides.map((s) => s.close()));
});

describe('Express and Koa answer alike', () => {
  it('the same status, bytes and headers for generated requests (property)', async () => {
    const query = fc
      .array(fc.tuple(fc.constantFrom(...NAMES), fc.option(fc.constantFrom(...VALUES), { nil: undefined })), { maxLength: 6 })
      .map((parts) => parts.map(([n, v]) => (v === undefined ? n : `${n}=${v}`)).join('&'));
    const request = fc.record({
      method: fc.constantFrom(...METHODS),
      mount: fc.constantFrom(...MOUNTS),
      path: fc.constantFrom(...PATHS),
      query: fc.option(query, { nil: undefined }),
      key: fc.constantFrom<keyof FixtureKeys | 'none' | 'empty'>('none', 'empty', 'free', 'paid', 'pro', 'proGmp', 'revoked', 'wrong'),
    });
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const target = r.mount + r.path + (r.query === undefined ? '' : `?${r.query}`);
        const [x, y] = await Promise.all([send(sides[0], target, r.method, r.key), send(sides[1], target, r.method, r.key)]);
        expect(y.status, `${r.method} ${target}`).toBe(x.status);
        expect(y.body, `${r.method} ${target}`).toBe(x.body);
        expect(y.headers, `${r.method} ${target}`).toEqual(x.headers);
        compared += 1;
      }),
      { numRuns: 400 },
    );
    expect(compared).toBeGreaterThanOrEqual(400);
  });
});

async function serve(server: http.Server, keys: FixtureKeys): Promise<Side> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    keys,
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
