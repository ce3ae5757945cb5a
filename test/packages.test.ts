/**
 * The packages as users install them (issue: "every package passes publint and
 * @arethetypeswrong/cli; a test installs the packed tarballs into a scratch project and
 * imports them as ESM and as CommonJS, with types"). Each package is built with tsup and
 * packed with `npm pack`; the tarballs are installed with npm into a project outside the
 * workspace, where scripts import every package both ways and serve a request through
 * each router, a strict TypeScript consumer type-checks against the shipped .d.ts (ESM and
 * CommonJS), and the installed `ipokit` command runs. @ipokit/client has its own such test
 * (packages/client/src/package.test.ts), which builds it; it is left out here so the two
 * never build the same dist at once (its tarball's README, LICENSE and package.json
 * metadata are checked here all the same, from `npm pack --dry-run`).
 *
 * Each package is built beside its dist/ and moved in file by file, never emptying dist/:
 * demo/src/readme.test.ts runs the README's blocks with plain Node on dist/ meanwhile.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM, ROOT, buildIntoDist, npmInstall, packClientCopy, packDirectory, run } from './tarballs.js';

const SLOW = 600_000;
const PACKAGES = ['core', 'webhooks', 'testing', 'storage-memory', 'storage-postgres', 'express', 'koa', 'fetch', 'sources', 'cli'] as const;
/** Every published package: the ones above, @ipokit/client and @ipokit/dashboard. */
const ALL_PACKAGES = [...PACKAGES, 'client', 'dashboard'] as const;
const REPOSITORY = 'git+https://github.com/ipokit/ipokit.git';
const HOMEPAGE = 'https://github.com/ipokit/ipokit#readme';

/** The files of a package's tarball, without the leading `package/`. */
async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  return stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''));
}

/** Every package's public entry points and what each must export (a function or class). */
const EXPORTS: Record<string, string[]> = {
  '@ipokit/core': ['importDataset', 'createAccount', 'createApiKey', 'listApiKeys', 'revokeApiKey', 'openApiDocument', 'IpokitError', 'validateDataset'],
  '@ipokit/webhooks': ['startWebhookWorker', 'fetchTransport', 'MemoryOutbox'],
  '@ipokit/sources': ['startCollector', 'datasetUrlSource', 'localSourceStore'],
  '@ipokit/storage-memory': ['memoryStore'],
  '@ipokit/storage-postgres': ['postgresStore', 'migrate'],
  '@ipokit/express': ['ipoRouter', 'accountRouter'],
  '@ipokit/koa': ['ipoRouter', 'accountRouter'],
  '@ipokit/fetch': ['ipoHandler', 'accountRouter'],
  '@ipokit/cli': ['runCli'],
};

const DATASET = {
  ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2026-11-24' }],
};

/**
 * A webhook worker from the built @ipokit/webhooks, with its default transport (the \`#platform\`
 * import: on Node the undici one): a loopback URL is refused at creation, and once opened
 * with webhookAllowedNetworks it is delivered to, signed (the \`#crypto\` import's HMAC).
 * Prints "ERR:BADPARAM 1 signed".
 */
const WEBHOOK_CHECK = `
async function webhookCheck(core, memory, webhooks) {
  const store = memory.memoryStore();
  const pro = await core.createAccount(store, { name: 'h', plan: 'pro' });
  const got = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => { got.push({ id: req.headers['webhook-id'], timestamp: req.headers['webhook-timestamp'], signature: req.headers['webhook-signature'], body }); res.writeHead(204).end(); });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const url = 'http://127.0.0.1:' + receiver.address().port + '/hook';
  let refused = 'accepted';
  try { await core.createWebhook(store, { accountId: pro.id, url, events: ['ipo.created'] }); } catch (e) { refused = e.code; }
  const local = { webhookAllowedNetworks: ['127.0.0.0/8'] };
  const { secret } = await core.createWebhook(store, { accountId: pro.id, url, events: ['ipo.created'] }, local);
  const worker = webhooks.startWebhookWorker(store, { allowInsecureWebhooks: true, pollIntervalMs: 20, ...local });
  await core.importDataset(store, ${JSON.stringify(DATASET)});
  for (let i = 0; i < 400 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  await worker.stop();
  receiver.close();
  // the Standard Webhooks signature, checked with node:crypto
  const mac = (d) => 'v1,' + crypto.createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(d.id + '.' + d.timestamp + '.' + d.body).digest('base64');
  return refused + ' ' + got.length + ' ' + (got.length > 0 && got.every((d) => d.signature === mac(d)) ? 'signed' : 'bad signature');
}

/**
 * The \`#crypto\` import from the built files: the API-key hash through @ipokit/core/backend
 * (node:crypto on Node), and the other runtimes' file (@noble/hashes) loaded by its path, each
 * against node:crypto. Prints "true true true".
 */
function cryptoCheck(backend, web) {
  const key = 'ipk_0123456789abcdefghijABCDEFGHIJ01';
  const sha = (t) => crypto.createHash('sha256').update(t, 'utf8').digest('hex');
  const body = JSON.stringify({ pad: 'x'.repeat(1024) });
  return [
    backend.hashApiKey(key) === sha(key),
    web.sha256Hex(key) === sha(key),
    Buffer.from(web.hmacSha256(Buffer.from('whsec-bytes'), body)).toString('hex') === crypto.createHmac('sha256', 'whsec-bytes').update(body).digest('hex'),
  ].join(' ');
}
`;

const ESM_SCRIPT = `
import crypto from 'node:crypto';
import http from 'node:http';
import express from 'express';
import Koa from 'koa';
import * as core from '@ipokit/core';
import * as backend from '@ipokit/core/backend';
import * as webhooks from '@ipokit/webhooks';
import * as memory from '@ipokit/storage-memory';
import * as postgres from '@ipokit/storage-postgres';
import * as ex from '@ipokit/express';
import * as koa from '@ipokit/koa';
import * as fetchAdapter from '@ipokit/fetch';
import * as cli from '@ipokit/cli';
import * as sources from '@ipokit/sources';
const modules = { '@ipokit/core': core, '@ipokit/webhooks': webhooks, '@ipokit/storage-memory': memory, '@ipokit/storage-postgres': postgres, '@ipokit/express': ex, '@ipokit/koa': koa, '@ipokit/fetch': fetchAdapter, '@ipokit/sources': sources, '@ipokit/cli': cli };
const missing = [];
for (const [name, names] of Object.entries(${JSON.stringify(EXPORTS)})) for (const n of names) if (typeof modules[name][n] !== 'function') missing.push(name + ' ' + n);
const store = memory.memoryStore();
await core.importDataset(store, ${JSON.stringify(DATASET)});
const acct = await core.createAccount(store, { name: 'a', plan: 'paid' });
const { key } = await core.createApiKey(store, { accountId: acct.id, label: 'k' });
async function ask(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const res = await fetch('http://127.0.0.1:' + server.address().port + '/ipos/ORBIT', { headers: { 'x-api-key': key } });
  const body = await res.json();
  server.close();
  return res.status + ' ' + body.ipo.symbol;
}
const app = express();
app.use('/ipos', ex.ipoRouter(store, { now: () => new Date('2026-11-22T06:30:00Z') }));
const kapp = new Koa();
kapp.use(koa.ipoRouter(store, { prefix: '/ipos', now: () => new Date('2026-11-22T06:30:00Z') }));
const handle = fetchAdapter.ipoHandler(store, { prefix: '/ipos', now: () => new Date('2026-11-22T06:30:00Z') });
const answer = await handle(new Request('http://localhost/ipos/ORBIT', { headers: { 'x-api-key': key } }));
const fetched = answer.status + ' ' + (await answer.json()).ipo.symbol;
${WEBHOOK_CHECK}
const web = await import(new URL('./node_modules/@ipokit/core/dist/crypto-web.js', import.meta.url).href);
console.log(JSON.stringify({ missing, express: await ask(http.createServer(app)), koa: await ask(http.createServer(kapp.callback())), fetch: fetched, webhooks: await webhookCheck(core, memory, webhooks), crypto: cryptoCheck(backend, web) }));
`;

const CJS_SCRIPT = `
const crypto = require('node:crypto');
const http = require('node:http');
const express = require('express');
const modules = Object.fromEntries(${JSON.stringify(Object.keys(EXPORTS))}.map((n) => [n, require(n)]));
const missing = [];
for (const [name, names] of Object.entries(${JSON.stringify(EXPORTS)})) for (const n of names) if (typeof modules[name][n] !== 'function') missing.push(name + ' ' + n);
const core = modules['@ipokit/core'];
${WEBHOOK_CHECK}
(async () => {
  const store = modules['@ipokit/storage-memory'].memoryStore();
  await core.importDataset(store, ${JSON.stringify(DATASET)});
  const acct = await core.createAccount(store, { name: 'a', plan: 'paid' });
  const { key } = await core.createApiKey(store, { accountId: acct.id, label: 'k' });
  const app = express();
  app.use('/ipos', modules['@ipokit/express'].ipoRouter(store, { now: () => new Date('2026-11-22T06:30:00Z') }));
  const server = http.createServer(app);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const res = await fetch('http://127.0.0.1:' + server.address().port + '/ipos/ORBIT', { headers: { 'x-api-key': key } });
  const body = await res.json();
  server.close();
  // the dashboard (an ES module) loads from CommonJS too
  const accountApp = express();
  accountApp.use('/account', modules['@ipokit/express'].accountRouter(store, { account: () => acct.id, dashboard: true }));
  const accountServer = http.createServer(accountApp);
  await new Promise((r) => accountServer.listen(0, '127.0.0.1', r));
  const page = await fetch('http://127.0.0.1:' + accountServer.address().port + '/account/-/dashboard/');
  accountServer.close();
  const webhooks = await webhookCheck(core, modules['@ipokit/storage-memory'], modules['@ipokit/webhooks']);
  const hashes = cryptoCheck(require('@ipokit/core/backend'), require('./node_modules/@ipokit/core/dist/crypto-web.cjs'));
  console.log(JSON.stringify({ missing, express: res.status + ' ' + body.ipo.symbol, dashboard: page.status + ' ' + page.headers.get('content-type'), webhooks, crypto: hashes }));
})();
`;

// A strict consumer: the shipped types must be complete and precise.
const CONSUMER_ESM = `
import express from 'express';
import Koa from 'koa';
import { createAccount, importDataset, IpokitError, openApiDocument, type Ipo, type IpoRouterOptions, type Store } from '@ipokit/core';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaRouter } from '@ipokit/koa';
import { ipoHandler, type FetchIpoHandlerOptions } from '@ipokit/fetch';
import { runCli } from '@ipokit/cli';

const store: Store = memoryStore();
const options: IpoRouterOptions = { limits: { paid: { perMinute: 600 } }, keyCacheTtlMs: 1000 };
const result: { ipos: number; snapshots: number } = await importDataset(store, {});
const account = await createAccount(store, { name: 'Acme', plan: 'pro', gmpAddon: true });
account.plan satisfies 'free' | 'paid' | 'pro';
express().use('/ipos', ipoRouter(store, options));
new Koa().use(koaRouter(store, { ...options, prefix: '/ipos' }));
const handle: (request: Request) => Promise<Response> = ipoHandler(store, { ...options, prefix: '/ipos', clientAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined });
const withContext: FetchIpoHandlerOptions<[info: { remoteAddr: { hostname: string } }]> = { clientAddress: (_request, info) => info.remoteAddr.hostname };
const deno: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response> = ipoHandler(store, withContext);
const doc = openApiDocument({ serverUrl: '/ipos' });
doc.openapi satisfies string;
const ipo: Ipo | null = null;
const err: IpokitError | null = null;
declare const pool: { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>; connect(): Promise<{ query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>; release(): void }>; totalCount: number }; // a pool, as pg.Pool
await migrate(pool);
postgresStore({ client: pool });
const code: Promise<number> = runCli(['--help'], { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: '.' });
// @ts-expect-error plan is one of free, paid, pro
await createAccount(store, { name: 'x', plan: 'gold' });
console.log(result, ipo, err, code, handle, deno);
`;

const CONSUMER_CJS = `
import core = require('@ipokit/core');
import memory = require('@ipokit/storage-memory');
import ex = require('@ipokit/express');
const store: core.Store = memory.memoryStore();
export const router = ex.ipoRouter(store, { maxUrlLength: 2048 });
export const done: Promise<{ ipos: number; snapshots: number }> = core.importDataset(store, {});
`;

describe('the packages as installed from their tarballs', () => {
  let tmp: string;
  let project: string;
  const tarballs: Record<string, string> = {};

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ipokit-packages-'));
    for (const name of PACKAGES) {
      await buildIntoDist(name);
      tarballs[name] = await packDirectory(join(ROOT, 'packages', name), tmp);
    }
    // @ipokit/sources depends on @ipokit/client: its tarball is installed too, built into a
    // copy of the package (its own test rebuilds packages/client/dist meanwhile).
    tarballs.client = await packClientCopy(tmp);
    // The dashboard's dist/ is what prepare built (its build.mjs, no tsup): packed as it is.
    tarballs.dashboard = await packDirectory(join(ROOT, 'packages', 'dashboard'), tmp);
    project = join(tmp, 'project');
    await run('mkdir', ['-p', project]);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    // Dependencies come from npm's cache where `npm ci` put them (no download needed); no
    // @ipokit package from a registry.
    await npmInstall(project, [...Object.values(tarballs), 'express@5', 'koa@3', 'pg@8', '@types/express@5', '@types/koa@3', '@types/node@20']);
  }, SLOW);

  afterAll(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });

  it('ship only what they need: dist (and src for the source maps), no tests', async () => {
    for (const name of PACKAGES) {
      const files = await tarballFiles(tarballs[name]!);
      expect(files.filter((f) => /\.test\.ts$|test-|\.tsbuildinfo$|^\.dist-/.test(f)), name).toEqual([]);
      expect(files, name).toContain('dist/index.js');
      expect(files, name).toContain('dist/index.cjs');
      expect(files, name).toContain('dist/index.d.ts');
      expect(files, name).toContain('dist/index.d.cts');
    }
  });

  it('carry a README and the LICENSE, and package.json says where they come from', async () => {
    const license = await readFile(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the ipokit authors\n/);
    for (const name of ALL_PACKAGES) {
      const dir = join(ROOT, 'packages', name);
      // @ipokit/client is built and packed by its own test: here only the list of its files.
      const files =
        name === 'client'
          ? (JSON.parse((await run(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir })).stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path)
          : await tarballFiles(tarballs[name]!);
      expect(files, name).toContain('README.md');
      expect(files, name).toContain('LICENSE');
      // The copy in each package is the root LICENSE, byte for byte (and so is the packed one).
      expect(await readFile(join(dir, 'LICENSE'), 'utf8'), name).toBe(license);
      if (name !== 'client') expect((await run('tar', ['-xzOf', tarballs[name]!, 'package/LICENSE'])).stdout, name).toBe(license);
      const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
      expect(pkg.license, name).toBe('MIT');
      expect(pkg.repository, name).toEqual({ type: 'git', url: REPOSITORY, directory: `packages/${name}` });
      expect(pkg.homepage, name).toBe(HOMEPAGE);
      expect(Array.isArray(pkg.keywords) && pkg.keywords.length > 0 && pkg.keywords.every((k) => typeof k === 'string' && k !== ''), name).toBe(true);
      // The README names its package, shows the install line and links the root README.
      const readme = await readFile(join(dir, 'README.md'), 'utf8');
      expect(readme.startsWith(`# @ipokit/${name}\n`), name).toBe(true);
      expect(readme, name).toMatch(new RegExp(`npm install @ipokit/${name}\\b`));
      expect(readme, name).toContain('https://github.com/ipokit/ipokit#');
    }
    // Every package's version has its entry in the changelog.
    const changelog = await readFile(join(ROOT, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    for (const name of ALL_PACKAGES) {
      const { version } = JSON.parse(await readFile(join(ROOT, 'packages', name, 'package.json'), 'utf8')) as { version: string };
      expect(changelog, name).toMatch(new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
    }
  });

  it('import as ESM and serve through every adapter', async () => {
    await writeFile(join(project, 'esm.mjs'), ESM_SCRIPT);
    const { stdout } = await run(process.execPath, ['esm.mjs'], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ missing: [], express: '200 ORBIT', koa: '200 ORBIT', fetch: '200 ORBIT', webhooks: 'ERR:BADPARAM 1 signed', crypto: 'true true true' });
  });

  it('require as CommonJS and serve', async () => {
    await writeFile(join(project, 'cjs.cjs'), CJS_SCRIPT);
    const { stdout } = await run(process.execPath, ['cjs.cjs'], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ missing: [], express: '200 ORBIT', dashboard: '200 text/html; charset=utf-8', webhooks: 'ERR:BADPARAM 1 signed', crypto: 'true true true' });
  });

  it('type-check in a strict consumer, ESM and CommonJS', async () => {
    await writeFile(join(project, 'consumer.mts'), CONSUMER_ESM);
    await writeFile(join(project, 'consumer.cts'), CONSUMER_CJS);
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], noUncheckedIndexedAccess: true },
        files: ['consumer.mts', 'consumer.cts'],
      }),
    );
    const result = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project }).catch(
      (err: { stdout?: string; stderr?: string }) => ({ stdout: `FAILED\n${err.stdout ?? ''}${err.stderr ?? ''}` }),
    );
    // Errors inside third-party .d.ts are not ours; ours and the consumer's must be none.
    const ours = result.stdout.split('\n').filter((line) => line.startsWith('consumer.') || line.includes('@ipokit/') || line.startsWith('FAILED'));
    expect(ours.filter((l) => l !== 'FAILED')).toEqual([]);
  }, SLOW);

  it('install the ipokit command: --help, --version and demo-data run', async () => {
    const bin = join(project, 'node_modules', '.bin', 'ipokit');
    const help = await run(bin, ['--help'], { cwd: project });
    expect(help.stdout).toMatch(/ipokit/);
    const version = await run(bin, ['--version'], { cwd: project });
    const { version: cliVersion } = JSON.parse(await readFile(join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toContain(cliVersion);
    await run(bin, ['demo-data', '--out', 'data.json'], { cwd: project });
    const data = JSON.parse(await readFile(join(project, 'data.json'), 'utf8')) as { ipos: unknown[]; gmp: unknown[] };
    expect(data.ipos.length).toBeGreaterThan(100);
    const bad = await run(bin, ['no-such-command'], { cwd: project }).catch((err: { code?: number; stderr?: string }) => err);
    expect((bad as { code?: number }).code).toBe(2);
  });

  it.each([...PACKAGES, 'dashboard'] as const)('%s passes publint and arethetypeswrong', async (name) => {
    const dir = join(ROOT, 'packages', name);
    const { messages } = await publint({ pkgDir: dir, level: 'suggestion', strict: true });
    expect(messages).toEqual([]);
    const cli = join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    if (name === 'dashboard') {
      // ESM only (the adapters load it with import(), from CommonJS too): the esm-only
      // profile, which exits non-zero on any problem it does not ignore.
      await expect(run(process.execPath, [cli, tarballs[name]!, '--profile', 'esm-only'])).resolves.toBeDefined();
      return;
    }
    const attw = await run(process.execPath, [cli, tarballs[name]!, '--format', 'json'], {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '{}' }));
    const report = JSON.parse(attw.stdout) as { problems?: unknown };
    expect(report.problems, attw.stdout.slice(0, 2000)).toEqual({});
  }, SLOW);

  it('left no tarball or build output in the repository', async () => {
    for (const name of PACKAGES) {
      const files = await readdir(join(ROOT, 'packages', name));
      expect(files.filter((f) => f.endsWith('.tgz') || f.startsWith('.dist-')), name).toEqual([]);
    }
  });
});
