/**
 * The server's Prometheus metrics (docs/spec.md#metrics): a registry of its own (two servers
 * in one process do not clash), fed by the router's `onResponse` and `onStoreCall` hooks and
 * the webhook worker's `onAttempt`, and served by a separate node:http listener at
 * `GET /metrics`, outside the API's port and mount.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { IpoRouterOptions, ResponseInfo, StoreCallInfo } from '@ipokit/core';
import type { WebhookWorkerOptions } from '@ipokit/webhooks';

/** The path the metrics listener answers. */
export const METRICS_PATH = '/metrics';

/** Where the metrics listener listens: its own port (0 picks a free one) and host. */
export interface MetricsSettings {
  port: number;
  /** Default `127.0.0.1`: metrics are for the operator's scraper, not the public. */
  host?: string;
}

/** What the gauges read when scraped. */
export interface MetricsSources {
  /**
   * The webhook outbox (a store's `outboxStats`): the deliveries owed and not yet settled,
   * fanned out or not, and the creation instant of the oldest (epoch ms). Without it the
   * outbox gauges are absent.
   */
  outbox?: () => Promise<{ pending: number; oldestAt: number | null }>;
  /** The collector's sources and the instant of each one's last successful run (ISO-8601). */
  sources?: () => ReadonlyArray<{ name: string; lastSuccessAt: string | null }>;
  /** The clock the ages are measured by. */
  now: () => Date;
}

/** A server's metrics: the hooks to give the router and the worker, and the registry. */
export interface ServerMetrics {
  registry: Registry;
  /** For the router's options. */
  router: Required<Pick<IpoRouterOptions, 'onResponse' | 'onStoreCall'>>;
  /** For the webhook worker's options. */
  onAttempt: NonNullable<WebhookWorkerOptions['onAttempt']>;
  /** The Prometheus text of every metric. */
  text(): Promise<string>;
}

/**
 * Makes a server's metrics on a registry of their own.
 *
 * @example
 * ```ts
 * const metrics = createServerMetrics({ now: () => new Date() });
 * const handle = createIpoHandler(memoryStore(), { ...metrics.router });
 * console.log(await metrics.text());
 * ```
 */
export function createServerMetrics(sources: MetricsSources): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({ name: 'ipokit_http_requests_total', help: 'Requests answered by the API and account routers.', labelNames: ['route', 'method', 'status', 'plan'], registers });
  const durations = new Histogram({
    name: 'ipokit_http_request_duration_seconds',
    help: 'Time from a request reaching the router to its answer.',
    labelNames: ['route', 'method', 'plan'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const decisions = new Counter({ name: 'ipokit_rate_limit_decisions_total', help: 'Rate-limit windows charged (admitted) or refusing (refused), by window.', labelNames: ['window', 'decision'], registers });
  const storeCalls = new Histogram({
    name: 'ipokit_store_call_duration_seconds',
    help: 'Store calls made for requests, by operation and outcome (ok, error, timeout, shed).',
    labelNames: ['op', 'outcome'],
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers,
  });
  const timeouts = new Counter({ name: 'ipokit_store_timeouts_total', help: 'Store calls that took longer than storeTimeoutMs (answered 503).', registers });
  const shed = new Counter({ name: 'ipokit_store_shed_total', help: 'Store calls the store refused at once to shed load (answered 503).', registers });
  const keyCache = new Counter({ name: 'ipokit_key_cache_total', help: 'API key lookups, found in the key cache (hit) or read from the store (miss).', labelNames: ['result'], registers });
  const attempts = new Counter({ name: 'ipokit_webhook_attempts_total', help: 'Webhook delivery attempts by outcome.', labelNames: ['outcome'], registers });
  // Both outbox gauges are collected at once (the registry starts every collect in the same
  // turn): they share one read of the store per scrape.
  let outboxRead: Promise<{ pending: number; oldestAt: number | null }> | null = null;
  const readOutbox = () => (outboxRead ??= sources.outbox!().finally(() => (outboxRead = null)));
  new Gauge({
    name: 'ipokit_webhook_outbox_depth',
    help: 'Webhook deliveries owed and not yet settled, one per event and endpoint: pending, retrying, or not yet fanned out (paused endpoints included, disabled ones not).',
    registers: sources.outbox === undefined ? [] : registers,
    async collect() {
      this.set((await readOutbox()).pending);
    },
  });
  new Gauge({
    name: 'ipokit_webhook_outbox_oldest_age_seconds',
    help: 'How long the oldest owed webhook delivery has waited since it was created, by the write or a replay (0: none).',
    registers: sources.outbox === undefined ? [] : registers,
    async collect() {
      const { oldestAt } = await readOutbox();
      this.set(oldestAt === null ? 0 : Math.max(0, (sources.now().getTime() - oldestAt) / 1000));
    },
  });
  new Gauge({
    name: 'ipokit_source_last_success_age_seconds',
    help: 'Time since each source of the collector last ran successfully (absent: never).',
    labelNames: ['source'],
    registers: sources.sources === undefined ? [] : registers,
    collect() {
      this.reset();
      const now = sources.now().getTime();
      for (const s of sources.sources!()) {
        if (s.lastSuccessAt !== null) this.set({ source: s.name }, Math.max(0, (now - Date.parse(s.lastSuccessAt)) / 1000));
      }
    },
  });
  // Pre-set the label sets an operator alerts on, so a rate of zero is a series, not a gap.
  for (const result of ['hit', 'miss']) keyCache.inc({ result }, 0);

  const onResponse = (info: ResponseInfo): void => {
    const plan = info.plan ?? 'none';
    requests.inc({ route: info.route, method: info.method, status: String(info.status), plan });
    durations.observe({ route: info.route, method: info.method, plan }, info.durationMs / 1000);
    if (info.keyCache !== null) keyCache.inc({ result: info.keyCache });
    const limit = info.rateLimit;
    if (limit !== null) {
      if (limit.refusedBy !== null) decisions.inc({ window: limit.refusedBy, decision: 'refused' });
      else for (const window of limit.windows) decisions.inc({ window, decision: 'admitted' });
    }
  };
  const onStoreCall = (info: StoreCallInfo): void => {
    storeCalls.observe({ op: info.op, outcome: info.outcome }, info.durationMs / 1000);
    if (info.outcome === 'timeout') timeouts.inc();
    if (info.outcome === 'shed') shed.inc();
  };
  const onAttempt: ServerMetrics['onAttempt'] = ({ outcome }) => {
    attempts.inc({ outcome: attemptOutcome(outcome) });
  };
  return { registry, router: { onResponse, onStoreCall }, onAttempt, text: () => registry.metrics() };
}

/** An attempt's outcome as a label: `2xx`, the status class (`3xx`, `4xx`, `5xx`), or why no status came. */
function attemptOutcome(outcome: Parameters<ServerMetrics['onAttempt']>[0]['outcome']): string {
  if (outcome.status !== null) return `${Math.floor(outcome.status / 100)}xx`;
  if (outcome.ok) return '2xx';
  switch (outcome.error) {
    case 'timeout':
      return 'timeout';
    case 'connection failed':
      return 'connection_failed';
    case 'address not allowed':
      return 'address_not_allowed';
    default:
      return 'refused'; // not sent: not a URL, or http: without allowInsecureWebhooks
  }
}

/**
 * Serves `GET /metrics` (and HEAD) in the Prometheus text format on its own listener; every
 * other path is a 404, every other method a 405.
 *
 * @example
 * ```ts
 * const server = await listenMetrics(metrics, { port: 9464 }); // curl http://127.0.0.1:9464/metrics
 * ```
 */
export async function listenMetrics(metrics: Pick<ServerMetrics, 'registry' | 'text'>, settings: MetricsSettings): Promise<Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Not found: metrics are at ${METRICS_PATH}.\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD' }).end('Use GET.\n');
      return;
    }
    metrics.text().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`Metrics could not be collected: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** The URL of a listening metrics server, e.g. `http://localhost:9464/metrics`; `host` as a URL writes it (`[::1]`). */
export function metricsUrl(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host}:${port}${METRICS_PATH}`;
}
