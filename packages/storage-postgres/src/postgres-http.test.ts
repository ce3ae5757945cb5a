import { afterAll, beforeAll } from 'vitest';
import { testAccountRouter, testHttp } from '@ipokit/testing';
import { EXPRESS_VERSIONS, expressAccountTarget, expressTarget } from '../../express/src/test-target.js';
import { fetchAccountTarget } from '../../fetch/src/test-target.js';
import { koaAccountTargets, koaTargets } from '../../koa/src/test-target.js';
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

// The account router's suite on the PostgreSQL store, through Express 5, Koa 3 and the fetch adapter.
for (const target of [expressAccountTarget(EXPRESS_VERSIONS[0]!), koaAccountTargets()[0]!, fetchAccountTarget]) {
  testAccountRouter({
    target: { ...target, name: `${target.name} on postgresStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})` },
    createStore: () => db.emptyStore(),
    destroyStore: (s) => s.close?.(),
  });
}
