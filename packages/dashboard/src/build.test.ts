import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The package exports dist/ only (the page is built, not compiled per test): these check the build
// that `npm run prepare` (or `npm ci`) made.
const dist = new URL('../dist/', import.meta.url);
const FIRST_LOAD_BUDGET = 60_000;

interface Sizes {
  assets: Record<string, { raw: number; gzip: number }>;
  firstLoad: { raw: number; gzip: number };
}

function built(): void {
  if (!existsSync(new URL('index.js', dist)) || !existsSync(new URL('sizes.json', dist))) {
    throw new Error('packages/dashboard/dist is missing: run npm run prepare (or npm run build -w @ipokit/dashboard)');
  }
}

describe('the built dashboard', () => {
  it('exports frozen assets: index.html and every file it references, with UTF-8 content types', async () => {
    built();
    const { dashboardAssets } = (await import(new URL('index.js', dist).href)) as { dashboardAssets: Record<string, { contentType: string; body: string }> };
    expect(Object.isFrozen(dashboardAssets)).toBe(true);
    const page = dashboardAssets[''];
    expect(page?.contentType).toBe('text/html; charset=utf-8');
    const html = page!.body;
    expect(html).toMatch(/<html lang="en">/);
    expect(html).toMatch(/<meta name="viewport"/);
    expect(html).toMatch(/<title>[^<]+<\/title>/);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => !url.startsWith('data:'));
    expect(refs.length).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      expect(ref, 'relative, so the page works under any mount').not.toMatch(/^(\/|[a-z]+:)/i);
      const asset = dashboardAssets[ref];
      expect(asset, `index.html references ${ref}`).toBeDefined();
      expect(asset!.contentType).toMatch(/; charset=utf-8$/);
    }
    expect(refs.some((r) => /^app-[0-9a-f]+\.js$/.test(r))).toBe(true);
    expect(refs.some((r) => /^app-[0-9a-f]+\.css$/.test(r))).toBe(true);
    for (const asset of Object.values(dashboardAssets)) expect(asset.body).not.toMatch(/(?:src|href|url\()\s*=?\s*["']?https?:\/\//i);
  });

  it(`loads at most ${FIRST_LOAD_BUDGET / 1000} kB gzipped on first load`, () => {
    built();
    const sizes = JSON.parse(readFileSync(new URL('sizes.json', dist), 'utf8')) as Sizes;
    expect(Object.keys(sizes.assets)).toContain('index.html');
    expect(sizes.firstLoad.gzip).toBe(Object.values(sizes.assets).reduce((sum, a) => sum + a.gzip, 0));
    expect(sizes.firstLoad.gzip).toBeLessThanOrEqual(FIRST_LOAD_BUDGET);
  });
});
