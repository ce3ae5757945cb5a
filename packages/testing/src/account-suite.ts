/**
 * The account router's conformance suite (docs/spec.md#account-router): the same checks
 * against every adapter (Express, Koa, fetch) and every store, over real HTTP. A target
 * mounts the router at `/account` and signs in whoever the request header
 * `x-test-account` names (no header: nobody), as an app's login would.
 */
import { describe, expect, it } from 'vitest';
import { type AccountWindow, type ApiKeyInfo, createApiKey, type DeliveryInfo, getUsage, importDataset, type IpoRouterOptions, listApiKeys, listWebhooks, type RateLimiter, revokeApiKey, type Store, todayInIst, type UsageRow, type WebhookInfo, type WebhookLimits, type WebhookStore, type DeliveryDetail } from '@ipokit/core';
import { createIpoHandler, DASHBOARD_KEY_ID, MAX_ACCOUNT_BODY_BYTES } from '@ipokit/core/adapter';
import { addDays } from '@ipokit/core/backend';
import { FIXTURE_NOW, seedFixture, type SeededFixture } from './http-fixture.js';
import { toResult, type HttpResult, type StartedTarget } from './http-suite.js';
import { SPEC_CODES, SPEC_TITLES } from './spec-error-tables.js';

/** Options a target's account router is started with: the router's, and the dashboard. */
export interface AccountTargetOptions extends IpoRouterOptions {
  dashboard?: boolean;
  maxWebhooksPerAccount?: number;
}

/** An adapter under test: how to start its account router. */
export interface AccountHttpTarget {
  /** Shown in the describe block, e.g. `'express 5'`. */
  name: string;
  /**
   * Starts the account router mounted at `/account` on 127.0.0.1, its `account` option
   * reading the request header `x-test-account` (absent: null). With `parseJson`, the app
   * parses JSON bodies itself before the router (`express.json()`, koa-bodyparser), as many
   * apps do; a target whose framework has no such parser ignores it. `baseUrl` is the
   * router's mount URL.
   */
  start(store: Store, options: AccountTargetOptions, app: { parseJson: boolean }): Promise<StartedTarget>;
}

/** Options of {@link testAccountRouter}. */
export interface TestAccountRouterOptions {
  target: AccountHttpTarget;
  createStore: () => Store | Promise<Store>;
  destroyStore?: (store: Store) => void | Promise<void>;
  /** A limiter kept apart from the store, as `accountRouter(store, { limiter })` takes it. */
  createLimiter?: () => RateLimiter | Promise<RateLimiter>;
  destroyLimiter?: (limiter: RateLimiter) => void | Promise<void>;
}

interface Ctx {
  store: Store;
  limiter: RateLimiter;
  fixture: SeededFixture;
  base: IpoRouterOptions;
  baseUrl: string;
  now: { ms: number };
  errors: unknown[];
  /** A request to `baseUrl + path`, as `account` (null: nobody signed in). */
  call(account: string | null, path: string, init?: { method?: string; body?: string; type?: string | null; headers?: Record<string, string> }): Promise<Answer>;
  /** The same request to the keyed API (`createIpoHandler` in process) with `key`. */
  keyed(key: string, path: string): Promise<Answer>;
}

/**
 * The bodies of the account routes as the checks read them: each check knows which one it
 * got (an error body, the account, keys, a new key or usage), so every member is declared.
 */
interface Body {
  status: string;
  title: string;
  detail: string;
  code: string;
  meta: Record<string, unknown>;
  account: { id: string; name: string; plan: string; gmpAddon: boolean };
  windows: AccountWindow[];
  keys: ApiKeyInfo[];
  key: { id: string; key: string; prefix: string; label: string; createdAt: string; expiresAt: string | null };
  usage: UsageRow[];
  webhook: WebhookInfo & { secret: string };
  webhooks: WebhookInfo[];
  limits: WebhookLimits;
  deliveries: DeliveryInfo[];
  delivery: DeliveryDetail;
  secret: string;
  previousSecretExpiresAt: string;
}

/** A response with its JSON body. */
type Answer = HttpResult & { json: Body };

interface AccountCheck {
  id: string;
  name: string;
  options?: AccountTargetOptions;
  parseJson?: boolean;
  fn: (ctx: Ctx) => Promise<void>;
}

/**
 * Registers the account router's checks for one adapter and store with vitest.
 *
 * @example
 * ```ts
 * testAccountRouter({ target: expressAccountTarget(EXPRESS_VERSIONS[0]!), createStore: () => memoryStore() });
 * ```
 */
export function testAccountRouter(options: TestAccountRouterOptions): void {
  describe(`account router: ${options.target.name}`, () => {
    for (const check of accountChecks()) it(`${check.id}: ${check.name}`, () => runAccountCheck(options, check));
  });
}

const LIMITS = { limits: { free: { perMinute: 100 }, paid: { perMinute: 100, perHour: 1_000 }, pro: { perMinute: 100 }, keyless: { perMinute: 100 } } } satisfies IpoRouterOptions;

async function runAccountCheck(options: TestAccountRouterOptions, check: AccountCheck): Promise<void> {
  const store = await options.createStore();
  const separate = options.createLimiter === undefined ? undefined : await options.createLimiter();
  let started: StartedTarget | null = null;
  try {
    const fixture = await seedFixture(store);
    const now = { ms: FIXTURE_NOW };
    const errors: unknown[] = [];
    const base: IpoRouterOptions = { ...LIMITS, ...(separate === undefined ? {} : { limiter: separate }), now: () => new Date(now.ms), onError: (e) => errors.push(e) };
    started = await options.target.start(store, { ...base, ...check.options }, { parseJson: check.parseJson ?? false });
    const baseUrl = started.baseUrl.replace(/\/$/, '');
    const keyed = createIpoHandler(store, base);
    const ctx: Ctx = {
      store,
      limiter: separate ?? store,
      fixture,
      base,
      baseUrl,
      now,
      errors,
      async call(account, path, init = {}) {
        const headers: Record<string, string> = { ...init.headers };
        if (account !== null) headers['x-test-account'] = account;
        if (init.body !== undefined && init.type !== null) headers['content-type'] = init.type ?? 'application/json';
        const res = await fetch(baseUrl + path, { method: init.method ?? 'GET', headers, ...(init.body === undefined ? {} : { body: init.body }), redirect: 'manual' });
        return toResult(res.status, Object.fromEntries(res.headers), await res.text()) as Answer;
      },
      async keyed(key, path) {
        const q = path.indexOf('?');
        const res = await keyed({ method: 'GET', url: `/ipos${path}`, path: q < 0 ? path : path.slice(0, q), query: q < 0 ? '' : path.slice(q + 1), headers: { 'x-api-key': key }, clientAddress: '127.0.0.1' });
        return toResult(res.status, Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k.toLowerCase(), v])), res.body) as Answer;
      },
    };
    await check.fn(ctx);
    expect(errors, 'onError must not be called').toEqual([]);
  } finally {
    await started?.close();
    if (separate !== undefined) await options.destroyLimiter?.(separate);
    await options.destroyStore?.(store);
  }
}

/** An error answer: its status, the one error body, and no caching. */
function expectError(a: Answer, status: number, code: string): void {
  expect(a.status, a.text).toBe(status);
  expect(Object.keys(a.json ?? {})).toEqual(expect.arrayContaining(['status', 'title', 'detail', 'code']));
  expect(a.json).toMatchObject({ status: String(status), title: SPEC_TITLES[status], code: SPEC_CODES[status] });
  expect(code).toBe(SPEC_CODES[status]);
  expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(a.headers['cache-control']).toContain('no-store');
}

const KEY_TEXT = /ipk_[0-9A-Za-z]{32}/;
const DAY_MS = 86_400_000;

/**
 * The checks, in the order they run.
 *
 * @example
 * ```ts
 * accountChecks().map((c) => c.id); // ['account-401', ...]
 * ```
 */
export function accountChecks(): AccountCheck[] {
  return [
    {
      id: 'account-401',
      name: 'MUST answer 401 ERR:INVLDKEY on every route when nobody is signed in, or the signed-in account does not exist',
      async fn(ctx) {
        for (const [method, path] of [
          ['GET', '/'],
          ['GET', '/keys'],
          ['POST', '/keys'],
          ['POST', `/keys/${ctx.fixture.keyIds.paid}/revoke`],
          ['POST', `/keys/${ctx.fixture.keyIds.paid}/rotate`],
          ['GET', '/usage'],
          ['GET', '/ipos?status=open'],
          ['GET', '/ipos/ORBIT'],
          ['GET', '/ipos/ORBIT/gmp'],
        ] as const) {
          const body = method === 'POST' ? { body: '{"label":"x"}' } : {};
          expectError(await ctx.call(null, path, { method, ...body }), 401, 'ERR:INVLDKEY');
          expectError(await ctx.call('acct_nobody', path, { method, ...body }), 401, 'ERR:INVLDKEY');
        }
        expect((await listApiKeys(ctx.store, { accountId: ctx.fixture.accounts.paid })).map((k) => k.revokedAt)).toEqual([null, null]);
      },
    },
    {
      id: 'account-overview',
      name: 'MUST answer GET / with the account, every window it draws on with what remains, and its keys (never their text), no-store',
      async fn(ctx) {
        const paid = ctx.fixture.accounts.paid;
        expect((await ctx.call(paid, '/ipos?status=open')).status).toBe(200);
        const a = await ctx.call(paid, '/');
        expect(a.status).toBe(200);
        expect(a.headers['cache-control']).toContain('no-store');
        expect(Object.keys(a.json)).toEqual(['account', 'windows', 'keys']);
        expect(a.json.account).toEqual({ id: paid, name: 'Paid user', plan: 'paid', gmpAddon: false });
        expect(a.json.windows).toEqual([
          { name: 'minute', quota: 100, seconds: 60, remaining: 99, reset: 60 },
          { name: 'hour', quota: 1_000, seconds: 3_600, remaining: 999, reset: 3_600 },
          { name: 'gmp-minute', quota: 3, seconds: 60, remaining: 3, reset: 0 },
        ]);
        expect(a.json.keys).toEqual(await listApiKeys(ctx.store, { accountId: paid }));
        expect(a.text).not.toMatch(KEY_TEXT);
        const keys = await ctx.call(paid, '/keys');
        expect(keys.status).toBe(200);
        expect(keys.json).toEqual({ keys: a.json.keys });
        expect(keys.text).not.toMatch(KEY_TEXT);
        // HEAD: the GET answer's status and headers, no body
        const head = await ctx.call(paid, '/keys', { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.text).toBe('');
        // GET / leaves out the keys that stopped working (revoked or expired) more than 30 days
        // ago, so that its size follows the active keys; GET /keys lists every key
        const { paid: paidId, paid2 } = ctx.fixture.keyIds;
        expect((await ctx.call(paid, `/keys/${paid2}/revoke`, { method: 'POST', body: '{}' })).status).toBe(204);
        const trial = await ctx.call(paid, '/keys', { method: 'POST', body: JSON.stringify({ label: 'trial', expiresAt: new Date(ctx.now.ms + 5 * DAY_MS).toISOString() }) });
        expect(trial.status, trial.text).toBe(201);
        const ids = async (path: string) => ((await ctx.call(paid, path)).json.keys as ApiKeyInfo[]).map((k) => k.id).sort();
        const all = [paidId, paid2, trial.json.key.id].sort();
        expect(await ids('/')).toEqual(all);
        ctx.now.ms += 30 * DAY_MS - 1;
        expect(await ids('/')).toEqual(all);
        ctx.now.ms += 1;
        expect(await ids('/')).toEqual([paidId, trial.json.key.id].sort());
        ctx.now.ms += 5 * DAY_MS;
        expect(await ids('/')).toEqual([paidId]);
        expect(await ids('/keys')).toEqual(all);
      },
    },
    {
      id: 'account-create-key',
      name: 'MUST create a key with POST /keys (201, its text this once) that the keyed API accepts; the plan rules apply (403 ERR:PLAN)',
      async fn(ctx) {
        const { paid, free } = ctx.fixture.accounts;
        const expiresAt = new Date(FIXTURE_NOW + 86_400_000).toISOString();
        const a = await ctx.call(paid, '/keys', { method: 'POST', body: JSON.stringify({ label: 'laptop \u{1F600}', expiresAt }) });
        expect(a.status, a.text).toBe(201);
        expect(a.headers['cache-control']).toContain('no-store');
        expect(Object.keys(a.json)).toEqual(['key']);
        expect(Object.keys(a.json.key)).toEqual(['id', 'key', 'prefix', 'label', 'createdAt', 'expiresAt']);
        expect(a.json.key).toMatchObject({ label: 'laptop \u{1F600}', createdAt: new Date(FIXTURE_NOW).toISOString(), expiresAt });
        expect(a.json.key.key).toMatch(/^ipk_[0-9A-Za-z]{32}$/);
        expect(a.json.key.prefix).toBe(a.json.key.key.slice(0, 12));
        expect((await ctx.keyed(a.json.key.key, '/ORBIT')).status).toBe(200);
        const listed = await ctx.call(paid, '/keys');
        expect(listed.json.keys.map((k: { id: string }) => k.id)).toContain(a.json.key.id);
        expect(listed.text).not.toContain(a.json.key.key);
        // without expiry; charset in the media type is fine
        const b = await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"ci"}', type: 'application/json; charset=utf-8' });
        expect(b.status).toBe(201);
        expect(b.json.key.expiresAt).toBeNull();
        // the free plan holds one active key
        expectError(await ctx.call(free, '/keys', { method: 'POST', body: '{"label":"second"}' }), 403, 'ERR:PLAN');
        // bad fields: 400 naming them
        for (const [body, parameter] of [
          ['{}', 'label'],
          ['{"label":""}', 'label'],
          ['{"label":7}', 'label'],
          ['{"label":"x","expiresAt":"tomorrow"}', 'expiresAt'],
          [`{"label":"x","expiresAt":"${new Date(FIXTURE_NOW).toISOString()}"}`, 'expiresAt'],
          ['{"label":"x","expiresat":"2030-01-01T00:00:00Z"}', 'expiresat'],
          ['{"label":', 'body'],
          ['[1]', 'body'],
          ['"x"', 'body'],
        ] as const) {
          const r = await ctx.call(paid, '/keys', { method: 'POST', body });
          expectError(r, 400, 'ERR:BADPARAM');
          expect(r.json.meta, body).toEqual({ parameter });
        }
        expect((await listApiKeys(ctx.store, { accountId: paid })).length).toBe(4);
      },
    },
    {
      id: 'account-post-guards',
      name: 'MUST refuse a POST without Content-Type: application/json (415) or with a body over 10 KB (413), changing nothing',
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        const id = ctx.fixture.keyIds.paid;
        for (const path of ['/keys', `/keys/${id}/revoke`, `/keys/${id}/rotate`]) {
          for (const type of [null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
            expectError(await ctx.call(paid, path, { method: 'POST', body: '{"label":"x"}', type }), 415, 'ERR:MEDIATYPE');
          }
          const big = JSON.stringify({ label: 'x'.repeat(MAX_ACCOUNT_BODY_BYTES) });
          expectError(await ctx.call(paid, path, { method: 'POST', body: big }), 413, 'ERR:TOOLARGE');
        }
        // exactly 10 KB is read (and refused for what it says, not for its size)
        const exact = `{"label":"${'x'.repeat(MAX_ACCOUNT_BODY_BYTES - 12)}"}`;
        expect(new TextEncoder().encode(exact).byteLength).toBe(MAX_ACCOUNT_BODY_BYTES);
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: exact }), 400, 'ERR:BADPARAM');
        expect((await listApiKeys(ctx.store, { accountId: paid })).map((k) => [k.revokedAt, k.expiresAt])).toEqual([
          [null, null],
          [null, null],
        ]);
      },
    },
    {
      id: 'account-post-parsed',
      name: 'MUST take a body the app parsed already (a JSON body parser before the router) as the same request, 10 KB limit included',
      parseJson: true,
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        const a = await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"parsed"}' });
        expect(a.status, a.text).toBe(201);
        expect(a.json.key.label).toBe('parsed');
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"x","other":1}' }), 400, 'ERR:BADPARAM');
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: JSON.stringify({ label: 'x'.repeat(MAX_ACCOUNT_BODY_BYTES) }) }), 413, 'ERR:TOOLARGE');
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: 'label=x', type: 'application/x-www-form-urlencoded' }), 415, 'ERR:MEDIATYPE');
        // a parser takes a body nested thousands deep; the router measures it as it does any other
        const deep = (depth: number): string => `{"label":${'['.repeat(depth)}${']'.repeat(depth)}}`;
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: deep((MAX_ACCOUNT_BODY_BYTES - 10) / 2) }), 400, 'ERR:BADPARAM');
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: deep(40_000) }), 413, 'ERR:TOOLARGE');
        expect((await ctx.call(paid, `/keys/${ctx.fixture.keyIds.paid2}/revoke`, { method: 'POST', body: '{}' })).status).toBe(204);
      },
    },
    {
      id: 'account-revoke',
      name: 'MUST revoke its own key with POST /keys/{id}/revoke (204; the keyed API refuses it at once) and answer 404 for a key of another account or none',
      async fn(ctx) {
        const { paid, proGmp } = ctx.fixture.accounts;
        const { keys, keyIds } = ctx.fixture;
        expect((await ctx.keyed(keys.paid, '/ORBIT')).status).toBe(200);
        for (const body of [{ body: '{}' }, { body: '' }]) {
          const id = body.body === '' ? keyIds.paid2 : keyIds.paid;
          const a = await ctx.call(paid, `/keys/${id}/revoke`, { method: 'POST', ...body });
          expect(a.status, a.text).toBe(204);
          expect(a.text).toBe('');
          expect(a.headers['cache-control']).toContain('no-store');
        }
        expect((await ctx.keyed(keys.paid, '/ORBIT')).status).toBe(401);
        // again: still 204, the first revocation kept
        expect((await ctx.call(paid, `/keys/${keyIds.paid}/revoke`, { method: 'POST', body: '{}' })).status).toBe(204);
        // another account's key: 404, as an unknown id (never 403), and it still works
        for (const id of [keyIds.proGmp, 'key_nope', encodeURIComponent('key_\u{1F600}'), '%E0%A4']) {
          expectError(await ctx.call(paid, `/keys/${id}/revoke`, { method: 'POST', body: '{}' }), 404, 'ERR:NOTFOUND');
          expectError(await ctx.call(paid, `/keys/${id}/rotate`, { method: 'POST', body: '{}' }), 404, 'ERR:NOTFOUND');
        }
        expect((await ctx.keyed(keys.proGmp, '/ORBIT')).status).toBe(200);
        expect((await ctx.call(proGmp, '/keys')).json.keys.find((k: { id: string }) => k.id === keyIds.proGmp)?.revokedAt).toBeNull();
        expectError(await ctx.call(paid, `/keys/${keyIds.paid}/revoke`, { method: 'POST', body: '{"now":1}' }), 400, 'ERR:BADPARAM');
      },
    },
    {
      id: 'account-rotate',
      name: 'MUST rotate its own key with POST /keys/{id}/rotate (201 as POST /keys; both keys work during the overlap, the old one not after it); revoked keys and the free plan as rotateApiKey says',
      async fn(ctx) {
        const { free, paid } = ctx.fixture.accounts;
        const { keys, keyIds } = ctx.fixture;
        const a = await ctx.call(paid, `/keys/${keyIds.paid}/rotate`, { method: 'POST', body: '{"overlapSeconds":60}' });
        expect(a.status, a.text).toBe(201);
        expect(Object.keys(a.json.key)).toEqual(['id', 'key', 'prefix', 'label', 'createdAt', 'expiresAt']);
        expect(a.json.key).toMatchObject({ label: 'paid key', expiresAt: null });
        expect((await ctx.keyed(a.json.key.key, '/ORBIT')).status).toBe(200);
        expect((await ctx.keyed(keys.paid, '/ORBIT')).status).toBe(200);
        const listed = (await ctx.call(paid, '/keys')).json.keys;
        const old = listed.find((k: { id: string }) => k.id === keyIds.paid);
        expect(old?.expiresAt).toBe(new Date(FIXTURE_NOW + 60_000).toISOString());
        // the pair is visible: the new key names the one it replaced
        expect(old?.rotatedFrom).toBeNull();
        expect(listed.find((k: { id: string }) => k.id === a.json.key.id)?.rotatedFrom).toBe(keyIds.paid);
        // a trial key rotated stays a trial key: the new one expires when the old one would have
        const trialEnds = new Date(FIXTURE_NOW + 10 * 86_400_000).toISOString();
        const trial = await ctx.call(paid, '/keys', { method: 'POST', body: JSON.stringify({ label: 'trial', expiresAt: trialEnds }) });
        const rotatedTrial = await ctx.call(paid, `/keys/${trial.json.key.id}/rotate`, { method: 'POST', body: '{"overlapSeconds":3600}' });
        expect(rotatedTrial.status, rotatedTrial.text).toBe(201);
        expect(rotatedTrial.json.key).toMatchObject({ label: 'trial', expiresAt: trialEnds });
        // (made at one instant: listed by id, which is random)
        const trials = (await ctx.call(paid, '/')).json.keys.filter((k) => k.label === 'trial');
        expect(Object.fromEntries(trials.map((k) => [k.id, [k.expiresAt, k.rotatedFrom]]))).toEqual({
          [trial.json.key.id]: [new Date(FIXTURE_NOW + 3_600_000).toISOString(), null],
          [rotatedTrial.json.key.id]: [trialEnds, trial.json.key.id],
        });
        ctx.now.ms += 60_000;
        expect((await ctx.keyed(keys.paid, '/ORBIT')).status).toBe(401);
        // default overlap: a day
        const b = await ctx.call(paid, `/keys/${a.json.key.id}/rotate`, { method: 'POST', body: '' });
        expect(b.status, b.text).toBe(201);
        expect((await listApiKeys(ctx.store, { accountId: paid })).find((k) => k.id === a.json.key.id)?.expiresAt).toBe(new Date(ctx.now.ms + 86_400_000).toISOString());
        // an expired or revoked key does not rotate; a bad overlap is 400
        expectError(await ctx.call(paid, `/keys/${keyIds.paid}/rotate`, { method: 'POST', body: '{}' }), 403, 'ERR:PLAN');
        for (const body of ['{"overlapSeconds":-1}', '{"overlapSeconds":604801}', '{"overlapSeconds":"60"}', '{"overlap":60}']) {
          expectError(await ctx.call(paid, `/keys/${keyIds.paid2}/rotate`, { method: 'POST', body }), 400, 'ERR:BADPARAM');
        }
        // free: one rotation, then no second one during its overlap
        expect((await ctx.call(free, `/keys/${keyIds.free}/rotate`, { method: 'POST', body: '{"overlapSeconds":3600}' })).status).toBe(201);
        expectError(await ctx.call(free, `/keys/${keyIds.free}/rotate`, { method: 'POST', body: '{}' }), 403, 'ERR:PLAN');
        expectError(await ctx.call(free, '/keys', { method: 'POST', body: '{"label":"x"}' }), 403, 'ERR:PLAN');
      },
    },
    {
      id: 'account-key-cap',
      name: 'MUST refuse an active key beyond 100 on paid and pro (403 ERR:PLAN saying the limit and to revoke a key), and admit one again once a key is revoked',
      async fn(ctx) {
        const { paid, pro } = ctx.fixture.accounts;
        const at = { now: () => new Date(ctx.now.ms) };
        // paid holds 2 keys (the fixture's), pro 1
        for (const [account, held] of [[paid, 2], [pro, 1]] as const) {
          for (let i = held; i < 99; i++) await createApiKey(ctx.store, { accountId: account, label: `k${i}` }, at);
          const hundredth = await ctx.call(account, '/keys', { method: 'POST', body: '{"label":"k99"}' });
          expect(hundredth.status, hundredth.text).toBe(201);
          const refused = await ctx.call(account, '/keys', { method: 'POST', body: '{"label":"k100"}' });
          expectError(refused, 403, 'ERR:PLAN');
          expect(refused.json.detail).toMatch(/\b100 active keys\b/);
          expect(refused.json.detail).toMatch(/revoke/);
          expect((await listApiKeys(ctx.store, { accountId: account })).length).toBe(100);
        }
        const keys = await listApiKeys(ctx.store, { accountId: paid });
        expect((await ctx.call(paid, `/keys/${keys[0]!.id}/revoke`, { method: 'POST', body: '{}' })).status).toBe(204);
        expect((await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"again"}' })).status).toBe(201);
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"more"}' }), 403, 'ERR:PLAN');
      },
    },
    {
      id: 'account-key-cap-option',
      name: 'MUST apply the router option maxKeysPerAccount: keys beyond it are 403 ERR:PLAN; a key at the cap rotates, and no other is made during its overlap',
      options: { maxKeysPerAccount: 3 },
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        const { paid: paidKey } = ctx.fixture.keyIds;
        expect((await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"third"}' })).status).toBe(201);
        const refused = await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"fourth"}' });
        expectError(refused, 403, 'ERR:PLAN');
        expect(refused.json.detail).toMatch(/\b3 active keys\b/);
        const rotated = await ctx.call(paid, `/keys/${paidKey}/rotate`, { method: 'POST', body: '{"overlapSeconds":60}' });
        expect(rotated.status, rotated.text).toBe(201);
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"fourth"}' }), 403, 'ERR:PLAN');
        ctx.now.ms += 60_000;
        expectError(await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"fourth"}' }), 403, 'ERR:PLAN');
        expect((await ctx.call(paid, `/keys/${rotated.json.key.id}/revoke`, { method: 'POST', body: '{}' })).status).toBe(204);
        expect((await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"fourth"}' })).status).toBe(201);
      },
    },
    {
      id: 'account-methods',
      name: 'MUST answer 405 ERR:METHOD with Allow for a method a route does not take, and 404 for any other path',
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        const id = ctx.fixture.keyIds.paid;
        for (const [method, path, allow] of [
          ['POST', '/', 'GET, HEAD'],
          ['DELETE', '/keys', 'GET, HEAD, POST'],
          ['PUT', '/keys', 'GET, HEAD, POST'],
          ['GET', `/keys/${id}/revoke`, 'POST'],
          ['DELETE', `/keys/${id}/rotate`, 'POST'],
          ['POST', '/usage', 'GET, HEAD'],
        ] as const) {
          const a = await ctx.call(paid, path, { method, ...(method === 'GET' ? {} : { body: '{}' }) });
          expectError(a, 405, 'ERR:METHOD');
          expect(a.headers['allow']).toBe(allow);
        }
        expectError(await ctx.call(paid, '/ipos/ORBIT', { method: 'POST', body: '{}' }), 405, 'ERR:METHOD');
        for (const path of ['/nope', `/keys/${id}`, `/keys/${id}/delete`, '/keys/a/b/c', '/usage/x', '/-/dashboard/']) {
          expectError(await ctx.call(paid, path), 404, 'ERR:NOTFOUND');
        }
        // a trailing slash is no other path
        expect((await ctx.call(paid, '/keys/')).status).toBe(200);
      },
    },
    {
      id: 'account-ipos',
      name: 'MUST answer /ipos... as the keyed API answers the account (same bytes, same windows), counted in its usage as "dashboard"',
      async fn(ctx) {
        const { paid, proGmp } = ctx.fixture.accounts;
        for (const path of ['?status=open', '?status=listed&limit=5&page=2', '/ORBIT', '/orbit-aerospace-ipo', '/NOPE', '/ORBIT/gmp?interval=hourly', '?status=bogus']) {
          const mine = await ctx.call(paid, `/ipos${path}`);
          const theirs = await ctx.keyed(ctx.fixture.keys.paid, path);
          expect(mine.status, path).toBe(theirs.status);
          expect(mine.text, path).toBe(theirs.text);
          // one window: the keyed request drew on it after this one
          expect(Number(mine.headers['ratelimit-remaining']) - 1, path).toBe(Number(theirs.headers['ratelimit-remaining']));
        }
        // the plan of the account: includeGmp needs pro with the add-on
        expectError(await ctx.call(paid, '/ipos/ORBIT?includeGmp=true'), 403, 'ERR:PLAN');
        expect((await ctx.call(proGmp, '/ipos/ORBIT?includeGmp=true')).status).toBe(200);
        const day = todayInIst(FIXTURE_NOW);
        const usage = await getUsage(ctx.store, { accountId: paid, from: day, to: day }, { limiter: ctx.limiter });
        expect(usage.filter((u) => u.keyId === DASHBOARD_KEY_ID).reduce((n, u) => n + u.admitted, 0)).toBe(8);
        // no key's lastUsedAt is touched by these requests
        expect((await listApiKeys(ctx.store, { accountId: proGmp })).every((k) => k.lastUsedAt === null)).toBe(true);
      },
    },
    {
      id: 'account-ipos-limited',
      name: 'MUST refuse /ipos... with the 429 of the account\'s windows when they are used up, with the keyed API',
      options: { ...LIMITS, limits: { ...LIMITS.limits, paid: { perMinute: 2 } } },
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        expect((await ctx.call(paid, '/ipos/ORBIT')).status).toBe(200);
        expect((await ctx.call(paid, '/ipos/ORBIT')).status).toBe(200);
        const refused = await ctx.call(paid, '/ipos/ORBIT');
        expectError(refused, 429, 'ERR:RATELIMIT');
        expect(refused.headers['retry-after']).toBe('60');
        // key management draws on no window
        expect((await ctx.call(paid, '/')).status).toBe(200);
        expect((await ctx.call(paid, '/keys')).status).toBe(200);
      },
    },
    {
      id: 'account-usage',
      name: 'MUST answer GET /usage with the account\'s usage rows, the last 30 IST days by default, from and to checked',
      async fn(ctx) {
        const { paid } = ctx.fixture.accounts;
        expect((await ctx.keyed(ctx.fixture.keys.paid, '/ORBIT')).status).toBe(200);
        expect((await ctx.call(paid, '/ipos?status=open')).status).toBe(200);
        const today = todayInIst(FIXTURE_NOW);
        const a = await ctx.call(paid, '/usage');
        expect(a.status).toBe(200);
        expect(a.json).toEqual({
          usage: [
            { day: today, keyId: DASHBOARD_KEY_ID, route: 'list', admitted: 1, refused: 0 },
            { day: today, keyId: ctx.fixture.keyIds.paid, route: 'ipo', admitted: 1, refused: 0 },
          ].sort((x, y) => (x.keyId < y.keyId ? -1 : 1)),
        });
        expect((await ctx.call(paid, `/usage?from=${addDays(today, 1)}&to=${addDays(today, 5)}`)).json).toEqual({ usage: [] });
        expect((await ctx.call(paid, `/usage?from=${today}&to=${today}`)).json.usage).toHaveLength(2);
        // yesterday's 30 days end before today
        expect((await ctx.call(paid, `/usage?to=${addDays(today, -1)}`)).json).toEqual({ usage: [] });
        for (const [query, parameter] of [
          ['from=2026-13-01', 'from'],
          ['to=yesterday', 'to'],
          [`from=${today}&to=${addDays(today, -1)}`, 'to'],
          ['from=2020-01-01&to=2026-11-30', 'to'],
          ['to=2026-11-01&to=2026-11-02', 'to'],
        ] as const) {
          const r = await ctx.call(paid, `/usage?${query}`);
          expectError(r, 400, 'ERR:BADPARAM');
          expect(r.json.meta, query).toEqual({ parameter });
        }
        // another account sees its own usage only
        expect((await ctx.call(ctx.fixture.accounts.free, '/usage')).json).toEqual({ usage: [] });
      },
    },
    {
      id: 'account-dashboard',
      name: 'MUST serve the dashboard at /-/dashboard/ with dashboard: true (the page and its files, no-store, whoever is signed in), redirecting /-/dashboard there',
      options: { ...LIMITS, dashboard: true },
      async fn(ctx) {
        const page = await ctx.call(null, '/-/dashboard/');
        expect(page.status).toBe(200);
        expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(page.headers['cache-control']).toContain('no-store');
        expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
        expect(page.text).toMatch(/^<!doctype html>/i);
        // every file the page names is served, and nothing from elsewhere is named
        const files = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('data:') && !u.startsWith('#'));
        expect(files.length).toBeGreaterThan(0);
        for (const file of files) {
          expect(file, 'a relative URL').not.toMatch(/^(?:[a-z]+:|\/)/i);
          const asset = await ctx.call(null, `/-/dashboard/${file.replace(/^\.\//, '')}`);
          expect(asset.status, file).toBe(200);
          expect(asset.headers['cache-control']).toContain('no-store');
        }
        const bare = await ctx.call(null, '/-/dashboard');
        expect(bare.status).toBe(308);
        expect(new URL(bare.headers['location']!, `${ctx.baseUrl}/-/dashboard`).pathname).toBe(new URL(`${ctx.baseUrl}/-/dashboard/`).pathname);
        expectError(await ctx.call(null, '/-/dashboard/nope.js'), 404, 'ERR:NOTFOUND');
        expectError(await ctx.call(null, '/-/dashboard/', { method: 'POST', body: '{}' }), 405, 'ERR:METHOD');
        expect((await ctx.call(null, '/-/dashboard/', { method: 'HEAD' })).text).toBe('');
      },
    },
    {
      id: 'account-dashboard-inherited-names',
      name: 'MUST answer a dashboard path that names what every object inherits (__proto__, constructor, toString, ...) as any unknown file: 404, nothing reported',
      options: { ...LIMITS, dashboard: true },
      async fn(ctx) {
        // (the files are looked up by a name the request chose; only the dashboard's own are files)
        for (const name of Object.getOwnPropertyNames(Object.prototype)) {
          for (const path of [`/-/dashboard/${name}`, `/-/dashboard/assets/${name}`]) expectError(await ctx.call(null, path), 404, 'ERR:NOTFOUND');
        }
      },
    },
    {
      id: 'account-keys-other-account',
      name: 'MUST show an account only its own keys, and keep a key created by one account out of another\'s list',
      async fn(ctx) {
        const { paid, pro } = ctx.fixture.accounts;
        const made = await ctx.call(paid, '/keys', { method: 'POST', body: '{"label":"mine"}' });
        const theirs = (await ctx.call(pro, '/keys')).json.keys.map((k: { id: string }) => k.id);
        expect(theirs).not.toContain(made.json.key.id);
        expect(theirs).toEqual([ctx.fixture.keyIds.pro]);
        await revokeApiKey(ctx.store, ctx.fixture.keyIds.pro);
        await createApiKey(ctx.store, { accountId: pro, label: 'new' });
        expect((await ctx.call(pro, '/')).json.keys).toHaveLength(2);
      },
    },
    {
      id: 'account-webhook-cap',
      name: 'MUST hold an account to maxWebhooksPerAccount endpoints (default 10, router option): one more is 403 ERR:PLAN naming the limit',
      options: { maxWebhooksPerAccount: 2 },
      async fn(ctx) {
        const { pro } = ctx.fixture.accounts;
        if (!isWebhookStore(ctx.store)) return;
        const create = (n: number) => ctx.call(pro, '/webhooks', { method: 'POST', body: JSON.stringify({ url: `https://example.com/hooks/${n}`, events: ['ipo.created'] }) });
        const made = [await create(1), await create(2)];
        expect(made.map((r) => r.status)).toEqual([201, 201]);
        const refused = await create(3);
        expectError(refused, 403, 'ERR:PLAN');
        expect(refused.json.detail).toMatch(/\bat most 2 webhook endpoints\b/);
        expect((await ctx.call(pro, `/webhooks/${made[0]!.json.webhook.id}/delete`, { method: 'POST', body: '{}' })).status).toBe(204);
        expect((await create(3)).status).toBe(201);
      },
    },
    {
      id: 'account-webhook-limits',
      name: 'MUST answer GET /webhooks with the plan\'s limits (allowed, plans, maxPerAccount, used) for every plan: a free account gets 200 with allowed false',
      options: { maxWebhooksPerAccount: 2 },
      async fn(ctx) {
        const { free, paid, pro } = ctx.fixture.accounts;
        if (!isWebhookStore(ctx.store)) return;
        for (const account of [free, paid]) {
          const r = await ctx.call(account, '/webhooks');
          expect(r.status, r.text).toBe(200);
          expect(r.json).toEqual({ webhooks: [], limits: { allowed: false, plans: ['pro'], maxPerAccount: 2, used: 0 } });
        }
        expect((await ctx.call(pro, '/webhooks')).json.limits).toEqual({ allowed: true, plans: ['pro'], maxPerAccount: 2, used: 0 });
        for (const n of [1, 2]) await ctx.call(pro, '/webhooks', { method: 'POST', body: JSON.stringify({ url: `https://example.com/hooks/${n}`, events: ['ipo.created'] }) });
        expect((await ctx.call(pro, '/webhooks')).json.limits).toEqual({ allowed: false, plans: ['pro'], maxPerAccount: 2, used: 2 });
      },
    },
    {
      id: 'account-webhook-manage',
      name: 'MUST let a pro account update, pause, resume, rotate the secret of and test its endpoints, and read a delivery with its payload and the receiver\'s answer; a replay while a replay is pending adds nothing; 404 for another account\'s',
      async fn(ctx) {
        const { pro, proGmp } = ctx.fixture.accounts;
        if (!isWebhookStore(ctx.store)) return;
        const store = ctx.store;
        const post = (path: string, body: unknown = {}) => ctx.call(pro, path, { method: 'POST', body: JSON.stringify(body) });
        const made = await post('/webhooks', { url: 'https://hooks.example.com/ipo', events: ['ipo.created'] });
        const hook = made.json.webhook;
        const base = `/webhooks/${hook.id}`;
        // Update: events replaced, description set and cleared, paused; bad fields 400.
        const updated = await post(`${base}/update`, { events: ['ipo.status_changed', 'ipo.created'], description: 'edited' });
        expect(updated.status, updated.text).toBe(200);
        expect(updated.json.webhook).toEqual({ id: hook.id, url: hook.url, events: ['ipo.created', 'ipo.status_changed'], description: 'edited', createdAt: hook.createdAt, disabledAt: null, pausedAt: null });
        expect((await post(`${base}/update`, { description: null })).json.webhook.description).toBeNull();
        for (const [body, parameter] of [
          [{ events: [] }, 'events'],
          [{ events: ['webhook.test'] }, 'events'],
          [{ paused: 'yes' }, 'paused'],
          [{ url: 'https://other.example.com/' }, 'url'],
        ] as const) {
          const r = await post(`${base}/update`, body);
          expectError(r, 400, 'ERR:BADPARAM');
          expect(r.json.meta, JSON.stringify(body)).toEqual({ parameter });
        }
        // Pause and resume.
        const paused = await post(`${base}/pause`);
        expect(paused.status, paused.text).toBe(200);
        expect(paused.json.webhook.pausedAt).toBe(new Date(ctx.now.ms).toISOString());
        expect((await ctx.call(pro, '/webhooks')).json.webhooks[0]!.pausedAt).toBe(paused.json.webhook.pausedAt);
        // (a paused endpoint takes no test event)
        const refused = await post(`${base}/test`);
        expectError(refused, 400, 'ERR:BADPARAM');
        expect(refused.json.detail).toMatch(/paused/);
        const resumed = await post(`${base}/resume`);
        expect(resumed.status).toBe(200);
        expect(resumed.json.webhook.pausedAt).toBeNull();
        // Rotation: 201 with the new secret and when the old one stops signing.
        const rotated = await post(`${base}/rotate-secret`, { overlapSeconds: 3_600 });
        expect(rotated.status, rotated.text).toBe(201);
        expect(Object.keys(rotated.json)).toEqual(['secret', 'previousSecretExpiresAt']);
        expect(rotated.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
        expect(rotated.json.secret).not.toBe(hook.secret);
        expect(rotated.json.previousSecretExpiresAt).toBe(new Date(ctx.now.ms + 3_600_000).toISOString());
        expect((await post(`${base}/rotate-secret`)).json.previousSecretExpiresAt).toBe(new Date(ctx.now.ms + 86_400_000).toISOString());
        expectError(await post(`${base}/rotate-secret`, { overlapSeconds: 604_801 }), 400, 'ERR:BADPARAM');
        expect((await ctx.call(pro, '/webhooks')).text).not.toContain(rotated.json.secret);
        // A test event: a new pending delivery of webhook.test, due now.
        const tested = await post(`${base}/test`);
        expect(tested.status, tested.text).toBe(201);
        expect(tested.json.delivery).toMatchObject({ eventType: 'webhook.test', state: 'pending', attempts: 0, nextAttemptAt: new Date(ctx.now.ms).toISOString() });
        // What was sent and what came back.
        const path = `${base}/deliveries/${tested.json.delivery.id}`;
        const detail = await ctx.call(pro, path);
        expect(detail.status, detail.text).toBe(200);
        expect(JSON.parse(detail.json.delivery.payload)).toEqual({ type: 'webhook.test', timestamp: new Date(ctx.now.ms).toISOString(), data: { webhookId: hook.id, message: 'A test event from ipokit.' } });
        expect(detail.json.delivery.response).toBeNull();
        const [claimed] = await store.claimDeliveries({ now: ctx.now.ms, limit: 10, perWebhook: 10, perAccount: 10, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
        expect(claimed!.body).toBe(detail.json.delivery.payload);
        await store.finishDeliveries([{ id: claimed!.delivery.id, lease: claimed!.lease, at: ctx.now.ms, delivered: false, status: 503, error: 'answered 503', responseBody: 'try later', nextAttemptAt: null, disableBefore: ctx.now.ms - 6 * 86_400_000 }]);
        const after = (await ctx.call(pro, path)).json.delivery;
        expect(after).toMatchObject({ state: 'failed', attempts: 1, lastStatus: 503, response: { status: 503, body: 'try later' } });
        expect(Object.keys(after)).toEqual(['id', 'eventId', 'eventType', 'state', 'attempts', 'createdAt', 'nextAttemptAt', 'lastAttemptAt', 'lastStatus', 'lastError', 'payload', 'response']);
        expectError(await ctx.call(pro, `${base}/deliveries/dlv_nope`), 404, 'ERR:NOTFOUND');
        expectError(await post(path), 405, 'ERR:METHOD');
        // Replay of the failed one: 201, a new pending copy; again while that is pending: 200 with it, nothing added.
        ctx.now.ms += 1_000;
        const first = await post(`${path}/replay`);
        expect(first.status, first.text).toBe(201);
        const again = await post(`${path}/replay`);
        expect(again.status, again.text).toBe(200);
        expect(again.json.delivery.id).toBe(first.json.delivery.id);
        expect((await ctx.call(pro, `${base}/deliveries`)).json.deliveries).toHaveLength(2);
        // Another account's endpoint: 404 on every route; no route without sign-in.
        for (const p of ['update', 'pause', 'resume', 'rotate-secret', 'test']) {
          expectError(await ctx.call(proGmp, `${base}/${p}`, { method: 'POST', body: '{}' }), 404, 'ERR:NOTFOUND');
          expectError(await ctx.call(null, `${base}/${p}`, { method: 'POST', body: '{}' }), 401, 'ERR:INVLDKEY');
          expectError(await ctx.call(pro, `${base}/${p}`), 405, 'ERR:METHOD');
        }
        expectError(await ctx.call(proGmp, path), 404, 'ERR:NOTFOUND');
      },
    },
    {
      id: 'account-webhooks',
      name: 'MUST let a pro account create, list and delete its webhook endpoints (the secret shown once), list and replay their deliveries; 403 on other plans, 404 for another account\'s',
      async fn(ctx) {
        const { paid, pro, proGmp } = ctx.fixture.accounts;
        if (!isWebhookStore(ctx.store)) {
          expectError(await ctx.call(pro, '/webhooks'), 404, 'ERR:NOTFOUND');
          return;
        }
        const store = ctx.store;
        for (const [method, path] of [
          ['GET', '/webhooks'],
          ['POST', '/webhooks'],
          ['POST', '/webhooks/wh_x/delete'],
          ['GET', '/webhooks/wh_x/deliveries'],
          ['POST', '/webhooks/wh_x/deliveries/dlv_x/replay'],
        ] as const) {
          expectError(await ctx.call(null, path, { method, ...(method === 'POST' ? { body: '{}' } : {}) }), 401, 'ERR:INVLDKEY');
        }
        const url = 'https://hooks.example.com/ipo?x=1';
        const made = await ctx.call(pro, '/webhooks', { method: 'POST', body: JSON.stringify({ url, events: ['ipo.status_changed', 'ipo.created'], description: 'prod \u{1F600}' }) });
        expect(made.status, made.text).toBe(201);
        expect(made.headers['cache-control']).toContain('no-store');
        const hook = made.json.webhook;
        expect(Object.keys(hook)).toEqual(['id', 'url', 'events', 'description', 'createdAt', 'disabledAt', 'pausedAt', 'secret']);
        expect(hook).toMatchObject({ url, events: ['ipo.created', 'ipo.status_changed'], description: 'prod \u{1F600}', createdAt: new Date(FIXTURE_NOW).toISOString(), disabledAt: null, pausedAt: null });
        expect(hook.id).toMatch(/^wh_[0-9A-Za-z]{20}$/);
        expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
        const listed = await ctx.call(pro, '/webhooks');
        expect(listed.status).toBe(200);
        expect(listed.json.webhooks).toEqual([{ id: hook.id, url, events: hook.events, description: hook.description, createdAt: hook.createdAt, disabledAt: null, pausedAt: null }]);
        expect(listed.text).not.toContain(hook.secret);
        // Other plans: 403 ERR:PLAN; bad fields: 400 naming them.
        expectError(await ctx.call(paid, '/webhooks', { method: 'POST', body: JSON.stringify({ url, events: ['ipo.created'] }) }), 403, 'ERR:PLAN');
        for (const [body, parameter] of [
          [{ url: 'ftp://x.example', events: ['ipo.created'] }, 'url'],
          [{ url: '/relative', events: ['ipo.created'] }, 'url'],
          [{ url: 'http://127.0.0.1:9/hook', events: ['ipo.created'] }, 'url'],
          [{ url: 'http://[::ffff:7f00:1]:9/hook', events: ['ipo.created'] }, 'url'],
          [{ url: 'http://169.254.169.254/latest/meta-data/', events: ['ipo.created'] }, 'url'],
          [{ url: 'https://alice:s3cret@example.com/hook', events: ['ipo.created'] }, 'url'],
          [{ events: ['ipo.created'] }, 'url'],
          [{ url, events: [] }, 'events'],
          [{ url, events: ['ipo.opened'] }, 'events'],
          [{ url, events: ['ipo.created'], secret: 'whsec_mine' }, 'secret'],
        ] as const) {
          const r = await ctx.call(pro, '/webhooks', { method: 'POST', body: JSON.stringify(body) });
          expectError(r, 400, 'ERR:BADPARAM');
          expect(r.json.meta, JSON.stringify(body)).toEqual({ parameter });
        }
        expectError(await ctx.call(pro, '/webhooks', { method: 'POST', body: JSON.stringify({ url, events: ['ipo.created'] }), type: 'text/plain' }), 415, 'ERR:MEDIATYPE');
        // An import makes a delivery, listed newest first and replayed as a new one.
        await importDataset(store, { ipos: [{ id: 'hooked-1', name: 'Hooked', slug: 'hooked-one', type: 'EQ' }] }, { now: () => new Date(ctx.now.ms) });
        const deliveries = await ctx.call(pro, `/webhooks/${hook.id}/deliveries`);
        expect(deliveries.status, deliveries.text).toBe(200);
        expect(deliveries.json.deliveries).toHaveLength(1);
        const [first] = deliveries.json.deliveries;
        expect(first).toMatchObject({ eventType: 'ipo.created', state: 'pending', attempts: 0, createdAt: new Date(ctx.now.ms).toISOString() });
        expect(Object.keys(first!)).toEqual(['id', 'eventId', 'eventType', 'state', 'attempts', 'createdAt', 'nextAttemptAt', 'lastAttemptAt', 'lastStatus', 'lastError']);
        // Still pending: a replay answers 200 with it as it is, and adds nothing.
        const same = await ctx.call(pro, `/webhooks/${hook.id}/deliveries/${first!.id}/replay`, { method: 'POST', body: '{}' });
        expect(same.status, same.text).toBe(200);
        expect(same.json.delivery).toEqual(first);
        expect((await ctx.call(pro, `/webhooks/${hook.id}/deliveries`)).json.deliveries).toHaveLength(1);
        // Settled (as a worker would: it failed for good), a replay is a new delivery.
        const claimed = await store.claimDeliveries({ now: ctx.now.ms, limit: 10, perWebhook: 10, perAccount: 10, leaseMs: 60_000, busy: new Map(), busyAccounts: new Map() });
        await store.finishDeliveries(claimed.map((c) => ({ id: c.delivery.id, lease: c.lease, at: ctx.now.ms, delivered: false, status: 410, error: 'answered 410', nextAttemptAt: null, disableBefore: ctx.now.ms - 6 * 86_400_000 })));
        ctx.now.ms += 1_000; // (listed newest first: the replay is a second later)
        const replayed = await ctx.call(pro, `/webhooks/${hook.id}/deliveries/${first!.id}/replay`, { method: 'POST', body: '{}' });
        expect(replayed.status, replayed.text).toBe(201);
        expect(replayed.json.delivery).toMatchObject({ eventId: first!.eventId, state: 'pending', attempts: 0, createdAt: new Date(ctx.now.ms).toISOString() });
        expect((await ctx.call(pro, `/webhooks/${hook.id}/deliveries?limit=1`)).json.deliveries.map((d) => d.id)).toEqual([replayed.json.delivery.id]);
        const page2 = await ctx.call(pro, `/webhooks/${hook.id}/deliveries?limit=1&before=${replayed.json.delivery.id}`);
        expect(page2.json.deliveries.map((d) => d.id)).toEqual([first!.id]);
        expectError(await ctx.call(pro, `/webhooks/${hook.id}/deliveries?limit=0`), 400, 'ERR:BADPARAM');
        expectError(await ctx.call(pro, `/webhooks/${hook.id}/deliveries/dlv_nope/replay`, { method: 'POST', body: '{}' }), 404, 'ERR:NOTFOUND');
        // Another account's endpoint is not found, never forbidden.
        for (const [method, path] of [
          ['POST', `/webhooks/${hook.id}/delete`],
          ['GET', `/webhooks/${hook.id}/deliveries`],
          ['POST', `/webhooks/${hook.id}/deliveries/${first!.id}/replay`],
        ] as const) {
          expectError(await ctx.call(proGmp, path, { method, ...(method === 'POST' ? { body: '{}' } : {}) }), 404, 'ERR:NOTFOUND');
        }
        expect((await ctx.call(proGmp, '/webhooks')).json.webhooks).toEqual([]);
        expectError(await ctx.call(pro, `/webhooks/${hook.id}/delete`, { method: 'GET' }), 405, 'ERR:METHOD');
        const gone = await ctx.call(pro, `/webhooks/${hook.id}/delete`, { method: 'POST', body: '{}' });
        expect(gone.status).toBe(204);
        expect(gone.text).toBe('');
        expect((await ctx.call(pro, '/webhooks')).json.webhooks).toEqual([]);
        expectError(await ctx.call(pro, `/webhooks/${hook.id}/deliveries`), 404, 'ERR:NOTFOUND');
        expect(await listWebhooks(store, { accountId: pro })).toEqual([]);
      },
    },
  ];
}

function isWebhookStore(store: Store): store is Store & WebhookStore {
  return typeof (store as Partial<WebhookStore>).insertWebhook === 'function';
}
