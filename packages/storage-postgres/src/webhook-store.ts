/**
 * The webhook capability of the PostgreSQL store (docs/spec.md#webhooks): an account's
 * endpoints, the events a data write records in its own transaction, one delivery per event
 * and enabled endpoint taking its type, claimed by any number of workers under leases, and
 * settled with the endpoint's failing streak. Every rule is the core's `MemoryOutbox`
 * (core/src/outbox.ts), restated here in SQL and pinned to it by `testWebhookStore`; the
 * events themselves are built by the core (`eventsOfWrite`, `eventsOfStatusChanges`), never here.
 *
 * Tables (migrations 6, 7 and 9): `webhooks`, `events`, `deliveries`, `status_cursor`, and
 * `snapshot_changes` (a write's gmp.snapshot events, fanned out by claims; `snapshot_events`
 * holds those of version 7 and 8 processes). Every time is
 * epoch ms from the caller's clock, never the database's `now()`.
 */
import { GMP_FIELDS, IpokitError, todayInIst } from '@ipokit/core';
import { addDays, DISABLED_ERROR, dueStatusChanges, eventsOfStatusChanges, eventsOfWrite, istDayStart, nextStatusChangeAt } from '@ipokit/core/backend';
import type {
  ClaimedDelivery,
  DeliveryRecord,
  DeliveryResult,
  DeliveryState,
  EventRecord,
  EventType,
  GmpField,
  IpoDates,
  SnapshotRecord,
  WebhookRecord,
  WebhookStore,
} from '@ipokit/core';
import type { Database, Transaction } from './client.js';
import { listenTo } from './data-cache.js';
import { deliveriesChannel } from './migrations.js';

/**
 * The enabled endpoints as a write sees them in its transaction: which event types some
 * take (the only events worth building), and how many take each (the deliveries to name).
 */
export interface Endpoints {
  types: ReadonlySet<EventType>;
  count: ReadonlyMap<EventType, number>;
  /** The last of them made (`webhooks.seq`): events fanned out later go to none made after. */
  upTo: number;
}

/**
 * The enabled endpoints' event types, read in the write's transaction; null when no enabled
 * endpoint exists (the write then records nothing, and costs this one statement more).
 *
 * @example
 * ```ts
 * const endpoints = await readEndpoints(tx, '"ipokit"');
 * if (endpoints?.types.has('gmp.snapshot')) ...
 * ```
 */
export async function readEndpoints(tx: Transaction, s: string): Promise<Endpoints | null> {
  const rows = await tx.query<{ events: string[]; seq: string | number }>(`SELECT events, seq FROM ${s}.webhooks WHERE disabled_at IS NULL`);
  if (rows.length === 0) return null;
  const count = new Map<EventType, number>();
  let upTo = 0;
  for (const r of rows) {
    for (const type of new Set(r.events)) count.set(type as EventType, (count.get(type as EventType) ?? 0) + 1);
    upTo = Math.max(upTo, Number(r.seq));
  }
  return { types: new Set(count.keys()), count, upTo };
}

/** Events per statement when they are recorded. */
const EVENT_BATCH = 2_000;

/**
 * Records events not recorded before (by id), each with one pending delivery, due at `due`,
 * per enabled endpoint that takes its type, in the order of the events, then of the
 * endpoints' creation (`MemoryOutbox.record`); an event no endpoint takes is not kept. Set
 * based: one statement per 2,000 events, the endpoints joined in SQL as the statement sees
 * them. Resolves to how many events and deliveries were added; the caller notifies
 * ({@link notifyDeliveries}) in the same transaction when deliveries were.
 *
 * @example
 * ```ts
 * const { deliveries } = await recordEvents(tx, s, eventsOfWrite(changes, endpoints.types), at, endpoints);
 * if (deliveries > 0) await notifyDeliveries(tx, s);
 * ```
 */
export async function recordEvents(
  tx: Transaction,
  s: string,
  events: readonly EventRecord[],
  due: number,
  endpoints: Pick<Endpoints, 'count'>,
  upTo: number | null = null,
): Promise<{ events: number; deliveries: number }> {
  let added = { events: 0, deliveries: 0 };
  if (events.length === 0) return added;
  // An id twice in one call: the first is recorded, as by one event after the other.
  const seen = new Set<string>();
  const unique: EventRecord[] = [];
  for (const e of events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    unique.push(e);
  }
  for (let i = 0; i < unique.length; i += EVENT_BATCH) {
    const rows = unique.slice(i, i + EVENT_BATCH).map((e, ord) => ({
      ord,
      id: e.id,
      type: e.type,
      at: e.at,
      body: e.body,
      // the ids of its deliveries, one per endpoint this transaction saw taking the type (an
      // endpoint made since gets an id made in SQL)
      ids: Array.from({ length: endpoints.count.get(e.type) ?? 0 }, () => `dlv_${randomBase62(20)}`),
    }));
    const [r] = await tx.query<{ events: number; deliveries: number }>(RECORD_EVENTS(s), [JSON.stringify(rows), due, upTo]);
    added = { events: added.events + Number(r?.events ?? 0), deliveries: added.deliveries + Number(r?.deliveries ?? 0) };
  }
  return added;
}

// The events (x) fanned out to the enabled endpoints taking their types (fan), as the
// statement's snapshot shows them, up to the endpoint $3 when it is given; an event is inserted only with some delivery, and
// deliveries only for events inserted here (an id recorded before is skipped). `seq` is
// assigned in the order of the SELECT: events in order, then endpoints in creation order.
const RECORD_EVENTS = (s: string): string => `
WITH x AS MATERIALIZED (
  SELECT * FROM json_to_recordset($1::json) AS x(ord int, id text, type text, at bigint, body text, ids text[])
),
fan AS MATERIALIZED (
  SELECT x.ord, w.id AS webhook_id, w.seq, row_number() OVER (PARTITION BY x.ord ORDER BY w.seq)::int AS k
  FROM x JOIN ${s}.webhooks AS w ON w.disabled_at IS NULL AND x.type = ANY (w.events) AND ($3::bigint IS NULL OR w.seq <= $3::bigint)
),
ev AS (
  INSERT INTO ${s}.events (id, type, at, body)
  SELECT x.id, x.type, x.at, x.body FROM x WHERE EXISTS (SELECT 1 FROM fan WHERE fan.ord = x.ord) ORDER BY x.ord
  ON CONFLICT (id) DO NOTHING
  RETURNING id
),
dl AS (
  INSERT INTO ${s}.deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at)
  SELECT coalesce(x.ids[fan.k], 'dlv_' || substr(md5(gen_random_uuid()::text), 1, 20)), x.id, fan.webhook_id, $2::bigint, 'pending', 0, $2::bigint
  FROM fan JOIN x ON x.ord = fan.ord JOIN ev ON ev.id = x.id
  ORDER BY fan.ord, fan.seq
  RETURNING 1
)
SELECT (SELECT count(*) FROM ev)::int AS events, (SELECT count(*) FROM dl)::int AS deliveries`;

/**
 * Announces new deliveries on the schema's deliveries channel: PostgreSQL sends it when the
 * transaction commits, and never when it rolls back (see `watchDeliveries`).
 *
 * @example
 * ```ts
 * await notifyDeliveries(tx, '"ipokit"');
 * ```
 */
export async function notifyDeliveries(tx: Transaction, s: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [deliveriesChannel(s.slice(1, -1)), '']);
}

/** What the webhook methods use of their store. */
export interface WebhookContext {
  /** The schema, quoted. */
  s: string;
  db: Database;
  query: <R>(text: string, params?: unknown[]) => Promise<R[]>;
  transaction: <T>(fn: (tx: Transaction) => Promise<T>) => Promise<T>;
  /** Checks that the schema is migrated far enough (rejects when not). */
  ready: () => Promise<void>;
}

/**
 * The {@link WebhookStore} methods of a PostgreSQL store, and what stops the watches they
 * started (when the store closes).
 *
 * @example
 * ```ts
 * const webhooks = webhookMethods({ s, db, query, transaction, ready });
 * const store = { ...ipoMethods, ...webhooks.methods, close: () => webhooks.stopWatches() };
 * ```
 */
export function webhookMethods(ctx: WebhookContext): { methods: Required<WebhookStore>; stopWatches(): Promise<void> } {
  const { s, db, query, transaction } = ctx;
  const channel = deliveriesChannel(s.slice(1, -1));
  const watches = new Set<() => Promise<void>>();

  const methods: Required<WebhookStore> = {
    async insertWebhook(webhook: WebhookRecord): Promise<'ok' | 'not-found'> {
      const rows = await query<{ id: string }>(
        `INSERT INTO ${s}.webhooks (id, account_id, url, events, description, secret, created_at, disabled_at)
         SELECT $1, a.id, $3, $4::text[], $5, $6, $7, $8 FROM ${s}.accounts AS a WHERE a.id = $2
         RETURNING id`,
        [webhook.id, webhook.accountId, webhook.url, webhook.events, webhook.description, webhook.secret, webhook.createdAt, webhook.disabledAt],
      );
      return rows.length > 0 ? 'ok' : 'not-found';
    },

    async listWebhooks(accountId: string): Promise<WebhookRecord[] | null> {
      // The account joined to its endpoints: no row means no account, a row of NULLs none.
      const rows = await query<Omit<WebhookRow, 'id'> & { id: string | null }>(
        `SELECT w.id, a.id AS account_id, w.url, w.events, w.description, w.secret, w.created_at, w.disabled_at
         FROM ${s}.accounts AS a LEFT JOIN ${s}.webhooks AS w ON w.account_id = a.id
         WHERE a.id = $1 ORDER BY w.created_at, w.id`,
        [accountId],
      );
      if (rows.length === 0) return null;
      return rows.filter((r): r is WebhookRow => r.id !== null).map(webhookOf);
    },

    async getWebhook(id: string): Promise<WebhookRecord | null> {
      const rows = await query<WebhookRow>(
        `SELECT id, account_id, url, events, description, secret, created_at, disabled_at FROM ${s}.webhooks WHERE id = $1`,
        [id],
      );
      return rows[0] === undefined ? null : webhookOf(rows[0]);
    },

    async deleteWebhook(id: string): Promise<boolean> {
      return transaction(async (tx) => {
        // The endpoint's row first, as finishDeliveries locks it (then its deliveries): a write
        // adding deliveries to it has committed once this lock is held.
        const found = await tx.query<{ id: string }>(`SELECT id FROM ${s}.webhooks WHERE id = $1 FOR UPDATE`, [id]);
        if (found.length === 0) return false;
        const gone = await tx.query<{ event_id: string }>(`DELETE FROM ${s}.deliveries WHERE webhook_id = $1 RETURNING event_id`, [id]);
        await tx.query(`DELETE FROM ${s}.webhooks WHERE id = $1`, [id]);
        await dropLoneEvents(tx, s, gone.map((r) => r.event_id));
        return true;
      });
    },

    async recordStatusChanges({ now }: { now: number }): Promise<{ recorded: number; nextAt: number | null }> {
      return transaction(async (tx) => {
        // The cursor's row, locked: concurrent calls (of any process) run one after the other,
        // each covering from where the one before stopped.
        const [cursor] = await tx.query<{ covered: number | null }>(`SELECT covered::float8 AS covered FROM ${s}.status_cursor FOR UPDATE`);
        const covered = cursor?.covered === null || cursor?.covered === undefined ? istDayStart(now) - 1 : Number(cursor.covered);
        // The core's rules need the IPOs whose status may change after `from` (the changes due
        // in (covered, now], and the next after now): an IPO's status changes only on its
        // start date, the day after its closing date, and its listing date, so an IPO whose
        // dates are all before the IST day of `from` less 2 has none and is not read (nearly
        // every IPO, once listed: the list stays short however many IPOs are stored).
        const from = Math.min(covered, now);
        const floor = Number.isFinite(from) ? addDays(todayInIst(from), -2) : '';
        const rows = await tx.query<{ id: string; start_date: string | null; end_date: string | null; listing_date: string | null }>(
          `SELECT id, start_date, end_date, listing_date FROM ${s}.ipos WHERE start_date >= $1 OR closing_date >= $1 OR listing_date >= $1`,
          [floor],
        );
        const ipos: Array<IpoDates & { id: string }> = rows.map((r) => ({ id: r.id, startDate: r.start_date, endDate: r.end_date, listingDate: r.listing_date }));
        let recorded = 0;
        if (now > covered) {
          const endpoints = await readEndpoints(tx, s);
          if (endpoints?.types.has('ipo.status_changed') === true) {
            const added = await recordEvents(tx, s, eventsOfStatusChanges(dueStatusChanges(ipos, covered, now)), now, endpoints);
            recorded = added.events;
            if (added.deliveries > 0) await notifyDeliveries(tx, s);
          }
          await tx.query(
            `INSERT INTO ${s}.status_cursor (id, covered) VALUES (true, $1::bigint) ON CONFLICT (id) DO UPDATE SET covered = excluded.covered`,
            [now],
          );
        }
        return { recorded, nextAt: nextStatusChangeAt(ipos, now) };
      });
    },

    async claimDeliveries(input): Promise<ClaimedDelivery[]> {
      // A write's gmp.snapshot events become deliveries here first: as many rows as the
      // claim could take, those another worker is fanning out skipped.
      await fanOutSnapshotEvents(ctx, { wait: false, enough: input.limit });
      const rows = await query<ClaimRow>(CLAIM(s), [input.now, bound(input.limit), bound(input.perWebhook), input.leaseMs, [...input.busy.keys()], [...input.busy.values()], DISABLED_ERROR]);
      return rows.map((r) => ({ delivery: deliveryOf(r), lease: r.lease, url: r.url, secret: r.secret, body: r.body }));
    },

    async finishDeliveries(results: readonly DeliveryResult[]): Promise<void> {
      if (results.length === 0) return;
      await transaction((tx) => finish(tx, s, results));
    },

    async listDeliveries({ webhookId, before, limit }): Promise<DeliveryRecord[] | null> {
      // Every write's deliveries are listed, those of gmp.snapshot events made first (waiting
      // for the ones a worker is making).
      await fanOutSnapshotEvents(ctx, { wait: true, enough: Infinity });
      // The endpoint as a one-row table: there is a row even when it has no delivery. After
      // `before` in the order; none when `before` is not one of its deliveries.
      const rows = await query<Omit<DeliveryRow, 'id'> & { id: string | null; found: string }>(
        `SELECT w.id AS found, ${DELIVERY_COLUMNS('d', 'e')}
         FROM ${s}.webhooks AS w
         LEFT JOIN LATERAL (
           SELECT * FROM ${s}.deliveries AS d
           WHERE d.webhook_id = w.id
             AND ($2::text IS NULL OR (d.created_at, d.id) < (SELECT b.created_at, b.id FROM ${s}.deliveries AS b WHERE b.id = $2 AND b.webhook_id = w.id))
           ORDER BY d.created_at DESC, d.id DESC
           LIMIT $3::bigint
         ) AS d ON true
         LEFT JOIN ${s}.events AS e ON e.id = d.event_id
         WHERE w.id = $1
         ORDER BY d.created_at DESC, d.id DESC`,
        [webhookId, before, bound(limit, false)],
      );
      if (rows.length === 0) return null;
      return rows.filter((r): r is DeliveryRow & { found: string } => r.id !== null).map(deliveryOf);
    },

    async replayDelivery({ webhookId, of, id, now }): Promise<DeliveryRecord | null> {
      return transaction(async (tx) => {
        // The event is locked first (as the foreign key would lock it), so that a prune
        // deleting it meanwhile is waited for, and then the delivery is not found: the row is
        // gone from the join, and nothing is inserted (the foreign key's own check would fail
        // instead). A prune that comes later skips the locked event and keeps it.
        const rows = await tx.query<DeliveryRow>(
          `WITH d AS (
             INSERT INTO ${s}.deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at)
             SELECT $3, o.event_id, o.webhook_id, $4::bigint, 'pending', 0, $4::bigint
             FROM ${s}.deliveries AS o JOIN ${s}.events AS e ON e.id = o.event_id
             WHERE o.id = $2 AND o.webhook_id = $1
             FOR KEY SHARE OF e
             RETURNING *
           )
           SELECT ${DELIVERY_COLUMNS('d', 'e')} FROM d JOIN ${s}.events AS e ON e.id = d.event_id`,
          [webhookId, of, id, now],
        );
        if (rows[0] === undefined) return null;
        await notifyDeliveries(tx, s);
        return deliveryOf(rows[0]);
      });
    },

    async pruneDeliveries({ before }: { before: number }): Promise<number> {
      return transaction(async (tx) => {
        // (rows a finish or claim holds are left for the next prune: it never waits, so it never deadlocks with one)
        const gone = await tx.query<{ event_id: string }>(
          `DELETE FROM ${s}.deliveries WHERE id IN (
             SELECT id FROM ${s}.deliveries WHERE state <> 'pending' AND coalesce(last_attempt_at, created_at) < $1::bigint FOR UPDATE SKIP LOCKED
           )
           RETURNING event_id`,
          [before],
        );
        await dropLoneEvents(tx, s, gone.map((r) => r.event_id));
        return gone.length;
      });
    },

    async watchDeliveries(wake: () => void): Promise<() => Promise<void>> {
      await ctx.ready();
      const stopWatch = await watch(db, channel, wake);
      const stop = async (): Promise<void> => {
        watches.delete(stop);
        await stopWatch();
      };
      watches.add(stop);
      return stop;
    },
  };
  return {
    methods,
    async stopWatches() {
      await Promise.all([...watches].map((stop) => stop()));
    },
  };
}

/** Snapshots of a `snapshot_changes` row (migration 9) that a claim fans out in one transaction. */
const FAN_OUT_SLICE = 1_000;

/**
 * Fans out writes' `gmp.snapshot` events: the rows a write added to `snapshot_changes`
 * (migration 9), after those a process of version 7 or 8 added to `snapshot_events` (migration
 * 7; a rolling deploy), oldest first. Each step is a transaction that locks the oldest row,
 * builds the events of its next `FAN_OUT_SLICE` snapshots (a `snapshot_events` row: all of
 * its at most 1,000) with the core's `eventsOfWrite`, records them with their deliveries to
 * the enabled endpoints taking the type that the write saw (`up_to`), announces them, and
 * moves the row's `done` on, or deletes the row when it is through. Stops when no row is
 * left, or when `enough` deliveries were made. `wait: false` skips rows another transaction
 * is fanning out (claims); `wait: true` waits for them (a listing sees every committed
 * write's deliveries). Each event is made once: the row is locked, and moved on in the same
 * transaction. Resolves to the deliveries made.
 *
 * @example
 * ```ts
 * await fanOutSnapshotEvents(ctx, { wait: false, enough: 64 });
 * ```
 */
export async function fanOutSnapshotEvents(ctx: Pick<WebhookContext, 's' | 'query' | 'transaction'>, { wait, enough }: { wait: boolean; enough: number }): Promise<number> {
  const { s, query, transaction } = ctx;
  // (most claims find none: one plain read, not a transaction)
  const [pending] = await query<{ before: boolean; now: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${s}.snapshot_events) AS before, EXISTS (SELECT 1 FROM ${s}.snapshot_changes) AS now`,
  );
  if (pending === undefined || (!pending.before && !pending.now)) return 0;
  let before = pending.before;
  let made = 0;
  while (made < enough) {
    const added = await transaction(async (tx) => {
      if (before) {
        const n = await fanOutEventsRow(tx, s, wait);
        if (n !== null) return n;
        before = false;
      }
      return fanOutChangesSlice(tx, s, wait);
    });
    if (added === null) break;
    made += added;
  }
  return made;
}

/** How many enabled endpoints taking gmp.snapshot a write saw (`b.up_to`), as SQL. */
const SNAPSHOT_ENDPOINTS = (s: string): string =>
  `(SELECT count(*)::int FROM ${s}.webhooks AS w WHERE w.disabled_at IS NULL AND 'gmp.snapshot' = ANY (w.events) AND w.seq <= b.up_to) AS endpoints`;

/** The events of these snapshots, written at `at`, recorded with their deliveries and announced. */
async function recordSnapshotEvents(tx: Transaction, s: string, snapshots: SnapshotRecord[], at: number, endpoints: number, upTo: number): Promise<number> {
  const events = eventsOfWrite({ at, ipos: [], snapshots, deleted: [] }, GMP_SNAPSHOT);
  const { deliveries } = await recordEvents(tx, s, events, at, { count: new Map([['gmp.snapshot', endpoints]]) }, upTo);
  if (deliveries > 0) await notifyDeliveries(tx, s);
  return deliveries;
}

/** Fans out the oldest `snapshot_events` row (of a version 7 or 8 process) whole; null when none is left to take. */
async function fanOutEventsRow(tx: Transaction, s: string, wait: boolean): Promise<number | null> {
  const [row] = await tx.query<{ seq: string; at: string; up_to: string; snapshots: SnapshotEventRow[] | string; endpoints: number }>(
    `SELECT b.seq, b.at, b.up_to, b.snapshots, ${SNAPSHOT_ENDPOINTS(s)}
     FROM ${s}.snapshot_events AS b ORDER BY b.seq LIMIT 1 FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
  );
  if (row === undefined) return null;
  let deliveries = 0;
  if (row.endpoints > 0) {
    const list = typeof row.snapshots === 'string' ? (JSON.parse(row.snapshots) as SnapshotEventRow[]) : row.snapshots;
    deliveries = await recordSnapshotEvents(tx, s, list.map(snapshotOfEventRow), Number(row.at), row.endpoints, Number(row.up_to));
  }
  await tx.query(`DELETE FROM ${s}.snapshot_events WHERE seq = $1`, [row.seq]);
  return deliveries;
}

type ChangesRow = { seq: string; at: string; up_to: string; done: number; n: number; endpoints: number; ipo_ids: string[]; ts: Array<string | number> } & Record<
  `agg_${GmpField}`,
  Array<string | number | null>
>;

/**
 * Fans out the next FAN_OUT_SLICE snapshots of the oldest `snapshot_changes` row, and moves its
 * `done` on or deletes it; null when no row is left to take. A row no endpoint takes any more
 * goes whole (endpoints are never enabled again).
 */
async function fanOutChangesSlice(tx: Transaction, s: string, wait: boolean): Promise<number | null> {
  const slice = (column: string) => `b.${column}[b.done + 1 : b.done + ${FAN_OUT_SLICE}] AS ${column}`;
  const [row] = await tx.query<ChangesRow>(
    `SELECT b.seq, b.at, b.up_to, b.done, cardinality(b.ipo_ids) AS n, ${SNAPSHOT_ENDPOINTS(s)},
       ${['ipo_ids', 'ts', ...GMP_FIELDS.map((f) => `agg_${f}`)].map(slice).join(', ')}
     FROM ${s}.snapshot_changes AS b ORDER BY b.seq LIMIT 1 FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
  );
  if (row === undefined) return null;
  const taken = row.ipo_ids.length;
  let deliveries = 0;
  if (row.endpoints > 0) {
    const snapshots = row.ipo_ids.map((ipoId, i) => snapshotOfEventRow([ipoId, row.ts[i]!, ...GMP_FIELDS.map((f) => row[`agg_${f}`][i] ?? null)]));
    deliveries = await recordSnapshotEvents(tx, s, snapshots, Number(row.at), row.endpoints, Number(row.up_to));
  }
  if (row.endpoints === 0 || row.done + taken >= row.n) await tx.query(`DELETE FROM ${s}.snapshot_changes WHERE seq = $1`, [row.seq]);
  else await tx.query(`UPDATE ${s}.snapshot_changes SET done = done + $2 WHERE seq = $1`, [row.seq, taken]);
  return deliveries;
}

/**
 * A snapshot as an event carries it, kept as `snapshot_events` keeps it (and as a
 * `snapshot_changes` row's arrays give it, element by element): ipo id, timestamp, then the
 * aggregations in GMP_FIELDS' order.
 */
type SnapshotEventRow = [string, string | number, ...(string | number | null)[]];

const GMP_SNAPSHOT: ReadonlySet<EventType> = new Set(['gmp.snapshot']);

function snapshotOfEventRow([ipoId, ts, ...aggregations]: SnapshotEventRow): SnapshotRecord {
  const num = (v: string | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    ipoId,
    timestamp: Number(ts),
    // (an event carries the aggregations, not the sources)
    sources: [],
    aggregations: Object.fromEntries(GMP_FIELDS.map((f, i) => [f, num(aggregations[i])])) as SnapshotRecord['aggregations'],
  };
}

/**
 * Deletes those of these events that no delivery names any more (a delivery being added to
 * one by a replay that has not committed keeps it: that row is locked, and skipped).
 */
async function dropLoneEvents(tx: Transaction, s: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `DELETE FROM ${s}.events WHERE id IN (
       SELECT e.id FROM ${s}.events AS e
       WHERE e.id = ANY ($1::text[]) AND NOT EXISTS (SELECT 1 FROM ${s}.deliveries AS d WHERE d.event_id = e.id)
       FOR UPDATE SKIP LOCKED
     )`,
    [[...new Set(ids)]],
  );
}

/**
 * The claim, one statement (`MemoryOutbox.claim`): every lease that has run out is given up;
 * the pending deliveries no claim holds of a disabled endpoint (an attempt in flight when it
 * was disabled, retried since; a replay) end as failed; and the due deliveries are claimed in
 * the order (next_attempt_at, seq), at most `perWebhook` less the caller's attempts in flight
 * (`busy`) of an enabled endpoint, until `limit` are. Parameters: $1 now, $2 limit, $3
 * perWebhook (null: no bound), $4 leaseMs, $5 and $6 busy's endpoints and counts, $7
 * DISABLED_ERROR.
 *
 * The walk reads at most `limit` rows of each enabled endpoint, and at most what `perWebhook`
 * leaves it (the index deliveries_due), so one endpoint's backlog is never walked through,
 * and a claim locks no more of it than it could take: a claim running meanwhile takes the
 * next rows. Rows are locked FOR UPDATE SKIP LOCKED: a row another claim (or a finish) holds
 * is passed over, and one it leased meanwhile fails the recheck of `lease_until <= now`; no
 * row is returned twice.
 */
const CLAIM = (s: string): string => `
WITH cand AS (
  SELECT d.id, d.next_attempt_at AS nat, d.seq
  FROM ${s}.webhooks AS w
  LEFT JOIN unnest($5::text[], $6::bigint[]) AS b(id, n) ON b.id = w.id
  CROSS JOIN LATERAL (
    SELECT d.id, d.next_attempt_at, d.seq FROM ${s}.deliveries AS d
    WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= $1::bigint
      AND (d.lease IS NULL OR d.lease_until <= $1::bigint)
    ORDER BY d.next_attempt_at, d.seq
    LIMIT greatest(least(coalesce($3::bigint, 9223372036854775807) - coalesce(b.n, 0), $2::bigint), 0)
    FOR UPDATE OF d SKIP LOCKED
  ) AS d
  WHERE w.disabled_at IS NULL
),
pick AS MATERIALIZED (SELECT id, nat, seq FROM cand ORDER BY nat, seq LIMIT $2::bigint),
settled AS (
  UPDATE ${s}.deliveries AS d SET state = 'failed', next_attempt_at = NULL, last_error = $7::text, lease = NULL, lease_until = NULL
  WHERE d.id IN (
    SELECT x.id FROM ${s}.webhooks AS w JOIN ${s}.deliveries AS x ON x.webhook_id = w.id
    WHERE w.disabled_at IS NOT NULL AND x.state = 'pending' AND (x.lease IS NULL OR x.lease_until <= $1::bigint)
    FOR UPDATE OF x SKIP LOCKED
  )
  RETURNING d.id
),
expired AS (
  UPDATE ${s}.deliveries AS d SET lease = NULL, lease_until = NULL
  WHERE d.id IN (SELECT x.id FROM ${s}.deliveries AS x WHERE x.lease IS NOT NULL AND x.lease_until <= $1::bigint FOR UPDATE OF x SKIP LOCKED)
    AND NOT EXISTS (SELECT 1 FROM pick WHERE pick.id = d.id)
    AND NOT EXISTS (SELECT 1 FROM settled WHERE settled.id = d.id)
),
claimed AS (
  UPDATE ${s}.deliveries AS d SET lease = gen_random_uuid()::text, lease_until = $1::bigint + $4::bigint
  FROM pick WHERE d.id = pick.id
  RETURNING d.*
)
SELECT ${DELIVERY_COLUMNS('c', 'e')}, c.lease, w.url, w.secret, e.body
FROM claimed AS c JOIN ${s}.webhooks AS w ON w.id = c.webhook_id JOIN ${s}.events AS e ON e.id = c.event_id
ORDER BY c.next_attempt_at, c.seq`;

/** A delivery's columns as {@link deliveryOf} reads them, of delivery `d` and its event `e`. */
const DELIVERY_COLUMNS = (d: string, e: string): string =>
  `${d}.id, ${d}.webhook_id, ${d}.event_id, ${e}.type AS event_type, ${d}.created_at::float8 AS created_at, ${d}.state, ${d}.attempts,
   ${d}.next_attempt_at::float8 AS next_attempt_at, ${d}.last_attempt_at::float8 AS last_attempt_at, ${d}.last_status, ${d}.last_error`;

/**
 * Settles a batch of results in one transaction (`MemoryOutbox.finish`). The endpoints' rows
 * are locked first, then the deliveries' (the order deleteWebhook takes too); the results
 * are applied in order, here, to what is stored, exactly as the outbox applies them; then
 * the deliveries that changed are written in one statement, the endpoints in another, and the
 * pending deliveries of endpoints this batch disabled end as failed in a third.
 */
async function finish(tx: Transaction, s: string, results: readonly DeliveryResult[]): Promise<void> {
  const ids = [...new Set(results.map((r) => r.id))];
  // (a delivery never changes endpoint: its endpoint found unlocked is the one to lock)
  const hooks = await tx.query<{ id: string; disabled_at: string | null; failing_since: number | null }>(
    `SELECT id, disabled_at, failing_since::float8 AS failing_since FROM ${s}.webhooks
     WHERE id IN (SELECT webhook_id FROM ${s}.deliveries WHERE id = ANY ($1::text[])) ORDER BY id FOR NO KEY UPDATE`,
    [ids],
  );
  if (hooks.length === 0) return;
  const rows = await tx.query<FinishRow>(
    `SELECT id, webhook_id, lease, state, attempts, next_attempt_at::float8 AS next_attempt_at, last_attempt_at::float8 AS last_attempt_at, last_status, last_error
     FROM ${s}.deliveries WHERE id = ANY ($1::text[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
  const endpoints = new Map(hooks.map((h) => [h.id, { disabledAt: h.disabled_at, failingSince: h.failing_since === null ? null : Number(h.failing_since), changed: false }]));
  const deliveries = new Map(rows.map((r) => [r.id, { ...r, changed: false }]));
  const disabled: string[] = [];
  for (const r of results) {
    const d = deliveries.get(r.id);
    if (d === undefined || d.lease === null || d.lease !== r.lease) continue;
    d.lease = null;
    d.changed = true;
    d.attempts += 1;
    d.last_attempt_at = r.at;
    d.last_status = r.status;
    d.last_error = r.delivered ? null : r.error;
    const endpoint = endpoints.get(d.webhook_id);
    if (r.delivered) {
      d.state = 'delivered';
      d.next_attempt_at = null;
      if (endpoint !== undefined && endpoint.failingSince !== null) {
        endpoint.failingSince = null;
        endpoint.changed = true;
      }
      continue;
    }
    if (r.nextAttemptAt === null) {
      d.state = 'failed';
      d.next_attempt_at = null;
    } else {
      d.next_attempt_at = r.nextAttemptAt;
    }
    if (endpoint === undefined || endpoint.disabledAt !== null) continue;
    if (endpoint.failingSince === null) {
      endpoint.failingSince = r.at;
      endpoint.changed = true;
    }
    if (endpoint.failingSince <= r.disableBefore) {
      endpoint.changed = true;
      // Disabled at `at`: its pending deliveries that no claim holds end as failed, now
      // (those of this batch here, the others below: no later result touches them).
      endpoint.disabledAt = new Date(r.at).toISOString();
      disabled.push(d.webhook_id);
      for (const x of deliveries.values()) {
        if (x.webhook_id !== d.webhook_id || x.state !== 'pending' || x.lease !== null) continue;
        x.state = 'failed';
        x.next_attempt_at = null;
        x.last_error = DISABLED_ERROR;
        x.changed = true;
      }
    }
  }
  const changed = [...deliveries.values()].filter((d) => d.changed);
  if (changed.length === 0) return;
  await tx.query(
    `UPDATE ${s}.deliveries AS d SET state = x.state, attempts = x.attempts, next_attempt_at = x.next_attempt_at, lease = NULL, lease_until = NULL,
       last_attempt_at = x.last_attempt_at, last_status = x.last_status, last_error = x.last_error
     FROM json_to_recordset($1::json) AS x(id text, state text, attempts int, next_attempt_at bigint, last_attempt_at bigint, last_status int, last_error text)
     WHERE d.id = x.id`,
    [JSON.stringify(changed.map((d) => ({ id: d.id, state: d.state, attempts: d.attempts, next_attempt_at: d.next_attempt_at, last_attempt_at: d.last_attempt_at, last_status: d.last_status, last_error: d.last_error })))],
  );
  const touched = [...endpoints].filter(([, e]) => e.changed);
  if (touched.length > 0) {
    await tx.query(
      `UPDATE ${s}.webhooks AS w SET failing_since = x.failing_since, disabled_at = x.disabled_at
       FROM json_to_recordset($1::json) AS x(id text, failing_since bigint, disabled_at text) WHERE w.id = x.id`,
      [JSON.stringify(touched.map(([id, e]) => ({ id, failing_since: e.failingSince, disabled_at: e.disabledAt })))],
    );
  }
  if (disabled.length > 0) {
    await tx.query(
      `UPDATE ${s}.deliveries SET state = 'failed', next_attempt_at = NULL, last_error = $2
       WHERE webhook_id = ANY ($1::text[]) AND state = 'pending' AND lease IS NULL AND NOT (id = ANY ($3::text[]))`,
      [disabled, DISABLED_ERROR, [...deliveries.keys()]],
    );
  }
}

/** Between two attempts to LISTEN again after the connection went away, doubling. */
const RELISTEN_MS = [100, 5_000] as const;

/**
 * `watchDeliveries`: LISTEN on the schema's deliveries channel (notified by every commit that
 * adds deliveries: a write, a status change, a replay; never by a rollback), calling `wake`
 * on each notification. On a pool, a connection of its own is held for it (the store runs one
 * call fewer at once), and taken again after a loss (waking then: notifications may have
 * been missed). Where LISTEN is impossible (a pool whose store has no connection to spare,
 * a client wrapper without notifications), it resolves to a stop function all the same and
 * the worker's polling alone finds new deliveries.
 */
async function watch(db: Database, channel: string, wake: () => void): Promise<() => Promise<void>> {
  const giveBack = db.kind === 'pool' ? db.reserveConnection() : () => undefined;
  if (giveBack === null) return async () => undefined;
  let stopped = false;
  let stopListening: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let retryMs: number = RELISTEN_MS[0];
  const again = (): void => {
    stopListening?.();
    stopListening = null;
    if (stopped || timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      void start(true);
    }, retryMs);
    timer.unref?.();
    retryMs = Math.min(retryMs * 2, RELISTEN_MS[1]);
  };
  const start = async (resumed: boolean): Promise<void> => {
    let stop: (() => void) | null;
    try {
      stop = await listenTo(db, channel, {
        notified: () => {
          if (!stopped) wake();
        },
        lost: again,
        ended: () => {
          stopListening = null;
          stopped = true;
          giveBack();
        },
      });
    } catch {
      again();
      return;
    }
    if (stopped) {
      stop?.();
      return;
    }
    if (stop === null) {
      // The client cannot listen (a wrapper without notifications): the worker polls.
      stopped = true;
      giveBack();
      return;
    }
    stopListening = stop;
    retryMs = RELISTEN_MS[0];
    // (deliveries may have been added while no connection listened)
    if (resumed) wake();
  };
  await start(false);
  return async () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    stopListening?.();
    stopListening = null;
    giveBack();
  };
}

/**
 * A count as a LIMIT parameter, as the outbox takes it: a loop's `n < limit` lets a fraction
 * through rounded up (`up`), `slice` rounds it down; nothing below 0; Infinity is no bound.
 */
function bound(n: number, up = true): number | null {
  if (n === Infinity) return null;
  if (!(n > 0)) return 0;
  return up ? Math.ceil(n) : Math.floor(n);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes for delivery ids, drawn 64 KB at a time (an import may name 100,000s of deliveries). */
let randomBytes = new Uint8Array(0);
let nextByte = 0;

/** `length` random base62 characters, as the core makes ids (bytes from 248 up are dropped: no bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    if (nextByte === randomBytes.length) {
      randomBytes = crypto.getRandomValues(new Uint8Array(65_536));
      nextByte = 0;
    }
    const b = randomBytes[nextByte++]!;
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  created_at: string;
  disabled_at: string | null;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  created_at: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
}

interface ClaimRow extends DeliveryRow {
  lease: string;
  url: string;
  secret: string;
  body: string;
}

interface FinishRow {
  id: string;
  webhook_id: string;
  lease: string | null;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
}

function webhookOf(r: WebhookRow): WebhookRecord {
  if (!Array.isArray(r.events)) throw new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store read a webhook whose events are not an array.');
  return {
    id: r.id,
    accountId: r.account_id,
    url: r.url,
    events: [...r.events],
    description: r.description,
    secret: r.secret,
    createdAt: r.created_at,
    disabledAt: r.disabled_at,
  };
}

function deliveryOf(r: DeliveryRow): DeliveryRecord {
  const num = (v: number | null): number | null => (v === null ? null : Number(v));
  return {
    id: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type,
    createdAt: Number(r.created_at),
    state: r.state,
    attempts: Number(r.attempts),
    nextAttemptAt: num(r.next_attempt_at),
    lastAttemptAt: num(r.last_attempt_at),
    lastStatus: num(r.last_status),
    lastError: r.last_error,
  };
}
