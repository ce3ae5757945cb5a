/**
 * The webhook capability of the PostgreSQL store (docs/spec.md#webhooks, #storage): an
 * account's endpoints, the events a data write owes them (recorded in the write's own
 * transaction, once per event whatever the number of endpoints), each endpoint's deliveries
 * made from what it is owed later, in bounded statements, by claims (fairly across accounts)
 * and by its own listing, claimed by any number of workers under leases, and settled with the
 * endpoint's failing streak. Every rule is the core's `MemoryOutbox` (core/src/outbox.ts),
 * restated here in SQL and pinned to it by `testWebhookStore`; the events themselves are built
 * by the core (`eventsOfWrite`, `eventsOfStatusChanges`), never here.
 *
 * Tables (migrations 6, 7, 9 and 11): `webhooks` (with `owed_upto`, the endpoint's cursor),
 * `events` (those some delivery names), `deliveries`, `status_cursor`, `owed` (the events owed,
 * at their places in the owed order, until every endpoint's cursor passed them), `owed_head`
 * (the last place readers may rely on), `snapshot_changes` (a write's gmp.snapshot events with
 * their places, built into `owed` rows by claims and listings; `snapshot_events` and rows
 * without places come from processes of earlier versions), `prune_cursor`. Every time is
 * epoch ms from the caller's clock, never the database's `now()`.
 *
 * Places: the sequence `owed_place`. A process appending to the log (`owed`, or places of
 * `snapshot_changes`) holds the data lock (`lockData`, which every write takes) from its first
 * place to its commit, and moves `owed_head` to its last place: so the places up to the head a
 * reader sees are all committed (or rolled back), every place still to come is greater, and a
 * cursor moved to the head never passes an event still to be owed. A replay takes the next
 * place too (it owes nothing through the log: its delivery is made at once).
 */
import { type EventType, GMP_FIELDS, type GmpField, type IpoDates, IpokitError, todayInIst, type WebhookStore } from '@ipokit/core';
import { addDays, type ClaimedDelivery, type DeliveryRecord, type DeliveryResult, type DeliveryState, DISABLED_ERROR, dueStatusChanges, type EventRecord, eventsOfStatusChanges, eventsOfWrite, istDayStart, nextStatusChangeAt, type SnapshotRecord, type WebhookChange, type WebhookRecord } from '@ipokit/core/backend';
import type { Database, Transaction } from './client.js';
import { listenTo } from './data-cache.js';
import { advisoryKey, deliveriesChannel } from './migrations.js';

/**
 * The enabled endpoints as a write sees them in its transaction: which event types some
 * take (the only events worth building), and how many take each.
 */
export interface Endpoints {
  types: ReadonlySet<EventType>;
  count: ReadonlyMap<EventType, number>;
  /** The last of them made (`webhooks.seq`): what the write owes goes to none made after. */
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
 * Records events not recorded before (by id) as owed, due at `due`, to the enabled endpoints
 * taking their types up to the endpoint `upTo` (those the write saw), each at the next place
 * of the owed order, in the order of the events (`MemoryOutbox.record`). One row per event,
 * whatever the number of endpoints: their deliveries are made later (claims, listings). The
 * caller holds the data lock (`lockData`: every write does), and notifies
 * ({@link notifyDeliveries}) in the same transaction when events were recorded. Resolves to
 * how many were.
 *
 * @example
 * ```ts
 * const { events } = await recordEvents(tx, s, eventsOfWrite(changes, endpoints.types), at, endpoints);
 * if (events > 0) await notifyDeliveries(tx, s);
 * ```
 */
export async function recordEvents(tx: Transaction, s: string, events: readonly EventRecord[], due: number, endpoints: Pick<Endpoints, 'upTo'>): Promise<{ events: number }> {
  let recorded = 0;
  if (events.length === 0) return { events: 0 };
  // An id twice in one call: the first is recorded, as by one event after the other.
  const seen = new Set<string>();
  const unique: EventRecord[] = [];
  for (const e of events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    unique.push(e);
  }
  for (let i = 0; i < unique.length; i += EVENT_BATCH) {
    const rows = unique.slice(i, i + EVENT_BATCH).map((e, ord) => ({ ord, id: e.id, type: e.type, body: e.body }));
    const [r] = await tx.query<{ events: number }>(RECORD_OWED(s), [JSON.stringify(rows), due, endpoints.upTo]);
    recorded += Number(r?.events ?? 0);
  }
  return { events: recorded };
}

// The events (x) not recorded before (owed, or in events: an id recorded twice keeps the
// first), each at the next place, in their order (the sequence is read row by row of the
// ordered subquery); the head moved to the last.
const RECORD_OWED = (s: string): string => `
WITH x AS MATERIALIZED (
  SELECT * FROM json_to_recordset($1::json) AS x(ord int, id text, type text, body text)
),
placed AS MATERIALIZED (
  SELECT f.*, nextval('${s}.owed_place') AS place FROM (
    SELECT x.* FROM x
    WHERE NOT EXISTS (SELECT 1 FROM ${s}.owed AS o WHERE o.event_id = x.id) AND NOT EXISTS (SELECT 1 FROM ${s}.events AS e WHERE e.id = x.id)
    ORDER BY x.ord
  ) AS f
),
ins AS (
  INSERT INTO ${s}.owed (place, event_id, type, at, up_to, body)
  SELECT place, id, type, $2::bigint, $3::bigint, body FROM placed ORDER BY place
  RETURNING place
),
head AS (
  UPDATE ${s}.owed_head SET place = greatest(place, (SELECT max(place) FROM ins)) WHERE EXISTS (SELECT 1 FROM ins) RETURNING 1
)
SELECT (SELECT count(*) FROM ins)::int AS events, (SELECT count(*) FROM head)::int AS head`;

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

/** At most this many deliveries made of one endpoint's owed events by a claim. */
const MAKE_PER_ENDPOINT = 512;
/** At most this many deliveries made by one statement (a claim's, or a listing's). */
const MAKE_PER_STATEMENT = 4_096;
/** At most this many deliveries forgotten by one prune. */
const PRUNE_ROWS = 10_000;
/** At most this many endpoints whose settled deliveries a prune counts. */
const PRUNE_ENDPOINTS = 100;
/** At most this many owed events a prune forgets (those every cursor passed). */
const PRUNE_OWED = 10_000;

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
    async insertWebhook(webhook: WebhookRecord, { maxPerAccount }: { maxPerAccount: number }): Promise<'ok' | 'not-found' | 'too-many-webhooks'> {
      return transaction(async (tx) => {
        // The account's row locked first: concurrent inserts for it count one after the other
        // (the count is the next statement's, which sees what the one before committed).
        const account = await tx.query<{ id: string }>(`SELECT id FROM ${s}.accounts WHERE id = $1 FOR NO KEY UPDATE`, [webhook.accountId]);
        if (account.length === 0) return 'not-found';
        // The new endpoint's cursor starts at the head: it is owed nothing written before it.
        const [row] = await tx.query<{ n: number; inserted: number }>(
          `WITH n AS (SELECT count(*)::int AS n FROM ${s}.webhooks WHERE account_id = $2),
           ins AS (
             INSERT INTO ${s}.webhooks (id, account_id, url, events, description, secret, created_at, disabled_at, owed_upto, paused_at, previous_secret, previous_secret_expires_at)
             SELECT $1, $2, $3, $4::text[], $5, $6, $7, $8, (SELECT place FROM ${s}.owed_head), $10, $11, $12
             FROM n WHERE n.n < $9::float8
             RETURNING 1
           )
           SELECT (SELECT n FROM n) AS n, (SELECT count(*)::int FROM ins) AS inserted`,
          [webhook.id, webhook.accountId, webhook.url, webhook.events, webhook.description, webhook.secret, webhook.createdAt, webhook.disabledAt, maxPerAccount, webhook.pausedAt, webhook.previousSecret, webhook.previousSecretExpiresAt],
        );
        return Number(row?.inserted ?? 0) > 0 ? 'ok' : 'too-many-webhooks';
      });
    },

    async listWebhooks(accountId: string): Promise<WebhookRecord[] | null> {
      // The account joined to its endpoints: no row means no account, a row of NULLs none.
      const rows = await query<Omit<WebhookRow, 'id'> & { id: string | null }>(
        `SELECT w.id, a.id AS account_id, w.url, w.events, w.description, w.secret, w.created_at, w.disabled_at, w.paused_at, w.previous_secret, w.previous_secret_expires_at
         FROM ${s}.accounts AS a LEFT JOIN ${s}.webhooks AS w ON w.account_id = a.id
         WHERE a.id = $1 ORDER BY w.created_at, w.id`,
        [accountId],
      );
      if (rows.length === 0) return null;
      return rows.filter((r): r is WebhookRow => r.id !== null).map(webhookOf);
    },

    async getWebhook(id: string): Promise<WebhookRecord | null> {
      const rows = await query<WebhookRow>(
        `SELECT ${WEBHOOK_COLUMNS} FROM ${s}.webhooks WHERE id = $1`,
        [id],
      );
      return rows[0] === undefined ? null : webhookOf(rows[0]);
    },

    async deleteWebhook(id: string): Promise<boolean> {
      return transaction(async (tx) => {
        // The endpoint's row first, as finishDeliveries and the making of deliveries lock it
        // (then its deliveries): deliveries being made for it have committed once this lock is held.
        const found = await tx.query<{ id: string }>(`SELECT id FROM ${s}.webhooks WHERE id = $1 FOR UPDATE`, [id]);
        if (found.length === 0) return false;
        const gone = await tx.query<{ event_id: string }>(`DELETE FROM ${s}.deliveries WHERE webhook_id = $1 RETURNING event_id`, [id]);
        await tx.query(`DELETE FROM ${s}.webhooks WHERE id = $1`, [id]);
        // (what it alone was behind on is owed to no one any more)
        await dropLoneEvents(tx, s, [...gone.map((r) => r.event_id), ...(await trimOwed(tx, s))]);
        return true;
      });
    },

    async updateWebhook(id: string, change: WebhookChange): Promise<WebhookRecord | null> {
      return transaction(async (tx) => {
        // The endpoint's row first (as finishDeliveries and deleteWebhook lock it).
        const found = await tx.query<{ id: string }>(`SELECT id FROM ${s}.webhooks WHERE id = $1 FOR NO KEY UPDATE`, [id]);
        if (found.length === 0) return null;
        // What it is owed under its old event types is made first (as MemoryOutbox.update).
        if (change.events !== undefined) await tx.query(MAKE_OWN(s), [id, MAKE_PER_STATEMENT]);
        const pause = change.pausedAt === undefined ? null : change.pausedAt === null ? 'resume' : 'pause';
        // (SET reads the row as it was: the old secret becomes the previous one)
        const rows = await tx.query<WebhookRow>(
          `UPDATE ${s}.webhooks SET
             events = coalesce($2::text[], events),
             description = CASE WHEN $3::boolean THEN $4::text ELSE description END,
             paused_at = CASE $5::text WHEN 'pause' THEN coalesce(paused_at, $6::text) WHEN 'resume' THEN NULL ELSE paused_at END,
             failing_since = CASE WHEN $5::text = 'resume' THEN NULL ELSE failing_since END,
             -- enabled again: owed what is recorded from now on, as a new endpoint is
             owed_upto = CASE WHEN $5::text = 'resume' AND disabled_at IS NOT NULL THEN greatest(owed_upto, (SELECT place FROM ${s}.owed_head)) ELSE owed_upto END,
             disabled_at = CASE WHEN $5::text = 'resume' THEN NULL ELSE disabled_at END,
             previous_secret = CASE WHEN $7::text IS NULL THEN previous_secret ELSE secret END,
             previous_secret_expires_at = CASE WHEN $7::text IS NULL THEN previous_secret_expires_at ELSE $8::text END,
             secret = coalesce($7::text, secret)
           WHERE id = $1
           RETURNING ${WEBHOOK_COLUMNS}`,
          [id, change.events ?? null, change.description !== undefined, change.description ?? null, pause, change.pausedAt ?? null, change.rotate?.secret ?? null, change.rotate?.previousSecretExpiresAt ?? null],
        );
        // (resumed: its waiting deliveries are due)
        if (pause === 'resume') await notifyDeliveries(tx, s);
        return rows[0] === undefined ? null : webhookOf(rows[0]);
      });
    },

    async addDelivery({ webhookId, id, event, now }): Promise<DeliveryRecord | null> {
      return transaction(async (tx) => {
        // The endpoint's row locked: a deletion meanwhile is waited for (or waits).
        const [hook] = await tx.query<{ disabled_at: string | null }>(`SELECT disabled_at FROM ${s}.webhooks WHERE id = $1 FOR NO KEY UPDATE`, [webhookId]);
        if (hook === undefined) return null;
        await tx.query(`INSERT INTO ${s}.events (id, type, at, body) VALUES ($1, $2, $3::bigint, $4) ON CONFLICT (id) DO NOTHING`, [event.id, event.type, event.at, event.body]);
        // A disabled endpoint's ends as failed at once (as a replay's: the claim would settle it so).
        const disabled = hook.disabled_at !== null;
        const rows = await tx.query<DeliveryRow>(
          `WITH d AS (
             INSERT INTO ${s}.deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at, place, last_error)
             VALUES ($1, $2, $3, $4::bigint, $5, 0, $6::bigint, nextval('${s}.owed_place'), $7)
             RETURNING *
           )
           SELECT ${DELIVERY_COLUMNS('d', 'e')} FROM d JOIN ${s}.events AS e ON e.id = d.event_id`,
          [id, event.id, webhookId, now, disabled ? 'failed' : 'pending', disabled ? null : now, disabled ? DISABLED_ERROR : null],
        );
        if (!disabled) await notifyDeliveries(tx, s);
        return rows[0] === undefined ? null : deliveryOf(rows[0]);
      });
    },

    async getDelivery({ webhookId, id }): Promise<(DeliveryRecord & { body: string }) | null> {
      const rows = await query<DeliveryRow & { body: string }>(
        `SELECT ${DELIVERY_COLUMNS('d', 'e')}, e.body FROM ${s}.deliveries AS d JOIN ${s}.events AS e ON e.id = d.event_id WHERE d.id = $2 AND d.webhook_id = $1`,
        [webhookId, id],
      );
      return rows[0] === undefined ? null : { ...deliveryOf(rows[0]), body: rows[0].body };
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
            const changes = eventsOfStatusChanges(dueStatusChanges(ipos, covered, now));
            if (changes.length > 0) {
              // Owed events take places under the data lock (see the top of this file). A write
              // holding it (a long import) is not waited for: the changes stay unrecorded, the
              // cursor where it was, and the next call (due at once) records them.
              const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::int, $2::int) AS ok', advisoryKey(`${s}.data`));
              if (lock?.ok !== true) return { recorded: 0, nextAt: Math.min(now, nextStatusChangeAt(ipos, covered) ?? now) };
              recorded = (await recordEvents(tx, s, changes, now, endpoints)).events;
              if (recorded > 0) await notifyDeliveries(tx, s);
            }
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
      const limit = bound(input.limit);
      if (limit === 0) {
        // (nothing to take; leases that ran out and disabled endpoints' deliveries are still settled)
        await query(CLAIM(s), claimParams(input, 0));
        return [];
      }
      // A write's gmp.snapshot events are built first (a slice), then the endpoints that are
      // owed deliveries and have fewer due than the claim could take of them get theirs made
      // (bounded), then the claim.
      await buildSnapshotEvents(ctx, { wait: false, events: SNAPSHOT_SLICE });
      const target = Math.min(bound(input.perWebhook) ?? MAKE_PER_ENDPOINT, MAKE_PER_ENDPOINT);
      if (target > 0) await query(TOP_UP(s), [input.now, target, MAKE_PER_STATEMENT]);
      const rows = await query<ClaimRow>(CLAIM(s), claimParams(input, limit));
      return rows.map((r) => ({
        delivery: deliveryOf(r),
        accountId: r.account_id,
        lease: r.lease,
        url: r.url,
        secret: r.secret,
        previousSecret: r.previous_secret_expires_at === null ? null : r.previous_secret,
        previousSecretExpiresAt: r.previous_secret === null || r.previous_secret_expires_at === null ? null : Date.parse(r.previous_secret_expires_at),
        body: r.body,
      }));
    },

    async finishDeliveries(results: readonly DeliveryResult[]): Promise<void> {
      if (results.length === 0) return;
      await transaction((tx) => finish(tx, s, results));
    },

    async listDeliveries({ webhookId, before, limit }): Promise<DeliveryRecord[] | null> {
      // This endpoint's owed deliveries are made first (bounded), never another's: its own row
      // is the only lock waited for. Its gmp.snapshot events are built first when it takes
      // them (a few slices, shared with every endpoint: linear in the events), skipping a row a
      // claim is building (the listing then stops before that row's events: made later).
      const [w] = await query<{ events: string[] }>(`SELECT events FROM ${s}.webhooks WHERE id = $1`, [webhookId]);
      if (w === undefined) return null;
      if (w.events.includes('gmp.snapshot')) await buildSnapshotEvents(ctx, { wait: false, events: MAKE_PER_STATEMENT });
      await query(MAKE_OWN(s), [webhookId, MAKE_PER_STATEMENT]);
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
        // Replays of one event run one after the other: its row locked in a statement of its
        // own, so that the next statement's snapshot sees a replay that committed meanwhile
        // (and answers its pending delivery rather than add a second). NO KEY UPDATE still
        // lets writers' FOR KEY SHARE through, and a prune's DELETE waits for it, as before.
        await tx.query(
          `SELECT 1 FROM ${s}.deliveries AS o JOIN ${s}.events AS e ON e.id = o.event_id WHERE o.id = $2 AND o.webhook_id = $1 FOR NO KEY UPDATE OF e`,
          [webhookId, of],
        );
        // The event is locked first (as the foreign key would lock it), so that a prune
        // deleting it meanwhile is waited for, and then the delivery is not found: the row is
        // gone from the join, and nothing is inserted (the foreign key's own check would fail
        // instead). A prune that comes later skips the locked event and keeps it. A delivery
        // still pending is returned as it is; else the new one takes the next place of the
        // owed order (after everything owed before it).
        const rows = await tx.query<DeliveryRow & { added: boolean }>(
          `WITH o AS MATERIALIZED (
             SELECT o.* FROM ${s}.deliveries AS o JOIN ${s}.events AS e ON e.id = o.event_id
             WHERE o.id = $2 AND o.webhook_id = $1
             FOR KEY SHARE OF e
           ),
           -- the endpoint's newest pending delivery of the event (o itself, or a replay of it)
           p AS MATERIALIZED (
             SELECT x.* FROM o JOIN ${s}.deliveries AS x ON x.event_id = o.event_id AND x.webhook_id = o.webhook_id
             WHERE x.state = 'pending'
             ORDER BY x.created_at DESC, x.id DESC LIMIT 1
           ),
           d AS (
             INSERT INTO ${s}.deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at, place)
             SELECT $3, o.event_id, o.webhook_id, $4::bigint, 'pending', 0, $4::bigint, nextval('${s}.owed_place')
             FROM o WHERE NOT EXISTS (SELECT 1 FROM p)
             RETURNING *
           )
           SELECT ${DELIVERY_COLUMNS('d', 'e')}, true AS added FROM d JOIN ${s}.events AS e ON e.id = d.event_id
           UNION ALL
           SELECT ${DELIVERY_COLUMNS('p', 'e')}, false AS added FROM p JOIN ${s}.events AS e ON e.id = p.event_id`,
          [webhookId, of, id, now],
        );
        if (rows[0] === undefined) return null;
        if (rows[0].added) await notifyDeliveries(tx, s);
        return deliveryOf(rows[0]);
      });
    },

    async pruneDeliveries({ before, keepPerWebhook }: { before: number; keepPerWebhook: number }): Promise<number> {
      return transaction(async (tx) => {
        // (rows a finish or claim holds are left for the next prune: it never waits, so it never deadlocks with one)
        // Forgotten: settled deliveries last tried (or made) before `before`, and those of an
        // endpoint past its newest `keepPerWebhook` settled ones (counted among all its settled
        // ones, old or not). At most PRUNE_ROWS a call: by age first, the oldest first; then by
        // count, the endpoints in turn from where the last prune stopped, PRUNE_ENDPOINTS a call.
        const keep = bound(keepPerWebhook, false);
        let edges: Array<{ webhook_id: string; created_at: string; id: string }> = [];
        let after = '';
        let hooks: Array<{ id: string }> = [];
        if (keep !== null) {
          const [cursor] = await tx.query<{ after: string }>(`SELECT after FROM ${s}.prune_cursor FOR UPDATE`);
          after = cursor?.after ?? '';
          hooks = await tx.query<{ id: string }>(`SELECT id FROM ${s}.webhooks WHERE id > $1 ORDER BY id LIMIT $2::int`, [after, PRUNE_ENDPOINTS]);
          // (each endpoint's newest settled delivery past the ones kept, before anything goes)
          edges = await tx.query<{ webhook_id: string; created_at: string; id: string }>(
            `SELECT h.id AS webhook_id, edge.created_at, edge.id
             FROM unnest($1::text[]) AS h(id)
             CROSS JOIN LATERAL (
               SELECT e.created_at, e.id FROM ${s}.deliveries AS e WHERE e.webhook_id = h.id AND e.state <> 'pending'
               ORDER BY e.created_at DESC, e.id DESC OFFSET $2::bigint LIMIT 1
             ) AS edge`,
            [hooks.map((h) => h.id), keep],
          );
        }
        const gone = await tx.query<{ event_id: string }>(
          `DELETE FROM ${s}.deliveries WHERE id IN (
             SELECT id FROM ${s}.deliveries WHERE state <> 'pending' AND coalesce(last_attempt_at, created_at) < $1::bigint
             ORDER BY coalesce(last_attempt_at, created_at) LIMIT $2::int FOR UPDATE SKIP LOCKED
           )
           RETURNING event_id`,
          [before, PRUNE_ROWS],
        );
        const room = PRUNE_ROWS - gone.length;
        if (keep !== null) {
          let more: Array<{ event_id: string }> = [];
          if (room > 0 && edges.length > 0) {
            more = await tx.query<{ event_id: string }>(
              `DELETE FROM ${s}.deliveries WHERE id IN (
                 SELECT x.id FROM ${s}.deliveries AS x WHERE x.id IN (
                   SELECT d.id
                   FROM json_to_recordset($1::json) AS edge(webhook_id text, created_at bigint, id text)
                   CROSS JOIN LATERAL (
                     SELECT d.id FROM ${s}.deliveries AS d
                     WHERE d.webhook_id = edge.webhook_id AND d.state <> 'pending' AND (d.created_at, d.id) <= (edge.created_at, edge.id)
                     ORDER BY d.created_at DESC, d.id DESC LIMIT $2::int
                   ) AS d
                   LIMIT $2::int
                 )
                 FOR UPDATE SKIP LOCKED
               )
               RETURNING event_id`,
              [JSON.stringify(edges), room],
            );
            gone.push(...more);
          }
          // Round the endpoints again from the first after the last; where the rows ran out, the
          // next prune starts from the same endpoints again.
          const next = room <= 0 || more.length >= room ? after : hooks.length < PRUNE_ENDPOINTS ? '' : hooks[hooks.length - 1]!.id;
          await tx.query(`UPDATE ${s}.prune_cursor SET after = $1`, [next]);
        }
        await dropLoneEvents(tx, s, [...gone.map((r) => r.event_id), ...(await trimOwed(tx, s))]);
        return gone.length;
      });
    },

    async outboxStats(): Promise<{ pending: number; oldestAt: number | null }> {
      const [row] = await query<{ pending: number; oldest: number | null }>(OUTBOX_STATS(s));
      const pending = Number(row?.pending ?? 0);
      return { pending, oldestAt: pending === 0 || row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest) };
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

/**
 * `outboxStats`, one statement (`MemoryOutbox.stats`): per endpoint not disabled (paused ones
 * included), its pending deliveries (the index deliveries_owed holds the pending rows only),
 * the owed events after its cursor of the types it takes and that it was there for (`up_to`:
 * the index owed_type, one range per type; the owed rows go once every cursor passed them),
 * and the gmp.snapshot events of writes not built yet (one per snapshot left of a row, per
 * endpoint taking the type that the write saw and whose cursor is still before the row's
 * places: an endpoint enabled again after the write moved past them and gets none; a row
 * without places, of an earlier version, takes new places when built: every such endpoint
 * gets it). Settled deliveries are never read. The instants: a delivery's creation, an owed
 * event's write (`at`), a row's write.
 */
const OUTBOX_STATS = (s: string): string => `
WITH w AS MATERIALIZED (
  SELECT id, seq, owed_upto, ARRAY(SELECT DISTINCT unnest(events)) AS events FROM ${s}.webhooks WHERE disabled_at IS NULL
),
made AS (
  SELECT count(*) AS n, min(d.created_at) AS oldest
  FROM w JOIN ${s}.deliveries AS d ON d.webhook_id = w.id AND d.state = 'pending'
),
owed AS (
  SELECT count(*) AS n, min(o.at) AS oldest
  FROM w CROSS JOIN LATERAL unnest(w.events) AS t(type)
  JOIN ${s}.owed AS o ON o.type = t.type AND o.place > w.owed_upto AND o.up_to >= w.seq
),
pieces AS (
  SELECT c.at, c.up_to, cardinality(c.ipo_ids) - c.done AS remaining, c.places[c.done + 1] AS first FROM ${s}.snapshot_changes AS c
  UNION ALL
  SELECT e.at, e.up_to, json_array_length(e.snapshots), NULL FROM ${s}.snapshot_events AS e
),
unbuilt AS (
  SELECT sum(r.remaining * k.n) AS n, min(r.at) FILTER (WHERE r.remaining * k.n > 0) AS oldest
  FROM pieces AS r
  CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM w
    WHERE 'gmp.snapshot' = ANY (w.events) AND w.seq <= r.up_to AND (r.first IS NULL OR w.owed_upto < r.first)
  ) AS k
)
SELECT (made.n + owed.n + coalesce(unbuilt.n, 0))::float8 AS pending, least(made.oldest, owed.oldest, unbuilt.oldest)::float8 AS oldest
FROM made, owed, unbuilt`;

/** The claim's parameters (see {@link CLAIM}). */
function claimParams(
  input: { now: number; perWebhook: number; perAccount: number; leaseMs: number; busy: ReadonlyMap<string, number>; busyAccounts: ReadonlyMap<string, number> },
  limit: number | null,
): unknown[] {
  return [
    input.now,
    limit,
    bound(input.perWebhook),
    input.leaseMs,
    [...input.busy.keys()],
    [...input.busy.values()],
    DISABLED_ERROR,
    bound(input.perAccount),
    [...input.busyAccounts.keys()],
    [...input.busyAccounts.values()],
  ];
}

// ---------------------------------------------------------------------------------------
// Making deliveries of what endpoints are owed.

/**
 * The last place an endpoint `w` may be made up to, as SQL: the head, and for an endpoint
 * taking gmp.snapshot, before the first place of a write's snapshot events not built yet.
 */
const HORIZON = (w: string): string => `
  CASE WHEN 'gmp.snapshot' = ANY (${w}.events)
    THEN least(lim.head, coalesce(lim.gap - 1, lim.head)) ELSE lim.head END`;

const LIMITS = (s: string): string => `
lim AS MATERIALIZED (
  SELECT (SELECT place FROM ${s}.owed_head) AS head,
         (SELECT min(c.places[c.done + 1]) FROM ${s}.snapshot_changes AS c WHERE c.places IS NOT NULL) AS gap
)`;

/**
 * Makes the deliveries of `want` (endpoints locked, with `n` each, `hz` their horizon): per
 * endpoint its next owed events of the types it takes, in place order (one index range per
 * type, each at most `n`), up to `n`; the events' rows where no delivery had them yet; the
 * deliveries, due at their write; and the cursor moved to the last one made, or to the horizon
 * when fewer than `n` were left. Time linear in the rows made (and `n` per type).
 */
const MAKE = (s: string): string => `
pick AS MATERIALIZED (
  SELECT w.id AS webhook_id, o.place, o.event_id, o.type, o.at, o.body
  FROM want AS w
  CROSS JOIN LATERAL (
    SELECT o.* FROM unnest(w.events) AS t(type)
    CROSS JOIN LATERAL (
      SELECT o.place, o.event_id, o.type, o.at, o.body FROM ${s}.owed AS o
      WHERE o.type = t.type AND o.place > w.owed_upto AND o.place <= w.hz AND o.up_to >= w.seq
      ORDER BY o.place LIMIT w.n
    ) AS o
    ORDER BY o.place LIMIT w.n
  ) AS o
),
ev AS (
  INSERT INTO ${s}.events (id, type, at, body)
  SELECT DISTINCT ON (event_id) event_id, type, at, body FROM pick ORDER BY event_id
  ON CONFLICT (id) DO NOTHING
),
dl AS (
  INSERT INTO ${s}.deliveries (id, event_id, webhook_id, created_at, state, attempts, next_attempt_at, place)
  SELECT 'dlv_' || substr(md5(gen_random_uuid()::text), 1, 20), event_id, webhook_id, at, 'pending', 0, at, place
  FROM pick ORDER BY webhook_id, place
  RETURNING 1
),
made AS (SELECT webhook_id, count(*) AS k, max(place) AS last FROM pick GROUP BY webhook_id),
cur AS (
  UPDATE ${s}.webhooks AS x
  SET owed_upto = greatest(x.owed_upto, CASE WHEN coalesce(made.k, 0) >= w.n THEN made.last ELSE w.hz END)
  FROM want AS w LEFT JOIN made ON made.webhook_id = w.id
  WHERE x.id = w.id
  RETURNING 1
)
SELECT (SELECT count(*) FROM dl)::int AS made, (SELECT count(*) FROM cur)::int AS moved`;

/**
 * A listing's: the endpoint $1's owed deliveries, at most $2, waiting for its row only (a
 * claim making its deliveries, a finish, a deletion).
 */
const MAKE_OWN = (s: string): string => `
WITH ${LIMITS(s)},
want AS MATERIALIZED (
  SELECT w.id, w.seq, w.events, w.owed_upto, $2::int AS n, ${HORIZON('w')} AS hz
  FROM ${s}.webhooks AS w, lim
  WHERE w.id = $1 AND w.disabled_at IS NULL
  FOR NO KEY UPDATE OF w
),
${MAKE(s)}`;

/**
 * A claim's: the enabled endpoints owed deliveries (cursor before the horizon) that have fewer
 * than $2 due and unleased at $1 are made up to $2 less those, in turn across accounts (the
 * first endpoint of every account, by how far behind it is, then the second...), at most $3
 * in all; endpoints another transaction holds are skipped (the next claim makes theirs).
 */
const TOP_UP = (s: string): string => `
WITH ${LIMITS(s)},
behind AS MATERIALIZED (
  SELECT w.id, w.account_id, w.seq, w.events, w.owed_upto, ${HORIZON('w')} AS hz
  FROM ${s}.webhooks AS w, lim
  WHERE w.disabled_at IS NULL AND w.owed_upto < lim.head
),
need AS MATERIALIZED (
  -- (no more than the places it is behind: an upper bound of what it is owed)
  SELECT b.*, least($2::int - due.k, b.hz - b.owed_upto)::int AS n,
         row_number() OVER (PARTITION BY b.account_id ORDER BY b.owed_upto, b.id) AS turn
  FROM behind AS b
  CROSS JOIN LATERAL (
    SELECT count(*)::int AS k FROM (
      SELECT 1 FROM ${s}.deliveries AS d
      WHERE d.webhook_id = b.id AND d.state = 'pending' AND d.next_attempt_at <= $1::bigint AND (d.lease IS NULL OR d.lease_until <= $1::bigint)
      LIMIT $2::int
    ) AS z
  ) AS due
  WHERE b.owed_upto < b.hz AND due.k < $2::int
),
ranked AS MATERIALIZED (
  SELECT need.*, sum(n) OVER (ORDER BY turn, owed_upto, id) AS upto FROM need
),
want AS MATERIALIZED (
  SELECT w.id, r.seq, r.events, w.owed_upto, least(r.n, $3::int - (r.upto - r.n))::int AS n, r.hz
  FROM ranked AS r JOIN ${s}.webhooks AS w ON w.id = r.id
  WHERE r.upto - r.n < $3::int
  ORDER BY w.id
  FOR NO KEY UPDATE OF w SKIP LOCKED
),
${MAKE(s)}`;

/** Snapshots of a `snapshot_changes` row built into events in one transaction. */
const SNAPSHOT_SLICE = 1_000;
/** At most this many transactions building snapshot events for one claim or listing. */
const BUILD_STEPS = 8;

/**
 * Builds writes' `gmp.snapshot` events into `owed` rows, oldest first: first the rows a
 * write of this version added to `snapshot_changes` with their places (migration 11), then
 * those of processes of earlier versions (`snapshot_events` rows of versions 7 and 8,
 * `snapshot_changes` rows without places of versions 9 and 10; a rolling deploy), which take
 * new places under the data lock (skipped while a write holds it). Each step is a transaction
 * that locks the row, builds the events of its next `SNAPSHOT_SLICE` snapshots (a
 * `snapshot_events` row: all of its at most 1,000) with the core's `eventsOfWrite`, records
 * them as owed to the endpoints taking the type that the write saw (`up_to`), announces them,
 * and moves the row's `done` on, or deletes the row when it is through. Stops when no row is
 * left, once `events` events were built, or after BUILD_STEPS steps. `wait: false` skips rows another transaction holds (claims,
 * listings: they wait for no other work); `wait: true` waits for them. Each event is built once: the row is locked, and
 * moved on in the same transaction. Resolves to the events built.
 *
 * @example
 * ```ts
 * await buildSnapshotEvents(ctx, { wait: false, events: 1_000 });
 * ```
 */
export async function buildSnapshotEvents(ctx: Pick<WebhookContext, 's' | 'query' | 'transaction'>, { wait, events }: { wait: boolean; events: number }): Promise<number> {
  const { s, query, transaction } = ctx;
  // (most claims find none: one plain read, not a transaction)
  const [pending] = await query<{ before: boolean; now: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${s}.snapshot_events) AS before, EXISTS (SELECT 1 FROM ${s}.snapshot_changes) AS now`,
  );
  if (pending === undefined || (!pending.before && !pending.now)) return 0;
  let built = 0;
  let legacy = pending.before || pending.now;
  for (let step = 0; step < BUILD_STEPS && built < events; step++) {
    const added = await transaction(async (tx) => {
      const n = await buildChangesSlice(tx, s, wait, true);
      if (n !== null || !legacy) return n;
      // Rows of earlier versions take places now: under the data lock, not waited for.
      const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::int, $2::int) AS ok', advisoryKey(`${s}.data`));
      if (lock?.ok !== true) return null;
      const m = await buildEventsRow(tx, s, wait);
      if (m !== null) return m;
      const k = await buildChangesSlice(tx, s, wait, false);
      if (k === null) legacy = false;
      return k;
    });
    if (added === null) break;
    built += added;
  }
  return built;
}

/** How many enabled endpoints taking gmp.snapshot a write saw (`b.up_to`), as SQL. */
const SNAPSHOT_ENDPOINTS = (s: string): string =>
  `(SELECT count(*)::int FROM ${s}.webhooks AS w WHERE w.disabled_at IS NULL AND 'gmp.snapshot' = ANY (w.events) AND w.seq <= b.up_to) AS endpoints`;

/**
 * The events of these snapshots, written at `at`, recorded as owed at `places` (null: the next
 * places, and the head moved: the caller holds the data lock) and announced.
 */
async function recordSnapshotEvents(tx: Transaction, s: string, snapshots: SnapshotRecord[], at: number, upTo: number, places: ReadonlyArray<string | number> | null): Promise<number> {
  const events = eventsOfWrite({ at, ipos: [], snapshots, deleted: [] }, GMP_SNAPSHOT);
  let recorded: number;
  if (places === null) {
    recorded = (await recordEvents(tx, s, events, at, { upTo })).events;
  } else {
    const [r] = await tx.query<{ events: number }>(
      `WITH x AS (SELECT * FROM json_to_recordset($1::json) AS x(place bigint, id text, type text, body text)),
       ins AS (
         INSERT INTO ${s}.owed (place, event_id, type, at, up_to, body)
         SELECT place, id, type, $2::bigint, $3::bigint, body FROM x ORDER BY place
         ON CONFLICT DO NOTHING
         RETURNING 1
       )
       SELECT count(*)::int AS events FROM ins`,
      [JSON.stringify(events.map((e, i) => ({ place: String(places[i]), id: e.id, type: e.type, body: e.body }))), at, upTo],
    );
    recorded = Number(r?.events ?? 0);
  }
  if (recorded > 0) await notifyDeliveries(tx, s);
  return recorded;
}

/** Builds the oldest `snapshot_events` row (of a version 7 or 8 process) whole; null when none is left to take. */
async function buildEventsRow(tx: Transaction, s: string, wait: boolean): Promise<number | null> {
  const [row] = await tx.query<{ seq: string; at: string; up_to: string; snapshots: SnapshotEventRow[] | string; endpoints: number }>(
    `SELECT b.seq, b.at, b.up_to, b.snapshots, ${SNAPSHOT_ENDPOINTS(s)}
     FROM ${s}.snapshot_events AS b ORDER BY b.seq LIMIT 1 FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
  );
  if (row === undefined) return null;
  let built = 0;
  if (row.endpoints > 0) {
    const list = typeof row.snapshots === 'string' ? (JSON.parse(row.snapshots) as SnapshotEventRow[]) : row.snapshots;
    built = await recordSnapshotEvents(tx, s, list.map(snapshotOfEventRow), Number(row.at), Number(row.up_to), null);
  }
  await tx.query(`DELETE FROM ${s}.snapshot_events WHERE seq = $1`, [row.seq]);
  return built;
}

type ChangesRow = { seq: string; at: string; up_to: string; done: number; n: number; endpoints: number; ipo_ids: string[]; ts: Array<string | number>; places: Array<string | number> | null } & Record<
  `agg_${GmpField}`,
  Array<string | number | null>
>;

/**
 * Builds the next SNAPSHOT_SLICE snapshots of the oldest `snapshot_changes` row with places
 * (`placed`) or without (of a version 9 or 10 process), and moves its `done` on or deletes
 * it; null when no row is left to take. A row no endpoint takes any more goes whole
 * (endpoints are never enabled again).
 */
async function buildChangesSlice(tx: Transaction, s: string, wait: boolean, placed: boolean): Promise<number | null> {
  const slice = (column: string) => `b.${column}[b.done + 1 : b.done + ${SNAPSHOT_SLICE}] AS ${column}`;
  const [row] = await tx.query<ChangesRow>(
    `SELECT b.seq, b.at, b.up_to, b.done, cardinality(b.ipo_ids) AS n, ${SNAPSHOT_ENDPOINTS(s)},
       ${['ipo_ids', 'ts', 'places', ...GMP_FIELDS.map((f) => `agg_${f}`)].map(slice).join(', ')}
     FROM ${s}.snapshot_changes AS b WHERE b.places IS ${placed ? 'NOT NULL' : 'NULL'}
     ORDER BY b.seq LIMIT 1 FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
  );
  if (row === undefined) return null;
  const taken = row.ipo_ids.length;
  let built = 0;
  if (row.endpoints > 0) {
    const snapshots = row.ipo_ids.map((ipoId, i) => snapshotOfEventRow([ipoId, row.ts[i]!, ...GMP_FIELDS.map((f) => row[`agg_${f}`][i] ?? null)]));
    built = await recordSnapshotEvents(tx, s, snapshots, Number(row.at), Number(row.up_to), placed ? row.places : null);
  }
  if (row.endpoints === 0 || row.done + taken >= row.n) await tx.query(`DELETE FROM ${s}.snapshot_changes WHERE seq = $1`, [row.seq]);
  else await tx.query(`UPDATE ${s}.snapshot_changes SET done = done + $2 WHERE seq = $1`, [row.seq, taken]);
  return built;
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
 * Forgets the owed events every enabled endpoint's cursor has passed (made, or not taken), at
 * most PRUNE_OWED, as `MemoryOutbox` trims its log; resolves to their ids (their `events` rows
 * go with the caller's {@link dropLoneEvents} when no delivery names them).
 */
async function trimOwed(tx: Transaction, s: string): Promise<string[]> {
  const passed = await tx.query<{ event_id: string }>(
    `DELETE FROM ${s}.owed WHERE place IN (
       SELECT place FROM ${s}.owed
       WHERE place <= (SELECT coalesce((SELECT min(owed_upto) FROM ${s}.webhooks WHERE disabled_at IS NULL), (SELECT place FROM ${s}.owed_head)))
       ORDER BY place LIMIT $1::int FOR UPDATE SKIP LOCKED
     )
     RETURNING event_id`,
    [PRUNE_OWED],
  );
  return passed.map((r) => r.event_id);
}

/**
 * Deletes those of these events that no delivery names any more and that are not owed (an
 * endpoint's delivery of it still to be made); a delivery being added to one by a replay that
 * has not committed keeps it: that row is locked, and skipped.
 */
async function dropLoneEvents(tx: Transaction, s: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `DELETE FROM ${s}.events WHERE id IN (
       SELECT e.id FROM ${s}.events AS e
       WHERE e.id = ANY ($1::text[])
         AND NOT EXISTS (SELECT 1 FROM ${s}.deliveries AS d WHERE d.event_id = e.id)
         AND NOT EXISTS (SELECT 1 FROM ${s}.owed AS o WHERE o.event_id = e.id)
       FOR UPDATE SKIP LOCKED
     )`,
    [[...new Set(ids)]],
  );
}

/**
 * The claim, one statement (`MemoryOutbox.claim`, the rule of `WebhookStore.claimDeliveries`):
 * every lease that has run out is given up; the pending deliveries no claim holds of a
 * disabled endpoint (an attempt in flight when it was disabled, retried since; a replay) end
 * as failed; and the due deliveries are claimed: per enabled endpoint its first due ones by
 * (next_attempt_at, place) numbered (`rw`), those past perWebhook less busy left; per account
 * what is left by (busy + rw, next_attempt_at, place, webhook id) numbered (`ra`), those past
 * perAccount less busyAccounts left; then the first `limit` by (busyAccounts + ra,
 * next_attempt_at, place, webhook id). Deliveries made before migration 11 have no place: they
 * come first, by seq. Parameters: $1 now, $2 limit, $3 perWebhook (null: no bound), $4
 * leaseMs, $5 and $6 busy's endpoints and counts, $7 DISABLED_ERROR, $8 perAccount (null: no
 * bound), $9 and $10 busyAccounts' accounts and counts.
 *
 * The walk reads at most what perWebhook, perAccount and limit leave of each enabled endpoint
 * (the index deliveries_owed), so one endpoint's backlog is never walked through, and a claim
 * locks no more of it than it could take: a claim running meanwhile takes the next rows. Rows
 * are locked FOR UPDATE SKIP LOCKED: a row another claim (or a finish) holds is passed over,
 * and one it leased meanwhile fails the recheck of `lease_until <= now`; no row is returned
 * twice.
 */
const CLAIM = (s: string): string => `
WITH b AS (SELECT * FROM unnest($5::text[], $6::bigint[]) AS b(id, n)),
ba AS (SELECT * FROM unnest($9::text[], $10::bigint[]) AS ba(id, n)),
cand AS MATERIALIZED (
  SELECT d.id, d.nat, d.place, d.seq, w.id AS webhook_id, w.account_id, coalesce(b.n, 0) AS busy, coalesce(ba.n, 0) AS abusy,
         row_number() OVER (PARTITION BY w.id ORDER BY d.nat, d.place NULLS FIRST, d.seq) AS rw
  FROM ${s}.webhooks AS w
  LEFT JOIN b ON b.id = w.id
  LEFT JOIN ba ON ba.id = w.account_id
  CROSS JOIN LATERAL (
    SELECT d.id, d.next_attempt_at AS nat, d.place, d.seq FROM ${s}.deliveries AS d
    WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= $1::bigint
      AND (d.lease IS NULL OR d.lease_until <= $1::bigint)
    ORDER BY d.next_attempt_at, d.place NULLS FIRST, d.seq
    LIMIT greatest(least(coalesce($3::bigint, 9223372036854775807) - coalesce(b.n, 0), coalesce($8::bigint, 9223372036854775807) - coalesce(ba.n, 0), coalesce($2::bigint, 9223372036854775807)), 0)
    FOR UPDATE OF d SKIP LOCKED
  ) AS d
  WHERE w.disabled_at IS NULL AND w.paused_at IS NULL
),
ra AS MATERIALIZED (
  SELECT c.*, row_number() OVER (PARTITION BY c.account_id ORDER BY c.busy + c.rw, c.nat, c.place NULLS FIRST, c.webhook_id, c.seq) AS ra FROM cand AS c
),
pick AS MATERIALIZED (
  SELECT r.id, row_number() OVER (ORDER BY r.abusy + r.ra, r.nat, r.place NULLS FIRST, r.webhook_id, r.seq) AS pos
  FROM ra AS r
  WHERE r.ra <= coalesce($8::bigint, 9223372036854775807) - r.abusy
  ORDER BY r.abusy + r.ra, r.nat, r.place NULLS FIRST, r.webhook_id, r.seq
  LIMIT $2::bigint
),
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
  RETURNING d.*, pick.pos
)
SELECT ${DELIVERY_COLUMNS('c', 'e')}, c.lease, w.account_id, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, e.body
FROM claimed AS c JOIN ${s}.webhooks AS w ON w.id = c.webhook_id JOIN ${s}.events AS e ON e.id = c.event_id
ORDER BY c.pos`;

/** A delivery's columns as {@link deliveryOf} reads them, of delivery `d` and its event `e`. */
const DELIVERY_COLUMNS = (d: string, e: string): string =>
  `${d}.id, ${d}.webhook_id, ${d}.event_id, ${e}.type AS event_type, ${d}.created_at::float8 AS created_at, ${d}.state, ${d}.attempts,
   ${d}.next_attempt_at::float8 AS next_attempt_at, ${d}.last_attempt_at::float8 AS last_attempt_at, ${d}.last_status, ${d}.last_error,
   ${d}.last_response_body`;

/** An endpoint's columns as {@link webhookOf} reads them. */
const WEBHOOK_COLUMNS = 'id, account_id, url, events, description, secret, created_at, disabled_at, paused_at, previous_secret, previous_secret_expires_at';

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
    `SELECT id, webhook_id, lease, state, attempts, next_attempt_at::float8 AS next_attempt_at, last_attempt_at::float8 AS last_attempt_at, last_status, last_error, last_response_body
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
    d.last_response_body = r.responseBody ?? null;
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
    } else if (endpoint !== undefined && endpoint.disabledAt !== null) {
      // (its endpoint was disabled while the attempt was out: it ends as the others did)
      d.state = 'failed';
      d.next_attempt_at = null;
      d.last_error = DISABLED_ERROR;
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
       last_attempt_at = x.last_attempt_at, last_status = x.last_status, last_error = x.last_error, last_response_body = x.last_response_body
     FROM json_to_recordset($1::json) AS x(id text, state text, attempts int, next_attempt_at bigint, last_attempt_at bigint, last_status int, last_error text, last_response_body text)
     WHERE d.id = x.id`,
    [
      JSON.stringify(
        changed.map((d) => ({ id: d.id, state: d.state, attempts: d.attempts, next_attempt_at: d.next_attempt_at, last_attempt_at: d.last_attempt_at, last_status: d.last_status, last_error: d.last_error, last_response_body: d.last_response_body })),
      ),
    ],
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

interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  created_at: string;
  disabled_at: string | null;
  paused_at: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
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
  last_response_body: string | null;
}

interface ClaimRow extends DeliveryRow {
  lease: string;
  account_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
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
  last_response_body: string | null;
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
    pausedAt: r.paused_at,
    previousSecret: r.previous_secret,
    previousSecretExpiresAt: r.previous_secret_expires_at,
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
    lastResponseBody: r.last_response_body,
  };
}
