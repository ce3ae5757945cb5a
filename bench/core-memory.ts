/**
 * Memory held by a memory store per snapshot, run by `core.ts` in a child process started
 * with `--expose-gc`: heapUsed + arrayBuffers after full GCs, before and after importing
 * 1,000,000 snapshots (3 sources each, 1,000 IPOs) through `store.writeDataset`, and again
 * once every IPO has been read (a read builds the store's read columns). Prints one JSON
 * line, a `MemoryReport`.
 *
 *   node --expose-gc --conditions=source --import tsx bench/core-memory.ts
 */
import { makeIpo, makeSnapshot } from '@ipokit/testing';
import type { IpoRecord, SnapshotRecord } from '@ipokit/core/backend';
import { memoryStore } from '@ipokit/storage-memory';

const IPOS = 1_000;
const SNAPSHOTS = 1_000_000;
const CHUNK = 50_000;
const SOURCES = ['investorgain', 'ipocentral', 'ipowatch'] as const;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

function held(): number {
  for (let i = 0; i < 4; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const store = memoryStore();
const ipos: IpoRecord[] = Array.from({ length: IPOS }, (_, k) => makeIpo({ id: String(2_000_000_000 + k), startDate: '2026-01-05' }));
await store.writeDataset({ ipos, snapshots: [] });
const t0 = Date.UTC(2026, 0, 1);
const perIpo = SNAPSHOTS / IPOS;

const before = held();
// Chunks built and dropped one at a time: only what the store keeps stays reachable.
for (let first = 0; first < SNAPSHOTS; first += CHUNK) {
  await store.writeDataset({ ipos: [], snapshots: chunk(first) });
}
const afterImport = held() - before;
for (const ipo of ipos) {
  await store.gmpBuckets({ ipoId: ipo.id, field: 'mean', from: 0, to: Number.MAX_SAFE_INTEGER, size: 86_400_000, origin: 0 });
  await store.findIpo({ identifier: ipo.id, gmpAt: Number.MAX_SAFE_INTEGER });
}
const afterRead = held() - before;
console.log(JSON.stringify({ ipos: IPOS, snapshots: SNAPSHOTS, afterImport, afterRead }));
await store.close?.();

/** Snapshots `first` to `first + CHUNK - 1`: IPO by IPO, one every 15 minutes, prices in paise. */
function chunk(first: number): SnapshotRecord[] {
  const out: SnapshotRecord[] = [];
  for (let i = first; i < first + CHUNK; i++) {
    const ipo = ipos[Math.floor(i / perIpo)] as IpoRecord;
    const prices: Record<string, number> = {};
    SOURCES.forEach((name, s) => (prices[name] = 4_000 + ((i * 7919 + s * 104_729) % 3_001)));
    out.push(makeSnapshot(ipo.id, t0 + (i % perIpo) * 900_000, prices));
  }
  return out;
}
