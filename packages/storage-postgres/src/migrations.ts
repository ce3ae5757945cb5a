/**
 * Versioned schema migrations, applied by an explicit, awaited `migrate(client)`.
 * Every table lives in one schema (default `ipokit`); applied versions are recorded in
 * `<schema>.migrations`. Concurrent `migrate` calls serialise on an advisory lock.
 */
import { createHash } from 'node:crypto';
import { IpokitError } from '@ipokit/core';
import { Database, type PostgresClient } from './client.js';

/** The default schema of every table. */
export const DEFAULT_SCHEMA = 'ipokit';

/** Options of {@link migrate} and `postgresStore`. */
export interface SchemaOptions {
  /** Schema holding every table, default `ipokit`: lowercase letters, digits and `_`. */
  schema?: string;
}

/** One migration: a version and the SQL that takes the schema to it (`S` stands for the schema). */
interface Migration {
  version: number;
  name: string;
  sql: (s: string) => string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'ipos, snapshots, accounts, keys, rate windows',
    sql: (s) => `
CREATE TABLE ${s}.ipos (
  id            text COLLATE "C" PRIMARY KEY,
  name          text COLLATE "C" NOT NULL,
  -- the symbol with A-Z folded to a-z (done in JavaScript: lower() follows the locale)
  symbol_folded text COLLATE "C",
  slug          text COLLATE "C" NOT NULL,
  type          text NOT NULL CHECK (type IN ('EQ', 'SME', 'DEBT')),
  on_nse        boolean NOT NULL,
  on_bse        boolean NOT NULL,
  -- dates as 'YYYY-MM-DD' text: compared as text they order as dates, and every year the
  -- dataset allows (0000 included, which the date type refuses) is kept as given
  start_date    text COLLATE "C",
  end_date      text COLLATE "C",
  listing_date  text COLLATE "C",
  closing_date  text COLLATE "C" GENERATED ALWAYS AS (coalesce(end_date, start_date)) STORED,
  -- the whole record as imported, returned as is
  doc           json NOT NULL,
  -- deferred: an import may move a symbol or slug from one of its IPOs to another
  CONSTRAINT ipos_symbol_folded_key UNIQUE (symbol_folded) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT ipos_slug_key UNIQUE (slug) DEFERRABLE INITIALLY DEFERRED
);
-- Indexes for the list routes (docs/spec.md#status): each status reads one or two ranges of them.
-- listed: listing_date <= T, in order; closed (part): listing_date > T
CREATE INDEX ipos_listed ON ${s}.ipos (listing_date DESC, id) WHERE listing_date IS NOT NULL;
-- closed (part): never listed, closing_date < T, in order
CREATE INDEX ipos_never_listed ON ${s}.ipos (closing_date DESC, id) WHERE listing_date IS NULL;
-- open: closing_date >= T (open and upcoming IPOs: few)
CREATE INDEX ipos_closing ON ${s}.ipos (closing_date) INCLUDE (start_date, listing_date);
-- upcoming: start_date > T, in order
CREATE INDEX ipos_start ON ${s}.ipos (start_date, id) WHERE start_date IS NOT NULL;
-- announced: in order
CREATE INDEX ipos_announced ON ${s}.ipos (name, id) WHERE start_date IS NULL;

CREATE TABLE ${s}.snapshots (
  ipo_id     text COLLATE "C" NOT NULL REFERENCES ${s}.ipos (id) ON DELETE CASCADE,
  ts         bigint NOT NULL,
  sources    json NOT NULL,
  agg_mean   bigint,
  agg_median bigint,
  agg_min    bigint,
  agg_max    bigint,
  agg_mode   bigint,
  PRIMARY KEY (ipo_id, ts)
);

CREATE TABLE ${s}.accounts (
  id         text COLLATE "C" PRIMARY KEY,
  name       text NOT NULL,
  plan       text NOT NULL CHECK (plan IN ('free', 'paid', 'pro')),
  gmp_addon  boolean NOT NULL,
  created_at text COLLATE "C" NOT NULL
);

CREATE TABLE ${s}.api_keys (
  id         text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id),
  hash       text COLLATE "C" NOT NULL UNIQUE,
  prefix     text NOT NULL,
  label      text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  revoked_at text COLLATE "C"
);
CREATE INDEX api_keys_account ON ${s}.api_keys (account_id, created_at, id);

-- The limiter (docs/spec.md#limits). A window is one row that holds how many hits it keeps and the
-- smallest of them, locked FOR UPDATE by a request that may be admitted; each hit is one row
-- of rate_hits, inserted once when a request is admitted and deleted once when it has left
-- the window. A hit therefore costs O(1) amortised whatever the quota. Times are float8
-- epoch ms, so that the arithmetic is JavaScript's, to the bit.
CREATE TABLE ${s}.rate_windows (
  key        text COLLATE "C" PRIMARY KEY,
  id         bigint GENERATED ALWAYS AS IDENTITY,
  -- the hits rate_hits holds for this window (all inside it as of the last request)
  n_hits     integer NOT NULL DEFAULT 0,
  -- the smallest ts among them, null when there are none
  oldest_ts  float8,
  -- the largest ts ever recorded here: when it has left, every hit has
  newest_ts  float8 NOT NULL DEFAULT '-Infinity',
  -- floor(newest_ts / 1000), for the sweep's index: it changes once a second at most, so
  -- that nearly every hit updates the row in place (a HOT update, no index touched)
  newest_sec float8 NOT NULL DEFAULT '-Infinity'
) WITH (fillfactor = 50);
CREATE INDEX rate_windows_newest ON ${s}.rate_windows (newest_sec);

CREATE TABLE ${s}.rate_hits (
  window_id bigint NOT NULL,
  ts        float8 NOT NULL
);
-- Every read of a window's hits is a range of this index that starts at the window's
-- oldest live hit, so the entries of hits already deleted (below it) are never walked.
CREATE INDEX rate_hits_window_ts ON ${s}.rate_hits (window_id, ts);

-- Keys: the account row is locked first, so two concurrent inserts cannot both pass.
CREATE FUNCTION ${s}.insert_api_key(
  p_id text, p_account text, p_hash text, p_prefix text, p_label text, p_created text,
  p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_plan text;
  v_active bigint;
  v_max float8;
BEGIN
  SELECT plan INTO v_plan FROM ${s}.accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN 'not-found'; END IF;
  SELECT count(*) INTO v_active FROM ${s}.api_keys WHERE account_id = p_account AND revoked_at IS NULL;
  -- (a CASE inside IF ... THEN would end the condition at its own THEN)
  v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
  IF v_active >= v_max THEN
    RETURN 'too-many-keys';
  END IF;
  INSERT INTO ${s}.api_keys (id, account_id, hash, prefix, label, created_at)
    VALUES (p_id, p_account, p_hash, p_prefix, p_label, p_created);
  RETURN 'ok';
END
$fn$;

CREATE FUNCTION ${s}.update_account(
  p_id text, p_plan text, p_gmp_addon boolean, p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS SETOF ${s}.accounts LANGUAGE plpgsql AS $fn$
DECLARE
  v_account ${s}.accounts;
  v_active bigint;
  v_plan text;
  v_max float8;
BEGIN
  SELECT * INTO v_account FROM ${s}.accounts WHERE id = p_id FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  v_plan := coalesce(p_plan, v_account.plan);
  SELECT count(*) INTO v_active FROM ${s}.api_keys WHERE account_id = p_id AND revoked_at IS NULL;
  v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
  IF v_active > v_max THEN
    -- refused: the row comes back unchanged with plan NULL as the marker
    v_account.plan := NULL;
    RETURN NEXT v_account;
    RETURN;
  END IF;
  RETURN QUERY UPDATE ${s}.accounts SET plan = v_plan, gmp_addon = coalesce(p_gmp_addon, gmp_addon)
    WHERE id = p_id RETURNING *;
END
$fn$;

-- The sweep, every rateLimitSweepEvery hits of a store: it forgets up to 1,000 windows whose
-- hits have all left (found by the index on newest_sec), skipping rows in use, and at most
-- 10,000 of their hits per call, the smallest first (a window with more is finished by later
-- sweeps). It runs last in a request, whose windows stay locked meanwhile, so it must never
-- wait for a lock: SKIP LOCKED skips rows in use, but in PostgreSQL 15 it still waits when it
-- follows a row's update chain to a version another transaction holds, and that transaction
-- may be waiting for this request's windows. lock_timeout turns such a wait into an error
-- after 20 ms, and the sweep gives up (undone by its exception block) until the next time.
-- Its statements must walk indexes in order whatever the statistics say (a bitmap scan and a
-- sort would read every idle window or hit), hence the planner settings, which hold only
-- while it runs.
CREATE FUNCTION ${s}.sweep_rate_windows(p_now float8, p_window float8) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off SET jit = off SET lock_timeout = '20ms'
AS $fn$
DECLARE
  v_sweep_keys   text[];
  v_sweep_ids    bigint[];
  v_sweep_counts integer[];
  v_sweep_oldest float8[];
BEGIN
  BEGIN
    SELECT array_agg(i.key), array_agg(i.id), array_agg(i.n_hits), array_agg(i.oldest_ts)
      INTO v_sweep_keys, v_sweep_ids, v_sweep_counts, v_sweep_oldest
    FROM (
      SELECT w.key, w.id, w.n_hits, w.oldest_ts FROM ${s}.rate_windows AS w
      WHERE w.newest_sec <= floor((p_now - p_window) / 1000) AND w.newest_ts <= p_now - p_window AND p_now - w.newest_ts >= p_window
      ORDER BY w.newest_sec LIMIT 1000 FOR UPDATE SKIP LOCKED
    ) AS i;
    IF v_sweep_keys IS NULL THEN
      RETURN;
    END IF;
    -- (every part of this statement reads the hits as they were before it)
    WITH gone AS (
      DELETE FROM ${s}.rate_hits AS h WHERE h.ctid = ANY (ARRAY(
        SELECT x.ctid FROM unnest(v_sweep_ids, v_sweep_oldest) AS sw(id, o)
        CROSS JOIN LATERAL (
          SELECT y.ctid FROM ${s}.rate_hits AS y WHERE y.window_id = sw.id AND y.ts >= sw.o ORDER BY y.ts LIMIT 10000
        ) AS x
        LIMIT 10000
      ))
      RETURNING h.window_id
    ), per AS (
      SELECT g.window_id AS id, count(*)::int AS n FROM gone AS g GROUP BY g.window_id
    ), after AS (
      SELECT sw.k, sw.id, sw.o, sw.n - coalesce(per.n, 0) AS n, coalesce(per.n, 0) AS gone
      FROM unnest(v_sweep_keys, v_sweep_ids, v_sweep_counts, v_sweep_oldest) AS sw(k, id, n, o)
      LEFT JOIN per ON per.id = sw.id
    ), emptied AS (
      DELETE FROM ${s}.rate_windows AS w USING after AS a WHERE w.key = a.k AND a.n <= 0
    )
    -- a window the budget did not empty: its oldest hit is the first one not deleted
    UPDATE ${s}.rate_windows AS w SET n_hits = a.n, oldest_ts = (
        SELECT y.ts FROM ${s}.rate_hits AS y WHERE y.window_id = a.id AND y.ts >= a.o ORDER BY y.ts OFFSET a.gone LIMIT 1
      )
      FROM after AS a WHERE w.key = a.k AND a.n > 0 AND a.gone > 0;
  EXCEPTION WHEN lock_not_available THEN
    RETURN;
  END;
END
$fn$;

-- The limiter: one call per request. A request that a plain read shows to be refused stops
-- there, writing nothing. Otherwise each window's row is locked in key order (so two
-- requests never deadlock), the hits that have left are deleted (a range of the index from
-- the oldest one: each hit is deleted once), the decision is made again on every window, and
-- only an admitted request records its hit; a refused one records nothing (at most it
-- forgets hits that have left). The live hits of a window are, as a sorted list, those of
-- describeWindow (sliding-window.ts): count, the smallest, and the (count - quota)-th
-- smallest, 0-based. Hits may arrive out of order (processes' clocks differ): the index keeps
-- them sorted and oldest_ts is their minimum, whatever the order of arrival.
CREATE FUNCTION ${s}.hit_rate_limit(
  p_now float8, p_window float8, p_keys text[], p_quotas float8[], p_sweep boolean
) RETURNS TABLE (admitted boolean, hit_count integer, oldest float8, blocking float8)
LANGUAGE plpgsql AS $fn$
DECLARE
  -- distinct keys in lock order, and each one's window as it is after the decision
  v_keys   text[];
  v_ids    bigint[] := '{}';
  v_counts integer[] := '{}';
  v_oldest float8[] := '{}';
  v_dirty  boolean := false;
  v_row    record;
  v_gone   integer;
  v_last   float8;
  v_n      integer;
  v_min    float8;
  v_ok     boolean := true;
  v_settled boolean := true;
  v_j      integer;
  v_skip   float8;
  -- a hit at t has left when p_now - t >= p_window (JavaScript's float arithmetic); those
  -- are the hits with t <= some threshold T, and T < v_cut (the margin covers rounding), so
  -- "ts <= v_cut" bounds the index range and the exact test filters it
  v_cut    float8 := (p_now - p_window) + (abs(p_now) + abs(p_window)) * 1e-15;
BEGIN
  IF cardinality(p_keys) = 1 THEN
    v_keys := p_keys;
  ELSE
    SELECT array_agg(k ORDER BY k) INTO v_keys FROM (SELECT DISTINCT u.k COLLATE "C" AS k FROM unnest(p_keys) AS u(k)) AS d;
  END IF;
  -- A refusal needs no lock. While no hit of a window has left (its oldest is inside it),
  -- its hits are all live and are what a lock would show; when one window is full as read
  -- here, the request is refused as of this read, and nothing is written.
  FOR j IN 1..cardinality(v_keys) LOOP
    SELECT w.id, w.n_hits, w.oldest_ts INTO v_row FROM ${s}.rate_windows AS w WHERE w.key = v_keys[j];
    v_ids[j] := v_row.id;
    v_counts[j] := coalesce(v_row.n_hits, 0);
    v_oldest[j] := v_row.oldest_ts;
    IF v_counts[j] > 0 AND p_now - v_oldest[j] >= p_window THEN v_settled := false; END IF;
  END LOOP;
  IF v_settled THEN
    FOR i IN 1..cardinality(p_keys) LOOP
      IF v_counts[array_position(v_keys, p_keys[i])] >= p_quotas[i] THEN v_ok := false; END IF;
    END LOOP;
  END IF;
  IF v_ok THEN
    -- Losing the last fraction of a second of hits in a server crash is acceptable for a
    -- limiter; waiting for a WAL flush on every request is not.
    SET LOCAL synchronous_commit = off;
    FOR j IN 1..cardinality(v_keys) LOOP
      -- Lock the window, creating it when it is missing; only ever waiting for the key at
      -- hand while holding the keys before it, so the order of locking is the key order.
      LOOP
        SELECT w.id, w.n_hits, w.oldest_ts INTO v_row FROM ${s}.rate_windows AS w WHERE w.key = v_keys[j] FOR UPDATE;
        EXIT WHEN FOUND;
        INSERT INTO ${s}.rate_windows AS w (key) VALUES (v_keys[j]) ON CONFLICT (key) DO NOTHING
          RETURNING w.id, w.n_hits, w.oldest_ts INTO v_row;
        EXIT WHEN FOUND;
        -- someone else created it meanwhile (or a sweep removed it): look again
      END LOOP;
      v_n := v_row.n_hits;
      v_min := v_row.oldest_ts;
      IF v_n > 0 AND p_now - v_min >= p_window THEN
        -- Forget the hits that have left: they are the smallest, a range from v_min.
        WITH gone AS (
          DELETE FROM ${s}.rate_hits AS h
          WHERE h.window_id = v_row.id AND h.ts >= v_min AND h.ts <= v_cut AND p_now - h.ts >= p_window
          RETURNING h.ts
        )
        SELECT count(*)::int, max(g.ts) INTO v_gone, v_last FROM gone AS g;
        IF v_gone > 0 THEN
          v_n := v_n - v_gone;
          v_min := NULL;
          -- the new oldest is the first hit above the last one deleted
          IF v_n > 0 THEN
            SELECT h.ts INTO v_min FROM ${s}.rate_hits AS h WHERE h.window_id = v_row.id AND h.ts > v_last ORDER BY h.ts LIMIT 1;
          END IF;
          v_dirty := true;
        END IF;
      END IF;
      v_ids[j] := v_row.id;
      v_counts[j] := v_n;
      v_oldest[j] := v_min;
    END LOOP;
    FOR i IN 1..cardinality(p_keys) LOOP
      IF v_counts[array_position(v_keys, p_keys[i])] >= p_quotas[i] THEN v_ok := false; END IF;
    END LOOP;
    IF v_ok THEN
      FOR j IN 1..cardinality(v_keys) LOOP
        v_counts[j] := v_counts[j] + 1;
        v_oldest[j] := least(v_oldest[j], p_now);
      END LOOP;
      WITH recorded AS (
        INSERT INTO ${s}.rate_hits (window_id, ts) SELECT u.id, p_now FROM unnest(v_ids) AS u(id)
      )
      UPDATE ${s}.rate_windows AS w
        SET n_hits = u.n, oldest_ts = u.o, newest_ts = greatest(w.newest_ts, p_now), newest_sec = floor(greatest(w.newest_ts, p_now) / 1000)
        FROM unnest(v_keys, v_counts, v_oldest) AS u(k, n, o) WHERE w.key = u.k;
    ELSIF v_dirty THEN
      -- refused: nothing is recorded, but the hits that left stay forgotten
      UPDATE ${s}.rate_windows AS w SET n_hits = u.n, oldest_ts = u.o
        FROM unnest(v_keys, v_counts, v_oldest) AS u(k, n, o) WHERE w.key = u.k AND (w.n_hits, w.oldest_ts) IS DISTINCT FROM (u.n, u.o);
    END IF;
  END IF;
  FOR i IN 1..cardinality(p_keys) LOOP
    v_j := array_position(v_keys, p_keys[i]);
    admitted := v_ok;
    hit_count := v_counts[v_j];
    oldest := v_oldest[v_j];
    blocking := NULL;
    IF hit_count >= p_quotas[i] AND hit_count > 0 THEN
      v_skip := hit_count - p_quotas[i];
      IF v_skip = 0 THEN
        blocking := oldest;
      ELSE
        -- more hits than quota (the quota was lowered since they were recorded)
        SELECT h.ts INTO blocking FROM ${s}.rate_hits AS h WHERE h.window_id = v_ids[v_j] AND h.ts >= oldest
          ORDER BY h.ts OFFSET v_skip::bigint LIMIT 1;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  -- Last: the sweep never waits for long (see sweep_rate_windows).
  IF p_sweep THEN
    SET LOCAL synchronous_commit = off;
    PERFORM ${s}.sweep_rate_windows(p_now, p_window);
  END IF;
END
$fn$;
`,
  },
  {
    version: 2,
    name: 'the limiter within a deadline',
    // A limiter call is answered 503 once its request's deadline passes; it must not record
    // a hit after that. lock_timeout, set before hit_rate_limit takes any lock, cuts a wait
    // for a lock at the deadline, and the last check rolls back a call that ran past it for
    // any other reason: either way the statement fails, so nothing it did is kept. The
    // deadline is counted from the statement's own start, on the server's clock.
    sql: (s) => `
CREATE FUNCTION ${s}.hit_rate_limit_within(
  p_now float8, p_window float8, p_keys text[], p_quotas float8[], p_sweep boolean, p_budget_ms float8
) RETURNS TABLE (admitted boolean, hit_count integer, oldest float8, blocking float8)
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM set_config('lock_timeout', greatest(1, ceil(p_budget_ms))::bigint::text || 'ms', true);
  RETURN QUERY SELECT * FROM ${s}.hit_rate_limit(p_now, p_window, p_keys, p_quotas, p_sweep);
  IF clock_timestamp() > statement_timestamp() + p_budget_ms * interval '1 millisecond' THEN
    RAISE EXCEPTION 'the rate-limit call ran past its deadline of % ms', p_budget_ms USING ERRCODE = 'query_canceled';
  END IF;
END
$fn$;
`,
  },
  {
    version: 3,
    name: 'the data version, for the read cache',
    // Every process caches IPO data (data-cache.ts) and must learn when it changes. One row
    // holds a counter that every transaction writing ipos or snapshots moves on once, in that
    // transaction (statement triggers, so an import of a million rows moves it once, and so do
    // the streaming import, deletions and any SQL of your own), and NOTIFY sends the new value
    // on commit. A read that selects the counter with its data knows which version it saw;
    // the counter only grows, so two versions compare in commit order: writers queue on the
    // row's lock, each one after the one before it.
    sql: (s) => `
CREATE TABLE ${s}.data_version (
  id      boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL,
  -- the transaction that moved it last (txid_current()): each moves it once
  xact    bigint
);
INSERT INTO ${s}.data_version (version) VALUES (1);

CREATE FUNCTION ${s}.bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  v_version bigint;
BEGIN
  UPDATE ${s}.data_version SET version = version + 1, xact = txid_current()
    WHERE xact IS DISTINCT FROM txid_current() RETURNING version INTO v_version;
  IF FOUND THEN
    -- delivered when (and only if) the transaction commits
    PERFORM pg_notify('${dataChannel(s.slice(1, -1))}', v_version::text);
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER ipos_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${s}.ipos
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.bump_data_version();
CREATE TRIGGER snapshots_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${s}.snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.bump_data_version();
`,
  },
  {
    version: 4,
    name: 'windows of any length, calendar windows, usage',
    // The limiter takes each window's length and, for a calendar window (an IST day), its
    // start; and counts a keyed request's usage in the same statement.
    //
    // Windows stay rows of rate_windows, whatever their kind, so that a request's windows
    // are all locked in one order (the key's) and the sweep, the locks of an outage and
    // the tests see one table. The key of a row is the window's whole identity, made by the
    // store (postgres-store.ts, storageKey): the stored key alone for a 60 s sliding window
    // (so the windows of before this migration keep their hits), else the stored key, 0x1f
    // and the length, and for a calendar window 0x1f and the start too. A stored key never
    // holds 0x1f (it is printable ASCII or '#' and a digest), so no two windows share a row.
    // A sliding window is what it was: n_hits hits in rate_hits, each inserted once and
    // deleted once. A calendar window keeps only its count, in n_hits, and no rate_hits.
    //
    // The sweep finds rows by forget_sec, the second from which a row may be forgotten
    // (sliding: when its newest hit has left; calendar: a period after its end, as the
    // memory store does, since a process whose clock lags may still charge it). newest_sec,
    // the index of the 60 s-only sweep, goes: the functions of migrations 1 and 2 are
    // replaced by calls of the new ones, so that a process of the previous version (during
    // a rolling deploy, or after a rollback) charges and sweeps as this one does.
    sql: (s) => `
ALTER TABLE ${s}.rate_windows
  -- the window's length; every row before this migration is a 60 s window
  ADD COLUMN ms float8 NOT NULL DEFAULT 60000,
  -- a calendar window's start; null for a sliding window
  ADD COLUMN period_start float8,
  -- floor((newest_ts + ms) / 1000) sliding, floor((period_start + 2 * ms) / 1000) calendar;
  -- -Infinity for a row no hit was charged to (the sweep may take it at once). Like
  -- newest_sec it changes once a second at most, so most hits stay HOT updates.
  ADD COLUMN forget_sec float8 NOT NULL DEFAULT '-Infinity',
  DROP COLUMN newest_sec;
UPDATE ${s}.rate_windows SET forget_sec = floor((newest_ts + 60000) / 1000) WHERE n_hits > 0;
CREATE INDEX rate_windows_forget ON ${s}.rate_windows (forget_sec);

-- Usage (docs/spec.md#usage): one row per account, IST day, key and route.
CREATE TABLE ${s}.key_usage (
  account_id text COLLATE "C" NOT NULL,
  day        text COLLATE "C" NOT NULL,
  key_id     text COLLATE "C" NOT NULL,
  route      text COLLATE "C" NOT NULL CHECK (route IN ('list', 'ipo', 'gmp')),
  admitted   bigint NOT NULL DEFAULT 0,
  refused    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day, key_id, route)
);

-- The sweep (see sweep_rate_windows, migration 1, for why it never waits and walks indexes
-- in order): up to 1,000 windows that may be forgotten, and up to 10,000 of their hits.
CREATE FUNCTION ${s}.forget_rate_windows(p_now float8) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off SET jit = off SET lock_timeout = '20ms'
AS $fn$
DECLARE
  v_sweep_keys   text[];
  v_sweep_ids    bigint[];
  v_sweep_counts integer[];
  v_sweep_oldest float8[];
BEGIN
  BEGIN
    -- (a calendar window holds no rate_hits: it counts as empty here)
    SELECT array_agg(i.key), array_agg(i.id), array_agg(i.n), array_agg(i.o)
      INTO v_sweep_keys, v_sweep_ids, v_sweep_counts, v_sweep_oldest
    FROM (
      SELECT w.key, w.id,
        CASE WHEN w.period_start IS NULL THEN w.n_hits ELSE 0 END AS n,
        CASE WHEN w.period_start IS NULL THEN w.oldest_ts END AS o
      FROM ${s}.rate_windows AS w
      WHERE w.forget_sec <= floor(p_now / 1000)
        AND (w.n_hits = 0 OR CASE WHEN w.period_start IS NULL THEN p_now - w.newest_ts >= w.ms ELSE p_now >= w.period_start + 2 * w.ms END)
      ORDER BY w.forget_sec LIMIT 1000 FOR UPDATE SKIP LOCKED
    ) AS i;
    IF v_sweep_keys IS NULL THEN
      RETURN;
    END IF;
    -- (every part of this statement reads the hits as they were before it)
    WITH gone AS (
      DELETE FROM ${s}.rate_hits AS h WHERE h.ctid = ANY (ARRAY(
        SELECT x.ctid FROM unnest(v_sweep_ids, v_sweep_oldest) AS sw(id, o)
        CROSS JOIN LATERAL (
          SELECT y.ctid FROM ${s}.rate_hits AS y WHERE y.window_id = sw.id AND y.ts >= sw.o ORDER BY y.ts LIMIT 10000
        ) AS x
        LIMIT 10000
      ))
      RETURNING h.window_id
    ), per AS (
      SELECT g.window_id AS id, count(*)::int AS n FROM gone AS g GROUP BY g.window_id
    ), after AS (
      SELECT sw.k, sw.id, sw.o, sw.n - coalesce(per.n, 0) AS n, coalesce(per.n, 0) AS gone
      FROM unnest(v_sweep_keys, v_sweep_ids, v_sweep_counts, v_sweep_oldest) AS sw(k, id, n, o)
      LEFT JOIN per ON per.id = sw.id
    ), emptied AS (
      DELETE FROM ${s}.rate_windows AS w USING after AS a WHERE w.key = a.k AND a.n <= 0
    )
    -- a window the budget did not empty: its oldest hit is the first one not deleted
    UPDATE ${s}.rate_windows AS w SET n_hits = a.n, oldest_ts = (
        SELECT y.ts FROM ${s}.rate_hits AS y WHERE y.window_id = a.id AND y.ts >= a.o ORDER BY y.ts OFFSET a.gone LIMIT 1
      )
      FROM after AS a WHERE w.key = a.k AND a.n > 0 AND a.gone > 0;
  EXCEPTION WHEN lock_not_available THEN
    RETURN;
  END;
END
$fn$;

-- The limiter: one call per request, as hit_rate_limit (migration 1) was, for windows of
-- any length and calendar windows, and within a deadline as hit_rate_limit_within
-- (migration 2) was. p_keys are the rows' keys (see above), p_ms each window's length,
-- p_starts a calendar window's start or NULL for a sliding one. A window named twice
-- (one key) is charged once. With p_account, the same statement adds 1 to that key's
-- admitted or refused count for p_route and p_day. p_budget_ms (NULL: no deadline) sets
-- lock_timeout before any lock is taken, and a call that ran past it fails at the end,
-- keeping nothing, charge and usage alike.
CREATE FUNCTION ${s}.rate_limit_hit(
  p_now float8, p_keys text[], p_quotas float8[], p_ms float8[], p_starts float8[],
  p_account text, p_key_id text, p_route text, p_day text, p_sweep boolean, p_budget_ms float8
) RETURNS TABLE (admitted boolean, hit_count integer, oldest float8, blocking float8)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_asked  integer := coalesce(cardinality(p_keys), 0);
  -- distinct keys in lock order, each one's length and start, and its window as it is
  -- after the decision; v_at: the place in them of each window asked
  v_keys   text[];
  v_ms     float8[];
  v_starts float8[];
  v_at     integer[] := '{}';
  v_ids    bigint[] := '{}';
  v_counts integer[] := '{}';
  v_oldest float8[] := '{}';
  v_dirty  boolean := false;
  v_row    record;
  v_gone   integer;
  v_last   float8;
  v_n      integer;
  v_min    float8;
  v_ok     boolean := true;
  v_settled boolean := true;
  v_j      integer;
  v_skip   float8;
  v_cut    float8;
BEGIN
  IF p_budget_ms IS NOT NULL THEN
    PERFORM set_config('lock_timeout', greatest(1, ceil(p_budget_ms))::bigint::text || 'ms', true);
  END IF;
  IF v_asked <= 1 THEN
    v_keys := coalesce(p_keys, '{}');
    v_ms := p_ms;
    v_starts := p_starts;
    IF v_asked = 1 THEN v_at := '{1}'; END IF;
  ELSE
    SELECT array_agg(d.k ORDER BY d.k), array_agg(d.ms ORDER BY d.k), array_agg(d.st ORDER BY d.k)
      INTO v_keys, v_ms, v_starts
    FROM (
      SELECT DISTINCT ON (u.k) u.k, u.ms, u.st
      FROM (SELECT x.k COLLATE "C" AS k, x.ms, x.st FROM unnest(p_keys, p_ms, p_starts) AS x(k, ms, st)) AS u
      ORDER BY u.k
    ) AS d;
    FOR i IN 1..v_asked LOOP
      v_at[i] := array_position(v_keys, p_keys[i]);
    END LOOP;
  END IF;
  -- A refusal needs no lock. While no hit of a sliding window has left (its oldest is
  -- inside it), its hits are all live and are what a lock would show, and a calendar
  -- window's count is all there is; when one window is full as read here, the request is
  -- refused as of this read, and no window is written.
  FOR j IN 1..cardinality(v_keys) LOOP
    SELECT w.id, w.n_hits, w.oldest_ts INTO v_row FROM ${s}.rate_windows AS w WHERE w.key = v_keys[j];
    v_ids[j] := v_row.id;
    v_counts[j] := coalesce(v_row.n_hits, 0);
    v_oldest[j] := v_row.oldest_ts;
    IF v_starts[j] IS NULL AND v_counts[j] > 0 AND p_now - v_oldest[j] >= v_ms[j] THEN v_settled := false; END IF;
  END LOOP;
  IF v_settled THEN
    FOR i IN 1..v_asked LOOP
      IF v_counts[v_at[i]] >= p_quotas[i] THEN v_ok := false; END IF;
    END LOOP;
  END IF;
  IF v_ok AND v_asked > 0 THEN
    -- Losing the last fraction of a second of hits in a server crash is acceptable for a
    -- limiter; waiting for a WAL flush on every request is not.
    SET LOCAL synchronous_commit = off;
    FOR j IN 1..cardinality(v_keys) LOOP
      -- Lock the window, creating it when it is missing; only ever waiting for the key at
      -- hand while holding the keys before it, so the order of locking is the key order.
      LOOP
        SELECT w.id, w.n_hits, w.oldest_ts INTO v_row FROM ${s}.rate_windows AS w WHERE w.key = v_keys[j] FOR UPDATE;
        EXIT WHEN FOUND;
        INSERT INTO ${s}.rate_windows AS w (key, ms, period_start) VALUES (v_keys[j], v_ms[j], v_starts[j])
          ON CONFLICT (key) DO NOTHING
          RETURNING w.id, w.n_hits, w.oldest_ts INTO v_row;
        EXIT WHEN FOUND;
        -- someone else created it meanwhile (or a sweep removed it): look again
      END LOOP;
      v_n := v_row.n_hits;
      v_min := v_row.oldest_ts;
      IF v_starts[j] IS NULL AND v_n > 0 AND p_now - v_min >= v_ms[j] THEN
        -- Forget the hits that have left: they are the smallest, a range from v_min. A hit
        -- at t has left when p_now - t >= ms (JavaScript's float arithmetic); those are the
        -- hits with t <= some threshold T, and T < v_cut (the margin covers rounding), so
        -- "ts <= v_cut" bounds the index range and the exact test filters it.
        v_cut := (p_now - v_ms[j]) + (abs(p_now) + abs(v_ms[j])) * 1e-15;
        WITH gone AS (
          DELETE FROM ${s}.rate_hits AS h
          WHERE h.window_id = v_row.id AND h.ts >= v_min AND h.ts <= v_cut AND p_now - h.ts >= v_ms[j]
          RETURNING h.ts
        )
        SELECT count(*)::int, max(g.ts) INTO v_gone, v_last FROM gone AS g;
        IF v_gone > 0 THEN
          v_n := v_n - v_gone;
          v_min := NULL;
          -- the new oldest is the first hit above the last one deleted
          IF v_n > 0 THEN
            SELECT h.ts INTO v_min FROM ${s}.rate_hits AS h WHERE h.window_id = v_row.id AND h.ts > v_last ORDER BY h.ts LIMIT 1;
          END IF;
          v_dirty := true;
        END IF;
      END IF;
      v_ids[j] := v_row.id;
      v_counts[j] := v_n;
      v_oldest[j] := v_min;
    END LOOP;
    FOR i IN 1..v_asked LOOP
      IF v_counts[v_at[i]] >= p_quotas[i] THEN v_ok := false; END IF;
    END LOOP;
    IF v_ok THEN
      FOR j IN 1..cardinality(v_keys) LOOP
        v_counts[j] := v_counts[j] + 1;
        v_oldest[j] := CASE WHEN v_starts[j] IS NULL THEN least(v_oldest[j], p_now) ELSE v_starts[j] END;
      END LOOP;
      -- a hit row for each sliding window; a calendar window is its count
      WITH recorded AS (
        INSERT INTO ${s}.rate_hits (window_id, ts) SELECT u.id, p_now FROM unnest(v_ids, v_starts) AS u(id, st) WHERE u.st IS NULL
      )
      UPDATE ${s}.rate_windows AS w
        SET n_hits = u.n, oldest_ts = u.o, newest_ts = greatest(w.newest_ts, p_now),
          forget_sec = CASE WHEN w.period_start IS NULL THEN floor((greatest(w.newest_ts, p_now) + w.ms) / 1000) ELSE floor((w.period_start + 2 * w.ms) / 1000) END
        FROM unnest(v_keys, v_counts, v_oldest) AS u(k, n, o) WHERE w.key = u.k;
    ELSIF v_dirty THEN
      -- refused: nothing is recorded, but the hits that left stay forgotten
      UPDATE ${s}.rate_windows AS w SET n_hits = u.n, oldest_ts = u.o
        FROM unnest(v_keys, v_counts, v_oldest) AS u(k, n, o) WHERE w.key = u.k AND (w.n_hits, w.oldest_ts) IS DISTINCT FROM (u.n, u.o);
    END IF;
  END IF;
  -- Usage, in this same statement: counted exactly when the decision is.
  IF p_account IS NOT NULL THEN
    SET LOCAL synchronous_commit = off;
    INSERT INTO ${s}.key_usage AS k (account_id, day, key_id, route, admitted, refused)
      VALUES (p_account, p_day, p_key_id, p_route, CASE WHEN v_ok THEN 1 ELSE 0 END, CASE WHEN v_ok THEN 0 ELSE 1 END)
      ON CONFLICT (account_id, day, key_id, route)
      DO UPDATE SET admitted = k.admitted + excluded.admitted, refused = k.refused + excluded.refused;
  END IF;
  -- The states, as describeWindow (sliding-window.ts) gives them from a sorted list of the
  -- live hits: count, the smallest, and the (count - quota)-th smallest, 0-based; a
  -- calendar window is described by its start.
  FOR i IN 1..v_asked LOOP
    v_j := v_at[i];
    admitted := v_ok;
    hit_count := v_counts[v_j];
    IF v_starts[v_j] IS NOT NULL THEN
      oldest := CASE WHEN hit_count > 0 THEN v_starts[v_j] END;
      blocking := CASE WHEN hit_count > 0 AND hit_count >= p_quotas[i] THEN v_starts[v_j] END;
    ELSE
      oldest := v_oldest[v_j];
      blocking := NULL;
      IF hit_count >= p_quotas[i] AND hit_count > 0 THEN
        v_skip := hit_count - p_quotas[i];
        IF v_skip = 0 THEN
          blocking := oldest;
        ELSE
          -- more hits than quota (the quota was lowered since they were recorded)
          SELECT h.ts INTO blocking FROM ${s}.rate_hits AS h WHERE h.window_id = v_ids[v_j] AND h.ts >= oldest
            ORDER BY h.ts OFFSET v_skip::bigint LIMIT 1;
        END IF;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  -- Then the sweep, which never waits for long (see forget_rate_windows).
  IF p_sweep THEN
    SET LOCAL synchronous_commit = off;
    PERFORM ${s}.forget_rate_windows(p_now);
  END IF;
  IF p_budget_ms IS NOT NULL AND clock_timestamp() > statement_timestamp() + p_budget_ms * interval '1 millisecond' THEN
    RAISE EXCEPTION 'the rate-limit call ran past its deadline of % ms', p_budget_ms USING ERRCODE = 'query_canceled';
  END IF;
END
$fn$;

-- The functions of migrations 1 and 2, for a process of the previous version: its 60 s
-- windows (the stored key alone) charged and swept as this version does.
CREATE OR REPLACE FUNCTION ${s}.hit_rate_limit(
  p_now float8, p_window float8, p_keys text[], p_quotas float8[], p_sweep boolean
) RETURNS TABLE (admitted boolean, hit_count integer, oldest float8, blocking float8)
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN QUERY SELECT * FROM ${s}.rate_limit_hit(
    p_now, p_keys, p_quotas, array_fill(p_window, ARRAY[cardinality(p_keys)]), array_fill(NULL::float8, ARRAY[cardinality(p_keys)]),
    NULL, NULL, NULL, NULL, p_sweep, NULL
  );
END
$fn$;

CREATE OR REPLACE FUNCTION ${s}.sweep_rate_windows(p_now float8, p_window float8) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM ${s}.forget_rate_windows(p_now);
END
$fn$;
`,
  },
  {
    version: 5,
    name: 'key expiry, rotation, last use',
    // A key may now expire (docs/spec.md#keys): rotating a key stores a new one and gives the
    // old one an expiry, the end of an overlap during which both work, so that clients can
    // move to the new key without an outage. And a key records when it was last used (at
    // most once a minute per key and process, by the core). Both are ISO strings as the core
    // writes them (toISOString), which compare as instants when compared as text in code-point
    // order: hence COLLATE "C", on the columns and wherever a parameter meets them.
    //
    // A key is active at an instant `now` when it is not revoked and its expires_at is null
    // or later than now; the plan limits count the keys active at the caller's now (they
    // counted the keys not revoked). The functions that check them take p_now, and are new
    // functions with new names: those of migration 1 (insert_api_key, update_account) stay
    // as they were, so that a process of the previous version (during a rolling deploy, or
    // after a rollback) keeps creating keys and changing plans. It counts expired keys as
    // active, which is only stricter (it may refuse what this version admits, never admit
    // what this version refuses). That version does not know expiry at all, though: it
    // reads a rotated key as valid after its overlap, until it is replaced; an overlap is
    // far longer than a deploy.
    //
    // Every change of an account's keys that the limits check (insert, rotation) locks the
    // account's row first, FOR UPDATE, as insert_api_key does: two concurrent calls cannot
    // both pass. Each is one statement (a SELECT of one function), so the store needs no
    // transaction of its own.
    sql: (s) => `
-- Nullable columns without a default: adding them rewrites nothing, and every key of before
-- reads as one that never expires and was never used.
ALTER TABLE ${s}.api_keys
  -- the instant from which the key is refused; null: never
  ADD COLUMN expires_at   text COLLATE "C",
  -- when an admitted request last used the key (at most a minute stale); null: never
  ADD COLUMN last_used_at text COLLATE "C";

-- insert_api_key (migration 1) at p_now: the limit counts the keys active at p_now, and the
-- key is stored as given (revoked, expiring, used). A key that is not itself active at p_now
-- takes no place in the count, and is never refused for it (as in the memory store).
CREATE FUNCTION ${s}.insert_api_key_at(
  p_id text, p_account text, p_hash text, p_prefix text, p_label text, p_created text,
  p_revoked text, p_expires text, p_last_used text, p_now text,
  p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_plan text;
  v_active bigint;
  v_max float8;
BEGIN
  SELECT a.plan INTO v_plan FROM ${s}.accounts AS a WHERE a.id = p_account FOR UPDATE;
  IF NOT FOUND THEN RETURN 'not-found'; END IF;
  IF p_revoked IS NULL AND (p_expires IS NULL OR p_expires > p_now COLLATE "C") THEN
    SELECT count(*) INTO v_active FROM ${s}.api_keys AS k
      WHERE k.account_id = p_account AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > p_now COLLATE "C");
    -- (a CASE inside IF ... THEN would end the condition at its own THEN)
    v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
    IF v_active >= v_max THEN
      RETURN 'too-many-keys';
    END IF;
  END IF;
  INSERT INTO ${s}.api_keys (id, account_id, hash, prefix, label, created_at, revoked_at, expires_at, last_used_at)
    VALUES (p_id, p_account, p_hash, p_prefix, p_label, p_created, p_revoked, p_expires, p_last_used);
  RETURN 'ok';
END
$fn$;

-- update_account (migration 1) at p_now: the new plan must allow the keys active at p_now.
-- Refused, the row comes back unchanged with plan NULL as the marker; no row: no account.
CREATE FUNCTION ${s}.update_account_at(
  p_id text, p_plan text, p_gmp_addon boolean, p_now text, p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS SETOF ${s}.accounts LANGUAGE plpgsql AS $fn$
DECLARE
  v_account ${s}.accounts;
  v_active bigint;
  v_plan text;
  v_max float8;
BEGIN
  SELECT * INTO v_account FROM ${s}.accounts AS a WHERE a.id = p_id FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  v_plan := coalesce(p_plan, v_account.plan);
  SELECT count(*) INTO v_active FROM ${s}.api_keys AS k
    WHERE k.account_id = p_id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > p_now COLLATE "C");
  v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
  IF v_active > v_max THEN
    v_account.plan := NULL;
    RETURN NEXT v_account;
    RETURN;
  END IF;
  RETURN QUERY UPDATE ${s}.accounts AS a SET plan = v_plan, gmp_addon = coalesce(p_gmp_addon, a.gmp_addon)
    WHERE a.id = p_id RETURNING a.*;
END
$fn$;

-- Rotation of key p_id, in one step: a new key (p_new_id, p_hash, p_prefix, p_created) of the
-- old key's account and label, neither revoked, expiring nor used; and the old key's expiry
-- set to the earlier of its own and p_overlap_ends. One row: r_status 'ok' with the new key's
-- account and label (the rest of it is the caller's input), or 'not-found', 'inactive' (the
-- old key is revoked or expired at p_now) or 'too-many-keys' (the account's other keys active
-- at p_now already number its plan's limit: the new key takes the old one's place), which
-- change nothing.
--
-- The account's row is locked first, as insert_api_key_at locks it, so rotations and key
-- creations of one account run one at a time. The key's account is read before that lock
-- (a key never changes account), and the key again under it, FOR UPDATE: read committed, that
-- statement sees every rotation that held the lock before (the old key's new expiry, the new
-- key) and waits for a revocation under way (which locks the key's row alone).
CREATE FUNCTION ${s}.rotate_api_key(
  p_id text, p_new_id text, p_hash text, p_prefix text, p_created text, p_now text, p_overlap_ends text,
  p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS TABLE (r_status text, r_account text, r_label text) LANGUAGE plpgsql AS $fn$
DECLARE
  v_account text;
  v_plan text;
  v_key ${s}.api_keys;
  v_active bigint;
  v_max float8;
BEGIN
  SELECT k.account_id INTO v_account FROM ${s}.api_keys AS k WHERE k.id = p_id;
  IF NOT FOUND THEN
    r_status := 'not-found';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT a.plan INTO v_plan FROM ${s}.accounts AS a WHERE a.id = v_account FOR UPDATE;
  SELECT * INTO v_key FROM ${s}.api_keys AS k WHERE k.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    r_status := 'not-found';
    RETURN NEXT;
    RETURN;
  END IF;
  IF v_key.revoked_at IS NOT NULL OR v_key.expires_at <= p_now COLLATE "C" THEN
    r_status := 'inactive';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT count(*) INTO v_active FROM ${s}.api_keys AS k
    WHERE k.account_id = v_account AND k.id <> p_id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > p_now COLLATE "C");
  v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
  IF v_active >= v_max THEN
    r_status := 'too-many-keys';
    RETURN NEXT;
    RETURN;
  END IF;
  INSERT INTO ${s}.api_keys (id, account_id, hash, prefix, label, created_at)
    VALUES (p_new_id, v_account, p_hash, p_prefix, v_key.label, p_created);
  UPDATE ${s}.api_keys AS k SET expires_at = least(coalesce(k.expires_at, p_overlap_ends COLLATE "C"), p_overlap_ends COLLATE "C")
    WHERE k.id = p_id;
  r_status := 'ok';
  r_account := v_account;
  r_label := v_key.label;
  RETURN NEXT;
END
$fn$;
`,
  },
  {
    version: 6,
    name: 'webhook endpoints, events and deliveries',
    // Webhooks (docs/spec.md#webhooks): an account's endpoints, the events a write records for
    // them in its own transaction, and one delivery per event and endpoint, claimed by workers
    // under leases. Every time is epoch ms as JavaScript gives it (the caller's clock, never
    // the database's now()): the core's rules, and the memory store, run on that clock.
    //
    // Nothing of before changes: a process of version 5 (a rolling deploy) writes data as it
    // did, and records no events (it knows of no endpoints).
    sql: (s) => `
CREATE TABLE ${s}.webhooks (
  id            text COLLATE "C" PRIMARY KEY,
  account_id    text COLLATE "C" NOT NULL REFERENCES ${s}.accounts (id) ON DELETE CASCADE,
  url           text NOT NULL,
  -- the event types sent there, in the order of the core's EVENT_TYPES
  events        text[] NOT NULL,
  description   text,
  secret        text NOT NULL,
  created_at    text COLLATE "C" NOT NULL,
  -- set (ISO) when the endpoint is disabled; null while it is enabled
  disabled_at   text COLLATE "C",
  -- when its current run of failed attempts began; null after a success
  failing_since bigint,
  -- creation order: an event's deliveries are made in it (the claim order's tie-break)
  seq           bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX webhooks_account ON ${s}.webhooks (account_id, created_at, id);

-- An event as recorded, while some delivery of it is kept. The id is the same in every
-- process that records it (a status change's), so recording it twice keeps one.
CREATE TABLE ${s}.events (
  id   text COLLATE "C" PRIMARY KEY,
  type text NOT NULL,
  at   bigint NOT NULL,
  -- sent byte for byte by every delivery of it
  body text NOT NULL
);

CREATE TABLE ${s}.deliveries (
  id              text COLLATE "C" PRIMARY KEY,
  event_id        text COLLATE "C" NOT NULL REFERENCES ${s}.events (id),
  webhook_id      text COLLATE "C" NOT NULL REFERENCES ${s}.webhooks (id) ON DELETE CASCADE,
  -- creation order: the tie-break of the claim order (next_attempt_at, seq)
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  created_at      bigint NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  -- null unless pending
  next_attempt_at bigint,
  -- the claim that has it: a random token and when it runs out; null when not claimed
  lease           text,
  lease_until     bigint,
  last_attempt_at bigint,
  last_status     integer,
  last_error      text
);
-- Claims: an endpoint's pending deliveries in due order (each claim reads the first few of
-- every enabled endpoint, so that one endpoint's backlog is never walked through).
CREATE INDEX deliveries_due ON ${s}.deliveries (webhook_id, next_attempt_at, seq) WHERE state = 'pending';
-- Leases that run out are given up by the next claim.
CREATE INDEX deliveries_leased ON ${s}.deliveries (lease_until) WHERE lease IS NOT NULL;
-- An endpoint's deliveries, newest first.
CREATE INDEX deliveries_list ON ${s}.deliveries (webhook_id, created_at DESC, id DESC);
-- An event's deliveries (the foreign key, and events left without any).
CREATE INDEX deliveries_event ON ${s}.deliveries (event_id);
-- Pruning: settled deliveries by their last attempt, or creation.
CREATE INDEX deliveries_settled ON ${s}.deliveries ((coalesce(last_attempt_at, created_at))) WHERE state <> 'pending';

-- The instant up to which status changes are recorded (recordStatusChanges): one row, locked
-- by each call, so that concurrent calls of several processes record each change once.
CREATE TABLE ${s}.status_cursor (
  id      boolean PRIMARY KEY DEFAULT true CHECK (id),
  -- null until the first call
  covered bigint
);
INSERT INTO ${s}.status_cursor (covered) VALUES (NULL);
`,
  },
  {
    version: 7,
    name: 'gmp.snapshot events fanned out after the write',
    // A write's gmp.snapshot events, as the write recorded them in its transaction: the
    // snapshots it changed, a row per 1,000, copied (so that a later write or a deletion does
    // not change what is sent). Workers turn each row into events and deliveries in a
    // transaction of their own, and delete it (docs/spec.md#webhooks). A 10,000-snapshot
    // import writes 10 of these rows, not 10,000 events and their deliveries.
    //
    // Nothing of before changes: a process of version 6 (a rolling deploy) records its
    // gmp.snapshot events eagerly as it did, and its workers leave these rows to newer ones.
    sql: (s) => `
CREATE TABLE ${s}.snapshot_events (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- the write's instant: the events' and their deliveries' time
  at         bigint NOT NULL,
  -- the last endpoint (webhooks.seq) the write saw: endpoints made later take none of these
  up_to      bigint NOT NULL,
  -- [[ipo_id, ts, mean, median, min, max, mode], ...] in paise, in the order of the write
  snapshots  json NOT NULL
);
`,
  },
  {
    version: 8,
    name: 'snapshot_events rows kept uncompressed',
    // A snapshot_events row lives from its write to the next claim, and holds about 100 KB
    // of JSON: compressing it (TOAST's default) cost a 10,000-snapshot import about 4 ms of
    // 130 (bench:webhooks --only=import: event recording 1.15-1.19x -> 1.10-1.14x of an import
    // without). EXTERNAL still stores it out of line, without compressing. Rows written
    // before keep their form; a process of version 7 runs unchanged on this schema.
    sql: (s) => `
ALTER TABLE ${s}.snapshot_events ALTER COLUMN snapshots SET STORAGE EXTERNAL;
`,
  },
  {
    version: 9,
    name: 'gmp.snapshot events as arrays, a row per statement',
    // What a snapshot_events row held (migration 7), as one array per column, and one row per
    // statement of a write (up to 5,000 snapshots) instead of one per 1,000: building a JSON
    // array per snapshot and grouping them by thousands was most of what recording the events
    // cost a write. A claim still fans out 1,000 at a time: `done` says how many of the row it
    // has (docs/spec.md#storage). bench:webhooks --only=import, a 10,000-snapshot import with
    // events vs without, three runs of each side by side: 1.10-1.16x before, 1.05-1.07x after.
    //
    // A process of version 7 or 8 (a rolling deploy) writes snapshot_events rows as it did, and
    // fans out only those; this version fans out both tables, snapshot_events first.
    sql: (s) => `
CREATE TABLE ${s}.snapshot_changes (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- the write's instant: the events' and their deliveries' time
  at         bigint NOT NULL,
  -- the last endpoint (webhooks.seq) the write saw: endpoints made later take none of these
  up_to      bigint NOT NULL,
  -- how many of the row's snapshots have been fanned out, from the first
  done       integer NOT NULL DEFAULT 0,
  -- the snapshots the write changed, in its order: element i of each array is snapshot i
  ipo_ids    text[] NOT NULL,
  ts         bigint[] NOT NULL,
  agg_mean   bigint[] NOT NULL,
  agg_median bigint[] NOT NULL,
  agg_min    bigint[] NOT NULL,
  agg_max    bigint[] NOT NULL,
  agg_mode   bigint[] NOT NULL
);
-- (the rows live from a write to its fan-out: stored out of line, not compressed, as migration 8)
ALTER TABLE ${s}.snapshot_changes
  ALTER COLUMN ipo_ids SET STORAGE EXTERNAL, ALTER COLUMN ts SET STORAGE EXTERNAL,
  ALTER COLUMN agg_mean SET STORAGE EXTERNAL, ALTER COLUMN agg_median SET STORAGE EXTERNAL,
  ALTER COLUMN agg_min SET STORAGE EXTERNAL, ALTER COLUMN agg_max SET STORAGE EXTERNAL,
  ALTER COLUMN agg_mode SET STORAGE EXTERNAL;
`,
  },
  {
    version: 10,
    name: 'a rotated key keeps its expiry, and names the key it replaced',
    // Rotation made the new key one that never expires, whatever the old key's expiry: a
    // trial key rotated became a permanent one. A rotation now gives the new key the old
    // one's expires_at (as it was before the rotation: a rotation never extends a key's life),
    // and records in rotated_from the key it replaced, so that lists show the pair
    // (docs/spec.md#keys).
    //
    // The column is nullable without a default: adding it rewrites no row, and every key of
    // before reads as one that replaced none. The rotation is a new function (its answer gains
    // the new key's expiry); rotate_api_key of migration 5 keeps its signature and answer, for a
    // process of version 9 (a rolling deploy), but runs the new one: a key that process
    // rotates keeps its expiry too (it reports the new key as never expiring, which only its
    // own output says). Key creation is unchanged: a created key replaced none.
    sql: (s) => `
ALTER TABLE ${s}.api_keys
  -- the id of the key this one replaced by a rotation; null: created, not rotated
  ADD COLUMN rotated_from text COLLATE "C";

-- Rotation of key p_id as rotate_api_key (migration 5) did it, but the new key takes the old
-- one's expires_at and records p_id as rotated_from; r_expires is the new key's expiry. Locks,
-- checks and refusals as there: the account's row first, then the key's, FOR UPDATE.
CREATE FUNCTION ${s}.rotate_api_key_keep_expiry(
  p_id text, p_new_id text, p_hash text, p_prefix text, p_created text, p_now text, p_overlap_ends text,
  p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS TABLE (r_status text, r_account text, r_label text, r_expires text) LANGUAGE plpgsql AS $fn$
DECLARE
  v_account text;
  v_plan text;
  v_key ${s}.api_keys;
  v_active bigint;
  v_max float8;
BEGIN
  SELECT k.account_id INTO v_account FROM ${s}.api_keys AS k WHERE k.id = p_id;
  IF NOT FOUND THEN
    r_status := 'not-found';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT a.plan INTO v_plan FROM ${s}.accounts AS a WHERE a.id = v_account FOR UPDATE;
  SELECT * INTO v_key FROM ${s}.api_keys AS k WHERE k.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    r_status := 'not-found';
    RETURN NEXT;
    RETURN;
  END IF;
  IF v_key.revoked_at IS NOT NULL OR v_key.expires_at <= p_now COLLATE "C" THEN
    r_status := 'inactive';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT count(*) INTO v_active FROM ${s}.api_keys AS k
    WHERE k.account_id = v_account AND k.id <> p_id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > p_now COLLATE "C");
  v_max := CASE v_plan WHEN 'free' THEN p_max_free WHEN 'paid' THEN p_max_paid ELSE p_max_pro END;
  IF v_active >= v_max THEN
    r_status := 'too-many-keys';
    RETURN NEXT;
    RETURN;
  END IF;
  INSERT INTO ${s}.api_keys (id, account_id, hash, prefix, label, created_at, expires_at, rotated_from)
    VALUES (p_new_id, v_account, p_hash, p_prefix, v_key.label, p_created, v_key.expires_at, p_id);
  UPDATE ${s}.api_keys AS k SET expires_at = least(coalesce(k.expires_at, p_overlap_ends COLLATE "C"), p_overlap_ends COLLATE "C")
    WHERE k.id = p_id;
  r_status := 'ok';
  r_account := v_account;
  r_label := v_key.label;
  r_expires := v_key.expires_at;
  RETURN NEXT;
END
$fn$;

-- Migration 5's rotation, for a process of version 9: the same arguments and answer, this
-- version's rotation.
CREATE OR REPLACE FUNCTION ${s}.rotate_api_key(
  p_id text, p_new_id text, p_hash text, p_prefix text, p_created text, p_now text, p_overlap_ends text,
  p_max_free float8, p_max_paid float8, p_max_pro float8
) RETURNS TABLE (r_status text, r_account text, r_label text) LANGUAGE sql AS $fn$
  SELECT r.r_status, r.r_account, r.r_label
  FROM ${s}.rotate_api_key_keep_expiry(p_id, p_new_id, p_hash, p_prefix, p_created, p_now, p_overlap_ends, p_max_free, p_max_paid, p_max_pro) AS r;
$fn$;
`,
  },
  {
    version: 11,
    name: 'webhook events owed per endpoint, made into deliveries later',
    // A write recorded one delivery row per event and endpoint in its transaction (and a
    // listing fanned out every write's snapshot events first): 1,000 endpoints x 1,000
    // snapshots made 1,000,000 rows before a listing of any endpoint answered (#29 defect 4).
    // Now a write appends its events once to `owed` (a gmp.snapshot event stays a slot of a
    // snapshot_changes row, `places`, until a claim or listing builds it), each at a place in
    // the owed order (the sequence owed_place: write order, then the events' order in the
    // write; a replay takes the next place). Each endpoint has a cursor (`owed_upto`): the owed
    // places up to it are made into its deliveries, in bounded statements, by claims (fairly
    // across accounts) and by its own listing. `owed_head` is the last place of the log that
    // every reader may rely on: log writers allocate places holding the data lock and move it
    // before they commit, so the places up to it are committed (or rolled back) and every later
    // one is greater: a cursor never passes a place still to come (docs/spec.md#storage).
    //
    // Nothing is rewritten: new tables, nullable columns without a default (deliveries.place:
    // null for the deliveries made before, ordered first by their seq), a column with a
    // constant default (webhooks.owed_upto), two new partial indexes. A process of version 10
    // (a rolling deploy) runs on as it did: its writes insert events and deliveries eagerly
    // (place null: claimed first, by seq) and snapshot_changes rows without places, which this
    // version's claims build into owed rows at new places (under the data lock, when no write
    // holds it); its claims deliver the deliveries that are made (not the owed ones, which this
    // version's processes make), and may fan out a row with places the old way (the row is
    // locked and deleted: each event still made once); its prunes delete only events no
    // delivery names, and this version keeps an owed event's own copy in `owed` (and makes its
    // events row again when needed) until every cursor passed it.
    sql: (s) => `
CREATE SEQUENCE ${s}.owed_place AS bigint;

-- The events writes owe to endpoints, in the owed order, until every endpoint's cursor passed
-- them (then the events table keeps the ones some delivery names, as before).
CREATE TABLE ${s}.owed (
  place    bigint PRIMARY KEY,
  event_id text COLLATE "C" NOT NULL UNIQUE,
  type     text NOT NULL,
  -- the write's instant: its deliveries' creation and first due time
  at       bigint NOT NULL,
  -- the last endpoint (webhooks.seq) the write saw: endpoints made later take none of it
  up_to    bigint NOT NULL,
  body     text NOT NULL
);
-- An endpoint's next owed events: one range per type it takes.
CREATE INDEX owed_type ON ${s}.owed (type, place);

-- The last place of the log readers may rely on (see above); one row.
CREATE TABLE ${s}.owed_head (
  id    boolean PRIMARY KEY DEFAULT true CHECK (id),
  place bigint NOT NULL
);
INSERT INTO ${s}.owed_head (place) VALUES (0);

-- The owed places up to which the endpoint's deliveries are made.
ALTER TABLE ${s}.webhooks ADD COLUMN owed_upto bigint NOT NULL DEFAULT 0;

-- A delivery's place in the owed order; null for deliveries made before (or by a version 10 process).
ALTER TABLE ${s}.deliveries ADD COLUMN place bigint;
CREATE INDEX deliveries_owed ON ${s}.deliveries (webhook_id, next_attempt_at, place NULLS FIRST, seq) WHERE state = 'pending';
-- Pruning by count: an endpoint's settled deliveries, newest first.
CREATE INDEX deliveries_settled_list ON ${s}.deliveries (webhook_id, created_at DESC, id DESC) WHERE state <> 'pending';

-- A write's gmp.snapshot events: the place of each slot (null: a row of a version 10 process).
ALTER TABLE ${s}.snapshot_changes ADD COLUMN places bigint[];

-- Where the last prune by count stopped (the endpoints are visited in turn, a bounded number a call).
CREATE TABLE ${s}.prune_cursor (
  id    boolean PRIMARY KEY DEFAULT true CHECK (id),
  after text COLLATE "C" NOT NULL
);
INSERT INTO ${s}.prune_cursor (after) VALUES ('');
`,
  },
  {
    version: 12,
    name: 'subscription snapshots, usage of the subscription route',
    // Subscription snapshots (docs/spec.md#subscription): what the exchanges published at
    // one instant, the times subscribed per investor category, exact (numeric, 2 decimals:
    // a value reads back as it was written, 12.5 as 12.5); null for a category not given.
    // Deleted with their IPO, as GMP snapshots are; a write moves the data version
    // (migration 3), so cached reads see it as they see a GMP snapshot's.
    //
    // Nothing is rewritten: a new table, and the usage route's check dropped and added again
    // (added NOT VALID, then validated: a scan under a lock that lets rows be written, no
    // rewrite). A process of version 11 (a rolling deploy) runs on as it did: it knows
    // nothing of this table (its deletions take these rows by the cascade) and counts no
    // usage of the new route.
    sql: (s) => `
CREATE TABLE ${s}.subscription_snapshots (
  ipo_id      text COLLATE "C" NOT NULL REFERENCES ${s}.ipos (id) ON DELETE CASCADE,
  ts          bigint NOT NULL,
  -- times subscribed, in the order of the core's SUBSCRIPTION_CATEGORIES (below 10,000,000)
  qib         numeric(9, 2),
  nii         numeric(9, 2),
  bnii        numeric(9, 2),
  snii        numeric(9, 2),
  retail      numeric(9, 2),
  employee    numeric(9, 2),
  shareholder numeric(9, 2),
  total       numeric(9, 2),
  PRIMARY KEY (ipo_id, ts)
);
CREATE TRIGGER subscription_snapshots_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${s}.subscription_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION ${s}.bump_data_version();

ALTER TABLE ${s}.key_usage DROP CONSTRAINT key_usage_route_check;
ALTER TABLE ${s}.key_usage ADD CONSTRAINT key_usage_route_check CHECK (route IN ('list', 'ipo', 'gmp', 'subscription')) NOT VALID;
ALTER TABLE ${s}.key_usage VALIDATE CONSTRAINT key_usage_route_check;
`,
  },
  {
    version: 13,
    name: 'source reports and states of the collector',
    // What a collector keeps, shared by every process that runs it (docs/spec.md#sources):
    // each source's latest GMP report per IPO, and each source's state. Instants are epoch ms
    // (bigint), as every other instant of the schema. A report names an IPO by id without a
    // foreign key: a source may report an IPO before the IPO is written (a run writes its
    // reports before its IPOs, in one transaction), and its report stays the source's latest
    // all the same; a deletion of IPOs deletes their reports (postgresStore's deleteIpos).
    // Neither table moves the data version: no read of IPO data reads them.
    //
    // Nothing is rewritten: two new tables. A process of version 12 (a rolling deploy) runs on
    // as it did: it knows nothing of them (its deletions leave the deleted IPOs' reports,
    // which only a collector of this version reads).
    sql: (s) => `
CREATE TABLE ${s}.source_reports (
  source text COLLATE "C" NOT NULL,
  ipo_id text COLLATE "C" NOT NULL,
  -- the price in paise; null when the source reported no number
  paise  bigint,
  -- the instant of the last run that reported it
  at     bigint NOT NULL,
  PRIMARY KEY (source, ipo_id)
);
-- The reports of the IPOs a run changed, of every source.
CREATE INDEX source_reports_ipo ON ${s}.source_reports (ipo_id);

CREATE TABLE ${s}.source_states (
  source          text COLLATE "C" PRIMARY KEY,
  last_run_at     bigint,
  last_success_at bigint,
  last_error      text,
  records         bigint NOT NULL,
  failures        integer NOT NULL,
  next_run_at     bigint NOT NULL
);
`,
  },
  {
    version: 14,
    name: 'webhook pause, secret rotation, the answer kept',
    // What an account holder does with an endpoint (docs/spec.md#webhooks): pause it (a
    // paused endpoint's deliveries wait, pending), rotate its secret with an overlap (the old
    // one signs beside the new until it expires), and see the receiver's answer of the last
    // attempt (its first 1 KB).
    //
    // Nothing is rewritten: nullable columns without a default. A process of version 13 (a
    // rolling deploy) runs on as it did: it would still send to a paused endpoint, and sign
    // with the new secret only, until it is replaced; its finishes keep no answer body.
    sql: (s) => `
ALTER TABLE ${s}.webhooks ADD COLUMN paused_at text COLLATE "C";
ALTER TABLE ${s}.webhooks ADD COLUMN previous_secret text;
ALTER TABLE ${s}.webhooks ADD COLUMN previous_secret_expires_at text COLLATE "C";
ALTER TABLE ${s}.deliveries ADD COLUMN last_response_body text;
`,
  },
];

/** The schema version this package reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Applies the migrations the database lacks, in order, each in a transaction, and records
 * them in `<schema>.migrations`. Idempotent; safe when several processes call it at once
 * (they wait on an advisory lock). Resolves to the versions it applied.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrate, postgresStore } from '@ipokit/storage-postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);               // [1] the first time, [] afterwards
 * const store = postgresStore({ client: pool });
 * ```
 */
export async function migrate(client: PostgresClient, options: SchemaOptions = {}): Promise<number[]> {
  return migrateUpTo(client, options, SCHEMA_VERSION);
}

/**
 * {@link migrate}, stopping after version `last`: for tests of an upgrade (a schema as an
 * earlier version of this package left it). Not exported by the package.
 *
 * @example
 * ```ts
 * await migrateUpTo(client, { schema: 'old' }, 3); // [1, 2, 3]
 * ```
 */
export async function migrateUpTo(client: PostgresClient, options: SchemaOptions, last: number): Promise<number[]> {
  const s = schemaIdentifier(options.schema);
  const db = new Database(client);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', advisoryKey(s));
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const rows = await tx.query<{ version: number }>(`SELECT version FROM ${s}.migrations`);
    const applied = new Set(rows.map((r) => Number(r.version)));
    const done: number[] = [];
    for (const m of MIGRATIONS) {
      if (applied.has(m.version) || m.version > last) continue;
      await tx.script(m.sql(s));
      await tx.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      done.push(m.version);
    }
    return done;
  });
}

/**
 * The schema name, checked and quoted for SQL.
 *
 * @example
 * ```ts
 * schemaIdentifier(undefined); // '"ipokit"'
 * ```
 */
export function schemaIdentifier(schema: string | undefined): string {
  const name = schema ?? DEFAULT_SCHEMA;
  if (typeof name !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new IpokitError('ERR:BADPARAM', `schema must be lowercase letters, digits and _ (at most 63), starting with a letter or _; got ${JSON.stringify(name)}.`, {
      parameter: 'schema',
    });
  }
  return `"${name}"`;
}

/**
 * The NOTIFY channel on which a schema's data version is sent (migration 3): `ipokit_data_`
 * and the schema name, or for a name too long for a channel (63 bytes), a digest of it.
 *
 * @example
 * ```ts
 * dataChannel('ipokit'); // 'ipokit_data_ipokit'
 * ```
 */
export function dataChannel(schema: string): string {
  const channel = `ipokit_data_${schema}`;
  return channel.length <= 63 ? channel : `ipokit_data_${createHash('sha256').update(schema).digest('hex').slice(0, 51)}`;
}

/**
 * The NOTIFY channel on which a schema's new deliveries are announced (migration 6):
 * `ipokit_deliveries_` and the schema name, or for a name too long, a digest of it.
 *
 * @example
 * ```ts
 * deliveriesChannel('ipokit'); // 'ipokit_deliveries_ipokit'
 * ```
 */
export function deliveriesChannel(schema: string): string {
  const channel = `ipokit_deliveries_${schema}`;
  return channel.length <= 63 ? channel : `ipokit_deliveries_${createHash('sha256').update(schema).digest('hex').slice(0, 45)}`;
}

/** Two int4 keys for pg_advisory_xact_lock, from the schema: one lock per schema. */
export function advisoryKey(schema: string): [number, number] {
  const digest = createHash('sha256').update(`ipokit:${schema}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}
