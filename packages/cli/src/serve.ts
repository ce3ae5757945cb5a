/**
 * `ipokit serve`, and the same code behind the demo's `npm start`: start the server with its
 * connection limits, print where it is (the limits, and the demo keys, once), and on stop
 * drain: stop accepting connections, finish the requests under way, cut what is still open
 * after the drain deadline.
 */
import { resolve } from 'node:path';
import { inspect, parseArgs } from 'node:util';
import { integer, oneOf, parseOrThrow, takePositionals } from './args.js';
import { MAX_CONNECTIONS, MAX_TIMEOUT_MS, openFilesLimit, openFilesWarning, resolveConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { hasDatabase, openDatabase, schemaOf, type OpenedDatabase } from './database.js';
import { CliError, type CliIo, type Command } from './io.js';
import { startServer, type RunningServer } from './server.js';

/** Options of {@link serve}. */
export interface ServeOptions {
  port: number;
  /** Default `127.0.0.1`. */
  host?: string;
  framework: 'express' | 'koa';
  /** An absolute path, or relative to the process's directory. */
  datasetFile?: string;
  /** How messages name the file. Default `dataset file`. */
  datasetLabel?: string;
  /** PostgreSQL schema (used when there is a database). Default `IPOKIT_SCHEMA`, else `ipokit`. */
  schema?: string;
  /** PostgreSQL: create one demo account and key per plan (memory always does). */
  demoKeys: boolean;
  /** PostgreSQL: import the generated dataset into a database that holds no IPO. */
  seedEmptyDatabase?: boolean;
  /** How long requests under way may take to finish once stopping. */
  drainMs: number;
  /** The first word of the banner: `ipokit`, `ipokit demo`. */
  title?: string;
  /** The router's clock. */
  now?: () => Date;
  /** Timeouts and the most connections at once; each one not given has its default (see {@link ConnectionLimits}). */
  connectionLimits?: Partial<ConnectionLimits>;
}

/**
 * Serves until `io.signal` aborts, then drains and resolves to 0. PostgreSQL when
 * `io.openDatabase` or `DATABASE_URL` is there, else memory. Start-up failures reject (the
 * caller reports them).
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * const done = serve({ port: 0, framework: 'koa', demoKeys: false, drainMs: 10_000 }, { ...io, signal: stop.signal });
 * // ... later
 * stop.abort();
 * await done; // 0
 * ```
 */
export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const title = options.title ?? 'ipokit';
  // Checked before the database is opened or the dataset loaded: a typo fails at once.
  const limits = resolveConnectionLimits(options.connectionLimits);
  const warning = openFilesWarning(limits.maxConnections, openFilesLimit());
  if (warning !== null) io.stderr.write(`Warning: ${warning}.\n`);
  let opened: OpenedDatabase | undefined;
  if (hasDatabase(io)) opened = await openDatabase(io, schemaOf(options.schema, io));
  const running = await startServer({
    port: options.port,
    framework: options.framework,
    // In memory the demo keys are the only keys there can be.
    demoKeys: options.demoKeys || opened === undefined,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.datasetFile === undefined ? {} : { datasetFile: resolve(io.cwd, options.datasetFile) }),
    ...(options.datasetLabel === undefined ? {} : { datasetLabel: options.datasetLabel }),
    ...(opened === undefined ? {} : { database: opened }),
    ...(options.seedEmptyDatabase === undefined ? {} : { seedEmptyDatabase: options.seedEmptyDatabase }),
    ...(options.now === undefined ? {} : { now: options.now }),
    connectionLimits: limits,
    onError: (err) => io.stderr.write(`${new Date().toISOString()} ${inspect(err)}\n`),
  });
  printBanner(running, options, title, opened, io);
  await stopped(io.signal);
  io.stderr.write(`Stopping: finishing the requests under way (connections still open after ${options.drainMs} ms are cut).\n`);
  await drain(running, options.drainMs);
  return 0;
}

/**
 * `ipokit serve [--framework express|koa] [--port N] [--host H] [--dataset FILE] [--demo-keys] [--schema S]`
 * and the connection limits: `[--headers-timeout-ms N] [--request-timeout-ms N] [--keep-alive-timeout-ms N]
 * [--idle-timeout-ms N] [--max-connections N]`.
 *
 * @example
 * ```ts
 * await serveCommand(['--framework', 'koa', '--port', '0'], { ...io, signal });
 * ```
 */
export const serveCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: {
        framework: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        dataset: { type: 'string' },
        'demo-keys': { type: 'boolean' },
        schema: { type: 'string' },
        'headers-timeout-ms': { type: 'string' },
        'request-timeout-ms': { type: 'string' },
        'keep-alive-timeout-ms': { type: 'string' },
        'idle-timeout-ms': { type: 'string' },
        'max-connections': { type: 'string' },
      },
      strict: true,
      allowPositionals: true,
    }),
  );
  takePositionals(positionals, []);
  const framework =
    values.framework !== undefined
      ? oneOf('--framework', values.framework, ['express', 'koa'] as const)
      : oneOf('IPOKIT_FRAMEWORK', (io.env.IPOKIT_FRAMEWORK || 'express').toLowerCase(), ['express', 'koa'] as const);
  const port = values.port !== undefined ? integer('--port', values.port, 0, 65535) : integer('PORT', io.env.PORT || '3000', 0, 65535);
  if (values.host === '') throw new CliError('--host must not be empty');
  if (values.dataset === '') throw new CliError('--dataset must not be empty');
  const connectionLimits = limitsOf({
    headersTimeoutMs: values['headers-timeout-ms'],
    requestTimeoutMs: values['request-timeout-ms'],
    keepAliveTimeoutMs: values['keep-alive-timeout-ms'],
    idleTimeoutMs: values['idle-timeout-ms'],
    maxConnections: values['max-connections'],
  });
  return serve(
    {
      port,
      framework,
      demoKeys: values['demo-keys'] ?? false,
      drainMs: drainMsOf(io),
      connectionLimits,
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(values.dataset === undefined ? {} : { datasetFile: values.dataset }),
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    },
    io,
  );
};

/** The flag of each connection limit. */
const LIMIT_FLAGS: Readonly<Record<keyof ConnectionLimits, string>> = {
  headersTimeoutMs: '--headers-timeout-ms',
  requestTimeoutMs: '--request-timeout-ms',
  keepAliveTimeoutMs: '--keep-alive-timeout-ms',
  idleTimeoutMs: '--idle-timeout-ms',
  maxConnections: '--max-connections',
};

/** The limits given as flags, each a whole number; contradictions are usage errors that name the flags. */
function limitsOf(flags: Record<keyof ConnectionLimits, string | undefined>): Partial<ConnectionLimits> {
  const given: Partial<ConnectionLimits> = {};
  for (const key of Object.keys(LIMIT_FLAGS) as Array<keyof ConnectionLimits>) {
    const value = flags[key];
    if (value === undefined) continue;
    given[key] = key === 'maxConnections' ? integer(LIMIT_FLAGS[key], value, 1, MAX_CONNECTIONS) : integer(LIMIT_FLAGS[key], value, 0, MAX_TIMEOUT_MS);
  }
  try {
    resolveConnectionLimits(given, { openFiles: null, nameOf: (key) => LIMIT_FLAGS[key] });
  } catch (err) {
    if (err instanceof RangeError) throw new CliError(err.message);
    throw err;
  }
  return given;
}

/**
 * `IPOKIT_DRAIN_MS` (default 10,000): how long a stopping server waits for requests under way.
 *
 * @example
 * ```ts
 * drainMsOf({ ...io, env: { IPOKIT_DRAIN_MS: '2000' } }); // 2000
 * ```
 */
export function drainMsOf(io: CliIo): number {
  return integer('IPOKIT_DRAIN_MS', io.env.IPOKIT_DRAIN_MS || '10000', 0, 2_147_483_647);
}

function printBanner(running: RunningServer, options: ServeOptions, title: string, db: OpenedDatabase | undefined, io: CliIo): void {
  // One write: whoever reads the output sees the whole banner at once.
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  const what =
    running.source === 'file' ? options.datasetFile : running.source === 'generated' ? 'a generated dataset' : `the ${running.ipoCount} IPOs already stored`;
  const from = db === undefined ? 'memory' : `PostgreSQL at ${db.where} (schema ${db.schema})`;
  out(`${title} serving ${what} from ${from} with ${options.framework === 'koa' ? 'Koa' : 'Express'} at ${running.url}/ipos`);
  out(limitsLine(running));
  if (db !== undefined && running.ipoCount === 0) io.stderr.write("The database holds no IPO yet: load a dataset with 'ipokit import <file>' (or serve --dataset <file>).\n");
  out();
  if (running.keys !== null) {
    out('API keys (shown once; default limits: 6 requests/min, GMP 3/min):');
    out(`  free  ${running.keys.free}`);
    out(`  paid  ${running.keys.paid}`);
    out(`  pro   ${running.keys.pro}   (with the GMP add-on)`);
  } else {
    out("No demo key was created (--demo-keys makes one per plan). Use your own, from 'ipokit keys create':");
    out('  export KEY=ipk_...');
  }
  out('');
  out('Try:');
  for (const c of running.curls) out(`  ${c}`);
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** What the server applied, read back from it: `Connections: at most 1000, each closed after 30 s without traffic; timeouts: ...`. */
function limitsLine({ server }: RunningServer): string {
  const time = (ms: number) => (ms === 0 ? 'off' : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
  const idle = server.timeout === 0 ? 'never closed for lack of traffic' : `each closed after ${time(server.timeout)} without traffic`;
  return `Connections: at most ${server.maxConnections}, ${idle}; timeouts: headers ${time(server.headersTimeout)}, request ${time(server.requestTimeout)}, keep-alive ${time(server.keepAliveTimeout)}.`;
}

/** Resolves when the signal aborts; never without one (the process ends the server). */
function stopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * Stops accepting connections; requests under way finish, keep-alive connections close as
 * soon as they are idle. Connections still open after `drainMs` (a stuck client, one that
 * never sent a request) are cut. Then the store and the database are freed.
 */
async function drain(running: RunningServer, drainMs: number): Promise<void> {
  const { server } = running;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
  await running.close();
}
