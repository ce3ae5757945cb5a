/** `ipokit accounts create | update`: accounts and their plans, in PostgreSQL. */
import { parseArgs } from 'node:util';
import { createAccount, updateAccount, type Account, type Plan, type Store } from '@ipokit/core';
import { postgresStore } from '@ipokit/storage-postgres';
import { oneOf, parseOrThrow, required, takePositionals } from './args.js';
import { schemaOf, withDatabase } from './database.js';
import { fields } from './format.js';
import { CliError, type CliIo, type Command } from './io.js';

const PLANS: readonly Plan[] = ['free', 'paid', 'pro'];

const OUTPUT_OPTIONS = {
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  schema: { type: 'string' },
} as const;

/**
 * `ipokit accounts create --name N --plan P [--gmp-addon]` and
 * `ipokit accounts update ID [--plan P] [--gmp-addon | --no-gmp-addon]`; each prints the
 * account (a short table, `--json`, or only its id with `--quiet`).
 *
 * @example
 * ```ts
 * await accountsCommand(['create', '--name', 'Acme', '--plan', 'pro', '--gmp-addon', '--quiet'], io); // prints acct_...
 * ```
 */
export const accountsCommand: Command = async (argv, io) => {
  const [action, ...rest] = argv;
  if (action === 'create') return create(rest, io);
  if (action === 'update') return update(rest, io);
  throw new CliError(action === undefined ? 'missing action: create or update' : `unknown action ${JSON.stringify(action)}: create or update`);
};

async function create(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: { name: { type: 'string' }, plan: { type: 'string' }, 'gmp-addon': { type: 'boolean' }, ...OUTPUT_OPTIONS },
      strict: true,
      allowPositionals: true,
    }),
  );
  takePositionals(positionals, []);
  const name = required('--name', values.name);
  const plan = oneOf('--plan', required('--plan', values.plan), PLANS);
  const output = outputOf(values);
  const account = await onStore(io, values.schema, (store) => createAccount(store, { name, plan, gmpAddon: values['gmp-addon'] ?? false }));
  printAccount(account, output, io);
  return 0;
}

async function update(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: { plan: { type: 'string' }, 'gmp-addon': { type: 'boolean' }, 'no-gmp-addon': { type: 'boolean' }, ...OUTPUT_OPTIONS },
      strict: true,
      allowPositionals: true,
    }),
  );
  const [accountId] = takePositionals(positionals, ['ID']) as [string];
  if (values['gmp-addon'] && values['no-gmp-addon']) throw new CliError('give --gmp-addon or --no-gmp-addon, not both');
  const plan = values.plan === undefined ? undefined : oneOf('--plan', values.plan, PLANS);
  const gmpAddon = values['gmp-addon'] ? true : values['no-gmp-addon'] ? false : undefined;
  if (plan === undefined && gmpAddon === undefined) throw new CliError('nothing to change: give --plan, --gmp-addon or --no-gmp-addon');
  const output = outputOf(values);
  const account = await onStore(io, values.schema, (store) =>
    updateAccount(store, { accountId, ...(plan === undefined ? {} : { plan }), ...(gmpAddon === undefined ? {} : { gmpAddon }) }),
  );
  printAccount(account, output, io);
  return 0;
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

/**
 * Runs `fn` on a PostgreSQL store over the command's database, then closes both.
 *
 * @example
 * ```ts
 * const keys = await onStore(io, values.schema, (store) => listApiKeys(store, { accountId }));
 * ```
 */
export async function onStore<T>(io: CliIo, schemaOption: string | undefined, fn: (store: Store) => Promise<T>): Promise<T> {
  const schema = schemaOf(schemaOption, io);
  return withDatabase(io, schema, async (db) => {
    const store = postgresStore({ client: db.client, schema });
    try {
      return await fn(store);
    } finally {
      await store.close?.();
    }
  });
}

function printAccount(account: Account, output: OutputMode, io: CliIo): void {
  if (output === 'json') io.stdout.write(`${JSON.stringify(account)}\n`);
  else if (output === 'quiet') io.stdout.write(`${account.id}\n`);
  else {
    io.stdout.write(
      fields([
        ['id', account.id],
        ['name', account.name],
        ['plan', account.plan],
        ['gmpAddon', account.gmpAddon ? 'yes' : 'no'],
        ['createdAt', account.createdAt],
      ]),
    );
  }
}
