import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeIpo } from '@ipokit/testing';
import { referenceStore } from '@ipokit/testing';
import { getDelivery, rotateWebhookSecret, sendTestEvent, type WebhookStore } from '@ipokit/core';
import { Webhook } from 'standardwebhooks';
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

// docs/spec.md#webhooks, secret rotation: while the old secret's overlap lasts an attempt
// carries both signatures (new first), which the standardwebhooks package verifies with
// either secret; after it, only the new one. The receiver's answer is kept (its first 1 KB).
describe('startWebhookWorker and a rotated secret', () => {
  it('signs with both secrets during the overlap and with the new one only after it; keeps the answer body', async () => {
    const requests: Array<{ headers: Record<string, string>; body: string }> = [];
    const answer = `busy\u0000${'é'.repeat(600)}`;
    const server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        requests.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(answer);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const store = referenceStore();
    const first = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;
    await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
    await store.insertWebhook({ id: 'wh_1', accountId: 'acct_1', url, events: ['ipo.created'], description: null, secret: first, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null }, { maxPerAccount: 10 });
    const waitFor = async (n: number): Promise<void> => {
      for (let i = 0; i < 250 && requests.length < n; i++) await new Promise((r) => setTimeout(r, 20));
      expect(requests.length).toBe(n);
    };
    const worker = startWebhookWorker(store, { allowInsecureWebhooks: true, pollIntervalMs: 20, webhookAllowedNetworks: ['127.0.0.0/8'] });
    try {
      const { secret: second } = await rotateWebhookSecret(store, { id: 'wh_1', overlapSeconds: 3_600 });
      await store.writeDataset({ ipos: [makeIpo({ id: 'x1' })], snapshots: [] }, { at: Date.now() });
      await waitFor(1);
      const during = requests[0]!;
      expect(during.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
      expect(() => new Webhook(second).verify(during.body, during.headers)).not.toThrow();
      expect(() => new Webhook(first).verify(during.body, during.headers)).not.toThrow();
      expect(() => new Webhook(`whsec_${'B'.repeat(32)}`).verify(during.body, during.headers)).toThrow();
      // (the new signature first)
      expect(during.headers['webhook-signature']!.split(' ')[0]).toBe(new Webhook(second).sign(during.headers['webhook-id']!, new Date(Number(during.headers['webhook-timestamp']) * 1_000), during.body));
      // Rotated again on a clock 2 hours back, with a 1 hour overlap: the previous secret (second) has expired by now.
      const { secret: third } = await rotateWebhookSecret(store, { id: 'wh_1', overlapSeconds: 3_600 }, { now: () => new Date(Date.now() - 7_200_000) });
      const test = await sendTestEvent(store, { webhookId: 'wh_1' });
      await waitFor(2);
      const after = requests[1]!;
      expect(JSON.parse(after.body)).toMatchObject({ type: 'webhook.test', data: { webhookId: 'wh_1' } });
      expect(after.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
      expect(() => new Webhook(third).verify(after.body, after.headers)).not.toThrow();
      expect(() => new Webhook(second).verify(after.body, after.headers)).toThrow();
      // What came back: the status and the first 1 KB of the body, NUL as U+FFFD, no character cut in two.
      let detail;
      for (let i = 0; i < 250; i++) {
        detail = await getDelivery(store, { webhookId: 'wh_1', deliveryId: test.id });
        if (detail.attempts > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(detail!.payload).toBe(after.body);
      expect(detail!.response!.status).toBe(500);
      const kept = detail!.response!.body!;
      expect(kept.startsWith('busy\uFFFD')).toBe(true);
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1_024);
      expect(Buffer.byteLength(kept)).toBeGreaterThan(1_020);
      expect(kept).not.toContain('\u0000');
    } finally {
      await worker.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
