import { testAccountRouter } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { fetchAccountTarget } from './test-target.js';

// The account router's suite on the fetch adapter under Hono (docs/spec.md#account-router).
testAccountRouter({ target: fetchAccountTarget, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
