/**
 * The server of the dashboard's browser test (browser.test.ts): one Express 5 app on
 * 127.0.0.1, port 0, with the keyed API at /ipos and the account router with the dashboard at
 * /account, over a memory store holding the core's fixture dataset and one more IPO with a long
 * GMP series (a snapshot every 5 minutes for 70 days and today, so a 5m series shows over 20,000
 * points). The clock is the real one; every date is computed from Date.now(). Not shipped.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createAccount, createApiKey, importDataset, type DatasetIpo, type DatasetSnapshot, type IpoRouterOptions } from '@ipokit/core';
import { fixtureDataset } from '@ipokit/core/testing';
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

export interface DashboardServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The dashboard page: `${baseUrl}/account/-/dashboard/` */
  dashboardUrl: string;
  store: ReturnType<typeof memoryStore>;
  /** Pro with the GMP add-on; `apiKey` is a key of it kept for the test's own API calls, `rotateKey` one for the rotation test. */
  pro: { id: string; apiKey: string; rotateKey: { id: string; key: string; label: string } };
  /** Free; its one key. */
  free: { id: string; apiKey: string };
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
  };
  await importDataset(store, { ipos: [...(dataset.ipos ?? []), long], gmp: [...(dataset.gmp ?? []), ...snapshots] });

  const pro = await createAccount(store, { name: 'Asha Traders Pvt Ltd', plan: 'pro', gmpAddon: true });
  const proKey = await createApiKey(store, { accountId: pro.id, label: 'production server' });
  const rotate = await createApiKey(store, { accountId: pro.id, label: 'staging server' });
  const free = await createAccount(store, { name: 'Ravi Kumar', plan: 'free' });
  const freeKey = await createApiKey(store, { accountId: free.id, label: 'laptop' });

  const app = express();
  app.use('/ipos', ipoRouter(store, opts));
  app.use('/account', accountRouter(store, { ...opts, account: (req) => cookie(req.headers.cookie, ACCOUNT_COOKIE), dashboard: true }));
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err === undefined ? resolve(s) : reject(err)));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    dashboardUrl: `${baseUrl}/account/-/dashboard/`,
    store,
    pro: { id: pro.id, apiKey: proKey.key, rotateKey: { id: rotate.id, key: rotate.key, label: rotate.label } },
    free: { id: free.id, apiKey: freeKey.key },
    long: { from: utcDay(first), to: utcDay(now), snapshots: snapshots.length },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function cookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}
