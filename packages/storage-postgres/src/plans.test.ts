import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoStatus, Store } from '@ipokit/core';
import type { ListQuery } from '@ipokit/core/backend';
import type { PostgresClient } from './client.js';
import { postgresStore } from './postgres-store.js';
import { syntheticIpo } from './synthetic.js';
import { interceptQueries, openTestDatabase, type TestDatabase } from './test-database.js';

// A regression guard for the indexes: on 20,000 IPOs the page of every list query (with
// and without filters, deep, with includeGmp) is read through an index, never by scanning
// and sorting the whole table; so is the count, unless a filter (type, source) that no
// index holds makes a scan the cheaper way to count thousands of rows.
// (npm run bench:postgres shows the same at 100k IPOs, with timings.)

const TOTAL = 20_000;
const TODAY = '2026-11-22';
let db: TestDatabase;
let store: Store;
let last: { text: string; params: unknown[] } = { text: '', params: [] };

beforeAll(async () => {
  db = await openTestDatabase('plans');
  await db.emptyStore();
  const recording: PostgresClient = interceptQueries(db.client, (text, params = [], next) => {
    last = { text, params };
    return next(text, params);
  });
  store = postgresStore({ client: recording, schema: db.schema });
  for (let i = 0; i < TOTAL; i += 5_000) {
    const ipos = Array.from({ length: 5_000 }, (_, k) => syntheticIpo(i + k, TOTAL, TODAY));
    expect(await store.writeDataset({ ipos, snapshots: [] })).toEqual([]);
  }
  // As autovacuum would have by then: statistics, and a visibility map for index-only
  // scans. VACUUM cannot mark a page all-visible while another session (a test file running
  // beside this one) holds an older snapshot; without the map the planner rightly counts
  // 18k rows by a scan. So vacuum until every page is marked (or give up after 60 s).
  for (let attempt = 0; ; attempt++) {
    await db.client.query(`VACUUM ANALYZE "${db.schema}".ipos`);
    const { rows } = await db.client.query(
      `SELECT relpages, relallvisible FROM pg_class WHERE oid = '"${db.schema}".ipos'::regclass`,
      [],
    );
    const row = rows[0] as { relpages: number; relallvisible: number };
    if (row.relallvisible >= row.relpages || attempt >= 120) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 180_000);
afterAll(() => db.close());

const BASE: Omit<ListQuery, 'status'> = { today: TODAY, types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 100, gmpAt: null };
const VARIANTS: Array<[string, Partial<ListQuery>]> = [
  ['page 1', {}],
  ['a deep page', { offset: 5_000 }],
  ['includeGmp', { gmpAt: Date.UTC(2026, 10, 22) }],
  ['type and source', { types: ['SME'], source: 'nse' }],
];

describe(`list query plans on ${TOTAL} IPOs (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  for (const status of ['announced', 'upcoming', 'open', 'closed', 'listed'] as IpoStatus[]) {
    it(`${status}: no full scan of the IPO table`, async () => {
      for (const [name, variant] of VARIANTS) {
        await store.listIpos({ ...BASE, status, ...variant });
        const plan = (await db.client.query(`EXPLAIN ${last.text}`, last.params)).rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n');
        const filtered = variant.types !== undefined;
        for (const scan of fullScans(plan)) {
          const inPage = scan.ancestors.includes('Limit');
          expect(inPage || !filtered, `${status}, ${name}: a full scan ${inPage ? 'for the page' : 'to count'}:\n${plan}`).toBe(false);
        }
      }
    });
  }
});

/** Every full scan of the IPO table in a text plan, with the node types above it. */
function fullScans(plan: string): Array<{ ancestors: string[] }> {
  const lines = plan.split('\n');
  const depth = (line: string): number => line.search(/\S/) - (line.trimStart().startsWith('->') ? 0 : 2);
  const out: Array<{ ancestors: string[] }> = [];
  lines.forEach((line, i) => {
    if (!/Seq Scan on ipos\b/.test(line)) return;
    const ancestors: string[] = [];
    let d = depth(line);
    for (let j = i - 1; j >= 0; j--) {
      const above = lines[j]!;
      if (!/^\s*(->\s*)?[A-Z]/.test(above) || depth(above) >= d) continue;
      d = depth(above);
      ancestors.push(above.replace(/^\s*(->\s*)?/, '').split(/\s{2}|\s\(/)[0]!);
    }
    out.push({ ancestors });
  });
  return out;
}
