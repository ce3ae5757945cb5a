import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListResponse } from '@ipokit/core';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { faultyClient } from './test-faults.js';
import { capture, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';

// `ipokit serve --config FILE` with a file that sets every setting, each one observed in
// what the server answers: the framework, the address, the mount path, the proxies trusted,
// the access log, the drain time, the OpenAPI document, every limit, the list page cap, the
// GMP preview, the GMP bucket cap, the URL cap, the store timeout, the key cache, the
// limiter failing open, the connection limits and the webhook worker. On PostgreSQL
// (PGlite, or the real one of DATABASE_URL) through a client whose queries the test can
// slow down or break.

const ORBIT = {
  ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2099-11-24' }],
  gmp: [{ ipoId: '2026000001', timestamp: '2026-11-18T09:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 42 }] }],
};

const FULL = {
  framework: 'koa',
  port: 0,
  host: '127.0.0.2',
  mount: '/api/v1/ipos',
  trustProxy: 1,
  log: 'json',
  drainMs: 700,
  openapi: false,
  limits: { free: { perMinute: 2, gmpPerMinute: 1 }, paid: { perMinute: 4, gmpPerMinute: 1 }, pro: { perMinute: 40, perDay: 100, gmpPerMinute: 20 }, keyless: { perMinute: 2 } },
  rateLimitHeaders: 'both',
  maxListLimit: { free: 1, paid: 7, pro: 9 },
  gmpPreviewEnds: '2020-01-01',
  maxGmpBuckets: 10,
  maxUrlLength: 200,
  storeTimeoutMs: 300,
  keyCacheTtlMs: 0,
  limiterFailOpen: true,
  connections: { headersTimeoutMs: 4000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 1500, idleTimeoutMs: 6000, maxConnections: 50 },
  // off here: a worker's queries would compete with the server's on PGlite's one connection
  webhooks: false,
  allowInsecureWebhooks: true,
  webhookConcurrency: 8,
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-serve-config-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify(ORBIT));
  await writeFile(join(dir, 'full.json'), JSON.stringify(FULL, null, 2));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Serving {
  /** `http://127.0.0.2:PORT`, the server's root. */
  root: string;
  mount: string;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<number>;
}

/** Starts `ipokit serve` with `args`, which must choose the port (`--port 0`, or a config file's `port: 0`): no test binds a fixed one. */
async function startServe(args: string[], io: Partial<CliIo> = {}): Promise<Serving> {
  const controller = new AbortController();
  const out = capture({ cwd: dir, ...io, signal: controller.signal });
  const done = runCli(['serve', ...args], out.io);
  const banner = await Promise.race([
    out.waitForStdout(/ at (http:\/\/[^\s/]+)(\/\S*)\n/),
    done.then((code) => {
      throw new Error(`serve exited with ${code}: ${out.stderr()}`);
    }),
  ]);
  return {
    root: banner[1]!.replace('localhost', '127.0.0.1'),
    mount: banner[2]!,
    stdout: out.stdout,
    stderr: out.stderr,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

function keysOf(stdout: string): Record<'free' | 'paid' | 'pro', string> {
  const key = (plan: string) => new RegExp(`^  ${plan} +(ipk_[A-Za-z0-9]{32})`, 'm').exec(stdout)?.[1] ?? '';
  return { free: key('free'), paid: key('paid'), pro: key('pro') };
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; ms: number }> {
  const start = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Express's and Koa's own 404 pages are not JSON.
  }
  return { status: res.status, body, headers: res.headers, ms: performance.now() - start };
}

/** Keyless lists with X-Forwarded-For: the statuses, for one forwarded address after another. */
async function keylessStatuses(url: string, forwarded: string[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const address of forwarded) statuses.push((await get(url, { 'x-forwarded-for': `203.0.113.250, ${address}` })).status);
  return statuses;
}

describe('ipokit serve --config with every setting', () => {
  let db: CliTestDatabase;
  beforeAll(async () => {
    db = await openCliTestDatabase('serve_config');
  });
  afterAll(async () => {
    await db.close();
  });

  it('applies each one, as the answers show', async () => {
    const faulty = faultyClient(db.client);
    const io: Partial<CliIo> = { env: { IPOKIT_SCHEMA: db.schema }, openDatabase: async () => ({ client: faulty.client, close: async () => undefined }) };
    const serving = await startServe(['--config', 'full.json', '--dataset', 'orbit.json', '--demo-keys'], io);
    try {
      const stdout = serving.stdout();
      // framework, host, port 0 (any free one), mount, connection limits, log, proxies
      expect(stdout).toMatch(/^ipokit serving orbit\.json from PostgreSQL .* with Koa at http:\/\/127\.0\.0\.2:\d+\/api\/v1\/ipos\n/);
      expect(serving.mount).toBe('/api/v1/ipos');
      expect(stdout.split('\n')[1]).toBe('Connections: at most 50, each closed after 6 s without traffic; timeouts: headers 4 s, request 5 s, keep-alive 1500 ms.');
      expect(stdout).toContain('Access log: a JSON object per request on stdout; client addresses from X-Forwarded-For, 1 proxy in front.');
      expect(stdout).toContain('OpenAPI document: off (--openapi turns it on)');
      // webhooks false
      expect(stdout).toContain("\nWebhooks: off (--webhooks turns them on): run 'ipokit worker' to deliver them.\n");
      expect(stdout).toContain('API keys (shown once; limits: free 2 requests/min, GMP 1/min; paid 4 requests/min, GMP 1/min; pro 40 requests/min + 100/IST day, GMP 20/min):');
      const keys = keysOf(stdout);
      const api = `${serving.root}/api/v1/ipos`;

      // the mount path: served under it, not under /ipos
      const paid = await get(`${api}?status=open&limit=50`, { 'x-api-key': keys.paid });
      expect(paid.status).toBe(200);
      // maxListLimit.paid 7; limits.paid.perMinute 4
      expect((paid.body as unknown as ListResponse).meta).toMatchObject({ count: 1, limit: 7 });
      expect(paid.headers.get('ratelimit-limit')).toBe('4');
      // rateLimitHeaders both: the draft-11 fields too
      expect(paid.headers.get('ratelimit-policy')).toBe('"minute";q=4;w=60');
      expect((await get(`${serving.root}/ipos?status=open`, { 'x-api-key': keys.paid })).status).toBe(404);

      // openapi false: a 404 that says how to turn it on
      const doc = await get(`${api}/-/openapi.json`);
      expect(doc.status).toBe(404);
      expect(doc.body.detail).toContain('set the router option openapi: true');

      // limits.free.perMinute 2
      const free = [];
      for (let i = 0; i < 3; i++) free.push((await get(`${api}?status=open`, { 'x-api-key': keys.free })).status);
      expect(free).toEqual([200, 200, 429]);

      // trustProxy 1 with limits.keyless.perMinute 2: one window per forwarded address
      expect(await keylessStatuses(`${api}?status=open`, ['198.51.100.1', '198.51.100.1', '198.51.100.1', '198.51.100.2'])).toEqual([200, 200, 429, 200]);

      // gmpPreviewEnds 2020-01-01: the series needs pro with the GMP add-on
      const preview = await get(`${api}/ORBIT/gmp?interval=weekly`, { 'x-api-key': keys.paid });
      expect([preview.status, preview.body.code]).toEqual([403, 'ERR:PLAN']);
      // maxGmpBuckets 10 (30 days of 5-minute buckets is 8,640), with pro's GMP window of 20
      const buckets = await get(`${api}/ORBIT/gmp?interval=5m`, { 'x-api-key': keys.pro });
      expect([buckets.status, buckets.body.code, buckets.headers.get('ratelimit-limit')]).toEqual([400, 'ERR:BADPARAM', '20']);
      // maxUrlLength 200
      expect((await get(`${api}?status=open&pad=${'x'.repeat(200)}`, { 'x-api-key': keys.pro })).status).toBe(414);

      // keyCacheTtlMs 0: a key revoked by another process is refused at once
      const doomed = await get(`${api}/ORBIT`, { 'x-api-key': keys.pro });
      expect(doomed.status).toBe(200);
      await db.client.query(`UPDATE "${db.schema}".api_keys SET revoked_at = $1 WHERE prefix = $2`, [new Date().toISOString(), keys.pro.slice(0, 12)]);
      expect((await get(`${api}/ORBIT`, { 'x-api-key': keys.pro })).status).toBe(401);

      // limiterFailOpen true: the limiter failing admits the request
      faulty.set({ kind: 'fail', pattern: /rate_limit_hit/ });
      const admitted = await get(`${api}/ORBIT`, { 'x-api-key': keys.paid });
      expect(admitted.status).toBe(200);
      expect(admitted.headers.get('ratelimit-limit')).toBeNull();

      // storeTimeoutMs 300: a query that takes 2 s answers 503 after 300 ms
      // (an IPO not asked for before: /ORBIT is in the data cache by now)
      faulty.set({ kind: 'delay', pattern: /\.ipos\b/, ms: 2000 });
      const slow = await get(`${api}/orbit-aerospace-ipo`, { 'x-api-key': keys.paid });
      expect([slow.status, slow.body.code]).toEqual([503, 'ERR:UNAVAILABLE']);
      expect(slow.ms).toBeLessThan(1500);
      faulty.set({ kind: 'none' });
      await new Promise((resolve) => setTimeout(resolve, 2100));

      // log json: one object per request, the forwarded address, no key
      const entries = serving
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(entries.length).toBeGreaterThanOrEqual(16);
      expect(entries).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/ipos?status=open', status: 429, address: '198.51.100.1', account: null }));
      expect(entries).toContainEqual(expect.objectContaining({ path: '/api/v1/ipos/ORBIT/gmp?interval=5m', status: 400, account: expect.stringMatching(/^acct_/) }));
      for (const key of Object.values(keys)) expect(entries.map((e) => JSON.stringify(e)).join('\n')).not.toContain(key);
    } finally {
      faulty.set({ kind: 'none' });
      expect(await serving.stop()).toBe(0);
    }
    // drainMs 700
    expect(serving.stderr()).toContain('Stopping: finishing the requests under way (connections still open after 700 ms are cut).');
  }, 120_000);

  it('lets a flag override the file: --openapi, Express, --webhooks, and trust proxy there too', async () => {
    const serving = await startServe(['--config', 'full.json', '--dataset', 'orbit.json', '--openapi', '--framework', 'express', '--host', '127.0.0.1', '--log', 'off', '--webhooks']);
    try {
      expect(serving.stdout()).toMatch(/ with Express at http:\/\/localhost:\d+\/api\/v1\/ipos\n/);
      // allowInsecureWebhooks and webhookConcurrency, from the file
      expect(serving.stdout()).toContain('\nWebhooks: delivered from this process, up to 8 attempts at once, to http: and https: URLs (--allow-insecure-webhooks).\n');
      const api = `${serving.root}/api/v1/ipos`;
      const doc = await get(`${api}/-/openapi.json`);
      expect(doc.status).toBe(200);
      expect(doc.body.servers).toEqual([expect.objectContaining({ url: '/api/v1/ipos' })]);
      expect(await keylessStatuses(`${api}?status=open`, ['198.51.100.7', '198.51.100.7', '198.51.100.7', '198.51.100.8'])).toEqual([200, 200, 429, 200]);
      expect(serving.stdout()).not.toMatch(/^\{/m);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  }, 60_000);

  it.each(['express', 'koa'])('--mount / serves the API at the root (%s), the health checks still first', async (framework) => {
    const serving = await startServe(['--dataset', 'orbit.json', '--port', '0', '--mount', '/', '--framework', framework, '--log', 'off']);
    try {
      expect(serving.mount).toBe('/');
      const keys = keysOf(serving.stdout());
      const curl = /^ {2}curl -s '([^']+)'/m.exec(serving.stdout())![1]!;
      expect(curl).toMatch(/^http:\/\/localhost:\d+\/\?status=listed&limit=5$/);
      expect((await get(`${serving.root}/?status=open`, { 'x-api-key': keys.paid })).status).toBe(200);
      expect((await get(`${serving.root}/ORBIT`, { 'x-api-key': keys.paid })).body).toMatchObject({ ipo: { symbol: 'ORBIT' } });
      expect((await get(`${serving.root}/healthz`)).body).toEqual({ status: 'ok' });
      expect((await get(`${serving.root}/-/openapi.json`)).body.servers).toEqual([expect.objectContaining({ url: '/' })]);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  }, 60_000);

  it('without trust proxy, X-Forwarded-For is ignored: every keyless request shares the connection address', async () => {
    const serving = await startServe(['--dataset', 'orbit.json', '--port', '0', '--limit', 'keyless.perMinute=2', '--log', 'off']);
    try {
      expect(await keylessStatuses(`${serving.root}/ipos?status=open`, ['198.51.100.1', '198.51.100.2', '198.51.100.3'])).toEqual([200, 200, 429]);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  }, 60_000);
});
