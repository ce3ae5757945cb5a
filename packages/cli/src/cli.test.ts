import { describe, expect, it } from 'vitest';
import { IpokitError } from '@ipokit/core';
import { COMMAND_HELP } from './help.js';
import { runCli, VERSION } from './index.js';
import { CliError } from './io.js';
import { reportError } from './report.js';
import { capture } from './test-helpers.js';

async function run(argv: string[], env: Record<string, string> = {}) {
  const out = capture({ env });
  const code = await runCli(argv, out.io);
  return { code, stdout: out.stdout(), stderr: out.stderr() };
}

/** A usage error: a one-line message, the usage, a pointer to --help; nothing on stdout. */
function expectUsageError(result: { code: number; stdout: string; stderr: string }, message: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(message);
  expect(lines[1]).toMatch(/^Usage: ipokit /);
  expect(lines.at(-1)).toMatch(/^Run 'ipokit [a-z-]* ?--help' for details\.$/);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('ipokit help and version', () => {
  it.each([['--help'], ['-h'], ['help']])('%s prints every command, exit 0', async (flag) => {
    const r = await run([flag]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const command of Object.keys(COMMAND_HELP)) expect(r.stdout).toContain(`\n  ${command} `);
    expect(r.stdout).toContain('DATABASE_URL');
  });

  it.each(Object.keys(COMMAND_HELP))('ipokit %s --help prints its usage and options, exit 0', async (command) => {
    for (const argv of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const r = await run(argv);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith(`Usage: ipokit ${command}`)).toBe(true);
      expect(r.stdout).toContain('\n\n');
    }
  });

  it('answers --help after an action or other options, before running anything', async () => {
    const r = await run(['keys', 'create', '--account', 'x', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: ipokit keys create/);
  });

  it.each([['--version'], ['-v']])('%s prints the version', async (flag) => {
    const r = await run([flag]);
    expect(r).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('ipokit usage errors: one line, the usage, exit 2', () => {
  it('no command', async () => expectUsageError(await run([]), /^ipokit: missing command$/));
  it('an unknown command', async () => expectUsageError(await run(['xyz']), /^ipokit: unknown command "xyz"$/));
  it('an unknown option before the command', async () => expectUsageError(await run(['--verbose']), /^ipokit: unknown option --verbose$/));
  it('help on something that is not a command', async () => expectUsageError(await run(['help', 'nope']), /not a command/));
  it.each([
    [['migrat'], /^ipokit: unknown command "migrat"; did you mean "migrate"\?$/],
    [['serv'], /^ipokit: unknown command "serv"; did you mean "serve"\?$/],
    [['webhoks', 'list'], /^ipokit: unknown command "webhoks"; did you mean "webhooks"\?$/],
    [['hepl'], /^ipokit: unknown command "hepl"; did you mean "help"\?$/],
    [['demo'], /^ipokit: unknown command "demo"; did you mean "demo-data"\?$/],
    [['--verison'], /^ipokit: unknown option --verison; did you mean --version\?$/],
    [['help', 'migrat'], /^ipokit: no help for "migrat": not a command; did you mean "migrate"\?$/],
    [['keys', 'craete', '--account', 'a'], /^ipokit keys: unknown action "craete"; did you mean "create"\?$/],
    [['keys', 'lsit'], /^ipokit keys: unknown action "lsit"; did you mean "list"\?$/],
    [['accounts', 'shwo', 'x'], /^ipokit accounts: unknown action "shwo"; did you mean "show"\?$/],
    [['webhooks', 'replya', 'w', 'd'], /^ipokit webhooks: unknown action "replya"; did you mean "replay"\?$/],
    [['webhooks', 'deliver', 'w'], /^ipokit webhooks: unknown action "deliver"; did you mean "deliveries"\?$/],
    [['keys', 'list', '--acount', 'a'], /^ipokit keys list: unknown option --acount; did you mean --account\?$/],
    [['keys', 'create', '--account', 'a', '--lable', 'l'], /^ipokit keys create: unknown option --lable; did you mean --label\?$/],
    [['serve', '--prot', '80'], /^ipokit serve: unknown option --prot; did you mean --port\?$/],
    [['serve', '--limt=free.perMinute=1'], /^ipokit serve: unknown option --limt; did you mean --limit\?$/],
    [['import', 'f.json', '--batch-szie', '10'], /^ipokit import: unknown option --batch-szie; did you mean --batch-size\?$/],
    [['migrate', '--hepl'], /^ipokit migrate: unknown option --hepl; did you mean --help\?$/],
    [['usage', '--acc', 'a'], /^ipokit usage: unknown option --acc; did you mean --account\?$/],
  ])('a near miss %j: did you mean the closest, in one line', async (argv, message) => expectUsageError(await run(argv), message));

  it.each([
    [['mgrt'], /^ipokit: unknown command "mgrt"$/],
    [['w'], /^ipokit: unknown command "w"$/],
    [['keys', 'rename'], /^ipokit keys: unknown action "rename": create, rotate, list or revoke$/],
    [['migrate', '--force'], /^ipokit migrate: unknown option --force$/],
    [['migrate', '-x'], /^ipokit migrate: unknown option -x$/],
  ])('nothing near %j: no suggestion (the usage lists the commands)', async (argv, message) => {
    const r = await run(argv);
    expectUsageError(r, message);
    expect(r.stderr).not.toContain('did you mean');
  });

  it('a prototype name is not a command', async () => expectUsageError(await run(['constructor']), /unknown command "constructor"/));

  it.each([
    [['migrate', '--schemas', 'x'], /^ipokit migrate: unknown option --schemas; did you mean --schema\?$/],
    [['migrate', 'extra'], /^ipokit migrate: unexpected argument "extra"$/],
    [['migrate', '--schema'], /^ipokit migrate: option --schema needs a value$/],
    [['demo-data', '--seed', '-1'], /^ipokit demo-data: option --seed needs a value \(for one that starts with "-", write --seed=-\.\.\.\)$/],
    [['demo-data', '--seed=-1'], /^ipokit demo-data: --seed must be a whole number from 0 to 4294967295, got "-1"$/],
    [['demo-data', '--seed', '1.5'], /^ipokit demo-data: --seed must be a whole number from 0 to 4294967295, got "1.5"$/],
    [['demo-data', '--today', '2026-02-30'], /^ipokit demo-data: --today must be a real date written YYYY-MM-DD, got "2026-02-30"$/],
    [['demo-data', '--out', ''], /^ipokit demo-data: --out must not be empty$/],
    [['serve', '--framework', 'hapi'], /^ipokit serve: --framework must be node, express or koa, got "hapi"$/],
    [['serve', '--port', '70000'], /^ipokit serve: --port must be a whole number from 0 to 65535, got "70000"$/],
    [['serve', '--demo-keys=yes'], /^ipokit serve: option --demo-keys takes no value$/],
    [['accounts'], /^ipokit accounts: missing action: create, update, list or show$/],
    [['accounts', 'delete', 'x'], /^ipokit accounts: unknown action "delete": create, update, list or show$/],
    [['accounts', 'create', '--plan', 'pro'], /^ipokit accounts create: missing option --name$/],
    [['accounts', 'create', '--name', 'A'], /^ipokit accounts create: missing option --plan$/],
    [['accounts', 'create', '--name', 'A', '--plan', 'gold'], /^ipokit accounts create: --plan must be free, paid or pro, got "gold"$/],
    [['accounts', 'create', '--name', 'A', '--plan', 'pro', '--json', '-q'], /^ipokit accounts create: give --json or --quiet, not both$/],
    [['accounts', 'update'], /^ipokit accounts update: missing argument ID$/],
    [['accounts', 'list', '--bogus'], /^ipokit accounts list: unknown option --bogus$/],
    [['accounts', 'show', 'x', '--bogus'], /^ipokit accounts show: unknown option --bogus$/],
    [['accounts', 'update', 'acct_1'], /^ipokit accounts update: nothing to change/],
    [['accounts', 'update', 'acct_1', '--gmp-addon', '--no-gmp-addon'], /not both$/],
    [['keys', 'create', '--account', 'a'], /^ipokit keys create: missing option --label$/],
    [['keys', 'list'], /^ipokit keys list: missing option --account$/],
    [['keys', 'revoke'], /^ipokit keys revoke: missing argument ID$/],
    [['keys', 'revoke', 'a', 'b'], /^ipokit keys revoke: unexpected argument "b"$/],
    [['keys'], /^ipokit keys: missing action: create, rotate, list or revoke$/],
    [['keys', 'rename'], /^ipokit keys: unknown action "rename": create, rotate, list or revoke$/],
    [['keys', 'create', '--account', 'a', '--label', 'l', '--expires', '1w'], /^ipokit keys create: --expires must be an ISO-8601 instant with a zone \(e\.g\. 2026-12-31T18:30:00Z\) or a time from now: a whole number of minutes, hours or days \(e\.g\. 90m, 12h, 30d\); got "1w"$/],
    [['keys', 'create', '--account', 'a', '--label', 'l', '--expires', '2026-12-31T18:30:00'], /^ipokit keys create: --expires must be an ISO-8601 instant with a zone .*; got "2026-12-31T18:30:00"$/],
    [['keys', 'create', '--account', 'a', '--label', 'l', '--expires', '0d'], /^ipokit keys create: --expires must be later than now, got "0d"$/],
    [['keys', 'create', '--account', 'a', '--label', 'l', '--expires', '99999999d'], /^ipokit keys create: --expires 99999999d is past the year 9999$/],
    [['keys', 'rotate'], /^ipokit keys rotate: missing argument ID$/],
    [['keys', 'rotate', ''], /^ipokit keys rotate: ID must not be empty$/],
    [['keys', 'rotate', 'k', '--overlap', '1w'], /^ipokit keys rotate: --overlap must be a whole number of seconds, or of s, m, h or d \(e\.g\. 3600, 90m, 1h, 7d\), got "1w"$/],
    [['keys', 'rotate', 'k', '--overlap', '1.5h'], /^ipokit keys rotate: --overlap must be a whole number of seconds/],
    [['keys', 'rotate', 'k', '--overlap', '8d'], /^ipokit keys rotate: --overlap must be from 0 to 7d \(604800 s\), got "8d"$/],
    [['keys', 'rotate', 'k', '--overlap', '604801'], /^ipokit keys rotate: --overlap must be from 0 to 7d \(604800 s\), got "604801"$/],
    [['keys', 'rotate', 'k', '--json', '-q'], /^ipokit keys rotate: give --json or --quiet, not both$/],
    [['keys', 'rotate', 'k', '--account', 'a'], /^ipokit keys rotate: unknown option --account$/],
  ])('%j', async (argv, message) => expectUsageError(await run(argv), message));

  it('a database command without DATABASE_URL says how to set it', async () => {
    for (const argv of [['migrate'], ['accounts', 'create', '--name', 'A', '--plan', 'pro'], ['keys', 'list', '--account', 'a'], ['keys', 'revoke', 'k'], ['keys', 'rotate', 'k', '--overlap', '7d'], ['keys', 'create', '--account', 'a', '--label', 'l', '--expires', '2030-01-01T00:00:00+05:30']]) {
      expectUsageError(await run(argv), /: set DATABASE_URL=postgres:\/\/user:password@host:5432\/database to say which PostgreSQL to use$/);
    }
    expectUsageError(await run(['migrate'], { DATABASE_URL: 'mysql://u:secret@h/db' }), /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/u:\*\*\*@h\/db"$/);
  });

  it('a bad schema name is a usage error, from --schema or IPOKIT_SCHEMA', async () => {
    const env = { DATABASE_URL: 'postgres://localhost:1/x' };
    expectUsageError(await run(['migrate', '--schema', 'Ipokit'], env), /--schema must be lowercase letters/);
    expectUsageError(await run(['migrate'], { ...env, IPOKIT_SCHEMA: 'a;drop' }), /IPOKIT_SCHEMA must be lowercase letters/);
  });
});

describe('ipokit failures: a line on stderr, exit 1, no stack trace', () => {
  it('a database that cannot be reached', async () => {
    const r = await run(['migrate'], { DATABASE_URL: 'postgres://someone:hunter2@127.0.0.1:1/nowhere' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ipokit migrate: cannot connect to PostgreSQL at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED.*\n$/);
    expect(r.stderr).not.toContain('hunter2');
  });

  it('a dataset refused by the core: every problem as path: message, with the count', () => {
    const out = capture();
    const problems = [
      { path: 'ipos[0].type', message: 'type must be EQ, SME or DEBT' },
      { path: 'ipos[2].endDate', message: 'endDate 2026-12-05 is before\nstartDate 2026-12-10' },
    ];
    const err = new IpokitError('ERR:DATASET', 'The dataset has 1500 problems, the first at ipos[0].type: type must be EQ, SME or DEBT.', { problems, problemCount: 1500 });
    expect(reportError(err, out.io, { command: 'import' })).toBe(1);
    expect(out.stderr()).toBe(
      [
        'ipokit import: The dataset has 1500 problems, the first at ipos[0].type: type must be EQ, SME or DEBT.',
        '1500 problems (the first 2 listed); nothing was written:',
        '  ipos[0].type: type must be EQ, SME or DEBT',
        '  ipos[2].endDate: endDate 2026-12-05 is before startDate 2026-12-10',
        '  ... and 1498 more',
        '',
      ].join('\n'),
    );
  });

  it('other IpokitErrors and CliErrors: their message; a store failure names its cause', () => {
    const out = capture();
    expect(reportError(new IpokitError('ERR:PLAN', 'The free plan allows one active key.'), out.io)).toBe(1);
    expect(reportError(new CliError('cannot write x.json: EACCES', 1), out.io, { command: 'demo-data', usage: 'Usage: x' })).toBe(1);
    const cause = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(reportError(new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store failed.', { cause }), out.io)).toBe(1);
    expect(reportError(cause, out.io)).toBe(1);
    expect(out.stderr()).toBe(
      [
        'ipokit: The free plan allows one active key.',
        'ipokit demo-data: cannot write x.json: EACCES',
        'ipokit: The PostgreSQL store failed.: terminating connection due to administrator command',
        'ipokit: database error: terminating connection due to administrator command',
        '',
      ].join('\n'),
    );
  });

  it('a defect (an unexpected error) is reported with its stack, exit 1', () => {
    const out = capture();
    expect(reportError(new TypeError('x is not a function'), out.io)).toBe(1);
    expect(out.stderr()).toMatch(/^ipokit: unexpected error \(a defect in ipokit; please report it\):\nTypeError: x is not a function\n\s+at /);
  });
});
