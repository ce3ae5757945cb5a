/**
 * Plain-text output: a record as `name  value` lines, rows as aligned columns. Values are
 * made printable first, so that a label cannot add lines or move the terminal's cursor.
 */
import { CliError } from './io.js';

/**
 * A record as aligned `name  value` lines.
 *
 * @example
 * ```ts
 * fields([['id', 'acct_1'], ['plan', 'pro']]); // 'id    acct_1\nplan  pro\n'
 * ```
 */
export function fields(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${printable(value)}\n`).join('');
}

/**
 * Rows under a header, in aligned columns (the last column is not padded).
 *
 * @example
 * ```ts
 * columns(['ID', 'LABEL'], [['key_1', 'laptop']]); // 'ID     LABEL\nkey_1  laptop\n'
 * ```
 */
export function columns(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [header, ...rows.map((row) => row.map(printable))];
  const widths = header.map((_, i) => Math.max(...all.map((row) => [...(row[i] ?? '')].length)));
  return all
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length))).join('  '))
    .map((line) => `${line.trimEnd()}\n`)
    .join('');
}

/**
 * A value with control characters (line breaks, escape sequences) written as JSON escapes.
 *
 * @example
 * ```ts
 * printable('a\nb'); // 'a\\nb'
 * ```
 */
export function printable(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const escaped = JSON.stringify(c).slice(1, -1); // \n, \t, \u001b ... (JSON leaves DEL, C1 and U+2028 as they are)
    return escaped === c ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : escaped;
  });
}

/** How a command prints its result: a table, JSON, or the bare id (or key). */
export type OutputMode = 'table' | 'json' | 'quiet';

/**
 * `--json` or `--quiet` (not both), else a table.
 *
 * @example
 * ```ts
 * outputOf({ json: true }); // 'json'
 * ```
 */
export function outputOf(values: { json?: boolean; quiet?: boolean }): OutputMode {
  if (values.json && values.quiet) throw new CliError('give --json or --quiet, not both');
  return values.json ? 'json' : values.quiet ? 'quiet' : 'table';
}
