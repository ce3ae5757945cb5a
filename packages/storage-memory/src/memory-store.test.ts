import { afterAll } from 'vitest';
import { testStore, testWebhookStore, testWebhookWorker } from '@ipokit/testing';
import { nodeWebhookTransport } from '@ipokit/webhooks/node';
import { memoryStore } from './memory-store.js';

testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (store) => store.close?.() });

// Webhooks: endpoints, events and deliveries (a capability of their own), and the worker on
// them, sending through fetch (the default) and through Node's own transport.
testWebhookStore({ name: 'memoryStore webhooks', createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
testWebhookWorker({ name: 'startWebhookWorker on memoryStore', createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
const transport = nodeWebhookTransport({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });
afterAll(() => transport.close());
testWebhookWorker({ name: 'startWebhookWorker on memoryStore, nodeWebhookTransport', createStore: () => memoryStore(), destroyStore: (s) => s.close?.(), transport });
