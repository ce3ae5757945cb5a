/**
 * The collector tests' store: a few IPOs on the memory store (with `localSourceStore`) or on
 * PostgreSQL (its own `SourceStore`; PGlite without DATABASE_URL), recording every run the
 * store took and able to fail.
 */
import { importDataset, type Dataset, type IpoStore } from '@ipokit/core';
import type { SnapshotRecord, SourceRunWrite, SourceStore, SubscriptionRecord, WriteOptions } from '@ipokit/core/backend';
import { memoryStore } from '@ipokit/storage-memory';
// The storage package's test database (not published), by path.
import { openTestDatabase, type TestDatabase } from '../../storage-postgres/src/test-database.js';
import { localSourceStore } from './local-store.js';

export type Backend = 'memory' | 'postgres';

export interface RecordingStore {
  store: IpoStore & SourceStore;
  /** The snapshots (the answers' and the combined ones) of every run written, in order. */
  snapshots: SnapshotRecord[];
  subscription: SubscriptionRecord[];
  /** Runs written that wrote data. */
  writes: number;
  /** While set, writeSourceRun rejects with this (nothing written). */
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

let database: Promise<TestDatabase> | null = null;

/** The PostgreSQL (or PGlite) test database of this file, opened once. */
export function testDatabase(): Promise<TestDatabase> {
  database ??= openTestDatabase('sources');
  return database;
}

/** Closes the test database if it was opened. */
export async function closeTestDatabase(): Promise<void> {
  if (database !== null) await (await database).close();
  database = null;
}

export async function recordingStore(ipos = 3, backend: Backend = 'memory'): Promise<RecordingStore> {
  let base: IpoStore & SourceStore;
  if (backend === 'memory') {
    const memory = memoryStore();
    base = Object.assign(Object.create(null) as object, memory, localSourceStore(memory)) as IpoStore & SourceStore;
  } else {
    base = await (await testDatabase()).emptyStore();
  }
  await importDataset(base, ipoDataset(ipos), { now: () => new Date('2026-11-01T00:00:00Z') });
  const recording: RecordingStore = { store: base, snapshots: [], subscription: [], writes: 0, failWith: null };
  const write = base.writeSourceRun.bind(base);
  const store = Object.assign(Object.create(null) as object, base, {
    async writeSourceRun(run: SourceRunWrite, options?: WriteOptions) {
      if (recording.failWith !== null) throw recording.failWith;
      let combined: SnapshotRecord[] = [];
      const result = await write({ ...run, combine: (reports, changed) => (combined = run.combine(reports, changed)) }, options);
      if (result.conflicts.length === 0) {
        const { ipos: written, snapshots, subscription } = run.data;
        if (written.length + snapshots.length + subscription.length + combined.length > 0) recording.writes += 1;
        recording.snapshots.push(...snapshots, ...combined);
        recording.subscription.push(...subscription);
      }
      return result;
    },
  }) as IpoStore & SourceStore;
  recording.store = store;
  return recording;
}
