import { afterAll, beforeAll } from 'vitest';
import { testHttp } from '@ipokit/core/testing';
import { EXPRESS_VERSIONS, expressTarget } from '../../express/src/test-target.js';
import { koaTargets } from '../../koa/src/test-target.js';
import { openTestDatabase, type TestDatabase } from './test-database.js';

// The whole HTTP suite on the PostgreSQL store, through Express 5 and Koa 3: the same
// status, bytes and headers as on the memory store.
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('http');
});
afterAll(() => db.close());

for (const target of [expressTarget(EXPRESS_VERSIONS[0]!), ...koaTargets('koa 3')]) {
  testHttp({
    target: { ...target, name: `${target.name} on postgresStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})` },
    createStore: () => db.emptyStore(),
    destroyStore: (s) => s.close?.(),
  });
}
