import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GmpSeries, IpoResponse, ListResponse } from '@ipokit/core';
import type { ConnectionLimits } from './connection-limits.js';
import { startServer, type RunningServer, type ServerOptions } from './server.js';
import { openCliTestDatabase } from './test-helpers.js';
import { connectRaw, until, within } from './test-sockets.js';

const NOW = Date.UTC(2026, 10, 23, 6, 30);

/** Turns a printed `curl -s 'URL' -H 'x-api-key: KEY'` line into a fetch. */
async function runCurl(line: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const m = /^curl -s '([^']+)' -H 'x-api-key: ([^']+)'$/.exec(line);
  if (m === null) throw new Error(`not a curl line the demo prints: ${line}`);
  const res = await fetch(m[1]!.replace('localhost', '127.0.0.1'), { headers: { 'x-api-key': m[2]! } });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

// What `npm start` serves: the generated dataset and a key per plan, from memory with either
// framework, and from PostgreSQL (PGlite here, the real server when DATABASE_URL is set).
const setups: Array<{ name: string; framework: 'node' | 'express' | 'koa'; database?: true }> = [
  { name: 'node', framework: 'node' },
  { name: 'express', framework: 'express' },
  { name: 'koa', framework: 'koa' },
  { name: 'node on PostgreSQL', framework: 'node', database: true },
];

describe.each(setups)('the demo on $name', ({ framework, database }) => {
  it('prints three curl lines that answer as the contract says', async () => {
    const db = database ? await openCliTestDatabase('server') : undefined;
    const options: ServerOptions = {
      port: 0,
      now: () => new Date(NOW),
      framework,
      demoKeys: true,
      seedEmptyDatabase: true,
      ...(db === undefined ? {} : { database: { client: db.client, schema: db.schema, close: async () => undefined } }),
    };
    const demo = await startServer(options);
    try {
      expect(demo.source).toBe('generated');
      expect(demo.ipoCount).toBeGreaterThanOrEqual(300);
      expect(demo.curls).toHaveLength(3);
      const [list, one, series] = await Promise.all(demo.curls.map(runCurl));
      expect(list!.status).toBe(200);
      const listBody = list!.body as ListResponse;
      expect(listBody.meta).toMatchObject({ page: 1, limit: 5, countOnPage: 5 });
      expect(listBody.meta.count).toBeGreaterThan(50);
      expect(listBody.ipos.every((ipo) => ipo.status === 'listed')).toBe(true);
      expect(list!.headers.get('ratelimit-limit')).toBe('6');

      expect(one!.status).toBe(200);
      const ipo = (one!.body as IpoResponse).ipo;
      expect(ipo.status).toBe('open');
      expect(ipo.gmp?.sources.length).toBeGreaterThanOrEqual(3);

      expect(series!.status).toBe(200);
      const s = series!.body as GmpSeries;
      expect(s).toMatchObject({ ipoId: ipo.id, interval: 'hourly', field: 'median' });
      expect(s.series.length).toBeGreaterThan(10);

      // the free key is limited to one IPO per page; the root route belongs to the app
      const free = await fetch(`${demo.url.replace('localhost', '127.0.0.1')}/ipos?status=listed&limit=5`, { headers: { 'x-api-key': demo.keys!.free } });
      expect(((await free.json()) as ListResponse).meta.limit).toBe(1);
      expect((await fetch(demo.url.replace('localhost', '127.0.0.1'))).status).toBe(200);
    } finally {
      await demo.close();
      await db?.close();
    }
  }, 120_000);

  it('serves the account dashboard for the demo accounts behind its one-line sign-in', async () => {
    const db = database ? await openCliTestDatabase('server_dash') : undefined;
    const demo = await startServer({
      port: 0,
      now: () => new Date(NOW),
      framework,
      demoKeys: true,
      seedEmptyDatabase: true,
      ...(db === undefined ? {} : { database: { client: db.client, schema: db.schema, close: async () => undefined } }),
    });
    try {
      const base = demo.url.replace('localhost', '127.0.0.1');
      expect(demo.dashboardUrl).toBe(`${demo.url}/demo/sign-in`);
      // not signed in: the page loads, its data does not
      expect((await fetch(`${base}/account/-/dashboard/`)).status).toBe(200);
      expect((await fetch(`${base}/account/`)).status).toBe(401);
      for (const [query, plan] of [['', 'pro'], ['?plan=free', 'free'], ['?plan=paid', 'paid']] as const) {
        const signIn = await fetch(`${base}/demo/sign-in${query}`, { redirect: 'manual' });
        expect(signIn.status).toBe(303);
        expect(signIn.headers.get('location')).toBe('/account/-/dashboard/');
        const cookie = signIn.headers.get('set-cookie')!;
        expect(cookie).toMatch(/HttpOnly/);
        const me = await fetch(`${base}/account/`, { headers: { cookie: cookie.split(';')[0]! } });
        const body = (await me.json()) as { account: { plan: string; name: string }; keys: Array<{ label: string }> };
        expect(body.account).toMatchObject({ plan, name: `ipokit demo (${plan})` });
        expect(body.keys.map((k) => k.label)).toEqual([`demo ${plan} key`]);
      }
      expect((await fetch(`${base}/demo/sign-in?plan=admin`, { redirect: 'manual' })).status).toBe(400);
      // a forged cookie signs in nobody
      expect((await fetch(`${base}/account/`, { headers: { cookie: 'ipokit_demo_plan=acct_other' } })).status).toBe(401);
    } finally {
      await demo.close();
      await db?.close();
    }
  }, 120_000);
});

describe('startServer: the OpenAPI document', () => {
  it('is served by default at {mount}/-/openapi.json, and off with router.openapi false (the 404 says how to turn it on)', async () => {
    const on = await startServer({ port: 0, now: () => new Date(NOW) });
    try {
      const res = await fetch(`${on.url.replace('localhost', '127.0.0.1')}/ipos/-/openapi.json`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { servers: unknown }).servers).toEqual([expect.objectContaining({ url: '/ipos' })]);
    } finally {
      await on.close();
    }
    const off = await startServer({ port: 0, now: () => new Date(NOW), framework: 'koa', router: { openapi: false } });
    try {
      const res = await fetch(`${off.url.replace('localhost', '127.0.0.1')}/ipos/-/openapi.json`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'ERR:NOTFOUND', detail: expect.stringContaining('set the router option openapi: true') });
    } finally {
      await off.close();
    }
  }, 60_000);
});

describe('startServer on PostgreSQL: the demo accounts', () => {
  it('are created once: a restart makes a new key per plan for the same accounts and revokes the demo keys made before', async () => {
    const db = await openCliTestDatabase('server_demo_accounts');
    const database = { client: db.client, schema: db.schema, close: async () => undefined };
    const accounts = async () =>
      (await db.client.query(`SELECT id, name, plan, gmp_addon FROM "${db.schema}".accounts ORDER BY name`)).rows as Array<{ id: string; name: string; plan: string; gmp_addon: boolean }>;
    const activeKeys = async () =>
      (await db.client.query(`SELECT account_id, count(*)::int AS n FROM "${db.schema}".api_keys WHERE revoked_at IS NULL GROUP BY account_id ORDER BY account_id`)).rows;
    try {
      const first = await startServer({ port: 0, database, demoKeys: true, seedEmptyDatabase: true, now: () => new Date(NOW) });
      const firstKeys = first.keys!;
      await first.close();
      const created = await accounts();
      const second = await startServer({ port: 0, database, demoKeys: true, seedEmptyDatabase: true, now: () => new Date(NOW) });
      try {
        expect(await accounts()).toHaveLength(3);
        expect(created.map((a) => [a.name, a.plan, a.gmp_addon])).toEqual([
          ['ipokit demo (free)', 'free', false],
          ['ipokit demo (paid)', 'paid', false],
          ['ipokit demo (pro)', 'pro', true],
        ]);
        expect(await accounts()).toEqual(created);
        expect(await activeKeys()).toEqual(created.map((a) => ({ account_id: a.id, n: 1 })).sort((a, b) => (a.account_id < b.account_id ? -1 : 1)));
        const base = second.url.replace('localhost', '127.0.0.1');
        for (const plan of ['free', 'paid', 'pro'] as const) {
          expect(second.keys![plan]).not.toBe(firstKeys[plan]);
          expect((await fetch(`${base}/ipos?status=listed`, { headers: { 'x-api-key': second.keys![plan] } })).status).toBe(200);
          expect((await fetch(`${base}/ipos?status=listed`, { headers: { 'x-api-key': firstKeys[plan] } })).status).toBe(401);
        }
      } finally {
        await second.close();
      }
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('startServer on PostgreSQL: demo accounts changed since', () => {
  it('puts a changed plan back, keeps keys the demo did not make, and says so when the free plan has no room for a new key', async () => {
    const db = await openCliTestDatabase('server_demo_changed');
    const database = { client: db.client, schema: db.schema, close: async () => undefined };
    try {
      const first = await startServer({ port: 0, database, demoKeys: true, seedEmptyDatabase: true, now: () => new Date(NOW) });
      await first.close();
      const idOf = async (plan: string) =>
        ((await db.client.query(`SELECT id FROM "${db.schema}".accounts WHERE name = $1`, [`ipokit demo (${plan})`])).rows[0] as { id: string }).id;
      const pro = await idOf('pro');
      const free = await idOf('free');
      await db.client.query(`UPDATE "${db.schema}".accounts SET plan = 'paid', gmp_addon = false WHERE id = $1`, [pro]);
      // a key of the operator's own on the pro demo account stays active
      await db.client.query(
        `INSERT INTO "${db.schema}".api_keys (id, account_id, hash, prefix, label, created_at) VALUES ('key_mine', $1, 'x', 'ipk_mine', 'mine', '2026-01-01T00:00:00.000Z')`,
        [pro],
      );
      const second = await startServer({ port: 0, database, demoKeys: true, now: () => new Date(NOW) });
      await second.close();
      expect((await db.client.query(`SELECT plan, gmp_addon FROM "${db.schema}".accounts WHERE id = $1`, [pro])).rows).toEqual([{ plan: 'pro', gmp_addon: true }]);
      expect((await db.client.query(`SELECT revoked_at FROM "${db.schema}".api_keys WHERE id = 'key_mine'`)).rows).toEqual([{ revoked_at: null }]);

      // the free demo account holding a key of someone else's: no room for the demo's
      await db.client.query(`UPDATE "${db.schema}".api_keys SET label = 'mine' WHERE account_id = $1 AND revoked_at IS NULL`, [free]);
      await expect(startServer({ port: 0, database, demoKeys: true, now: () => new Date(NOW) })).rejects.toThrow(
        `The demo account "ipokit demo (free)" (${free}) holds an active key the demo did not make, and its plan allows one: revoke it ('ipokit keys list --account ${free}', then 'ipokit keys revoke ID').`,
      );
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('startServer on PostgreSQL', () => {
  it('serves what is stored, creates no key unless asked, and imports nothing into a database that holds IPOs', async () => {
    const db = await openCliTestDatabase('server_stored');
    const database = { client: db.client, schema: db.schema, close: async () => undefined };
    try {
      const empty = await startServer({ port: 0, database });
      expect(empty).toMatchObject({ source: 'stored', ipoCount: 0, keys: null });
      expect(empty.curls).toHaveLength(1);
      expect(empty.curls[0]).toMatch(/ -H "x-api-key: \$KEY"$/);
      await empty.close();
      const accounts = await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".accounts`);
      expect(accounts.rows).toEqual([{ n: 0 }]);

      const seeded = await startServer({ port: 0, database, seedEmptyDatabase: true, demoKeys: true, now: () => new Date(NOW) });
      expect(seeded.source).toBe('generated');
      const count = seeded.ipoCount;
      await seeded.close();
      const again = await startServer({ port: 0, database, seedEmptyDatabase: true, now: () => new Date(NOW) });
      expect(again).toMatchObject({ source: 'stored', ipoCount: count, keys: null });
      await again.close();
    } finally {
      await db.close();
    }
  }, 120_000);
});

// The connection limits, on real sockets: each test serves a one-IPO file (quick to load)
// with small limits, so that what the server closes it closes within a second or so.
describe('startServer connection limits', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ipokit-limits-'));
    file = join(dir, 'one.json');
    const ipo = { id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2026-11-24' };
    await writeFile(file, JSON.stringify({ ipos: [ipo] }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `test` against a server with these limits, and closes it whatever happens. */
  async function serving(connectionLimits: Partial<ConnectionLimits> | undefined, test: (port: number, running: RunningServer) => Promise<void>): Promise<void> {
    const running = await startServer({ port: 0, datasetFile: file, ...(connectionLimits === undefined ? {} : { connectionLimits }) });
    try {
      await test((running.server.address() as AddressInfo).port, running);
    } finally {
      running.server.closeAllConnections();
      await running.close();
    }
  }
  const connections = (server: Server) => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('has limits by default: 10 s for the headers, 30 s for the request, 5 s keep-alive, 30 s idle, at most 1000 connections', async () => {
    await serving(undefined, async (_port, { server }) => {
      expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout, idle: server.timeout }).toEqual({
        headers: 10_000,
        request: 30_000,
        keepAlive: 5_000,
        idle: 30_000,
      });
      expect(server.maxConnections).toBeGreaterThanOrEqual(1);
      expect(server.maxConnections).toBeLessThanOrEqual(1000);
    });
  });

  it('closes a connection that never sends a byte after idleTimeoutMs (with the header and request timeouts off)', async () => {
    await serving({ idleTimeoutMs: 300, headersTimeoutMs: 0, requestTimeoutMs: 0 }, async (port) => {
      const silent = await connectRaw(port);
      const ms = await within(silent.closed, 1500, 'the server closing a connection that sends nothing');
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(silent.received()).toBe('');
    });
  });

  it('answers 408 and closes a connection whose headers are not in within headersTimeoutMs, even one that trickles a byte at a time', async () => {
    await serving({ headersTimeoutMs: 500, requestTimeoutMs: 1000, idleTimeoutMs: 300 }, async (port) => {
      const slow = await connectRaw(port);
      slow.socket.write('GET /ipos?sta');
      // a byte every 100 ms: the idle timeout never fires, the headers timeout must
      const trickle = setInterval(() => slow.isClosed() || slow.socket.write('t'), 100);
      try {
        const ms = await within(slow.closed, 2000, 'the server closing a request line that never ends');
        expect(ms).toBeGreaterThanOrEqual(450);
        expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
      } finally {
        clearInterval(trickle);
      }
    });
  });

  it('refuses connections past maxConnections, keeps serving the open ones, and accepts again once idle ones are closed', async () => {
    await serving({ maxConnections: 2, idleTimeoutMs: 1000 }, async (port, { server }) => {
      const a = await connectRaw(port);
      const b = await connectRaw(port);
      await until(async () => (await connections(server)) === 2, 1000, 'the server accepting two connections');
      const extra = await connectRaw(port).catch(() => null);
      if (extra !== null) {
        await within(extra.closed, 500, 'the server closing a connection past maxConnections');
        expect(extra.received()).toBe('');
      }
      expect(await a.get('/')).toBe(200);
      expect(await a.get('/')).toBe(200);
      await within(Promise.all([a.closed, b.closed]), 2500, 'the server closing the idle connections');
      const again = await connectRaw(port);
      expect(await again.get('/')).toBe(200);
      again.socket.destroy();
    });
  });

  it('serves several requests on one keep-alive connection, and closes it keepAliveTimeoutMs after the last', async () => {
    await serving({ keepAliveTimeoutMs: 200, idleTimeoutMs: 5000 }, async (port) => {
      const conn = await connectRaw(port);
      expect(await conn.get('/')).toBe(200);
      expect(await conn.get('/')).toBe(200);
      const last = Date.now();
      // Node waits a second more than the keep-alive timeout it advertises, not the idle timeout
      await within(conn.closed, 2500, 'the server closing the keep-alive connection');
      expect(Date.now() - last).toBeGreaterThanOrEqual(150);
    });
  });

  it('refuses limits that contradict each other instead of serving', async () => {
    const started = startServer({ port: 0, datasetFile: file, connectionLimits: { headersTimeoutMs: 2000, requestTimeoutMs: 1000 } });
    const outcome = await started.then(
      async (running) => {
        await running.close();
        return 'served';
      },
      (err: unknown) => err,
    );
    expect(outcome).toBeInstanceOf(RangeError);
    expect((outcome as Error).message).toMatch(/^headersTimeoutMs \(2000\) must not exceed requestTimeoutMs \(1000\)/);
  });
});
