/** One figure of a benchmark, as every part of `npm run bench` reports it. */
export interface BenchRow {
  group: string;
  name: string;
  value: number;
  unit: string;
  /** The target, e.g. `>= 0.95`. */
  target?: string;
  pass?: boolean;
  note?: string;
}

/**
 * The rows as a markdown table.
 *
 * @example
 * ```ts
 * console.log(formatRows([{ group: 'HTTP', name: 'x', value: 1, unit: 'x' }]));
 * ```
 */
export function formatRows(rows: readonly BenchRow[]): string {
  const lines = ['| group | measure | value | target | met | note |', '|---|---|---|---|---|---|'];
  for (const r of rows) {
    const met = r.pass === undefined ? '' : r.pass ? 'yes' : '**no**';
    lines.push(`| ${r.group} | ${r.name} | ${r.value.toLocaleString('en-US')} ${r.unit} | ${r.target ?? ''} | ${met} | ${r.note ?? ''} |`);
  }
  return lines.join('\n');
}
