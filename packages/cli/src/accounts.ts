/** `ipokit accounts create | update | list | show`: accounts and their plans, in PostgreSQL. */
import { createAccount, getAccount, getAccountWindows, listAccounts, listApiKeys, updateAccount, type Account, type Plan } from '@ipokit/core';
import { integer, oneOf, parseOrThrow, required, takePositionals, unknownName } from './args.js';
import { loadKeyCap, loadSettings, type ServeSettings } from './config.js';
import { onStore } from './database.js';
import { columns, fields, outputOf, type OutputMode } from './format.js';
import { CliError, type CliIo, type Command } from './io.js';
import { keysTable } from './keys.js';

const PLANS: readonly Plan[] = ['free', 'paid', 'pro'];

const OUTPUT_OPTIONS = {
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  schema: { type: 'string' },
} as const;

/**
 * `ipokit accounts create --name N --plan P [--gmp-addon]`,
 * `ipokit accounts update ID [--plan P] [--gmp-addon | --no-gmp-addon]` (each prints the
 * account: a short table, `--json`, or only its id with `--quiet`),
 * `ipokit accounts list [--after ID] [--limit N]` (ascending by id) and
 * `ipokit accounts show ID [--config FILE]` (the account, its rate-limit windows now under
 * the server's quotas, and its keys). The GMP add-on is for the pro plan
 * only: `--gmp-addon` with another plan is a usage error.
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
  if (action === 'list') return list(rest, io);
  if (action === 'show') return show(rest, io);
  throw new CliError(
    action === undefined ? 'missing action: create, update, list or show' : unknownName('action', action, ['create', 'update', 'list', 'show'], ': create, update, list or show'),
  );
};

/** The add-on counts only on pro (docs/spec.md#keys): asking for it elsewhere is a mistake. */
function addonOnlyOnPro(plan: Plan, account?: string): void {
  if (plan === 'pro') return;
  const which = account === undefined ? `--plan ${plan}` : `account ${account} is on ${plan}`;
  throw new CliError(`--gmp-addon is for the pro plan: ${which}; add --plan pro, or leave the add-on out`);
}

async function create(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { name: { type: 'string' }, plan: { type: 'string' }, 'gmp-addon': { type: 'boolean' }, ...OUTPUT_OPTIONS },
    strict: true,
    allowPositionals: true,
  });
  takePositionals(positionals, []);
  const name = required('--name', values.name);
  const plan = oneOf('--plan', required('--plan', values.plan), PLANS);
  if (values['gmp-addon']) addonOnlyOnPro(plan);
  const output = outputOf(values);
  const account = await onStore(io, values.schema, (store) => createAccount(store, { name, plan, gmpAddon: values['gmp-addon'] ?? false }));
  printAccount(account, output, io);
  return 0;
}

async function update(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: {
      plan: { type: 'string' },
      'gmp-addon': { type: 'boolean' },
      'no-gmp-addon': { type: 'boolean' },
      'max-keys-per-account': { type: 'string' },
      config: { type: 'string' },
      ...OUTPUT_OPTIONS,
    },
    strict: true,
    allowPositionals: true,
  });
  const [accountId] = takePositionals(positionals, ['ID']) as [string];
  if (values['gmp-addon'] && values['no-gmp-addon']) throw new CliError('give --gmp-addon or --no-gmp-addon, not both');
  const plan = values.plan === undefined ? undefined : oneOf('--plan', values.plan, PLANS);
  const gmpAddon = values['gmp-addon'] ? true : values['no-gmp-addon'] ? false : undefined;
  if (plan === undefined && gmpAddon === undefined) throw new CliError('nothing to change: give --plan, --gmp-addon or --no-gmp-addon');
  if (gmpAddon === true && plan !== undefined) addonOnlyOnPro(plan);
  const output = outputOf(values);
  // A move to paid or pro is checked against the server's key cap.
  const maxKeysPerAccount = await loadKeyCap(values.config, values['max-keys-per-account'], io);
  const account = await onStore(io, values.schema, async (store) => {
    if (gmpAddon === true && plan === undefined) addonOnlyOnPro((await getAccount(store, accountId)).plan, accountId);
    return updateAccount(store, { accountId, ...(plan === undefined ? {} : { plan }), ...(gmpAddon === undefined ? {} : { gmpAddon }) }, { maxKeysPerAccount });
  });
  printAccount(account, output, io);
  return 0;
}

async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: { after: { type: 'string' }, limit: { type: 'string' }, ...OUTPUT_OPTIONS }, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  if (values.after === '') throw new CliError('--after must not be empty');
  const limit = values.limit === undefined ? undefined : integer('--limit', values.limit, 1, 1_000);
  const output = outputOf(values);
  const accounts = await onStore(io, values.schema, (store) =>
    listAccounts(store, { ...(values.after === undefined ? {} : { after: values.after }), ...(limit === undefined ? {} : { limit }) }),
  );
  if (output === 'json') io.stdout.write(`${JSON.stringify(accounts)}\n`);
  else if (output === 'quiet') io.stdout.write(accounts.map((a) => `${a.id}\n`).join(''));
  else if (accounts.length === 0) io.stderr.write(values.after === undefined ? "No account yet: create one with 'ipokit accounts create --name N --plan P'.\n" : `No account after ${values.after}.\n`);
  else {
    io.stdout.write(columns(['ID', 'NAME', 'PLAN', 'GMP', 'CREATED'], accounts.map((a) => [a.id, a.name, a.plan, a.gmpAddon ? 'yes' : 'no', a.createdAt])));
    const page = limit ?? 100;
    if (accounts.length === page) io.stderr.write(`More may follow: --after ${accounts[accounts.length - 1]!.id}\n`);
  }
  return 0;
}

async function show(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { json: OUTPUT_OPTIONS.json, schema: OUTPUT_OPTIONS.schema, config: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  const [accountId] = takePositionals(positionals, ['ID']) as [string];
  if (accountId === '') throw new CliError('ID must not be empty');
  // The windows are counted against the quotas the server runs with: its config file and
  // IPOKIT_* variables, as `ipokit serve` reads them.
  const { limits } = await serverSettings(values.config, io);
  const { account, windows, keys } = await onStore(io, values.schema, async (store) => {
    const found = await getAccount(store, accountId);
    return { account: found, windows: await getAccountWindows(store, { accountId }, { limits }), keys: await listApiKeys(store, { accountId }) };
  });
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ account, windows, keys })}\n`);
    return 0;
  }
  printAccount(account, 'table', io);
  io.stdout.write('\n');
  if (windows.length === 0) io.stdout.write('No rate-limit window: every quota of its plan is Infinity.\n');
  else {
    io.stdout.write(
      columns(
        ['WINDOW', 'QUOTA', 'USED', 'REMAINING', 'RESETS IN'],
        windows.map((w) => [w.name, String(w.quota), String(w.quota - w.remaining), String(w.remaining), w.reset === 0 ? '-' : `${w.reset} s`]),
      ),
    );
  }
  io.stdout.write('\n');
  if (keys.length === 0) io.stdout.write(`No keys: create one with 'ipokit keys create --account ${account.id} --label L'.\n`);
  else io.stdout.write(keysTable(keys, Date.now()));
  return 0;
}

/**
 * The server's settings as `ipokit serve` resolves them without flags: `--config FILE` (or
 * IPOKIT_CONFIG) and the IPOKIT_* variables. A config file with problems is a usage error
 * listing them.
 */
function serverSettings(config: string | undefined, io: CliIo): Promise<ServeSettings> {
  return loadSettings(config, [], io);
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
