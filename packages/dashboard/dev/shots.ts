// Scratch check of the dashboard in Chromium (not shipped): screenshots of every page at 360 and
// 1440 px, light and dark, into /tmp/dash-shots/, axe-core on each, horizontal overflow, console
// errors, requests that leave the server, and the GMP chart's render time. Needs dev/serve.ts running.
//   node --conditions=source --import tsx packages/dashboard/dev/shots.ts [base-url]
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Page } from 'playwright-core';

const base = process.argv[2] ?? 'http://127.0.0.1:5178/account/-/dashboard/';
const out = '/tmp/dash-shots';
mkdirSync(out, { recursive: true });
const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const PAGES: Array<{ name: string; hash: string; ready: string; then?: (page: Page) => Promise<void> }> = [
  { name: 'account', hash: '#/', ready: '.windows' },
  { name: 'keys', hash: '#/keys', ready: 'table.keys' },
  { name: 'usage', hash: '#/usage', ready: '.usage-chart svg' },
  { name: 'ipos', hash: '#/ipos?status=listed', ready: '.table-box table' },
  { name: 'ipo', hash: '#/ipos/ORBIT?interval=hourly&from=2026-11-01&to=2026-11-22', ready: '[data-render-ms]' },
  { name: 'ipo-20k', hash: '#/ipos/2026000002?interval=5m&from=2026-09-15&to=2026-11-22', ready: '[data-render-ms]' },
  {
    name: 'keys-rotate',
    hash: '#/keys',
    ready: 'table.keys',
    then: async (page) => {
      await page.getByRole('button', { name: /Rotate key production/ }).first().click();
      await page.waitForSelector('dialog[open]');
    },
  },
];

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
});
const origin = new URL(base).origin;
let problems = 0;
for (const width of [360, 1440]) {
  for (const colorScheme of ['light', 'dark'] as const) {
    // The router's CSP forbids inline scripts, which is how addScriptTag injects axe.
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, bypassCSP: true });
    const page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && report(`console error: ${m.text()}`));
    page.on('pageerror', (e) => report(`page error: ${e.message}`));
    page.on('request', (r) => !r.url().startsWith(origin) && !r.url().startsWith('data:') && report(`request left the server: ${r.url()}`));
    for (const p of PAGES) {
      await page.goto(`${base}${p.hash}`);
      await page.waitForSelector(p.ready, { timeout: 15_000 }).catch(() => report(`${p.name}: ${p.ready} never appeared`));
      await p.then?.(page);
      await page.waitForTimeout(150);
      const file = `${out}/${p.name}-${width}-${colorScheme}.png`;
      await page.screenshot({ path: file, fullPage: true });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (overflow > 0) report(`${p.name} ${width}: the page scrolls sideways by ${overflow} px`);
      const renderMs = await page.locator('[data-render-ms]').first().getAttribute('data-render-ms', { timeout: 100 }).catch(() => null);
      const points = await page.locator('[data-points]').first().getAttribute('data-points', { timeout: 100 }).catch(() => null);
      await page.addScriptTag({ path: axePath });
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
        const result = await axe.run();
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 4) }));
      });
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      for (const v of serious) report(`${p.name} ${width} ${colorScheme}: axe ${v.impact} ${v.id}: ${v.help} ${v.targets.join(' ')}`);
      const minor = violations.filter((v) => !serious.includes(v)).map((v) => `${v.id}(${v.impact})`);
      console.log(`${file}${renderMs === null ? '' : ` render ${renderMs} ms, ${points} points`}; axe: ${serious.length} serious/critical${minor.length > 0 ? `, other: ${minor.join(' ')}` : ''}`);
    }
    await context.close();
  }
}
await browser.close();
console.log(problems === 0 ? 'no problems' : `${problems} problems`);

function report(message: string): void {
  problems++;
  console.log(`PROBLEM ${message}`);
}
