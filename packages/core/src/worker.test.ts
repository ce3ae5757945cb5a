import { describe, expect, it } from 'vitest';
import { referenceStore } from './testing/reference-store.js';
import type { WebhookStore } from './types.js';
import { startWebhookWorker } from './worker.js';

// The worker's own behaviour on a store that fails (the suites in testing/ cover delivery).

describe('startWebhookWorker on a failing store', () => {
  it('looks again every pollIntervalMs while the store fails, not in a tight loop (the database down at start-up, or across a midnight)', async () => {
    const store = referenceStore();
    let calls = 0;
    const failing: WebhookStore = {
      ...store,
      recordStatusChanges: async () => {
        calls++;
        throw new Error('the database is down');
      },
      claimDeliveries: async () => {
        calls++;
        throw new Error('the database is down');
      },
    };
    const errors: unknown[] = [];
    const worker = startWebhookWorker(failing, { pollIntervalMs: 100, onError: (err) => errors.push(err) });
    await new Promise((resolve) => setTimeout(resolve, 550));
    await worker.stop();
    // About one look per 100 ms: 5 or 6, never hundreds.
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(10);
    expect(errors.length).toBe(calls);
  });
});
