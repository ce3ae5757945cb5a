/** `ipokit demo-data`: the generated demo dataset, as a JSON file. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { todayInIst, type Dataset } from '@ipokit/core';
import { calendarDate, integer, parseOrThrow, takePositionals } from './args.js';
import { DEFAULT_SEED, generateDataset } from './generate.js';
import { CliError, type Command } from './io.js';

/**
 * `ipokit demo-data [--out FILE] [--today YYYY-MM-DD] [--seed N]`: writes the generated
 * dataset as JSON, to FILE or standard output. The same `--today` and `--seed` give the
 * same bytes: the snapshots run up to noon in India on `--today` (default today in India).
 *
 * @example
 * ```ts
 * await demoDataCommand(['--out', 'ipos.json', '--today', '2026-11-23'], io);
 * ```
 */
export const demoDataCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { out: { type: 'string' }, today: { type: 'string' }, seed: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  takePositionals(positionals, []);
  const today = values.today === undefined ? todayInIst(new Date()) : calendarDate('--today', values.today);
  const seed = values.seed === undefined ? DEFAULT_SEED : integer('--seed', values.seed, 0, 0xffffffff);
  if (values.out === '') throw new CliError('--out must not be empty');
  // Noon in India (06:30Z) on that day: the file depends on --today and --seed alone.
  const dataset = generateDataset({ seed, today, now: Date.parse(`${today}T06:30:00.000Z`) });
  const text = datasetJson(dataset);
  if (values.out === undefined) {
    io.stdout.write(text);
    return 0;
  }
  const file = resolve(io.cwd, values.out);
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new CliError(`cannot write ${values.out}: ${(err as Error).message}`, 1);
  }
  io.stderr.write(
    `Wrote ${dataset.ipos?.length ?? 0} IPOs, ${dataset.gmp?.length ?? 0} GMP snapshots and ${dataset.subscription?.length ?? 0} subscription snapshots (today ${today}, seed ${seed}) to ${values.out}.\n`,
  );
  return 0;
};

/**
 * A dataset as JSON with one record per line: valid JSON, and easy to read, grep and diff.
 *
 * @example
 * ```ts
 * datasetJson({ ipos: [], gmp: [] }); // '{"ipos":[\n],"gmp":[\n],"subscription":[\n]}\n'
 * ```
 */
export function datasetJson(dataset: Dataset): string {
  const part = (records: readonly unknown[]) => `[\n${records.map((r) => JSON.stringify(r)).join(',\n')}${records.length === 0 ? '' : '\n'}]`;
  return `{"ipos":${part(dataset.ipos ?? [])},"gmp":${part(dataset.gmp ?? [])},"subscription":${part(dataset.subscription ?? [])}}\n`;
}
