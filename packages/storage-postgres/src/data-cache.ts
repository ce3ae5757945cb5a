/**
 * The read cache of IPO data (docs/spec.md#storage). Every answer of `listIpos`, `findIpo`
 * and `gmpBuckets` that a store object reads is kept with the data version it was read at:
 * the counter of migration 3, selected by the same statement as the data, so each entry is
 * one consistent read. An entry answers while
 *
 * 1. its version is the newest this process knows of (a write through any store object on
 *    the same client moves that on at once; a NOTIFY from another process a moment after
 *    its commit), and
 * 2. that version was confirmed by a statement sent less than `dataCacheTtlMs` ago (any
 *    read that went to the database confirms it; past half the TTL, a hit also sends a
 *    one-row version check in the background, so a busy process stays confirmed).
 *
 * Rule 2 alone bounds the staleness: a write committed at T is seen by every read that
 * starts after T + dataCacheTtlMs, whatever happened to the notifications. Rule 1 makes it
 * milliseconds while they arrive.
 */
import { LRUCache } from 'lru-cache';
import type { ClientKind, Database, PostgresClient, PostgresPool, Queryable } from './client.js';
import { dataChannel } from './migrations.js';

/** Default of `dataCacheTtlMs`. */
export const DEFAULT_DATA_CACHE_TTL_MS = 1_000;
/** Default of `dataCacheMaxBytes`: 32 MiB. */
export const DEFAULT_DATA_CACHE_MAX_BYTES = 33_554_432;

/** Between two attempts to open the LISTEN connection, doubling from the first to the last. */
const LISTEN_RETRY_MS = [100, 5_000] as const;
/** How often a held pool connection looks whether its pool is ending (pg-pool says nothing). */
const POOL_ENDING_CHECK_MS = 200;

/** A version check: the version a statement saw (null when there is none), and when it was sent. */
export type VersionRead = () => Promise<{ version: bigint | null; sentAt: number }>;

/**
 * What this process knows of a schema's data version through one client object, shared by
 * the store objects on that client and schema: the newest version seen, when it was last
 * confirmed, and the LISTEN that learns of new ones.
 */
export class DataVersionWatch {
  /** The newest data version seen; -1 before any. */
  version = -1n;
  /**
   * `performance.now()` when a statement that saw `version` was sent (the database was at
   * `version` at some moment after it); -Infinity when not confirmed.
   */
  confirmedAt = -Infinity;
  /**
   * When the data last changed as far as this process knows: only statements sent after it
   * confirm (one sent before may have read just before a write whose outcome is unknown).
   */
  private changedAt = -Infinity;
  private users = 0;
  private state: 'idle' | 'starting' | 'listening' | 'off' = 'idle';
  private stop: (() => void) | null = null;
  private retryAt = 0;
  private retryMs: number = LISTEN_RETRY_MS[0];
  /** When the version check in flight was sent; -Infinity when none is. */
  private checking = -Infinity;

  constructor(
    /** The NOTIFY channel of the schema. */
    readonly channel: string,
  ) {}

  /** A statement sent at `sentAt` saw `version`. */
  saw(version: bigint, sentAt: number): void {
    const confirms = sentAt >= this.changedAt;
    if (version > this.version) {
      this.version = version;
      this.confirmedAt = confirms ? sentAt : -Infinity;
    } else if (version === this.version && confirms && sentAt > this.confirmedAt) {
      this.confirmedAt = sentAt;
    }
  }

  /**
   * The data changed: `version` committed (a write of ours, or a notification), or, when
   * null, something may have (a write that failed after it may have committed). Entries of
   * older versions stop answering at once; the next read confirms the new version.
   */
  changed(version: bigint | null): void {
    if (version !== null && version <= this.version) return;
    this.changedAt = performance.now();
    this.confirmedAt = -Infinity;
    if (version !== null) this.version = version;
  }

  /** Counts a store object that caches on this watch. */
  attach(): void {
    this.users += 1;
  }

  /** A store object closed: with the last one, the LISTEN connection is given up. */
  detach(): void {
    this.users -= 1;
    if (this.users > 0) return;
    this.stop?.();
    this.stop = null;
    if (this.state === 'listening') this.state = 'idle';
  }

  /**
   * Sends `read` in the background unless a check is in flight (and younger than
   * `ttlMs`: one that hangs does not stop the next), to confirm the version before the
   * entries' confirmation runs out.
   */
  check(read: VersionRead, ttlMs: number): void {
    const now = performance.now();
    if (now - this.checking < ttlMs) return;
    this.checking = now;
    read().then(
      ({ version, sentAt }) => {
        if (version !== null) this.saw(version, sentAt);
        if (this.checking === now) this.checking = -Infinity;
      },
      () => {
        if (this.checking === now) this.checking = -Infinity;
      },
    );
  }

  /**
   * Starts listening for the schema's notifications, unless it does already, cannot (the
   * client has no way to), or failed a moment ago. Never waits: a read calls it after
   * reading, and the first notifications count from when LISTEN has run.
   */
  listen(db: Database): void {
    if (this.state !== 'idle' || this.users === 0 || performance.now() < this.retryAt) return;
    this.state = 'starting';
    this.open(db).then(
      (stop) => {
        if (stop === null) {
          this.state = 'off';
        } else if (this.users === 0 || this.state !== 'starting') {
          // every store closed meanwhile, or the connection was lost while LISTEN ran
          stop();
          if (this.state === 'starting') this.state = 'idle';
        } else {
          this.stop = stop;
          this.state = 'listening';
          this.retryMs = LISTEN_RETRY_MS[0];
        }
      },
      () => this.lost(),
    );
  }

  /** The LISTEN connection failed or went away: listen again after a pause, on the next read. */
  private lost(): void {
    this.stop?.();
    this.stop = null;
    if (this.state === 'off') return;
    this.state = 'idle';
    this.retryAt = performance.now() + this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, LISTEN_RETRY_MS[1]);
  }

  private notified = (payload: string | undefined): void => {
    let version: bigint | null = null;
    try {
      version = BigInt(payload ?? '');
    } catch {
      // not a version: something changed, say when
    }
    this.changed(version);
  };

  /** LISTEN on the client; resolves to what stops it, or null when the client cannot listen. */
  private open(db: Database): Promise<(() => void) | null> {
    return listenTo(db, this.channel, {
      notified: this.notified,
      lost: () => this.lost(),
      ended: () => {
        this.stop = null;
        this.state = 'off';
      },
    });
  }
}

/** What {@link listenTo} calls. */
export interface ListenHandlers {
  /** A notification on the channel, with its payload. */
  notified(payload: string | undefined): void;
  /** The connection failed or went away: the LISTEN is over (listen again later). */
  lost(): void;
  /** The pool is ending: its connection was given back, and it must not be asked for another. */
  ended(): void;
}

/**
 * LISTEN on `channel` through the store's client, as the client allows: PGlite's `listen()`;
 * on a pool, a connection held for it (the caller leaves one out of the store's gate for
 * it); on one connection, `LISTEN` through the store's gate, the notifications arriving on it
 * between the store's statements. Resolves to what stops it, or null when the client cannot
 * listen (a wrapper without events or `listen`).
 *
 * @example
 * ```ts
 * const stop = await listenTo(db, 'ipokit_deliveries_ipokit', { notified: () => wake(), lost: retry, ended: () => undefined });
 * ```
 */
export async function listenTo(db: Database, channel: string, handlers: ListenHandlers): Promise<(() => void) | null> {
  const kind: ClientKind = db.kind;
  if (kind === 'pglite') {
    const lite = db.client as Partial<ListeningLite>;
    if (typeof lite.listen !== 'function') return null;
    const unlisten = await (lite as ListeningLite).listen(channel, handlers.notified);
    return () => void unlisten().catch(() => undefined);
  }
  if (kind === 'pool') return listenOnPool(db.client as PostgresPool, channel, handlers);
  // One connection: the notifications arrive on it between the store's statements. The
  // LISTEN goes through the store's gate, so that it never runs inside a transaction
  // (which could roll it back). It stays when the listener stops (another store object on
  // the same connection may still listen; it costs nothing); the handlers go.
  const connection = db.client as Partial<Emitter>;
  if (typeof connection.on !== 'function' || typeof connection.off !== 'function') return null;
  const emitter = connection as Emitter;
  const onNotification = (m: Notification): void => {
    if (m.channel === channel) handlers.notified(m.payload);
  };
  const onEnd = (): void => handlers.lost();
  const stop = (): void => {
    emitter.off('notification', onNotification);
    emitter.off('end', onEnd);
  };
  emitter.on('notification', onNotification);
  emitter.on('end', onEnd);
  try {
    await db.query(`LISTEN "${channel}"`);
  } catch (err) {
    stop();
    throw err;
  }
  return stop;
}

/**
 * A connection of the pool, held for LISTEN (the store's gate leaves one out for it). It
 * is given back broken (closed, never reused with its LISTEN) when the listener stops, when
 * it fails, and when the pool is ending, so that `pool.end()` never waits for it; its
 * socket does not keep the process alive.
 */
async function listenOnPool(pool: PostgresPool, channel: string, handlers: ListenHandlers): Promise<(() => void) | null> {
  const connection = (await pool.connect()) as Queryable & { release(error?: Error | boolean): void } & Partial<Emitter>;
  if (typeof connection.on !== 'function' || typeof connection.off !== 'function') {
    connection.release();
    return null;
  }
  const emitter = connection as Emitter;
  let held = true;
  const drop = (): void => {
    if (!held) return;
    held = false;
    clearInterval(ending);
    emitter.off('notification', onNotification);
    // ('error' and 'end' stay: a late error of a closing connection must not crash the process)
    connection.release(true);
  };
  const onNotification = (m: Notification): void => {
    if (m.channel === channel) handlers.notified(m.payload);
  };
  const onLost = (): void => {
    if (!held) return;
    drop();
    handlers.lost();
  };
  const ending = setInterval(() => {
    if ((pool as { ending?: unknown }).ending !== true) return;
    drop();
    handlers.ended();
  }, POOL_ENDING_CHECK_MS);
  ending.unref();
  emitter.on('notification', onNotification);
  emitter.on('error', onLost);
  emitter.on('end', onLost);
  try {
    await connection.query(`LISTEN "${channel}"`);
  } catch (err) {
    drop();
    throw err;
  }
  (connection as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
  return drop;
}

interface Notification {
  channel: string;
  payload?: string;
}

/** pg's Client and PoolClient are EventEmitters. */
interface Emitter {
  on(event: 'notification', listener: (m: Notification) => void): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
  off(event: 'notification', listener: (m: Notification) => void): unknown;
  off(event: 'error' | 'end', listener: () => void): unknown;
}

/** PGlite's `listen`. */
interface ListeningLite {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

const watches = new WeakMap<object, Map<string, DataVersionWatch>>();

/**
 * The watch of `client` and `schema` (quoted, as `schemaIdentifier` gives it), made on
 * first use: every store object on the same client object and schema shares it.
 *
 * @example
 * ```ts
 * const watch = dataVersionWatch(pool, '"ipokit"');
 * ```
 */
export function dataVersionWatch(client: PostgresClient, schema: string): DataVersionWatch {
  let bySchema = watches.get(client);
  if (bySchema === undefined) {
    bySchema = new Map();
    watches.set(client, bySchema);
  }
  let watch = bySchema.get(schema);
  if (watch === undefined) {
    watch = new DataVersionWatch(dataChannel(schema.slice(1, -1)));
    bySchema.set(schema, watch);
  }
  return watch;
}

/**
 * A write through `client` on `schema` committed `version` (null: it may have committed):
 * the caches on the same client object drop what is older at once, without waiting for
 * the notification. Nothing to do when none caches.
 *
 * @example
 * ```ts
 * noteDataWrite(pool, '"ipokit"', 42n);
 * ```
 */
export function noteDataWrite(client: PostgresClient, schema: string, version: bigint | null): void {
  watches.get(client)?.get(schema)?.changed(version);
}

/** Options of {@link DataCache}. */
export interface DataCacheOptions {
  /** `dataCacheTtlMs`: > 0. */
  ttlMs: number;
  /** `dataCacheMaxBytes`: the LRU's bound on the estimated size of its entries. */
  maxBytes: number;
  /** Whether to LISTEN (false: a pool too small to give a connection up). */
  listen: boolean;
}

interface Entry<V> {
  version: bigint;
  value: V;
}

/**
 * One store object's entries, in an LRU bounded by their estimated size, each with the
 * version it was read at. See the module comment for when an entry answers.
 */
export class DataCache<V> {
  private readonly entries: LRUCache<string, Entry<V>>;
  /** The watch's version when the entries were last looked at: older ones are dropped then. */
  private seen = -1n;
  private closed = false;

  constructor(
    private readonly watch: DataVersionWatch,
    private readonly db: Database,
    /** One row-less version check for the background confirmation. */
    private readonly readVersion: VersionRead,
    private readonly options: DataCacheOptions,
  ) {
    // (every set() gives the entry's size)
    this.entries = new LRUCache<string, Entry<V>>({ maxSize: options.maxBytes });
    watch.attach();
  }

  /**
   * The value under `key`, if it was read at the current version and that version is
   * confirmed within the TTL; else undefined (read the database, then {@link DataCache.put}).
   *
   * @example
   * ```ts
   * const row = cache.get(`find\u0000${identifier}`) ?? (await readAndPut());
   * ```
   */
  get(key: string): V | undefined {
    this.sync();
    const age = performance.now() - this.watch.confirmedAt;
    if (!(age < this.options.ttlMs)) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== this.watch.version) return undefined;
    if (age >= this.options.ttlMs / 2) this.watch.check(this.readVersion, this.options.ttlMs);
    return entry.value;
  }

  /**
   * What a statement sent at `sentAt` read at `version` (null: it saw no version): the
   * version is noted, and `value` kept when that version is still the newest known.
   * `bytes` is its estimated size.
   *
   * @example
   * ```ts
   * cache.put(key, frozenRow, 2 * docText.length + 200, BigInt(row.dv), sentAt);
   * ```
   */
  put(key: string, value: V, bytes: number, version: bigint | null, sentAt: number): void {
    if (!this.saw(version, sentAt)) return;
    this.entries.set(key, { version: version as bigint, value }, { size: Math.max(1, Math.ceil(bytes)) });
  }

  /**
   * Notes the version a statement saw, when its answer is not kept (a lookup that found
   * nothing, say). True when `version` is the newest known.
   *
   * @example
   * ```ts
   * cache.saw(BigInt(row.dv), sentAt);
   * ```
   */
  saw(version: bigint | null, sentAt: number): boolean {
    if (version === null || this.closed) return false;
    this.watch.saw(version, sentAt);
    if (this.options.listen) this.watch.listen(this.db);
    this.sync();
    return version === this.watch.version;
  }

  /**
   * Forgets every entry and stops counting on the watch (the last store object on it gives
   * up the LISTEN connection).
   *
   * @example
   * ```ts
   * cache.close();
   * ```
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.entries.clear();
    this.watch.detach();
  }

  /** Entries of an older version never answer again: free them at once. */
  private sync(): void {
    if (this.seen === this.watch.version) return;
    this.seen = this.watch.version;
    this.entries.clear();
  }
}
