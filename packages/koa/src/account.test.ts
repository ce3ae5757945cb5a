import { testAccountRouter } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { koaAccountTargets } from './test-target.js';

// The account router's suite on Koa 2 and 3 (docs/spec.md#account-router).
for (const target of koaAccountTargets()) {
  testAccountRouter({ target, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}
