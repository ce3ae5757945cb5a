import { testStore } from '@ipokit/core/testing';
import { memoryStore } from './memory-store.js';

testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (store) => store.close?.() });
