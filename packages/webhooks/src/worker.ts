/**
 * The webhook worker (docs/spec.md#webhooks): records the status changes due at IST midnights,
 * claims due deliveries from the store, makes each attempt, and settles them with their
 * next retry or the endpoint's disabling. Any number of workers may share a store: each
 * delivery attempt is leased to one of them, and an attempt whose worker died is made again
 * when the lease runs out. On timers and a transport (the `#platform` import's: undici's on
 * Node, `fetch` elsewhere), so it runs wherever the core does.
 */
import { type ClaimedDelivery, DELIVERIES_KEPT_PER_WEBHOOK, DELIVERY_RETENTION_MS, type DeliveryResult, nextAttemptAt, parseAllowedNetworks, WEBHOOK_DISABLE_AFTER_MS } from '@ipokit/core/backend';
import { deliverWebhook, WEBHOOK_TIMEOUT_MS, type WebhookTransport } from './delivery.js';
import { EarliestTimer } from './earliest-timer.js';
import { platformTransport } from '#platform';
import { IpokitError, type WebhookStore } from '@ipokit/core';

/** Options of {@link startWebhookWorker}. */
export interface WebhookWorkerOptions {
  /** The clock: due times, leases, `webhook-timestamp`, status changes. Default `() => new Date()`. */
  now?: () => Date;
  /** Also send to `http:` URLs (tests, local receivers). Default false: `https:` only. */
  allowInsecureWebhooks?: boolean;
  /** Attempts in flight at once, over all endpoints. Default 64. */
  concurrency?: number;
  /** Attempts in flight at once to one endpoint, so a slow endpoint holds at most this many. Default 4. */
  perWebhookConcurrency?: number;
  /**
   * Attempts in flight at once for one account's endpoints, so an account whose endpoints
   * hang holds at most this many and the others' go on. Default the larger of twice
   * `perWebhookConcurrency` and a quarter of `concurrency`.
   */
  perAccountConcurrency?: number;
  /** Longest wait between two looks at the store when nothing wakes the worker, ms. Default 1,000. */
  pollIntervalMs?: number;
  /** How often the worker looks for status changes besides at the next one it knows of, ms. Default 60,000. */
  statusCheckIntervalMs?: number;
  /** How long a claimed attempt is the worker's alone, ms; more than `timeoutMs`. Default 60,000. */
  leaseMs?: number;
  /** How long an endpoint has to answer, ms. Default 15,000. */
  timeoutMs?: number;
  /** How long settled deliveries are kept, ms. Default 30 days. */
  retentionMs?: number;
  /** How many settled deliveries are kept per endpoint (the newest). Default 10,000. */
  keepDeliveriesPerWebhook?: number;
  /**
   * How requests are sent. Default: on Node `nodeWebhookTransport()` of `@ipokit/webhooks/node`
   * (names resolved and checked against the address policy), elsewhere `fetchTransport()`
   * (address literals checked only); made with `webhookAllowedNetworks` and closed on `stop()`.
   */
  transport?: WebhookTransport;
  /**
   * Networks (CIDRs) outside the public internet that may be sent to, e.g. `['10.1.0.0/16']`;
   * local receivers need `['127.0.0.0/8', '::1/128']`. Default none: only public addresses
   * (checked after DNS by the default transport on Node; `allowInsecureWebhooks` opens no network).
   */
  webhookAllowedNetworks?: readonly string[];
  /** Called with each failure of the store (the worker goes on, and tries again). Default: `console.error`. */
  onError?: (err: unknown) => void;
}

/** A running worker: it keeps the process alive, as a listening server does, until stopped. */
export interface WebhookWorker {
  /** Stops claiming, waits for the attempts in flight and settles them. */
  stop(): Promise<void>;
}

const PRUNE_EVERY_MS = 3_600_000;

/**
 * Starts delivering the store's webhook events, until `stop()`.
 *
 * @example
 * ```ts
 * const worker = startWebhookWorker(store, { allowInsecureWebhooks: false });
 * process.on('SIGTERM', () => void worker.stop());
 * ```
 */
export function startWebhookWorker(store: WebhookStore, options: WebhookWorkerOptions = {}): WebhookWorker {
  const clock = options.now ?? (() => new Date());
  const concurrency = positive('concurrency', options.concurrency ?? 64);
  const perWebhook = positive('perWebhookConcurrency', options.perWebhookConcurrency ?? 4);
  const perAccount = positive('perAccountConcurrency', options.perAccountConcurrency ?? Math.max(2 * perWebhook, Math.floor(concurrency / 4)));
  const keepPerWebhook = positive('keepDeliveriesPerWebhook', options.keepDeliveriesPerWebhook ?? DELIVERIES_KEPT_PER_WEBHOOK);
  const pollMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1_000);
  const statusCheckMs = positive('statusCheckIntervalMs', options.statusCheckIntervalMs ?? 60_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? WEBHOOK_TIMEOUT_MS);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 60_000);
  if (leaseMs <= timeoutMs) throw new IpokitError('ERR:BADPARAM', 'leaseMs must be longer than timeoutMs: an attempt must end before its lease.', { parameter: 'leaseMs' });
  const retentionMs = positive('retentionMs', options.retentionMs ?? DELIVERY_RETENTION_MS);
  const onError = options.onError ?? ((err: unknown) => console.error('ipokit webhook worker:', err));
  const allowedNetworks = parseAllowedNetworks(options.webhookAllowedNetworks);
  // (made here, closed on stop(): on Node the transport that checks resolved addresses)
  const ownTransport = options.transport === undefined ? platformTransport({ allowedNetworks }) : null;
  const transport = options.transport ?? ownTransport!;

  let stopping = false;
  let running: Promise<void> | null = null;
  let again = false;
  // (not unref'd: like a listening server, a running worker keeps its process alive until stop())
  const timer = new EarliestTimer(() => kick());
  let nextStatusAt = -Infinity;
  /** Whether the last cycle failed (the store is down): the next look is pollMs away. */
  let failed = false;
  let lastStatusCheck = -Infinity;
  let lastPrune = -Infinity;
  let unwatch: (() => Promise<void>) | null = null;
  const inFlight = new Map<string, number>();
  const inFlightAccounts = new Map<string, number>();
  let inFlightTotal = 0;
  const settled: DeliveryResult[] = [];
  const idle: Array<() => void> = [];

  const now = (): number => clock().getTime();

  /** Runs a cycle now, or right after the one running. */
  const kick = (): void => {
    if (stopping && inFlightTotal === 0 && settled.length === 0) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = cycle().finally(() => {
      running = null;
      if (again) {
        again = false;
        kick();
      } else schedule();
    });
  };

  const schedule = (): void => {
    if (stopping) {
      timer.clear();
      // (results the store would not take are left to their leases: those attempts are made again)
      if (inFlightTotal === 0) for (const resolve of idle.splice(0)) resolve();
      return;
    }
    // After a failure the store is looked at again in pollMs: a status check that is due (or
    // never succeeded) would otherwise make the wait 0, over and over, while the store is down.
    const wait = failed ? pollMs : Math.max(0, Math.min(pollMs, nextStatusAt - now()));
    // (a look already set for no later is kept: a busy worker ends a cycle per few attempts)
    timer.by(performance.now() + wait);
  };

  const cycle = async (): Promise<void> => {
    failed = false;
    try {
      if (settled.length > 0) {
        const batch = settled.splice(0);
        try {
          await store.finishDeliveries(batch);
        } catch (err) {
          settled.unshift(...batch); // kept, and tried again: their leases are still ours for a while
          throw err;
        }
      }
      if (stopping) return;
      const t = now();
      if (t >= nextStatusAt || t - lastStatusCheck >= statusCheckMs) {
        const { nextAt } = await store.recordStatusChanges({ now: t });
        nextStatusAt = nextAt ?? Infinity;
        lastStatusCheck = t;
      }
      if (t - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = t;
        await store.pruneDeliveries({ before: t - retentionMs, keepPerWebhook });
      }
      const room = concurrency - inFlightTotal;
      if (room <= 0) return;
      // (an endpoint's attempts in flight count against its perWebhook, an account's against
      // its perAccount; the maps themselves, read as the claim runs: they only go down
      // meanwhile, as attempts end)
      const claimed = await store.claimDeliveries({ now: t, limit: room, perWebhook, perAccount, leaseMs, busy: inFlight, busyAccounts: inFlightAccounts });
      for (const c of claimed) attempt(c);
      // A full batch: more may be due.
      if (claimed.length === room) again = true;
    } catch (err) {
      failed = true;
      again = false;
      onError(err);
    }
  };

  const attempt = (c: ClaimedDelivery): void => {
    const hook = c.delivery.webhookId;
    inFlight.set(hook, (inFlight.get(hook) ?? 0) + 1);
    inFlightAccounts.set(c.accountId, (inFlightAccounts.get(c.accountId) ?? 0) + 1);
    inFlightTotal++;
    const startedAt = now();
    // The secret before a rotation signs too while its overlap lasts, on this worker's clock.
    const previous = c.previousSecret !== null && c.previousSecretExpiresAt !== null && startedAt < c.previousSecretExpiresAt ? c.previousSecret : null;
    void deliverWebhook({
      url: c.url,
      secret: c.secret,
      previousSecret: previous,
      id: c.delivery.eventId,
      timestamp: Math.floor(startedAt / 1000),
      body: c.body,
      timeoutMs,
      allowInsecure: options.allowInsecureWebhooks === true,
      allowedNetworks,
      transport,
    }).then((outcome) => {
      const at = now();
      settled.push({
        id: c.delivery.id,
        lease: c.lease,
        at,
        delivered: outcome.ok,
        status: outcome.status,
        error: outcome.ok ? null : outcome.error,
        responseBody: outcome.body,
        nextAttemptAt: outcome.ok ? null : nextAttemptAt(c.delivery.attempts + 1, at),
        disableBefore: at - WEBHOOK_DISABLE_AFTER_MS,
      });
      release(inFlight, hook);
      release(inFlightAccounts, c.accountId);
      inFlightTotal--;
      kick();
    });
  };

  const watch = store.watchDeliveries;
  if (watch !== undefined) {
    watch
      .call(store, () => {
        // Data changed: deliveries may be due, and the next status change may have moved.
        lastStatusCheck = -Infinity;
        kick();
      })
      .then(
        (stop) => {
          if (stopping) void stop().catch(onError);
          else unwatch = stop;
        },
        (err: unknown) => onError(err),
      );
  }
  kick();

  return {
    async stop(): Promise<void> {
      if (!stopping) {
        stopping = true;
        timer.clear();
        const stopWatch = unwatch;
        unwatch = null;
        if (stopWatch !== null) await stopWatch().catch(onError);
      }
      // Drain: the attempts in flight end (each within timeoutMs) and are settled.
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        if (running === null) kick();
        if (running === null) schedule();
      });
      ownTransport?.close();
    },
  };
}

/** One attempt fewer in flight under `key`. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left === 0) counts.delete(key);
  else counts.set(key, left);
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new IpokitError('ERR:BADPARAM', `${name} must be a whole number of at least 1.`, { parameter: name });
  return value;
}
