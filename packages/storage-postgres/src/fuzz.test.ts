import { afterAll, beforeAll } from 'vitest';
import { fuzzHttp, REPORTED_BUGS, testFuzz } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressTarget } from '../../express/src/test-target.js';
import { koaTargets } from '../../koa/src/test-target.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// Hostile requests against Express 5 and Koa 3 on the PostgreSQL store (PGlite, or the
// server of DATABASE_URL): never a 5xx (the database is healthy), every answer as the
// contract says, and the same bytes as the memory store gives. One random seed per run
// of this file (it is in any failure); FUZZ_SEED replays one.
const EXPRESS_5 = expressTarget(EXPRESS_VERSIONS[0]!);

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('fuzz');
});
afterAll(() => db.close());

testFuzz({
  name: `postgresStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`,
  targets: [EXPRESS_5, ...koaTargets('koa 3')],
  createStore: () => db.emptyStore(),
  destroyStore: (s) => s.close?.(),
  reference: (seed, runs) => fuzzHttp({ target: EXPRESS_5, createStore: () => memoryStore(), runs, seed, knownBugs: REPORTED_BUGS }),
});
