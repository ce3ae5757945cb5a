// Scratch check of the dashboard's interactions in Chromium (not shipped): keyboard order, the
// dialogs (focus trap, Escape, focus return), create / copy / revoke / rotate, and the free-plan,
// signed-out and rate-limited answers. Needs three dev servers (see the commands below).
//   PORT=5178 node --conditions=source --import tsx packages/dashboard/dev/serve.ts
//   PORT=5179 DASH_PLAN=free DASH_PER_MINUTE=3 node --conditions=source --import tsx packages/dashboard/dev/serve.ts
//   PORT=5180 DASH_SIGNED_OUT=1 node --conditions=source --import tsx packages/dashboard/dev/serve.ts
//   node --conditions=source --import tsx packages/dashboard/dev/flows.ts   (FLOW_PRO_PORT=5181: the pro flows on another server)
import { chromium, type Page } from 'playwright-core';

const root = (port: number) => `http://127.0.0.1:${port}/account/-/dashboard/`;
const pro = Number(process.env['FLOW_PRO_PORT'] ?? 5178);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
});
let failures = 0;
const check = (ok: boolean, what: string) => {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (el === null) return 'none';
    const name = el.getAttribute('aria-label') ?? (el as HTMLElement).innerText?.trim() ?? '';
    return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} ${name.slice(0, 40)}`.trim();
  });
/** The focused element once it settles (focus moves after the re-render that closes a dialog). */
const focusedSoon = async (page: Page, prefix: string) => {
  for (let i = 0; i < 20 && !(await focused(page)).startsWith(prefix); i++) await page.waitForTimeout(50);
  return focused(page);
};
const inDialog = (page: Page) => page.evaluate(() => document.activeElement?.closest('dialog[open]') !== null && document.activeElement?.closest('dialog[open]') !== undefined);

// Pro account: keyboard, keys.
{
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  await page.goto(`${root(pro)}#/`);
  await page.waitForSelector('.windows');
  const order: string[] = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    order.push(await focused(page));
  }
  console.log(`Tab order on #/: ${order.join(' | ')}`);
  check(order[0]?.startsWith('a Skip to content') === true, 'the skip link comes first');
  check(order.some((o) => o.startsWith('a Keys')), 'the nav is reachable with Tab');
  check((await page.locator('nav [aria-current="page"]').innerText()) === 'Account', 'the nav marks the account page');
  const ring = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  check(ring === 'solid', `a focus ring is drawn (${ring})`);

  await page.goto(`${root(pro)}#/keys`);
  await page.waitForSelector('table.keys');
  await page.getByLabel('Label').fill('ci runner');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor();
  const key = await page.locator('#new-key').inputValue();
  check(/^ipk_[0-9A-Za-z]{32}$/.test(key), 'the new key is shown once, whole');
  check((await focused(page)).startsWith('button Copy'), 'focus starts on Copy');
  let trapped = true;
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    trapped &&= await inDialog(page);
  }
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Shift+Tab');
    trapped &&= await inDialog(page);
  }
  check(trapped, 'Tab and Shift+Tab stay inside the dialog');
  await page.getByRole('button', { name: 'Copy' }).click();
  check((await page.evaluate(() => navigator.clipboard.readText())) === key, 'Copy puts the key on the clipboard');
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog[open]', { state: 'detached' });
  const afterEscape = await focusedSoon(page, 'button Create key');
  check(afterEscape.startsWith('button Create key'), `Escape closes it and focus returns (${afterEscape})`);
  check((await page.locator('#new-key').count()) === 0, 'the key text is gone after closing');

  await page.getByRole('button', { name: 'Revoke key ci runner' }).click();
  await dialog.waitFor();
  check((await focused(page)).startsWith('button Cancel'), 'the revoke dialog starts on Cancel');
  await page.keyboard.press('Escape');
  await page.waitForSelector('dialog[open]', { state: 'detached' });
  const afterCancel = await focusedSoon(page, 'button Revoke');
  check(afterCancel.startsWith('button Revoke'), `focus returns to the Revoke button (${afterCancel})`);
  await page.getByRole('button', { name: 'Revoke key ci runner' }).click();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await page.waitForSelector('dialog[open]', { state: 'detached' });
  await page.waitForFunction(() => [...document.querySelectorAll('table.keys tbody tr')].some((tr) => tr.textContent?.includes('ci runner') && tr.textContent.includes('revoked')));
  check(true, 'revoking marks the key revoked');

  await page.getByLabel('Label').fill('expiring');
  await page.getByLabel('Expires (optional)').fill('2020-01-01T10:00');
  await page.getByRole('button', { name: 'Create key' }).click();
  check((await page.locator('.create-key [role="alert"]').count()) === 1, 'an expiry in the past is refused inline');
  await page.getByLabel('Expires (optional)').fill('2027-01-31T10:00');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#new-key').waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
  const sent = await page.evaluate(() => new Date('2027-01-31T10:00').toISOString());
  const listed = await page.evaluate(async () => ((await (await fetch('../../keys')).json()) as { keys: Array<{ label: string; expiresAt: string | null }> }).keys.find((k) => k.label === 'expiring')?.expiresAt);
  check(listed === sent, `the expiry is sent as an ISO instant in the browser's zone (${listed})`);

  await page.getByRole('button', { name: 'Rotate key production server' }).first().click();
  await page.getByLabel('Keep the old key working for').selectOption('604800');
  await dialog.getByRole('button', { name: 'Rotate' }).click();
  await page.locator('#new-key').waitFor();
  check(/^ipk_/.test(await page.locator('#new-key').inputValue()), 'rotating shows the new key once');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('table.keys tbody tr')].filter((tr) => tr.textContent?.includes('production server')).length === 2);
  check(true, 'after rotation both keys are listed, the old one with an expiry');

  await page.goto(`${root(pro)}#/ipos?status=announced&limit=3`);
  await page.getByText('Page 1 of 3').waitFor();
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByText('Page 2 of 3').waitFor();
  check(page.url().includes('page=2'), 'Next moves to page 2 and the hash says so');
  await page.locator('table a').first().click();
  await page.waitForSelector('#details-heading');
  check((await focused(page)).startsWith('h1#page-title'), 'opening an IPO moves focus to its title');
  await page.getByRole('link', { name: '← All IPOs' }).click();
  await page.getByText('Page 2 of 3').waitFor();
  check(true, '"All IPOs" goes back to the same list page');
  await context.close();
}

// Free account, 3 requests a minute: ERR:PLAN near the action, GMP not in the plan, 429.
{
  const page = await browser.newPage({ viewport: { width: 360, height: 800 } });
  await page.goto(`${root(5179)}#/keys`);
  await page.waitForSelector('table.keys');
  await page.getByLabel('Label').fill('second key');
  await page.getByRole('button', { name: 'Create key' }).click();
  const alert = page.locator('.create-key [role="alert"]');
  await alert.waitFor();
  console.log(`     free plan alert: ${await alert.innerText()}`);
  check(true, 'a second key on free is refused inline, with role="alert"');
  await page.goto(`${root(5179)}#/ipos/ORBIT`);
  await page.waitForSelector('#snapshot-heading');
  await page.getByText('does not include GMP').first().waitFor();
  check((await page.getByText('does not include GMP').count()) >= 1, 'the IPO page says the plan does not include GMP');
  for (let i = 0; i < 4; i++) await page.goto(`${root(5179)}#/ipos?status=listed&page=${i + 1}`);
  await page.getByText('Too many requests').waitFor({ timeout: 5000 }).catch(() => undefined);
  const limited = page.locator('[role="alert"]', { hasText: 'Too many requests' });
  check((await limited.count()) === 1, `a 429 is shown with its wait (${(await limited.count()) === 1 ? await limited.innerText() : 'none'})`);
  await page.close();
}

// Nobody signed in.
{
  const page = await browser.newPage();
  await page.goto(root(5180));
  await page.getByRole('heading', { name: 'You are not signed in' }).waitFor({ timeout: 5000 }).catch(() => undefined);
  check((await page.getByRole('heading', { name: 'You are not signed in' }).count()) === 1, 'a 401 shows "You are not signed in"');
  await page.close();
}

await browser.close();
console.log(failures === 0 ? 'all flows pass' : `${failures} failures`);
process.exitCode = failures === 0 ? 0 : 1;
