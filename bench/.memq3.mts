import { memoryStore } from '@ipokit/storage-memory';
import { HOUR_MS, istDayStart, WINDOW_MS } from '@ipokit/core/backend';
const s = memoryStore();
const A = 16, SP = 10_001;
const shape = process.argv[2] ?? 'three';
let now = Date.now(), turn = 0;
const keys = Array.from({ length: A }, (_, a) => `acct:${shape}${a}`);
const usages = Array.from({ length: A }, (_, a) => ({ accountId: 'a' + a, keyId: 'k' + a, route: 'ipo' as const, day: '2026-11-24' }));
async function run(calls: number) {
  const t = performance.now();
  for (let i = 0; i < calls; i++) {
    const a = turn++ % A; now += SP / A;
    const key = keys[a]!;
    const w: any[] = [{ key, quota: 6, ms: WINDOW_MS }];
    if (shape === 'three') w.push({ key, quota: 360, ms: HOUR_MS }, { key, quota: 8640, ms: 86_400_000, start: istDayStart(now) });
    const r = await s.hitRateLimit({ now, windows: w, usage: usages[a] });
    if (!r.admitted) throw new Error('refused');
  }
  return ((performance.now() - t) * 1000) / calls;
}
await run(10000);
const xs = [];
for (let i = 0; i < 10; i++) xs.push((await run(50000)).toFixed(2));
console.log(shape, xs.join(' '));
