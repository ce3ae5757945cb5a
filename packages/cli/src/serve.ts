/**
 * `ipokit serve`, and the same code behind the demo's `npm start`: start the server, print
 * where it is (and the demo keys, once), and on stop drain: stop accepting connections,
 * finish the requests under way, cut what is still open after the drain deadline.
 */
import { resolve } from 'node:path';
import { inspect, parseArgs } from 'node:util';
import { integer, oneOf, parseOrThrow, takePositionals } from './args.js';
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
    onError: (err) => io.stderr.write(`${new Date().toISOString()} ${inspect(err)}\n`),
  });
  printBanner(running, options, title, opened, io);
  await stopped(io.signal);
  io.stderr.write(`Stopping: finishing the requests under way (connections still open after ${options.drainMs} ms are cut).\n`);
  await drain(running, options.drainMs);
  return 0;
}

/**
 * `ipokit serve [--framework express|koa] [--port N] [--host H] [--dataset FILE] [--demo-keys] [--schema S]`.
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
  return serve(
    {
      port,
      framework,
      demoKeys: values['demo-keys'] ?? false,
      drainMs: drainMsOf(io),
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(values.dataset === undefined ? {} : { datasetFile: values.dataset }),
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    },
    io,
  );
};

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
