/**
 * @ipokit/webhooks: the delivery runtime of webhook endpoints (docs/spec.md#webhooks).
 *
 * The core decides which events a write records and what a store keeps (`WebhookStore`);
 * this package delivers them: the worker that claims, signs and sends deliveries and records
 * their outcome, the transports (`fetch` everywhere; `@ipokit/webhooks/node` resolves names
 * itself and reaches only the public internet, and is the worker's default on Node), and the
 * in-memory outbox a store in one process keeps its endpoints, events and deliveries in.
 * `npm run api` records this list in api/webhooks.api.md.
 */
export { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from './worker.js';
export { fetchTransport, type WebhookRequest, type WebhookTransport } from './delivery.js';
export { MemoryOutbox } from './outbox.js';
