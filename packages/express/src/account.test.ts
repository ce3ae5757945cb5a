import { testAccountRouter } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressAccountTarget } from './test-target.js';

// The account router's suite on Express 4 and 5 (docs/spec.md#account-router).
for (const framework of EXPRESS_VERSIONS) {
  testAccountRouter({ target: expressAccountTarget(framework), createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
}

// The limiter kept apart: the windows, and the usage, are the limiter option's.
testAccountRouter({
  target: { ...expressAccountTarget(EXPRESS_VERSIONS[0]!), name: 'express 5, limiter option' },
  createStore: () => memoryStore(),
  destroyStore: (s) => s.close?.(),
  createLimiter: () => memoryStore(),
  destroyLimiter: (l) => l.close?.(),
});
