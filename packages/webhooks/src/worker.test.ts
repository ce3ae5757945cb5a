import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeIpo } from '@ipokit/testing';
import { referenceStore } from '@ipokit/testing';
import type { WebhookStore } from '@ipokit/core';
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

// docs/spec.md#webhooks, only the public internet: an endpoint stored with a loopback URL (created
// before the rule, or written to the store directly) is never connected to by the worker,
// through its default transport, unless the operator opens loopback.
describe('startWebhookWorker and the operator\'s network', () => {
  it('never reaches a loopback receiver without webhookAllowedNetworks (the delivery fails with "address not allowed"); reaches it with them', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.writeHead(204).end());
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const [allowed, url] of [
        [undefined, `http://127.0.0.1:${port}/hook`],
        [undefined, `http://localhost:${port}/hook`],
        [undefined, `http://0x7f000001:${port}/hook`],
        [['127.0.0.0/8', '::1/128'], `http://127.0.0.1:${port}/hook`],
      ] as Array<[string[] | undefined, string]>) {
        const store = referenceStore();
        await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
        expect(await store.insertWebhook({ id: 'wh_1', accountId: 'acct_1', url, events: ['ipo.created'], description: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null }, { maxPerAccount: 10 })).toBe('ok');
        await store.writeDataset({ ipos: [makeIpo({ id: 'x1' })], snapshots: [] }, { at: Date.now() });
        const worker = startWebhookWorker(store, { allowInsecureWebhooks: true, pollIntervalMs: 20, ...(allowed === undefined ? {} : { webhookAllowedNetworks: allowed }) });
        let row;
        for (let i = 0; i < 250; i++) {
          [row] = (await store.listDeliveries({ webhookId: 'wh_1', before: null, limit: 10 })) ?? [];
          if (row !== undefined && row.attempts > 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await worker.stop();
        if (allowed === undefined) {
          expect(row, url).toMatchObject({ attempts: 1, state: 'pending', lastStatus: null, lastError: 'address not allowed' });
          expect(connections, url).toBe(0);
        } else {
          expect(row, url).toMatchObject({ attempts: 1, state: 'delivered', lastStatus: 204 });
          expect(connections).toBe(1);
        }
      }
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
