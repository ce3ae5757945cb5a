import { describe, expect, it } from 'vitest';
import type { GmpSeries, IpoResponse, ListResponse } from '@ipokit/core';
import { startDemo } from './server.js';

const NOW = Date.UTC(2026, 10, 23, 6, 30);

/** Turns a printed `curl -s 'URL' -H 'x-api-key: KEY'` line into a fetch. */
async function runCurl(line: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const m = /^curl -s '([^']+)' -H 'x-api-key: ([^']+)'$/.exec(line);
  if (m === null) throw new Error(`not a curl line the demo prints: ${line}`);
  const res = await fetch(m[1]!, { headers: { 'x-api-key': m[2]! } });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

// On PostgreSQL only with a server to run on (CI sets DATABASE_URL); the store itself is
// tested on PGlite everywhere.
const url = process.env.DATABASE_URL;
const setups = [
  { name: 'express', framework: 'express' as const },
  { name: 'koa', framework: 'koa' as const },
  ...(url ? [{ name: 'express on PostgreSQL', framework: 'express' as const, databaseUrl: url, schema: `ipokit_demo_test_${process.pid}` }] : []),
];

describe.each(setups)('the demo on $name', ({ name: _, ...setup }) => {
  it('prints three curl lines that answer as the contract says', async () => {
    const demo = await startDemo({ port: 0, now: () => new Date(NOW), ...setup });
    try {
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
      const free = await fetch(`${demo.url}/ipos?status=listed&limit=5`, { headers: { 'x-api-key': demo.keys.free } });
      expect(((await free.json()) as ListResponse).meta.limit).toBe(1);
      expect((await fetch(demo.url)).status).toBe(200);
    } finally {
      await demo.close();
      if ('schema' in setup) {
        const pg = (await import('pg')).default;
        const pool = new pg.Pool({ connectionString: setup.databaseUrl });
        await pool.query(`DROP SCHEMA "${setup.schema}" CASCADE`);
        await pool.end();
      }
    }
  });
});
