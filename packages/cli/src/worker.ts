/**
 * `ipokit worker`: delivers the webhooks of the database (docs/spec.md#webhooks) until
 * SIGTERM or Ctrl-C, then finishes the attempts under way. `ipokit serve` runs the same
 * worker in its own process unless told not to (`--no-webhooks`); any number of workers
 * may share a database.
 */
import { isIpokitError, type WebhookStore } from '@ipokit/core';
import { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from '@ipokit/webhooks';
import { nodeWebhookTransport } from '@ipokit/webhooks/node';
import { migrate } from '@ipokit/storage-postgres';
import { parseOrThrow, takePositionals } from './args.js';
import { loadSettings, reportConfigProblems, type FlagValue, type ServeSettings } from './config.js';
import { openDatabase, schemaOf, storeOf } from './database.js';
import { stopped, type CliIo, type Command } from './io.js';
import { describeCause } from './report.js';

/** How a webhook worker of the CLI runs: the settings `ipokit worker` and `ipokit serve` share. */
export interface WorkerSettings {
  /** Also send to `http:` URLs (`--allow-insecure-webhooks`); else `https:` only. */
  allowInsecure: boolean;
  /** Delivery attempts in flight at once, over all endpoints. */
  concurrency: number;
  /** Networks outside the public internet sent to (`--webhook-allow-network`); default none. */
  allowedNetworks?: readonly string[];
}

/**
 * The options of `startWebhookWorker` for the CLI's settings: each failure of the store is a
 * line on stderr (`2026-11-24T09:14:05.120Z webhook worker: ...`), and the worker goes on.
 *
 * @example
 * ```ts
 * const worker = startWebhookWorker(store, workerOptions({ allowInsecure: false, concurrency: 64 }, io));
 * ```
 */
export function workerOptions(settings: WorkerSettings, io: CliIo): Omit<WebhookWorkerOptions, 'now'> {
  return {
    allowInsecureWebhooks: settings.allowInsecure,
    concurrency: settings.concurrency,
    ...(settings.allowedNetworks === undefined || settings.allowedNetworks.length === 0 ? {} : { webhookAllowedNetworks: settings.allowedNetworks }),
    onError: (err) => void io.stderr.write(`${new Date().toISOString()} webhook worker: ${workerFailure(err)}\n`),
  };
}

/**
 * What a worker sends to, and how many at once, as the start-up lines print it.
 *
 * @example
 * ```ts
 * workerText({ allowInsecure: false, concurrency: 64 });
 * // 'up to 64 attempts at once, to https: URLs only (--allow-insecure-webhooks allows http:)'
 * ```
 */
export function workerText(settings: WorkerSettings): string {
  const to = settings.allowInsecure ? 'to http: and https: URLs (--allow-insecure-webhooks)' : 'to https: URLs only (--allow-insecure-webhooks allows http:)';
  return `up to ${settings.concurrency} attempt${settings.concurrency === 1 ? '' : 's'} at once, ${to}`;
}

/**
 * Starts a webhook worker that sends through undici on Node (`nodeWebhookTransport`,
 * connections kept alive between attempts) unless `options` give a transport; its `stop()`
 * drains the worker, then closes the idle connections. Stopping more than once is fine.
 *
 * @example
 * ```ts
 * const worker = startNodeWorker(store, workerOptions({ allowInsecure: false, concurrency: 64 }, io));
 * // on SIGTERM
 * await worker.stop();
 * ```
 */
export function startNodeWorker(store: WebhookStore, options: WebhookWorkerOptions): WebhookWorker {
  const own = options.transport === undefined ? nodeWebhookTransport(options.webhookAllowedNetworks === undefined ? {} : { allowedNetworks: options.webhookAllowedNetworks }) : undefined;
  let worker: WebhookWorker;
  try {
    worker = startWebhookWorker(store, own === undefined ? options : { ...options, transport: own });
  } catch (err) {
    own?.close();
    throw err;
  }
  return {
    async stop(): Promise<void> {
      await worker.stop();
      own?.close();
    },
  };
}

/** A failure of the store as one line: the core's message and its cause, or the driver's error. */
function workerFailure(err: unknown): string {
  if (isIpokitError(err)) {
    const message = err.message.replace('run migrate(client) first', "run 'ipokit migrate' first");
    return `${message}${err.cause === undefined ? '' : `: ${describeCause(err.cause)}`}`.replace(/\r?\n/g, ' ');
  }
  return describeCause(err);
}

const OPTIONS = {
  config: { type: 'string' },
  'allow-insecure-webhooks': { type: 'boolean' },
  concurrency: { type: 'string' },
  'webhook-allow-network': { type: 'string', multiple: true },
  schema: { type: 'string' },
} as const;

/**
 * `ipokit worker [--allow-insecure-webhooks] [--concurrency N] [--webhook-allow-network CIDR]... [--config FILE] [--schema S]`:
 * migrates the schema (as `ipokit serve` does), then delivers its webhooks until `io.signal`
 * aborts; then the attempts under way finish and are recorded, and it resolves to 0. The
 * settings come from the flags, else `IPOKIT_ALLOW_INSECURE_WEBHOOKS` and
 * `IPOKIT_WEBHOOK_CONCURRENCY`, else the config file's `allowInsecureWebhooks` and
 * `webhookConcurrency`, as `ipokit serve` reads them.
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * const done = workerCommand(['--concurrency', '16'], { ...io, signal: stop.signal });
 * // ... later
 * stop.abort();
 * await done; // 0
 * ```
 */
export const workerCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  const flags: FlagValue[] = [];
  if (values['allow-insecure-webhooks'] === true) flags.push({ path: 'allowInsecureWebhooks', label: '--allow-insecure-webhooks', text: 'true' });
  if (values.concurrency !== undefined) flags.push({ path: 'webhookConcurrency', label: '--concurrency', text: values.concurrency });
  const networks = values['webhook-allow-network'] ?? [];
  if (networks.length > 0) flags.push({ path: 'webhookAllowedNetworks', label: '--webhook-allow-network', text: networks.join(',') });
  let settings: ServeSettings;
  try {
    settings = await loadSettings(values.config, flags, io);
  } catch (err) {
    return reportConfigProblems(err, 'ipokit worker: config file', 'nothing was started', io);
  }
  const worker: WorkerSettings = { allowInsecure: settings.allowInsecureWebhooks, concurrency: settings.webhookConcurrency, allowedNetworks: settings.webhookAllowedNetworks };
  const db = await openDatabase(io, schemaOf(values.schema, io));
  try {
    await migrate(db.client, { schema: db.schema });
    const store = storeOf(db);
    try {
      const running = startNodeWorker(store, workerOptions(worker, io));
      io.stdout.write(`ipokit worker delivering webhooks from PostgreSQL at ${db.where} (schema ${db.schema}): ${workerText(worker)}.\n`);
      await stopped(io.signal);
      await running.stop();
      io.stdout.write('ipokit worker stopped: the attempts under way finished and were recorded.\n');
    } finally {
      await store.close?.();
    }
  } finally {
    await db.close();
  }
  return 0;
};
