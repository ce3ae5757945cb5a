/**
 * The bounds of docs/spec.md#webhooks on the memory store (#29 defect 3): a write's fan-out is not made in
 * the write's step, so an account with many endpoints and a large import cannot block the
 * event loop or fill the heap. Before: 1,000 endpoints x 2,000 snapshots made 2,000,000
 * deliveries inside the write (8-19 s, +1,071 MB of heap); 8,000 snapshots ran out of memory.
 */
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import { describe, expect, it } from 'vitest';
import { memoryStore } from './index.js';

const T = Date.parse('2026-11-24T04:30:00.000Z');

describe('memoryStore webhook bounds', () => {
  it('1,000 endpoints and a 2,000-snapshot import: the write records 2,000 events, not 2,000,000 deliveries, and the endpoints still claim and list theirs', { timeout: 60_000 }, async () => {
    const store = memoryStore();
    try {
      await store.insertAccount({ id: 'acct_big', name: 'Big', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
      for (let i = 0; i < 1_000; i++) {
        const id = `wh_${String(i).padStart(4, '0')}`;
        const record = { id, accountId: 'acct_big', url: `https://example.com/${id}`, events: ['gmp.snapshot'], description: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null };
        expect(await store.insertWebhook(record, { maxPerAccount: Infinity })).toBe('ok');
      }
      const snapshots = Array.from({ length: 2_000 }, (_, i) => makeSnapshot('big', new Date(T - 10_000_000 + i * 1_000).toISOString(), { a: 100 + (i % 50) }));
      const heapBefore = process.memoryUsage().heapUsed;
      const started = performance.now();
      expect(await store.writeDataset({ ipos: [makeIpo({ id: 'big' })], snapshots }, { at: T })).toEqual([]);
      const writeMs = performance.now() - started;
      const grewMb = Math.max(0, (process.memoryUsage().heapUsed - heapBefore) / 1e6);
      // (a bound on the work, not a benchmark: the old fan-out took 8-19 s and 1,071 MB here)
      expect(grewMb).toBeLessThan(300);
      const claimed = await store.claimDeliveries({ now: T, limit: 64, perWebhook: 4, perAccount: 16, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
      expect(claimed.length).toBe(16);
      const listed = await store.listDeliveries({ webhookId: 'wh_0999', before: null, limit: 5 });
      expect(listed!.length).toBe(5);
      console.info(`1,000 endpoints x 2,000 snapshots: the write took ${writeMs.toFixed(0)} ms, heap +${grewMb.toFixed(0)} MB`);
    } finally {
      await store.close?.();
    }
  });
});
