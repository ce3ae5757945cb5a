/**
 * The dashboard in a real Chromium, against a real Express 5 server (browser-fixture.ts): keys
 * (create, revoke, rotate) checked with the API itself, usage, the IPO explorer and its chart
 * checked against the API's series, a 20,000-point chart's render time, axe on every page, the
 * keyboard alone, screenshots at 360 and 1440 px in both schemes, and no request leaving the
 * server. Skipped (one line) when there is no Chromium: CHROMIUM_PATH or /usr/bin/chromium.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium as playwright, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { listApiKeys } from '@ipokit/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ACCOUNT_COOKIE, findChromium, istDay, LONG_IPO, startDashboardServer, utcDay, type DashboardServer } from './browser-fixture.js';

const chromium = findChromium();
const OUT = fileURLToPath(new URL('../../../test-results/dashboard/', import.meta.url));
const TEST_MS = 30_000;
const DAY = 86_400_000;

let server: DashboardServer;
let browser: Browser;
/** Every URL any page of this file asked for (checked by the last test). */
const requests: string[] = [];
/** The current test's uncaught page errors and console errors (each test must end with none). */
let problems: string[] = [];
/** The current test's contexts, closed after it. */
const contexts: BrowserContext[] = [];

interface GmpSeries {
  series: Array<{ timestamp: string; price: number | null }>;
  meta: { from: string; to: string; count: number };
}

/** A fresh context signed in as `account` (pro unless told), in India's zone and locale. */
async function newContext(account: 'pro' | 'free' = 'pro', options: BrowserContextOptions = {}): Promise<BrowserContext> {
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
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
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
    { name: 'ipo', hash: `#/ipos/${LONG_IPO.symbol}?interval=30m&field=mean&from=${utcDay(now - 13 * DAY)}&to=${utcDay(now)}`, ready: '.chart-box[data-render-ms]' },
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
      // datetime-local, read in the browser's zone (Asia/Kolkata): the local date and time there.
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
    },
    TEST_MS,
  );

  it(
    "counts requests: today's admitted total rises by exactly the requests made",
    async () => {
      const today = istDay(Date.now());
      const page = await open(await newContext('free'), '#/usage', 'table caption#usage-table-caption');
      /** Today's admitted requests in the table (List + One IPO + GMP), 0 when today has no row. */
      const admittedToday = async () => {
        const row = page.locator('#usage-table-caption').locator('xpath=..').locator('tbody tr', { has: page.locator(`time[datetime="${today}"]`) });
        if ((await row.count()) === 0) return 0;
        const cells = await row.locator('td').allInnerTexts();
        return cells.slice(0, 3).reduce((sum, text) => sum + Number(text.replace(/\D/g, '')), 0);
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
      const box = page.locator(`.chart-box[data-points="${api.meta.count}"][data-render-ms]`);
      await box.waitFor({ timeout: 15_000 });
      expect(page.url()).toContain(`interval=hourly&field=max&from=${from}&to=${to}`);
      const text = (p: { timestamp: string; price: number | null }) => `${p.timestamp} ${p.price}`;
      await expect(box.getAttribute('data-first')).resolves.toBe(text(api.series[0]!));
      await expect(box.getAttribute('data-last')).resolves.toBe(text(api.series[api.series.length - 1]!));

      // Points in between, as the chart's own read-out shows them under the pointer.
      const expected = await page.evaluate((series) => {
        const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
        const money = new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: 2 });
        return series.map((p) => `${when.format(new Date(p.timestamp))}: ${p.price === null ? 'no value' : `₹${money.format(p.price)}`}`);
      }, api.series);
      const plot = page.locator('.chart-box .u-over');
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
          return !readout.startsWith('Latest: ') && readout !== previous;
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
    'draws a GMP chart of at least 20,000 points (render time printed, not asserted)',
    async () => {
      const { from, to, snapshots } = server.long;
      const page = await open(await newContext(), `#/ipos/${LONG_IPO.symbol}?interval=5m&field=mean&from=${from}&to=${to}`, '.chart-box[data-render-ms]');
      const box = page.locator('.chart-box');
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
    TEST_MS,
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
        }
      };
      // The four sizes and schemes side by side (their contexts share nothing).
      await Promise.all([shoot(360, 'light'), shoot(360, 'dark'), shoot(1440, 'light'), shoot(1440, 'dark')]);
      expect(overflow, 'pages wider than a 360 px screen').toEqual([]);

      // The README's picture: the IPO page from its top to its GMP chart, 1440 wide.
      const context = await newContext('pro', { viewport: { width: 1440, height: 1280 }, colorScheme: 'light' });
      const ipo = views().find((v) => v.name === 'ipo')!;
      const page = await open(context, ipo.hash, ipo.ready);
      // The pointer on the chart, for its cross-hair and read-out.
      const plot = page.locator('.chart-box .u-over');
      const box = (await plot.boundingBox())!;
      await plot.hover({ position: { x: box.width * 0.68, y: box.height / 2 } });
      await page.screenshot({ path: `${OUT}readme.png`, animations: 'disabled' });
    },
    TEST_MS,
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
    TEST_MS,
  );
});
