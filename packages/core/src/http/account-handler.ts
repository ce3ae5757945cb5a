/**
 * The account holder's self-service routes (docs/spec.md#account-router): the signed-in
 * account, its keys and usage, the IPO routes answered for it without a key, and the
 * dashboard's static files. Like {@link createIpoHandler}, one handler every adapter calls;
 * the adapter says who is signed in (the host app's login) and hands over the body it read.
 */
import { createApiKey, getAccountWindows, getUsage, listApiKeys, revokeApiKey, rotateApiKey, type CreatedApiKey } from '../accounts/admin.js';
import { addDays, DAY_MS, isCalendarDate, todayInIst } from '../model/dates.js';
import { IpokitError, isIpokitError } from '../model/errors.js';
import { error, guard, handle, json, openApiCache, respond, StoreFailure, type HandlerRequest, type HandlerResponse, type IpoRouterArgs } from './handler.js';
import { resolveOptions, type IpoRouterOptions, type ResolvedOptions } from '../model/options.js';
import { decodeComponent, parseQuery } from './request.js';
import type { AccountRecord, AccountStore, IpoStore, KeyGrant, Plan, RateLimiter, Store, WebhookStore } from '../model/types.js';
import { createWebhook, deleteWebhook, getDelivery, getWebhookLimits, listDeliveries, listWebhooks, replay, rotateWebhookSecret, sendTestEvent, updateWebhook } from '../events/webhooks.js';

/** The largest request body the account routes read: 10 KB. */
export const MAX_ACCOUNT_BODY_BYTES = 10_240;

/** The `keyId` under which the account router's own IPO requests are counted in usage. */
export const DASHBOARD_KEY_ID = 'dashboard';

/** One static file of the dashboard, as `@ipokit/dashboard` gives it. */
export interface DashboardAsset {
  contentType: string;
  body: string;
}

/** Options of {@link createAccountHandler}: the IPO router's (for the IPO routes), and the dashboard's files. */
export interface AccountHandlerOptions extends IpoRouterOptions {
  /**
   * The dashboard's files by path below `/-/dashboard/` (`''` is the page itself), served
   * with GET and HEAD when given (`dashboardAssets` of `@ipokit/dashboard`).
   */
  dashboardAssets?: DashboardAssets | Promise<DashboardAssets>;
  /** The plans whose accounts may have webhook endpoints (`/webhooks`). Default `['pro']`. */
  webhookPlans?: readonly Plan[];
  /** How many webhook endpoints one account may have. Default 10; `Infinity`: no cap. */
  maxWebhooksPerAccount?: number;
  /** Networks (CIDRs) outside the public internet that endpoints may be created for (`['10.1.0.0/16']`). Default none. */
  webhookAllowedNetworks?: readonly string[];
}

/** The dashboard's files by path below `/-/dashboard/`. */
export type DashboardAssets = Readonly<Record<string, DashboardAsset>>;

/**
 * The request body as the adapter read it: none, its text (the adapter reads at most
 * {@link MAX_ACCOUNT_BODY_BYTES} + 1 bytes), a value the host app's body parser already
 * made of it, or `tooLarge` when it had more bytes than that.
 */
export type AccountRequestBody = null | { text: string } | { json: unknown } | { tooLarge: true };

/** A request to the account routes, as an adapter hands it to the core. */
export interface AccountRequest extends HandlerRequest {
  /** The signed-in account's id, from the host app's login; null when nobody is signed in. */
  accountId: string | null;
  /** The body; read by the adapter for a POST only. */
  body: AccountRequestBody;
}

/**
 * What `accountRouter` (every adapter) takes: as {@link IpoRouterArgs}, with the options
 * required (they say who is signed in).
 */
export type AccountRouterArgs<O extends IpoRouterOptions> = [store: Store, options: O] | [store: IpoStore & AccountStore, options: O & { limiter: RateLimiter }];

/** The handler function built by {@link createAccountHandler}. */
export type AccountHandler = (request: AccountRequest) => Promise<HandlerResponse>;

/**
 * Builds the handler of the account routes over a store (docs/spec.md#account-router). The
 * options are the IPO router's, so that the IPO routes under it answer as the keyed API
 * does for the signed-in account (the same windows, the same usage); settings are checked
 * here, so a bad option throws at start-up.
 *
 * @example
 * ```ts
 * const handle = createAccountHandler(memoryStore(), { limits: { paid: { perMinute: 600 } } });
 * const res = await handle({ method: 'GET', url: '/account/keys', path: '/keys', query: '', headers: {}, clientAddress: '127.0.0.1', accountId: 'acct_...', body: null });
 * res.status; // 200: { "keys": [...] }
 * ```
 */
export function createAccountHandler(...[store, options = {}]: IpoRouterArgs<AccountHandlerOptions>): AccountHandler {
  const s = resolveOptions(options);
  const limiter: Partial<RateLimiter> = options.limiter ?? store;
  if (typeof limiter?.hitRateLimit !== 'function' || typeof limiter.peekRateLimit !== 'function' || typeof limiter.readUsage !== 'function') {
    throw new IpokitError('ERR:BADPARAM', 'accountRouter needs a rate limiter: pass a store that has one (memoryStore(), postgresStore()) or the option limiter.', {
      parameter: 'limiter',
    });
  }
  const given = options.dashboardAssets;
  // (a promise: the adapter loads @ipokit/dashboard only when the dashboard is on; it is checked when it settles)
  const assets = given === undefined ? undefined : Promise.resolve(given).then(assetFiles);
  assets?.catch(() => undefined); // a failed load is answered, and reported, per request
  const context: Context = { store, limiter: limiter as RateLimiter, s, options, openApiText: openApiCache(s), assets };
  return (request) => route(context, request);
}

interface Context {
  store: IpoStore & AccountStore;
  limiter: RateLimiter;
  s: ResolvedOptions;
  /** As given: `getAccountWindows` takes the router's own options. */
  options: AccountHandlerOptions;
  openApiText: (mount: string) => string;
  /** The dashboard's files by path, once they are loaded. */
  assets: Promise<ReadonlyMap<string, DashboardAsset>> | undefined;
}

/**
 * The given files as a map of the object's own properties: the path comes from the request,
 * and an object lookup would also find what every object inherits (`__proto__`,
 * `constructor`, `toString`, ...), which is no file.
 */
function assetFiles(assets: DashboardAssets): ReadonlyMap<string, DashboardAsset> {
  if (assets === null || typeof assets !== 'object' || !Object.hasOwn(assets, '') || typeof assets[''] !== 'object') {
    throw new IpokitError('ERR:BADPARAM', 'dashboardAssets must be the dashboardAssets of @ipokit/dashboard (a page at the path "").', { parameter: 'dashboardAssets' });
  }
  return new Map(Object.entries(assets));
}

const GET = 'GET, HEAD';
const POST = 'POST';

async function route(c: Context, req: AccountRequest): Promise<HandlerResponse> {
  try {
    const segments = req.path.replace(/^\//, '').split('/');
    // The IPO routes: the keyed API's own handler, for the signed-in account.
    if (segments[0] === 'ipos') return await ipoRoutes(c, req, segments.slice(1));
    if (segments[0] === '-' && segments[1] === 'dashboard') return await dashboard(c, req, segments.slice(2));
    // One trailing slash is no different path (`/keys/` is `/keys`).
    if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
    const [first = '', ...rest] = segments;
    if (segments.length === 1 && first === '') return await methods(req, GET, () => signedIn(c, req, (account) => overview(c, account)));
    if (first === 'keys' && rest.length === 0) {
      if (req.method === 'POST') return await signedIn(c, req, (account) => createKey(account.id, req, c));
      return await methods(req, 'GET, HEAD, POST', () => signedIn(c, req, async (account) => json(200, { keys: await listApiKeys(c.store, { accountId: account.id }) }, {})));
    }
    if (first === 'keys' && rest.length === 2 && (rest[1] === 'revoke' || rest[1] === 'rotate')) {
      const id = decodeComponent(rest[0]!);
      const action = rest[1];
      return await methods(req, POST, () =>
        signedIn(c, req, async (account) => {
          const body = postBody(req, action === 'rotate' ? ['overlapSeconds'] : []);
          if (id === null || !(await ownsKey(c, account.id, id))) return error('ERR:NOTFOUND', 'This account has no key with that id: list its keys with GET ./keys.');
          if (action === 'revoke') {
            await revokeApiKey(c.store, id, { now: c.s.now });
            return { status: 204, headers: { 'Cache-Control': 'private, no-store' }, body: '' };
          }
          const overlap = body.overlapSeconds;
          return createdKey(await rotateApiKey(c.store, id, overlap === undefined ? {} : { overlapSeconds: overlap as number }, keyOptions(c)));
        }),
      );
    }
    if (first === 'usage' && rest.length === 0) return await methods(req, GET, () => signedIn(c, req, (account) => usage(c, account.id, req.query)));
    if (first === 'webhooks') {
      const answer = await webhookRoutes(c, req, rest);
      if (answer !== null) return answer;
    }
    return error('ERR:NOTFOUND', 'No such route: use /, /keys, /usage, /webhooks or /ipos.');
  } catch (err) {
    return failure(c, err);
  }
}

/** The answer of a thrown error: the admin functions' codes as they are, a store failure 503, the rest 500. */
function failure(c: Context, err: unknown): HandlerResponse {
  if (isIpokitError(err, 'ERR:BADPARAM')) return error('ERR:BADPARAM', err.message, { parameter: err.parameter ?? 'unknown' });
  if (isIpokitError(err, 'ERR:PLAN')) return error('ERR:PLAN', err.message);
  if (isIpokitError(err, 'ERR:NOTFOUND')) return error('ERR:NOTFOUND', err.message);
  for (const code of ['ERR:MEDIATYPE', 'ERR:TOOLARGE', 'ERR:INVLDKEY'] as const) if (isIpokitError(err, code)) return error(code, err.message);
  if (err instanceof StoreFailure || isIpokitError(err, 'ERR:UNAVAILABLE')) {
    c.s.onError(err instanceof StoreFailure ? err.cause : err);
    return error('ERR:UNAVAILABLE', 'The account store is unavailable right now: retry in a few seconds.');
  }
  c.s.onError(err);
  return error('ERR:INTERNAL', 'The server failed to answer: retry later, and report it if it persists.');
}

/** Answers with `answer` when the method is one of `allow`, else 405 with `Allow`. */
async function methods(req: AccountRequest, allow: string, answer: () => Promise<HandlerResponse>): Promise<HandlerResponse> {
  if (allow.split(', ').includes(req.method)) return answer();
  const res = error('ERR:METHOD', `The method ${JSON.stringify(req.method.slice(0, 50))} is not allowed here: use ${allow.replace(', ', ' or ')}.`);
  res.headers['Allow'] = allow;
  return res;
}

/** Runs `answer` for the signed-in account; 401 when nobody is signed in or the account is gone. */
async function signedIn(c: Context, req: AccountRequest, answer: (account: AccountRecord) => Promise<HandlerResponse>): Promise<HandlerResponse> {
  const id = req.accountId;
  if (id === null) throw new IpokitError('ERR:INVLDKEY', 'Nobody is signed in: sign in to the app, then retry.');
  const account = await guard(c.s, () => c.store.getAccount(id));
  if (account === null) throw new IpokitError('ERR:INVLDKEY', 'The signed-in account does not exist (any more): sign in again.');
  return answer(account);
}

/**
 * How long `GET /` keeps listing a key after it stopped working (revoked or expired): the
 * usage page's default span, so that the keys it names are there. The key cap bounds the
 * active keys (20,000 of them made a 5.2 MB answer); without this the answer would still
 * grow with every key an account ever revoked. `GET /keys` lists every key.
 */
const OVERVIEW_KEY_HISTORY_MS = 30 * DAY_MS;

async function overview(c: Context, account: AccountRecord): Promise<HandlerResponse> {
  const accountId = account.id;
  const windows = await getAccountWindows(c.store, { accountId }, { ...pick(c.options), limiter: c.limiter });
  const now = c.s.now().getTime();
  const keys = (await listApiKeys(c.store, { accountId })).filter((k) => {
    const ended = Math.min(k.revokedAt === null ? Infinity : Date.parse(k.revokedAt), k.expiresAt === null ? Infinity : Date.parse(k.expiresAt));
    return ended > now || now - ended < OVERVIEW_KEY_HISTORY_MS;
  });
  return json(200, { account: { id: account.id, name: account.name, plan: account.plan, gmpAddon: account.gmpAddon }, windows, keys }, {});
}

/** The router options `getAccountWindows` reads. */
function pick(options: IpoRouterOptions): Pick<IpoRouterOptions, 'limits' | 'now'> {
  return { ...(options.limits === undefined ? {} : { limits: options.limits }), ...(options.now === undefined ? {} : { now: options.now }) };
}

async function createKey(accountId: string, req: AccountRequest, c: Context): Promise<HandlerResponse> {
  const body = postBody(req, ['label', 'expiresAt']);
  if (body.label === undefined) throw new IpokitError('ERR:BADPARAM', 'label is required: send { "label": "..." }.', { parameter: 'label' });
  const input = { accountId, label: body.label as string, ...(body.expiresAt === undefined ? {} : { expiresAt: body.expiresAt as string }) };
  return createdKey(await createApiKey(c.store, input, keyOptions(c)));
}

/** The admin options of the key routes: the router's clock and key cap. */
function keyOptions(c: Context): { now: () => Date; maxKeysPerAccount: number } {
  return { now: c.s.now, maxKeysPerAccount: c.s.maxKeysPerAccount };
}

/** A new key's answer: 201 with the key text, this once. */
function createdKey(k: CreatedApiKey): HandlerResponse {
  return json(201, { key: { id: k.id, key: k.key, prefix: k.prefix, label: k.label, createdAt: k.createdAt, expiresAt: k.expiresAt } }, {});
}

async function ownsKey(c: Context, accountId: string, keyId: string): Promise<boolean> {
  return (await listApiKeys(c.store, { accountId })).some((k) => k.id === keyId);
}

async function usage(c: Context, accountId: string, query: string): Promise<HandlerResponse> {
  const q = parseQuery(query);
  const one = (name: string): string | undefined => {
    const values = q.get(name);
    if (values !== undefined && values.length > 1) throw new IpokitError('ERR:BADPARAM', `${name} must be given once.`, { parameter: name });
    return values?.[0];
  };
  // Default: the 30 IST days up to today, on the router's clock.
  const to = one('to') ?? todayInIst(c.s.now().getTime());
  if (!isCalendarDate(to)) throw new IpokitError('ERR:BADPARAM', 'to must be an IST calendar day written YYYY-MM-DD.', { parameter: 'to' });
  const from = one('from') ?? addDays(to, -29);
  const rows = await getUsage(c.store, { accountId, from, to }, { limiter: c.limiter });
  return json(200, { usage: rows }, {});
}

/**
 * The account's webhook endpoints and their deliveries (docs/spec.md#account-router):
 * `GET/POST /webhooks` (the list with the plan's limits), `POST /webhooks/{id}/delete`,
 * `/update`, `/pause`, `/resume`, `/rotate-secret` and `/test`, `GET /webhooks/{id}/deliveries`,
 * `GET /webhooks/{id}/deliveries/{deliveryId}` and `POST
 * /webhooks/{id}/deliveries/{deliveryId}/replay`. Null for any other path below `/webhooks`.
 * Another account's endpoint is 404, as a key is.
 */
async function webhookRoutes(c: Context, req: AccountRequest, rest: string[]): Promise<HandlerResponse | null> {
  const store = webhookStore(c.store);
  const shape =
    rest.length === 0
      ? 'list'
      : rest.length === 2 && WEBHOOK_ACTIONS.has(rest[1]!)
        ? rest[1]!
        : rest.length === 2 && rest[1] === 'deliveries'
          ? 'deliveries'
          : rest.length === 3 && rest[1] === 'deliveries'
            ? 'delivery'
            : rest.length === 4 && rest[1] === 'deliveries' && rest[3] === 'replay'
              ? 'replay'
              : null;
  if (shape === null) return null;
  if (store === null) return error('ERR:NOTFOUND', 'This store keeps no webhooks: use a store with the WebhookStore capability (memoryStore(), postgresStore()).');
  const plans = {
    ...(c.options.webhookPlans === undefined ? {} : { webhookPlans: c.options.webhookPlans }),
    ...(c.options.maxWebhooksPerAccount === undefined ? {} : { maxWebhooksPerAccount: c.options.maxWebhooksPerAccount }),
    ...(c.options.webhookAllowedNetworks === undefined ? {} : { webhookAllowedNetworks: c.options.webhookAllowedNetworks }),
  };
  if (shape === 'list') {
    if (req.method === 'POST') {
      return signedIn(c, req, async (account) => {
        const body = postBody(req, ['url', 'events', 'description']);
        const input = { accountId: account.id, url: body.url as string, events: body.events as string[], ...(body.description === undefined ? {} : { description: body.description as string }) };
        const { id, secret } = await createWebhook(store, input, { now: c.s.now, ...plans });
        const made = (await listWebhooks(store, { accountId: account.id })).find((w) => w.id === id);
        return json(201, { webhook: { ...made, secret } }, {});
      });
    }
    return methods(req, 'GET, HEAD, POST', () =>
      signedIn(c, req, async (account) => {
        // (what the plan allows comes with the list: a form is shown only where it can succeed)
        const webhooks = await listWebhooks(store, { accountId: account.id });
        const limits = await getWebhookLimits(store, { accountId: account.id }, plans);
        return json(200, { webhooks, limits }, {});
      }),
    );
  }
  const id = decodeComponent(rest[0]!);
  const owned = async (account: AccountRecord): Promise<string> => {
    if (id === null || !(await listWebhooks(store, { accountId: account.id })).some((w) => w.id === id)) {
      throw new IpokitError('ERR:NOTFOUND', 'This account has no webhook with that id: list them with GET ./webhooks.');
    }
    return id;
  };
  if (shape === 'delete') {
    return methods(req, POST, () =>
      signedIn(c, req, async (account) => {
        postBody(req, []);
        await deleteWebhook(store, await owned(account));
        return { status: 204, headers: { 'Cache-Control': 'private, no-store' }, body: '' };
      }),
    );
  }
  if (shape === 'update' || shape === 'pause' || shape === 'resume') {
    return methods(req, POST, () =>
      signedIn(c, req, async (account) => {
        const body = postBody(req, shape === 'update' ? ['events', 'description', 'paused'] : []);
        const webhookId = await owned(account);
        const input =
          shape === 'update'
            ? {
                id: webhookId,
                ...(body.events === undefined ? {} : { events: body.events as string[] }),
                ...(body.description === undefined ? {} : { description: body.description as string | null }),
                ...(body.paused === undefined ? {} : { paused: body.paused as boolean }),
              }
            : { id: webhookId, paused: shape === 'pause' };
        return json(200, { webhook: await updateWebhook(store, input, { now: c.s.now }) }, {});
      }),
    );
  }
  if (shape === 'rotate-secret') {
    return methods(req, POST, () =>
      signedIn(c, req, async (account) => {
        const body = postBody(req, ['overlapSeconds']);
        const webhookId = await owned(account);
        const overlap = body.overlapSeconds;
        const rotated = await rotateWebhookSecret(store, { id: webhookId, ...(overlap === undefined ? {} : { overlapSeconds: overlap as number }) }, { now: c.s.now });
        return json(201, rotated, {});
      }),
    );
  }
  if (shape === 'test') {
    return methods(req, POST, () =>
      signedIn(c, req, async (account) => {
        postBody(req, []);
        const webhookId = await owned(account);
        return json(201, { delivery: await sendTestEvent(store, { webhookId }, { now: c.s.now }) }, {});
      }),
    );
  }
  if (shape === 'delivery') {
    const deliveryId = decodeComponent(rest[2]!);
    return methods(req, GET, () =>
      signedIn(c, req, async (account) => {
        const webhookId = await owned(account);
        if (deliveryId === null) throw new IpokitError('ERR:NOTFOUND', 'This webhook has no delivery with that id.');
        return json(200, { delivery: await getDelivery(store, { webhookId, deliveryId }) }, {});
      }),
    );
  }
  if (shape === 'deliveries') {
    return methods(req, GET, () =>
      signedIn(c, req, async (account) => {
        const webhookId = await owned(account);
        const q = parseQuery(req.query);
        const one = (name: string): string | undefined => {
          const values = q.get(name);
          if (values !== undefined && values.length > 1) throw new IpokitError('ERR:BADPARAM', `${name} must be given once.`, { parameter: name });
          return values?.[0];
        };
        const before = one('before');
        const limitText = one('limit');
        const limit = limitText === undefined ? undefined : /^[0-9]{1,3}$/.test(limitText) ? Number(limitText) : NaN;
        const deliveries = await listDeliveries(store, { webhookId, ...(before === undefined ? {} : { before }), ...(limit === undefined ? {} : { limit }) });
        return json(200, { deliveries }, {});
      }),
    );
  }
  const deliveryId = decodeComponent(rest[2]!);
  return methods(req, POST, () =>
    signedIn(c, req, async (account) => {
      postBody(req, []);
      const webhookId = await owned(account);
      if (deliveryId === null) throw new IpokitError('ERR:NOTFOUND', 'This webhook has no delivery with that id.');
      const { delivery, added } = await replay(store, { webhookId, deliveryId }, { now: c.s.now });
      // (a delivery of that event still pending is answered as it is: nothing was created)
      return json(added ? 201 : 200, { delivery }, {});
    }),
  );
}

/** The `POST /webhooks/{id}/...` actions. */
const WEBHOOK_ACTIONS: ReadonlySet<string> = new Set(['delete', 'update', 'pause', 'resume', 'rotate-secret', 'test']);

/** The store as a {@link WebhookStore}, or null when it keeps no webhooks. */
function webhookStore(store: IpoStore & AccountStore): (AccountStore & WebhookStore) | null {
  const w = store as Partial<WebhookStore>;
  const methods = ['insertWebhook', 'listWebhooks', 'getWebhook', 'deleteWebhook', 'listDeliveries', 'replayDelivery', 'updateWebhook', 'addDelivery', 'getDelivery'] as const;
  return methods.every((m) => typeof w[m] === 'function') ? (store as unknown as AccountStore & WebhookStore) : null;
}

/**
 * A POST body as an object of the `allowed` fields: JSON, at most 10 KB, sent as
 * `application/json` (which a cross-site form cannot send without a preflight). No body is `{}`.
 */
function postBody(req: AccountRequest, allowed: readonly string[]): Record<string, unknown> {
  const type = req.headers['content-type'];
  const media = (Array.isArray(type) ? type.join(',') : (type ?? '')).split(';')[0]!.trim().toLowerCase();
  if (media !== 'application/json') {
    throw new IpokitError('ERR:MEDIATYPE', 'A POST here needs Content-Type: application/json, with a JSON object as its body (or none).');
  }
  const body = req.body;
  if (body !== null && 'tooLarge' in body) throw new IpokitError('ERR:TOOLARGE', `The request body is larger than ${MAX_ACCOUNT_BODY_BYTES / 1024} KB: send a smaller JSON object.`);
  let value: unknown = {};
  if (body !== null && 'json' in body) value = body.json ?? {};
  else if (body !== null && body.text.trim() !== '') {
    try {
      value = JSON.parse(body.text);
    } catch {
      throw new IpokitError('ERR:BADPARAM', 'The request body is not JSON: send a JSON object.', { parameter: 'body' });
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new IpokitError('ERR:BADPARAM', 'The request body must be a JSON object.', { parameter: 'body' });
  for (const name of Object.keys(value)) {
    if (!allowed.includes(name)) {
      throw new IpokitError('ERR:BADPARAM', `Unknown field ${JSON.stringify(name.slice(0, 50))}: send only ${allowed.length === 0 ? 'an empty object' : allowed.join(' and ')}.`, {
        parameter: name.slice(0, 50),
      });
    }
  }
  return value as Record<string, unknown>;
}

/** The IPO routes for the signed-in account: the keyed API's handler with its grant. */
async function ipoRoutes(c: Context, req: AccountRequest, rest: string[]): Promise<HandlerResponse> {
  const path = `/${rest.join('/')}`;
  return signedIn(c, req, (account) => {
    const grant: KeyGrant = { keyId: DASHBOARD_KEY_ID, accountId: account.id, plan: account.plan, gmpAddon: account.gmpAddon, revoked: false, expiresAt: null };
    return handle(c.store, c.limiter, c.s, c.openApiText, { ...req, path }, grant);
  });
}

/** The dashboard's files, GET and HEAD, whoever is signed in (they hold no data). */
async function dashboard(c: Context, req: AccountRequest, rest: string[]): Promise<HandlerResponse> {
  if (c.assets === undefined) return error('ERR:NOTFOUND', 'The dashboard is not served here: set the router option dashboard: true to serve it at this path.');
  return methods(req, GET, async () => {
    // `/-/dashboard` without the slash: its files' relative URLs need it.
    if (rest.length === 0) {
      const res = respond(308, '', {});
      res.headers['Location'] = 'dashboard/';
      return res;
    }
    let assets: ReadonlyMap<string, DashboardAsset>;
    try {
      assets = await c.assets!;
    } catch (err) {
      c.s.onError(err);
      return error('ERR:INTERNAL', 'The dashboard could not be loaded: see the server log.');
    }
    const asset = assets.get(rest.join('/'));
    if (asset === undefined) return error('ERR:NOTFOUND', 'The dashboard has no such file.');
    const res = respond(200, asset.body, { 'Content-Type': asset.contentType });
    res.headers['X-Content-Type-Options'] = 'nosniff';
    // The page may be framed by nobody and load nothing but its own files.
    res.headers['Content-Security-Policy'] = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
    return res;
  });
}

/**
 * Reads a request body for the account routes from its chunks (a Node request and a fetch
 * `Request.body` are both async iterables of bytes), stopping after
 * {@link MAX_ACCOUNT_BODY_BYTES} + 1 bytes: `{ tooLarge: true }` beyond the limit, null
 * when empty, else the text (UTF-8; bad bytes become U+FFFD, then fail as JSON).
 *
 * @example
 * ```ts
 * const body = req.method === 'POST' ? await readAccountBody(req) : null; // req: a Node IncomingMessage
 * ```
 */
export async function readAccountBody(chunks: AsyncIterable<Uint8Array>): Promise<AccountRequestBody> {
  const parts: Uint8Array[] = [];
  let size = 0;
  // Not `for await`: leaving it early would destroy a Node request, and its socket with it,
  // before the 413 is sent. Unread, the rest is the server's to discard.
  const iterator = chunks[Symbol.asyncIterator]();
  for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
    size += next.value.byteLength;
    if (size > MAX_ACCOUNT_BODY_BYTES) return { tooLarge: true };
    parts.push(next.value);
  }
  if (size === 0) return null;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return { text: new TextDecoder().decode(bytes) };
}

/**
 * The body of a request that the host app's body parser has read already (Express's
 * `express.json()` sets `req.body`, koa-bodyparser `ctx.request.body`): a string or bytes
 * as text, anything else as the parsed value; `tooLarge` when its JSON text is over the
 * limit, so that the limit holds whichever way the body came.
 *
 * @example
 * ```ts
 * const body = req.readableEnded ? parsedAccountBody(req.body) : await readAccountBody(req);
 * ```
 */
export function parsedAccountBody(value: unknown): AccountRequestBody {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : value instanceof Uint8Array ? new TextDecoder().decode(value) : undefined;
  const length = text !== undefined ? new TextEncoder().encode(text).byteLength : jsonByteLength(value, MAX_ACCOUNT_BODY_BYTES);
  if (length > MAX_ACCOUNT_BODY_BYTES) return { tooLarge: true };
  if (text !== undefined) return text === '' ? null : { text };
  return { json: value };
}

/**
 * The UTF-8 length of `JSON.stringify(value)`. A parser's value may nest thousands deep
 * (`express.json()` takes 100 KB), where JSON.stringify, which recurses, overflows the stack:
 * such a value is measured without recursion instead, as parsed JSON (objects, arrays,
 * strings, numbers, booleans, null), and only until it is over `limit`.
 */
function jsonByteLength(value: unknown, limit: number): number {
  try {
    return new TextEncoder().encode(JSON.stringify(value) ?? '').byteLength;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';
  const encoder = new TextEncoder();
  let length = 0;
  const pending: unknown[] = [value];
  for (let v = pending.pop(); v !== undefined && length <= limit; v = pending.pop()) {
    if (Array.isArray(v)) {
      length += 1 + Math.max(1, v.length); // brackets and commas
      for (const item of v as unknown[]) pending.push(skipped(item) ? null : item);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v).filter(([, item]) => !skipped(item));
      length += 1 + Math.max(1, entries.length);
      for (const [key, item] of entries) {
        length += encoder.encode(JSON.stringify(key)).byteLength + 1;
        pending.push(item);
      }
    } else {
      length += encoder.encode(JSON.stringify(v) ?? 'null').byteLength;
    }
  }
  return length;
}
