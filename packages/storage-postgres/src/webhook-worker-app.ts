/**
 * One webhook worker process (not published), for webhook-processes.test.ts and the
 * webhooks phase of `npm run faults` (scripts/faults.ts): its own pg.Pool on DATABASE_URL,
 * a postgresStore, and `startWebhookWorker` sending through `nodeWebhookTransport()` with
 * `allowInsecureWebhooks` (the receivers are local `http:` servers). Settings come from the
 * environment, each optional:
 *
 *   IPOKIT_SCHEMA                 the schema (default `ipokit`)
 *   IPOKIT_LEASE_MS, IPOKIT_TIMEOUT_MS, IPOKIT_POLL_MS, IPOKIT_STATUS_CHECK_MS
 *                                 leaseMs, timeoutMs, pollIntervalMs, statusCheckIntervalMs
 *   IPOKIT_CLOCK_OFFSET_MS        the worker's clock runs this far ahead of the system's
 *   IPOKIT_WORKER_NAME            sent with every request as `x-ipokit-test-worker`, so that
 *                                 a receiver can tell which process made an attempt
 *   IPOKIT_QUIET_ERRORS=1         store failures are counted, not printed (a database that is
 *                                 stopped on purpose makes many)
 *
 * It prints one line, `ready <its clock, epoch ms>`, once the worker has started and its
 * LISTEN has been tried (so a write made after the line wakes it at once). On SIGTERM it
 * stops the worker (the attempts in flight end and are settled), closes its pool and exits 0.
 * An unhandled rejection or an uncaught exception is a crash: a line on stderr and exit 70,
 * which the parent sees as a nonzero exit. Over IPC (when there is a channel) it answers
 * `stats` with {@link WorkerAppStats}, and it exits when its parent goes away.
 */
import pg from 'pg';
import { startWebhookWorker, type WebhookTransport } from '@ipokit/webhooks';
import { nodeWebhookTransport } from '@ipokit/webhooks/node';
import { postgresStore } from './postgres-store.js';

/** What the process answers to `stats`. */
export interface WorkerAppStats {
  /** Failures of the store the worker reported (it goes on after each). */
  storeErrors: number;
  /** Errors the pool emitted for idle connections the server dropped. */
  poolErrors: number;
  /** Attempts made (answered or not). */
  attempts: number;
}

const name = process.env.IPOKIT_WORKER_NAME ?? `worker-${process.pid}`;
const crash = (what: string) => (err: unknown) => {
  process.stderr.write(`webhook worker ${name}: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(70);
};
process.on('unhandledRejection', crash('unhandled rejection'));
process.on('uncaughtException', crash('uncaught exception'));

/** A whole number of the environment, or undefined (the worker's default) when unset. */
function setting(key: string): number | undefined {
  const raw = process.env[key];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${key} must be a whole number, got ${JSON.stringify(raw)}`);
  return n;
}

const stats: WorkerAppStats = { storeErrors: 0, poolErrors: 0, attempts: 0 };
const quiet = process.env.IPOKIT_QUIET_ERRORS === '1';
// (a short connect timeout: a database that is down answers nothing rather than refusing,
// behind some proxies, and the worker must go on polling instead of waiting without end)
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, connectionTimeoutMillis: 5_000 });
// An idle connection the server drops must not take the process down: an app does the same.
pool.on('error', () => void stats.poolErrors++);
const store = postgresStore({ client: pool, schema: process.env.IPOKIT_SCHEMA ?? 'ipokit' });

let listened!: () => void;
const listening = new Promise<void>((resolve) => (listened = resolve));
// The store as the worker sees it, but saying when its LISTEN has been tried (resolved or
// not: without it the worker polls), which is when this process is ready.
const watched: typeof store = {
  ...store,
  watchDeliveries: async (wake) => {
    try {
      return await store.watchDeliveries!(wake);
    } finally {
      listened();
    }
  },
};

// (the receivers are local: loopback opened explicitly, docs/spec.md#webhooks)
const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const node = nodeWebhookTransport({ allowedNetworks: LOOPBACK });
const transport: WebhookTransport = (request) => {
  stats.attempts++;
  return node({ ...request, headers: { ...request.headers, 'x-ipokit-test-worker': name } });
};
const offset = setting('IPOKIT_CLOCK_OFFSET_MS') ?? 0;
const now = (): Date => new Date(Date.now() + offset);
const optional = (key: string, option: string): Record<string, number> => {
  const value = setting(key);
  return value === undefined ? {} : { [option]: value };
};

const worker = startWebhookWorker(watched, {
  now,
  allowInsecureWebhooks: true,
  webhookAllowedNetworks: LOOPBACK,
  transport,
  ...optional('IPOKIT_LEASE_MS', 'leaseMs'),
  ...optional('IPOKIT_TIMEOUT_MS', 'timeoutMs'),
  ...optional('IPOKIT_POLL_MS', 'pollIntervalMs'),
  ...optional('IPOKIT_STATUS_CHECK_MS', 'statusCheckIntervalMs'),
  onError: (err) => {
    stats.storeErrors++;
    if (!quiet) process.stderr.write(`webhook worker ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
  },
});

await listening;
process.stdout.write(`ready ${now().getTime()}\n`);

process.on('message', (m: unknown) => {
  if (m === 'stats') process.send?.(stats);
});
// The process that started this one is gone (killed, crashed): do not outlive it.
process.on('disconnect', () => process.exit(0));
process.once('SIGTERM', () => {
  void (async () => {
    await worker.stop();
    node.close();
    await store.close?.();
    await pool.end();
    process.exit(0);
  })().catch(crash('stopping'));
});
