// Builds the dashboard into dist/: esbuild bundles the Preact app (src/app/main.tsx) into one
// JavaScript and one CSS file with content-hashed names, an index.html links them, and
// dist/index.js exports all three as strings (`dashboardAssets`), so that the account routers
// serve them from memory: no files to find at run time, no CDN, no build step for users.
// Fails (exit 1) when the first load, gzipped, is over the budget.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, gzipSync } from 'node:zlib';

/** Every file index.html loads, gzipped one by one at level 9, must fit in this many bytes. */
const FIRST_LOAD_BUDGET = 60_000;

/** dist/index.d.ts, written by hand: the generated module's one export. */
const DECLARATIONS = `/** One file of the dashboard: its \`Content-Type\` and its text. */
export interface DashboardAsset {
  /** e.g. \`text/html; charset=utf-8\`. */
  contentType: string;
  /** The whole file, as text (UTF-8 on the wire). */
  body: string;
}

/**
 * The account dashboard's static files, by path below the dashboard's root: \`''\` is the
 * page (index.html), the others are its content-hashed script and style sheet (e.g.
 * \`'app-3f2a9c1b0d.js'\`), which the page loads with relative URLs. The account routers of
 * \`@ipokit/express\`, \`@ipokit/koa\` and \`@ipokit/fetch\` serve them at
 * \`GET {mount}/-/dashboard/\` when given \`dashboard: true\`; the page then calls the account
 * API at \`{mount}/\` with relative URLs, so it works under any mount. Frozen; built with the
 * package, no CDN, no network access.
 *
 * @example
 * \`\`\`ts
 * // Serve the dashboard yourself, e.g. at /account/-/dashboard/ with node:http
 * import { createServer } from 'node:http';
 * import { dashboardAssets } from '@ipokit/dashboard';
 *
 * const root = '/account/-/dashboard/';
 * createServer((req, res) => {
 *   const path = new URL(req.url ?? '/', 'http://localhost').pathname;
 *   const name = path.slice(root.length);
 *   // own files only: '__proto__' or 'constructor' is no file
 *   const asset = path.startsWith(root) && Object.hasOwn(dashboardAssets, name) ? dashboardAssets[name] : undefined;
 *   if (asset === undefined) return void res.writeHead(404).end();
 *   res.writeHead(200, { 'Content-Type': asset.contentType }).end(asset.body);
 * }).listen(3000);
 * \`\`\`
 */
export declare const dashboardAssets: Readonly<Record<string, DashboardAsset>>;
`;

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');

const result = await build({
  absWorkingDir: here,
  entryPoints: ['src/app/main.tsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  charset: 'utf8',
  outdir: 'out',
  entryNames: 'app',
  write: false,
  logLevel: 'warning',
});

const js = outputText('.js');
const css = outputText('.css');
const jsName = `app-${hash(js)}.js`;
const cssName = `app-${hash(css)}.css`;

// A tiny inline icon, so that the browser asks the server for no /favicon.ico.
const icon =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%230b57d0'/%3E%3Cpath d='M3 12l3-4 3 2 4-6' stroke='white' stroke-width='2' fill='none'/%3E%3C/svg%3E";

// No inline script or style: the router's Content-Security-Policy allows only the page's own files.
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>ipokit dashboard</title>
<link rel="icon" href="${icon}">
<link rel="stylesheet" href="${cssName}">
<script type="module" src="${jsName}"></script>
</head>
<body>
<div id="app"></div>
<noscript><p>The ipokit dashboard needs JavaScript: turn it on for this site, then reload the page.</p></noscript>
</body>
</html>
`;

const assets = {
  '': { contentType: 'text/html; charset=utf-8', body: html },
  [jsName]: { contentType: 'text/javascript; charset=utf-8', body: js },
  [cssName]: { contentType: 'text/css; charset=utf-8', body: css },
};

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
writeFileSync(join(dist, 'index.js'), moduleText(assets));
writeFileSync(join(dist, 'index.d.ts'), DECLARATIONS);
writeFileSync(join(dist, 'THIRD_PARTY_LICENSES.txt'), licenses(['preact', 'uplot']));

const sizes = {};
for (const [path, asset] of Object.entries(assets)) {
  const bytes = Buffer.from(asset.body, 'utf8');
  sizes[path === '' ? 'index.html' : path] = { raw: bytes.length, gzip: gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION }).length };
}
const firstLoad = Object.values(sizes).reduce((sum, s) => ({ raw: sum.raw + s.raw, gzip: sum.gzip + s.gzip }), { raw: 0, gzip: 0 });
writeFileSync(join(dist, 'sizes.json'), `${JSON.stringify({ assets: sizes, firstLoad, budget: { gzip: FIRST_LOAD_BUDGET } }, null, 2)}\n`);

for (const [name, s] of Object.entries(sizes)) console.log(`dashboard: ${name.padEnd(22)} ${kb(s.raw).padStart(9)} raw ${kb(s.gzip).padStart(9)} gzip`);
console.log(`dashboard: first load ${kb(firstLoad.gzip)} gzipped (budget ${kb(FIRST_LOAD_BUDGET)})`);
if (firstLoad.gzip > FIRST_LOAD_BUDGET) {
  console.error(`dashboard: the first load is ${kb(firstLoad.gzip)} gzipped, over the budget of ${kb(FIRST_LOAD_BUDGET)}`);
  process.exit(1);
}

function outputText(ext) {
  const files = result.outputFiles.filter((f) => f.path.endsWith(ext));
  if (files.length !== 1) throw new Error(`build: expected one ${ext} output, got ${files.length}`);
  return files[0].text;
}

function hash(text) {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

function kb(bytes) {
  return `${(bytes / 1000).toFixed(1)} kB`;
}

function moduleText(files) {
  const entries = Object.entries(files).map(([path, a]) => `  ${JSON.stringify(path)}: asset(${JSON.stringify(a.contentType)}, ${JSON.stringify(a.body)}),`);
  return `// Generated by packages/dashboard/build.mjs: the dashboard's files. Do not edit.
const asset = (contentType, body) => Object.freeze({ contentType, body });

/** The dashboard's files by path below the dashboard's root ('' is index.html). */
export const dashboardAssets = Object.freeze({
${entries.join('\n')}
});
`;
}

function licenses(names) {
  const require = createRequire(import.meta.url);
  return names
    .map((name) => {
      const dir = dirname(require.resolve(`${name}/package.json`));
      const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return `${name} ${version}, bundled into the dashboard's JavaScript:\n\n${readFileSync(join(dir, 'LICENSE'), 'utf8').trim()}\n`;
    })
    .join('\n\n');
}
