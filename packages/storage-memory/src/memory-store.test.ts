import { testStore, testWebhookStore } from '@ipokit/core/testing';
import { memoryStore } from './memory-store.js';

testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (store) => store.close?.() });

// Webhook endpoints (a capability of their own).
testWebhookStore({ name: 'memoryStore webhooks', createStore: () => memoryStore(), destroyStore: (s) => (s as { close?: () => Promise<void> }).close?.() });
