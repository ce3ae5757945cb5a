/**
 * The collector tests' store: a memory store with a few IPOs, which records every write that
 * went through and can be made to fail.
 */
import { importDataset, type Dataset, type Store } from '@ipokit/core';
import type { SnapshotRecord, SubscriptionRecord } from '@ipokit/core/backend';
import { memoryStore } from '@ipokit/storage-memory';

export interface RecordingStore {
  store: Store;
  /** The snapshots of every write that went through, in order. */
  snapshots: SnapshotRecord[];
  subscription: SubscriptionRecord[];
  /** Writes that went through (conflict-free). */
  writes: number;
  /** While set, writeDataset rejects with this. */
  failWith: Error | null;
}

/** IPOs `ipo-1` ... `ipo-N` (EQ, with a price band), imported at 2026-11-01. */
export function ipoDataset(count: number): Dataset {
  return {
    ipos: Array.from({ length: count }, (_, i) => ({
      id: `ipo-${i + 1}`,
      name: `Company ${i + 1} Ltd`,
      slug: `company-${i + 1}-ipo`,
      symbol: `CO${i + 1}`,
      type: 'EQ' as const,
      priceRange: '100-120',
      startDate: '2026-11-20',
      endDate: '2026-11-24',
    })),
  };
}

export async function recordingStore(ipos = 3): Promise<RecordingStore> {
  const store = memoryStore();
  await importDataset(store, ipoDataset(ipos), { now: () => new Date('2026-11-01T00:00:00Z') });
  const recording: RecordingStore = { store, snapshots: [], subscription: [], writes: 0, failWith: null };
  const write = store.writeDataset.bind(store);
  store.writeDataset = async (input, options) => {
    if (recording.failWith !== null) throw recording.failWith;
    const conflicts = await write(input, options);
    if (conflicts.length === 0) {
      recording.writes += 1;
      recording.snapshots.push(...input.snapshots);
      recording.subscription.push(...(input.subscription ?? []));
    }
    return conflicts;
  };
  return recording;
}
