/**
 * The fixture of the HTTP conformance suite: a small hand-made dataset (25 IPOs in every
 * status, a few hundred GMP snapshots, a few subscription snapshots), a fixed instant, the accounts and keys every check
 * uses, and a naive, independent reference of what the API must answer for it (status,
 * order, the IPO object, the latest GMP and subscription snapshots, the GMP and
 * subscription series). The reference uses no
 * code of the core: it is the second opinion the suite compares the routers with.
 */
import { createAccount, createApiKey, type Dataset, type DatasetIpo, type DatasetSnapshot, type GmpField, type GmpInterval, type GmpSeries, type GmpSnapshot, importDataset, type Ipo, type IpoStatus, revokeApiKey, type Store } from '@ipokit/core';
import type { SubscriptionSeries, SubscriptionSnapshot, SubscriptionTimes } from '@ipokit/core';
import type { SubscriptionRecord } from '@ipokit/core/backend';

/** The suite's "now": 2026-11-22T06:30:00.000Z, 12:00 in India. */
export const FIXTURE_NOW = Date.UTC(2026, 10, 22, 6, 30);

/** The IST calendar day of {@link FIXTURE_NOW}. */
export const FIXTURE_TODAY = '2026-11-22';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Ids of the fixture's IPOs, by a short name (see {@link fixtureDataset}). */
export const IPO_IDS = Object.freeze({
  // open
  orbit: '2026000001',
  nimbus: '2026000002',
  textiles: '2026000003',
  indusBonds: '2026000004',
  // listed
  lumen: '2026000101',
  kappa: '2026000100',
  harbor: '2026000103',
  coastalBonds: '2025000104',
  meridian: '2026000105',
  // closed
  quartz: '2026000201',
  saffron: '2026000199',
  tidal: '2026000200',
  vega: '2026000203',
  // upcoming
  aster: '2026000301',
  beacon: '2026000300',
  orbitHoldings: 'orbit',
  crest: '2027000302',
  // announced
  novaChem: '2026000401',
  novaPower: '2026000402',
  beta: '2026000403',
  alphaIpo: '2026000405',
  alphaSme: '2026000404',
  eclair: '2026000406',
  arc: '2026000407',
  fullWidth: '2026000408',
});

/**
 * The ids of each status on {@link FIXTURE_TODAY}, in the contract's order (docs/spec.md#list),
 * written by hand.
 */
export const EXPECTED_ORDER: Readonly<Record<IpoStatus, readonly string[]>> = Object.freeze({
  // startDate ascending, then id
  open: ['2026000004', '2026000001', '2026000002', '2026000003'],
  // startDate ascending, then id ('2026000300' before '2026000301' on the same day)
  upcoming: ['2026000300', '2026000301', 'orbit', '2027000302'],
  // endDate descending (startDate standing in for a null endDate), then id
  closed: ['2026000203', '2026000199', '2026000200', '2026000201'],
  // listingDate descending, then id
  listed: ['2026000103', '2026000100', '2026000101', '2026000105', '2025000104'],
  // name in code-point order ('Z' < 'b' < 'É' < 'Ｆ' < '𝔸'), then id
  announced: ['2026000404', '2026000405', '2026000401', '2026000402', '2026000403', '2026000406', '2026000408', '2026000407'],
});

/** The one IPO with every field filled in: "ORBIT", open on {@link FIXTURE_TODAY}. */
const ORBIT: DatasetIpo = {
  id: '2026000001',
  name: 'Orbit Aerospace Ltd',
  symbol: 'ORBIT',
  slug: 'orbit-aerospace-ipo',
  type: 'EQ',
  exchanges: ['bse', 'nse'],
  infoUrl: 'https://example.com/ipo/orbit',
  nseInfoUrl: 'https://www.nseindia.com/market-data/issue-information?symbol=ORBIT&series=EQ',
  prospectusUrl: 'https://example.com/ipo/orbit/rhp.pdf',
  logo: null,
  startDate: '2026-11-20',
  endDate: '2026-11-24',
  listingDate: '2026-11-27',
  priceRange: '95.5-100',
  minQty: 150,
  minAmount: 15000,
  issueSize: '192cr',
  listingGain: null,
  schedule: [
    { event: 'Listing', date: '2026-11-27' },
    { event: 'Open', date: '2026-11-20' },
    { event: 'Allotment', date: '2026-11-25' },
    { event: 'Refunds', date: '2026-11-26' },
    { event: 'Demat credit', date: '2026-11-26' },
    { event: 'Close', date: '2026-11-24' },
  ],
  about: 'Orbit builds "small" satellites \u2014 and launch services.\nSecond line.',
  strengths: ['Order book of 3 years', 'Margins'],
  risks: ['Customer concentration'],
  mediaCoverageLinks: [],
  registrar: 'KFin Technologies Ltd',
  // Not in byte order: the given order is kept.
  leadManagers: ['Kotak Mahindra Capital Co Ltd', 'Axis Capital Ltd'],
  marketMaker: null,
  sector: 'Aerospace & Defence',
  listingPrices: [],
};

/** Builds a plain IPO record; everything not given is omitted (reads as null / []). */
function ipo(fields: DatasetIpo): DatasetIpo {
  return fields;
}

const IPOS: readonly DatasetIpo[] = [
  // ---- listed (listingDate <= today)
  // Listing prices given bse first (the wire shows nse first); an issue size in "crore".
  ipo({
    id: '2026000101', name: 'Lumen Retail', symbol: 'LUMEN', slug: 'lumen-retail-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-12', endDate: '2026-11-14', listingDate: '2026-11-20', priceRange: '210-221', minQty: 67, minAmount: 14807, issueSize: '24.50 Crore', listingGain: '15.5',
    sector: 'Retail',
    listingPrices: [
      { exchange: 'bse', open: 255, high: 260.5, low: 250, close: 255.05 },
      { exchange: 'nse', open: 255.25, high: 261, low: 249.9, close: 255 },
    ],
  }),
  ipo({ id: '2026000100', name: 'Kappa Tools', symbol: 'KAPPA', slug: 'kappa-tools-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-10', endDate: '2026-11-13', listingDate: '2026-11-20', listingGain: '-2' }),
  ipo({ id: '2026000103', name: 'Harbor Fintech', symbol: 'HARBOR', slug: 'harbor-fintech-sme-ipo', type: 'SME', exchanges: ['bse'], startDate: '2026-11-14', endDate: '2026-11-18', listingDate: '2026-11-22', priceRange: '100-100', minQty: 1200, issueSize: '12.6crores', registrar: 'Bigshare Services Pvt Ltd', leadManagers: ['Hem Securities Ltd'], marketMaker: 'Hem Finlease Pvt Ltd', sector: 'Fintech' }),
  ipo({ id: '2025000104', name: 'Coastal Rail Bonds', symbol: null, slug: 'coastal-rail-bonds', type: 'DEBT', exchanges: ['nse'], startDate: '2025-11-27', endDate: '2025-12-05', listingDate: '2025-12-10', issueSize: '1000cr' }),
  // The derived fields below are wrong on purpose: a dataset's derived fields are ignored.
  ipo({ id: '2026000105', name: 'Meridian Power', symbol: 'MERID', slug: 'meridian-power-ipo', type: 'EQ', exchanges: ['bse'], startDate: '2026-09-22', endDate: '2026-09-24', listingDate: '2026-09-29', status: 'upcoming', isSme: true, lotSize: 7, gmp: null, priceBand: { low: 1, high: 2 }, issueSizeCrore: 5, subscription: { asOf: '2026-09-24T12:00:00.000Z' } }),
  // ---- closed
  ipo({ id: '2026000201', name: 'Quartz Labs', symbol: 'QUARTZ', slug: 'quartz-labs-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-17', endDate: '2026-11-19', listingDate: '2026-11-24' }),
  ipo({ id: '2026000199', name: 'Saffron Agro', symbol: 'SAFFRON', slug: 'saffron-agro-sme-ipo', type: 'SME', exchanges: ['nse'], startDate: '2026-11-19', endDate: null }),
  ipo({ id: '2026000200', name: 'Tidal Shipping', symbol: 'TIDAL', slug: 'tidal-shipping-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-15', endDate: '2026-11-19' }),
  ipo({ id: '2026000203', name: 'Vega Steel', symbol: 'VEGA', slug: 'vega-steel-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-21', endDate: '2026-11-21' }),
  // ---- open
  ORBIT,
  ipo({ id: '2026000002', name: 'Nimbus Analytics', symbol: 'NIMBUS', slug: 'nimbus-analytics-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2026-11-25' }),
  ipo({ id: '2026000003', name: 'Śrī Lakshmī Ṭextiles', symbol: 'SLTEX', slug: 'sri-lakshmi-textiles-sme-ipo', type: 'SME', exchanges: ['nse'], startDate: '2026-11-22', endDate: null }),
  ipo({ id: '2026000004', name: 'Indus Infra Bonds', symbol: null, slug: 'indus-infra-bonds', type: 'DEBT', exchanges: ['nse', 'bse'], startDate: '2026-11-19', endDate: '2026-11-22' }),
  // ---- upcoming
  ipo({ id: '2026000301', name: 'Aster Biotech', symbol: 'ASTER', slug: 'aster-biotech-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-25', endDate: '2026-11-27' }),
  ipo({ id: '2026000300', name: 'Beacon Foods', symbol: 'BEACON', slug: 'beacon-foods-sme-ipo', type: 'SME', exchanges: ['bse'], startDate: '2026-11-25', endDate: '2026-11-28' }),
  // Its id equals ORBIT's symbol in another case: precedence id > symbol.
  ipo({ id: 'orbit', name: 'Orbit Holdings', symbol: 'ORBH', slug: 'orbit-holdings', type: 'EQ', exchanges: ['nse'], startDate: '2026-12-03', endDate: null }),
  ipo({ id: '2027000302', name: 'Crest R&D Motors', symbol: 'R&D', slug: 'crest-rd-motors-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2027-01-05', endDate: '2027-01-07' }),
  // ---- announced (no startDate)
  // symbol NOVA vs slug "nova" of another IPO: precedence symbol > slug.
  ipo({ id: '2026000401', name: 'Nova Chemicals', symbol: 'NOVA', slug: 'nova-chemicals', type: 'EQ', exchanges: ['nse', 'bse'] }),
  ipo({ id: '2026000402', name: 'Nova Power', symbol: 'NOVAPWR', slug: 'nova', type: 'EQ', exchanges: ['nse'] }),
  ipo({ id: '2026000403', name: 'beta Labs', symbol: 'BETA', slug: 'beta-labs', type: 'EQ' }),
  ipo({ id: '2026000405', name: 'Alpha Mills', symbol: 'ALPHA', slug: 'alpha-mills-ipo', type: 'EQ', exchanges: ['nse'] }),
  ipo({ id: '2026000404', name: 'Alpha Mills', symbol: 'ALPHASME', slug: 'alpha-mills-sme-ipo', type: 'SME', exchanges: ['bse'] }),
  ipo({ id: '2026000406', name: 'Éclair Bakes', symbol: 'ECLAIR', slug: 'eclair-bakes', type: 'EQ' }),
  ipo({ id: '2026000407', name: '\u{1D538}rc Ventures', symbol: 'ARCV', slug: 'arc-ventures', type: 'EQ' }),
  ipo({ id: '2026000408', name: '\uFF26ull Width Co', symbol: 'FWC', slug: 'full-width-co', type: 'EQ' }),
];

/** Source names of the generated snapshots, deliberately not in byte order. */
const SOURCE_NAMES = ['ipowatch', 'investorgain', 'Zeta', 'ipocentral', 'éclair-gmp'] as const;
/** Minutes of the UTC day at which generated snapshots may fall. */
const SLOTS = [212, 214, 221, 240, 333, 387, 555, 767, 959, 1439] as const;
/** First day of generated ORBIT snapshots. */
const SERIES_FIRST_DAY = Date.UTC(2026, 9, 8);
/** The instant of the ORBIT snapshot that lies after {@link FIXTURE_NOW}. */
export const FUTURE_SNAPSHOT_AT = FIXTURE_NOW + 1;

function isoAt(ms: number, offset: boolean): string {
  if (!offset) return new Date(ms).toISOString();
  // The same instant written in IST, to check that offsets are read.
  return new Date(ms + 5.5 * HOUR).toISOString().replace('Z', '+05:30');
}

function generatedSnapshots(): DatasetSnapshot[] {
  const out: DatasetSnapshot[] = [];
  for (let k = 0; SERIES_FIRST_DAY + k * DAY <= FIXTURE_NOW; k++) {
    const day = SERIES_FIRST_DAY + k * DAY;
    SLOTS.forEach((minute, s) => {
      if ((k + s) % 3 === 0) return;
      const at = day + minute * MINUTE + (s % 2 === 0 ? 0 : 17_250);
      if (at >= FIXTURE_NOW) return;
      const n = 1 + ((k + s) % 5);
      const allNull = (k * 7 + s) % 19 === 0;
      const sources = SOURCE_NAMES.slice(0, n).map((name, j) => {
        const paise = ((k * 131 + s * 17 + j * 53) % 3001) - 700;
        const isNull = allNull || (k + s + j) % 6 === 0;
        return { name, gmpPrice: isNull ? null : paise / 100 };
      });
      out.push({ ipoId: IPO_IDS.orbit, timestamp: isoAt(at, s === 4), sources: sources.reverse() });
    });
  }
  return out;
}

/** Hand-picked snapshots whose arithmetic needs exact rounding (docs/spec.md#numbers). */
const HAND_PICKED: readonly DatasetSnapshot[] = [
  // 1 and 1.01: mean 1.005 -> 1.01 (a float mean gives 1.0049999999999999)
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T10:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 1 }, { name: 'investorgain', gmpPrice: 1.01 }] },
  // -2.67 and -2.68: mean -2.675 -> -2.68; mode tie -> the lowest
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T10:02:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: -2.67 }, { name: 'investorgain', gmpPrice: -2.68 }] },
  // 45.12 and 45.13: mean 45.125 -> 45.13
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T10:04:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 45.12 }, { name: 'Zeta', gmpPrice: 45.13 }] },
  // one 5m bucket of 1 and 1.01: the bucket's mean 1.005 -> 1.01
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T11:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 1 }] },
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T11:01:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 1.01 }] },
  // one 5m bucket of -1 and -1.01: -1.005 -> -1.01
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T11:10:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: -1 }] },
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T11:11:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: -1.01 }, { name: 'Zeta', gmpPrice: null }] },
  // exactly at now: the latest visible snapshot
  {
    ipoId: IPO_IDS.orbit,
    timestamp: '2026-11-22T06:30:00.000Z',
    sources: [
      { name: 'ipowatch', gmpPrice: 41 },
      { name: 'investorgain', gmpPrice: null },
      { name: 'éclair-gmp', gmpPrice: 40.5 },
      { name: 'Zeta', gmpPrice: 44 },
      { name: 'ipocentral', gmpPrice: 40.5 },
      { name: 'IPO Premium', gmpPrice: 41 },
    ],
  },
  // after now: invisible everywhere until its time comes
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-22T06:30:00.001Z', sources: [{ name: 'ipowatch', gmpPrice: 999 }] },
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-23T05:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 777 }] },
  // Nimbus: one snapshot without any numeric source
  { ipoId: IPO_IDS.nimbus, timestamp: '2026-11-21T08:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: null }, { name: 'Zeta', gmpPrice: null }] },
  // Aster: only a snapshot after now
  { ipoId: IPO_IDS.aster, timestamp: '2026-11-24T08:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12 }] },
  // Lumen: two old snapshots
  { ipoId: IPO_IDS.lumen, timestamp: '2026-10-20T09:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 20 }, { name: 'Zeta', gmpPrice: 22.5 }] },
  { ipoId: IPO_IDS.lumen, timestamp: '2026-11-19T09:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 31.2 }] },
];

/** A subscription snapshot as the fixture dataset gives it. */
type FixtureSubscription = NonNullable<Dataset['subscription']>[number];

/**
 * The subscription snapshots (docs/spec.md#subscription): some written with an IST offset,
 * categories left out or given as null, 0 and the largest value, one exactly at
 * {@link FIXTURE_NOW} and some after it, one at the earliest instant a dataset may hold.
 */
const SUBSCRIPTION: readonly FixtureSubscription[] = [
  // ORBIT, day by day while open; the first written in IST, without `shareholder`
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-20T17:00:00+05:30', times: { qib: 0.01, nii: 0.52, bnii: 0.41, snii: 0.74, retail: 1.2, employee: 0.3, total: 0.66 } },
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-21T11:30:00.000Z', times: { qib: 1.5, nii: 2.25, bnii: 2, snii: 2.75, retail: 3.1, employee: 1, shareholder: null, total: 2.4 } },
  // exactly at now: the latest visible one
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-22T12:00:00.000+05:30', times: { qib: 12.5, nii: 30.05, bnii: 28, snii: 34.15, retail: 8.9, employee: 4.45, shareholder: 0, total: 15.87 } },
  // after now: invisible until their time comes
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-22T06:30:00.001Z', times: { total: 99 } },
  { ipoId: IPO_IDS.orbit, timestamp: '2026-11-24T10:00:00.000Z', times: { qib: 200, total: 150.5 } },
  // Nimbus: retail alone
  { ipoId: IPO_IDS.nimbus, timestamp: '2026-11-21T12:00:00.000Z', times: { retail: 0.5 } },
  // Aster: only after now
  { ipoId: IPO_IDS.aster, timestamp: '2026-11-25T09:00:00.000Z', times: { total: 1 } },
  // Lumen: two, the later one last in the dataset
  { ipoId: IPO_IDS.lumen, timestamp: '2026-11-14T11:30:00.000Z', times: { qib: 100.25, nii: 50, retail: 10.5, total: 60.12 } },
  { ipoId: IPO_IDS.lumen, timestamp: '2026-11-13T11:30:00.000Z', times: { total: 5 } },
  // Harbor (SME): 0 and the largest value
  { ipoId: IPO_IDS.harbor, timestamp: '2026-11-18T12:00:00.000Z', times: { nii: 9_999_999.99, retail: 0, total: 1_234_567.89 } },
  // Tidal: one at 2000-01-01T00:00:00.000Z, where the route's default range starts
  { ipoId: IPO_IDS.tidal, timestamp: '2000-01-01T05:30:00+05:30', times: { total: 0.01 } },
  { ipoId: IPO_IDS.tidal, timestamp: '2026-11-19T12:00:00.000Z', times: { total: 3 } },
];

/**
 * A fresh copy of the fixture dataset: 25 IPOs covering every status (with ties on the
 * ordering dates, a closed IPO without endDate, an SME on one exchange, DEBT without a
 * symbol, non-ASCII names, an id equal to another IPO's symbol in another case, a symbol
 * equal to another IPO's slug), and about 300 GMP snapshots of ORBIT over 46 days with
 * nulls, negative prices, halves that need exact rounding, one snapshot exactly at
 * {@link FIXTURE_NOW} and two after it, and a dozen subscription snapshots (ORBIT's
 * with one exactly at {@link FIXTURE_NOW} and two after it).
 *
 * @example
 * ```ts
 * await importDataset(store, fixtureDataset());
 * ```
 */
export function fixtureDataset(): Dataset {
  const data: Dataset = { ipos: [...IPOS], gmp: [...generatedSnapshots(), ...HAND_PICKED], subscription: [...SUBSCRIPTION] };
  return JSON.parse(JSON.stringify(data)) as Dataset;
}

/** Keys of the fixture's accounts, as `createApiKey` returned them. */
export interface FixtureKeys {
  /** Free plan. */
  free: string;
  /** Paid plan. */
  paid: string;
  /** A second key of the same paid account. */
  paid2: string;
  /** Pro plan without the GMP add-on. */
  pro: string;
  /** Pro plan with the GMP add-on. */
  proGmp: string;
  /** A revoked key of the pro + add-on account. */
  revoked: string;
  /** A well-formed key that no account has. */
  wrong: string;
}

/** What {@link seedFixture} created. */
export interface SeededFixture {
  keys: FixtureKeys;
  /** Account ids by plan name, as in {@link FixtureKeys}. */
  accounts: { free: string; paid: string; pro: string; proGmp: string };
  /** Key ids (for `revokeApiKey`) by the names of {@link FixtureKeys}. */
  keyIds: Omit<FixtureKeys, 'wrong'>;
}

/**
 * Imports {@link fixtureDataset} into an empty store and creates the accounts and keys:
 * free, paid (two keys), pro without and pro with the GMP add-on, and a revoked key.
 *
 * @example
 * ```ts
 * const { keys } = await seedFixture(memoryStore());
 * await fetch(url, { headers: { 'x-api-key': keys.paid } });
 * ```
 */
export async function seedFixture(store: Store): Promise<SeededFixture> {
  await importDataset(store, fixtureDataset());
  const at = { now: () => new Date(FIXTURE_NOW) };
  const free = await createAccount(store, { name: 'Free user', plan: 'free' }, at);
  const paid = await createAccount(store, { name: 'Paid user', plan: 'paid' }, at);
  const pro = await createAccount(store, { name: 'Pro user', plan: 'pro', gmpAddon: false }, at);
  const proGmp = await createAccount(store, { name: 'Pro GMP user', plan: 'pro', gmpAddon: true }, at);
  const k = {
    free: await createApiKey(store, { accountId: free.id, label: 'free key' }, at),
    paid: await createApiKey(store, { accountId: paid.id, label: 'paid key' }, at),
    paid2: await createApiKey(store, { accountId: paid.id, label: 'paid key 2' }, at),
    pro: await createApiKey(store, { accountId: pro.id, label: 'pro key' }, at),
    proGmp: await createApiKey(store, { accountId: proGmp.id, label: 'pro gmp key' }, at),
    revoked: await createApiKey(store, { accountId: proGmp.id, label: 'revoked key' }, at),
  };
  await revokeApiKey(store, k.revoked.id, at);
  return {
    keys: {
      free: k.free.key,
      paid: k.paid.key,
      paid2: k.paid2.key,
      pro: k.pro.key,
      proGmp: k.proGmp.key,
      revoked: k.revoked.key,
      wrong: 'ipk_0000000000000000000000000000WRNG',
    },
    accounts: { free: free.id, paid: paid.id, pro: pro.id, proGmp: proGmp.id },
    keyIds: { free: k.free.id, paid: k.paid.id, paid2: k.paid2.id, pro: k.pro.id, proGmp: k.proGmp.id, revoked: k.revoked.id },
  };
}

// ---------------------------------------------------------------------------------------
// The reference: what the API must answer for the fixture, computed naively.

/**
 * The status of a fixture IPO on an IST day (docs/spec.md#status), computed independently.
 *
 * @example
 * ```ts
 * fixtureStatus(IPO_IDS.orbit, FIXTURE_TODAY); // 'open'
 * ```
 */
export function fixtureStatus(id: string, today: string): IpoStatus {
  const r = record(id);
  const start = r.startDate ?? null;
  const end = r.endDate ?? null;
  const listing = r.listingDate ?? null;
  if (listing !== null && listing <= today) return 'listed';
  if (start === null) return 'announced';
  if (today > (end ?? start)) return 'closed';
  if (start <= today) return 'open';
  return 'upcoming';
}

/**
 * The IPO object the API must send for a fixture IPO (docs/spec.md#ipo-object), keys in order;
 * `subscription` is its latest subscription snapshot at or before `subscriptionAt` (default
 * {@link FIXTURE_NOW}: the router's now), and `gmpAt` adds `gmp` (the latest snapshot at or before it).
 *
 * @example
 * ```ts
 * JSON.stringify({ ipo: expectedIpo(IPO_IDS.orbit) }); // the exact body of GET /ipos/ORBIT
 * ```
 */
export function expectedIpo(id: string, options: { today?: string; gmpAt?: number; subscriptionAt?: number } = {}): Ipo {
  const r = record(id);
  const band = bandPaise(id);
  const exchanges = (['nse', 'bse'] as const).filter((e) => (r.exchanges ?? []).includes(e));
  const schedule = (r.schedule ?? [])
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.date < b.e.date ? -1 : a.e.date > b.e.date ? 1 : a.i - b.i))
    .map(({ e }) => ({ event: e.event, date: e.date }));
  const out: Ipo = {
    id: r.id,
    name: r.name,
    symbol: r.symbol ?? null,
    slug: r.slug,
    type: r.type,
    isSme: r.type === 'SME',
    exchanges,
    infoUrl: r.infoUrl ?? null,
    nseInfoUrl: r.nseInfoUrl ?? null,
    prospectusUrl: r.prospectusUrl ?? null,
    logo: r.logo ?? null,
    startDate: r.startDate ?? null,
    endDate: r.endDate ?? null,
    listingDate: r.listingDate ?? null,
    priceRange: r.priceRange ?? null,
    minQty: r.minQty ?? null,
    lotSize: r.minQty ?? null,
    minAmount: r.minAmount ?? null,
    issueSize: r.issueSize ?? null,
    listingGain: r.listingGain ?? null,
    status: fixtureStatus(id, options.today ?? FIXTURE_TODAY),
    schedule,
    about: r.about ?? null,
    strengths: r.strengths ?? [],
    risks: r.risks ?? [],
    mediaCoverageLinks: r.mediaCoverageLinks ?? [],
    priceBand: band === null ? null : { low: band.low / 100, high: band.high / 100 },
    issueSizeCrore: crore(r.issueSize ?? null),
    registrar: r.registrar ?? null,
    leadManagers: r.leadManagers ?? [],
    marketMaker: r.marketMaker ?? null,
    sector: r.sector ?? null,
    listingPrices: (['nse', 'bse'] as const).flatMap((e) =>
      (r.listingPrices ?? []).filter((p) => p.exchange === e).map((p) => ({ exchange: p.exchange, open: p.open, high: p.high, low: p.low, close: p.close })),
    ),
    subscription: expectedSubscription(id, options.subscriptionAt ?? FIXTURE_NOW),
  };
  if (options.gmpAt !== undefined) out.gmp = expectedSnapshot(id, options.gmpAt);
  return out;
}

/** A fixture IPO's price band in paise, read naively from its `priceRange`. */
function bandPaise(id: string): { low: number; high: number } | null {
  const range = record(id).priceRange ?? null;
  if (range === null) return null;
  const [low, high] = range.split('-').map((p) => Math.round(Number(p) * 100)) as [number, number];
  return { low, high };
}

/** `issueSize` in crore: digits[.digits], spaces, then cr or crore in any case; else null. */
function crore(issueSize: string | null): number | null {
  const m = issueSize === null ? null : /^(\d+(?:\.\d+)?) *(cr|crore)$/i.exec(issueSize);
  return m === null ? null : Number(m[1]);
}

/**
 * The latest snapshot of a fixture IPO at or before `at`, as the API shows it, or null.
 *
 * @example
 * ```ts
 * expectedSnapshot(IPO_IDS.orbit, FIXTURE_NOW)?.aggregations.mean; // 41.4
 * ```
 */
export function expectedSnapshot(ipoId: string, at: number): GmpSnapshot | null {
  let best: Snap | null = null;
  for (const s of snapshots()) {
    if (s.ipoId === ipoId && s.at <= at && (best === null || s.at > best.at)) best = s;
  }
  if (best === null) return null;
  const a = aggregate(best.values.map((v) => v.paise));
  const high = bandPaise(ipoId)?.high ?? null;
  const mean = a.mean;
  // high + mean, and mean / high x 100 in hundredths of a percent: mean x 10,000 / high
  const figures = high === null || high === 0 || mean === null ? null : { price: rupees(high + mean), percent: rupees(roundHalfAway(mean * 10_000, high)) };
  return {
    lastUpdatedAt: new Date(best.at).toISOString(),
    aggregations: {
      mean: rupees(a.mean),
      median: rupees(a.median),
      min: rupees(a.min),
      max: rupees(a.max),
      mode: rupees(a.mode),
    },
    estimatedListingPrice: figures?.price ?? null,
    gmpPercent: figures?.percent ?? null,
    sources: best.values.map((v) => ({ name: v.name, gmpPrice: rupees(v.paise) as number })),
  };
}

/** The category keys of a subscription snapshot, in wire order. */
const CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;

/**
 * The IPO object's `subscription` for a fixture IPO: its latest subscription snapshot at
 * or before `at`, every category in order (null when not given), or null.
 *
 * @example
 * ```ts
 * expectedSubscription(IPO_IDS.orbit, FIXTURE_NOW)?.times.total; // 15.87
 * ```
 */
export function expectedSubscription(ipoId: string, at: number): SubscriptionSnapshot | null {
  let best: SubscriptionRecord | null = null;
  for (const s of subscriptionRecords()) {
    if (s.ipoId === ipoId && s.timestamp <= at && (best === null || s.timestamp > best.timestamp)) best = s;
  }
  return best === null ? null : { asOf: new Date(best.timestamp).toISOString(), times: best.times };
}

/** Query of {@link expectedSubscriptionSeries}: raw from/to dates (null: absent) and the router's now. */
export interface SubscriptionSeriesQuery {
  ipoId: string;
  from: string | null;
  to: string | null;
  now: number;
}

/**
 * The subscription route's body for a fixture IPO (docs/spec.md#subscription), or `'from'`
 * when the range is empty (a 400 naming `from`): every snapshot from `from` 00:00Z (absent:
 * 2000-01-01T00:00:00.000Z) to `to` 23:59:59.999Z (absent: now), none after now, ascending.
 *
 * @example
 * ```ts
 * expectedSubscriptionSeries({ ipoId: IPO_IDS.orbit, from: null, to: null, now: FIXTURE_NOW }).meta.count; // 3
 * ```
 */
export function expectedSubscriptionSeries(q: SubscriptionSeriesQuery): SubscriptionSeries | 'from' {
  const start = q.from === null ? Date.UTC(2000, 0, 1) : Date.parse(`${q.from}T00:00:00.000Z`);
  const end = q.to === null ? q.now : Date.parse(`${q.to}T23:59:59.999Z`);
  if (start > end) return 'from';
  const series = subscriptionRecords()
    .filter((s) => s.ipoId === q.ipoId && s.timestamp >= start && s.timestamp <= end && s.timestamp <= q.now)
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((s) => ({ timestamp: new Date(s.timestamp).toISOString(), ...s.times }));
  const r = record(q.ipoId);
  return { ipoId: r.id, symbol: r.symbol ?? null, series, meta: { from: new Date(start).toISOString(), to: new Date(end).toISOString(), count: series.length } };
}

/** Query of {@link expectedSeries}: the canonical interval and field, raw from/to. */
export interface SeriesQuery {
  ipoId: string;
  interval: GmpInterval;
  field: GmpField;
  from: string | null;
  to: string | null;
  now: number;
}

/**
 * The GMP series body the API must send for a fixture IPO (docs/spec.md#gmp-series), or `'from'`
 * when the range is empty (start after end: a 400 naming `from`). A naive bucketing:
 * every visible snapshot in range goes to the bucket holding it.
 *
 * @example
 * ```ts
 * expectedSeries({ ipoId: IPO_IDS.orbit, interval: 'daily', field: 'mean', from: null, to: null, now: FIXTURE_NOW });
 * ```
 */
export function expectedSeries(q: SeriesQuery): GmpSeries | 'from' {
  let start: number;
  let end: number;
  if (q.to === null) {
    end = q.now;
    start = q.from === null ? q.now - 30 * DAY : Date.parse(`${q.from}T00:00:00.000Z`);
  } else {
    end = Date.parse(`${q.to}T23:59:59.999Z`);
    start = q.from === null ? Date.parse(`${q.to}T00:00:00.000Z`) - 30 * DAY : Date.parse(`${q.from}T00:00:00.000Z`);
  }
  if (start > end) return 'from';
  const buckets = new Map<number, number[]>();
  for (const s of snapshots()) {
    if (s.ipoId !== q.ipoId || s.at < start || s.at > end || s.at > q.now) continue;
    const b = bucketOf(s.at, q.interval);
    const value = aggregate(s.values.map((v) => v.paise))[q.field];
    const list = buckets.get(b) ?? [];
    if (value !== null) list.push(value);
    buckets.set(b, list);
  }
  const series = [...buckets.keys()]
    .sort((a, b) => a - b)
    .map((b) => {
      const values = buckets.get(b) ?? [];
      const sum = values.reduce((x, y) => x + y, 0);
      return { timestamp: new Date(b).toISOString(), price: values.length === 0 ? null : rupees(roundHalfAway(sum, values.length)) };
    });
  const r = record(q.ipoId);
  return {
    ipoId: r.id,
    symbol: r.symbol ?? null,
    interval: q.interval,
    field: q.field,
    series,
    meta: { from: new Date(start).toISOString(), to: new Date(end).toISOString(), count: series.length },
  };
}

/**
 * The start of the bucket holding instant `t`, computed with calendar arithmetic
 * (weeks start on Monday 00:00Z).
 *
 * @example
 * ```ts
 * new Date(bucketOf(Date.UTC(2026, 10, 5, 12), 'weekly')).toISOString(); // '2026-11-02T00:00:00.000Z'
 * ```
 */
export function bucketOf(t: number, interval: GmpInterval): number {
  const minutes: Record<Exclude<GmpInterval, 'daily' | 'weekly'>, number> = { '5m': 5, '10m': 10, '15m': 15, '30m': 30, hourly: 60 };
  if (interval === 'daily' || interval === 'weekly') {
    const d = new Date(t);
    const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    if (interval === 'daily') return midnight;
    const sinceMonday = (new Date(midnight).getUTCDay() + 6) % 7;
    return midnight - sinceMonday * DAY;
  }
  const size = minutes[interval] * MINUTE;
  return Math.floor(t / size) * size;
}

// ---------------------------------------------------------------------------------------

interface Snap {
  ipoId: string;
  at: number;
  /** Numeric sources, ascending by name in code-point order, in paise. */
  values: Array<{ name: string; paise: number }>;
}

let snapshotCache: Snap[] | null = null;

function snapshots(): Snap[] {
  if (snapshotCache !== null) return snapshotCache;
  snapshotCache = (fixtureDataset().gmp ?? []).map((s) => ({
    ipoId: s.ipoId,
    at: Date.parse(s.timestamp),
    values: s.sources
      .filter((x): x is { name: string; gmpPrice: number } => x.gmpPrice !== null)
      .map((x) => ({ name: x.name, paise: Math.round(x.gmpPrice * 100) }))
      .sort((a, b) => codePointCompare(a.name, b.name)),
  }));
  return snapshotCache;
}

/** A dataset subscription snapshot as a store keeps it: epoch ms, every category (absent: null). */
function subscriptionRecord(s: FixtureSubscription): SubscriptionRecord {
  const times = {} as SubscriptionTimes;
  for (const c of CATEGORIES) times[c] = s.times[c] ?? null;
  return { ipoId: s.ipoId, timestamp: Date.parse(s.timestamp), times };
}

function subscriptionRecords(): SubscriptionRecord[] {
  return SUBSCRIPTION.map(subscriptionRecord);
}

function record(id: string): DatasetIpo {
  const r = IPOS.find((x) => x.id === id);
  if (r === undefined) throw new Error(`no fixture IPO ${id}`);
  return r;
}

function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function aggregate(values: readonly number[]): Record<GmpField, number | null> {
  if (values.length === 0) return { mean: null, median: null, min: null, max: null, mode: null };
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? (sorted[mid] ?? 0) : roundHalfAway((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0), 2);
  const counts = new Map<number, number>();
  for (const v of sorted) counts.set(v, (counts.get(v) ?? 0) + 1);
  let mode = sorted[0] ?? 0;
  let best = 0;
  for (const [v, c] of counts) {
    if (c > best || (c === best && v < mode)) {
      best = c;
      mode = v;
    }
  }
  return {
    mean: roundHalfAway(sorted.reduce((a, b) => a + b, 0), n),
    median,
    min: sorted[0] ?? 0,
    max: sorted[n - 1] ?? 0,
    mode,
  };
}

/** n / d rounded half away from zero, for integers with d > 0. */
function roundHalfAway(n: number, d: number): number {
  const q = Math.floor((2 * Math.abs(n) + d) / (2 * d));
  return n < 0 ? -q + 0 : q;
}

function rupees(paise: number | null): number | null {
  return paise === null ? null : paise / 100 + 0;
}
