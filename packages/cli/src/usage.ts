/**
 * `ipokit usage --account ID [--from DAY] [--to DAY] [--key KEY_ID] [--json]`: an account's
 * counted usage (docs/spec.md#usage), a row per IST day, key and route, and on a terminal a
 * bar per day.
 */
import { getUsage, todayInIst, type UsageRow } from '@ipokit/core';
import { addDays } from '@ipokit/core/backend';
import { calendarDate, parseOrThrow, required, takePositionals } from './args.js';
import { onStore } from './database.js';
import { columns } from './format.js';
import { CliError, type Command } from './io.js';

/** Days shown when `--from` is not given: the 30 IST days up to `--to`. */
const DEFAULT_DAYS = 30;
/** The longest range, as getUsage allows it. */
const MAX_DAYS = 366;
/** The widest bar, in characters. */
const BAR_WIDTH = 30;

/**
 * `ipokit usage --account ID`: the requests the account's keys made, as the limiter counted
 * them (admitted, and refused with a 429), per IST day, key and route; `--json` prints the
 * rows as `getUsage` gives them.
 *
 * @example
 * ```ts
 * await usageCommand(['--account', accountId, '--from', '2026-11-01', '--to', '2026-11-30'], io);
 * ```
 */
export const usageCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: {
      account: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      key: { type: 'string' },
      json: { type: 'boolean' },
      schema: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const to = values.to === undefined ? todayInIst(Date.now()) : calendarDate('--to', values.to);
  const from = values.from === undefined ? addDays(to, -(DEFAULT_DAYS - 1)) : calendarDate('--from', values.from);
  if (from > to) throw new CliError(`--from (${from}) must not be after --to (${to})`);
  if (addDays(from, MAX_DAYS - 1) < to) throw new CliError(`usage reads at most ${MAX_DAYS} days at a time: from ${from} to ${to} is more`);
  const query = values.key === undefined ? { accountId, from, to } : { accountId, from, to, keyId: values.key };
  const rows = await onStore(io, values.schema, (store) => getUsage(store, query));
  if (values.json) {
    io.stdout.write(`${JSON.stringify(rows)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.stderr.write(`No usage counted for account ${accountId} from ${from} to ${to} (IST days).\n`);
    return 0;
  }
  io.stdout.write(
    columns(
      ['DAY', 'KEY', 'ROUTE', 'ADMITTED', 'REFUSED'],
      rows.map((r) => [r.day, r.keyId, r.route, String(r.admitted), String(r.refused)]),
    ),
  );
  if ((io.stdout as { isTTY?: boolean }).isTTY === true) io.stdout.write(`\n${dayBars(rows)}`);
  return 0;
};

/**
 * A bar per day with a request: its length in proportion to the busiest day's, admitted as
 * `█` and refused as `░`, then the counts.
 *
 * @example
 * ```ts
 * dayBars([{ day: '2026-11-24', keyId: 'k', route: 'list', admitted: 3, refused: 1 }]);
 * // '2026-11-24 ██████████████████████░░░░░░░░ 3 admitted, 1 refused\n'
 * ```
 */
export function dayBars(rows: readonly UsageRow[]): string {
  const days = new Map<string, { admitted: number; refused: number }>();
  for (const r of rows) {
    const d = days.get(r.day) ?? { admitted: 0, refused: 0 };
    d.admitted += r.admitted;
    d.refused += r.refused;
    days.set(r.day, d);
  }
  const busiest = Math.max(...[...days.values()].map((d) => d.admitted + d.refused));
  let out = '';
  for (const [d, { admitted, refused }] of days) {
    const total = admitted + refused;
    const width = Math.max(1, Math.round((total / busiest) * BAR_WIDTH));
    const full = Math.round((admitted / total) * width);
    const bar = `${'█'.repeat(full)}${'░'.repeat(width - full)}`.padEnd(BAR_WIDTH);
    out += `${d} ${bar} ${admitted} admitted${refused > 0 ? `, ${refused} refused` : ''}\n`;
  }
  return out;
}
