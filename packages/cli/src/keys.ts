/**
 * `ipokit keys create | list | revoke`. A whole key is printed once, by `create`; `list`
 * shows prefixes only.
 */
import { parseArgs } from 'node:util';
import { createApiKey, listApiKeys, revokeApiKey } from '@ipokit/core';
import { onStore, outputOf } from './accounts.js';
import { parseOrThrow, required, takePositionals } from './args.js';
import { columns, fields } from './format.js';
import { CliError, type CliIo, type Command } from './io.js';

/**
 * `ipokit keys create --account ID --label L`, `ipokit keys list --account ID`,
 * `ipokit keys revoke ID`.
 *
 * @example
 * ```ts
 * await keysCommand(['create', '--account', accountId, '--label', 'laptop', '--quiet'], io); // prints ipk_...
 * ```
 */
export const keysCommand: Command = async (argv, io) => {
  const [action, ...rest] = argv;
  if (action === 'create') return create(rest, io);
  if (action === 'list') return list(rest, io);
  if (action === 'revoke') return revoke(rest, io);
  throw new CliError(action === undefined ? 'missing action: create, list or revoke' : `unknown action ${JSON.stringify(action)}: create, list or revoke`);
};

const OPTIONS = {
  account: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  schema: { type: 'string' },
} as const;

async function create(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({ args: [...argv], options: { ...OPTIONS, label: { type: 'string' } }, strict: true, allowPositionals: true }),
  );
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const label = required('--label', values.label);
  const output = outputOf(values);
  const created = await onStore(io, values.schema, (store) => createApiKey(store, { accountId, label }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(created)}\n`);
  else if (output === 'quiet') io.stdout.write(`${created.key}\n`);
  else {
    io.stdout.write(
      fields([
        ['id', created.id],
        ['account', created.accountId],
        ['label', created.label],
        ['createdAt', created.createdAt],
        ['key', created.key],
      ]),
    );
  }
  // On stderr, so that `KEY=$(ipokit keys create ... --quiet)` still shows it.
  io.stderr.write(`This is the only time key ${created.id} (${created.prefix}...) is shown: store it now. ipokit keeps only its hash.\n`);
  return 0;
}

async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() => parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true }));
  takePositionals(positionals, []);
  const accountId = required('--account', values.account);
  const output = outputOf(values);
  const keys = await onStore(io, values.schema, (store) => listApiKeys(store, { accountId }));
  if (output === 'json') io.stdout.write(`${JSON.stringify(keys)}\n`);
  else if (output === 'quiet') io.stdout.write(keys.map((k) => `${k.id}\n`).join(''));
  else if (keys.length === 0) io.stderr.write(`Account ${accountId} has no keys: create one with 'ipokit keys create --account ${accountId} --label L'.\n`);
  else {
    io.stdout.write(
      columns(
        ['ID', 'PREFIX', 'LABEL', 'CREATED', 'REVOKED'],
        keys.map((k) => [k.id, `${k.prefix}...`, k.label, k.createdAt, k.revokedAt ?? '-']),
      ),
    );
  }
  return 0;
}

async function revoke(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({ args: [...argv], options: { schema: OPTIONS.schema }, strict: true, allowPositionals: true }),
  );
  const [id] = takePositionals(positionals, ['ID']) as [string];
  if (id === '') throw new CliError('ID must not be empty');
  await onStore(io, values.schema, (store) => revokeApiKey(store, id));
  io.stdout.write(`Revoked key ${id}. Servers on this database refuse it within 5 s (keyCacheTtlMs).\n`);
  return 0;
}
