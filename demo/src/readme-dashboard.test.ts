import { rm, stat, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROOT, freePort, readmeBlock, startBlock, stopBlock } from '../../test/readme-blocks.js';

// The README's "Account dashboard" block runs as pasted (`node server.mjs`, on the packages'
// dist/): it prints the /login address; /login sets the stand-in's cookie and sends the
// browser to the dashboard; with the cookie the account routes answer for Acme, without it
// 401; the dashboard page loads; the key the block made works on /ipos. The screenshot the
// section shows is committed.

describe('README "Account dashboard"', () => {
  it('runs as pasted: login, the account routes behind it, the page, the IPO routes', async () => {
    const file = `${ROOT}demo/src/.readme-dashboard-${process.pid}.mjs`;
    await writeFile(file, await readmeBlock('Account dashboard'));
    const port = await freePort();
    const { child, line } = startBlock([file], port);
    try {
      const printed = await line;
      expect(printed).toBe(`open http://localhost:${port}/login`);
      const base = `http://127.0.0.1:${port}`;
      const login = await fetch(`${base}/login`, { redirect: 'manual' });
      expect(login.status).toBe(302);
      expect(login.headers.get('location')).toBe('/account/-/dashboard/');
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      expect((await fetch(`${base}/account/`)).status).toBe(401);
      const me = await fetch(`${base}/account/`, { headers: { cookie } });
      expect(me.status).toBe(200);
      const body = (await me.json()) as { account: { name: string; plan: string }; windows: Array<{ name: string; quota: number }>; keys: unknown[] };
      expect(body.account).toMatchObject({ name: 'Acme', plan: 'pro' });
      expect(body.windows.map((w) => [w.name, w.quota])).toEqual([['minute', 60], ['day', 5_000], ['gmp-minute', 3]]);
      expect(body.keys).toHaveLength(1);
      const page = await fetch(`${base}/account/-/dashboard/`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      // a key made on the dashboard's route works on the IPO routes, on the same windows
      const made = await fetch(`${base}/account/keys`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{"label":"from the test"}' });
      expect(made.status).toBe(201);
      const { key } = ((await made.json()) as { key: { key: string } }).key;
      const ipo = await fetch(`${base}/ipos/ORBIT/gmp?interval=hourly`, { headers: { 'x-api-key': key } });
      expect(ipo.status).toBe(200);
      expect(((await ipo.json()) as { series: unknown[] }).series.length).toBeGreaterThan(20);
    } finally {
      await stopBlock(child);
      await rm(file, { force: true });
    }
  });

  it('shows a committed screenshot of the dashboard', async () => {
    expect((await stat(`${ROOT}docs/dashboard.png`)).size).toBeGreaterThan(10_000);
  });
});
