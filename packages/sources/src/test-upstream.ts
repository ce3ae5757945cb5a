/**
 * A real ipokit server for upstreamSource's tests: Express 5 with `ipoRouter` over a store, on
 * 127.0.0.1 port 0, counting the requests it sees (at the test clock's instant, with their
 * status), and a generated dataset of IPOs of every status with GMP and subscription
 * snapshots in batches. Not published (package.json's `files` leaves test-*.ts out).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createAccount, createApiKey, type Dataset, type DatasetIpo, type DatasetSnapshot, type DatasetSubscription, type IpoRouterOptions, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';

/** A request the server saw: the clock's instant when it arrived, its path and query, and the status answered. */
export interface SeenRequest {
  at: number;
  url: string;
  status: number;
}

/** A served API: its mount URL, the requests it saw, and how to stop it. */
export interface TestApi {
  baseUrl: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** A test clock in epoch ms that the router, the imports and the injected sleeps share. */
export interface TestClock {
  now: number;
}

/**
 * Serves `store` at `/ipos` with `options`, its clock read from `clock`; every request is
 * recorded in `requests`.
 *
 * @example
 * ```ts
 * const api = await serveApi(store, clock, { limits: { pro: { perMinute: 6 } } });
 * await fetch(`${api.baseUrl}?status=open`, { headers: { 'x-api-key': key } });
 * api.requests; // [{ at: clock.now, url: '/ipos?status=open', status: 200 }]
 * ```
 */
export async function serveApi(store: Store, clock: TestClock, options: IpoRouterOptions = {}): Promise<TestApi> {
  const requests: SeenRequest[] = [];
  const app = express();
  app.use((req, res, next) => {
    const seen: SeenRequest = { at: clock.now, url: req.originalUrl, status: 0 };
    requests.push(seen);
    res.on('finish', () => {
      seen.status = res.statusCode;
    });
    next();
  });
  app.use('/ipos', ipoRouter(store, { onError: () => {}, ...options, now: () => new Date(clock.now) }));
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/ipos`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}

/**
 * A pro account with the GMP add-on in `store`, and a key of it.
 *
 * @example
 * ```ts
 * const key = await proKey(store, clock);
 * ```
 */
export async function proKey(store: Store, clock: TestClock, gmpAddon = true): Promise<string> {
  const now = (): Date => new Date(clock.now);
  const account = await createAccount(store, { name: 'Mirror', plan: 'pro', gmpAddon }, { now });
  return (await createApiKey(store, { accountId: account.id, label: 'mirror' }, { now })).key;
}

/** How many IPOs of each status {@link seedIpos} makes: 7 list pages of 100 in all. */
export const STATUS_COUNTS = { listed: 150, closed: 101, open: 15, upcoming: 17, announced: 17 } as const;

const DAY_MS = 86_400_000;
const IST_MS = 5.5 * 3_600_000;

/** The IST day `offset` days after the IST day of `at`, as `YYYY-MM-DD`. */
export function istDay(at: number, offset: number): string {
  return new Date(at + IST_MS + offset * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The dataset's IPOs: {@link STATUS_COUNTS} of each status on the IST day of `at`, with ids
 * `U0001`... Every third has a price range, most have several fields set, listed ones have
 * listing prices.
 *
 * @example
 * ```ts
 * await importDataset(store, { ipos: seedIpos(clock.now) });
 * ```
 */
export function seedIpos(at: number): DatasetIpo[] {
  const ipos: DatasetIpo[] = [];
  let n = 0;
  for (const [status, count] of Object.entries(STATUS_COUNTS)) {
    for (let k = 0; k < count; k++) ipos.push(ipoOf(++n, status as keyof typeof STATUS_COUNTS, k, at));
  }
  return ipos;
}

/**
 * One IPO of the dataset: number `n`, of `status` on the IST day of `at`, `k`-th of its status.
 *
 * @example
 * ```ts
 * const extra = ipoOf(301, 'upcoming', 0, clock.now);
 * ```
 */
export function ipoOf(n: number, status: keyof typeof STATUS_COUNTS, k: number, at: number): DatasetIpo {
  const id = `U${String(n).padStart(4, '0')}`;
  const type = (['EQ', 'SME', 'DEBT'] as const)[n % 3]!;
  const dates = datesOf(status, k, at);
  const ipo: DatasetIpo = {
    id,
    name: `Upstream Test ${n} Limited`,
    symbol: n % 7 === 0 ? null : `UPT${n}`,
    slug: `upstream-test-${n}`,
    type,
    exchanges: type === 'SME' ? ['nse'] : ['nse', 'bse'],
    infoUrl: `https://example.com/ipo/${n}`,
    startDate: dates.startDate,
    endDate: dates.endDate,
    listingDate: dates.listingDate,
    priceRange: n % 3 === 0 ? `${90 + (n % 10)}-${100 + (n % 10)}` : null,
    minQty: n % 3 === 0 ? 100 + n : null,
    minAmount: n % 3 === 0 ? (100 + (n % 10)) * (100 + n) : null,
    issueSize: n % 2 === 0 ? `${n}cr` : null,
    schedule: dates.startDate === null ? [] : [{ event: 'Opens', date: dates.startDate }],
    about: n % 4 === 0 ? null : `About upstream test ${n}.`,
    strengths: n % 5 === 0 ? ['Brand', 'Reach'] : [],
    risks: [],
    registrar: n % 2 === 0 ? 'Link Intime' : null,
    leadManagers: n % 3 === 1 ? ['Axis Capital', 'ICICI Securities'] : [],
    sector: n % 2 === 1 ? 'Manufacturing' : null,
  };
  if (status === 'listed' && n % 2 === 0) {
    ipo.listingGain = '12.5';
    ipo.listingPrices = [{ exchange: 'nse', open: 112.5, high: 120, low: 110, close: 118.25 }];
  }
  return ipo;
}

function datesOf(status: keyof typeof STATUS_COUNTS, k: number, at: number): { startDate: string | null; endDate: string | null; listingDate: string | null } {
  switch (status) {
    case 'listed':
      return { startDate: istDay(at, -20 - (k % 30)), endDate: istDay(at, -18 - (k % 30)), listingDate: istDay(at, -15 - (k % 30)) };
    case 'closed':
      return { startDate: istDay(at, -5), endDate: istDay(at, -2 + (k % 2)), listingDate: istDay(at, 3) };
    case 'open':
      // Some close tomorrow: a later run, days on, finds them under closed.
      return { startDate: istDay(at, -1), endDate: istDay(at, k % 3), listingDate: istDay(at, 6) };
    case 'upcoming':
      return { startDate: istDay(at, 1 + (k % 3)), endDate: istDay(at, 4), listingDate: k % 2 === 0 ? null : istDay(at, 8) };
    case 'announced':
      return { startDate: null, endDate: null, listingDate: null };
  }
}

/**
 * Batch `batch` of snapshots at instant `at`: a GMP snapshot for two IPOs in three (one in
 * eleven with no numeric source, some with a source that gave no number) and a subscription
 * snapshot for one in two, among `ids`.
 *
 * @example
 * ```ts
 * await importDataset(store, snapshotBatch(ids, 1, clock.now - 60_000));
 * ```
 */
export function snapshotBatch(ids: readonly string[], batch: number, at: number): Required<Pick<Dataset, 'gmp' | 'subscription'>> {
  const timestamp = new Date(at).toISOString();
  const gmp: DatasetSnapshot[] = [];
  const subscription: DatasetSubscription[] = [];
  ids.forEach((ipoId, i) => {
    if ((i + batch) % 3 !== 0) {
      const price = (((i * 13 + batch * 7) % 200) - 20) / 4;
      const sources =
        (i + batch) % 11 === 0
          ? [{ name: 'ipowatch', gmpPrice: null }]
          : [
              { name: 'ipowatch', gmpPrice: price },
              { name: 'investorgain', gmpPrice: i % 4 === 0 ? null : price + 1.5 },
              ...(i % 5 === 0 ? [{ name: 'ipocentral', gmpPrice: price - 0.75 }] : []),
            ];
      gmp.push({ ipoId, timestamp, sources });
    }
    if ((i + batch) % 2 === 0) {
      const x = ((i * 7 + batch * 31) % 500) / 4;
      subscription.push({
        ipoId,
        timestamp,
        times: i % 3 === 0 ? { total: x } : { qib: x, nii: Math.floor(x) / 2, retail: 1.25 + batch, employee: null, total: x + 0.5 },
      });
    }
  });
  return { gmp, subscription };
}
