/**
 * The operator's functions for webhook endpoints (docs/spec.md#not-yet-built; a Webhooks section
 * of its own once the delivery lands): an account's endpoints, each with the events it wants and the secret that
 * signs them. Every failure is an `IpokitError`.
 */
import { getAccount } from './admin.js';
import { IpokitError, isIpokitError } from './errors.js';
import { EVENT_TYPES, generateWebhookSecret, type EventType } from './events.js';
import { randomId } from './keys.js';
import type { AccountStore, Plan, WebhookRecord, WebhookStore } from './types.js';

/** The plans whose accounts may have webhook endpoints unless `webhookPlans` says otherwise. */
export const DEFAULT_WEBHOOK_PLANS: readonly Plan[] = Object.freeze(['pro']);

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
}

/** An endpoint as listed: never its secret. */
export interface WebhookInfo {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  createdAt: string;
  disabledAt: string | null;
}

/**
 * Creates a webhook endpoint for an account: events of the types in `events` are sent to
 * `url`, signed with the secret this resolves to (shown only here). The account's plan must
 * be one of `webhookPlans` (default pro), else `ERR:PLAN`; `url` must be an absolute `http:`
 * or `https:` URL and `events` a non-empty list of event types, else `ERR:BADPARAM`.
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
  const url = urlOf(input.url);
  const events = eventsOf(input.events);
  const description = input.description === undefined ? null : descriptionOf(input.description);
  const plans = plansOf(options.webhookPlans);
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
  };
  const result = await storeCall(() => store.insertWebhook(webhook));
  if (result === 'not-found') throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(account.id)}.`);
  return { id: webhook.id, secret: webhook.secret };
}

/**
 * Lists an account's webhook endpoints, ordered by creation: never their secrets.
 *
 * @example
 * ```ts
 * await listWebhooks(store, { accountId: acct.id }); // [{ id, url, events, description, createdAt, disabledAt }]
 * ```
 */
export async function listWebhooks(store: WebhookStore, input: { accountId: string }): Promise<WebhookInfo[]> {
  const accountId = idOf('accountId', input?.accountId);
  const hooks = await storeCall(() => store.listWebhooks(accountId));
  if (hooks === null) throw new IpokitError('ERR:NOTFOUND', `No account has the id ${JSON.stringify(accountId)}.`);
  return hooks.map((h) => ({ id: h.id, url: h.url, events: h.events as EventType[], description: h.description, createdAt: h.createdAt, disabledAt: h.disabledAt }));
}

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

function urlOf(value: unknown): string {
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
  return url.href;
}

function eventsOf(value: unknown): EventType[] {
  if (!Array.isArray(value) || value.length === 0) throw bad('events', `events must be a non-empty list of event types: ${EVENT_TYPES.join(', ')}.`);
  for (const e of value) {
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

function plansOf(value: readonly Plan[] | undefined): readonly Plan[] {
  if (value === undefined) return DEFAULT_WEBHOOK_PLANS;
  if (!Array.isArray(value) || value.some((p) => p !== 'free' && p !== 'paid' && p !== 'pro')) throw bad('webhookPlans', 'webhookPlans must be a list of plans: free, paid, pro.');
  return value;
}

function idOf(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || [...value].length > 200 || !value.isWellFormed()) throw bad(name, `${name} must be a string of 1 to 200 characters.`);
  return value;
}

async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isIpokitError(err)) throw err;
    throw new IpokitError('ERR:UNAVAILABLE', 'The store failed.', { cause: err });
  }
}

function bad(parameter: string, message: string): IpokitError {
  return new IpokitError('ERR:BADPARAM', message, { parameter });
}
