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
    usage: `Usage: ipokit serve [--framework express|koa] [--port N] [--host H] [--mount PATH] [--trust-proxy N]
                    [--dataset FILE] [--demo-keys] [--schema S] [--config FILE] [--print-config]
                    [--log text|json|off] [--openapi | --no-openapi] [--limit PLAN.WINDOW=N|off]...
                    [--max-list-limit PLAN=N]... [--gmp-preview-ends YYYY-MM-DD] [--max-gmp-buckets N]
                    [--max-url-length N] [--store-timeout-ms N] [--key-cache-ttl-ms N]
                    [--limiter-fail-open | --no-limiter-fail-open] [--max-keys-per-account N|off] [--drain-ms N]
                    [--headers-timeout-ms N] [--request-timeout-ms N] [--keep-alive-timeout-ms N]
                    [--idle-timeout-ms N] [--max-connections N]
                    [--webhooks | --no-webhooks] [--allow-insecure-webhooks] [--webhook-concurrency N]
                    [--webhook-allow-network CIDR]... [--ingest-token-file F] [--ingest-max-bytes N]`,
    details: `Serves the API at /ipos (or --mount), with Express (default) or Koa, its OpenAPI document
at /ipos/-/openapi.json, and health checks at /healthz and /readyz; and delivers the
store's webhooks from the same process, as 'ipokit worker' does, unless --no-webhooks.

Without DATABASE_URL it serves from memory: the generated demo dataset, or --dataset FILE,
with one demo account and key per plan (printed, with curl lines to try).
With DATABASE_URL it serves from PostgreSQL: it migrates, imports --dataset FILE first if
given, and serves what the database holds. It creates no account or key there unless
asked with --demo-keys: then one account per plan, named "ipokit demo (free)" and so on,
made once and given a new key at every start (the demo keys made before are revoked);
make your own with 'ipokit accounts create' and 'ipokit keys create'.

Each setting comes from its flag, else its environment variable, else the config file,
else its default. --print-config prints the settings in force as JSON, in the config
file's format, and exits without serving.

Options:
  --framework NAME   express or koa (IPOKIT_FRAMEWORK; default express)
  --port N           port to listen on, 0 for any free one (PORT; default 3000)
  --host H           address to listen on (HOST; default 127.0.0.1, 0.0.0.0 for every interface)
  --mount PATH       the path the API answers under, e.g. /api/v1/ipos, or / (IPOKIT_MOUNT;
                     default /ipos)
  --trust-proxy N    the proxies in front that append the client's address to
                     X-Forwarded-For: the keyless rate limit and the log use the address
                     N entries from the right (IPOKIT_TRUST_PROXY; default 0: the connection's)
  --dataset FILE     a dataset JSON file: served instead of the generated one (memory),
                     or imported before serving (PostgreSQL)
  --demo-keys        PostgreSQL: also make a demo key per plan (see above)
  --schema S         PostgreSQL schema (IPOKIT_SCHEMA; default ipokit)
  --config FILE      a JSON file of settings (IPOKIT_CONFIG); every problem in it is listed
  --print-config     print the settings in force as JSON and exit
  --log FORMAT       the access log on stdout: text (a line per request), json (an object
                     per line) or off (IPOKIT_LOG; default text)
  --drain-ms N       on stop, how long requests under way may take (IPOKIT_DRAIN_MS; default 10000)

The router's options (the README's "Options"):
  --openapi, --no-openapi      serve the OpenAPI document (IPOKIT_OPENAPI; default on here)
  --limit PLAN.WINDOW=N|off    a rate limit: free, paid or pro .perMinute, .perHour,
                               .perDay (the IST day), .gmpPerMinute or .gmpPerDay; keyless
                               .perMinute, .perHour or .perDay; off turns the window off;
                               repeat for each (default 6/min and GMP 3/min, the rest off)
  --rate-limit-headers H       draft-6 (RateLimit-Limit/-Remaining/-Reset), draft-11
                               (RateLimit-Policy, RateLimit), both or none
                               (IPOKIT_RATE_LIMIT_HEADERS; default draft-6)
  --max-list-limit PLAN=N      the largest list page of a plan; repeat for each
                               (default free 1, paid 100, pro 100)
  --gmp-preview-ends DATE      last day of the free GMP preview (default 2026-09-30)
  --max-gmp-buckets N          the largest GMP series (default 20000)
  --max-url-length N           the longest request-target, in bytes (default 4096)
  --store-timeout-ms N         a slower store call answers 503 (IPOKIT_STORE_TIMEOUT_MS;
                               default 5000); /readyz waits as long
  --key-cache-ttl-ms N         how stale a revoked key may be here (IPOKIT_KEY_CACHE_TTL_MS;
                               default 5000; 0 no cache)
  --limiter-fail-open          admit requests when the store cannot count them
                               (IPOKIT_LIMITER_FAIL_OPEN; default off: 503)
  --max-keys-per-account N|off the active keys a paid or pro account may hold; one more is
                               refused, 403 ERR:PLAN (IPOKIT_MAX_KEYS_PER_ACCOUNT; default
                               100; off: no cap; the free plan holds one)

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

Webhooks (see 'ipokit webhooks --help' and 'ipokit worker --help'):
  --webhooks, --no-webhooks    deliver webhooks from this process: a worker beside the
                               server (IPOKIT_WEBHOOKS; default on). Off, run
                               'ipokit worker' on the same database instead
  --allow-insecure-webhooks    also send to http: URLs, for local receivers and tests
                               (IPOKIT_ALLOW_INSECURE_WEBHOOKS; default off: https: only)
  --webhook-concurrency N      delivery attempts in flight at once, 1 to 1000
                               (IPOKIT_WEBHOOK_CONCURRENCY; default 64)
  --webhook-allow-network CIDR also create endpoints for, and send to, this network outside
                               the public internet (repeatable; IPOKIT_WEBHOOK_ALLOW_NETWORKS,
                               comma-separated; default none). Local receivers need
                               127.0.0.0/8 and ::1/128

Push (see 'ipokit push --help'):
  --ingest-token-file F        accept datasets at POST /-/ingest (outside the mount, no API
                               key) from a client that sends one of the tokens of F as
                               Authorization: Bearer <token>: one token per line, at least 32
                               characters each (e.g. 'openssl rand -hex 32'), blank lines and
                               # comments ignored (IPOKIT_INGEST_TOKEN_FILE; default off)
  --ingest-max-bytes N         the largest dataset a push may send, in bytes; a larger one is
                               413 (IPOKIT_INGEST_MAX_BYTES; default 16777216, 16 MiB)
A push is imported whole or not at all, as 'ipokit import' does, into memory or PostgreSQL:
200 {"ipos":N,"gmp":M,"subscription":K} (the counts written), 400 with the problems of a
refused dataset (the first 1000, and problemCount), 401, 413, 415, 503.

Sources (see 'ipokit collect --help'):
  --sources FILE               run the sources of FILE in this process: a collector that
                               imports what they answer on their schedules and combines GMP
                               sites into snapshots (IPOKIT_SOURCES; the config file's
                               "sources" may hold the settings themselves; default none).
                               With --ingest-token-file, GET /-/sources shows their status

The config file holds the same settings by name, e.g.
  {"port": 8080, "host": "0.0.0.0", "mount": "/ipos", "trustProxy": 1, "log": "json",
   "openapi": true, "limits": {"free": {"perMinute": 10}, "keyless": {"perMinute": "off"}},
   "maxListLimit": {"paid": 50}, "storeTimeoutMs": 2000, "connections": {"maxConnections": 500}}
(the output of --print-config is one).

Health: GET /healthz answers 200 {"status":"ok"} while the process serves; GET /readyz
answers 200 when the store answers a query, 503 {"status":"unavailable"} when it does not.
Neither needs a key or counts against a rate limit.

Access log, one line per request on stdout, when the response is done:
  TIME METHOD TARGET STATUS MSms ADDRESS ACCOUNT   (text; - when unknown)
  {"time":...,"method":...,"path":...,"status":...,"ms":...,"address":...,"account":...}
The target's secret-like query values (key, token, password, ...) are logged as ***; the
x-api-key header never is. ACCOUNT is the account of the request's valid key.

On SIGTERM or Ctrl-C it stops accepting connections, finishes the requests under way and
exits; connections still open after --drain-ms are cut. The webhook worker stops claiming
deliveries and finishes its attempts under way (each within 15 s) meanwhile.

Example:
  DATABASE_URL=postgres://localhost/ipos ipokit serve --framework koa --port 8080 --config ipokit.config.json`,
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
  --json             print the summary as JSON: {"ipos":N,"snapshots":M,"subscription":K,"seconds":T}
${DATABASE_OPTIONS}

Example:
  ipokit demo-data --out ipos.json && ipokit import ipos.json`,
  },
  push: {
    usage: 'Usage: ipokit push <file> --url URL --token-file F [--json]',
    details: `Sends a dataset JSON file (the format of the README) to a server started with
'ipokit serve --ingest-token-file F', which imports it whole or not at all, into memory or
PostgreSQL. The file is streamed, not read whole; on a terminal, a file of 1 MiB or more
shows its progress (a final line when stderr is not a terminal). The counts written go to
stdout; a refused dataset prints every problem (as 'ipokit import' does) and exits 1, as do
a wrong token (401), a file larger than the server's --ingest-max-bytes (413) and a server
that cannot be reached.

Options:
  --url URL          the server's base URL, e.g. http://127.0.0.1:3000: the file goes to
                     URL/-/ingest
  --token-file F     a file of tokens, as the server reads it: the first one is sent
  --json             print the counts as JSON: {"ipos":N,"gmp":M,"subscription":K}

Example:
  ipokit demo-data --out ipos.json && ipokit push ipos.json --url http://127.0.0.1:3000 --token-file token.txt`,
  },
  collect: {
    usage: 'Usage: ipokit collect --sources FILE [--schema S]',
    details: `Runs the sources of FILE on PostgreSQL until SIGTERM or Ctrl-C: each on its schedule, its
answer checked as a dataset is and imported whole or not at all; after a run that changed a
GMP site's numbers, one snapshot per IPO holding every site's latest number (no older than
staleAfterMs). A failing source is tried again after 5 s, doubling, at most its interval;
each failure is a line on stderr. It migrates the schema first, as 'ipokit serve' does.

Any number of 'ipokit collect' and of servers started with --sources may share a database:
each source runs in one process at a time, and the sources' reports and states are in the
database ('ipokit sources' shows them).

FILE is JSON:
  {"staleAfterMs": 21600000, "timeoutMs": 30000,
   "sources": [
     {"type": "upstream", "baseUrl": "https://api.example.com/ipos", "apiKeyFile": "upstream.key",
      "everyMs": 300000, "statuses": ["open", "upcoming"], "includeGmp": true, "subscription": true},
     {"type": "url", "name": "ipowatch", "url": "https://scraper.internal/ipowatch.json",
      "headers": {"authorization": "Bearer ..."}, "everyMs": 60000},
     {"type": "file", "path": "data/today.json", "everyMs": 10000}]}
upstream mirrors another API with this interface within its limits; url fetches a dataset
document (with "gmpReports": [{"ipoId", "gmpPrice"}] allowed); file imports a dataset file
each time it changes. Paths are relative to the current directory.

Options:
  --sources FILE     the sources (IPOKIT_SOURCES)
${DATABASE_OPTIONS}

Example:
  DATABASE_URL=postgres://localhost/ipos ipokit collect --sources sources.json`,
  },
  sources: {
    usage: `Usage: ipokit sources --sources FILE [--json] [--schema S]
       ipokit sources --url URL --token-file F [--json]`,
    details: `Shows each source's status: from PostgreSQL (the sources of FILE, as 'ipokit collect'
runs them), or from a server started with --sources and --ingest-token-file (its
GET /-/sources). Columns: NAME, LAST RUN, LAST SUCCESS, RECORDS (written in all), STALE
(reports older than staleAfterMs), NEXT RUN, LAST ERROR.

Options:
  --sources FILE     the sources file (IPOKIT_SOURCES)
  --url URL          a server's base URL instead, e.g. http://127.0.0.1:3000
  --token-file F     with --url: a file of ingest tokens, the first one is sent
  --json             print the statuses as JSON
${DATABASE_OPTIONS}

Example:
  ipokit sources --url http://127.0.0.1:3000 --token-file token.txt`,
  },
  accounts: {
    usage: `Usage: ipokit accounts create --name NAME --plan free|paid|pro [--gmp-addon] [--json | --quiet] [--schema S]
       ipokit accounts update ID [--plan free|paid|pro] [--gmp-addon | --no-gmp-addon] [--max-keys-per-account N|off] [--config FILE] [--json | --quiet] [--schema S]
       ipokit accounts list [--after ID] [--limit N] [--json | --quiet] [--schema S]
       ipokit accounts show ID [--config FILE] [--json] [--schema S]`,
    details: `Creates an account, or changes its plan or GMP add-on, and prints it; lists the
accounts by id, a page at a time; shows one account with its rate-limit windows as they
stand now (requests used and remaining, when the oldest leaves) and its keys.

Options:
  --name NAME        the account's name
  --plan PLAN        free, paid or pro (the free plan holds one active key)
  --gmp-addon        the GMP add-on (pro only: the GMP series and includeGmp; refused on another plan)
  --no-gmp-addon     update: remove the add-on
  --max-keys-per-account N|off
                     update: the active keys a paid or pro account may hold, as the server
                     applies it (IPOKIT_MAX_KEYS_PER_ACCOUNT, else the config file's; default
                     100): a move to paid or pro with more is refused
  --after ID         list: the accounts after this id (the last one of the page before)
  --limit N          list: at most N accounts, 1 to 1000 (default 100)
  --config FILE      show: the server's config file, for its quotas (also IPOKIT_CONFIG and
                     the IPOKIT_* variables, as ipokit serve reads them); update: for its
                     maxKeysPerAccount
  --json             print the account(s) as JSON
  --quiet, -q        print only the id(s)
${DATABASE_OPTIONS}

Example:
  ACCOUNT=$(ipokit accounts create --name Acme --plan pro --gmp-addon --quiet)`,
  },
  keys: {
    usage: `Usage: ipokit keys create --account ID --label LABEL [--expires WHEN] [--max-keys-per-account N|off] [--config FILE] [--json | --quiet] [--schema S]
       ipokit keys rotate ID [--overlap SECONDS|DURATION] [--max-keys-per-account N|off] [--config FILE] [--json | --quiet] [--schema S]
       ipokit keys list --account ID [--json | --quiet] [--schema S]
       ipokit keys revoke ID [--schema S]`,
    details: `Creates, rotates, lists and revokes API keys.

create prints the new key: the only time it is shown (ipokit keeps its SHA-256 hash).
  With --expires the key is refused from that instant on, like a revoked one.
rotate gives the key ID's account a new key with the same label and expiry (a rotated
  trial key stays a trial key), printed once like create's, and lets the old key work for
  --overlap more (default 1 day), so that its clients can move to the new one; then it
  expires. On the free plan the overlap is the one time an account holds two active keys.
  A revoked or expired key cannot be rotated.
list prints each key's id, prefix, label, when it was created, when it expires, when it was
  last used (to within a minute), the key it was rotated from, and its state: active,
  expired or revoked. Never the key.
revoke stops a key at once here, and in other processes within keyCacheTtlMs (5 s).

Options:
  --account ID       the account (its id, from 'ipokit accounts create')
  --label LABEL      what the key is for, 1 to 100 characters
  --expires WHEN     create: when the key stops working: an ISO-8601 instant with a zone
                     (2026-12-31T18:30:00Z, 2027-01-01T00:00:00+05:30) or a time from now,
                     a whole number of minutes, hours or days (90m, 12h, 30d); default never
  --overlap SECONDS|DURATION
                     rotate: how long the old key keeps working: seconds (3600), or a whole
                     number of s, m, h or d (90m, 1h, 7d); 0 to 7d, default 1d; 0 stops it
                     at once (other servers within 5 s). An old key that expires sooner
                     keeps its own expiry
  --max-keys-per-account N|off
                     create, rotate: the active keys a paid or pro account may hold, as
                     the server applies it (IPOKIT_MAX_KEYS_PER_ACCOUNT, else the config
                     file's maxKeysPerAccount; default 100; off: no cap)
  --config FILE      create, rotate: the server's config file, for its maxKeysPerAccount
                     (also IPOKIT_CONFIG)
  --json             print JSON (rotate: the new key, and oldKey with its id and expiresAt)
  --quiet, -q        create, rotate: print only the key; list: only the ids
${DATABASE_OPTIONS}

Examples:
  KEY=$(ipokit keys create --account "$ACCOUNT" --label "prod server" --quiet)
  ipokit keys create --account "$ACCOUNT" --label "trial" --expires 30d
  NEW_KEY=$(ipokit keys rotate "$KEY_ID" --overlap 1h --quiet)`,
  },
  webhooks: {
    usage: `Usage: ipokit webhooks create --account ID --url URL --events TYPES [--description TEXT] [--webhook-allow-network CIDR]... [--config FILE] [--json | --quiet] [--schema S]
       ipokit webhooks list --account ID [--json | --quiet] [--schema S]
       ipokit webhooks delete ID [--schema S]
       ipokit webhooks deliveries ID [--limit N] [--before DELIVERY_ID] [--json] [--schema S]
       ipokit webhooks replay WEBHOOK_ID DELIVERY_ID [--json | --quiet] [--schema S]
       ipokit webhooks pause|resume|test ID [--json | --quiet] [--schema S]
       ipokit webhooks rotate-secret ID [--overlap-seconds N] [--json | --quiet] [--schema S]`,
    details: `Creates, lists and deletes an account's webhook endpoints, lists their deliveries and
sends one again. An endpoint gets a signed POST (Standard Webhooks: webhook-id,
webhook-timestamp, webhook-signature) for each event of the types it takes:
  ipo.created, ipo.updated, ipo.deleted   an IPO was added, changed or removed
  ipo.status_changed                      an IPO's status changed (by an import, or at an
                                          IST midnight as its dates pass)
  gmp.snapshot                            a GMP snapshot was added or changed
  subscription.snapshot                   a subscription snapshot was added or changed
A worker sends them ('ipokit worker', or 'ipokit serve' unless --no-webhooks); an attempt
that fails is retried 7 times over about 28 hours, and an endpoint failing for 5 days is
disabled.

create makes an endpoint (on the pro plan only) and prints its signing secret: the only time
  it is shown. The receiver checks each delivery's signature with it.
list prints each endpoint's id, URL, event types, state (enabled, or disabled since when it
  was disabled), when it was created and its description. Never the secret.
delete removes an endpoint and its deliveries: nothing more is sent to it.
deliveries prints an endpoint's deliveries, newest first: the event, its type, the state
  (pending, delivered, or failed once out of retries), the attempts made, the last HTTP
  status, when the next attempt is due and the last error.
replay sends a delivery's event to its endpoint again, as a new delivery due now, with the
  same webhook-id (so the receiver can tell it is a repeat).

Options:
  --account ID       the account (its id, from 'ipokit accounts create')
  --url URL          create: where to send, an absolute https: URL (http: is sent to only by
                     a worker run with --allow-insecure-webhooks), on the public internet:
                     loopback, private and link-local addresses, localhost and URLs with
                     user:password@ are refused
  --events TYPES     create: all, or a comma-separated list of the types above
  --description TEXT
                     create: what the endpoint is for, at most 200 characters
  --webhook-allow-network CIDR
                     create: also take URLs in this network (repeatable;
                     IPOKIT_WEBHOOK_ALLOW_NETWORKS, comma-separated), as the server does
  --config FILE      create: the server's config file, for its webhookAllowedNetworks
  --limit N          deliveries: at most N, 1 to 100 (default 20)
  --before ID        deliveries: those older than this delivery (the last one of the page before)
  --json             print JSON (create: the endpoint with its secret)
  --quiet, -q        create: print only the secret; list: only the ids; replay: the new delivery's id
${DATABASE_OPTIONS}

Examples:
  SECRET=$(ipokit webhooks create --account "$ACCOUNT" --url https://example.com/hooks/ipo --events all --quiet)
  ipokit webhooks create --account "$ACCOUNT" --url https://example.com/hooks/gmp --events gmp.snapshot,ipo.status_changed
  ipokit webhooks deliveries "$WEBHOOK" --limit 5
  ipokit webhooks replay "$WEBHOOK" "$DELIVERY"`,
  },
  worker: {
    usage: 'Usage: ipokit worker [--allow-insecure-webhooks] [--concurrency N] [--webhook-allow-network CIDR]... [--config FILE] [--schema S]',
    details: `Delivers the database's webhooks (see 'ipokit webhooks --help') until SIGTERM or Ctrl-C,
then finishes the attempts under way (each within 15 s), records them and exits. It
migrates the schema first, as 'ipokit serve' does.

'ipokit serve' runs the same worker in its own process unless --no-webhooks. Any number of
workers and servers may share a database: each attempt is made by one of them, and one
whose process died is made again when its lease (a minute) runs out.

Options:
  --allow-insecure-webhooks
                     also send to http: URLs, for local receivers and tests
                     (IPOKIT_ALLOW_INSECURE_WEBHOOKS; default off: https: only)
  --concurrency N    attempts in flight at once, 1 to 1000, at most 4 of them to one
                     endpoint (IPOKIT_WEBHOOK_CONCURRENCY; default 64)
  --webhook-allow-network CIDR
                     also send to this network outside the public internet (repeatable;
                     IPOKIT_WEBHOOK_ALLOW_NETWORKS, comma-separated; default none: every
                     address is checked after DNS, and loopback, private and link-local
                     ones fail with 'address not allowed')
  --config FILE      the config file of 'ipokit serve' (IPOKIT_CONFIG): its
                     allowInsecureWebhooks, webhookConcurrency and webhookAllowedNetworks
${DATABASE_OPTIONS}

Example:
  DATABASE_URL=postgres://localhost/ipos ipokit worker --concurrency 16`,
  },
  usage: {
    usage: 'Usage: ipokit usage --account ID [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--key KEY_ID] [--json] [--schema S]',
    details: `Prints an account's usage: per IST day, key and route (list, ipo, gmp), the requests
the rate limiter admitted and those it refused with a 429, counted in the same step that
charged them. Keyless requests and 401s are not counted. On a terminal, a bar per day follows.

Options:
  --account ID       the account
  --from DAY         the first IST day (default: 29 days before --to)
  --to DAY           the last IST day (default: today in India); at most 366 days in all
  --key KEY_ID       only this key's rows
  --json             print the rows as JSON
${DATABASE_OPTIONS}

Example:
  ipokit usage --account "$ACCOUNT" --from 2026-11-01 --to 2026-11-30`,
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
  serve       serve the API (from memory, or from PostgreSQL when DATABASE_URL is set), and deliver webhooks
  migrate     create or upgrade the tables in PostgreSQL
  import      import a dataset JSON file into PostgreSQL (streamed, all or nothing)
  push        send a dataset JSON file to a server's push route (serve --ingest-token-file)
  collect     run sources on a schedule into PostgreSQL, until stopped
  sources     the status of each source: last run, last success, records, stale reports
  accounts    create an account, change its plan, list and show them (accounts create | update | list | show)
  keys        create, rotate, list and revoke API keys (keys create | rotate | list | revoke)
  webhooks    webhook endpoints and their deliveries (webhooks create | list | delete | deliveries | replay)
  worker      deliver the webhooks (PostgreSQL), until stopped
  usage       an account's requests per IST day, key and route, admitted and refused
  demo-data   write the generated demo dataset as JSON

Options:
  -h, --help      show help; 'ipokit <command> --help' for a command's
  -v, --version   print the version

Environment:
  DATABASE_URL    postgres://user:password@host:5432/database, for the PostgreSQL commands
  IPOKIT_SCHEMA   the PostgreSQL schema (default ipokit); --schema overrides it
  PORT, HOST, IPOKIT_*   serve's and worker's settings: see 'ipokit serve --help'

Exit codes: 0 done, 1 failed (bad data, database, a refused change), 2 bad usage.`;

/** The short usage printed after a usage error that names no command. */
export const MAIN_USAGE = `Usage: ipokit <command> [options]   (commands: ${Object.keys(COMMAND_HELP).join(', ')})`;
