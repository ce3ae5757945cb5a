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
-- Indexes for the list routes (CONTRACT 3): each status reads one or two ranges of them.
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

-- One row per window owner: its hits (ascending epoch ms, at most quota of them), as
-- float8 so that the arithmetic is JavaScript's, to the bit.
CREATE TABLE ${s}.rate_windows (
  key    text COLLATE "C" PRIMARY KEY,
  hits   float8[] NOT NULL DEFAULT '{}',
  newest float8 NOT NULL DEFAULT 0
);
CREATE INDEX rate_windows_newest ON ${s}.rate_windows (newest);

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

-- The limiter: one call per request. Rows are locked in key order (no deadlocks), the
-- decision is made on every window, and only an admitted request writes its hit.
CREATE FUNCTION ${s}.hit_rate_limit(
  p_now float8, p_window float8, p_keys text[], p_quotas float8[], p_sweep boolean
) RETURNS TABLE (admitted boolean, hit_count integer, oldest float8, blocking float8)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n integer := cardinality(p_keys);
  v_locked integer;
  v_live float8[];
  v_ok boolean := true;
BEGIN
  -- Losing the last fraction of a second of hits in a server crash is acceptable for a
  -- limiter; waiting for a WAL flush on every request is not.
  SET LOCAL synchronous_commit = off;
  LOOP
    INSERT INTO ${s}.rate_windows (key) SELECT k FROM unnest(p_keys) AS k ORDER BY k ON CONFLICT (key) DO NOTHING;
    SELECT count(*) INTO v_locked FROM (
      SELECT 1 FROM ${s}.rate_windows WHERE key = ANY (p_keys) ORDER BY key FOR UPDATE
    ) AS locked;
    -- a concurrent sweep may have removed an idle row in between: create it again
    EXIT WHEN v_locked = (SELECT count(DISTINCT k) FROM unnest(p_keys) AS k);
  END LOOP;
  FOR i IN 1..v_n LOOP
    SELECT count(*) INTO v_locked FROM ${s}.rate_windows w, unnest(w.hits) AS h
      WHERE w.key = p_keys[i] AND p_now - h < p_window;
    IF v_locked >= p_quotas[i] THEN v_ok := false; END IF;
  END LOOP;
  FOR i IN 1..v_n LOOP
    SELECT coalesce(array_agg(h ORDER BY h), '{}') INTO v_live FROM ${s}.rate_windows w, unnest(w.hits) AS h
      WHERE w.key = p_keys[i] AND p_now - h < p_window;
    IF v_ok THEN
      SELECT array_agg(h ORDER BY h) INTO v_live FROM unnest(v_live || p_now) AS h;
      IF cardinality(v_live) > p_quotas[i] THEN
        v_live := v_live[cardinality(v_live) - p_quotas[i]::integer + 1 :];
      END IF;
      UPDATE ${s}.rate_windows SET hits = v_live, newest = greatest(newest, p_now) WHERE key = p_keys[i];
    END IF;
    admitted := v_ok;
    hit_count := cardinality(v_live);
    oldest := v_live[1];
    blocking := CASE WHEN hit_count >= p_quotas[i] AND hit_count > 0 THEN v_live[hit_count - p_quotas[i]::integer + 1] END;
    RETURN NEXT;
  END LOOP;
  IF p_sweep THEN
    -- forget up to 1,000 windows whose hits have all left, skipping rows in use
    DELETE FROM ${s}.rate_windows WHERE key IN (
      SELECT key FROM ${s}.rate_windows WHERE newest <= p_now - p_window ORDER BY newest LIMIT 1000 FOR UPDATE SKIP LOCKED
    );
  END IF;
END
$fn$;
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
      if (applied.has(m.version)) continue;
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

/** Two int4 keys for pg_advisory_xact_lock, from the schema: one lock per schema. */
export function advisoryKey(schema: string): [number, number] {
  const digest = createHash('sha256').update(`ipokit:${schema}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}
