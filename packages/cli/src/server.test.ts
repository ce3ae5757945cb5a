import { describe, expect, it } from 'vitest';
import type { GmpSeries, IpoResponse, ListResponse } from '@ipokit/core';
import { startServer, type ServerOptions } from './server.js';
import { openCliTestDatabase } from './test-helpers.js';

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
const setups: Array<{ name: string; framework: 'express' | 'koa'; database?: true }> = [
  { name: 'express', framework: 'express' },
  { name: 'koa', framework: 'koa' },
  { name: 'express on PostgreSQL', framework: 'express', database: true },
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
