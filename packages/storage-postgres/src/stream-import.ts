/**
 * Importing a dataset too large for memory (docs/spec.md#datasets, the CLI's import): the source is
 * read twice. The first pass validates all of it with the core's checker and keeps no
 * record; the second reads it again and writes it in batches inside one transaction, after
 * checking it against stored data under the store's data lock. Either every record is
 * written or none is, and readers see the data as it was before or after, never half; the
 * webhook events of the import (docs/spec.md#webhooks) are recorded in the same transaction,
 * batch by batch, as `writeDataset` records them.
 */
import { IpokitError } from '@ipokit/core';
import { createDatasetChecker, type DatasetConflict, datasetConflictError, type DatasetItem, type IpoRecord, type SnapshotRecord, type SubscriptionRecord } from '@ipokit/core/backend';
import { Database, type PostgresClient, type Transaction } from './client.js';
import { noteDataWrite } from './data-cache.js';
import { schemaIdentifier, type SchemaOptions } from './migrations.js';
import {
  checkSchema,
  dataVersion,
  findIpoConflicts,
  IPO_BATCH,
  latestSubscriptions,
  lockData,
  unstoredIpoIds,
  writeIpoBatch,
  writeSnapshotBatch,
  writeSubscriptionBatch,
  type IpoKeys,
} from './postgres-store.js';
import { notifyDeliveries, readEndpoints } from './webhook-store.js';

/** Where a streaming import is: which pass, and how many records it has read in it. */
export interface StreamImportProgress {
  /** 1: validating the whole source; 2: writing it (one transaction). */
  pass: 1 | 2;
  /** IPO records read so far in this pass. */
  ipos: number;
  /** Snapshots read so far in this pass (in pass 2: written or in the batch being written). */
  snapshots: number;
  /** Subscription snapshots read so far in this pass (as `snapshots`). */
  subscription: number;
}

/**
 * Options of {@link importDatasetStream}.
 *
 * @example
 * ```ts
 * importDatasetStream({ client: pool, batchSize: 5000, onProgress: (p) => console.log(p) }, readPass);
 * ```
 */
export interface StreamImportOptions extends SchemaOptions {
  /** A `pg.Pool`, a `pg.Client` or a PGlite instance, migrated (`migrate`); never closed here. */
  client: PostgresClient;
  /** Snapshots (GMP or subscription) per INSERT statement (IPOs: at most 2,000); 1 to 50,000, default 5,000. */
  batchSize?: number;
  /** Called as the passes go: every batch, and every `batchSize` records of pass 1. */
  onProgress?: (progress: StreamImportProgress) => void;
  /** When the import happens (epoch ms), for its webhook events, as `writeDataset`'s `at`. Default: `Date.now()` as pass 2 begins. */
  at?: number;
}

/** The default of {@link StreamImportOptions.batchSize}. */
export const DEFAULT_IMPORT_BATCH_SIZE = 5_000;
const MAX_BATCH_SIZE = 50_000;
/** How many snapshots' places the conflict problems name at most. */
const MAX_LISTED = 1_000;

/**
 * Imports a dataset that is read as a stream, twice: `readPass()` must give the same
 * items each time it is called (e.g. by reading a file again from its start). The result,
 * and every error, is the one `importDataset` gives for the same dataset: `ERR:DATASET`
 * with the same problems (invalid records with the snapshots of IPOs neither in the source
 * nor stored; for a valid source, its conflicts with stored data), nothing
 * written; `ERR:UNAVAILABLE` when the database fails (the transaction is rolled back). An
 * error thrown by `readPass` (a read error, malformed JSON) is passed on as it is.
 *
 * Memory: the IPOs' ids, symbols and slugs, and 12 bytes per snapshot (to find duplicate
 * snapshots) are kept, never the records; one batch is in memory at a time. (When an
 * enabled endpoint takes `ipo.created` or `ipo.updated` and the source holds subscription
 * snapshots, pass 2 reads them first, keeping each IPO's latest at the import's instant:
 * its IPO object in the event shows it.)
 *
 * @example
 * ```ts
 * import { importDatasetStream } from '@ipokit/storage-postgres';
 *
 * const { ipos, snapshots, subscription } = await importDatasetStream({ client: pool }, () => readItems('big.json'));
 * ```
 */
export async function importDatasetStream(
  options: StreamImportOptions,
  readPass: () => AsyncIterable<DatasetItem>,
): Promise<{ ipos: number; snapshots: number; subscription: number }> {
  if (options === null || typeof options !== 'object') {
    throw new IpokitError('ERR:BADPARAM', 'importDatasetStream needs { client }, e.g. importDatasetStream({ client: pool }, readPass).', { parameter: 'client' });
  }
  const s = schemaIdentifier(options.schema);
  const db = new Database(options.client);
  const batchSize = options.batchSize ?? DEFAULT_IMPORT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new IpokitError('ERR:BADPARAM', `batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}.`, { parameter: 'batchSize' });
  }
  const progress = options.onProgress ?? (() => undefined);
  // Before minutes of reading: is the database there and migrated?
  await checkSchema(db, s);

  const first = await validatePass(db, s, readPass, batchSize, progress);
  let outcome: WriteOutcome;
  try {
    outcome = await writePass(db, s, first, readPass, batchSize, progress, options.at);
  } catch (err) {
    // (it may have committed all the same: the stores on this client confirm their caches again)
    noteDataWrite(options.client, s, null);
    throw err;
  }
  if (outcome.kind === 'written') {
    // Store objects on this client drop their cached reads at once (other processes on NOTIFY).
    noteDataWrite(options.client, s, outcome.version);
    return { ipos: outcome.ipos, snapshots: outcome.snapshots, subscription: outcome.subscription };
  }

  // Conflicts with stored data: name the first snapshots (GMP, then subscription) that
  // reference unknown IPOs (found by reading again: their places were not kept), count them all.
  const listed: Array<{ ipoId: string } | undefined> = [];
  const listedSubscription: Array<{ ipoId: string } | undefined> = [];
  const conflicts: DatasetConflict[] = [...outcome.conflicts];
  let unknownCount = 0;
  for (const id of outcome.unknown) unknownCount += (first.snapshotsOf.get(id) ?? 0) + (first.subscriptionOf.get(id) ?? 0);
  if (outcome.unknown.size > 0) {
    let found = 0;
    let foundSubscription = 0;
    for await (const item of readPass()) {
      if (item.kind !== 'snapshot' && item.kind !== 'subscription') continue;
      const ipoId = ipoIdOf(item.value);
      if (ipoId === undefined || !outcome.unknown.has(ipoId)) continue;
      if (item.kind === 'snapshot' && found < MAX_LISTED) {
        listed[item.index] = { ipoId };
        conflicts.push({ kind: 'unknown-ipo', snapshot: item.index });
        found += 1;
      } else if (item.kind === 'subscription' && foundSubscription < MAX_LISTED) {
        listedSubscription[item.index] = { ipoId };
        conflicts.push({ kind: 'unknown-ipo-subscription', snapshot: item.index });
        foundSubscription += 1;
      }
      if (found === MAX_LISTED && foundSubscription === MAX_LISTED) break;
    }
  }
  throw datasetConflictError(conflicts, first.ipoKeys, listed, outcome.conflicts.length + unknownCount, listedSubscription);
}

/** What pass 1 keeps: the IPOs' keys, and how many snapshots of each kind each IPO id has. */
interface FirstPass {
  ipoKeys: IpoKeys[];
  /** Snapshots per ipoId (an IPO of the dataset or not). */
  snapshotsOf: Map<string, number>;
  snapshots: number;
  /** Subscription snapshots per ipoId (an IPO of the dataset or not). */
  subscriptionOf: Map<string, number>;
  subscription: number;
  /** The `gmp` or `subscription` array comes before the `ipos` array: pass 2 then reads twice (IPOs first). */
  snapshotsFirst: boolean;
}

async function validatePass(
  db: Database,
  s: string,
  readPass: () => AsyncIterable<DatasetItem>,
  batchSize: number,
  progress: (p: StreamImportProgress) => void,
): Promise<FirstPass> {
  const checker = createDatasetChecker();
  const ipoKeys: IpoKeys[] = [];
  const snapshotsOf = new Map<string, number>();
  const subscriptionOf = new Map<string, number>();
  let firstArray: string | null = null;
  let ipos = 0;
  let snapshots = 0;
  let subscription = 0;
  const counted = (of: Map<string, number>, ipoId: string): void => {
    const seen = of.get(ipoId);
    if (seen === undefined) of.set(detached(ipoId), 1);
    else of.set(ipoId, seen + 1);
  };
  for await (const item of readPass()) {
    const record = checker.feed(item);
    if (item.kind === 'value' && Array.isArray(item.value)) firstArray ??= item.key;
    else if (item.kind === 'ipo') {
      ipos += 1;
      // Kept only while the dataset can still be valid (else it is refused anyway).
      if (record !== null && checker.problemCount === 0) {
        const ipo = record as IpoRecord;
        ipoKeys.push({ id: detached(ipo.id), symbol: ipo.symbol === null ? null : detached(ipo.symbol), slug: detached(ipo.slug) });
      }
      if (ipos % batchSize === 0) progress({ pass: 1, ipos, snapshots, subscription });
    } else if (item.kind === 'snapshot') {
      snapshots += 1;
      if (record !== null && checker.problemCount === 0) counted(snapshotsOf, (record as SnapshotRecord).ipoId);
      if (snapshots % batchSize === 0) progress({ pass: 1, ipos, snapshots, subscription });
    } else if (item.kind === 'subscription') {
      subscription += 1;
      if (record !== null && checker.problemCount === 0) counted(subscriptionOf, (record as SubscriptionRecord).ipoId);
      if (subscription % batchSize === 0) progress({ pass: 1, ipos, snapshots, subscription });
    }
  }
  if (checker.hasProblems()) {
    // Refused anyway: the snapshots of IPOs the store lacks too are named now, with the
    // other problems, as importDataset names them (not on the next attempt, once these are fixed).
    const outside = checker.outsideIpoIds();
    if (outside.length > 0) checker.unknownIpos(await db.transaction((tx) => unstoredIpoIds(tx, s, outside)));
  }
  checker.finish();
  progress({ pass: 1, ipos, snapshots, subscription });
  return { ipoKeys, snapshotsOf, snapshots, subscriptionOf, subscription, snapshotsFirst: firstArray !== null && firstArray !== 'ipos' };
}

type WriteOutcome =
  | { kind: 'written'; ipos: number; snapshots: number; subscription: number; version: bigint | null }
  | { kind: 'conflicts'; conflicts: DatasetConflict[]; unknown: Set<string> };

async function writePass(
  db: Database,
  s: string,
  first: FirstPass,
  readPass: () => AsyncIterable<DatasetItem>,
  batchSize: number,
  progress: (p: StreamImportProgress) => void,
  at: number | undefined,
): Promise<WriteOutcome> {
  // An error of the source is not the database's: it leaves the transaction (rolling it
  // back) as a marker and is thrown as it was.
  const source = { failed: false, error: undefined as unknown };
  const failed = (error: unknown): void => {
    source.failed = true;
    source.error = error;
  };
  try {
    return await db.transaction(async (tx): Promise<WriteOutcome> => {
      await lockData(tx, s);
      const fileIds = new Set(first.ipoKeys.map((k) => k.id));
      const outside = [...new Set([...first.snapshotsOf.keys(), ...first.subscriptionOf.keys()])].filter((id) => !fileIds.has(id));
      const unknown = await unstoredIpoIds(tx, s, outside);
      const conflicts = await findIpoConflicts(tx, s, first.ipoKeys);
      if (conflicts.length > 0 || unknown.size > 0) return { kind: 'conflicts', conflicts, unknown };

      // The import's events, batch by batch in its transaction: none, and nothing more done,
      // when no endpoint is enabled.
      const endpoints = await readEndpoints(tx, s);
      const when = at ?? Date.now();
      // deliveries and snapshot-event rows added: announced once, at the end, when any were
      let added = 0;
      // An IPO's event shows its latest subscription snapshot at `when`: the source's are
      // read first when such events are taken (one record per IPO kept).
      const shown = endpoints !== null && (endpoints.types.has('ipo.created') || endpoints.types.has('ipo.updated')) && first.subscription > 0;
      const written = shown ? await latestSubscriptionsOf(readPass, failed, when) : undefined;
      const writeIpos = (t: Transaction, batch: IpoRecord[]): Promise<void> =>
        writeIpoBatch(t, s, batch, endpoints, when, written).then((n) => {
          added += n;
        });
      const writeSnapshots = (t: Transaction, batch: SnapshotRecord[]): Promise<void> =>
        writeSnapshotBatch(t, s, batch, endpoints, when).then((n) => {
          added += n;
        });
      const writeSubscription = (t: Transaction, batch: SubscriptionRecord[]): Promise<void> =>
        writeSubscriptionBatch(t, s, batch, endpoints, when).then((n) => {
          added += n;
        });
      const writer = new BatchWriter(tx);
      const checker = createDatasetChecker();
      const ipoBatch: IpoRecord[] = [];
      let snapshotBatch: SnapshotRecord[] = [];
      let subscriptionBatch: SubscriptionRecord[] = [];
      const ipoBatchSize = Math.min(batchSize, IPO_BATCH);
      let ipos = 0;
      let snapshots = 0;
      let subscription = 0;
      const changed = (what: string): IpokitError =>
        new IpokitError('ERR:DATASET', `The source changed between the two passes of the import (${what}); nothing was written.`, {
          problems: [{ path: '$', message: `the source changed between the two passes of the import (${what})` }],
          problemCount: 1,
        });
      // IPOs are written before any snapshot (a snapshot's IPO must exist): when the file
      // holds gmp or subscription first, pass 2 reads it twice, IPOs the first time.
      const reads: Array<'ipos' | 'snapshots' | 'both'> = first.snapshotsFirst ? ['ipos', 'snapshots'] : ['both'];
      try {
        for (const part of reads) {
          await eachItem(readPass, failed, async (item) => {
            if (item.kind === 'ipo' && part !== 'snapshots') {
              const record = checker.ipo(item.value, item.index);
              const keys = first.ipoKeys[ipos];
              ipos += 1;
              if (record === null || keys === undefined || keys.id !== record.id || keys.symbol !== record.symbol || keys.slug !== record.slug) {
                throw changed(`ipos[${item.index}]`);
              }
              ipoBatch.push(record);
              if (ipoBatch.length === ipoBatchSize) {
                await writer.write((t) => writeIpos(t, ipoBatch.splice(0)));
                progress({ pass: 2, ipos, snapshots, subscription });
              }
            } else if (item.kind === 'snapshot' && part !== 'ipos') {
              if (ipoBatch.length > 0) await writer.write((t) => writeIpos(t, ipoBatch.splice(0)));
              const record = checker.snapshot(item.value, item.index);
              snapshots += 1;
              if (record === null || !first.snapshotsOf.has(record.ipoId)) throw changed(`gmp[${item.index}]`);
              snapshotBatch.push(record);
              if (snapshotBatch.length === batchSize) {
                const batch = snapshotBatch;
                snapshotBatch = [];
                await writer.write((t) => writeSnapshots(t, batch));
                progress({ pass: 2, ipos, snapshots, subscription });
              }
            } else if (item.kind === 'subscription' && part !== 'ipos') {
              if (ipoBatch.length > 0) await writer.write((t) => writeIpos(t, ipoBatch.splice(0)));
              const record = checker.subscription(item.value, item.index);
              subscription += 1;
              if (record === null || !first.subscriptionOf.has(record.ipoId)) throw changed(`subscription[${item.index}]`);
              subscriptionBatch.push(record);
              if (subscriptionBatch.length === batchSize) {
                const batch = subscriptionBatch;
                subscriptionBatch = [];
                await writer.write((t) => writeSubscription(t, batch));
                progress({ pass: 2, ipos, snapshots, subscription });
              }
            }
          });
        }
        if (ipoBatch.length > 0) await writer.write((t) => writeIpos(t, ipoBatch.splice(0)));
        if (snapshotBatch.length > 0) await writer.write((t) => writeSnapshots(t, snapshotBatch));
        if (subscriptionBatch.length > 0) await writer.write((t) => writeSubscription(t, subscriptionBatch));
        await writer.flush();
      } finally {
        // Nothing may still run on the connection when the transaction ends.
        await writer.settle();
      }
      // The same records as pass 1, and as valid (duplicates included) before COMMIT.
      checker.finish();
      if (ipos !== first.ipoKeys.length || snapshots !== first.snapshots || subscription !== first.subscription) throw changed('a different number of records');
      if (added > 0) await notifyDeliveries(tx, s);
      progress({ pass: 2, ipos, snapshots, subscription });
      return { kind: 'written', ipos, snapshots, subscription, version: await dataVersion(tx, s) };
    });
  } catch (err) {
    if (source.failed) throw source.error;
    throw err;
  }
}

/**
 * Each IPO's latest subscription snapshot of the source at or before `at` (see
 * `latestSubscriptions`): one read of the source, one record per IPO kept.
 */
async function latestSubscriptionsOf(
  readPass: () => AsyncIterable<DatasetItem>,
  failed: (error: unknown) => void,
  at: number,
): Promise<Map<string, SubscriptionRecord>> {
  const checker = createDatasetChecker();
  const latest = new Map<string, SubscriptionRecord>();
  await eachItem(readPass, failed, async (item) => {
    if (item.kind !== 'subscription') return;
    const record = checker.subscription(item.value, item.index);
    if (record === null || record.timestamp > at) return;
    const seen = latest.get(record.ipoId);
    if (seen === undefined || seen.timestamp <= record.timestamp) latest.set(seen === undefined ? detached(record.ipoId) : record.ipoId, record);
  });
  return latestSubscriptions(latest.values(), at);
}

/**
 * Writes one batch while the next is read and checked: at most one statement in flight.
 * A failed statement fails the next `write` or `flush`.
 */
class BatchWriter {
  private pending: Promise<void> | null = null;

  constructor(private readonly tx: Transaction) {}

  async write(statement: (tx: Transaction) => Promise<void>): Promise<void> {
    await this.flush();
    const running = statement(this.tx);
    // Observed at once, so that a failure is never an unhandled rejection.
    running.catch(() => undefined);
    this.pending = running;
  }

  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = null;
    if (pending !== null) await pending;
  }

  /** Waits for a statement in flight, whatever its outcome. */
  async settle(): Promise<void> {
    await this.pending?.catch(() => undefined);
    this.pending = null;
  }
}

/**
 * Reads one pass, item by item, by hand (a generator in between would cost per item); an
 * error of the source is noted with `failed` before it leaves, and a pass left early (a
 * failure) closes the source.
 */
async function eachItem(
  readPass: () => AsyncIterable<DatasetItem>,
  failed: (error: unknown) => void,
  onItem: (item: DatasetItem) => Promise<void>,
): Promise<void> {
  let items: AsyncIterator<DatasetItem>;
  try {
    items = readPass()[Symbol.asyncIterator]();
  } catch (error) {
    failed(error);
    throw error;
  }
  let finished = false;
  try {
    for (;;) {
      let next: IteratorResult<DatasetItem>;
      try {
        next = await items.next();
      } catch (error) {
        failed(error);
        throw error;
      }
      if (next.done === true) break;
      await onItem(next.value);
    }
    finished = true;
  } finally {
    if (!finished) await items.return?.().catch(() => undefined);
  }
}

/**
 * `text` on its own: a string cut from a larger one (a parser's block of text) may keep the
 * whole block alive, and these are kept for the whole import (see the core's checker).
 */
function detached(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

function ipoIdOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { ipoId?: unknown }).ipoId;
  return typeof id === 'string' ? id : undefined;
}
