/**
 * The PostgreSQL store: every filter, order, page, lookup, bucket and rate-limit decision
 * runs in SQL, so any number of app instances share one database with exact results.
 */
import { createHash } from 'node:crypto';
import { GMP_FIELDS, type GmpField, type IpoDates, IpokitError, type IpoStatus, type Plan, type Store, SUBSCRIPTION_CATEGORIES, type SubscriptionTimes, type UsageRow, type WebhookStore } from '@ipokit/core';
import {
  type AccountRecord,
  type ActiveKeyLimits,
  type ApiKeyRecord,
  asciiLower,
  type DatasetConflict,
  eventsOfWrite,
  type GmpBucket,
  type GmpBucketQuery,
  type IpoRecord,
  type IpoRow,
  type KeyGrant,
  type ListQuery,
  type RateLimitOutcome,
  rateLimitPeek,
  type RateLimitWindow,
  type RateLimitWindowState,
  sameIpo,
  type SourceStore,
  sameSubscription,
  type SnapshotRecord,
  type StoreCallOptions,
  type SubscriptionQuery,
  type SubscriptionRecord,
  type UsageRoute,
  WINDOW_MS,
} from '@ipokit/core/backend';
import { Database, type PostgresClient, type Transaction } from './client.js';
import {
  DataCache,
  dataVersionWatch,
  DEFAULT_DATA_CACHE_MAX_BYTES,
  DEFAULT_DATA_CACHE_TTL_MS,
  noteDataWrite,
  type VersionRead,
} from './data-cache.js';
import { advisoryKey, SCHEMA_VERSION, schemaIdentifier, type SchemaOptions } from './migrations.js';
import { sourceMethods } from './source-store.js';
import { firstBucketStart, timelineBuckets, timelineFits, toTimeline, type Timeline } from './timeline.js';
import { notifyDeliveries, readEndpoints, recordEvents, webhookMethods, type Endpoints } from './webhook-store.js';

/**
 * Options of {@link postgresStore}.
 *
 * @example
 * ```ts
 * postgresStore({ client: pool, schema: 'ipokit', rateLimitSweepEvery: 1000 });
 * ```
 */
export interface PostgresStoreOptions extends SchemaOptions {
  /** A `pg.Pool` (recommended), a `pg.Client` or a PGlite instance; never closed by the store. */
  client: PostgresClient;
  /**
   * Every this many rate-limit hits (per store object), the hit also forgets up to 1,000
   * windows that are over (a sliding window whose hits have all left, a calendar window a
   * period after its end) and up to 10,000 of their hits, by index range scans (never a
   * scan of the whole table). Default 1,000.
   */
  rateLimitSweepEvery?: number;
  /**
   * How many calls made for requests may wait for a connection (the store runs at most the
   * pool's `max` at once; 1 on PGlite, 10 on another client); with one more, the one that
   * has waited longest is answered 503 at once, so that a stalled database sheds load
   * instead of queueing it. A waiting call whose request has been answered (after
   * `storeTimeoutMs`) is dropped without running, and once the queue stops moving the
   * newest calls go first, so answers flow again as soon as the database does. Imports and
   * key management wait without bound. Default 1,000.
   */
  maxWaitingCalls?: number;
  /**
   * The read cache of IPO data (`listIpos`, `findIpo`, `gmpBuckets`), kept in this store
   * object: the longest time (ms) a cached answer is used after a statement last confirmed
   * the schema's data version. A write made through a store object on the same client is
   * seen at once; one made by another process as soon as its NOTIFY arrives (milliseconds),
   * and within this bound even when notifications are lost. Answers are exactly the
   * database's (at some moment less than this long ago). Default 1,000; 0 turns the cache
   * off. On a pool of 2 or more connections the cache holds one of them for LISTEN, and the
   * store runs one call fewer at once.
   */
  dataCacheTtlMs?: number;
  /**
   * Bound on the cache's estimated size in bytes, per store object (least recently used
   * entries go first; an IPO counts about twice its JSON text). Default 32 MiB.
   */
  dataCacheMaxBytes?: number;
}

/** Rows per statement when an import is written. */
export const IPO_BATCH = 2_000;
const SNAPSHOT_BATCH = 5_000;

// Every list of the aggregation fields below is made from the core's GMP_FIELDS: a field
// added there reaches the columns, the reads and the writes (the migration adds its column).

/** The column of each aggregation field (paise, bigint). */
const FIELD_COLUMN = Object.fromEntries(GMP_FIELDS.map((f) => [f, `agg_${f}`])) as Readonly<Record<GmpField, string>>;
const AGG_COLUMNS = GMP_FIELDS.map((f) => FIELD_COLUMN[f]).join(', ');

/**
 * How each status is read on day `t` (a parameter). The predicates equal docs/spec.md#status for
 * data that follows its transitions (the import refuses any other). `parts` are disjoint
 * and each is a range of one index (see the migration). `ordered`: the page is read in
 * index order (two parts: merged), and the count adds up index-only counts. `gathered`
 * (open: few rows that no index keeps in their order): the matches are gathered, then sorted.
 */
const STATUS_SQL: Readonly<
  Record<IpoStatus, { parts: (t: () => string) => string[]; order: ReadonlyArray<readonly [string, '' | ' DESC']>; plan: 'ordered' | 'gathered' }>
> = {
  listed: { parts: (t) => [`listing_date <= ${t()}`], order: [['listing_date', ' DESC'], ['id', '']], plan: 'ordered' },
  closed: {
    parts: (t) => [`listing_date IS NULL AND closing_date < ${t()}`, `listing_date > ${t()} AND closing_date < ${t()}`],
    order: [['closing_date', ' DESC'], ['id', '']],
    plan: 'ordered',
  },
  open: {
    parts: (t) => [`closing_date >= ${t()} AND start_date <= ${t()} AND coalesce(listing_date, '~') > ${t()}`],
    order: [['start_date', ''], ['id', '']],
    plan: 'gathered',
  },
  upcoming: { parts: (t) => [`start_date > ${t()}`], order: [['start_date', ''], ['id', '']], plan: 'ordered' },
  announced: { parts: () => ['start_date IS NULL'], order: [['name', ''], ['id', '']], plan: 'ordered' },
};

/** A snapshot's columns as a row of the latest-snapshot join reads them (`g.*` below). */
const SNAPSHOT_COLUMNS = `sn.ts::float8 AS ts, sn.sources::text AS sources, ${GMP_FIELDS.map((f) => `sn.${FIELD_COLUMN[f]}::float8 AS ${f}`).join(', ')}`;
/** What a page or lookup selects of the joined latest snapshot `g`. */
const GMP_COLUMNS = `g.ts, g.sources, ${GMP_FIELDS.map((f) => `g.${f}`).join(', ')}`;

// The subscription snapshots' columns (migration 12) are named as the core's categories.
// numeric is read as text: Number() of its text is the value written (12.50 reads 12.5).

/** A subscription snapshot's categories, as columns of `subscription_snapshots`. */
const CATEGORY_COLUMNS = SUBSCRIPTION_CATEGORIES.join(', ');
/** A subscription snapshot's columns as a lateral join reads them (`x.*`, prefixed `s_`). */
const SUBSCRIPTION_SELECT = (alias: string): string =>
  `${alias}.ts::float8 AS s_ts, ${SUBSCRIPTION_CATEGORIES.map((c) => `${alias}.${c}::text AS s_${c}`).join(', ')}`;
/** What a page or lookup selects of the joined latest subscription snapshot `sx`. */
const SUBSCRIPTION_COLUMNS = `sx.s_ts, ${SUBSCRIPTION_CATEGORIES.map((c) => `sx.s_${c}`).join(', ')}`;
/** The latest subscription snapshot of `id` at or before `at` (a parameter), as `sx`. */
const LATEST_SUBSCRIPTION = (s: string, id: string, at: string): string =>
  `LEFT JOIN LATERAL (SELECT ${SUBSCRIPTION_SELECT('sb')} FROM ${s}.subscription_snapshots AS sb WHERE sb.ipo_id = ${id} AND sb.ts <= ${at}::bigint ORDER BY sb.ts DESC LIMIT 1) AS sx ON true`;
/** The first subscription snapshot of `id` after `at`, as `s_next_ts`: where a cached row stops answering. */
const NEXT_SUBSCRIPTION = (s: string, id: string, at: string): string =>
  `(SELECT min(x.ts) FROM ${s}.subscription_snapshots AS x WHERE x.ipo_id = ${id} AND x.ts > ${at}::bigint)::float8 AS s_next_ts`;
/** translate() arguments folding A-Z alone (lower() follows the locale and folds more). */
const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ASCII_LOWER = 'abcdefghijklmnopqrstuvwxyz';

/**
 * Creates a {@link Store} on PostgreSQL, with webhook endpoints and their deliveries (a
 * `WebhookStore`, docs/spec.md#webhooks: a data write records its events in its own
 * transaction; `watchDeliveries` LISTENs, on a pool on a connection it holds while it runs,
 * so that the store then runs one call fewer at once), and the part of a collector shared by
 * every process that runs it (a `SourceStore`, docs/spec.md#sources: each source's reports
 * and state, and a run lock per source, an advisory lock held by a connection the store
 * checks out while a source runs). Run {@link migrate} first (once per deploy);
 * a store on a database that is not migrated rejects every call with `ERR:UNAVAILABLE`
 * and a message saying so. Every failure of the database rejects with `IpokitError`
 * code `ERR:UNAVAILABLE` (a 503 to HTTP callers), the driver's error as `cause`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrate, postgresStore } from '@ipokit/storage-postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
 * await migrate(pool);
 * const store = postgresStore({ client: pool });
 * app.use('/ipos', ipoRouter(store));
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): Store & WebhookStore & SourceStore {
  if (options === null || typeof options !== 'object') {
    throw new IpokitError('ERR:BADPARAM', 'postgresStore needs { client }, e.g. postgresStore({ client: pool }).', { parameter: 'client' });
  }
  const s = schemaIdentifier(options.schema);
  const ttlMs = options.dataCacheTtlMs ?? DEFAULT_DATA_CACHE_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) {
    throw new IpokitError('ERR:BADPARAM', `dataCacheTtlMs must be a whole number of ms >= 0 (0: no cache); got ${String(ttlMs)}.`, { parameter: 'dataCacheTtlMs' });
  }
  const maxBytes = options.dataCacheMaxBytes ?? DEFAULT_DATA_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new IpokitError('ERR:BADPARAM', `dataCacheMaxBytes must be a whole number >= 1; got ${String(maxBytes)}.`, { parameter: 'dataCacheMaxBytes' });
  }
  const db = new Database(options.client, {
    ...(options.maxWaitingCalls === undefined ? {} : { maxWaitingCalls: options.maxWaitingCalls }),
    // the cache's LISTEN connection
    reservedConnections: ttlMs > 0 ? 1 : 0,
  });
  const sweepEvery = options.rateLimitSweepEvery ?? 1_000;
  if (!Number.isInteger(sweepEvery) || sweepEvery < 1) {
    throw new IpokitError('ERR:BADPARAM', 'rateLimitSweepEvery must be an integer >= 1.', { parameter: 'rateLimitSweepEvery' });
  }
  let hitsSinceSweep = 0;
  let closed = false;
  let ready: Promise<void> | null = null;

  /** Checks once that the schema is migrated far enough; a failure is retried next call. */
  const ensureReady = async (): Promise<void> => {
    if (closed) throw new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store is closed.');
    ready ??= checkSchema(db, s).catch((err: unknown) => {
      ready = null;
      throw err;
    });
    return ready;
  };
  const query = async <R>(text: string, params: unknown[] = [], call?: StoreCallOptions): Promise<R[]> => {
    await ensureReady();
    return db.query<R>(text, params, call);
  };
  const transaction = async <T>(fn: (tx: Transaction) => Promise<T>): Promise<T> => {
    await ensureReady();
    return db.transaction(fn);
  };
  /** One statement, and when it left for the database (after the gate): for the cache. */
  const timedQuery = async <R>(text: string, params: unknown[], call: StoreCallOptions | undefined): Promise<{ rows: R[]; sentAt: number }> => {
    await ensureReady();
    let sentAt = 0;
    const rows = await db.queryWithin<R>(call, () => {
      sentAt = performance.now();
      return [text, params];
    });
    return { rows, sentAt };
  };
  /** A data write through this store: the caches on this client learn its version at once. */
  const dataWrite = async <T>(fn: (tx: Transaction) => Promise<{ result: T; version: bigint | null }>): Promise<T> => {
    try {
      const { result, version } = await transaction(fn);
      if (version !== null) noteDataWrite(options.client, s, version);
      return result;
    } catch (err) {
      // It may have committed all the same (a connection lost during COMMIT): confirm again.
      noteDataWrite(options.client, s, null);
      throw err;
    }
  };
  /** The background version check of the cache: one row, given up if it cannot start within the TTL. */
  const readVersion: VersionRead = async () => {
    const { rows, sentAt } = await timedQuery<{ dv: string | null }>(`SELECT (${VERSION_SQL(s)}) AS dv`, [], { deadline: performance.now() + ttlMs });
    return { version: versionOf(rows[0]?.dv), sentAt };
  };
  // Timelines of up to a quarter of the cache (16 bytes a snapshot), and never a huge read.
  const timelinePoints = Math.min(MAX_TIMELINE, Math.floor(maxBytes / 64));
  // On a pool of one connection there is none to spare for LISTEN: the TTL alone bounds staleness.
  const cache =
    ttlMs > 0
      ? new DataCache<Cached>(dataVersionWatch(options.client, s), db, readVersion, { ttlMs, maxBytes, listen: db.kind !== 'pool' || db.reserved > 0 })
      : null;

  /**
   * A list page as one statement reads it, with the data version it saw. With `windows`
   * and gmpAt: the range of gmpAt [lo, hi) over which every row's latest snapshot stays the
   * same (lo: the latest of them; hi: the first later snapshot of any row on the page).
   */
  const readPage = async (q: ListQuery, windows: boolean, call: StoreCallOptions | undefined): Promise<VersionedRead<{ count: number; rows: IpoRow[] }>> => {
    const { parts, order, plan } = STATUS_SQL[q.status];
    const params: unknown[] = [];
    const param = (value: unknown): string => `$${params.push(value)}`;
    let today: string | undefined;
    const ranges = parts(() => (today ??= param(q.today)));
    const filters: string[] = [];
    if (q.types !== null) filters.push(`type = ANY (${param(q.types)}::text[])`);
    if (q.source === 'nse') filters.push('on_nse');
    if (q.source === 'bse') filters.push('on_bse');
    if (q.startDate !== null) filters.push(`start_date >= ${param(q.startDate)}`);
    if (q.endDate !== null) filters.push(`end_date <= ${param(q.endDate)}`);
    if (q.year !== null) filters.push(`start_date BETWEEN ${param(`${q.year}-01-01`)} AND ${param(`${q.year}-12-31`)}`);
    if (q.q !== undefined && q.q !== null) {
      // Contains, ASCII case ignored alone: both sides folded A-Z only (the symbol is stored
      // folded), and strpos, in which no character is special (LIKE's % _ \ would be).
      const text = param(asciiLower(q.q));
      filters.push(`(strpos(translate(name, '${ASCII_UPPER}', '${ASCII_LOWER}'), ${text}::text) > 0 OR strpos(symbol_folded, ${text}::text) > 0)`);
    }
    const where = (range: string): string => [range, ...filters].join(' AND ');
    const page = `LIMIT ${param(String(q.limit))}::bigint OFFSET ${param(String(q.offset))}::bigint`;
    const gmp = q.gmpAt === null ? null : param(q.gmpAt);
    const sub = q.subscriptionAt === null || q.subscriptionAt === undefined ? null : param(q.subscriptionAt);
    const keys = order.map(([c]) => c).join(', ');
    const orderBy = (prefix: string): string => order.map(([c, dir]) => `${prefix}${c}${dir}`).join(', ');
    const snapshot =
      gmp === null
        ? ''
        : `LEFT JOIN LATERAL (SELECT ${SNAPSHOT_COLUMNS} FROM ${s}.snapshots AS sn WHERE sn.ipo_id = p.id AND sn.ts <= ${gmp}::bigint ORDER BY sn.ts DESC LIMIT 1) AS g ON true`;
    const gmpColumns =
      (gmp === null ? 'NULL::float8 AS ts' : `${GMP_COLUMNS}${windows ? `, ${NEXT_SNAPSHOT(s, 'p.id', gmp)}` : ''}`) +
      (sub === null ? '' : `, ${SUBSCRIPTION_COLUMNS}${windows ? `, ${NEXT_SUBSCRIPTION(s, 'p.id', sub)}` : ''}`);
    // The count, the page and the data version in one round trip (one snapshot of the
    // data); the latest visible snapshot of each row on the page is one index probe (no
    // query per row).
    // Both plans find the page's keys first (index-only where no filter needs the row),
    // then read the documents of those rows alone.
    const keyRows = ranges.map((r) => `SELECT ${keys} FROM ${s}.ipos WHERE ${where(r)}`).join(' UNION ALL ');
    const tail = `LEFT JOIN ${s}.ipos AS i ON i.id = p.id
        ${snapshot}
        ${sub === null ? '' : LATEST_SUBSCRIPTION(s, 'p.id', sub)}
        ORDER BY ${orderBy('p.')}`;
    const sql =
      plan === 'ordered'
        ? `SELECT c.n, c.dv, i.doc::text AS doc, ${gmpColumns}
        FROM (SELECT (${ranges.map((r) => `(SELECT count(*) FROM ${s}.ipos WHERE ${where(r)})`).join(' + ')})::int AS n, (${VERSION_SQL(s)}) AS dv) AS c
        LEFT JOIN LATERAL (SELECT * FROM (${keyRows}) AS u ORDER BY ${orderBy('')} ${page}) AS p ON true
        ${tail}`
        : `WITH m AS MATERIALIZED (${keyRows})
        SELECT c.n, c.dv, i.doc::text AS doc, ${gmpColumns}
        FROM (SELECT count(*)::int AS n, (${VERSION_SQL(s)}) AS dv FROM m) AS c
        LEFT JOIN LATERAL (SELECT ${keys} FROM m ORDER BY ${orderBy('')} ${page}) AS p ON true
        ${tail}`;
    const { rows, sentAt } = await timedQuery<PageRow>(sql, params, call);
    const out: IpoRow[] = [];
    const range = { lo: -Infinity, hi: Infinity, slo: -Infinity, shi: Infinity };
    let bytes = 100;
    for (const r of rows) {
      if (r.doc === null) continue;
      const ipo = parseDoc(r.doc);
      bytes += rowBytes(r);
      out.push(rowOf(r, ipo, gmp !== null, sub !== null, range));
    }
    return { value: { count: Number(rows[0]?.n ?? 0), rows: out }, version: versionOf(rows[0]?.dv), sentAt, ...range, bytes };
  };

  /** An identifier's IPO as one statement reads it (see {@link readPage} for the rest). */
  const readIpo = async (
    identifier: string,
    gmpAt: number | null,
    subscriptionAt: number | null,
    windows: boolean,
    call: StoreCallOptions | undefined,
  ): Promise<VersionedRead<IpoRow | null>> => {
    const params: unknown[] = [identifier, asciiLower(identifier)];
    const gmp = gmpAt === null ? null : `$${params.push(gmpAt)}`;
    const sub = subscriptionAt === null ? null : `$${params.push(subscriptionAt)}`;
    const gmpColumns =
      (gmp === null ? 'NULL::float8 AS ts' : `${GMP_COLUMNS}${windows ? `, ${NEXT_SNAPSHOT(s, 'f.id', gmp)}` : ''}`) +
      (sub === null ? '' : `, ${SUBSCRIPTION_COLUMNS}${windows ? `, ${NEXT_SUBSCRIPTION(s, 'f.id', sub)}` : ''}`);
    // (the version as a one-row table: there is a row even when no IPO matches)
    const { rows, sentAt } = await timedQuery<PageRow>(
      `SELECT v.dv, f.doc, ${gmpColumns}
       FROM (SELECT (${VERSION_SQL(s)}) AS dv) AS v
       LEFT JOIN LATERAL (
         SELECT id, doc::text AS doc FROM (
           SELECT 1 AS rank, id, doc FROM ${s}.ipos WHERE id = $1
           UNION ALL SELECT 2, id, doc FROM ${s}.ipos WHERE symbol_folded = $2
           UNION ALL SELECT 3, id, doc FROM ${s}.ipos WHERE slug = $2
         ) AS candidates ORDER BY rank LIMIT 1
       ) AS f ON true
       ${gmp === null ? '' : `LEFT JOIN LATERAL (SELECT ${SNAPSHOT_COLUMNS} FROM ${s}.snapshots AS sn WHERE sn.ipo_id = f.id AND sn.ts <= ${gmp}::bigint ORDER BY sn.ts DESC LIMIT 1) AS g ON true`}
       ${sub === null ? '' : LATEST_SUBSCRIPTION(s, 'f.id', sub)}`,
      params,
      call,
    );
    const r = rows[0];
    const range = { lo: -Infinity, hi: Infinity, slo: -Infinity, shi: Infinity };
    const read = { version: versionOf(r?.dv), sentAt, bytes: 100 };
    if (r === undefined || r.doc === null) return { ...read, ...range, value: null };
    const ipo = parseDoc(r.doc);
    read.bytes += rowBytes(r);
    const value = rowOf(r, ipo, gmp !== null, sub !== null, range);
    return { ...read, ...range, value };
  };

  /** Every snapshot's `field` of one IPO, up to what the cache may hold; null beyond. */
  const readTimeline = async (ipoId: string, field: GmpField, call: StoreCallOptions | undefined): Promise<{ timeline: Timeline | null; version: bigint | null; sentAt: number }> => {
    const most = timelinePoints;
    const { rows, sentAt } = await timedQuery<{ dv: string | null; ts: number[] | null; vals: Array<number | null> | null }>(
      `SELECT (${VERSION_SQL(s)}) AS dv, array_agg(x.ts::float8 ORDER BY x.ts) AS ts, array_agg(x.v::float8 ORDER BY x.ts) AS vals
       FROM (SELECT ts, ${FIELD_COLUMN[field]} AS v FROM ${s}.snapshots WHERE ipo_id = $1 ORDER BY ts LIMIT $2) AS x`,
      [ipoId, most + 1],
      call,
    );
    const r = rows[0];
    const ts = r?.ts ?? [];
    return { timeline: ts.length > most ? null : toTimeline(ts.map(Number), (r?.vals ?? []).map((v) => (v === null ? null : Number(v)))), version: versionOf(r?.dv), sentAt };
  };

  const webhooks = webhookMethods({ s, db, query, transaction, ready: ensureReady });
  const sources = sourceMethods({ s, db, query, dataWrite, ready: ensureReady });

  return {
    async writeDataset({ ipos, snapshots, subscription = [] }, writeOptions) {
      return dataWrite(async (tx) => {
        // One writer at a time per schema: the conflict check and the writes are one step.
        await lockData(tx, s);
        const conflicts = await checkAndWriteData(tx, s, { ipos, snapshots, subscription }, writeOptions?.at ?? Date.now());
        return { result: conflicts, version: conflicts.length > 0 ? null : await dataVersion(tx, s) };
      });
    },

    async deleteIpos(ids, writeOptions) {
      return dataWrite(async (tx) => {
        await lockData(tx, s);
        const endpoints = await readEndpoints(tx, s);
        const recording = endpoints?.types.has('ipo.deleted') === true;
        const [row] = await tx.query<{ ipos: number; snapshots: number; gone: string[] | null }>(
          `WITH gone_snapshots AS (DELETE FROM ${s}.snapshots WHERE ipo_id = ANY ($1::text[]) RETURNING 1),
                gone_reports AS (DELETE FROM ${s}.source_reports WHERE ipo_id = ANY ($1::text[])),
                gone_ipos AS (DELETE FROM ${s}.ipos WHERE id = ANY ($1::text[]) RETURNING ${recording ? 'id' : '1'})
           SELECT (SELECT count(*) FROM gone_ipos)::int AS ipos, (SELECT count(*) FROM gone_snapshots)::int AS snapshots${
             recording ? ', (SELECT array_agg(id) FROM gone_ipos) AS gone' : ''
           }`,
          [ids],
        );
        if (recording && endpoints !== null) {
          // `ipo.deleted` per IPO removed, in the order of `ids` (docs/spec.md#webhooks).
          const gone = new Set(row?.gone ?? []);
          const deleted = ids.filter((id) => gone.delete(id));
          const at = writeOptions?.at ?? Date.now();
          const added = await recordEvents(tx, s, eventsOfWrite({ at, ipos: [], snapshots: [], deleted }, endpoints.types), at, endpoints);
          if (added.events > 0) await notifyDeliveries(tx, s);
        }
        // (the version the statement's triggers set: a statement does not see its own triggers' writes)
        return { result: { ipos: Number(row?.ipos ?? 0), snapshots: Number(row?.snapshots ?? 0) }, version: await dataVersion(tx, s) };
      });
    },

    async listIpos(q, call) {
      if (cache === null || !pageCacheable(q)) return (await readPage(q, false, call)).value;
      // Everything but gmpAt and subscriptionAt is the key; the page answers every gmpAt in
      // [lo, hi) and every subscriptionAt in [slo, shi).
      const subscriptionAt = q.subscriptionAt ?? null;
      const key = `page\u0000${q.gmpAt === null ? '' : 'gmp'}\u0000${subscriptionAt === null ? '' : 'sub'}\u0000${JSON.stringify([q.status, q.today, q.types, q.source, q.startDate, q.endDate, q.year, q.q ?? null, q.offset, q.limit])}`;
      const hit = cache.get(key);
      if (hit?.kind === 'page' && covers(hit, q.gmpAt, subscriptionAt)) return hit.page;
      const read = await readPage(q, true, call);
      const page = deepFreeze(read.value);
      cache.put(key, { kind: 'page', page, lo: read.lo, hi: read.hi, slo: read.slo, shi: read.shi }, read.bytes + 2 * key.length, read.version, read.sentAt);
      return page;
    },

    async findIpo({ identifier, gmpAt, subscriptionAt = null }, call) {
      const exact = (at: number | null): boolean => at === null || Number.isSafeInteger(at);
      if (cache === null || !exact(gmpAt) || !exact(subscriptionAt)) return (await readIpo(identifier, gmpAt, subscriptionAt, false, call)).value;
      const key = `${gmpAt === null ? 'ipo' : 'ipogmp'}${subscriptionAt === null ? '' : 'sub'}\u0000${identifier}`;
      const hit = cache.get(key);
      if (hit?.kind === 'row' && covers(hit, gmpAt, subscriptionAt)) return hit.row;
      const read = await readIpo(identifier, gmpAt, subscriptionAt, true, call);
      // Only what was found is kept (as with keys): lookups of random identifiers would
      // otherwise push real entries out.
      if (read.value === null) {
        cache.saw(read.version, read.sentAt);
        return null;
      }
      const row = deepFreeze(read.value);
      cache.put(key, { kind: 'row', row, lo: read.lo, hi: read.hi, slo: read.slo, shi: read.shi }, read.bytes + 2 * key.length, read.version, read.sentAt);
      return row;
    },

    async subscriptionSeries(q: SubscriptionQuery, call?: StoreCallOptions): Promise<SubscriptionRecord[]> {
      // A few dozen rows per IPO: read in SQL each time (one range of the primary key), within the call's deadline.
      const rows = await query<SubscriptionRow>(
        `SELECT ${SUBSCRIPTION_SELECT('sb')} FROM ${s}.subscription_snapshots AS sb
         WHERE sb.ipo_id = $1 AND sb.ts BETWEEN $2::bigint AND $3::bigint ORDER BY sb.ts`,
        [q.ipoId, q.from, q.to],
        call,
      );
      return rows.map((r) => subscriptionOf(r, q.ipoId)!);
    },

    async gmpBuckets(q: GmpBucketQuery, call?: StoreCallOptions): Promise<GmpBucket[]> {
      if (cache !== null && timelinePoints > 0 && Object.hasOwn(FIELD_COLUMN, q.field) && timelineFits(q)) {
        const key = `timeline\u0000${q.field}\u0000${q.ipoId}`;
        let hit = cache.get(key);
        if (hit?.kind !== 'timeline') {
          const read = await readTimeline(q.ipoId, q.field, call);
          hit = { kind: 'timeline', timeline: read.timeline };
          cache.put(key, hit, 16 * (read.timeline?.ts.length ?? 0) + 200 + 2 * key.length, read.version, read.sentAt);
        }
        // (null: too many snapshots to keep, or numbers too large to bucket exactly here)
        if (hit.timeline !== null) return timelineBuckets(hit.timeline, q);
      }
      const column = FIELD_COLUMN[q.field];
      // Buckets are numbered from the one that holds `from`: every ts in range is at or
      // after it, so the bucket of a row is one subtraction and one integer division, and its
      // start is first + k * size.
      const first = firstBucketStart(q);
      const rows = await query<{ k: number; sum: string; count: number }>(
        `SELECT k::float8 AS k, coalesce(sum(v), 0)::text AS sum, count(v)::int AS count
         FROM (
           SELECT (ts - $4::bigint) / $5::bigint AS k, ${column} AS v
           FROM ${s}.snapshots WHERE ipo_id = $1 AND ts BETWEEN $2::bigint AND $3::bigint
         ) AS b
         GROUP BY b.k ORDER BY b.k`,
        [q.ipoId, q.from, q.to, first, q.size],
        call,
      );
      return rows.map((r) => ({ start: first + Number(r.k) * q.size, sum: exactSum(r.sum), count: Number(r.count) }));
    },

    async insertAccount(account) {
      await query(`INSERT INTO ${s}.accounts (id, name, plan, gmp_addon, created_at) VALUES ($1, $2, $3, $4, $5)`, [
        account.id,
        account.name,
        account.plan,
        account.gmpAddon,
        account.createdAt,
      ]);
    },

    async getAccount(id) {
      const rows = await query<AccountRow>(`SELECT * FROM ${s}.accounts WHERE id = $1`, [id]);
      return rows[0] === undefined ? null : accountOf(rows[0]);
    },

    async listAccounts({ after, limit }) {
      const rows = await query<AccountRow>(`SELECT * FROM ${s}.accounts WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2`, [after, limit]);
      return rows.map(accountOf);
    },

    async updateAccount(input) {
      // (migration 5: the limit counts the keys active at `now`)
      const rows = await query<AccountRow>(`SELECT * FROM ${s}.update_account_at($1, $2, $3, $4, $5, $6, $7)`, [
        input.id,
        input.plan ?? null,
        input.gmpAddon ?? null,
        input.now,
        ...limits(input.maxActiveKeys),
      ]);
      const r = rows[0];
      if (r === undefined) return 'not-found';
      if (r.plan === null) return 'too-many-keys';
      return accountOf(r);
    },

    async insertApiKey({ key, maxActiveKeys, now }) {
      const rows = await query<{ result: 'ok' | 'not-found' | 'too-many-keys' }>(
        `SELECT ${s}.insert_api_key_at($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS result`,
        [key.id, key.accountId, key.hash, key.prefix, key.label, key.createdAt, key.revokedAt, key.expiresAt, key.lastUsedAt, now, ...limits(maxActiveKeys)],
      );
      return rows[0]?.result ?? 'not-found';
    },

    async rotateApiKey({ id, key, now, overlapEndsAt, maxActiveKeys }) {
      // One statement: the function checks and writes under the account's lock (migrations 5
      // and 10) and names the new key's account, label and expiry (the old key's); the rest of
      // the record is the input's.
      const rows = await query<{ r_status: 'ok' | 'not-found' | 'inactive' | 'too-many-keys'; r_account: string | null; r_label: string | null; r_expires: string | null }>(
        `SELECT r_status, r_account, r_label, r_expires FROM ${s}.rotate_api_key_keep_expiry($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [id, key.id, key.hash, key.prefix, key.createdAt, now, overlapEndsAt, ...limits(maxActiveKeys)],
      );
      const r = rows[0];
      if (r === undefined) return 'not-found';
      if (r.r_status !== 'ok') return r.r_status;
      return {
        id: key.id,
        accountId: r.r_account!,
        hash: key.hash,
        prefix: key.prefix,
        label: r.r_label!,
        createdAt: key.createdAt,
        revokedAt: null,
        expiresAt: r.r_expires,
        lastUsedAt: null,
        rotatedFrom: id,
      };
    },

    async listApiKeys(accountId) {
      // The account joined to its keys: no row means no account, a row of NULLs no keys.
      const rows = await query<Omit<KeyRow, 'id'> & { id: string | null }>(
        `SELECT k.id, k.account_id, k.hash, k.prefix, k.label, k.created_at, k.revoked_at, k.expires_at, k.last_used_at, k.rotated_from
         FROM ${s}.accounts a LEFT JOIN ${s}.api_keys k ON k.account_id = a.id
         WHERE a.id = $1 ORDER BY k.created_at, k.id`,
        [accountId],
      );
      if (rows.length === 0) return null;
      return rows.filter((r): r is KeyRow => r.id !== null).map(keyOf);
    },

    async revokeApiKey({ id, at }) {
      const rows = await query<{ id: string }>(
        `UPDATE ${s}.api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING id`,
        [id, at],
      );
      return rows.length > 0;
    },

    async recordKeyUse({ id, at }, call) {
      // On the request path (at most once a minute per key and process): within the call's
      // deadline, as findApiKey. A later use recorded by another process is kept.
      await query(
        `UPDATE ${s}.api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
        [id, at],
        call,
      );
    },

    async findApiKey(hash, call): Promise<KeyGrant | null> {
      const rows = await query<{ key_id: string; account_id: string; plan: Plan; gmp_addon: boolean; revoked: boolean; expires_at: string | null }>(
        `SELECT k.id AS key_id, a.id AS account_id, a.plan, a.gmp_addon, k.revoked_at IS NOT NULL AS revoked, k.expires_at
         FROM ${s}.api_keys k JOIN ${s}.accounts a ON a.id = k.account_id WHERE k.hash = $1`,
        [hash],
        call,
      );
      const r = rows[0];
      return r === undefined
        ? null
        : { keyId: r.key_id, accountId: r.account_id, plan: r.plan, gmpAddon: r.gmp_addon, revoked: r.revoked, expiresAt: r.expires_at };
    },

    async hitRateLimit({ now, windows, usage }, call?: StoreCallOptions): Promise<RateLimitOutcome> {
      // (with every window off a keyed request is still counted: the statement runs)
      if (windows.length === 0 && usage === undefined) return { admitted: true, windows: [] };
      hitsSinceSweep += 1;
      const sweep = hitsSinceSweep >= sweepEvery;
      if (sweep) hitsSinceSweep = 0;
      await ensureReady();
      const rows = await db.queryWithin<{ admitted: boolean; hit_count: number; oldest: number | null; blocking: number | null }>(call, (msLeft) => {
        let budget: number | null = null;
        if (msLeft !== null) {
          budget = statementBudget(msLeft);
          if (budget === null) throw new IpokitError('ERR:UNAVAILABLE', 'The rate-limit call was not started: too little time was left before its deadline.');
        }
        return [
          `SELECT admitted, hit_count, oldest, blocking FROM ${s}.rate_limit_hit($1::float8, $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::text, $7::text, $8::text, $9::text, $10::boolean, $11::float8)`,
          [
            now,
            windows.map(storageKey),
            windows.map((w) => w.quota),
            windows.map((w) => w.ms),
            windows.map((w) => w.start ?? null),
            usage?.accountId ?? null,
            usage?.keyId ?? null,
            usage?.route ?? null,
            usage?.day ?? null,
            sweep,
            budget,
          ],
        ];
      });
      return {
        admitted: rows.every((r) => r.admitted),
        windows: rows.map((r) => ({
          count: Number(r.hit_count),
          oldest: r.oldest === null ? null : Number(r.oldest),
          blocking: r.blocking === null ? null : Number(r.blocking),
        })),
      };
    },

    async peekRateLimit({ now, windows }): Promise<RateLimitWindowState[]> {
      if (windows.length === 0) return [];
      await ensureReady();
      // A sliding window: every hit it holds (at most the quota it was recorded under, with
      // those that left and are not yet deleted), from which the core's rule picks those
      // inside it and describes them. A calendar window: its count.
      const rows = await query<{ n: number | null; hits: Array<number | string> | null }>(
        `SELECT w.n_hits AS n, CASE WHEN w.period_start IS NULL THEN
             (SELECT array_agg(h.ts ORDER BY h.ts) FROM ${s}.rate_hits AS h WHERE h.window_id = w.id AND h.ts >= w.oldest_ts)
           END AS hits
         FROM unnest($1::text[]) WITH ORDINALITY AS u(k, i) LEFT JOIN ${s}.rate_windows AS w ON w.key = u.k ORDER BY u.i`,
        [windows.map(storageKey)],
      );
      return windows.map((w, i) => {
        const r = rows[i];
        if (w.start !== undefined) {
          const count = Number(r?.n ?? 0);
          return { count, oldest: count > 0 ? w.start : null, blocking: count > 0 && count >= w.quota ? w.start : null };
        }
        return rateLimitPeek({ now, windows: [{ quota: w.quota, ms: w.ms, hits: (r?.hits ?? []).map(Number) }] })[0]!;
      });
    },

    async readUsage({ accountId, from, to, keyId }): Promise<UsageRow[]> {
      const rows = await query<{ day: string; key_id: string; route: UsageRoute; admitted: number; refused: number }>(
        `SELECT day, key_id, route, admitted::float8 AS admitted, refused::float8 AS refused FROM ${s}.key_usage
         WHERE account_id = $1 AND day >= $2 AND day <= $3 AND ($4::text IS NULL OR key_id = $4) AND (admitted <> 0 OR refused <> 0)
         ORDER BY day, key_id, route`,
        [accountId, from, to, keyId ?? null],
      );
      return rows.map((r) => ({ day: r.day, keyId: r.key_id, route: r.route, admitted: Number(r.admitted), refused: Number(r.refused) }));
    },

    ...webhooks.methods,
    ...sources,

    async close() {
      closed = true;
      cache?.close();
      await webhooks.stopWatches();
    },
  };
}

/**
 * What the cache keeps: a row of findIpo, a page of listIpos (each answering gmpAt in
 * [lo, hi) and subscriptionAt in [slo, shi)), a timeline.
 */
type Cached =
  | ({ kind: 'row'; row: IpoRow } & AtRanges)
  | ({ kind: 'page'; page: { count: number; rows: IpoRow[] } } & AtRanges)
  | { kind: 'timeline'; timeline: Timeline | null };

/**
 * Over which instants a read's latest snapshots stay the same: gmpAt in [lo, hi) (lo: the
 * latest of them; hi: the first later snapshot of any row), subscriptionAt in [slo, shi).
 */
interface AtRanges {
  lo: number;
  hi: number;
  slo: number;
  shi: number;
}

/** An answer as one statement read it, for the cache (see `readPage`). */
interface VersionedRead<T> extends AtRanges {
  value: T;
  version: bigint | null;
  sentAt: number;
  /** Its estimated size in memory. */
  bytes: number;
}

/** Most snapshots of one IPO the cache keeps for the GMP series (1.6 MB); more are bucketed in SQL. */
const MAX_TIMELINE = 100_000;

/** The data version (migration 3), as text (a bigint), or null if the row is missing. */
const VERSION_SQL = (s: string): string => `SELECT version::text FROM ${s}.data_version`;

/** The first snapshot of `id` after `gmp` (a parameter), as `next_ts`: where a cached gmp stops answering. */
const NEXT_SNAPSHOT = (s: string, id: string, gmp: string): string =>
  `(SELECT min(x.ts) FROM ${s}.snapshots AS x WHERE x.ipo_id = ${id} AND x.ts > ${gmp}::bigint)::float8 AS next_ts`;

/** Whether a cached page can answer `q`: whole numbers that key it exactly (anything else goes to SQL). */
function pageCacheable(q: ListQuery): boolean {
  const subscriptionAt = q.subscriptionAt ?? null;
  return (
    Number.isSafeInteger(q.offset) &&
    Number.isSafeInteger(q.limit) &&
    (q.gmpAt === null || Number.isSafeInteger(q.gmpAt)) &&
    (subscriptionAt === null || Number.isSafeInteger(subscriptionAt))
  );
}

/** Whether a cached row or page answers these instants: its latest snapshots are theirs. */
function covers(entry: AtRanges, gmpAt: number | null, subscriptionAt: number | null): boolean {
  return (gmpAt === null || (entry.lo <= gmpAt && gmpAt < entry.hi)) && (subscriptionAt === null || (entry.slo <= subscriptionAt && subscriptionAt < entry.shi));
}

/**
 * A row of a page or lookup: the IPO, with `gmp` when asked for (`gmp`) and `subscription`
 * when asked for (`sub`); `range` narrowed to the instants over which they stay the same.
 */
function rowOf(r: PageRow, ipo: IpoRecord, gmp: boolean, sub: boolean, range: AtRanges): IpoRow {
  const row: IpoRow = { ipo };
  if (gmp) {
    const latest = snapshotOf(r, ipo.id);
    row.gmp = latest;
    if (latest !== null) range.lo = Math.max(range.lo, latest.timestamp);
    if (r.next_ts !== null && r.next_ts !== undefined) range.hi = Math.min(range.hi, Number(r.next_ts));
  }
  if (sub) {
    const latest = subscriptionOf(r, ipo.id);
    row.subscription = latest;
    if (latest !== null) range.slo = Math.max(range.slo, latest.timestamp);
    if (r.s_next_ts !== null && r.s_next_ts !== undefined) range.shi = Math.min(range.shi, Number(r.s_next_ts));
  }
  return row;
}

/** A row's estimated size in memory: about twice its JSON text (V8 strings of 1 or 2 bytes a character), plus objects. */
function rowBytes(r: PageRow): number {
  const text = (x: unknown): number => (typeof x === 'string' ? x.length : 0);
  return 2 * (text(r.doc) + text(r.sources)) + 200;
}

function versionOf(text: string | null | undefined): bigint | null {
  return text === null || text === undefined ? null : BigInt(text);
}

/** The data version as the transaction sees it (its own writes moved it on). */
export async function dataVersion(tx: Transaction, s: string): Promise<bigint | null> {
  const rows = await tx.query<{ dv: string | null }>(`SELECT (${VERSION_SQL(s)}) AS dv`);
  return versionOf(rows[0]?.dv);
}

/**
 * Freezes `value` and everything in it: cached answers are shared by every request (as
 * the memory store's records are, frozen too).
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A subscription snapshot's columns as {@link SUBSCRIPTION_SELECT} reads them (numeric as text). */
type SubscriptionRow = { s_ts?: number | null } & Partial<Record<`s_${keyof SubscriptionTimes}`, string | null>>;

/**
 * A row of a page: the IPO's doc and, with GMP, its latest snapshot's columns (one per
 * `GMP_FIELDS` field), and with subscription its latest subscription snapshot's.
 */
interface PageRow extends Partial<Record<GmpField, number | null>>, SubscriptionRow {
  n?: number;
  dv?: string | null;
  next_ts?: number | null;
  s_next_ts?: number | null;
  doc: IpoRecord | string | null;
  ts: number | null;
  sources?: Array<{ name: string; paise: number }> | string;
}

interface AccountRow {
  id: string;
  name: string;
  plan: Plan | null;
  gmp_addon: boolean;
  created_at: string;
}

interface KeyRow {
  id: string;
  account_id: string;
  hash: string;
  prefix: string;
  label: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  rotated_from: string | null;
}

/** Fails with `ERR:UNAVAILABLE`, saying to run `migrate()`, unless schema `s` is migrated far enough. */
export async function checkSchema(db: Database, s: string): Promise<void> {
  let version: number | null;
  try {
    const rows = await db.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${s}.migrations`);
    version = rows[0]?.v ?? null;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    // 42P01 undefined_table, 3F000 invalid_schema_name: never migrated
    if (code === '42P01' || code === '3F000') version = null;
    else throw err;
  }
  if (version === null || version < SCHEMA_VERSION) {
    throw new IpokitError(
      'ERR:UNAVAILABLE',
      `The PostgreSQL schema ${s} is ${version === null ? 'not migrated' : `at version ${version}`}; this version of @ipokit/storage-postgres needs version ${SCHEMA_VERSION}: run migrate(client) first.`,
    );
  }
}

/**
 * Takes the schema's data lock for the rest of the transaction: imports and deletions run
 * one at a time, each checking conflicts and writing as one step.
 */
export async function lockData(tx: Transaction, s: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', advisoryKey(`${s}.data`));
}

/** The data of one write: IPOs, GMP snapshots and subscription snapshots, checked and normalised. */
export interface DataWrite {
  ipos: readonly IpoRecord[];
  snapshots: readonly SnapshotRecord[];
  subscription: readonly SubscriptionRecord[];
}

/**
 * The body of `writeDataset`, in the caller's transaction (which holds the data lock, see
 * {@link lockData}): checks the conflicts with stored data and, when there is none, writes
 * `data` and records its events at `at` (announcing new deliveries). Resolves to the
 * conflicts; with any, nothing is written.
 *
 * @example
 * ```ts
 * await lockData(tx, s);
 * const conflicts = await checkAndWriteData(tx, s, { ipos, snapshots, subscription: [] }, Date.now());
 * ```
 */
export async function checkAndWriteData(tx: Transaction, s: string, data: DataWrite, at: number): Promise<DatasetConflict[]> {
  const { ipos, snapshots, subscription } = data;
  const conflicts = await findConflicts(tx, s, ipos, snapshots, subscription);
  if (conflicts.length > 0) return conflicts;
  // The write's events, recorded in its transaction (docs/spec.md#webhooks): none, and
  // nothing more done, when no endpoint is enabled.
  const endpoints = await readEndpoints(tx, s);
  // deliveries and snapshot-event rows added: announced once, when any were
  let added = 0;
  // (an IPO's event shows its latest subscription snapshot at `at` after the write: this write's, or a stored one)
  const written = subscription.length > 0 && ipoEventsOf(endpoints).any ? latestSubscriptions(subscription, at) : undefined;
  for (let i = 0; i < ipos.length; i += IPO_BATCH) added += await writeIpoBatch(tx, s, ipos.slice(i, i + IPO_BATCH), endpoints, at, written);
  for (let i = 0; i < snapshots.length; i += SNAPSHOT_BATCH) {
    added += await writeSnapshotBatch(tx, s, snapshots.slice(i, i + SNAPSHOT_BATCH), endpoints, at);
  }
  for (let i = 0; i < subscription.length; i += SNAPSHOT_BATCH) {
    added += await writeSubscriptionBatch(tx, s, subscription.slice(i, i + SNAPSHOT_BATCH), endpoints, at);
  }
  if (added > 0) await notifyDeliveries(tx, s);
  return [];
}

/** What the conflict check needs of a dataset's IPO: its id, symbol and slug. */
export interface IpoKeys {
  id: string;
  symbol: string | null;
  slug: string;
}

async function findConflicts(
  tx: Transaction,
  s: string,
  ipos: readonly IpoRecord[],
  snapshots: readonly SnapshotRecord[],
  subscription: readonly SubscriptionRecord[],
): Promise<DatasetConflict[]> {
  const conflicts: DatasetConflict[] = [];
  const incoming = new Set(ipos.map((ipo) => ipo.id));
  const outside = new Set<string>();
  for (const x of snapshots) if (!incoming.has(x.ipoId)) outside.add(x.ipoId);
  for (const x of subscription) if (!incoming.has(x.ipoId)) outside.add(x.ipoId);
  const unknown = await unstoredIpoIds(tx, s, [...outside]);
  if (unknown.size > 0) {
    snapshots.forEach((x, i) => {
      if (unknown.has(x.ipoId)) conflicts.push({ kind: 'unknown-ipo', snapshot: i });
    });
    subscription.forEach((x, i) => {
      if (unknown.has(x.ipoId)) conflicts.push({ kind: 'unknown-ipo-subscription', snapshot: i });
    });
  }
  conflicts.push(...(await findIpoConflicts(tx, s, ipos)));
  return conflicts;
}

/** Of these ids (of IPOs not in the dataset), those that name no stored IPO. */
export async function unstoredIpoIds(tx: Transaction, s: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.query<{ id: string }>(`SELECT id FROM ${s}.ipos WHERE id = ANY ($1::text[])`, [ids]);
  const stored = new Set(rows.map((r) => r.id));
  return new Set(ids.filter((id) => !stored.has(id)));
}

/**
 * The dataset's IPOs (by index) whose symbol (ignoring ASCII case) or slug is held by a
 * stored IPO that the dataset does not replace.
 */
export async function findIpoConflicts(tx: Transaction, s: string, ipos: readonly IpoKeys[]): Promise<DatasetConflict[]> {
  const conflicts: DatasetConflict[] = [];
  if (ipos.length === 0) return conflicts;
  const symbols = ipos.map((ipo) => (ipo.symbol === null ? null : asciiLower(ipo.symbol)));
  const rows = await tx.query<{ id: string; symbol_folded: string | null; slug: string }>(
    `SELECT id, symbol_folded, slug FROM ${s}.ipos
     WHERE (symbol_folded = ANY ($1::text[]) OR slug = ANY ($2::text[])) AND NOT (id = ANY ($3::text[]))`,
    [symbols.filter((x) => x !== null), ipos.map((ipo) => ipo.slug), ipos.map((ipo) => ipo.id)],
  );
  const bySymbol = new Map<string, string>();
  const bySlug = new Map<string, string>();
  for (const r of rows) {
    if (r.symbol_folded !== null) bySymbol.set(r.symbol_folded, r.id);
    bySlug.set(r.slug, r.id);
  }
  ipos.forEach((ipo, i) => {
    const symbol = symbols[i];
    const symbolHolder = symbol === null || symbol === undefined ? undefined : bySymbol.get(symbol);
    if (symbolHolder !== undefined) conflicts.push({ kind: 'symbol-taken', ipo: i, holder: symbolHolder });
    const slugHolder = bySlug.get(ipo.slug);
    if (slugHolder !== undefined) conflicts.push({ kind: 'slug-taken', ipo: i, holder: slugHolder });
  });
  return conflicts;
}

/** Upserts IPO records in one statement: each replaces the stored IPO with its id, whole. */
export async function upsertIpos(tx: Transaction, s: string, ipos: readonly IpoRecord[]): Promise<void> {
  await tx.query(UPSERT_IPOS(s), [JSON.stringify(ipos.map(ipoRow))]);
}

/** Upserts snapshots in one statement: each replaces the stored one with its (ipoId, instant). */
export async function upsertSnapshots(tx: Transaction, s: string, snapshots: readonly SnapshotRecord[]): Promise<void> {
  await tx.query(UPSERT_SNAPSHOTS(s), [JSON.stringify(snapshots.map(snapshotRow))]);
}

/** Upserts subscription snapshots in one statement: each replaces the stored one with its (ipoId, instant). */
export async function upsertSubscription(tx: Transaction, s: string, records: readonly SubscriptionRecord[]): Promise<void> {
  await tx.query(UPSERT_SUBSCRIPTION(s), [JSON.stringify(records.map(subscriptionRow))]);
}

/**
 * Whether some enabled endpoint takes an event of an IPO written, whether one of an IPO
 * changed, and whether one shows the IPO object (which carries its subscription snapshot).
 */
function ipoEventsOf(endpoints: Endpoints | null): { any: boolean; changes: boolean; objects: boolean } {
  const types = endpoints?.types;
  if (types === undefined) return { any: false, changes: false, objects: false };
  const changes = types.has('ipo.updated') || types.has('ipo.status_changed');
  return { any: changes || types.has('ipo.created'), changes, objects: types.has('ipo.created') || types.has('ipo.updated') };
}

/**
 * Of a write's subscription snapshots, each IPO's latest at or before `at`: what its IPO
 * object shows after the write unless a later stored one is (see {@link writeIpoBatch}).
 *
 * @example
 * ```ts
 * latestSubscriptions(subscription, Date.now()).get('a1'); // the write's latest snapshot of a1 up to now, or undefined
 * ```
 */
export function latestSubscriptions(records: Iterable<SubscriptionRecord>, at: number): Map<string, SubscriptionRecord> {
  const latest = new Map<string, SubscriptionRecord>();
  for (const x of records) {
    if (x.timestamp > at) continue;
    const seen = latest.get(x.ipoId);
    if (seen === undefined || seen.timestamp <= x.timestamp) latest.set(x.ipoId, x);
  }
  return latest;
}

/**
 * Writes a batch of a data write's IPOs, in its transaction, and records their events
 * (docs/spec.md#webhooks) as owed, once each (deliveries are made later): with no enabled endpoint taking an IPO's
 * event, the upsert alone. Otherwise the stored IPOs of the batch's ids are read first: an
 * id not stored is `ipo.created`; a stored IPO is compared with the core's `sameIpo` (the one
 * definition of "changed"), and one that differs is written, `ipo.updated` and maybe
 * `ipo.status_changed`; one that does not is left as it is. The events are `eventsOfWrite`'s.
 * Resolves to how many events were recorded (the caller notifies once, when any were).
 *
 * An IPO object in an event carries the IPO's latest subscription snapshot at `at` after
 * the write: the later of `written`'s (the write's own, {@link latestSubscriptions}) and
 * the latest stored one (read only when `ipo.created` or `ipo.updated` is taken); at the
 * same instant the write's, which replaces the stored one.
 *
 * @example
 * ```ts
 * const endpoints = await readEndpoints(tx, s);
 * const added = await writeIpoBatch(tx, s, ipos, endpoints, Date.now(), latestSubscriptions(subscription, Date.now()));
 * ```
 */
export async function writeIpoBatch(
  tx: Transaction,
  s: string,
  ipos: readonly IpoRecord[],
  endpoints: Endpoints | null,
  at: number,
  written?: ReadonlyMap<string, SubscriptionRecord>,
): Promise<number> {
  const wanted = ipoEventsOf(endpoints);
  if (endpoints === null || !wanted.any) {
    await upsertIpos(tx, s, ipos);
    return 0;
  }
  const rows = await tx.query<{ id: string; doc: string | null }>(
    `SELECT id, ${wanted.changes ? 'doc::text' : 'NULL::text'} AS doc FROM ${s}.ipos WHERE id = ANY ($1::text[])`,
    [ipos.map((ipo) => ipo.id)],
  );
  const stored = new Map(rows.map((r) => [r.id, r.doc]));
  const changed: Array<{ ipo: IpoRecord; before: IpoDates | null }> = [];
  for (const ipo of ipos) {
    const doc = stored.get(ipo.id);
    if (doc === undefined) {
      changed.push({ ipo, before: null });
    } else if (wanted.changes && doc !== null) {
      const before = parseDoc(doc);
      if (!sameIpo(before, ipo)) changed.push({ ipo, before: { startDate: before.startDate, endDate: before.endDate, listingDate: before.listingDate } });
    }
  }
  // (when only ipo.created is taken, every IPO is written, as without events)
  const writing = wanted.changes ? changed.map((c) => c.ipo) : ipos;
  if (writing.length > 0) await upsertIpos(tx, s, writing);
  const shown = wanted.objects ? await withSubscriptions(tx, s, changed, at, written) : changed;
  const events = eventsOfWrite({ at, ipos: shown, snapshots: [], deleted: [] }, endpoints.types);
  return (await recordEvents(tx, s, events, at, endpoints)).events;
}

/** The changed IPOs of {@link writeIpoBatch}, each with its latest subscription snapshot at `at` (null: none). */
async function withSubscriptions(
  tx: Transaction,
  s: string,
  changed: ReadonlyArray<{ ipo: IpoRecord; before: IpoDates | null }>,
  at: number,
  written: ReadonlyMap<string, SubscriptionRecord> | undefined,
): Promise<Array<{ ipo: IpoRecord; before: IpoDates | null; subscription: SubscriptionRecord | null }>> {
  // (an IPO not stored before has no stored snapshot: the foreign key)
  const ids = changed.filter((c) => c.before !== null).map((c) => c.ipo.id);
  const stored = new Map<string, SubscriptionRecord>();
  if (ids.length > 0) {
    const rows = await tx.query<SubscriptionRow & { ipo_id: string }>(
      `SELECT DISTINCT ON (sb.ipo_id) sb.ipo_id, ${SUBSCRIPTION_SELECT('sb')} FROM ${s}.subscription_snapshots AS sb
       WHERE sb.ipo_id = ANY ($1::text[]) AND sb.ts <= $2::bigint ORDER BY sb.ipo_id, sb.ts DESC`,
      [ids, at],
    );
    for (const r of rows) stored.set(r.ipo_id, subscriptionOf(r, r.ipo_id)!);
  }
  return changed.map((c) => {
    const mine = written?.get(c.ipo.id);
    const theirs = stored.get(c.ipo.id);
    const latest = mine === undefined ? theirs : theirs === undefined || theirs.timestamp <= mine.timestamp ? mine : theirs;
    return { ...c, subscription: latest ?? null };
  });
}

/**
 * Writes a batch of a data write's subscription snapshots, in its transaction, and records
 * their `subscription.snapshot` events when an enabled endpoint takes them (else the upsert
 * alone): the stored snapshots of the batch's (ipoId, instant) are read first and compared
 * with the core's `sameSubscription`; those new or changed are written and their events
 * (`eventsOfWrite`'s) recorded, in the batch's order. Resolves to how many events were recorded.
 *
 * @example
 * ```ts
 * const added = await writeSubscriptionBatch(tx, s, subscription, endpoints, Date.now());
 * ```
 */
export async function writeSubscriptionBatch(
  tx: Transaction,
  s: string,
  records: readonly SubscriptionRecord[],
  endpoints: Endpoints | null,
  at: number,
): Promise<number> {
  if (endpoints === null || !endpoints.types.has('subscription.snapshot')) {
    await upsertSubscription(tx, s, records);
    return 0;
  }
  const rows = await tx.query<SubscriptionRow & { ipo_id: string }>(
    `SELECT sb.ipo_id, ${SUBSCRIPTION_SELECT('sb')} FROM ${s}.subscription_snapshots AS sb
     WHERE (sb.ipo_id, sb.ts) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`,
    [records.map((x) => x.ipoId), records.map((x) => x.timestamp)],
  );
  const stored = new Map(rows.map((r) => [`${r.ipo_id}\u0000${Number(r.s_ts)}`, subscriptionOf(r, r.ipo_id)!]));
  const changed = records.filter((x) => {
    const before = stored.get(`${x.ipoId}\u0000${x.timestamp}`);
    return before === undefined || !sameSubscription(before, x);
  });
  if (changed.length === 0) return 0;
  await upsertSubscription(tx, s, changed);
  const events = eventsOfWrite({ at, ipos: [], snapshots: [], subscription: changed, deleted: [] }, endpoints.types);
  return (await recordEvents(tx, s, events, at, endpoints)).events;
}

/**
 * Writes a batch of a data write's snapshots, in its transaction, and records their
 * `gmp.snapshot` events when an enabled endpoint takes them (else the upsert alone). One
 * statement writes the snapshots that are new or differ from the stored one, as the core's
 * `sameSnapshot` compares them (sources in order, by name and paise, and every aggregation),
 * and copies those, in the batch's order, into one `snapshot_changes` row (migration 9),
 * each at its place in the owed order (migration 11; the head moved to the last): the events
 * as the write recorded them. Claims and listings build them into owed events afterwards
 * (`buildSnapshotEvents`) and make the deliveries per endpoint, so that the write pays for
 * one row, not for one event and one delivery per snapshot and endpoint. Resolves to how
 * many rows were added (0 or 1).
 *
 * @example
 * ```ts
 * const added = await writeSnapshotBatch(tx, s, snapshots, endpoints, Date.now());
 * ```
 */
export async function writeSnapshotBatch(tx: Transaction, s: string, snapshots: readonly SnapshotRecord[], endpoints: Endpoints | null, at: number): Promise<number> {
  if (endpoints === null || !endpoints.types.has('gmp.snapshot')) {
    await upsertSnapshots(tx, s, snapshots);
    return 0;
  }
  const [row] = await tx.query<{ rows: number }>(RECORD_CHANGED_SNAPSHOTS(s), [JSON.stringify(snapshots.map(snapshotRow)), at, endpoints.upTo]);
  return Number(row?.rows ?? 0);
}

const UPSERT_IPOS = (s: string): string => `
INSERT INTO ${s}.ipos (id, name, symbol_folded, slug, type, on_nse, on_bse, start_date, end_date, listing_date, doc)
SELECT id, name, symbol_folded, slug, type, on_nse, on_bse, start_date, end_date, listing_date, doc
FROM json_to_recordset($1::json) AS x(
  id text, name text, symbol_folded text, slug text, type text, on_nse boolean, on_bse boolean,
  start_date text, end_date text, listing_date text, doc json
)
ON CONFLICT (id) DO UPDATE SET
  name = excluded.name, symbol_folded = excluded.symbol_folded, slug = excluded.slug, type = excluded.type,
  on_nse = excluded.on_nse, on_bse = excluded.on_bse, start_date = excluded.start_date,
  end_date = excluded.end_date, listing_date = excluded.listing_date, doc = excluded.doc`;

const UPSERT_SNAPSHOTS = (s: string): string => `
INSERT INTO ${s}.snapshots AS t (ipo_id, ts, sources, ${AGG_COLUMNS})
SELECT ipo_id, ts, sources, ${AGG_COLUMNS}
FROM json_to_recordset($1::json) AS x(
  ipo_id text, ts bigint, sources json, ${GMP_FIELDS.map((f) => `${FIELD_COLUMN[f]} bigint`).join(', ')}
)
ON CONFLICT (ipo_id, ts) DO UPDATE SET
  sources = excluded.sources, ${GMP_FIELDS.map((f) => `${FIELD_COLUMN[f]} = excluded.${FIELD_COLUMN[f]}`).join(', ')}`;

// UPSERT_SNAPSHOTS, writing only the snapshots that are new or differ from the stored one
// (sources compared as jsonb: arrays in order, objects by their name and paise; aggregations as
// numbers, null-safe: what sameSnapshot compares), and copying those into one snapshot_changes
// row (migration 9), in the batch's order: the insert takes the rows of the function scan in
// order and returns them in that order, and one aggregate step reads them in that order into
// every array at once (the order tests in webhooks.test.ts pin it). Arrays, not a JSON array
// per snapshot grouped by thousands as migration 7's rows were: that cost a 10,000-snapshot
// write about 17 ms of its statements' 92, the arrays about 8.
const RECORD_CHANGED_SNAPSHOTS = (s: string): string => `
WITH up AS (${UPSERT_SNAPSHOTS(s)}
  WHERE (t.sources::jsonb, ${GMP_FIELDS.map((f) => `t.${FIELD_COLUMN[f]}`).join(', ')})
    IS DISTINCT FROM (excluded.sources::jsonb, ${GMP_FIELDS.map((f) => `excluded.${FIELD_COLUMN[f]}`).join(', ')})
  RETURNING ipo_id, ts, ${AGG_COLUMNS}
),
rows AS (
  INSERT INTO ${s}.snapshot_changes (at, up_to, ipo_ids, ts, ${AGG_COLUMNS}, places)
  SELECT $2::bigint, $3::bigint, array_agg(ipo_id), array_agg(ts), ${GMP_FIELDS.map((f) => `array_agg(${FIELD_COLUMN[f]})`).join(', ')},
    array_agg(nextval('${s}.owed_place'))
  FROM up HAVING count(*) > 0
  RETURNING places
),
head AS (
  UPDATE ${s}.owed_head SET place = greatest(place, (SELECT places[cardinality(places)] FROM rows)) WHERE EXISTS (SELECT 1 FROM rows) RETURNING 1
)
SELECT count(*)::int AS rows, (SELECT count(*) FROM head)::int AS head FROM rows`;

function ipoRow(ipo: IpoRecord): Record<string, unknown> {
  return {
    id: ipo.id,
    name: ipo.name,
    symbol_folded: ipo.symbol === null ? null : asciiLower(ipo.symbol),
    slug: ipo.slug,
    type: ipo.type,
    on_nse: ipo.exchanges.includes('nse'),
    on_bse: ipo.exchanges.includes('bse'),
    start_date: ipo.startDate,
    end_date: ipo.endDate,
    listing_date: ipo.listingDate,
    doc: ipo,
  };
}

const UPSERT_SUBSCRIPTION = (s: string): string => `
INSERT INTO ${s}.subscription_snapshots (ipo_id, ts, ${CATEGORY_COLUMNS})
SELECT ipo_id, ts, ${CATEGORY_COLUMNS}
FROM json_to_recordset($1::json) AS x(ipo_id text, ts bigint, ${SUBSCRIPTION_CATEGORIES.map((c) => `${c} numeric`).join(', ')})
ON CONFLICT (ipo_id, ts) DO UPDATE SET ${SUBSCRIPTION_CATEGORIES.map((c) => `${c} = excluded.${c}`).join(', ')}`;

function subscriptionRow(x: SubscriptionRecord): Record<string, unknown> {
  const row: Record<string, unknown> = { ipo_id: x.ipoId, ts: x.timestamp };
  for (const c of SUBSCRIPTION_CATEGORIES) row[c] = x.times[c] ?? null;
  return row;
}

function snapshotRow(x: SnapshotRecord): Record<string, unknown> {
  const row: Record<string, unknown> = { ipo_id: x.ipoId, ts: x.timestamp, sources: x.sources };
  for (const f of GMP_FIELDS) row[FIELD_COLUMN[f]] = x.aggregations[f];
  return row;
}

/** pg and PGlite both parse `json` columns; a driver configured not to gives text. */
function parseDoc(doc: IpoRecord | string): IpoRecord {
  return typeof doc === 'string' ? (JSON.parse(doc) as IpoRecord) : doc;
}

function snapshotOf(r: PageRow, ipoId: string): SnapshotRecord | null {
  if (r.ts === null || r.ts === undefined) return null;
  const num = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));
  const sources = typeof r.sources === 'string' ? (JSON.parse(r.sources) as SnapshotRecord['sources']) : (r.sources ?? []);
  const aggregations = Object.fromEntries(GMP_FIELDS.map((f) => [f, num(r[f])])) as SnapshotRecord['aggregations'];
  return { ipoId, timestamp: Number(r.ts), sources, aggregations };
}

/** A subscription snapshot from its columns (null when there is none): numeric text to the number it prints as. */
function subscriptionOf(r: SubscriptionRow, ipoId: string): SubscriptionRecord | null {
  if (r.s_ts === null || r.s_ts === undefined) return null;
  const times = {} as SubscriptionTimes;
  for (const c of SUBSCRIPTION_CATEGORIES) {
    const v = r[`s_${c}`];
    times[c] = v === null || v === undefined ? null : Number(v);
  }
  return { ipoId, timestamp: Number(r.s_ts), times };
}

function accountOf(r: AccountRow): AccountRecord {
  return { id: r.id, name: r.name, plan: r.plan as Plan, gmpAddon: r.gmp_addon, createdAt: r.created_at };
}

function keyOf(r: KeyRow): ApiKeyRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    hash: r.hash,
    prefix: r.prefix,
    label: r.label,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    rotatedFrom: r.rotated_from,
  };
}

/** Active-key limits as float8 parameters (`Infinity` included). */
function limits(max: ActiveKeyLimits): [number | string, number | string, number | string] {
  const f = (n: number): number | string => (n === Infinity ? 'Infinity' : n);
  return [f(max.free), f(max.paid), f(max.pro)];
}

/** A decimal sum as a number while it is a safe integer, else a bigint. */
function exactSum(text: string): number | bigint {
  // at most 15 digits: always a safe integer (the common case, without a BigInt)
  if (text.length <= 15) return Number(text);
  const big = BigInt(text);
  return big >= MIN_SAFE && big <= MAX_SAFE ? Number(big) : big;
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Window keys longer than this (in UTF-16 units, all ASCII) are stored as a digest. */
const MAX_STORED_KEY_LENGTH = 64;

/**
 * The key a window is stored under: the key itself when it is short ASCII (as every key the
 * core makes is: `acct:<id>`, `addr:<normalised address>`), else `#` and its SHA-256, so
 * that no input, however long, reaches the primary key's index (a btree entry is refused
 * above about 2.7 KB, which turned every such request into a 503).
 */
function storedWindowKey(key: string): string {
  return key.length <= MAX_STORED_KEY_LENGTH && ASCII_KEY.test(key) ? key : `#${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

const ASCII_KEY = /^[\x21-\x7e]*$/;

/**
 * The key of a window's row (migration 4): a window is its key, its length and, for a
 * calendar window, its start. A 60 s sliding window is stored under its stored key alone
 * (as every window was before windows had lengths, so their hits carry over); any other
 * adds 0x1f and the length, and a calendar window 0x1f and its start too. A stored key
 * never holds 0x1f, and JavaScript's number text is one per number (-0 and 0 alike, as in
 * the core's model), so two windows share a row exactly when they are the same window.
 */
function storageKey(w: RateLimitWindow): string {
  const key = storedWindowKey(w.key);
  if (w.start !== undefined) return `${key}\x1f${w.ms}\x1f${w.start}`;
  return w.ms === WINDOW_MS ? key : `${key}\x1f${w.ms}`;
}

/**
 * The limiter statement's own time limit, from the milliseconds left before the core
 * answers 503: a margin shorter, so that a hit the database commits is known here before
 * the deadline (the answer still has to travel back and be read). Null when too little is
 * left to start.
 */
function statementBudget(msLeft: number): number | null {
  const budget = Math.floor(msLeft - Math.max(5, msLeft / 10));
  return budget >= 1 ? budget : null;
}
