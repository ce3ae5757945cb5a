import { testStore, testWebhookStore, testWebhookWorker } from '@ipokit/core/testing';
import { memoryStore } from './memory-store.js';

testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (store) => store.close?.() });

// Webhooks: endpoints, events and deliveries (a capability of their own), and the worker on them.
testWebhookStore({ name: 'memoryStore webhooks', createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
testWebhookWorker({ name: 'startWebhookWorker on memoryStore', createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
