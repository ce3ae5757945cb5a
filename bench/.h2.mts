import { memoryStore } from '@ipokit/storage-memory';
import { importDataset, createAccount, createApiKey, createIpoHandler } from '@ipokit/core';
import { generateDataset } from '@ipokit/cli';
const NOW = Date.UTC(2026, 10, 22, 6, 30);
const store = memoryStore();
const dataset = generateDataset({ today: '2026-11-22', now: NOW });
await importDataset(store, dataset);
const a = await createAccount(store, { name: 'b', plan: 'paid' });
const { key } = await createApiKey(store, { accountId: a.id, label: 'b' });
const h = createIpoHandler(store, { now: () => new Date(NOW), limits: { paid: { perMinute: 1e9, gmpPerMinute: 1e9 } } });
const id = dataset.ipos!.find((i) => i.listingDate != null && i.listingDate < '2026-11-01')!.id;
const req = { method: 'GET', url: `/${id}`, path: `/${id}`, query: '', headers: { 'x-api-key': key }, clientAddress: '1.2.3.4' };
const t = performance.now(); let n = 0;
while (performance.now() - t < 4000) { for (let i = 0; i < 1000; i++) await h(req); n += 1000; }
console.log((4000 / n * 1000).toFixed(2), 'us/req');
