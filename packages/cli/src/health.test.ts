import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '@ipokit/storage-memory';
import { healthChecks } from './health.js';
import { startServer, type RunningServer, type ServerOptions } from './server.js';
import { faultyClient } from './test-faults.js';
import { openCliTestDatabase } from './test-helpers.js';

// GET /healthz (the process serves: no store call) and GET /readyz (the store answers one
// cheap query within storeTimeoutMs) on the server of `ipokit serve`: at the root, outside
// the mount, with no key and no rate-limit window; from memory, and from PostgreSQL while
// it is up, failing, slow and closed.

const ORBIT = {
  ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2099-11-24' }],
};

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-health-'));
  file = join(dir, 'orbit.json');
  await writeFile(file, JSON.stringify(ORBIT));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function probe(running: RunningServer, path: string, method = 'GET'): Promise<{ status: number; body: string; type: string | null; cache: string | null }> {
  const res = await fetch(`${running.url.replace('localhost', '127.0.0.1')}${path}`, { method });
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type'), cache: res.headers.get('cache-control') };
}

const OK = { status: 200, body: '{"status":"ok"}', type: 'application/json; charset=utf-8', cache: 'no-store' };
const DOWN = { status: 503, body: '{"status":"unavailable"}', type: 'application/json; charset=utf-8', cache: 'no-store' };

describe.each(['node', 'express', 'koa'] as const)('health checks with %s', (framework) => {
  it('answer 200 from memory, HEAD too, need no key and count against no window', async () => {
    const errors: unknown[] = [];
    const running = await startServer({ port: 0, framework, datasetFile: file, router: { limits: { keyless: { perMinute: 1 } } }, onError: (e) => errors.push(e) });
    try {
      for (let i = 0; i < 5; i++) {
        expect(await probe(running, '/healthz')).toEqual(OK);
        expect(await probe(running, '/readyz')).toEqual(OK);
      }
      expect(await probe(running, '/readyz?verbose=1')).toEqual(OK);
      expect(await probe(running, '/healthz', 'HEAD')).toEqual({ ...OK, body: '' });
      // the keyless window (1 a minute) is still whole
      expect((await probe(running, '/ipos?status=open')).status).toBe(200);
      expect((await probe(running, '/ipos?status=open')).status).toBe(429);
      expect((await probe(running, '/healthz')).status).toBe(200);
      // they are not under the mount, nor answered for other methods
      expect((await probe(running, '/ipos/healthz')).status).toBe(429);
      expect((await probe(running, '/healthz', 'POST')).status).toBe(404);
      // the home route lists them
      expect(JSON.parse((await probe(running, '/')).body)).toMatchObject({ health: ['/healthz', '/readyz'], openapi: '/ipos/-/openapi.json' });
      expect(errors).toEqual([]);
    } finally {
      await running.close();
    }
  });
});

describe('health checks on PostgreSQL', () => {
  it('/readyz follows the database: 200 up, 503 failing or slower than storeTimeoutMs, 200 again; /healthz stays 200', async () => {
    const db = await openCliTestDatabase('health');
    const faulty = faultyClient(db.client);
    const errors: unknown[] = [];
    const options: ServerOptions = {
      port: 0,
      database: { client: faulty.client, schema: db.schema, close: async () => undefined },
      datasetFile: file,
      router: { storeTimeoutMs: 300 },
      onError: (e) => errors.push(e),
    };
    const running = await startServer(options);
    try {
      expect(await probe(running, '/readyz')).toEqual(OK);
      faulty.set({ kind: 'fail', pattern: /./ });
      expect(await probe(running, '/readyz')).toEqual(DOWN);
      expect(await probe(running, '/healthz')).toEqual(OK);
      expect(errors.length).toBe(1);
      faulty.set({ kind: 'delay', pattern: /./, ms: 1500 });
      const start = performance.now();
      // concurrent probes share one store call
      const answers = await Promise.all([probe(running, '/readyz'), probe(running, '/readyz'), probe(running, '/readyz')]);
      expect(answers).toEqual([DOWN, DOWN, DOWN]);
      expect(performance.now() - start).toBeLessThan(1200);
      expect(errors.length).toBe(2);
      expect(String(errors[1])).toContain('did not answer within 300 ms');
      faulty.set({ kind: 'none' });
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect(await probe(running, '/readyz')).toEqual(OK);
    } finally {
      faulty.set({ kind: 'none' });
      await running.close();
      await db.close();
    }
  }, 60_000);

  it('/readyz answers 503 once the database client is closed', async () => {
    const db = await openCliTestDatabase('health_closed');
    const running = await startServer({ port: 0, database: { client: db.client, schema: db.schema, close: async () => undefined }, datasetFile: file, onError: () => undefined });
    try {
      expect(await probe(running, '/readyz')).toEqual(OK);
      await db.close(); // PGlite closed, or the schema dropped and the pool ended
      expect(await probe(running, '/readyz')).toEqual(DOWN);
      expect(await probe(running, '/healthz')).toEqual(OK);
    } finally {
      await running.close();
    }
  }, 60_000);
});

describe('healthChecks', () => {
  it('is null for what is not a health check', () => {
    const health = healthChecks(memoryStore(), { timeoutMs: 100 });
    expect(health('GET', '/ipos')).toBeNull();
    expect(health('DELETE', '/readyz')).toBeNull();
    expect(health('GET', '/healthz/')).toBeNull();
  });
});
