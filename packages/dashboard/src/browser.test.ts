/**
 * The dashboard in a real Chromium, against a real Express 5 server (browser-fixture.ts): keys
 * (create, revoke, rotate) checked with the API itself, webhooks (add with the secret shown
 * once, deliveries of an import, Load more, Replay, delete, the plan's refusal, a store without
 * webhooks) checked with the store, usage, the IPO explorer and its chart
 * checked against the API's series, a 20,000-point chart's render time, axe on every page, the
 * keyboard alone, screenshots at 360 and 1440 px in both schemes, and no request leaving the
 * server. Skipped (one line) when there is no Chromium: CHROMIUM_PATH or /usr/bin/chromium.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium as playwright, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { createAccount, createApiKey, createWebhook, EVENT_TYPES, getDelivery, importDataset, listApiKeys, listDeliveries, listWebhooks, type DatasetSnapshot, type EventType } from '@ipokit/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatInstant, formatIssueSize, formatIstInstant, formatPercent, formatPriceBand, formatRupees, formatTimes } from './app/format.js';
import { ACCOUNT_COOKIE, findChromium, HOOK_IPO, istDay, LISTED_IPO, LISTED_PRICES, LONG_IPO, RECEIVED_BODY, startDashboardServer, UNAVAILABLE_BODY, utcDay, type DashboardServer } from './browser-fixture.js';

const chromium = findChromium();
const OUT = fileURLToPath(new URL('../../../test-results/dashboard/', import.meta.url));
const TEST_MS = 30_000;
/** The tests that load every view (11 of them since the webhooks page's dialogs joined), in several contexts at once. */
const VIEWS_MS = 180_000;
const DAY = 86_400_000;

let server: DashboardServer;
let browser: Browser;
/** Every URL any page of this file asked for (checked by the last test). */
const requests: string[] = [];
/** The current test's uncaught page errors and console errors (each test must end with none). */
let problems: string[] = [];
/**
 * Console errors the current test expects: Chromium logs every 4xx answer to a fetch as "Failed
 * to load resource", so a test that asks for a refusal names its status here.
 */
let expectedErrors: RegExp[] = [];
const expectRefusal = (status: number) => expectedErrors.push(new RegExp(`^Failed to load resource: the server responded with a status of ${status} `));
/** The current test's contexts, closed after it. */
const contexts: BrowserContext[] = [];

interface GmpSeries {
  series: Array<{ timestamp: string; price: number | null }>;
  meta: { from: string; to: string; count: number };
}

/** A fresh context signed in as `account` (pro unless told), in India's zone and locale. */
async function newContext(account: 'pro' | 'free' | 'paid' = 'pro', options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-IN', timezoneId: 'Asia/Kolkata', ...options });
  contexts.push(context);
  await context.addCookies([{ name: ACCOUNT_COOKIE, value: server[account].id, url: server.baseUrl }]);
  return context;
}

async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !expectedErrors.some((e) => e.test(m.text()))) problems.push(`console error: ${m.text()}`);
  });
  return page;
}

/** A new page of `context` at the dashboard's `hash`, once `ready` shows. */
async function open(context: BrowserContext, hash: string, ready: string): Promise<Page> {
  const page = await newPage(context);
  await page.goto(`${server.dashboardUrl}${hash}`);
  await page.locator(ready).first().waitFor({ timeout: 15_000 });
  return page;
}

/** Loads the IPO page of `symbol` afresh in `page` and waits for its subscription chart: the chart's box. */
async function visitIpo(page: Page, symbol: string) {
  await page.goto(`${server.dashboardUrl}?load=${++loads}#/ipos/${symbol}`);
  const box = page.locator('.sub-chart .chart-box[data-render-ms]');
  await box.waitFor({ timeout: 15_000 });
  return box;
}

let loads = 0;
/**
 * Loads `view` afresh in `page` (a new page costs a renderer process; a new document in the
 * same page is cheaper): the query, which the dashboard ignores, makes every load a full one
 * rather than a move of the fragment.
 */
async function visit(page: Page, view: View): Promise<void> {
  await page.goto(`${server.dashboardUrl}?load=${++loads}${view.hash}`);
  await page.locator(view.ready).first().waitFor({ timeout: 15_000 });
  await view.then?.(page);
}

const apiStatus = async (key: string) => (await fetch(`${server.baseUrl}/ipos/ORBIT`, { headers: { 'x-api-key': key } })).status;

async function apiSeries(query: string): Promise<GmpSeries> {
  const res = await fetch(`${server.baseUrl}/ipos/${LONG_IPO.symbol}/gmp?${query}`, { headers: { 'x-api-key': server.pro.apiKey } });
  expect(res.status).toBe(200);
  return (await res.json()) as GmpSeries;
}

/** The key text the open "Your new API key" dialog shows. */
async function keyFromDialog(page: Page): Promise<string> {
  const dialog = page.getByRole('dialog', { name: 'Your new API key' });
  await dialog.waitFor();
  await expect(dialog.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(true);
  const key = await dialog.getByRole('textbox').inputValue();
  expect(key).toMatch(/^ipk_[0-9A-Za-z]{32}$/);
  return key;
}

/** Whether `text` is anywhere on the page: its markup, its text, or the value of a field. */
const onPage = (page: Page, text: string) =>
  page.evaluate((t) => document.documentElement.outerHTML.includes(t) || document.body.innerText.includes(t) || [...document.querySelectorAll('input, textarea')].some((el) => (el as HTMLInputElement).value.includes(t)), text);

/** The row of the keys table for the key with this prefix. */
const keyRow = (page: Page, prefix: string) => page.locator('table.keys tbody tr', { has: page.locator('code', { hasText: prefix }) });

/** The list item of the webhooks page for the endpoint with this URL. */
const hookItem = (page: Page, url: string) => page.locator('ul.hooks > li', { has: page.locator('h3', { hasText: url }) });

/** A new endpoint of the pro account, made through the core: its URL names the test. */
async function proHook(name: string, events: EventType[] = ['ipo.created']): Promise<{ id: string; url: string }> {
  const url = `https://${name}.receiver.example.com/hooks/${Date.now()}`;
  const made = await createWebhook(server.store, { accountId: server.pro.id, url, events });
  return { id: made.id, url };
}

let snapshotMinute = 0;
/** `n` new GMP snapshots of the fixture's webhook IPO, each at a time of its own (so each is a `gmp.snapshot` event). */
function newSnapshots(n: number): DatasetSnapshot[] {
  const base = Date.parse('2025-01-01T04:00:00.000Z');
  return Array.from({ length: n }, () => {
    const minute = ++snapshotMinute;
    return { ipoId: HOOK_IPO.id, timestamp: new Date(base + minute * 60_000).toISOString(), sources: [{ name: 'alpha', gmpPrice: 10 + (minute % 7) }] };
  });
}

/** The page's views: the hash, what shows when it is ready, and an action to run then. */
interface View {
  name: string;
  hash: string;
  ready: string;
  then?: (page: Page) => Promise<void>;
}

function views(): View[] {
  const now = Date.now();
  return [
    { name: 'account', hash: '#/', ready: '.windows' },
    { name: 'keys', hash: '#/keys', ready: 'table.keys' },
    { name: 'usage', hash: '#/usage', ready: '.usage-chart svg' },
    { name: 'ipos', hash: '#/ipos?status=open', ready: '.table-box table' },
    // Both charts drawn: the subscription's and the GMP's.
    { name: 'ipo', hash: `#/ipos/${LONG_IPO.symbol}?interval=30m&field=mean&from=${utcDay(now - 13 * DAY)}&to=${utcDay(now)}`, ready: 'main:has(.sub-chart .chart-box[data-render-ms]) .gmp-chart .chart-box[data-render-ms]' },
    { name: 'ipo-listed', hash: `#/ipos/${LISTED_IPO.symbol}`, ready: 'main:has(table.listing-prices) .sub-chart .chart-box[data-render-ms]' },
    { name: 'webhooks', hash: '#/webhooks', ready: 'ul.hooks' },
    { name: 'webhook-deliveries', hash: `#/webhooks/${server.pro.webhook.id}`, ready: 'table.deliveries' },
    // A dialog: shot as the screen shows it (a `then`, so not full page).
    { name: 'webhook-delivery', hash: `#/webhooks/${server.pro.webhook.id}?delivery=${server.pro.webhook.deliveries.retrying}`, ready: 'dialog pre.response-body', then: async () => undefined },
    {
      name: 'webhooks-rotate',
      hash: '#/webhooks',
      ready: 'ul.hooks',
      then: async (page) => {
        await page.getByRole('button', { name: /^Rotate secret of / }).first().click();
        await page.getByRole('dialog').getByRole('radio', { name: '24 hours' }).waitFor();
      },
    },
    {
      name: 'keys-rotate',
      hash: '#/keys',
      ready: 'table.keys',
      then: async (page) => {
        await page.getByRole('button', { name: /^Rotate key / }).first().click();
        await page.getByRole('dialog').getByLabel('Keep the old key working for').waitFor();
      },
    },
  ];
}

// One visible line when the file skips, whatever the reporter shows of the title.
if (chromium === null) console.warn('dashboard browser tests skipped: no Chromium at CHROMIUM_PATH or /usr/bin/chromium (.ci/run installs it)');
const TITLE = chromium === null ? 'dashboard in Chromium (skipped: no Chromium at CHROMIUM_PATH or /usr/bin/chromium; .ci/run installs it)' : 'dashboard in Chromium';

describe.skipIf(chromium === null)(TITLE, () => {
  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const [started, launched] = await Promise.all([
      startDashboardServer(),
      playwright.launch({
        executablePath: chromium!,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      }),
    ]);
    server = started;
    browser = launched;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  beforeEach(() => {
    problems = [];
    expectedErrors = [];
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    expect(problems, 'errors in the page').toEqual([]);
  });

  let created: { key: string; prefix: string } | undefined;

  it(
    'creates a key: shown once with Copy, it works, and it is gone once the dialog closes',
    async () => {
      const page = await open(await newContext(), '#/keys', 'table.keys');
      const expiry = new Date(Date.now() + 30 * DAY);
      // datetime-local, read in IST whatever the browser's zone: the date and time in India.
      const local = new Date(expiry.getTime() + 330 * 60_000).toISOString().slice(0, 16);
      await page.getByLabel('Label').fill('ci runner');
      await page.getByLabel('Expires (optional)').fill(local);
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = await keyFromDialog(page);
      await expect(page.getByRole('dialog').getByText(/It expires/).isVisible()).resolves.toBe(true);

      expect(await apiStatus(key)).toBe(200);
      const listed = (await listApiKeys(server.store, { accountId: server.pro.id })).find((k) => k.prefix === key.slice(0, 12));
      expect(listed?.label).toBe('ci runner');
      expect(listed?.expiresAt).toBe(new Date(`${local}:00.000+05:30`).toISOString());

      await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await keyRow(page, key.slice(0, 12)).waitFor();
      expect(await onPage(page, key)).toBe(false);
      expect(await onPage(page, key.slice(12))).toBe(false);
      created = { key, prefix: key.slice(0, 12) };
    },
    TEST_MS,
  );

  it(
    'revokes a key through the confirmation dialog: Cancel keeps it, Revoke stops it',
    async () => {
      expect(created, 'the key the first test created').toBeDefined();
      const { key, prefix } = created!;
      const page = await open(await newContext(), '#/keys', 'table.keys');
      const row = keyRow(page, prefix);
      await expect(row.locator('.state').textContent()).resolves.toBe('active');

      await row.getByRole('button', { name: /^Revoke key ci runner/ }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke the key "ci runner"?' });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await apiStatus(key)).toBe(200);
      await expect(row.locator('.state').textContent()).resolves.toBe('active');

      await row.getByRole('button', { name: /^Revoke key ci runner/ }).click();
      await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      await row.locator('.state', { hasText: 'revoked' }).waitFor();
      expect(await apiStatus(key)).toBe(401);
      await expect(row.getByRole('button').count()).resolves.toBe(0);
    },
    TEST_MS,
  );

  it(
    'rotates a key with a 1-hour overlap: the new key works, the old one too, and it shows its expiry',
    async () => {
      const old = server.pro.rotateKey;
      const page = await open(await newContext(), '#/keys', 'table.keys');
      const before = Date.now();
      await keyRow(page, old.key.slice(0, 12)).getByRole('button', { name: /^Rotate key staging server/ }).click();
      const dialog = page.getByRole('dialog', { name: 'Rotate the key "staging server"' });
      await dialog.getByLabel('Keep the old key working for').selectOption({ label: '1 hour' });
      await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
      const key = await keyFromDialog(page);
      const after = Date.now();
      expect(key).not.toBe(old.key);
      await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });

      expect(await apiStatus(key)).toBe(200);
      expect(await apiStatus(old.key)).toBe(200);

      const oldRow = keyRow(page, old.key.slice(0, 12));
      const newRow = keyRow(page, key.slice(0, 12));
      await newRow.waitFor();
      const expires = await oldRow.locator('td[data-label="Expires"] time').getAttribute('datetime');
      expect(expires).not.toBeNull();
      const at = Date.parse(expires!);
      // The server's clock set it between the two readings of ours (ms precision on both).
      expect(at).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(at).toBeLessThanOrEqual(after + 3_600_000 + 1000);
      await expect(oldRow.locator('.state').textContent()).resolves.toBe('active');
      await expect(newRow.locator('td[data-label="Expires"]').innerText()).resolves.toBe('Never');
      await expect(newRow.locator('th').innerText()).resolves.toBe('staging server');
      // the pair is visible: the new key says which key it replaced
      await expect(newRow.locator('td[data-label="Created"]').innerText()).resolves.toContain(`rotated from ${old.key.slice(0, 12)}…`);
      await expect(oldRow.locator('td[data-label="Created"]').innerText()).resolves.not.toContain('rotated from');
    },
    TEST_MS,
  );

  it(
    'rotates a trial key: the dialog says the new key expires when the old one would have, and the new row shows that expiry',
    async () => {
      const ends = new Date(Math.floor((Date.now() + 10 * DAY) / 1000) * 1000).toISOString();
      const trial = await createApiKey(server.store, { accountId: server.pro.id, label: 'trial', expiresAt: ends });
      const page = await open(await newContext(), '#/keys', 'table.keys');
      await keyRow(page, trial.prefix).getByRole('button', { name: /^Rotate key trial/ }).click();
      const dialog = page.getByRole('dialog', { name: 'Rotate the key "trial"' });
      await expect(dialog.getByText(/expires when this one would have/).isVisible()).resolves.toBe(true);
      await expect(dialog.locator('time').getAttribute('datetime')).resolves.toBe(ends);
      await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
      const key = await keyFromDialog(page);
      await expect(page.getByRole('dialog').locator('time').getAttribute('datetime')).resolves.toBe(ends);
      await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      const newRow = keyRow(page, key.slice(0, 12));
      await newRow.waitFor();
      await expect(newRow.locator('td[data-label="Expires"] time').getAttribute('datetime')).resolves.toBe(ends);
      await expect(newRow.locator('td[data-label="Created"]').innerText()).resolves.toContain(`rotated from ${trial.prefix}…`);
      const listed = (await listApiKeys(server.store, { accountId: server.pro.id })).find((k) => k.prefix === key.slice(0, 12));
      expect(listed).toMatchObject({ label: 'trial', expiresAt: ends, rotatedFrom: trial.id });
    },
    TEST_MS,
  );

  /** The endpoint the webhook tests add (through the page) and share. */
  let hook: { id: string; url: string } | undefined;

  it(
    'adds a webhook endpoint: its secret shown once with Copy and a note on verifying, listed, gone after a reload',
    async () => {
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const url = `https://receiver.example.com/ipokit/hooks/${Date.now()}`;
      await page.getByLabel('Endpoint URL').fill(url);
      // gmp.snapshot only: the other boxes start checked.
      for (const type of ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'subscription.snapshot']) await page.getByRole('checkbox', { name: type }).uncheck();
      await page.getByLabel('Description (optional)').fill('ci receiver');
      await page.getByRole('button', { name: 'Add endpoint' }).click();

      const dialog = page.getByRole('dialog', { name: "Your endpoint's signing secret" });
      await dialog.waitFor();
      await expect(dialog.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(true);
      const secret = await dialog.getByLabel('Signing secret').inputValue();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const note = await dialog.innerText();
      expect(note).toContain('only time the secret is shown');
      expect(note).toContain('Standard Webhooks');
      expect(note).toContain('webhook-signature');

      const listed = (await listWebhooks(server.store, { accountId: server.pro.id })).find((w) => w.url === url);
      expect(listed).toMatchObject({ events: ['gmp.snapshot'], description: 'ci receiver', disabledAt: null });
      // The secret shown is the one that signs its deliveries.
      expect((await server.store.getWebhook(listed!.id))?.secret).toBe(secret);
      hook = { id: listed!.id, url };

      await page.screenshot({ path: `${OUT}webhooks-secret-1440-light.png`, animations: 'disabled' });
      await page.setViewportSize({ width: 360, height: 800 });
      await page.screenshot({ path: `${OUT}webhooks-secret-360-light.png`, animations: 'disabled' });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'detached' });
      const item = hookItem(page, url);
      await item.waitFor();
      await expect(item.locator('.events').innerText()).resolves.toBe('gmp.snapshot');
      await expect(item.locator('.state').textContent()).resolves.toBe('active');
      await expect(item.getByText('ci receiver').isVisible()).resolves.toBe(true);
      expect(await onPage(page, secret)).toBe(false);

      await page.reload();
      await hookItem(page, url).waitFor();
      expect(await onPage(page, secret)).toBe(false);
      // The seeded endpoints: a long URL kept in the card, and the disabled one with its date.
      const disabled = hookItem(page, server.pro.disabledWebhook.url);
      await expect(disabled.locator('.state').textContent()).resolves.toBe('disabled');
      await expect(disabled.getByText(/^since /).isVisible()).resolves.toBe(true);
      const long = hookItem(page, server.pro.webhook.url).locator('h3');
      const box = (await long.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(360);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    },
    TEST_MS,
  );

  it(
    "shows an import's delivery under Deliveries, pages with Load more (before), and Replay of a settled delivery adds one",
    async () => {
      expect(hook, 'the endpoint of the previous test').toBeDefined();
      const { id, url } = hook!;
      await importDataset(server.store, { gmp: newSnapshots(1) }, { now: () => new Date() });
      const [pendingOne] = await listDeliveries(server.store, { webhookId: id });
      expect(pendingOne).toMatchObject({ eventType: 'gmp.snapshot', state: 'pending', attempts: 0 });
      // It fails for good (as a worker would settle it): only a settled delivery can be replayed.
      const now = Date.now();
      const claimed = (await server.store.claimDeliveries({ now, limit: 100, perWebhook: 100, perAccount: 100, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() })).filter((c) => c.delivery.webhookId === id);
      await server.store.finishDeliveries(claimed.map((c) => ({ id: c.delivery.id, lease: c.lease, at: now, delivered: false, status: 410, error: 'answered 410', nextAttemptAt: null, disableBefore: now - 6 * 86_400_000 })));
      const [made] = await listDeliveries(server.store, { webhookId: id });
      expect(made).toMatchObject({ eventType: 'gmp.snapshot', state: 'failed', attempts: 1 });

      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      await hookItem(page, url).getByRole('link', { name: /^Deliveries/ }).click();
      await page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
      expect(page.url()).toContain(`#/webhooks/${id}`);
      const rows = page.locator('table.deliveries tbody tr');
      await rows.first().waitFor();
      await expect(rows.count()).resolves.toBe(1);
      const row = page.locator(`tr[data-id="${made!.id}"]`);
      await expect(row.locator('th').innerText()).resolves.toContain('gmp.snapshot');
      await expect(row.locator('th').innerText()).resolves.toContain(made!.eventId);
      await expect(row.locator('.state').textContent()).resolves.toBe('failed');
      await expect(row.locator('td[data-label="Attempts"]').innerText()).resolves.toBe('1');
      await expect(page.getByText('No older deliveries.').isVisible()).resolves.toBe(true);

      // Replay: a new pending delivery of the same event, on top.
      await row.getByRole('button', { name: /^Replay/ }).click();
      await expect.poll(() => rows.count(), { timeout: 5000 }).toBe(2);
      const again = (await listDeliveries(server.store, { webhookId: id }))[0]!;
      expect(again.id).not.toBe(made!.id);
      expect(again).toMatchObject({ eventId: made!.eventId, state: 'pending' });
      await expect(rows.first().getAttribute('data-id')).resolves.toBe(again.id);
      await expect(page.getByRole('status').filter({ hasText: 'Replayed' }).isVisible()).resolves.toBe(true);
      // The new one is pending: its Replay is disabled (a replay of it would add nothing).
      await expect(rows.first().getByRole('button', { name: /^Replay/ }).isDisabled()).resolves.toBe(true);

      // 21 more: the first page is the 20 newest, Load more asks for those before the 20th.
      await importDataset(server.store, { gmp: newSnapshots(21) }, { now: () => new Date() });
      const all = await listDeliveries(server.store, { webhookId: id, limit: 100 });
      expect(all).toHaveLength(23);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(async () => (await rows.first().getAttribute('data-id')) === all[0]!.id && (await rows.count()) === 20, { timeout: 5000 }).toBe(true);
      const asked = page.waitForRequest((r) => r.url().includes('/deliveries?'));
      await page.getByRole('button', { name: 'Load more' }).click();
      expect(new URL((await asked).url()).searchParams.get('before')).toBe(all[19]!.id);
      await expect.poll(() => rows.count(), { timeout: 5000 }).toBe(23);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')))).toEqual(all.map((d) => d.id));
      await page.getByText('No older deliveries.').waitFor();
      await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    },
    TEST_MS,
  );

  it(
    "shows the seeded endpoint's deliveries in every state: delivered, failed, pending with its next attempt",
    async () => {
      const page = await open(await newContext(), `#/webhooks/${server.pro.webhook.id}`, 'table.deliveries');
      await expect(page.locator('.hook-summary').innerText()).resolves.toContain(server.pro.webhook.url);
      const states = await page.locator('table.deliveries tbody .state').allTextContents();
      expect(states).toEqual(['failed', 'pending', 'delivered']);
      const results = await page.locator('table.deliveries tbody td[data-label="Last result"]').allInnerTexts();
      expect(results[0]).toContain('No answer within 15 s.');
      expect(results[1]).toContain('HTTP 503');
      expect(results[2]).toContain('HTTP 200');
      await expect(page.locator('table.deliveries tbody tr').nth(1).locator('td[data-label="Next attempt"] time').count()).resolves.toBe(1);
      // Six columns fit the page's width at 1440 px.
      const fits = await page.evaluate(() => {
        const table = document.querySelector('table.deliveries')!.getBoundingClientRect();
        const section = document.querySelector('table.deliveries')!.parentElement!.getBoundingClientRect();
        return table.right <= section.right && document.documentElement.scrollWidth <= window.innerWidth;
      });
      expect(fits).toBe(true);

      // The disabled endpoint's deliveries: no Replay (the API refuses one).
      await page.goto(`${server.dashboardUrl}#/webhooks/${server.pro.disabledWebhook.id}`);
      await page.locator('table.deliveries').waitFor();
      await expect(page.locator('.hook-summary').textContent()).resolves.toContain('disabled since');
      await expect(page.locator('table.deliveries').getByRole('button').count()).resolves.toBe(0);
      await expect(page.locator('table.deliveries tbody td[data-label="Last result"]').innerText()).resolves.toContain('ECONNREFUSED');
    },
    TEST_MS,
  );

  it(
    "shows a 400's message next to its field and moves focus there; the keyboard adds an endpoint and Escape closes the secret",
    async () => {
      expectRefusal(400);
      const page = await open(await newContext('pro', { viewport: { width: 360, height: 800 } }), '#/webhooks', 'ul.hooks');
      const field = page.getByLabel('Endpoint URL');
      const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');

      // Empty: caught before any request.
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(page.locator('#hook-url-error').innerText()).resolves.toContain('Enter the URL');
      await expect.poll(focusedId, { timeout: 2000 }).toBe('hook-url');

      // The server's 400 (meta.parameter "url"), next to the field that it names.
      await field.fill('ftp://example.com/hooks/ipo');
      const answered = page.waitForResponse((r) => r.url().endsWith('/account/webhooks') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const response = await answered;
      expect(response.status()).toBe(400);
      expect(response.request().headers()['content-type']).toBe('application/json');
      expect(((await response.json()) as { meta?: { parameter?: string } }).meta?.parameter).toBe('url');
      await expect(page.locator('#hook-url-error').innerText()).resolves.toContain('http: or https:');
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(field.getAttribute('aria-describedby')).resolves.toContain('hook-url-error');
      await expect.poll(focusedId, { timeout: 2000 }).toBe('hook-url');
      await expect(page.locator('.note.error').count()).resolves.toBe(0);
      await page.locator('.create-hook').screenshot({ path: `${OUT}webhooks-error-360-light.png`, animations: 'disabled' });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

      // A URL aimed at the operator's own network (docs/spec.md#webhooks) is refused the same way.
      await field.fill('http://169.254.169.254/latest/meta-data/');
      const inside = page.waitForResponse((r) => r.url().endsWith('/account/webhooks') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      expect((await inside).status()).toBe(400);
      await expect(page.locator('#hook-url-error').innerText()).resolves.toContain('public internet only');
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(page.locator('.note.error').count()).resolves.toBe(0);

      // No event type: the message goes with the checkboxes.
      await field.fill('https://keyboard.example.com/hooks');
      for (const box of await page.getByRole('checkbox').all()) await box.uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(page.locator('#hook-events-error').innerText()).resolves.toBe('Choose at least one event type.');
      await expect.poll(focusedId, { timeout: 2000 }).toBe('hook-event-0');

      // The keyboard: Space checks the focused box, Enter in the URL field submits.
      await page.keyboard.press('Space');
      await field.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: "Your endpoint's signing secret" });
      await dialog.waitFor();
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText ?? ''), { timeout: 2000 }).toBe('Copy');
      const secret = await dialog.getByLabel('Signing secret').inputValue();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(focusedId, { timeout: 2000 }).toBe('hook-url');
      expect(await onPage(page, secret)).toBe(false);
      const made = (await listWebhooks(server.store, { accountId: server.pro.id })).find((w) => w.url === 'https://keyboard.example.com/hooks');
      expect(made?.events).toEqual(['ipo.created']);
    },
    TEST_MS,
  );

  it(
    'deletes an endpoint after a confirmation; its deliveries page then says it is gone',
    async () => {
      expect(hook, 'the endpoint of the first webhook test').toBeDefined();
      const { id, url } = hook!;
      expectRefusal(404);
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const item = hookItem(page, url);
      await item.getByRole('button', { name: `Delete the endpoint ${url}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete this endpoint?' });
      await expect(dialog.innerText()).resolves.toContain(url);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await listWebhooks(server.store, { accountId: server.pro.id })).some((w) => w.id === id)).toBe(true);

      await item.getByRole('button', { name: `Delete the endpoint ${url}` }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      await item.waitFor({ state: 'detached' });
      expect((await listWebhooks(server.store, { accountId: server.pro.id })).some((w) => w.id === id)).toBe(false);
      await hookItem(page, server.pro.webhook.url).waitFor();

      await page.goto(`${server.dashboardUrl}#/webhooks/${id}`);
      await page.getByText('This account has no such endpoint').waitFor();
    },
    TEST_MS,
  );

  it(
    "shows the plan's limits before the form: free and paid see which plan has webhooks and no form, pro its count, a full account no form",
    async () => {
      for (const account of ['free', 'paid'] as const) {
        const page = await open(await newContext(account, { viewport: { width: 360, height: 800 } }), '#/webhooks', '.create-hook .plan-gate');
        const gate = page.locator('.create-hook .plan-gate');
        await expect(gate.innerText()).resolves.toContain('Webhooks need the pro plan.');
        await expect.poll(() => gate.innerText(), { timeout: 5000 }).toContain(`This account is on the ${account} plan.`);
        await expect(page.locator('.create-hook form').count()).resolves.toBe(0);
        await expect(page.getByLabel('Endpoint URL').count()).resolves.toBe(0);
        await expect(page.locator('.hook-count').count()).resolves.toBe(0);
        await expect(page.getByText('This account has no endpoints yet').isVisible()).resolves.toBe(true);
        await expect(page.locator('.note.error').count()).resolves.toBe(0);
        if (account === 'free') {
          await page.locator('main').screenshot({ path: `${OUT}webhooks-plan-360-light.png`, animations: 'disabled' });
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
        }
      }
      await expect(listWebhooks(server.store, { accountId: server.free.id })).resolves.toEqual([]);

      // Pro: "n of 10 endpoints" and the form.
      const used = (await listWebhooks(server.store, { accountId: server.pro.id })).length;
      const page = await open(await newContext(), '#/webhooks', '.create-hook form');
      await expect(page.locator('.hook-count').innerText()).resolves.toBe(`${used} of 10 endpoints`);
      await expect(page.locator('.plan-gate').count()).resolves.toBe(0);

      // At the cap (10 of 10): a line says so instead of the form.
      const full = await createAccount(server.store, { name: 'Full House Capital', plan: 'pro' });
      for (let i = 0; i < 10; i++) await createWebhook(server.store, { accountId: full.id, url: `https://full.example.com/hooks/${i}`, events: ['ipo.created'] });
      const context = await newContext();
      await context.clearCookies();
      await context.addCookies([{ name: ACCOUNT_COOKIE, value: full.id, url: server.baseUrl }]);
      const fullPage = await open(context, '#/webhooks', '.create-hook .plan-gate');
      await expect(fullPage.locator('.plan-gate').innerText()).resolves.toContain('This account has 10 of 10 endpoints, the most its plan allows');
      await expect(fullPage.locator('.hook-count').innerText()).resolves.toBe('10 of 10 endpoints');
      await expect(fullPage.locator('.create-hook form').count()).resolves.toBe(0);
      await expect(fullPage.locator('ul.hooks > li').count()).resolves.toBe(10);
    },
    TEST_MS,
  );

  it(
    'pauses and resumes an endpoint: the badge follows, the store agrees, a paused one has no test event',
    async () => {
      const made = await proHook('pause');
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const item = hookItem(page, made.url);
      await expect(item.locator('.state').textContent()).resolves.toBe('active');
      await item.getByRole('button', { name: `Pause ${made.url}` }).click();
      await expect.poll(() => item.locator('.state').textContent(), { timeout: 5000 }).toBe('paused');
      await expect(item.getByRole('status').innerText()).resolves.toContain('Paused');
      expect((await listWebhooks(server.store, { accountId: server.pro.id })).find((w) => w.id === made.id)?.pausedAt).toEqual(expect.any(String));
      await expect(item.getByRole('button', { name: /^Send test event/ }).count()).resolves.toBe(0);
      // Focus stays on the button, now Resume.
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText ?? ''), { timeout: 2000 }).toMatch(/^Resume/);

      await item.getByRole('button', { name: `Resume ${made.url}` }).click();
      await expect.poll(() => item.locator('.state').textContent(), { timeout: 5000 }).toBe('active');
      expect((await listWebhooks(server.store, { accountId: server.pro.id })).find((w) => w.id === made.id)?.pausedAt).toBeNull();
      await expect(item.getByRole('button', { name: /^Send test event/ }).count()).resolves.toBe(1);

      // The endpoint the worker disabled: its badge says so, and Resume enables it again.
      const disabled = hookItem(page, server.pro.disabledWebhook.url);
      await expect(disabled.locator('.state').textContent()).resolves.toBe('disabled');
      await expect(disabled.getByRole('button', { name: /^Pause/ }).count()).resolves.toBe(0);
      await expect(disabled.getByRole('button', { name: `Resume ${server.pro.disabledWebhook.url}` }).count()).resolves.toBe(1);
    },
    TEST_MS,
  );

  it(
    "edits an endpoint's event types: checkboxes of the subscribable types, at least one, saved with update",
    async () => {
      const made = await proHook('edit', ['ipo.created', 'ipo.deleted']);
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const item = hookItem(page, made.url);
      await item.getByRole('button', { name: `Edit event types of ${made.url}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit event types' });
      await dialog.waitFor();
      const boxes = dialog.getByRole('checkbox');
      await expect(boxes.evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value))).resolves.toEqual([...EVENT_TYPES]);
      await expect(boxes.evaluateAll((els) => els.filter((el) => (el as HTMLInputElement).checked).map((el) => (el as HTMLInputElement).value))).resolves.toEqual(['ipo.created', 'ipo.deleted']);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id ?? ''), { timeout: 2000 }).toBe('edit-event-0');

      // None: refused before any request.
      await dialog.getByRole('checkbox', { name: 'ipo.created' }).uncheck();
      await dialog.getByRole('checkbox', { name: 'ipo.deleted' }).uncheck();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect(dialog.getByRole('alert').innerText()).resolves.toBe('Choose at least one event type.');

      await dialog.getByRole('checkbox', { name: 'gmp.snapshot' }).check();
      await dialog.getByRole('checkbox', { name: 'ipo.status_changed' }).check();
      const saved = page.waitForRequest((r) => r.url().endsWith(`/account/webhooks/${made.id}/update`) && r.method() === 'POST');
      await dialog.getByRole('button', { name: 'Save' }).click();
      expect((await saved).postDataJSON()).toEqual({ events: ['ipo.status_changed', 'gmp.snapshot'] });
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => item.locator('.events').innerText(), { timeout: 5000 }).toBe('ipo.status_changed\ngmp.snapshot');
      expect((await listWebhooks(server.store, { accountId: server.pro.id })).find((w) => w.id === made.id)?.events).toEqual(['ipo.status_changed', 'gmp.snapshot']);
    },
    TEST_MS,
  );

  it(
    "rotates an endpoint's secret: overlap chosen (24 hours unless changed), the new secret shown once with Copy, the old one's expiry",
    async () => {
      const made = await proHook('rotate');
      const old = (await server.store.getWebhook(made.id))!.secret;
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const item = hookItem(page, made.url);
      await item.getByRole('button', { name: `Rotate secret of ${made.url}` }).click();
      const confirm = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
      await confirm.waitFor();
      const radios = confirm.getByRole('radio');
      await expect(radios.evaluateAll((els) => els.map((el) => (el as HTMLInputElement).labels?.[0]?.innerText ?? ''))).resolves.toEqual(['1 hour', '24 hours', '7 days', 'None: the old secret stops now']);
      await expect(confirm.getByRole('radio', { name: '24 hours' }).isChecked()).resolves.toBe(true);
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value ?? ''), { timeout: 2000 }).toBe('86400');
      // Cancel changes nothing.
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      expect((await server.store.getWebhook(made.id))!.secret).toBe(old);

      await item.getByRole('button', { name: `Rotate secret of ${made.url}` }).click();
      await confirm.getByRole('radio', { name: '1 hour' }).check();
      const asked = page.waitForRequest((r) => r.url().endsWith(`/account/webhooks/${made.id}/rotate-secret`));
      const before = Date.now();
      await confirm.getByRole('button', { name: 'Rotate secret' }).click();
      expect((await asked).postDataJSON()).toEqual({ overlapSeconds: 3600 });
      const shown = page.getByRole('dialog', { name: "Your endpoint's new signing secret" });
      await shown.waitFor();
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText ?? ''), { timeout: 2000 }).toBe('Copy');
      const secret = await shown.getByLabel('Signing secret').inputValue();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(secret).not.toBe(old);
      expect((await server.store.getWebhook(made.id))!.secret).toBe(secret);
      await expect(shown.innerText()).resolves.toContain('The old secret keeps working until');
      const until = Date.parse((await shown.locator('.previous-secret time').getAttribute('datetime'))!);
      expect(until).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
      await shown.getByRole('button', { name: 'Done' }).click();
      await shown.waitFor({ state: 'detached' });
      expect(await onPage(page, secret)).toBe(false);

      // None: the old secret stops now, and the dialog says so.
      await item.getByRole('button', { name: `Rotate secret of ${made.url}` }).click();
      await confirm.getByRole('radio', { name: /^None/ }).check();
      await confirm.getByRole('button', { name: 'Rotate secret' }).click();
      await shown.waitFor();
      await expect(shown.innerText()).resolves.toContain('The old secret no longer signs deliveries');
      await page.screenshot({ path: `${OUT}webhooks-rotated-1440-light.png`, animations: 'disabled' });
      await page.keyboard.press('Escape');
      await shown.waitFor({ state: 'detached' });
    },
    TEST_MS,
  );

  it(
    'sends a test event: its pending delivery shows in the card, then in Deliveries with a disabled Replay',
    async () => {
      const made = await proHook('test');
      const page = await open(await newContext(), '#/webhooks', 'ul.hooks');
      const item = hookItem(page, made.url);
      await item.getByRole('button', { name: `Send test event to ${made.url}` }).click();
      const tested = item.locator('.tested');
      await tested.waitFor();
      const [delivery] = await listDeliveries(server.store, { webhookId: made.id });
      expect(delivery).toMatchObject({ eventType: 'webhook.test', state: 'pending', attempts: 0 });
      await expect(tested.innerText()).resolves.toContain('webhook.test');
      await expect(tested.locator('.state').textContent()).resolves.toBe('pending');
      await expect(tested.innerText()).resolves.toContain(delivery!.id);
      await expect(item.getByRole('status').innerText()).resolves.toContain('Test event sent');

      // Its link opens Deliveries with its detail over the list.
      await tested.getByRole('link', { name: 'See what was sent and what came back' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delivery of webhook.test' });
      await dialog.waitFor();
      const payload = JSON.parse(await dialog.locator('pre.payload').first().innerText()) as { type: string; data: { webhookId: string; message: string } };
      expect(payload).toMatchObject({ type: 'webhook.test', data: { webhookId: made.id, message: 'A test event from ipokit.' } });
      await expect(dialog.innerText()).resolves.toContain('Nothing yet: no attempt has been made.');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(new URL(page.url()).hash).toBe(`#/webhooks/${made.id}`);
      const row = page.locator(`table.deliveries tr[data-id="${delivery!.id}"]`);
      await expect(row.locator('th code').innerText()).resolves.toBe('webhook.test');
      await expect(row.locator('.state').textContent()).resolves.toBe('pending');
      await expect(row.getByRole('button', { name: /^Replay/ }).isDisabled()).resolves.toBe(true);
    },
    TEST_MS,
  );

  it(
    "opens a delivery's detail: the payload as sent, pretty-printed and scrollable, the receiver's status and body, focus on the detail",
    async () => {
      const { id, deliveries } = server.pro.webhook;
      const page = await open(await newContext(), `#/webhooks/${id}`, 'table.deliveries');
      const row = page.locator(`tr[data-id="${deliveries.retrying}"]`);
      await row.getByRole('link', { name: /^Details/ }).click();
      const dialog = page.getByRole('dialog', { name: /^Delivery of ipo\./ });
      await dialog.waitFor();
      const pre = dialog.locator('pre.payload').first();
      await pre.waitFor();
      // Focus on the detail: its payload, which the keyboard can scroll.
      await expect.poll(() => page.evaluate(() => document.activeElement?.classList.contains('payload') ?? false), { timeout: 2000 }).toBe(true);
      const detail = await getDelivery(server.store, { webhookId: id, deliveryId: deliveries.retrying });
      const shown = await pre.innerText();
      expect(shown).toBe(JSON.stringify(JSON.parse(detail.payload), null, 2));
      expect(shown.split('\n').length).toBeGreaterThan(3);
      await expect(pre.evaluate((el) => getComputedStyle(el).overflow)).resolves.toBe('auto');
      const text = await dialog.innerText();
      expect(text).toContain('HTTP 503');
      expect(text).toContain(UNAVAILABLE_BODY);
      await page.screenshot({ path: `${OUT}webhook-delivery-1440-light.png`, animations: 'disabled' });
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // Focus back on the link that opened it.
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText ?? ''), { timeout: 2000 }).toMatch(/^Details/);

      // Delivered: 200 and the JSON it answered, pretty-printed; failed without an answer: the reason.
      await page.goto(`${server.dashboardUrl}#/webhooks/${id}?delivery=${deliveries.delivered}`);
      await dialog.locator('pre.response-body').waitFor();
      await expect(dialog.locator('.response-status').innerText()).resolves.toBe('HTTP 200');
      await expect(dialog.locator('pre.response-body').innerText()).resolves.toBe(JSON.stringify(JSON.parse(RECEIVED_BODY), null, 2));
      await page.goto(`${server.dashboardUrl}#/webhooks/${id}?delivery=${deliveries.failed}`);
      await dialog.locator('.response-none').waitFor();
      await expect(dialog.locator('.response-none').innerText()).resolves.toBe('No HTTP answer: No answer within 15 s.');

      // At 360 px the dialog fits, the payload scrolls inside its box.
      await page.setViewportSize({ width: 360, height: 800 });
      await page.goto(`${server.dashboardUrl}#/webhooks/${id}?delivery=${deliveries.retrying}`);
      await dialog.locator('pre.response-body').waitFor();
      const box = (await dialog.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(360);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await page.screenshot({ path: `${OUT}webhook-delivery-360-light.png`, animations: 'disabled' });
    },
    TEST_MS,
  );

  it(
    'says webhooks are not available when the store keeps none (GET /webhooks is 404)',
    async () => {
      expectRefusal(404);
      const page = await newPage(await newContext());
      await page.goto(`${server.plainDashboardUrl}#/webhooks`);
      await page.getByText('Webhooks are not available here').waitFor({ timeout: 15_000 });
      await expect(page.locator('.create-hook').count()).resolves.toBe(0);
      await expect(page.locator('.note.error').count()).resolves.toBe(0);
    },
    TEST_MS,
  );

  it(
    "counts requests: today's admitted total rises by exactly the requests made",
    async () => {
      const today = istDay(Date.now());
      const page = await open(await newContext('free'), '#/usage', 'table caption#usage-table-caption');
      /** Today's admitted requests in the table (List + One IPO + GMP + Subscription), 0 when today has no row. */
      const admittedToday = async () => {
        const row = page.locator('#usage-table-caption').locator('xpath=..').locator('tbody tr', { has: page.locator(`time[datetime="${today}"]`) });
        if ((await row.count()) === 0) return 0;
        const cells = await row.locator('td').allInnerTexts();
        return cells.slice(0, 4).reduce((sum, text) => sum + Number(text.replace(/\D/g, '')), 0);
      };
      const before = await admittedToday();
      const n = 7;
      for (let i = 0; i < n; i++) expect(await apiStatus(server.free.apiKey)).toBe(200);
      await page.reload();
      await page.locator('#usage-table-caption').waitFor();
      expect(await admittedToday()).toBe(before + n);
    },
    TEST_MS,
  );

  it(
    "shows an IPO's GMP chart with the API's own series: count, first, last and points in between",
    async () => {
      const now = Date.now();
      const [from, to] = [utcDay(now - 13 * DAY), utcDay(now)];
      const page = await open(await newContext(), '#/ipos', '.table-box table');
      await page.getByRole('link', { name: LONG_IPO.name }).click();
      await page.getByRole('heading', { level: 1, name: LONG_IPO.name }).waitFor();
      const form = page.getByRole('form', { name: 'Series' });
      await form.getByLabel('Interval').selectOption('hourly');
      await form.getByLabel('Value', { exact: true }).selectOption('max');
      await form.getByLabel('From').fill(from);
      await form.getByLabel('To').fill(to);
      await form.getByRole('button', { name: 'Show' }).click();

      const api = await apiSeries(`interval=hourly&field=max&from=${from}&to=${to}`);
      expect(api.meta.count).toBeGreaterThan(200);
      expect(api.series.length).toBe(api.meta.count);
      const box = page.locator(`.gmp-chart .chart-box[data-points="${api.meta.count}"][data-render-ms]`);
      await box.waitFor({ timeout: 15_000 });
      expect(page.url()).toContain(`interval=hourly&field=max&from=${from}&to=${to}`);
      const text = (p: { timestamp: string; price: number | null }) => `${p.timestamp} ${p.price}`;
      await expect(box.getAttribute('data-first')).resolves.toBe(text(api.series[0]!));
      await expect(box.getAttribute('data-last')).resolves.toBe(text(api.series[api.series.length - 1]!));

      // Points in between, as the chart's own read-out shows them under the pointer (IST, en-IN amounts).
      const expected = api.series.map((p) => `${formatIstInstant(Date.parse(p.timestamp))}: ${p.price === null ? 'no GMP reported' : formatRupees(p.price)}`);
      expect(expected[0]).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} IST: /);
      const plot = page.locator('.gmp-chart .chart-box .u-over');
      await plot.scrollIntoViewIfNeeded();
      const over = await plot.boundingBox();
      expect(over).not.toBeNull();
      const seen: number[] = [];
      let readout = '';
      for (const f of [0.1, 0.3, 0.5, 0.7, 0.9]) {
        await plot.hover({ position: { x: over!.width * f, y: over!.height / 2 } });
        // The read-out follows the pointer (uPlot's setCursor hook): wait for it to move on.
        const previous = readout;
        const moved = async () => {
          readout = ((await page.locator('.gmp-chart .readout').textContent()) ?? '').trim();
          return !readout.startsWith('Point at the chart') && readout !== previous;
        };
        await expect.poll(moved, { timeout: 5000 }).toBe(true);
        const index = expected.indexOf(readout);
        expect(index, `the read-out "${readout}" is a point of the API's series`).toBeGreaterThanOrEqual(0);
        // Where the pointer is: the point's share of the time axis is about f.
        const t = (i: number) => Date.parse(api.series[i]!.timestamp);
        const share = (t(index) - t(0)) / (t(api.series.length - 1) - t(0));
        expect(Math.abs(share - f)).toBeLessThan(0.02);
        seen.push(index);
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    },
    TEST_MS,
  );

  it(
    'lists IPOs as a GMP table: ₹ price band, the latest GMP (mean), listing gain, ₹ crore, figures right-aligned',
    async () => {
      const context = await newContext();
      const page = await newPage(context);
      const asked = page.waitForRequest((r) => r.url().includes('/account/ipos?'));
      await page.goto(`${server.dashboardUrl}#/ipos?status=listed`);
      expect(new URL((await asked).url()).searchParams.get('includeGmp')).toBe('true');
      await page.locator('table.ipo-table').waitFor({ timeout: 15_000 });
      const res = await fetch(`${server.baseUrl}/ipos?status=listed&limit=25&page=1&includeGmp=true`, { headers: { 'x-api-key': server.pro.apiKey } });
      expect(res.status).toBe(200);
      type Listed = {
        name: string;
        status: string;
        priceRange: string | null;
        issueSize: string | null;
        listingGain: string | null;
        subscription: { times: { total: number | null } } | null;
        gmp?: { aggregations: { mean: number | null }; gmpPercent: number | null; estimatedListingPrice: number | null } | null;
      };
      const api = ((await res.json()) as { ipos: Listed[] }).ipos;
      expect(api.filter((i) => (i.gmp?.aggregations.mean ?? null) !== null).length, 'listed IPOs with a GMP').toBeGreaterThan(0);
      expect(api.filter((i) => i.listingGain !== null).length, 'listed IPOs with a listing gain').toBeGreaterThan(0);
      expect(api.filter((i) => (i.gmp?.gmpPercent ?? null) !== null).length, 'listed IPOs with a GMP %').toBeGreaterThan(0);
      expect(api.filter((i) => (i.subscription?.times.total ?? null) !== null).length, 'listed IPOs with a subscription').toBeGreaterThan(0);
      await expect(page.locator('table.ipo-table thead th').allInnerTexts()).resolves.toEqual([
        'Name', 'Status', 'Price band', 'GMP', 'GMP %', 'Est. listing', 'Subscription', 'Listing gain', 'Opens', 'Closes', 'Listing', 'Issue size',
      ]);
      const rows = page.locator('table.ipo-table tbody tr');
      await expect(rows.count()).resolves.toBe(api.length);
      for (const [i, ipo] of api.entries()) {
        const row = rows.nth(i);
        const cell = (label: string) => row.locator(`td[data-label="${label}"]`).innerText();
        const mean = ipo.gmp?.aggregations.mean ?? null;
        await expect(row.locator('th a').innerText()).resolves.toBe(ipo.name);
        await expect(cell('Status')).resolves.toBe(ipo.status);
        await expect(cell('Price band')).resolves.toBe(ipo.priceRange === null ? '—' : formatPriceBand(ipo.priceRange));
        await expect(cell('GMP')).resolves.toBe(mean === null ? '—' : formatRupees(mean));
        const pct = ipo.gmp?.gmpPercent ?? null;
        const est = ipo.gmp?.estimatedListingPrice ?? null;
        const total = ipo.subscription?.times.total ?? null;
        await expect(cell('GMP %')).resolves.toBe(pct === null ? '—' : formatPercent(pct));
        await expect(cell('Est. listing')).resolves.toBe(est === null ? '—' : formatRupees(est));
        await expect(cell('Subscription')).resolves.toBe(total === null ? '—' : formatTimes(total));
        await expect(cell('Listing gain')).resolves.toBe(ipo.listingGain === null ? '—' : `${Number(ipo.listingGain) > 0 ? '+' : ''}${ipo.listingGain}%`);
        await expect(cell('Issue size')).resolves.toBe(ipo.issueSize === null ? '—' : formatIssueSize(ipo.issueSize));
      }
      // Indian grouping, crore and rupees as the fixture has them.
      expect(await page.locator('table.ipo-table').innerText()).toContain('₹1,000 Cr');
      expect(await page.locator('table.ipo-table').innerText()).toMatch(/\d\.\d\dx/);
      for (const label of ['Price band', 'GMP', 'GMP %', 'Est. listing', 'Subscription', 'Listing gain', 'Issue size']) {
        const style = await page.locator(`td[data-label="${label}"]`).first().evaluate((el) => [getComputedStyle(el).textAlign, getComputedStyle(el).fontVariantNumeric]);
        expect(style, label).toEqual(['right', 'tabular-nums']);
      }
      // On a phone: one card per IPO with the same figures, nothing past the screen's edge.
      await page.setViewportSize({ width: 360, height: 800 });
      const subscribed = api.findIndex((i) => (i.subscription?.times.total ?? null) !== null);
      const card = rows.nth(subscribed);
      await expect(card.locator('td[data-label="Subscription"]').innerText()).resolves.toBe(formatTimes(api[subscribed]!.subscription!.times.total!));
      const box = (await card.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(360);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

      // A plan without GMP: no GMP column, and no request the API would refuse.
      const free = await newPage(await newContext('free'));
      const freeAsked: string[] = [];
      free.on('request', (r) => freeAsked.push(r.url()));
      await free.goto(`${server.dashboardUrl}#/ipos?status=listed`);
      await free.locator('table.ipo-table').waitFor({ timeout: 15_000 });
      const freeHeads = await free.locator('table.ipo-table thead th').allInnerTexts();
      for (const gmpOnly of ['GMP', 'GMP %', 'Est. listing']) expect(freeHeads).not.toContain(gmpOnly);
      // Subscription is on every IPO object, whatever the plan.
      expect(freeHeads).toContain('Subscription');
      await expect(free.getByText('GMP needs the pro plan').isVisible()).resolves.toBe(true);
      expect(freeAsked.filter((u) => u.includes('includeGmp'))).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "shows an IPO's subscription by category (chart and latest figures), its listing-day prices and its parties, within 360 px",
    async () => {
      type Point = { timestamp: string } & Record<string, number | null>;
      const series = async (symbol: string) => {
        const res = await fetch(`${server.baseUrl}/ipos/${symbol}/subscription`, { headers: { 'x-api-key': server.free.apiKey } });
        expect(res.status).toBe(200);
        return (await res.json()) as { series: Point[]; meta: { count: number } };
      };
      const categories = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'];
      const drawn = (points: Point[]) => categories.filter((c) => points.some((p) => p[c] !== null));
      const istDays = (points: Point[]) => new Set(points.map((p) => istDay(Date.parse(p.timestamp)))).size;

      // The listed issue: a closed book over three bidding days, and its listing day.
      const listed = await series(LISTED_IPO.symbol);
      expect(listed.meta.count).toBe(12);
      const page = await open(await newContext(), `#/ipos/${LISTED_IPO.symbol}`, '.sub-chart .chart-box[data-render-ms]');
      const box = page.locator('.sub-chart .chart-box');
      await expect(box.getAttribute('data-points')).resolves.toBe('12');
      // One line per category with figures (no shareholder quota here), and no line across the two nights.
      await expect(box.getAttribute('data-series')).resolves.toBe(drawn(listed.series).join(','));
      expect(drawn(listed.series)).toEqual(['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'total']);
      await expect(box.getAttribute('data-gaps')).resolves.toBe(String(istDays(listed.series) - 1));
      const last = listed.series.at(-1)!;
      await expect(box.getAttribute('data-last')).resolves.toBe(`${last.timestamp} ${drawn(listed.series).map((c) => `${c}=${last[c]}`).join(' ')}`);
      // Drawn: uPlot's canvas, sized to the box, and its time axis in IST.
      const canvas = box.locator('canvas');
      await expect(canvas.count()).resolves.toBe(1);
      expect((await canvas.boundingBox())!.height).toBeGreaterThan(100);
      expect((await box.getAttribute('data-x-ticks')) ?? '').toMatch(/\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/);
      await expect(page.locator('.sub-chart .legend li').allInnerTexts()).resolves.toEqual(['QIB', 'NII', 'bNII (above ₹10 lakh)', 'sNII (₹2–10 lakh)', 'Retail', 'Employee', 'Total']);
      // The latest figures: total as the headline, each category in the table.
      const section = page.locator('section', { has: page.locator('#subscription-heading') });
      await expect(section.locator('.headline .figure').innerText()).resolves.toBe(formatTimes(last['total']!));
      await expect(section.locator('table.subscription tbody tr').allInnerTexts()).resolves.toEqual(
        drawn(listed.series)
          .filter((c) => c !== 'total')
          .map((c) => `${{ qib: 'QIB', nii: 'NII', bnii: 'bNII (above ₹10 lakh)', snii: 'sNII (₹2–10 lakh)', retail: 'Retail', employee: 'Employee' }[c]}\t${formatTimes(last[c]!)}`),
      );
      // The pointer on the chart reads one reading, in IST.
      const plot = box.locator('.u-over');
      const over = (await plot.boundingBox())!;
      await plot.hover({ position: { x: over.width - 2, y: over.height / 2 } });
      await expect.poll(async () => (await page.locator('.sub-chart .readout').textContent()) ?? '', { timeout: 5000 }).toContain(`${formatIstInstant(Date.parse(last.timestamp))}: QIB ${formatTimes(last['qib']!)}`);
      // The listing day, per exchange (nse first), in rupees grouped en-IN.
      const prices = page.locator('table.listing-prices tbody tr');
      await expect(prices.allInnerTexts()).resolves.toEqual(LISTED_PRICES.map((p) => [p.exchange.toUpperCase(), formatRupees(p.open), formatRupees(p.high), formatRupees(p.low), formatRupees(p.close)].join('\t')));
      await expect(page.locator('section', { has: page.locator('#listing-heading') }).innerText()).resolves.toContain('Listing gain +12.5%');
      // The issue's parties and sector.
      const details = page.locator('section', { has: page.locator('#details-heading') });
      const facts = await details.innerText();
      for (const text of ['Food Processing', 'Meridian Share Registrars Pvt Ltd', 'Tidewater Securities Ltd', 'Riverbend Capital Ltd']) expect(facts).toContain(text);
      expect(facts).not.toContain('Market maker');

      // The open issue: its book so far, and one latest GMP figure with its share of the price and the listing price it points to.
      const open_ = await series(LONG_IPO.symbol);
      expect(open_.meta.count).toBeGreaterThan(0);
      const zenith = await visitIpo(page, LONG_IPO.symbol);
      await expect(zenith.getAttribute('data-points')).resolves.toBe(String(open_.meta.count));
      await expect(zenith.getAttribute('data-series')).resolves.toBe('qib,nii,bnii,snii,retail,total');
      await expect(zenith.getAttribute('data-gaps')).resolves.toBe(String(istDays(open_.series) - 1));
      const one = await (await fetch(`${server.baseUrl}/ipos/${LONG_IPO.symbol}?includeGmp=true`, { headers: { 'x-api-key': server.pro.apiKey } })).json() as { ipo: { gmp: { aggregations: { mean: number }; gmpPercent: number; estimatedListingPrice: number } } };
      const card = page.locator('section', { has: page.locator('#snapshot-heading') });
      await expect(card.locator('.headline .figure').innerText()).resolves.toBe(formatRupees(one.ipo.gmp.aggregations.mean));
      await expect(card.locator('.headline .figure').count()).resolves.toBe(1);
      const derived = await card.locator('.gmp-derived').innerText();
      expect(derived).toContain(formatPercent(one.ipo.gmp.gmpPercent));
      expect(derived).toContain(`Est. listing ${formatRupees(one.ipo.gmp.estimatedListingPrice)}`);
      expect(await page.locator('main').innerText()).not.toContain('Listing day');

      // At 360 px: both pages fit, the chart within its card, the tables within their boxes.
      await page.setViewportSize({ width: 360, height: 800 });
      for (const symbol of [LONG_IPO.symbol, LISTED_IPO.symbol]) {
        const chart = await visitIpo(page, symbol);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, `${symbol} at 360 px`).toBeLessThanOrEqual(360);
        const chartBox = (await chart.boundingBox())!;
        expect(chartBox.x + chartBox.width, `${symbol}: the subscription chart`).toBeLessThanOrEqual(360);
        for (const table of await page.locator('table.subscription, table.listing-prices').all()) {
          const r = (await table.boundingBox())!;
          expect(r.x + r.width, `${symbol}: ${await table.getAttribute('class')}`).toBeLessThanOrEqual(360);
        }
        await page.screenshot({ path: `${OUT}ipo-${symbol.toLowerCase()}-360-light.png`, fullPage: true, animations: 'disabled' });
      }
    },
    TEST_MS,
  );

  it(
    'breaks the GMP line where buckets are missing, and writes its axis in IST',
    async () => {
      const query = 'interval=hourly&field=mean&from=2026-10-20&to=2026-11-27';
      const api = await (async () => {
        const res = await fetch(`${server.baseUrl}/ipos/ORBIT/gmp?${query}`, { headers: { 'x-api-key': server.pro.apiKey } });
        expect(res.status).toBe(200);
        return (await res.json()) as GmpSeries;
      })();
      const t = api.series.map((p) => Date.parse(p.timestamp));
      const missing = t.filter((v, i) => i > 0 && v - t[i - 1]! > 3_600_000).length;
      expect(missing, "the fixture's ORBIT series has hours without a snapshot").toBeGreaterThan(0);
      // A browser in California: the axis must still be India's.
      const page = await open(await newContext('pro', { locale: 'en-US', timezoneId: 'America/Los_Angeles' }), `#/ipos/ORBIT?${query}`, '.gmp-chart .chart-box[data-render-ms]');
      const box = page.locator('.gmp-chart .chart-box');
      await expect(box.getAttribute('data-points')).resolves.toBe(String(api.series.length));
      await expect(box.getAttribute('data-gaps')).resolves.toBe(String(missing));
      await expect(box.getAttribute('aria-label')).resolves.toContain(`from ${formatInstant(api.series[0]!.timestamp)}`);
      // uPlot draws its axes on the canvas: the box keeps the time axis' labels as drawn.
      const labels = (await box.getAttribute('data-x-ticks')) ?? '';
      expect(labels).toMatch(/\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/);
      expect(labels).not.toMatch(/\d{1,2}\/\d{1,2}/);
      // The latest snapshot's time, in IST, on the page whatever the browser's zone.
      await expect(page.locator('#snapshot-heading').locator('xpath=..').innerText()).resolves.toMatch(/As of \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} IST/);
    },
    TEST_MS,
  );

  it(
    'draws a GMP chart of at least 20,000 points (render time printed, not asserted)',
    async () => {
      const { from, to, snapshots } = server.long;
      const page = await open(await newContext(), `#/ipos/${LONG_IPO.symbol}?interval=5m&field=mean&from=${from}&to=${to}`, '.gmp-chart .chart-box[data-render-ms]');
      const box = page.locator('.gmp-chart .chart-box');
      const points = Number(await box.getAttribute('data-points'));
      const renderMs = Number(await box.getAttribute('data-render-ms'));
      expect(points).toBe(snapshots);
      expect(points).toBeGreaterThanOrEqual(20_000);
      expect(Number.isFinite(renderMs)).toBe(true);
      console.log(`dashboard: GMP chart of ${points} points drawn in ${renderMs} ms`);
      writeFileSync(`${OUT}render.json`, `${JSON.stringify({ points, renderMs }, null, 2)}\n`);
    },
    TEST_MS,
  );

  it(
    'has no serious or critical axe violations on any page, light and dark',
    async () => {
      const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
      const found: string[] = [];
      const check = async (colorScheme: 'light' | 'dark') => {
        // The page's CSP forbids the injected script: bypass it for these checks only.
        const context = await newContext('pro', { colorScheme, bypassCSP: true });
        const page = await newPage(context);
        for (const view of views()) {
          await visit(page, view);
          await page.addScriptTag({ content: axe });
          const violations = await page.evaluate(async () => {
            type Result = { violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown }> }> };
            const run = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<Result> } }).axe.run;
            const result = await run(document, { resultTypes: ['violations'] });
            return result.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
          });
          for (const v of violations) {
            const line = `${view.name} (${colorScheme}): ${v.impact} ${v.id}: ${v.help} ${v.targets.slice(0, 5).join(' ')}`;
            console.log(`axe: ${line}`);
            if (v.impact === 'serious' || v.impact === 'critical') found.push(line);
          }
        }
      };
      // The two schemes side by side: each page mostly waits on the other processes.
      await Promise.all([check('light'), check('dark')]);
      expect(found).toEqual([]);
    },
    VIEWS_MS,
  );

  it(
    'works with the keyboard alone: Tab to the form, Enter creates, Escape closes, focus returns',
    async () => {
      const page = await open(await newContext(), '#/keys', 'table.keys');
      const focused = () => page.evaluate(() => {
        const el = document.activeElement;
        return { id: el?.id ?? '', tag: el?.tagName.toLowerCase() ?? '', text: (el as HTMLElement | null)?.innerText?.trim() ?? '', inDialog: el?.closest('dialog[open]') != null };
      });
      const tabTo = async (match: (f: Awaited<ReturnType<typeof focused>>) => boolean, most: number) => {
        for (let i = 0; i < most; i++) {
          await page.keyboard.press('Tab');
          if (match(await focused())) return true;
        }
        return false;
      };
      expect(await tabTo((f) => f.id === 'key-label', 40), 'Tab reaches the label field').toBe(true);
      await page.keyboard.type('keyboard only');
      expect(await tabTo((f) => f.tag === 'button' && f.text === 'Create key', 15), 'Tab reaches the Create key button').toBe(true);
      await page.keyboard.press('Enter');
      const key = await keyFromDialog(page);
      expect(await focused()).toMatchObject({ inDialog: true, text: 'Copy' });
      expect((await listApiKeys(server.store, { accountId: server.pro.id })).some((k) => k.label === 'keyboard only' && k.prefix === key.slice(0, 12))).toBe(true);

      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await expect.poll(focused, { timeout: 2000 }).toMatchObject({ tag: 'button', text: 'Create key', inDialog: false });
      expect(await onPage(page, key)).toBe(false);
    },
    TEST_MS,
  );

  it(
    'looks right at 360 and 1440 px, light and dark, without sideways scrolling on a phone (screenshots)',
    async () => {
      const overflow: string[] = [];
      const shoot = async (width: number, colorScheme: 'light' | 'dark') => {
        const context = await newContext('pro', { viewport: { width, height: 900 }, colorScheme });
        const page = await newPage(context);
        for (const view of views()) {
          await visit(page, view);
          // A modal's backdrop covers the viewport only: a dialog is shot as the screen shows it.
          await page.screenshot({ path: `${OUT}${view.name}-${width}-${colorScheme}.png`, fullPage: view.then === undefined, animations: 'disabled' });
          const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
          if (width === 360 && scrollWidth > 360) overflow.push(`${view.name} (${colorScheme}): ${scrollWidth} px wide`);
          // The navigation's items on one line, at either width.
          const rows = await page.evaluate(() => new Set([...document.querySelectorAll('.nav li')].map((li) => (li as HTMLElement).offsetTop)).size);
          if (rows !== 1) overflow.push(`${view.name} (${colorScheme}): the navigation takes ${rows} lines at ${width} px`);
        }
      };
      // The four sizes and schemes side by side (their contexts share nothing).
      await Promise.all([shoot(360, 'light'), shoot(360, 'dark'), shoot(1440, 'light'), shoot(1440, 'dark')]);
      expect(overflow, 'pages wider than a 360 px screen, or a navigation that wraps').toEqual([]);

      // The README's picture: the IPO page from its top to its GMP chart, 1440 wide.
      const context = await newContext('pro', { viewport: { width: 1440, height: 1280 }, colorScheme: 'light' });
      const ipo = views().find((v) => v.name === 'ipo')!;
      const page = await open(context, ipo.hash, ipo.ready);
      // The pointer on the chart, for its cross-hair and read-out.
      const plot = page.locator('.gmp-chart .chart-box .u-over');
      const box = (await plot.boundingBox())!;
      await plot.hover({ position: { x: box.width * 0.68, y: box.height / 2 } });
      await page.screenshot({ path: `${OUT}readme.png`, animations: 'disabled' });
    },
    VIEWS_MS,
  );

  it(
    'fits a 360 px screen: no page wider, no element past its right edge but inside a box that scrolls',
    async () => {
      const page = await newPage(await newContext('pro', { viewport: { width: 360, height: 800 } }));
      const found: string[] = [];
      for (const view of [...views(), { name: 'ipos-listed', hash: '#/ipos?status=listed', ready: 'table.ipo-table' }]) {
        await visit(page, view);
        const { scrollWidth, wide } = await page.evaluate(() => {
          const edge = document.documentElement.clientWidth + 0.5;
          const clips = (el: Element) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
          const out: string[] = [];
          for (const el of document.querySelectorAll('body *')) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 || r.height === 0 || r.right <= edge) continue;
            let inBox = false;
            for (let up = el.parentElement; up !== null && up !== document.body; up = up.parentElement) if (clips(up)) inBox = true;
            if (!inBox) out.push(`<${el.tagName.toLowerCase()} class="${el.getAttribute('class') ?? ''}"> ends at ${Math.round(r.right)} px`);
          }
          return { scrollWidth: document.documentElement.scrollWidth, wide: out };
        });
        if (scrollWidth > 360) found.push(`${view.name}: the page is ${scrollWidth} px wide`);
        for (const w of wide.slice(0, 5)) found.push(`${view.name}: ${w}`);
      }
      expect(found, 'wider than a 360 px screen').toEqual([]);
    },
    VIEWS_MS,
  );

  it(
    'makes no request to anything but its own server',
    async () => {
      const mark = requests.length;
      const page = await newPage(await newContext());
      for (const view of views()) await visit(page, view);
      const mine = requests.slice(mark);
      expect(mine.length).toBeGreaterThan(10);
      const origin = new URL(server.baseUrl).origin;
      // data: URLs (the inline icon) are no network request; everything else must be the server's.
      const elsewhere = requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
      expect(elsewhere, 'requests to anything but the test server, by any test of this file').toEqual([]);
      expect(mine.some((url) => url.includes('/account/ipos/'))).toBe(true);
    },
    VIEWS_MS,
  );
});
