/**
 * The webhook worker's checks against real local receivers (docs/spec.md#webhooks), on any
 * `WebhookStore`: signatures, retries on schedule as an injected clock moves, timeouts,
 * receivers that are down, disabling, a slow endpoint beside a fast one, draining on stop,
 * several workers on one store delivering each attempt once, and a status change at an IST
 * midnight sent once by several workers.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type DeliveryRecord, toIsoUtc, WEBHOOK_RETRY_DELAYS_MS, type WebhookRecord } from '@ipokit/core/backend';
import { startWebhookWorker, type WebhookTransport, type WebhookWorker, type WebhookWorkerOptions } from '@ipokit/webhooks';
import type { EventType } from '@ipokit/core';
import { makeIpo } from './arbitraries.js';
import type { WebhookTestStore } from './webhook-suite.js';

/** Options of {@link testWebhookWorker}. */
export interface TestWebhookWorkerOptions {
  name?: string;
  /** A fresh, empty store with IPO data, accounts and webhooks. */
  createStore: () => WebhookTestStore | Promise<WebhookTestStore>;
  destroyStore?: (store: WebhookTestStore) => void | Promise<void>;
  /** The workers' transport (default theirs: on Node, nodeWebhookTransport); it must allow loopback (`allowedNetworks`). */
  transport?: WebhookTransport;
}

/** One request a receiver got. */
interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  at: number;
}

/** A local endpoint: answers with `answer` (a status, or a promise of one to hold the request). */
interface Receiver {
  url: string;
  got: Received[];
  answer: (r: Received) => number | Promise<number>;
  close(): Promise<void>;
}

async function receiver(answer: Receiver['answer'] = () => 204): Promise<Receiver> {
  const r: Receiver = { url: '', got: [], answer, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      r.got.push(got);
      void Promise.resolve(r.answer(got)).then((status) => {
        if (!res.destroyed) res.writeHead(status).end();
      });
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

/** A clock the test moves. */
function virtualClock(start: number): { now: () => Date; set: (t: number) => void; get: () => number } {
  let t = start;
  return { now: () => new Date(t), set: (x) => (t = x), get: () => t };
}

/** No cap on an account's endpoints. */
const NO_CAP = { maxPerAccount: Infinity };
const SECRET = `whsec_${Buffer.from('ipokit-worker-suite-secret!!').toString('base64')}`;
const T = Date.parse('2026-11-24T04:30:00.000Z');
const MIDNIGHT_25 = Date.parse('2026-11-24T18:30:00.000Z');

/** Waits until `done()` holds, checking every 10 ms, for at most `ms`. */
async function until(done: () => boolean | Promise<boolean>, ms = 10_000, what = 'the condition'): Promise<void> {
  const end = performance.now() + ms;
  while (!(await done())) {
    if (performance.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The signature a receiver expects, computed apart from the core (node:crypto's HMAC). */
function expectedSignature(r: Received): string {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${r.id}.${r.timestamp}.${r.body}`).digest('base64')}`;
}

/**
 * Registers the worker checks with vitest.
 *
 * @example
 * ```ts
 * testWebhookWorker({ name: 'memoryStore', createStore: () => memoryStore() });
 * ```
 */
export function testWebhookWorker(options: TestWebhookWorkerOptions): void {
  interface Ctx {
    store: WebhookTestStore;
    clock: ReturnType<typeof virtualClock>;
    start: (extra?: WebhookWorkerOptions) => WebhookWorker;
    hook: (id: string, url: string, events?: EventType[], accountId?: string) => Promise<void>;
    deliveries: (webhookId: string) => Promise<DeliveryRecord[]>;
  }
  const check = (name: string, fn: (ctx: Ctx) => Promise<void>, timeout = 30_000) =>
    it(name, { timeout }, async () => {
      const store = await options.createStore();
      const workers: WebhookWorker[] = [];
      try {
        await store.insertAccount({ id: 'acct_1', name: 'One', plan: 'pro', gmpAddon: true, createdAt: '2026-11-20T10:00:00.000Z' });
        await store.insertAccount({ id: 'acct_2', name: 'Two', plan: 'pro', gmpAddon: false, createdAt: '2026-11-20T10:00:00.000Z' });
        const clock = virtualClock(T);
        const ctx: Ctx = {
          store,
          clock,
          start: (extra = {}) => {
            const transport = options.transport === undefined ? {} : { transport: options.transport };
            // (the receivers are local: loopback opened explicitly, docs/spec.md#webhooks)
            const w = startWebhookWorker(store, { now: clock.now, allowInsecureWebhooks: true, webhookAllowedNetworks: ['127.0.0.0/8', '::1/128'], pollIntervalMs: 20, onError: () => undefined, ...transport, ...extra });
            workers.push(w);
            return w;
          },
          hook: async (id, url, events = ['ipo.created'], accountId = 'acct_1') => {
            const record: WebhookRecord = { id, accountId, url, events, description: null, secret: SECRET, createdAt: '2026-11-20T10:00:00.000Z', disabledAt: null, pausedAt: null, previousSecret: null, previousSecretExpiresAt: null };
            expect(await store.insertWebhook(record, NO_CAP)).toBe('ok');
          },
          deliveries: async (webhookId) => (await store.listDeliveries({ webhookId, before: null, limit: 1_000 })) ?? [],
        };
        await fn(ctx);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
        await options.destroyStore?.(store);
      }
    });
  const create = (store: WebhookTestStore, ids: string[], at: number) => store.writeDataset({ ipos: ids.map((id) => makeIpo({ id })), snapshots: [] }, { at });

  describe(options.name ?? 'startWebhookWorker', () => {
    check('delivers each event to each endpoint once, signed per Standard Webhooks, and settles it delivered', async ({ store, start, hook, deliveries, clock }) => {
      const a = await receiver();
      const b = await receiver(() => 200);
      try {
        await hook('wh_a', a.url);
        await hook('wh_b', b.url, ['ipo.created', 'ipo.deleted']);
        start();
        await create(store, ['x1', 'x2', 'x3'], T);
        await store.deleteIpos(['x2'], { at: T });
        await until(() => a.got.length === 3 && b.got.length === 4, 10_000, 'the deliveries');
        for (const r of [...a.got, ...b.got]) {
          expect(r.signature).toBe(expectedSignature(r));
          expect(r.timestamp).toBe(String(Math.floor(clock.get() / 1000)));
          expect(r.id).toMatch(/^evt_/);
          const body = JSON.parse(r.body) as { type: string; timestamp: string; data: { id: string } };
          expect(body.timestamp).toBe(toIsoUtc(T));
        }
        expect(a.got.map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id).sort()).toEqual(['x1', 'x2', 'x3']);
        // One event, one webhook-id, at every endpoint.
        const created = (r: Received[]) => new Set(r.filter((x) => x.body.includes('"ipo.created"')).map((x) => x.id));
        expect(created(a.got)).toEqual(created(b.got));
        await until(async () => (await deliveries('wh_b')).every((d) => d.state === 'delivered'), 5_000, 'settling');
        for (const d of [...(await deliveries('wh_a')), ...(await deliveries('wh_b'))]) {
          expect(d).toMatchObject({ state: 'delivered', attempts: 1, nextAttemptAt: null, lastError: null });
          expect([200, 204]).toContain(d.lastStatus);
        }
      } finally {
        await a.close();
        await b.close();
      }
    });

    check('a receiver that answers 500 gets every retry on schedule as the clock moves, then the delivery fails; 5 days of failing disable the endpoint', async ({ store, start, hook, deliveries, clock }) => {
      const r = await receiver(() => 500);
      try {
        await hook('wh_a', r.url);
        start();
        await create(store, ['x1'], T);
        await until(() => r.got.length === 1, 5_000, 'the first attempt');
        let last = T;
        for (let i = 0; i < WEBHOOK_RETRY_DELAYS_MS.length; i++) {
          await until(async () => (await deliveries('wh_a'))[0]?.attempts === i + 1, 5_000, `attempt ${i + 1} settled`);
          const [d] = await deliveries('wh_a');
          expect(d).toMatchObject({ state: 'pending', lastStatus: 500, lastError: 'answered 500' });
          expect(d!.nextAttemptAt).toBe(d!.lastAttemptAt! + WEBHOOK_RETRY_DELAYS_MS[i]!);
          last = d!.nextAttemptAt!;
          // Not a moment early.
          clock.set(last - 1);
          await sleep(80);
          expect(r.got.length).toBe(i + 1);
          clock.set(last);
          await until(() => r.got.length === i + 2, 5_000, `retry ${i + 1}`);
        }
        await until(async () => (await deliveries('wh_a'))[0]?.state === 'failed', 5_000, 'the delivery to fail');
        expect((await deliveries('wh_a'))[0]).toMatchObject({ attempts: 8, nextAttemptAt: null, lastStatus: 500 });
        // Every attempt of one message carries its id.
        expect(new Set(r.got.map((g) => g.id)).size).toBe(1);
        expect((await store.getWebhook('wh_a'))!.disabledAt).toBeNull();
        // Five days after the first failure, still failing: disabled.
        clock.set(T + 5 * 86_400_000);
        await create(store, ['x2'], clock.get());
        await until(async () => (await store.getWebhook('wh_a'))!.disabledAt !== null, 5_000, 'disabling');
        expect((await store.getWebhook('wh_a'))!.disabledAt).toBe(toIsoUtc(T + 5 * 86_400_000));
        await create(store, ['x3'], clock.get());
        await sleep(100);
        expect(r.got.length).toBe(9);
      } finally {
        await r.close();
      }
    });

    check('no answer within the timeout, and a receiver that is down, are failures retried on schedule', async ({ store, start, hook, deliveries, clock }) => {
      const slow = await receiver(() => new Promise<number>((resolve) => setTimeout(() => resolve(200), 2_000)));
      const down = await receiver();
      await down.close();
      try {
        await hook('wh_slow', slow.url);
        await hook('wh_down', down.url);
        start({ timeoutMs: 200, leaseMs: 60_000 });
        await create(store, ['x1'], T);
        await until(async () => (await deliveries('wh_slow'))[0]?.attempts === 1 && (await deliveries('wh_down'))[0]?.attempts === 1, 5_000, 'both attempts');
        expect((await deliveries('wh_slow'))[0]).toMatchObject({ state: 'pending', lastStatus: null, lastError: 'timeout', nextAttemptAt: (await deliveries('wh_slow'))[0]!.lastAttemptAt! + 5_000 });
        expect((await deliveries('wh_down'))[0]).toMatchObject({ state: 'pending', lastStatus: null });
        expect((await deliveries('wh_down'))[0]!.lastError).toBe('connection failed');
        clock.set(T + 5_000);
        await until(async () => (await deliveries('wh_down'))[0]?.attempts === 2, 5_000, 'the retry');
      } finally {
        await slow.close();
      }
    });

    check('a slow endpoint holds at most perWebhookConcurrency attempts and never delays the others', async ({ store, start, hook, deliveries }) => {
      const held: Array<() => void> = [];
      const slow = await receiver(() => new Promise<number>((resolve) => held.push(() => resolve(200))));
      const fast = await receiver();
      try {
        await hook('wh_slow', slow.url);
        await hook('wh_fast', fast.url);
        start({ perWebhookConcurrency: 2, concurrency: 8 });
        await create(store, Array.from({ length: 30 }, (_, i) => `x${String(i).padStart(2, '0')}`), T);
        await until(() => fast.got.length === 30, 10_000, 'the fast endpoint');
        expect(slow.got.length).toBe(2);
        await until(async () => (await deliveries('wh_fast')).every((d) => d.state === 'delivered'), 5_000, 'settling');
        // Let the slow one go: the rest follow, two at a time.
        const release = setInterval(() => held.splice(0).forEach((f) => f()), 5);
        try {
          await until(() => slow.got.length === 30, 10_000, 'the slow endpoint');
        } finally {
          clearInterval(release);
          held.splice(0).forEach((f) => f());
        }
      } finally {
        await slow.close();
        await fast.close();
      }
    });

    check("one account's hanging endpoints delay no other account's deliveries: an account holds at most perAccountConcurrency attempts", async ({ store, start, hook, deliveries }) => {
      const held: Array<() => void> = [];
      const hanging = await receiver(() => new Promise<number>((resolve) => held.push(() => resolve(200))));
      const other = await receiver();
      try {
        // Eight endpoints of acct_1 that never answer, made first (their deliveries come first
        // in the order made), and one of acct_2.
        for (let i = 0; i < 8; i++) await hook(`wh_hang${i}`, hanging.url, ['ipo.created'], 'acct_1');
        await hook('wh_other', other.url, ['ipo.created'], 'acct_2');
        // (the default perAccountConcurrency: max(2 x 1, 8 / 4) = 2)
        start({ concurrency: 8, perWebhookConcurrency: 1, timeoutMs: 20_000, leaseMs: 30_000 });
        await create(store, ['h1', 'h2', 'h3'], T);
        await until(() => other.got.length === 3, 5_000, "the other account's deliveries while acct_1's hang");
        expect(hanging.got.length).toBe(2);
        await until(async () => (await deliveries('wh_other')).every((d) => d.state === 'delivered'), 5_000, 'settling');
      } finally {
        held.splice(0).forEach((f) => f());
        await hanging.close();
        await other.close();
      }
    });

    check('an endpoint with some attempts in flight is given only what is left of perWebhookConcurrency', async ({ store, start, hook }) => {
      const held: Array<() => void> = [];
      let open = 0;
      let most = 0;
      const slow = await receiver(() => {
        most = Math.max(most, ++open);
        return new Promise<number>((resolve) =>
          held.push(() => {
            open--;
            resolve(200);
          }),
        );
      });
      try {
        await hook('wh_slow', slow.url);
        start({ perWebhookConcurrency: 3, concurrency: 8 });
        await create(store, Array.from({ length: 12 }, (_, i) => `y${String(i).padStart(2, '0')}`), T);
        await until(() => slow.got.length === 3, 10_000, 'three attempts');
        // One ends: one more is sent (not three, with room for 8 over all endpoints).
        held.shift()!();
        await until(() => slow.got.length >= 4, 10_000, 'a fourth attempt');
        await sleep(300);
        expect([slow.got.length, most]).toEqual([4, 3]);
        // Two end at once: two more.
        held.splice(0, 2).forEach((f) => f());
        await until(() => slow.got.length >= 6, 10_000, 'two more');
        await sleep(300);
        expect([slow.got.length, most]).toEqual([6, 3]);
      } finally {
        held.splice(0).forEach((f) => f());
        await slow.close();
      }
    });

    check('stop() drains: an attempt in flight ends and is settled, and nothing more is claimed', async ({ store, start, hook, deliveries }) => {
      let release: () => void = () => undefined;
      const r = await receiver(() => new Promise<number>((resolve) => (release = () => resolve(200))));
      try {
        await hook('wh_a', r.url);
        const worker = start({ concurrency: 1 });
        await create(store, ['x1', 'x2'], T);
        await until(() => r.got.length === 1, 5_000, 'the first attempt');
        let stopped = false;
        const stopping = worker.stop().then(() => (stopped = true));
        await sleep(50);
        expect(stopped).toBe(false);
        release();
        await stopping;
        const listed = await deliveries('wh_a');
        expect(listed.map((d) => d.state).sort()).toEqual(['delivered', 'pending']);
        expect(r.got.length).toBe(1);
      } finally {
        await r.close();
      }
    });

    check('three workers on one store deliver each event once', async ({ store, start, hook }) => {
      const r = await receiver();
      try {
        await hook('wh_a', r.url);
        for (let i = 0; i < 3; i++) start({ concurrency: 8 });
        for (let batch = 0; batch < 10; batch++) {
          await create(store, Array.from({ length: 20 }, (_, i) => `b${batch}i${i}`), T);
        }
        await until(() => r.got.length >= 200, 15_000, '200 deliveries');
        await sleep(200);
        expect(r.got.length).toBe(200);
        expect(new Set(r.got.map((g) => g.id)).size).toBe(200);
      } finally {
        await r.close();
      }
    });

    check('a status change at an IST midnight is sent once by three workers', async ({ store, start, hook, clock }) => {
      const r = await receiver();
      try {
        await hook('wh_sc', r.url, ['ipo.status_changed']);
        await store.writeDataset({ ipos: [makeIpo({ id: 's1', startDate: '2026-11-25', endDate: '2026-11-27' })], snapshots: [] }, { at: T });
        for (let i = 0; i < 3; i++) start({ statusCheckIntervalMs: 50 });
        await sleep(150);
        expect(r.got).toEqual([]);
        clock.set(MIDNIGHT_25);
        await until(() => r.got.length === 1, 5_000, 'the status change');
        await sleep(300);
        expect(r.got.length).toBe(1);
        expect(JSON.parse(r.got[0]!.body)).toEqual({ type: 'ipo.status_changed', timestamp: toIsoUtc(MIDNIGHT_25), data: { id: 's1', from: 'upcoming', to: 'open' } });
      } finally {
        await r.close();
      }
    });
  });
}
