// Development server for the dashboard (not shipped): serves dist/ at /account/-/dashboard/ and
// a MOCK of the account API at /account/ over a memory store with the fixture's IPOs, plus a
// ~20,000-point GMP series for one IPO. A stand-in until the adapters' accountRouter lands;
// DASH_REAL=1 answers with the core's own createAccountHandler instead, to compare.
//   node --conditions=source --import tsx packages/dashboard/dev/serve.ts   (from the repo root; build first)
// Env: PORT (default 5178), DASH_PLAN=free|paid|pro (default pro, with the GMP add-on), DASH_SIGNED_OUT=1,
// DASH_PER_MINUTE (default 60).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createAccount, createApiKey, getAccountWindows, getUsage, importDataset, IpokitError, listApiKeys, revokeApiKey, rotateApiKey, type DatasetSnapshot, type IpoRouterOptions, type Plan } from '@ipokit/core';
import { errorBody, type WireErrorCode } from '@ipokit/core/backend';
import { createAccountHandler, createIpoHandler } from '@ipokit/core/adapter';
import { FIXTURE_NOW, fixtureDataset } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { dashboardAssets } from '../dist/index.js';

const MOUNT = '/account';
const port = Number(process.env['PORT'] ?? 5178);
const plan = (process.env['DASH_PLAN'] ?? 'pro') as Plan;
const signedOut = process.env['DASH_SIGNED_OUT'] === '1';

// The fixture's clock, running: statuses are as the fixture expects, windows still slide.
const offset = FIXTURE_NOW - Date.now();
const now = () => new Date(Date.now() + offset);
const at = { now };
const limits = { perMinute: Number(process.env['DASH_PER_MINUTE'] ?? 60), perHour: 1000, perDay: 5000, gmpPerMinute: 20, gmpPerDay: 500 };
const options: IpoRouterOptions = { now, limits: { free: limits, paid: limits, pro: limits } };

const store = memoryStore();
const dataset = fixtureDataset();
const big = '2026000002'; // NIMBUS: a snapshot every 5 minutes for 20,000 * 5 minutes before now
const snapshots: DatasetSnapshot[] = [];
for (let i = 20_000; i >= 1; i--) {
  const t = FIXTURE_NOW - i * 300_000 + 60_000;
  const base = 40 + 25 * Math.sin(i / 900) + 6 * Math.sin(i / 37);
  snapshots.push({ ipoId: big, timestamp: new Date(t).toISOString(), sources: [{ name: 'alpha', gmpPrice: Math.round(base * 100) / 100 }, { name: 'beta', gmpPrice: Math.round((base + 3) * 100) / 100 }] });
}
await importDataset(store, { ipos: dataset.ipos ?? [], gmp: [...(dataset.gmp ?? []), ...snapshots] });
const acct = await createAccount(store, { name: 'Asha Traders Pvt Ltd', plan, gmpAddon: plan === 'pro' }, at);
// The mock's IPO routes go through the keyed handler with a key of its own, hidden from the lists
// (on free, where one key is all there is, the account's own key).
const hidden = await createApiKey(store, { accountId: acct.id, label: plan === 'free' ? 'laptop' : 'dev server (hidden)' }, at);
const hiddenId = plan === 'free' ? null : hidden.id;
if (plan !== 'free') {
  await createApiKey(store, { accountId: acct.id, label: 'production server' }, at);
  const old = await createApiKey(store, { accountId: acct.id, label: 'old staging' }, at);
  await revokeApiKey(store, old.id, at);
}
const ipoHandler = createIpoHandler(store, options);
const realHandler = process.env['DASH_REAL'] === '1' ? createAccountHandler(store, { ...options, dashboardAssets }) : null;
// Usage to chart: requests on the last 20 days, some refused (the seeder's minute quota is 8).
let seedNow = 0;
const tight = { ...limits, perMinute: 8 };
const seeder = createIpoHandler(store, { now: () => new Date(seedNow), limits: { free: tight, paid: tight, pro: tight } });
for (let d = 19; d >= 0; d--) {
  seedNow = FIXTURE_NOW - d * 86_400_000 - 3_600_000;
  for (let i = 0; i < ((d * 7) % 11) + 1; i++) {
    const [path, query] = [['/', 'status=open'], ['/2026000001', ''], ['/2026000001/gmp', '']][i % 3]!;
    await seeder({ method: 'GET', url: `${MOUNT}/ipos${path}`, path: path!, query: query!, headers: { 'x-api-key': hidden.key }, clientAddress: '127.0.0.1' });
  }
}

createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    console.error(err);
    send(res, 500, errorBody('ERR:INTERNAL', 'The dev server failed.'));
  });
}).listen(port, '127.0.0.1', () => console.log(`dashboard: http://127.0.0.1:${port}${MOUNT}/-/dashboard/ (plan ${plan}${realHandler ? ', real account handler' : ', mock'})`));

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (!url.pathname.startsWith(`${MOUNT}/`)) return send(res, 404, errorBody('ERR:NOTFOUND', 'Try /account/-/dashboard/.'));
  const path = url.pathname.slice(MOUNT.length);
  const body = req.method === 'POST' ? await readBody(req) : '';
  if (realHandler !== null) {
    const r = await realHandler({ method: req.method ?? 'GET', url: req.url ?? '/', path, query: url.search.slice(1), headers: req.headers, clientAddress: '127.0.0.1', accountId: signedOut ? null : acct.id, body: body === '' ? null : { text: body } });
    res.writeHead(r.status, r.headers).end(r.body);
    return;
  }
  if (path.startsWith('/-/dashboard/')) {
    const name = path.slice('/-/dashboard/'.length);
    const asset = Object.hasOwn(dashboardAssets, name) ? dashboardAssets[name] : undefined;
    if (asset === undefined) return send(res, 404, errorBody('ERR:NOTFOUND', 'No such file.'));
    // The real router's policy: nothing but the page's own files.
    res.writeHead(200, { 'Content-Type': asset.contentType, 'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'" });
    res.end(asset.body);
    return;
  }
  if (signedOut) return send(res, 401, errorBody('ERR:INVLDKEY', 'Nobody is signed in: sign in to the app, then retry.'));
  if (path.startsWith('/ipos')) {
    const r = await ipoHandler({ method: req.method ?? 'GET', url: req.url ?? '/', path: path.slice('/ipos'.length) || '/', query: url.search.slice(1), headers: { 'x-api-key': hidden.key }, clientAddress: '127.0.0.1' });
    res.writeHead(r.status, r.headers).end(r.body);
    return;
  }
  try {
    const answer = await accountRoutes(req.method ?? 'GET', path, url.searchParams, body);
    if (answer === null) send(res, 204, null);
    else send(res, answer[0], answer[1]);
  } catch (err) {
    if (!(err instanceof IpokitError)) throw err;
    const code = (err.code === 'ERR:DATASET' ? 'ERR:BADPARAM' : err.code) as WireErrorCode;
    send(res, code === 'ERR:BADPARAM' ? 400 : Number(errorBody(code, '').status), errorBody(code, err.message, err.parameter === undefined ? undefined : { parameter: err.parameter }));
  }
}

async function accountRoutes(method: string, path: string, q: URLSearchParams, text: string): Promise<[number, unknown] | null> {
  const accountId = acct.id;
  const keys = async () => (await listApiKeys(store, { accountId })).filter((k) => k.id !== hiddenId);
  const json = (): Record<string, unknown> => (text === '' ? {} : (JSON.parse(text) as Record<string, unknown>));
  const created = (k: { id: string; key: string; prefix: string; label: string; createdAt: string; expiresAt: string | null }) => [201, { key: { id: k.id, key: k.key, prefix: k.prefix, label: k.label, createdAt: k.createdAt, expiresAt: k.expiresAt } }] as [number, unknown];
  const route = `${method} ${path.replace(/\/keys\/[^/]+\//, '/keys/:id/')}`;
  const keyId = decodeURIComponent(path.split('/')[2] ?? '');
  if (route.startsWith('POST /keys/:id/') && !(await keys()).some((k) => k.id === keyId)) throw new IpokitError('ERR:NOTFOUND', 'This account has no key with that id.');
  switch (route) {
    case 'GET /':
      return [200, { account: { id: acct.id, name: acct.name, plan: acct.plan, gmpAddon: acct.gmpAddon }, windows: await getAccountWindows(store, { accountId }, options), keys: await keys() }];
    case 'GET /keys':
      return [200, { keys: await keys() }];
    case 'POST /keys': {
      const b = json();
      return created(await createApiKey(store, { accountId, label: b['label'] as string, ...(b['expiresAt'] === undefined ? {} : { expiresAt: b['expiresAt'] as string }) }, at));
    }
    case 'POST /keys/:id/revoke':
      await revokeApiKey(store, keyId, at);
      return null;
    case 'POST /keys/:id/rotate': {
      const overlap = json()['overlapSeconds'];
      return created(await rotateApiKey(store, keyId, overlap === undefined ? {} : { overlapSeconds: overlap as number }, at));
    }
    case 'GET /usage': {
      const to = q.get('to') ?? now().toISOString().slice(0, 10);
      const from = q.get('from') ?? new Date(Date.parse(to) - 29 * 86_400_000).toISOString().slice(0, 10);
      const rows = await getUsage(store, { accountId, from, to });
      return [200, { usage: rows.map((r) => (r.keyId === hiddenId ? { ...r, keyId: 'dashboard' } : r)) }];
    }
  }
  throw new IpokitError('ERR:NOTFOUND', 'No such route: use /, /keys, /usage or /ipos.');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'private, no-store' });
  res.end(body === null ? '' : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}
