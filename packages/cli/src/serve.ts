/**
 * `ipokit serve`, and the same code behind the demo's `npm start`: read the settings
 * (flags, environment, config file), start the server with its connection limits, print
 * where it is (the limits, the OpenAPI document, the health checks, the push route, and the
 * demo keys, once), log each request, and on stop drain: stop accepting connections, finish the
 * requests under way, cut what is still open after the drain deadline.
 */
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { type IpoRouterOptions, type LimitSettings } from '@ipokit/core';
import { resolveOptions } from '@ipokit/core/adapter';
import { formatAccessLog } from './access-log.js';
import { integer, parseOrThrow, takePositionals } from './args.js';
import {
  HEALTH_PATHS,
  loadSettings,
  readConfigFile,
  reportConfigProblems,
  resolveSettings,
  routerOptionsOf,
  settingsFlags,
  settingsJson,
  SETTINGS_FLAGS,
  type FlagValue,
  type Framework,
  type LogFormat,
  type ServeSettings,
} from './config.js';
import { openFilesLimit, openFilesWarning, resolveConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { hasDatabase, openDatabase, schemaOf, type OpenedDatabase } from './database.js';
import { DEFAULT_INGEST_MAX_BYTES, readIngestTokens, SOURCES_PATH } from './ingest.js';
import { collectorErrors } from './collect.js';
import { buildSources, readSourcesFile, type SourcesSettings } from './sources-config.js';
import { CliError, stopped, type CliIo, type Command } from './io.js';
import { startServer, type RunningServer, type ServerRouterOptions } from './server.js';
import { workerOptions, workerText, type WorkerSettings } from './worker.js';

/** Options of {@link serve}. */
export interface ServeOptions {
  port: number;
  /** Default `127.0.0.1`. */
  host?: string;
  framework: Framework;
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
  /** The path the API answers under. Default `/ipos`. */
  mount?: string;
  /** How many proxies in front append to X-Forwarded-For. Default 0. */
  trustProxy?: number;
  /** The router's options; the OpenAPI document is on unless `openapi: false`. */
  router?: ServerRouterOptions;
  /** The access log on stdout: a text line per request (the default), a JSON object per line, or none. */
  log?: LogFormat;
  /** Deliver the store's webhooks from this process too: a worker with these settings. Absent or false: no worker. */
  webhooks?: WorkerSettings | false;
  /** Networks outside the public internet that the dashboard creates endpoints for. Default none. */
  webhookAllowedNetworks?: readonly string[];
  /**
   * Accept pushed datasets at `POST /-/ingest`: the bearer tokens are read from `tokenFile`
   * (relative to the process's directory) at start-up; bodies of at most `maxBytes`
   * (default 16 MiB). Absent: no push route.
   */
  ingest?: { tokenFile: string; maxBytes?: number };
  /**
   * Run a collector in the server (docs/spec.md#sources): a sources file (relative to the
   * process's directory) or the settings themselves. Absent: none.
   */
  sources?: string | SourcesSettings;
  /** With the generated dataset, the demo's simulated live sources run too (`npm start`). Default false. */
  demoLive?: boolean;
  /** Prometheus metrics at `GET /metrics` on this port (and host, default `127.0.0.1`). Absent: none. */
  metrics?: { port: number; host?: string };
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
  const log = options.log ?? 'text';
  // Checked before the database is opened or the dataset loaded: a typo fails at once.
  const limits = resolveConnectionLimits(options.connectionLimits);
  const warning = openFilesWarning(limits.maxConnections, openFilesLimit());
  if (warning !== null) io.stderr.write(`Warning: ${warning}.\n`);
  const ingest =
    options.ingest === undefined
      ? undefined
      : { tokens: await readIngestTokens(options.ingest.tokenFile, io.cwd), maxBytes: options.ingest.maxBytes ?? DEFAULT_INGEST_MAX_BYTES };
  const sourcesSettings = typeof options.sources === 'string' ? await readSourcesFile(options.sources, io.cwd) : options.sources;
  const collector =
    sourcesSettings === undefined
      ? undefined
      : {
          sources: await buildSources(sourcesSettings, io.cwd),
          ...(sourcesSettings.staleAfterMs === undefined ? {} : { staleAfterMs: sourcesSettings.staleAfterMs }),
          ...(sourcesSettings.timeoutMs === undefined ? {} : { timeoutMs: sourcesSettings.timeoutMs }),
        };
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
    ...(options.mount === undefined ? {} : { mount: options.mount }),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.router === undefined ? {} : { router: options.router }),
    ...(log === 'off' ? {} : { accessLog: (entry) => void io.stdout.write(`${formatAccessLog(entry, log)}\n`) }),
    ...(options.webhooks ? { webhookWorker: workerOptions(options.webhooks, io) } : {}),
    ...(options.webhookAllowedNetworks === undefined ? {} : { webhookAllowedNetworks: options.webhookAllowedNetworks }),
    ...(ingest === undefined ? {} : { ingest }),
    ...(collector === undefined && options.demoLive !== true ? {} : { collector: { sources: [], ...collector, onError: collectorErrors(io) } }),
    ...(options.demoLive === true ? { demoLive: true } : {}),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  printBanner(running, options, title, opened, io);
  await stopped(io.signal);
  io.stderr.write(
    `Stopping: finishing the requests under way (connections still open after ${options.drainMs} ms are cut).${running.worker === null ? '' : ' Webhook attempts under way finish too.'}\n`,
  );
  await drain(running, options.drainMs);
  return 0;
}

/**
 * `ipokit serve`: its settings from flags, the environment and `--config FILE` (see
 * {@link resolveSettings}), `--print-config` to print them and exit, and `--dataset FILE`,
 * `--demo-keys`, `--schema S`.
 *
 * @example
 * ```ts
 * await serveCommand(['--framework', 'koa', '--port', '0', '--limit', 'free.perMinute=10'], { ...io, signal });
 * ```
 */
export const serveCommand: Command = (argv, io) => runServe(argv, io, { who: 'ipokit serve' });

/** How {@link runServe} serves: as `ipokit serve`, or with the demo's defaults. */
export interface ServeProfile {
  /** How messages name the command: `ipokit serve`, `ipokit demo`. */
  who: string;
  /** The banner's first word. Default `ipokit`. */
  title?: string;
  /** Always create the demo keys (the demo). */
  demoKeys?: boolean;
  /** PostgreSQL: import the generated dataset into a database that holds no IPO (the demo). */
  seedEmptyDatabase?: boolean;
  /** A variable that names a dataset file when `--dataset` is not given (the demo's `IPOKIT_DATASET`). */
  datasetEnv?: string;
  /** With the generated dataset, run the demo's simulated live sources (the demo). */
  demoLive?: boolean;
  /**
   * Rate limits per plan under the user's settings (the demo's tiers): a window that
   * `--limit` or the config file sets is theirs, every other one is this, else the default.
   */
  limits?: NonNullable<IpoRouterOptions['limits']>;
}

/**
 * Parses the arguments of `ipokit serve` (or of `npm start`), resolves the settings, and
 * serves (or, with `--print-config`, prints the settings as JSON and resolves to 0). A
 * config file with problems is reported here, every problem on its own line, and resolves
 * to 2; other usage errors throw a `CliError` for the caller to report.
 *
 * @example
 * ```ts
 * const code = await runServe(['--print-config'], io, { who: 'ipokit serve' }); // 0, the settings on stdout
 * ```
 */
export async function runServe(argv: readonly string[], io: CliIo, profile: ServeProfile): Promise<number> {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { ...SETTINGS_FLAGS, dataset: { type: 'string' }, 'demo-keys': { type: 'boolean' }, schema: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  takePositionals(positionals, []);
  if (values.dataset === '') throw new CliError('--dataset must not be empty');
  let settings: ServeSettings;
  try {
    settings = profile.limits === undefined ? await loadSettings(values.config, settingsFlags(values), io) : await loadSettingsOver(profile.limits, values.config, settingsFlags(values), io);
  } catch (err) {
    return reportConfigProblems(err, `${profile.who}: config file`, 'nothing was served', io);
  }
  if (values['print-config'] === true) {
    io.stdout.write(settingsJson(settings));
    return 0;
  }
  const datasetFromEnv = profile.datasetEnv === undefined ? undefined : io.env[profile.datasetEnv] || undefined;
  const datasetFile = values.dataset ?? datasetFromEnv;
  return serve(
    {
      port: settings.port,
      host: settings.host,
      framework: settings.framework,
      mount: settings.mount,
      trustProxy: settings.trustProxy,
      log: settings.log,
      router: routerOptionsOf(settings),
      demoKeys: profile.demoKeys === true || values['demo-keys'] === true,
      drainMs: settings.drainMs,
      connectionLimits: settings.connections,
      webhooks: settings.webhooks ? { allowInsecure: settings.allowInsecureWebhooks, concurrency: settings.webhookConcurrency, allowedNetworks: settings.webhookAllowedNetworks } : false,
      webhookAllowedNetworks: settings.webhookAllowedNetworks,
      ...(settings.ingest.tokenFile === null ? {} : { ingest: { tokenFile: settings.ingest.tokenFile, maxBytes: settings.ingest.maxBytes } }),
      ...(settings.sources === null ? {} : { sources: settings.sources }),
      ...(settings.metrics.port === null ? {} : { metrics: { port: settings.metrics.port, host: settings.metrics.host } }),
      ...(profile.demoLive === true ? { demoLive: true } : {}),
      ...(profile.title === undefined ? {} : { title: profile.title }),
      ...(profile.seedEmptyDatabase === undefined ? {} : { seedEmptyDatabase: profile.seedEmptyDatabase }),
      ...(datasetFile === undefined ? {} : { datasetFile }),
      ...(values.dataset === undefined && datasetFromEnv !== undefined ? { datasetLabel: `${profile.datasetEnv} file` } : {}),
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    },
    io,
  );
}

/**
 * The settings as {@link loadSettings} reads them, with `limits` as a layer between the
 * defaults and the config file: the file's limits are merged over them window by window, and
 * `--limit` wins over both (the limits have no environment variables). A file whose `limits`
 * are not objects is left as it is, so that its problems are reported as before.
 */
async function loadSettingsOver(limits: NonNullable<IpoRouterOptions['limits']>, config: string | undefined, flags: readonly FlagValue[], io: CliIo): Promise<ServeSettings> {
  if (config === '') throw new CliError('--config must not be empty');
  const name = config ?? (io.env.IPOKIT_CONFIG || undefined);
  const file = name === undefined ? { name: 'the defaults', json: {} } : await readConfigFile(name, io.cwd);
  return resolveSettings({ flags, env: io.env, file: { name: file.name, json: mergedUnder({ limits }, file.json) } });
}

/** `over` with what `under` has that `over` does not, object by object (anything else in `over` wins as it is). */
function mergedUnder(under: unknown, over: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(under) || !isObject(over)) return over;
  const merged: Record<string, unknown> = { ...under };
  for (const [key, value] of Object.entries(over)) merged[key] = Object.hasOwn(under, key) ? mergedUnder(under[key], value) : value;
  return merged;
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

/** How the banner names each framework. */
const FRAMEWORK_NAMES: Readonly<Record<Framework, string>> = { node: 'node:http', express: 'Express', koa: 'Koa' };

function printBanner(running: RunningServer, options: ServeOptions, title: string, db: OpenedDatabase | undefined, io: CliIo): void {
  // One write: whoever reads the output sees the whole banner at once.
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  const what =
    running.source === 'file' ? options.datasetFile : running.source === 'generated' ? 'a generated dataset' : `the ${running.ipoCount} IPOs already stored`;
  const from = db === undefined ? 'memory' : `PostgreSQL at ${db.where} (schema ${db.schema})`;
  out(`${title} serving ${what} from ${from} with ${FRAMEWORK_NAMES[options.framework]} at ${running.url}${running.mount}`);
  out(limitsLine(running));
  const openapi = running.openapiUrl === null ? 'off (--openapi turns it on)' : running.openapiUrl;
  out(`OpenAPI document: ${openapi}; health: ${running.url}${HEALTH_PATHS.live}, ${running.url}${HEALTH_PATHS.ready}`);
  const log = options.log ?? 'text';
  const proxies = options.trustProxy ?? 0;
  const addresses = proxies === 0 ? 'client addresses from the connection' : `client addresses from X-Forwarded-For, ${proxies} prox${proxies === 1 ? 'y' : 'ies'} in front`;
  out(`Access log: ${log === 'off' ? 'off' : `${log === 'json' ? 'a JSON object' : 'a line'} per request on stdout`}; ${addresses}.`);
  if (options.webhooks) out(`Webhooks: delivered from this process, ${workerText(options.webhooks)}.`);
  else out(`Webhooks: off (--webhooks turns them on)${db === undefined ? '' : ": run 'ipokit worker' to deliver them"}.`);
  if (running.ingestUrl !== null && options.ingest !== undefined) {
    out(`Push: POST ${running.ingestUrl} with a bearer token of ${options.ingest.tokenFile}, bodies up to ${options.ingest.maxBytes ?? DEFAULT_INGEST_MAX_BYTES} bytes ('ipokit push FILE' sends one).`);
  }
  out(running.metricsUrl === null ? 'Metrics: off (--metrics-port N serves them).' : `Metrics: ${running.metricsUrl} (Prometheus text).`);
  if (running.collector !== null) {
    const names = running.collector.status().map((s) => s.name);
    const status = running.ingestUrl === null ? '' : `; status: GET ${running.url}${SOURCES_PATH} with an ingest token ('ipokit sources --url')`;
    out(`Sources: ${names.length} running in this process (${names.join(', ')})${status}.`);
    if (options.demoLive === true && running.source === 'generated') {
      out('  The demo\'s live sources move GMP (09:15-15:30 IST) and the open issues\' subscription (10:00-17:00 IST) on weekdays.');
    }
  }
  if (db !== undefined && running.ipoCount === 0) io.stderr.write("The database holds no IPO yet: load a dataset with 'ipokit import <file>' (or serve --dataset <file>).\n");
  out();
  if (running.keys !== null) {
    out(`API keys (shown once; ${quotaText(resolveOptions(options.router ?? {}).limits)}):`);
    out(`  free  ${running.keys.free}`);
    out(`  paid  ${running.keys.paid}`);
    out(`  pro   ${running.keys.pro}   (with the GMP add-on)`);
    if (running.dashboardUrl !== null) {
      out(`Account dashboard: ${running.dashboardUrl} (signs this browser in as the demo pro account; ?plan=free or paid for the others)`);
    }
  } else {
    out("No demo key was created (--demo-keys makes one per plan). Use your own, from 'ipokit keys create':");
    out('  export KEY=ipk_...');
  }
  out('');
  out('Try:');
  for (const c of running.curls) out(`  ${c}`);
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** `limits: 6 requests/min, GMP 3/min` (with /hour and /day where those windows are on), or per plan when they differ. */
function quotaText(limits: LimitSettings): string {
  const n = (quota: number) => (quota === Infinity ? 'unlimited' : String(quota));
  const more = (quota: number, per: string) => (quota === Infinity ? '' : ` + ${quota}/${per}`);
  const plan = (p: 'free' | 'paid' | 'pro') => {
    const q = limits[p];
    return `${n(q.perMinute)} requests/min${more(q.perHour, 'hour')}${more(q.perDay, 'IST day')}, GMP ${n(q.gmpPerMinute)}/min${more(q.gmpPerDay, 'IST day')}`;
  };
  const all = new Set([plan('free'), plan('paid'), plan('pro')]);
  return all.size === 1 ? `limits: ${plan('free')}` : `limits: free ${plan('free')}; paid ${plan('paid')}; pro ${plan('pro')}`;
}

/** What the server applied, read back from it: `Connections: at most 1000, each closed after 30 s without traffic; timeouts: ...`. */
function limitsLine({ server }: RunningServer): string {
  const time = (ms: number) => (ms === 0 ? 'off' : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
  const idle = server.timeout === 0 ? 'never closed for lack of traffic' : `each closed after ${time(server.timeout)} without traffic`;
  return `Connections: at most ${server.maxConnections}, ${idle}; timeouts: headers ${time(server.headersTimeout)}, request ${time(server.requestTimeout)}, keep-alive ${time(server.keepAliveTimeout)}.`;
}

/**
 * Stops accepting connections; requests under way finish, keep-alive connections close as
 * soon as they are idle. Connections still open after `drainMs` (a stuck client, one that
 * never sent a request) are cut. Then the store and the database are freed.
 */
async function drain(running: RunningServer, drainMs: number): Promise<void> {
  const { server } = running;
  // The webhook worker stops claiming now and finishes its attempts meanwhile.
  const delivering = running.worker?.stop();
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
  await delivering;
  await running.close();
}
