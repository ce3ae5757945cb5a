import { afterAll, beforeAll } from 'vitest';
import { testStore } from '@ipokit/core/testing';
import { openTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase('store');
});
afterAll(() => db.close());

testStore({ name: `postgresStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, createStore: () => db.emptyStore(), destroyStore: (s) => s.close?.() });
