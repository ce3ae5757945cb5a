/**
 * `ipokit keys create | rotate | list | revoke`. A whole key is printed once, by `create` or
 * `rotate`; `list` shows prefixes only.
 */
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey, type ApiKeyInfo, type CreatedApiKey } from '@ipokit/core';
import { parseOrThrow, required, takePositionals, unknownName } from './args.js';
import { loadKeyCap } from './config.js';
import { onStore } from './database.js';
import { columns, fields, outputOf, type OutputMode } from './format.js';
import { CliError, type CliIo, type Command } from './io.js';

/**
 * `ipokit keys create --account ID --label L [--expires WHEN]`,
 * `ipokit keys rotate ID [--overlap SECONDS|DURATION]`, `ipokit keys list --account ID`,
 * `ipokit keys revoke ID`. `create` and `rotate` apply the server's key cap
 * (`--max-keys-per-account`, IPOKIT_MAX_KEYS_PER_ACCOUNT or `--config FILE`; default 100).
 *
 * @example
 * ```ts
 * await keysCommand(['create', '--account', accountId, '--label', 'laptop', '--expires', '30d', '--quiet'], io); // prints ipk_...
 * ```
 */
export const keysCommand: Command = async (argv, io) => {
  const [action, ...rest] = argv;
  if (action === 'create') return create(rest, io);
  if (action === 'rotate') return rotate(rest, io);
  if (action === 'list') return list(rest, io);
  if (action === 'revoke') return revoke(rest, io);
  const actions = 'create, rotate, list or revoke';
  throw new CliError(action === undefined ? `missing action: ${actions}` : unknownName('action', action, ['create', 'rotate', 'list', 'revoke'], `: ${actions}`));
};

const OPTIONS = {
  account: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  schema: { type: 'string' },
} as const;

/** The server's key cap, for the commands that make keys: the flag, or from its config. */
const CAP_OPTIONS = {
  'max-keys-per-account': { type: 'string' },
  config: { type: 'string' },
} as const;

const MINUTE_MS = 60_000;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: MINUTE_MS, h: 60 * MINUTE_MS, d: 24 * 60 * MINUTE_MS };
/** The longest rotation overlap the core allows: 7 days, in seconds (docs/spec.md#keys). */
const MAX_OVERLAP_SECONDS = 604_800;
/** The core's default overlap: 1 day, in seconds. */
const DEFAULT_OVERLAP_SECONDS = 86_400;
/** 10000-01-01T00:00:00Z: the core keeps instants of 4-digit years only. */
const YEAR_10000 = 253_402_300_800_000;
/** An ISO-8601 instant with a date, a time and a zone, as the core takes `expiresAt`. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The `expiresAt` of `--expires WHEN`: an ISO-8601 instant with a zone, passed to the core as
 * written (which refuses one that is not after now), or a time from `now`: a whole number of
 * minutes, hours or days (`90m`, `12h`, `30d`). Anything else is a usage error.
 *
 * @example
 * ```ts
 * expiresOf('30d', Date.parse('2026-11-24T00:00:00Z')); // '2026-12-24T00:00:00.000Z'
 * expiresOf('2026-12-31T18:30:00Z', Date.now());        // '2026-12-31T18:30:00Z'
 * ```
 */
export function expiresOf(value: string, now: number): string {
  if (ISO_INSTANT.test(value) && !Number.isNaN(Date.parse(value))) return value;
  const m = /^([0-9]{1,12})([mhd])$/.exec(value);
  if (m === null) {
    throw new CliError(
      `--expires must be an ISO-8601 instant with a zone (e.g. 2026-12-31T18:30:00Z) or a time from now: a whole number of minutes, hours or days (e.g. 90m, 12h, 30d); got ${JSON.stringify(value)}`,
    );
  }
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (ms === 0) throw new CliError(`--expires must be later than now, got ${JSON.stringify(value)}`);
  if (now + ms >= YEAR_10000) throw new CliError(`--expires ${value} is past the year 9999`);
  return new Date(now + ms).toISOString();
}

/**
 * The seconds of `--overlap`: a whole number of seconds, or one followed by `s`, `m`, `h` or
 * `d`, from 0 to 7 days. Anything else is a usage error.
 *
 * @example
 * ```ts
 * overlapOf('1h'); // 3600
 * overlapOf('0');  // 0: the old key stops at once
 * ```
 */
export function overlapOf(value: string): number {
  const m = /^([0-9]{1,12})([smhd]?)$/.exec(value);
  if (m === null) {
    throw new CliError(`--overlap must be a whole number of seconds, or of s, m, h or d (e.g. 3600, 90m, 1h, 7d), got ${JSON.stringify(value)}`);
  }
  const seconds = (Number(m[1]) * UNIT_MS[m[2] || 's']!) / 1_000;
  if (seconds > MAX_OVERLAP_SECONDS) throw new CliError(`--overlap must be from 0 to 7d (${MAX_OVERLAP_SECONDS} s), got ${JSON.stringify(value)}`);
  return seconds;
}

/** What a key is at `now`: revoked, expired (`expiresAt <= now`) or active. */
export type KeyState = 'active' | 'expired' | 'revoked';

/**
 * A key's state at `now` (epoch ms): `revoked` if it was revoked, else `expired` once its
 * `expiresAt` is reached, else `active`.
 *
 * @example
 * ```ts
 * keyState({ revokedAt: null, expiresAt: '2026-01-01T00:00:00.000Z' }, Date.now()); // 'expired'
 * ```
 */
export function keyState(key: Pick<ApiKeyInfo, 'revokedAt' | 'expiresAt'>, now: number): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

/**
 * An account's keys as a table, their states at `now`: `ipokit keys list` and
 * `ipokit accounts show` print it. ROTATED FROM names the key a rotation replaced (`-`: the
 * key was created, not rotated).
 *
 * @example
 * ```ts
 * io.stdout.write(keysTable(await listApiKeys(store, { accountId }), Date.now()));
 * // ID       PREFIX           LABEL   CREATED                   EXPIRES  LAST USED  ROTATED FROM  STATE
 * // key_...  ipk_a1B2c3D4...  laptop  2026-11-24T09:14:05.120Z  never    never      -             active
 * ```
 */
export function keysTable(keys: readonly ApiKeyInfo[], now: number): string {
  return columns(
    ['ID', 'PREFIX', 'LABEL', 'CREATED', 'EXPIRES', 'LAST USED', 'ROTATED FROM', 'STATE'],
    keys.map((k) => [k.id, `${k.prefix}...`, k.label, k.createdAt, k.expiresAt ?? 'never', k.lastUsedAt ?? 'never', k.rotatedFrom ?? '-', keyState(k, now)]),
  );
}

async function create(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: { ...OPTIONS, ...CAP_OPTIONS, label: { type: 'string' }, expires: { type: 'string' } }, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const label = required('--label', values.label);
  const expiresAt = values.expires === undefined ? undefined : expiresOf(values.expires, Date.now());
  const output = outputOf(values);
  const maxKeysPerAccount = await loadKeyCap(values.config, values['max-keys-per-account'], io);
  const created = await onStore(io, values.schema, (store) =>
    createApiKey(store, { accountId, label, ...(expiresAt === undefined ? {} : { expiresAt }) }, { maxKeysPerAccount }),
  );
  printCreated(created, output, [], io);
  return 0;
}

async function rotate(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { json: OPTIONS.json, quiet: OPTIONS.quiet, schema: OPTIONS.schema, ...CAP_OPTIONS, overlap: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  const [id] = takePositionals(positionals, ['ID']) as [string];
  if (id === '') throw new CliError('ID must not be empty');
  const overlapSeconds = values.overlap === undefined ? undefined : overlapOf(values.overlap);
  const output = outputOf(values);
  const maxKeysPerAccount = await loadKeyCap(values.config, values['max-keys-per-account'], io);
  const { created, oldExpiresAt, exact } = await onStore(io, values.schema, async (store) => {
    const next = await rotateApiKey(store, id, overlapSeconds === undefined ? {} : { overlapSeconds }, { maxKeysPerAccount });
    // The old key's expiry as stored (the earlier of its own and the overlap's end). The new
    // key is printed whatever happens here, since it is never shown again: if the list fails,
    // the overlap's end, which the old key's expiry is at the latest.
    const stored = (await listApiKeys(store, { accountId: next.accountId }).catch(() => [])).find((k) => k.id === id)?.expiresAt;
    const overlapEnd = new Date(Date.parse(next.createdAt) + (overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1_000).toISOString();
    return { created: next, oldExpiresAt: stored ?? overlapEnd, exact: typeof stored === 'string' };
  });
  printCreated(created, output, [['oldKey', id], ['oldKeyExpiresAt', oldExpiresAt]], io, { id, expiresAt: oldExpiresAt });
  const left = Date.parse(oldExpiresAt) - Date.parse(created.createdAt);
  io.stderr.write(
    left <= 0
      ? `The old key ${id} stopped working now: servers on this database refuse it within 5 s (keyCacheTtlMs).\n`
      : `The old key ${id} works until ${oldExpiresAt}${exact ? '' : ' at the latest'} (${spanOf(left)} from now): move its clients to the new key by then.\n`,
  );
  // A rotation never extends a key's life: say so where it is easy to miss.
  if (created.expiresAt !== null) io.stderr.write(`The new key expires at ${created.expiresAt}, as the old one would have: rotating a key never extends its life.\n`);
  return 0;
}

/** The new key of `create` or `rotate`: a short table (with `extra` rows), JSON, or the key alone; and the warning on stderr. */
function printCreated(
  created: CreatedApiKey,
  output: OutputMode,
  extra: ReadonlyArray<readonly [string, string]>,
  io: CliIo,
  oldKey?: { id: string; expiresAt: string },
): void {
  if (output === 'json') io.stdout.write(`${JSON.stringify(oldKey === undefined ? created : { ...created, oldKey })}\n`);
  else if (output === 'quiet') io.stdout.write(`${created.key}\n`);
  else {
    io.stdout.write(
      fields([
        ['id', created.id],
        ['account', created.accountId],
        ['label', created.label],
        ['createdAt', created.createdAt],
        ['expiresAt', created.expiresAt ?? 'never'],
        ['key', created.key],
        ...extra,
      ]),
    );
  }
  // On stderr, so that `KEY=$(ipokit keys create ... --quiet)` still shows it.
  io.stderr.write(`This is the only time key ${created.id} (${created.prefix}...) is shown: store it now. ipokit keeps only its hash.\n`);
}

/** A span of milliseconds in its largest whole unit: `1 d`, `90 min`, `42 s`. */
function spanOf(ms: number): string {
  const s = Math.round(ms / 1_000);
  if (s > 0 && s % 86_400 === 0) return `${s / 86_400} d`;
  if (s > 0 && s % 3_600 === 0) return `${s / 3_600} h`;
  if (s > 0 && s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const output = outputOf(values);
  const keys = await onStore(io, values.schema, (store) => listApiKeys(store, { accountId }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(keys)}\n`);
  else if (output === 'quiet') io.stdout.write(keys.map((k) => `${k.id}\n`).join(''));
  else if (keys.length === 0) io.stderr.write(`Account ${accountId} has no keys: create one with 'ipokit keys create --account ${accountId} --label L'.\n`);
  else io.stdout.write(keysTable(keys, Date.now()));
  return 0;
}

async function revoke(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: { schema: OPTIONS.schema }, strict: true, allowPositionals: true });
  const [id] = takePositionals(positionals, ['ID']) as [string];
  if (id === '') throw new CliError('ID must not be empty');
  await onStore(io, values.schema, (store) => revokeApiKey(store, id));
  io.stdout.write(`Revoked key ${id}. Servers on this database refuse it within 5 s (keyCacheTtlMs).\n`);
  return 0;
}
