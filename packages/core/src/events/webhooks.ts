/**
 * The operator's functions for webhooks (docs/spec.md#webhooks): an account's endpoints, each
 * with the events it wants and the secret that signs them, and their deliveries. Every
 * failure is an `IpokitError`.
 */
import { parseAllowedNetworks, refusedHost, type AllowedNetworksInput } from './address-policy.js';
import { getAccount } from '../accounts/admin.js';
import { storeCall } from '../model/errors.js';
import { IpokitError } from '../model/errors.js';
import { generateWebhookSecret } from './events.js';
import { toIsoUtc } from '../model/dates.js';
import { EVENT_TYPES, TEST_EVENT_TYPE, type AccountStore, type DeliveryEventType, type DeliveryRecord, type DeliveryState, type EventType, type Plan, type WebhookChange, type WebhookRecord, type WebhookStore } from '../model/types.js';
import { randomId } from '../accounts/keys.js';

/** The plans whose accounts may have webhook endpoints unless `webhookPlans` says otherwise. */
export const DEFAULT_WEBHOOK_PLANS: readonly Plan[] = Object.freeze(['pro']);

/** How many endpoints an account may have unless `maxWebhooksPerAccount` says otherwise. */
export const DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT = 10;

/** The longest endpoint URL, in characters. */
const MAX_URL_LENGTH = 2_048;
/** The longest description, in code points. */
const MAX_DESCRIPTION = 200;

/** Options of the webhook functions. */
export interface WebhookOptions {
  /** The clock for `createdAt`. Default `() => new Date()`. */
  now?: () => Date;
  /** The plans whose accounts may create endpoints. Default `['pro']`. */
  webhookPlans?: readonly Plan[];
  /** How many endpoints (disabled ones count) one account may have. Default 10; `Infinity`: no cap. */
  maxWebhooksPerAccount?: number;
  /**
   * Networks (CIDRs) outside the public internet that endpoints may be created for, e.g.
   * `['10.1.0.0/16']`; tests and local development pass `['127.0.0.0/8', '::1/128']`.
   * Default none: a URL whose host is a loopback, private, link-local, CGNAT or multicast
   * address literal, or `localhost`, is refused.
   */
  webhookAllowedNetworks?: AllowedNetworksInput;
}

/** An endpoint as listed: never its secret. */
export interface WebhookInfo {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  createdAt: string;
  disabledAt: string | null;
  /** Set while the account holder has it paused: no attempts, its deliveries wait. */
  pausedAt: string | null;
}

/**
 * Creates a webhook endpoint for an account: events of the types in `events` are sent to
 * `url`, signed with the secret this resolves to (shown only here). The account's plan must
 * be one of `webhookPlans` (default pro), and it may have at most `maxWebhooksPerAccount`
 * endpoints (default 10), else `ERR:PLAN`; `url` must be an absolute `http:`
 * or `https:` URL and `events` a non-empty list of event types, else `ERR:BADPARAM`. A URL
 * aimed at the operator's own network is refused (`ERR:BADPARAM`, parameter `url`): a host
 * that is an address literal outside the public internet in any form a URL parser accepts
 * (`http://2130706433/`, `[::ffff:127.0.0.1]`) unless `webhookAllowedNetworks` opens it,
 * `localhost` or a name under `.localhost` (unless loopback is opened), and any URL with
 * credentials (`user:pass@`). Other names are taken here and checked where the worker connects.
 *
 * @example
 * ```ts
 * const { id, secret } = await createWebhook(store, { accountId: acct.id, url: 'https://example.com/hooks/ipo', events: ['ipo.status_changed'] });
 * ```
 */
export async function createWebhook(
  store: AccountStore & WebhookStore,
  input: { accountId: string; url: string; events: readonly string[]; description?: string },
  options: WebhookOptions = {},
): Promise<{ id: string; secret: string }> {
  if (input === null || typeof input !== 'object') throw bad('input', 'createWebhook takes { accountId, url, events, description? }.');
  const allowed = parseAllowedNetworks(options.webhookAllowedNetworks);
  const url = urlOf(input.url, allowed);
  const events = eventsOf(input.events);
  const description = input.description === undefined ? null : descriptionOf(input.description);
  const plans = plansOf(options.webhookPlans);
  const max = maxOf(options.maxWebhooksPerAccount);
  const account = await getAccount(store, input.accountId);
  if (!plans.includes(account.plan)) {
    throw new IpokitError('ERR:PLAN', `Webhooks need the ${plans.join(' or ')} plan: this account is on ${account.plan}.`);
  }
  const webhook: WebhookRecord = {
    id: randomId('wh'),
    accountId: account.id,
    url,
    events,
    description,
    secret: generateWebhookSecret(),
    createdAt: (options.now ?? (() => new Date()))().toISOString(),
    disabledAt: null,
    pausedAt: null,
    previousSecret: null,
    previousSecretExpiresAt: null,
  };
  const result = await storeCall(() => store.insertWebhook(webhook, { maxPerAccount: max }));
  if (result === 'not-found') throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(account.id)}.`);
  if (result === 'too-many-webhooks') {
    throw new IpokitError('ERR:PLAN', `An account may have at most ${max} webhook endpoints: delete one before adding another.`);
  }
  return { id: webhook.id, secret: webhook.secret };
}

/**
 * Lists an account's webhook endpoints, ordered by creation: never their secrets.
 *
 * @example
 * ```ts
 * await listWebhooks(store, { accountId: acct.id }); // [{ id, url, events, description, createdAt, disabledAt, pausedAt }]
 * ```
 */
export async function listWebhooks(store: WebhookStore, input: { accountId: string }): Promise<WebhookInfo[]> {
  const accountId = idOf('accountId', input?.accountId);
  const hooks = await storeCall(() => store.listWebhooks(accountId));
  if (hooks === null) throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(accountId)}.`);
  return hooks.map(webhookInfo);
}

/** Whether an account may add webhook endpoints, and how many it has (what a form shows first). */
export interface WebhookLimits {
  /** Its plan is one of `plans` and it has fewer than `maxPerAccount` endpoints. */
  allowed: boolean;
  /** The plans whose accounts may have endpoints (`webhookPlans`). */
  plans: Plan[];
  /** `maxWebhooksPerAccount`; null when there is no cap. */
  maxPerAccount: number | null;
  /** The endpoints it has, disabled ones counted. */
  used: number;
}

/**
 * What an account may do with webhooks before it tries: whether its plan allows endpoints
 * and how many of the cap it uses. An unknown account is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const limits = await getWebhookLimits(store, { accountId: acct.id });
 * if (!limits.allowed) console.log(`Webhooks need the ${limits.plans.join(' or ')} plan.`);
 * ```
 */
export async function getWebhookLimits(store: AccountStore & WebhookStore, input: { accountId: string }, options: WebhookOptions = {}): Promise<WebhookLimits> {
  const plans = plansOf(options.webhookPlans);
  const max = maxOf(options.maxWebhooksPerAccount);
  const account = await getAccount(store, idOf('accountId', input?.accountId));
  const used = (await listWebhooks(store, { accountId: account.id })).length;
  return { allowed: plans.includes(account.plan) && used < max, plans: [...plans], maxPerAccount: max === Infinity ? null : max, used };
}

/** The longest overlap of a rotated webhook secret: 7 days. */
const MAX_SECRET_OVERLAP_SECONDS = 7 * 86_400;

/**
 * Changes an endpoint: `events` replaces its event types (a non-empty list of event types;
 * events recorded from now on fan out by it), `description` (a string, or null to clear it),
 * `paused`: `true` stops its attempts (its deliveries stay pending; events still fan out to
 * it), `false` resumes it, which also enables it again when the worker disabled it after 5
 * days of failures (it then takes the events recorded from now on) and starts its failing
 * streak afresh. Resolves to the endpoint as it is after. An unknown endpoint is
 * `ERR:NOTFOUND`; a bad field `ERR:BADPARAM`.
 *
 * @example
 * ```ts
 * await updateWebhook(store, { id: hook.id, paused: true });  // { ..., pausedAt: '2026-11-28T10:00:00.000Z' }
 * await updateWebhook(store, { id: hook.id, paused: false, events: ['ipo.status_changed', 'gmp.snapshot'] });
 * ```
 */
export async function updateWebhook(
  store: WebhookStore,
  input: { id: string; events?: readonly string[]; description?: string | null; paused?: boolean },
  options: Pick<WebhookOptions, 'now'> = {},
): Promise<WebhookInfo> {
  if (input === null || typeof input !== 'object') throw bad('input', 'updateWebhook takes { id, events?, description?, paused? }.');
  const id = idOf('id', input.id);
  const change: WebhookChange = {};
  if (input.events !== undefined) change.events = eventsOf(input.events);
  if (input.description !== undefined) change.description = input.description === null ? null : descriptionOf(input.description);
  if (input.paused !== undefined) {
    if (typeof input.paused !== 'boolean') throw bad('paused', 'paused must be true (stop sending) or false (send again).');
    change.pausedAt = input.paused ? (options.now ?? (() => new Date()))().toISOString() : null;
  }
  const hook = await storeCall(() => store.updateWebhook(id, change));
  if (hook === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(id)}.`);
  return webhookInfo(hook);
}

/**
 * Gives an endpoint a new secret (`whsec_`, made as {@link createWebhook} makes one, shown
 * only here). The old one keeps signing for `overlapSeconds` (0 to 604,800; default 86,400):
 * until then every attempt carries both signatures (`v1,<new> v1,<old>`), so a receiver can
 * switch at its pace; after it, only the new one. An unknown endpoint is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const { secret, previousSecretExpiresAt } = await rotateWebhookSecret(store, { id: hook.id, overlapSeconds: 3_600 });
 * ```
 */
export async function rotateWebhookSecret(
  store: WebhookStore,
  input: { id: string; overlapSeconds?: number },
  options: Pick<WebhookOptions, 'now'> = {},
): Promise<{ secret: string; previousSecretExpiresAt: string }> {
  if (input === null || typeof input !== 'object') throw bad('input', 'rotateWebhookSecret takes { id, overlapSeconds? }.');
  const id = idOf('id', input.id);
  const overlap = input.overlapSeconds ?? 86_400;
  if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) {
    throw bad('overlapSeconds', `overlapSeconds must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days).`);
  }
  const now = (options.now ?? (() => new Date()))().getTime();
  const secret = generateWebhookSecret();
  const previousSecretExpiresAt = toIsoUtc(now + overlap * 1_000);
  const hook = await storeCall(() => store.updateWebhook(id, { rotate: { secret, previousSecretExpiresAt } }));
  if (hook === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(id)}.`);
  return { secret, previousSecretExpiresAt };
}

/**
 * Sends a test event to one endpoint, whatever its event types: a new pending delivery, due
 * now, of an event of type `webhook.test` (data: `{ webhookId, message }`), signed as any
 * other. A paused or disabled endpoint is `ERR:BADPARAM` (nothing would be sent); an unknown
 * one `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const delivery = await sendTestEvent(store, { webhookId: hook.id });
 * delivery.eventType; // 'webhook.test'
 * ```
 */
export async function sendTestEvent(store: WebhookStore, input: { webhookId: string }, options: Pick<WebhookOptions, 'now'> = {}): Promise<DeliveryInfo> {
  const webhookId = idOf('webhookId', input?.webhookId);
  const hook = await storeCall(() => store.getWebhook(webhookId));
  if (hook === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(webhookId)}.`);
  if (hook.disabledAt !== null) throw bad('webhookId', `The webhook was disabled at ${hook.disabledAt} after failing for 5 days: resume it to send to it again.`);
  if (hook.pausedAt !== null) throw bad('webhookId', `The webhook is paused (since ${hook.pausedAt}): resume it to send a test event.`);
  const now = (options.now ?? (() => new Date()))().getTime();
  const body = JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: toIsoUtc(now), data: { webhookId, message: TEST_EVENT_MESSAGE } });
  const event = { id: randomId('evt'), type: TEST_EVENT_TYPE as DeliveryEventType, at: now, body };
  const row = await storeCall(() => store.addDelivery({ webhookId, id: randomId('dlv'), event, now }));
  if (row === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(webhookId)}.`);
  return deliveryInfo(row);
}

/** The message of a test event's data. */
const TEST_EVENT_MESSAGE = 'A test event from ipokit.';

/**
 * Deletes a webhook endpoint: nothing more is sent to it. An unknown id is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * await deleteWebhook(store, hook.id);
 * ```
 */
export async function deleteWebhook(store: WebhookStore, id: string): Promise<void> {
  const hookId = idOf('id', id);
  if (!(await storeCall(() => store.deleteWebhook(hookId)))) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(hookId)}.`);
}

/** A delivery as listed: times as ISO instants. */
export interface DeliveryInfo {
  id: string;
  eventId: string;
  eventType: DeliveryEventType;
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  createdAt: string;
  /** When the next attempt is due; null unless pending. */
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  /** The HTTP status of the last attempt; null when it got none. */
  lastStatus: number | null;
  lastError: string | null;
}

/** A delivery with what it sent and what came back. */
export type DeliveryDetail = DeliveryInfo & {
  /** The event's body, byte for byte as every attempt sends it. */
  payload: string;
  /**
   * The last attempt's answer: its HTTP status and the first 1 KB of its body, both null when
   * no answer came (`lastError` says why); null when no attempt was made yet.
   */
  response: { status: number | null; body: string | null } | null;
};

/**
 * One delivery of an endpoint with its payload and the receiver's last answer. An unknown
 * endpoint, or a delivery not of it, is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const d = await getDelivery(store, { webhookId: hook.id, deliveryId: page[0].id });
 * d.payload;  // '{"type":"ipo.created","timestamp":"...","data":{...}}'
 * d.response; // { status: 500, body: 'upstream timeout' }
 * ```
 */
export async function getDelivery(store: WebhookStore, input: { webhookId: string; deliveryId: string }): Promise<DeliveryDetail> {
  const webhookId = idOf('webhookId', input?.webhookId);
  const deliveryId = idOf('deliveryId', input.deliveryId);
  const row = await storeCall(() => store.getDelivery({ webhookId, id: deliveryId }));
  if (row === null) throw new IpokitError('ERR:NOTFOUND', `Webhook ${JSON.stringify(webhookId)} has no delivery ${JSON.stringify(deliveryId)}.`);
  return { ...deliveryInfo(row), payload: row.body, response: row.attempts === 0 ? null : { status: row.lastStatus, body: row.lastResponseBody } };
}

/** The most deliveries one call of {@link listDeliveries} returns. */
const MAX_DELIVERY_PAGE = 100;

/**
 * Lists an endpoint's deliveries, newest first, `limit` (1 to 100, default 20) at a time;
 * pass the last one's id as `before` for the next page. An unknown endpoint is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const page = await listDeliveries(store, { webhookId: hook.id, limit: 20 });
 * const next = await listDeliveries(store, { webhookId: hook.id, before: page.at(-1)?.id });
 * ```
 */
export async function listDeliveries(store: WebhookStore, input: { webhookId: string; before?: string; limit?: number }): Promise<DeliveryInfo[]> {
  const webhookId = idOf('webhookId', input?.webhookId);
  const before = input.before === undefined ? null : idOf('before', input.before);
  const limit = input.limit ?? 20;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DELIVERY_PAGE) throw bad('limit', `limit must be a whole number from 1 to ${MAX_DELIVERY_PAGE}.`);
  const rows = await storeCall(() => store.listDeliveries({ webhookId, before, limit }));
  if (rows === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(webhookId)}.`);
  return rows.map(deliveryInfo);
}

/**
 * Sends a delivery's event to its endpoint again, now, as a new delivery (same `webhook-id`,
 * so a receiver that has it already can tell). While a delivery of that event to that
 * endpoint is still pending (the delivery itself, or an earlier replay of it), that one is
 * returned and nothing is added. The endpoint must be enabled (`ERR:BADPARAM` when it is
 * disabled); an unknown endpoint or a delivery not of it is `ERR:NOTFOUND`.
 *
 * @example
 * ```ts
 * const again = await replayDelivery(store, { webhookId: hook.id, deliveryId: failed.id });
 * again.state; // 'pending'
 * ```
 */
export async function replayDelivery(
  store: WebhookStore,
  input: { webhookId: string; deliveryId: string },
  options: Pick<WebhookOptions, 'now'> = {},
): Promise<DeliveryInfo> {
  return (await replay(store, input, options)).delivery;
}

/** {@link replayDelivery}, telling whether a delivery was added (the account route answers 201 then, else 200). */
export async function replay(
  store: WebhookStore,
  input: { webhookId: string; deliveryId: string },
  options: Pick<WebhookOptions, 'now'> = {},
): Promise<{ delivery: DeliveryInfo; added: boolean }> {
  const webhookId = idOf('webhookId', input?.webhookId);
  const deliveryId = idOf('deliveryId', input.deliveryId);
  const hook = await storeCall(() => store.getWebhook(webhookId));
  if (hook === null) throw new IpokitError('ERR:NOTFOUND', `No webhook has the id ${JSON.stringify(webhookId)}.`);
  if (hook.disabledAt !== null) throw bad('webhookId', `The webhook was disabled at ${hook.disabledAt} after failing for 5 days: create a new one to send to it again.`);
  const now = (options.now ?? (() => new Date()))().getTime();
  const id = randomId('dlv');
  const row = await storeCall(() => store.replayDelivery({ webhookId, of: deliveryId, id, now }));
  if (row === null) throw new IpokitError('ERR:NOTFOUND', `Webhook ${JSON.stringify(webhookId)} has no delivery ${JSON.stringify(deliveryId)}.`);
  return { delivery: deliveryInfo(row), added: row.id === id };
}

function webhookInfo(h: WebhookRecord): WebhookInfo {
  return { id: h.id, url: h.url, events: h.events as EventType[], description: h.description, createdAt: h.createdAt, disabledAt: h.disabledAt, pausedAt: h.pausedAt };
}

function deliveryInfo(d: DeliveryRecord): DeliveryInfo {
  const iso = (ms: number | null): string | null => (ms === null ? null : toIsoUtc(ms));
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    state: d.state,
    attempts: d.attempts,
    createdAt: toIsoUtc(d.createdAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    lastAttemptAt: iso(d.lastAttemptAt),
    lastStatus: d.lastStatus,
    lastError: d.lastError,
  };
}

function urlOf(value: unknown, allowed: AllowedNetworksInput): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
    throw bad('url', `url must be an absolute http: or https: URL of at most ${MAX_URL_LENGTH} characters.`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad('url', 'url must be an absolute http: or https: URL, e.g. https://example.com/hooks/ipo.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('url', `url must be an http: or https: URL (got ${url.protocol}).`);
  if (url.hash !== '') throw bad('url', 'url must not have a #fragment: it is never sent.');
  // (the message never repeats the URL: it holds a password)
  if (url.username !== '' || url.password !== '') throw bad('url', 'url must not carry credentials (user:password@): they would be stored and listed; authenticate the request by its webhook-signature.');
  const refused = refusedHost(url, allowed);
  if (refused === 'localhost') throw bad('url', `url's host ${url.hostname} is this machine: webhooks are sent to the public internet only (the operator opens local networks with webhookAllowedNetworks).`);
  if (refused !== null) throw bad('url', `url's host ${url.hostname} is not a public internet address: webhooks are sent to the public internet only (the operator opens other networks with webhookAllowedNetworks).`);
  return url.href;
}

function eventsOf(value: unknown): EventType[] {
  if (!Array.isArray(value) || value.length === 0) throw bad('events', `events must be a non-empty list of event types: ${EVENT_TYPES.join(', ')}.`);
  for (const e of value) {
    if (e === TEST_EVENT_TYPE) throw bad('events', `${TEST_EVENT_TYPE} is sent only by a test (sendTestEvent): subscribe to ${EVENT_TYPES.join(', ')}.`);
    if (!EVENT_TYPES.includes(e as EventType)) throw bad('events', `Unknown event type ${JSON.stringify(String(e).slice(0, 50))}: use ${EVENT_TYPES.join(', ')}.`);
  }
  // Each once, in the contract's order.
  return EVENT_TYPES.filter((t) => value.includes(t));
}

function descriptionOf(value: unknown): string {
  if (typeof value !== 'string' || [...value].length > MAX_DESCRIPTION || !value.isWellFormed()) {
    throw bad('description', `description must be a string of at most ${MAX_DESCRIPTION} characters.`);
  }
  return value;
}

function maxOf(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT;
  if (!(max === Infinity || (Number.isSafeInteger(max) && max >= 1))) throw bad('maxWebhooksPerAccount', 'maxWebhooksPerAccount must be a whole number of at least 1, or Infinity.');
  return max;
}

function plansOf(value: readonly Plan[] | undefined): readonly Plan[] {
  if (value === undefined) return DEFAULT_WEBHOOK_PLANS;
  if (!Array.isArray(value) || value.some((p) => p !== 'free' && p !== 'paid' && p !== 'pro')) throw bad('webhookPlans', 'webhookPlans must be a list of plans: free, paid, pro.');
  return value;
}

function idOf(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || [...value].length > 200 || !value.isWellFormed()) throw bad(name, `${name} must be a string of 1 to 200 characters.`);
  return value;
}

function bad(parameter: string, message: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', message, { parameter });
}
