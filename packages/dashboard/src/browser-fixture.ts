/**
 * The server of the dashboard's browser test (browser.test.ts): one Express 5 app on
 * 127.0.0.1, port 0, with the keyed API at /ipos and the account router with the dashboard at
 * /account, over a memory store holding the core's fixture dataset and one more IPO with a long
 * GMP series (a snapshot every 5 minutes for 70 days and today, so a 5m series shows over 20,000
 * points). The clock is the real one; every date is computed from Date.now(). The pro account
 * has two webhook endpoints with deliveries in every state (one endpoint disabled); a second
 * account router at /plain serves the same store without its webhooks. Not shipped.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createAccount, createApiKey, createWebhook, importDataset, type DatasetIpo, type DatasetSnapshot, type IpoRouterOptions, type Store, type SubscriptionTimes } from '@ipokit/core';
import type { SubscriptionRecord } from '@ipokit/core/backend';
import { fixtureDataset } from '@ipokit/testing';
import { accountRouter, ipoRouter } from '@ipokit/express';
import { memoryStore } from '@ipokit/storage-memory';

const MINUTE = 60_000;
const DAY = 86_400_000;
const IST_OFFSET = 330 * MINUTE;
/** Days of the long series before today (UTC); today's snapshots come on top. */
const LONG_DAYS = 70;

/** The Chromium to drive: `CHROMIUM_PATH` when set and executable, else /usr/bin/chromium when it exists; null without one. */
export function findChromium(): string | null {
  const fromEnv = process.env['CHROMIUM_PATH'];
  if (fromEnv !== undefined && fromEnv !== '') {
    try {
      accessSync(fromEnv, constants.X_OK);
      return fromEnv;
    } catch {
      // fall through to the default place
    }
  }
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null;
}

/** `YYYY-MM-DD` of an instant in UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` of an instant in India (the API's days). */
export function istDay(ms: number): string {
  return new Date(ms + IST_OFFSET).toISOString().slice(0, 10);
}

/** The long-series IPO, open today (its dates are around today's IST day). */
export const LONG_IPO = { id: '2026000901', symbol: 'ZENITH', name: 'Zenith Data Systems' } as const;

/** A mainboard IPO listed on both exchanges 10 days ago: listing-day prices and a whole book of subscription readings. */
export const LISTED_IPO = { id: '2026000903', symbol: 'TAMARIND', name: 'Tamarind Valley Foods' } as const;

/** Its listing-day prices, nse before bse (issue price high ₹200; listing gain 12.5%). */
export const LISTED_PRICES = [
  { exchange: 'nse', open: 225, high: 236.25, low: 219.1, close: 231.4 },
  { exchange: 'bse', open: 225, high: 235.9, low: 219.5, close: 231.05 },
] as const;

/** The IST wall-clock times of each day's subscription readings. */
const READINGS_IST = ['10:00', '12:00', '14:00', '17:00'];

/** An IPO listed weeks ago, whose writes make the webhook events of the fixture (and the tests' own, as GMP snapshots). */
export const HOOK_IPO = { id: '2026000902', symbol: 'KESTREL', name: 'Kestrel Cold Chain' } as const;

/** The seeded endpoint's URL: long, to show how the dashboard wraps one. */
export const LONG_HOOK_URL = 'https://hooks.asha-traders.example.com/integrations/ipokit/receivers/production/v2/events?tenant=asha-traders-pvt-ltd&region=ap-south-1&signature=verify';

/** What the seeded endpoint's receiver answered: to the delivered attempt (JSON), and to the one answered 503 (text). */
export const RECEIVED_BODY = '{"received":true,"note":"queued for the order book"}';
export const UNAVAILABLE_BODY = 'Service Unavailable: the receiver is restarting, try again later.';

/** The store's webhook methods: the /plain router's store hides them, as a store without the capability has none. */
const WEBHOOK_METHODS = new Set(['insertWebhook', 'listWebhooks', 'getWebhook', 'updateWebhook', 'deleteWebhook', 'addDelivery', 'getDelivery', 'listDeliveries', 'replayDelivery', 'claimDeliveries', 'finishDeliveries', 'recordStatusChanges', 'pruneDeliveries', 'watchDeliveries']);

export interface DashboardServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The dashboard page: `${baseUrl}/account/-/dashboard/` */
  dashboardUrl: string;
  /** The same dashboard over the same store without its webhooks: `${baseUrl}/plain/-/dashboard/` */
  plainDashboardUrl: string;
  store: ReturnType<typeof memoryStore>;
  /**
   * Pro with the GMP add-on; `apiKey` is a key of it kept for the test's own API calls,
   * `rotateKey` one for the rotation test. `webhook`: an endpoint taking the ipo.* events with
   * a delivery in each state (their ids: delivered with 200 and a JSON body, pending again
   * after a 503 with a text body, failed for good without an answer); `disabledWebhook`: one
   * disabled after a failure.
   */
  pro: {
    id: string;
    apiKey: string;
    rotateKey: { id: string; key: string; label: string };
    webhook: { id: string; url: string; deliveries: { delivered: string; retrying: string; failed: string } };
    disabledWebhook: { id: string; url: string };
  };
  /** Free; its one key. */
  free: { id: string; apiKey: string };
  /** Paid: a plan without webhooks (the default `webhookPlans` is pro only). */
  paid: { id: string };
  long: {
    /** The first UTC day of its snapshots, and the last (today). */
    from: string;
    to: string;
    /** How many snapshots it has: one per 5-minute bucket, so the points of the 5m series over from..to. */
    snapshots: number;
  };
  close: () => Promise<void>;
}

/** The cookie that says who is signed in (the app's "login"). */
export const ACCOUNT_COOKIE = 'test_account';

export async function startDashboardServer(): Promise<DashboardServer> {
  const now = Date.now();
  const quotas = { perMinute: 1000, perHour: 100_000, perDay: 1_000_000, gmpPerMinute: 1000, gmpPerDay: 100_000 };
  // maxGmpBuckets: 70 days and today of 5-minute buckets (20,448) is over the default cap of 20,000.
  const opts: IpoRouterOptions = {
    limits: { free: quotas, paid: quotas, pro: quotas, keyless: { perMinute: 1000 } },
    maxGmpBuckets: 25_000,
  };

  const store = memoryStore();
  const dataset = fixtureDataset();
  const first = Date.parse(`${utcDay(now - LONG_DAYS * DAY)}T00:00:00.000Z`);
  const snapshots: DatasetSnapshot[] = [];
  const paise = (n: number) => Math.round(n * 100) / 100;
  for (let k = 0, t = first + MINUTE; t < now - MINUTE; k++, t += 5 * MINUTE) {
    const base = 40 + 25 * Math.sin(k / 900) + 6 * Math.sin(k / 37);
    snapshots.push({
      ipoId: LONG_IPO.id,
      timestamp: new Date(t).toISOString(),
      sources: [
        { name: 'alpha', gmpPrice: paise(base) },
        { name: 'beta', gmpPrice: paise(base + 3 + Math.sin(k / 11)) },
        { name: 'gamma', gmpPrice: paise(base - 2) },
      ],
    });
  }
  const day = (days: number) => istDay(now + days * DAY);
  const long: DatasetIpo = {
    id: LONG_IPO.id,
    name: LONG_IPO.name,
    symbol: LONG_IPO.symbol,
    slug: 'zenith-data-systems-ipo',
    type: 'EQ',
    exchanges: ['nse', 'bse'],
    startDate: day(-3),
    endDate: day(3),
    listingDate: day(6),
    priceRange: '120-126',
    minQty: 119,
    minAmount: 14994,
    issueSize: '850cr',
    schedule: [
      { event: 'Open', date: day(-3) },
      { event: 'Close', date: day(3) },
      { event: 'Allotment', date: day(4) },
      { event: 'Listing', date: day(6) },
    ],
    about: 'Zenith runs data centres for banks and insurers in six Indian cities.',
    strengths: ['Long contracts with its ten largest customers', 'Power costs below the sector average'],
    risks: ['Half of the revenue from two customers'],
    registrar: 'Orbit Registry Services Pvt Ltd',
    leadManagers: ['Sapphire Capital Advisors Pvt Ltd', 'Northstar Investment Bankers Ltd', 'Gulmohar Capital Markets Pvt Ltd'],
    sector: 'IT Services',
  };
  let listedStart = -15;
  while (new Date(`${day(listedStart)}T00:00:00Z`).getUTCDay() !== 1) listedStart -= 1;
  const listed: DatasetIpo = {
    id: LISTED_IPO.id,
    name: LISTED_IPO.name,
    symbol: LISTED_IPO.symbol,
    slug: 'tamarind-valley-foods-ipo',
    type: 'EQ',
    exchanges: ['nse', 'bse'],
    // Monday to Wednesday, 2 to 3 weeks ago: three bidding days whatever today's weekday.
    startDate: day(listedStart),
    endDate: day(listedStart + 2),
    listingDate: day(listedStart + 7),
    priceRange: '190-200',
    minQty: 75,
    minAmount: 15000,
    issueSize: '640cr',
    listingGain: '12.5',
    registrar: 'Meridian Share Registrars Pvt Ltd',
    leadManagers: ['Tidewater Securities Ltd', 'Riverbend Capital Ltd'],
    sector: 'Food Processing',
    listingPrices: LISTED_PRICES.map((p) => ({ ...p })),
    about: 'Tamarind Valley Foods makes packaged spices and ready-to-cook mixes.',
  };
  await importDataset(store, { ipos: [...(dataset.ipos ?? []), long, listed], gmp: [...(dataset.gmp ?? []), ...snapshots] });
  // Subscription readings, written to the store as an import would (before any webhook endpoint exists).
  const subscription = [...bookOf(LONG_IPO.id, long, now, false), ...bookOf(LISTED_IPO.id, listed, now, true)];
  await store.writeDataset({ ipos: [], snapshots: [], subscription });

  const pro = await createAccount(store, { name: 'Asha Traders Pvt Ltd', plan: 'pro', gmpAddon: true });
  const proKey = await createApiKey(store, { accountId: pro.id, label: 'production server' });
  const rotate = await createApiKey(store, { accountId: pro.id, label: 'staging server' });
  const free = await createAccount(store, { name: 'Ravi Kumar', plan: 'free' });
  const freeKey = await createApiKey(store, { accountId: free.id, label: 'laptop' });
  const paid = await createAccount(store, { name: 'Meera Capital', plan: 'paid' });
  const hooks = await seedWebhooks(store, pro.id, now);

  // The store without its webhook methods: GET /plain/webhooks is 404, as on a store without the capability.
  const plain = new Proxy(store, { get: (target, name, receiver) => (typeof name === 'string' && WEBHOOK_METHODS.has(name) ? undefined : Reflect.get(target, name, receiver)) }) as Store;

  const app = express();
  app.use('/ipos', ipoRouter(store, opts));
  app.use('/account', accountRouter(store, { ...opts, account: (req) => cookie(req.headers.cookie, ACCOUNT_COOKIE), dashboard: true }));
  app.use('/plain', accountRouter(plain, { ...opts, account: (req) => cookie(req.headers.cookie, ACCOUNT_COOKIE), dashboard: true }));
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err === undefined ? resolve(s) : reject(err)));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    dashboardUrl: `${baseUrl}/account/-/dashboard/`,
    plainDashboardUrl: `${baseUrl}/plain/-/dashboard/`,
    store,
    pro: { id: pro.id, apiKey: proKey.key, rotateKey: { id: rotate.id, key: rotate.key, label: rotate.label }, ...hooks },
    free: { id: free.id, apiKey: freeKey.key },
    paid: { id: paid.id },
    long: { from: utcDay(first), to: utcDay(now), snapshots: snapshots.length },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An issue's subscription readings at 10:00, 12:00, 14:00 and 17:00 IST of each weekday it is
 * open, up to `now`: retail and NII climbing every reading, QIBs (`qibLastDay`: a closed book)
 * jumping on the last day; no employee or shareholder quota but an employee one on the listed
 * issue, so the chart draws what the issue has.
 */
function bookOf(ipoId: string, ipo: DatasetIpo, now: number, closed: boolean): SubscriptionRecord[] {
  const out: SubscriptionRecord[] = [];
  const days: string[] = [];
  for (let d = ipo.startDate!; d <= ipo.endDate!; d = istDay(Date.parse(`${d}T12:00:00+05:30`) + DAY)) {
    const dow = new Date(`${d}T00:00:00Z`).getUTCDay();
    if (dow !== 0 && dow !== 6) days.push(d);
  }
  const steps = days.length * READINGS_IST.length;
  let step = 0;
  for (const [k, d] of days.entries()) {
    for (const [slot, time] of READINGS_IST.entries()) {
      const timestamp = Date.parse(`${d}T${time}:00+05:30`);
      if (timestamp > now) return out;
      step++;
      const f = step / steps;
      const two = (x: number) => Math.round(x * 100) / 100;
      const qib = two(closed && k === days.length - 1 ? [12, 30, 64, 118][slot]! : 0.4 * f);
      const bnii = two(180 * f ** 2);
      const snii = two(95 * f ** 1.8);
      const nii = two((2 * bnii + snii) / 3);
      const retail = two(40 * f ** 1.5);
      const times: SubscriptionTimes = {
        qib,
        nii,
        bnii,
        snii,
        retail,
        employee: closed ? two(8 * f) : null,
        shareholder: null,
        total: two(0.5 * qib + 0.15 * nii + 0.35 * retail),
      };
      out.push({ ipoId, timestamp, times });
    }
  }
  return out;
}

/**
 * Two endpoints of the account and the deliveries of three writes of {@link HOOK_IPO}, settled
 * as a worker would: delivered (200), failed once and due again in 30 minutes (503), failed for
 * good (no answer), and the second endpoint's one failure, which disables it. Neither takes
 * `gmp.snapshot`, so that the tests' snapshot imports reach only the endpoints they add.
 */
async function seedWebhooks(store: ReturnType<typeof memoryStore>, accountId: string, now: number) {
  const since = (days: number) => ({ now: () => new Date(now - days * DAY) });
  const old = await createWebhook(store, { accountId, url: 'https://old-receiver.example.net/ipo', events: ['ipo.created'] }, since(9));
  const hook = await createWebhook(store, { accountId, url: LONG_HOOK_URL, events: ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed'], description: 'Order book sync (production)' }, since(2));
  const day = (days: number) => istDay(now + days * DAY);
  const ipo: DatasetIpo = {
    id: HOOK_IPO.id,
    name: HOOK_IPO.name,
    symbol: HOOK_IPO.symbol,
    slug: 'kestrel-cold-chain-ipo',
    type: 'SME',
    exchanges: ['nse'],
    startDate: day(-40),
    endDate: day(-37),
    listingDate: day(-34),
    priceRange: '72-76',
  };
  const at = (minutes: number) => ({ now: () => new Date(now - minutes * MINUTE) });
  await importDataset(store, { ipos: [ipo] }, at(90));
  await importDataset(store, { ipos: [{ ...ipo, issueSize: '42cr' }] }, at(60));
  await importDataset(store, { ipos: [{ ...ipo, issueSize: '42cr', about: 'Kestrel runs refrigerated warehouses in Gujarat.' }] }, at(30));
  const claimed = await store.claimDeliveries({ now, limit: 100, perWebhook: 100, perAccount: 100, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
  const mine = claimed.filter((c) => c.delivery.webhookId === hook.id).sort((a, b) => a.delivery.createdAt - b.delivery.createdAt);
  const settle = (c: (typeof claimed)[number], result: { delivered: boolean; status: number | null; error: string | null; nextAttemptAt: number | null; responseBody?: string | null }, disableBefore = now - 6 * DAY) =>
    ({ id: c.delivery.id, lease: c.lease, at: now - MINUTE, disableBefore, ...result });
  const results = [];
  const [first, second, third] = mine;
  if (first !== undefined) results.push(settle(first, { delivered: true, status: 200, error: null, nextAttemptAt: null, responseBody: RECEIVED_BODY }));
  if (second !== undefined) results.push(settle(second, { delivered: false, status: 503, error: 'The endpoint answered 503 Service Unavailable.', nextAttemptAt: now + 30 * MINUTE, responseBody: UNAVAILABLE_BODY }));
  if (third !== undefined) results.push(settle(third, { delivered: false, status: null, error: 'No answer within 15 s.', nextAttemptAt: null }));
  for (const c of claimed.filter((c) => c.delivery.webhookId === old.id)) {
    results.push(settle(c, { delivered: false, status: null, error: 'connect ECONNREFUSED 203.0.113.7:443', nextAttemptAt: null }, now));
  }
  await store.finishDeliveries(results);
  if (first === undefined || second === undefined || third === undefined) throw new Error('the fixture expected three deliveries of its endpoint');
  const deliveries = { delivered: first.delivery.id, retrying: second.delivery.id, failed: third.delivery.id };
  return { webhook: { id: hook.id, url: LONG_HOOK_URL, deliveries }, disabledWebhook: { id: old.id, url: 'https://old-receiver.example.net/ipo' } };
}

function cookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}
