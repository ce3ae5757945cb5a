/**
 * The help of `ipokit` and of each command: `ipokit --help`, `ipokit <command> --help`.
 * Each command's first lines are its usage, printed after a usage error too.
 */

/** A command's usage (printed after a usage error) and its full help. */
export interface CommandHelp {
  /** One line per form, e.g. `Usage: ipokit keys create --account ID --label L [--json | --quiet]`. */
  usage: string;
  /** What it does, its options and an example. */
  details: string;
}

const DATABASE_OPTIONS = `  --schema S         PostgreSQL schema of the tables (default IPOKIT_SCHEMA, else ipokit)

Needs DATABASE_URL=postgres://user:password@host:5432/database.`;

/** Every command's help, by name. */
export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  serve: {
    usage: `Usage: ipokit serve [--framework express|koa] [--port N] [--host H] [--dataset FILE] [--demo-keys] [--schema S]
                    [--headers-timeout-ms N] [--request-timeout-ms N] [--keep-alive-timeout-ms N]
                    [--idle-timeout-ms N] [--max-connections N]`,
    details: `Serves the API at /ipos, with Express (default) or Koa.

Without DATABASE_URL it serves from memory: the generated demo dataset, or --dataset FILE,
with one demo account and key per plan (printed, with curl lines to try).
With DATABASE_URL it serves from PostgreSQL: it migrates, imports --dataset FILE first if
given, and serves what the database holds. It creates no account or key there unless
asked with --demo-keys (then one per plan, printed); make your own with 'ipokit accounts
create' and 'ipokit keys create'.

Options:
  --framework NAME   express or koa (default IPOKIT_FRAMEWORK, else express)
  --port N           port to listen on, 0 for any free one (default PORT, else 3000)
  --host H           address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
  --dataset FILE     a dataset JSON file: served instead of the generated one (memory),
                     or imported before serving (PostgreSQL)
  --demo-keys        PostgreSQL: also create one demo account and key per plan
  --schema S         PostgreSQL schema (default IPOKIT_SCHEMA, else ipokit)

Connection limits, so that clients that connect and send nothing, or send slowly, cannot
hold every file descriptor (times in milliseconds; 0 turns a timeout off):
  --headers-timeout-ms N     time to send a request's headers, from connecting or from the
                             request's first byte; then 408 and closed (default 10000)
  --request-timeout-ms N     the same for the whole request, body included; not less than
                             --headers-timeout-ms (default 30000)
  --keep-alive-timeout-ms N  how long a keep-alive connection waits for its next request
                             (Node adds a second); not more than --idle-timeout-ms
                             (default 5000)
  --idle-timeout-ms N        closes a connection with no bytes either way for this long: one
                             that never sends a byte, a stalled request, a client that stopped
                             reading (default 30000)
  --max-connections N        connections past this many are closed as soon as they open,
                             1 to 1000000 (default 1000, or on Linux the open-files limit,
                             ulimit -n, less 64 kept for the database and the process, when
                             that is lower)
The banner prints the limits in force.

On SIGTERM or Ctrl-C it stops accepting connections, finishes the requests under way and
exits; connections still open after IPOKIT_DRAIN_MS (default 10000) are cut.

Example:
  DATABASE_URL=postgres://localhost/ipos ipokit serve --framework koa --port 8080`,
  },
  migrate: {
    usage: 'Usage: ipokit migrate [--schema S]',
    details: `Creates the tables, or upgrades them to this version. Safe to run again, and from
several processes at once.

Options:
${DATABASE_OPTIONS}`,
  },
  import: {
    usage: 'Usage: ipokit import <file> [--batch-size N] [--schema S] [--json]',
    details: `Imports a dataset JSON file (the format of the README) into PostgreSQL, streamed, so a file
of any size fits: a first pass checks all of it and lists every problem; then it is written
in batches inside one transaction, so either all of it is imported or none. Progress goes to
stderr, the summary to stdout.

Options:
  --batch-size N     records per batch, 1 to 50000 (default 5000)
  --json             print the summary as JSON: {"ipos":N,"snapshots":M,"seconds":T}
${DATABASE_OPTIONS}

Example:
  ipokit demo-data --out ipos.json && ipokit import ipos.json`,
  },
  accounts: {
    usage: `Usage: ipokit accounts create --name NAME --plan free|paid|pro [--gmp-addon] [--json | --quiet] [--schema S]
       ipokit accounts update ID [--plan free|paid|pro] [--gmp-addon | --no-gmp-addon] [--json | --quiet] [--schema S]`,
    details: `Creates an account, or changes its plan or GMP add-on, and prints it.

Options:
  --name NAME        the account's name
  --plan PLAN        free, paid or pro (the free plan holds one active key)
  --gmp-addon        the GMP add-on (pro only: the GMP series and includeGmp)
  --no-gmp-addon     update: remove the add-on
  --json             print the account as JSON
  --quiet, -q        print only its id
${DATABASE_OPTIONS}

Example:
  ACCOUNT=$(ipokit accounts create --name Acme --plan pro --gmp-addon --quiet)`,
  },
  keys: {
    usage: `Usage: ipokit keys create --account ID --label LABEL [--json | --quiet] [--schema S]
       ipokit keys list --account ID [--json | --quiet] [--schema S]
       ipokit keys revoke ID [--schema S]`,
    details: `Creates, lists and revokes API keys.

create prints the new key: the only time it is shown (ipokit keeps its SHA-256 hash).
list prints each key's id, prefix, label and dates, never the key itself.
revoke stops a key at once here, and in other processes within keyCacheTtlMs (5 s).

Options:
  --account ID       the account (its id, from 'ipokit accounts create')
  --label LABEL      what the key is for, 1 to 100 characters
  --json             print JSON
  --quiet, -q        create: print only the key; list: only the ids
${DATABASE_OPTIONS}

Example:
  KEY=$(ipokit keys create --account "$ACCOUNT" --label "prod server" --quiet)`,
  },
  'demo-data': {
    usage: 'Usage: ipokit demo-data [--out FILE] [--today YYYY-MM-DD] [--seed N]',
    details: `Writes the generated demo dataset as JSON (one record per line): about 320 IPOs from
2019 to next year, in every status relative to --today, with GMP snapshots up to noon in
India on that day. The same --today and --seed always give the same file.

Options:
  --out FILE         write to FILE (default: standard output)
  --today DATE       the day statuses are relative to (default: today in India)
  --seed N           the generator's seed, 0 to 4294967295 (default 20190101)

Example:
  ipokit demo-data --out ipos.json && ipokit import ipos.json`,
  },
};

/** `ipokit --help`. */
export const MAIN_HELP = `ipokit: Indian IPO data and GMP timeseries as a REST/JSON API, from the command line.

Usage: ipokit <command> [options]

Commands:
  serve       serve the API (from memory, or from PostgreSQL when DATABASE_URL is set)
  migrate     create or upgrade the tables in PostgreSQL
  import      import a dataset JSON file into PostgreSQL (streamed, all or nothing)
  accounts    create an account, change its plan (accounts create | update)
  keys        create, list and revoke API keys (keys create | list | revoke)
  demo-data   write the generated demo dataset as JSON

Options:
  -h, --help      show help; 'ipokit <command> --help' for a command's
  -v, --version   print the version

Environment:
  DATABASE_URL    postgres://user:password@host:5432/database, for the PostgreSQL commands
  IPOKIT_SCHEMA   the PostgreSQL schema (default ipokit); --schema overrides it

Exit codes: 0 done, 1 failed (bad data, database, a refused change), 2 bad usage.`;

/** The short usage printed after a usage error that names no command. */
export const MAIN_USAGE = `Usage: ipokit <command> [options]   (commands: ${Object.keys(COMMAND_HELP).join(', ')})`;
