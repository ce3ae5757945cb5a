import { testStore } from './store-suite.js';
import { testWebhookStore } from './webhook-suite.js';
import { testWebhookWorker } from './worker-suite.js';
import { referenceStore } from './reference-store.js';

// The oracle must pass its own suite: a check that fails here is a bug in the suite.
testStore({ name: 'referenceStore', createStore: () => referenceStore(), destroyStore: (store) => store.close?.() });
testWebhookStore({ name: 'referenceStore webhooks', createStore: () => referenceStore() });
testWebhookWorker({ name: 'startWebhookWorker on referenceStore', createStore: () => referenceStore() });
