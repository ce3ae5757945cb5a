/**
 * The account API as the dashboard calls it. The page lives at `{mount}/-/dashboard/`, so the
 * API root is two levels up (`../../`): relative URLs keep the dashboard working under any
 * mount, and the host app's login cookie goes along as for any same-origin request.
 */

import type {
  AccountWindow,
  ApiKeyInfo,
  DeliveryDetail,
  DeliveryEventType,
  DeliveryInfo,
  EventType,
  GmpField,
  GmpInterval,
  GmpSeries,
  GmpSnapshot,
  Ipo,
  IpoStatus,
  ListingPrice,
  ListResponse,
  Plan,
  RateWindowName,
  SubscriptionCategory,
  SubscriptionPoint,
  SubscriptionSeries,
  SubscriptionSnapshot,
  SubscriptionTimes,
  UsageRow,
  WebhookInfo,
  WebhookLimits,
} from '@ipokit/core';
import type { DeliveryState, UsageRoute } from '@ipokit/core/backend';

// The wire types are the core's own, imported as types only: the bundle gains nothing.
export type {
  DeliveryEventType,
  DeliveryState,
  EventType,
  GmpField,
  GmpInterval,
  GmpSeries,
  GmpSnapshot,
  Ipo,
  IpoStatus,
  ListingPrice,
  Plan,
  SubscriptionCategory,
  SubscriptionPoint,
  SubscriptionSeries,
  SubscriptionSnapshot,
  SubscriptionTimes,
  UsageRoute,
  UsageRow,
};
export type WindowName = RateWindowName;
/** A rate window of the account, as `GET /` lists them. */
export type RateWindow = AccountWindow;
/** An API key as listed: never its text. */
export type Key = ApiKeyInfo;
/** A webhook endpoint as listed: never its secret. */
export type Webhook = WebhookInfo;
/** A delivery of an endpoint, as listed. */
export type Delivery = DeliveryInfo;
/** One delivery with its payload and the receiver's last answer (`GET /webhooks/{id}/deliveries/{deliveryId}`). */
export type DeliveryWithPayload = DeliveryDetail;
/** What the plan allows, answered with the list (`GET /webhooks`): shown before the form. */
export type WebhookPlanLimits = WebhookLimits;

/** `GET /webhooks`. */
export interface WebhookList {
  webhooks: Webhook[];
  limits: WebhookPlanLimits;
}

/** `POST /webhooks/{id}/rotate-secret`: the new secret, this once, and when the old one stops signing. */
export interface RotatedSecret {
  secret: string;
  previousSecretExpiresAt: string;
}

export interface Account {
  id: string;
  name: string;
  plan: Plan;
  gmpAddon: boolean;
}

export interface Overview {
  account: Account;
  windows: RateWindow[];
  keys: Key[];
}

/** A key as created: the only time its whole text (`key`) is seen. */
export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  label: string;
  createdAt: string;
  expiresAt: string | null;
}

export type IpoList = ListResponse;

// Values the pages offer in their menus (a type import brings no values): pinned to the
// core's lists by src/api-types.test.ts.
export const GMP_INTERVALS = ['5m', '10m', '15m', '30m', 'hourly', 'daily', 'weekly'] as const satisfies readonly GmpInterval[];
export const GMP_FIELDS = ['mean', 'median', 'min', 'max', 'mode'] as const satisfies readonly GmpField[];

/** The investor categories, in the contract's order (the order of `times`). */
export const SUBSCRIPTION_CATEGORIES = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const satisfies readonly SubscriptionCategory[];

/** Webhook event types, in the contract's order. */
export const EVENT_TYPES = ['ipo.created', 'ipo.updated', 'ipo.deleted', 'ipo.status_changed', 'gmp.snapshot', 'subscription.snapshot'] as const satisfies readonly EventType[];

/** An endpoint as created: the only time its signing secret (`whsec_...`) is seen. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

/** An answer other than 2xx, with the error body of the contract (section 7) when there was one. */
export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** e.g. `ERR:PLAN`; `ERR:NETWORK` when the server could not be reached. */
    readonly code: string,
    message: string,
    /** Seconds, from `Retry-After` (429). */
    readonly retryAfter: number | null = null,
    /** The parameter a 400 names. */
    readonly parameter: string | null = null,
  ) {
    super(message);
  }
}

/** Any failure as an {@link ApiError}, for showing. */
export function toApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, 'ERR:CLIENT', err instanceof Error ? err.message : String(err));
}

// The app swaps every page for "You are not signed in" on the first 401, wherever it came from.
let signedOut: () => void = () => undefined;

export function onSignedOut(listener: () => void): void {
  signedOut = listener;
}

const ROOT = new URL('../../', location.href);

export interface CallOptions {
  method?: 'GET' | 'POST';
  /** Sent as JSON; a POST always sends a body, so that it carries `Content-Type: application/json`. */
  body?: object;
  signal?: AbortSignal;
}

/**
 * Calls the account API at `path` (relative to the mount: `''`, `'keys'`, `'ipos?status=open'`)
 * and resolves to the JSON answer (undefined for a 204), or rejects with an {@link ApiError}.
 */
export async function call<T>(path: string, options: CallOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const init: RequestInit = { method, headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' };
  if (method === 'POST') {
    init.headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    init.body = JSON.stringify(options.body ?? {});
  }
  if (options.signal !== undefined) init.signal = options.signal;
  let res: Response;
  try {
    res = await fetch(new URL(path, ROOT), init);
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'ERR:NETWORK', 'The server could not be reached: check the connection, then retry.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const body = parse(text);
  if (res.ok && body !== undefined) return body as T;
  const error = toError(res, body);
  if (error.status === 401) signedOut();
  throw error;
}

export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function toError(res: Response, body: unknown): ApiError {
  const e = isRecord(body) ? body : {};
  const meta = isRecord(e['meta']) ? e['meta'] : {};
  const retry = Number(res.headers.get('Retry-After') ?? meta['expiresIn']);
  const detail = typeof e['detail'] === 'string' ? e['detail'] : `The server answered ${res.status} ${res.statusText}.`;
  return new ApiError(
    res.status,
    typeof e['code'] === 'string' ? e['code'] : `HTTP ${res.status}`,
    detail,
    Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : null,
    typeof meta['parameter'] === 'string' ? meta['parameter'] : null,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
