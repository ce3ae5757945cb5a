/**
 * One delivery attempt of a webhook message (docs/spec.md#webhooks): a signed `POST` per Standard
 * Webhooks, answered within the timeout with a 2xx or counted as failed; redirects are not
 * followed, and only `https:` is sent to unless insecure URLs are allowed. It sends through a
 * transport: `fetchTransport()` by default, so it runs wherever the core does
 * (`nodeWebhookTransport()` of `@ipokit/webhooks/node` is faster on Node). The worker that
 * schedules attempts builds on it.
 */
import { LRUCache } from 'lru-cache';
import { type AllowedNetworks, type AllowedNetworksInput, parseAllowedNetworks, refusedHost, webhookSignature } from '@ipokit/core/backend';

/** How long an endpoint has to answer: 15 s. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** The most of a receiver's answer body a transport reads (then it hangs up): 64 KB. */
export const MAX_ANSWER_READ_BYTES = 64 * 1_024;

/** The most of a receiver's answer body a transport keeps (`body` of its result): 1 KB. */
export const MAX_ANSWER_KEPT_BYTES = 1_024;

/**
 * The reasons an attempt without an HTTP status fails with: all an account holder sees of
 * it. Never the socket's own error, which would tell open ports from closed ones.
 */
export const WEBHOOK_ERRORS = Object.freeze({
  /** No status within the attempt's time. */
  timeout: 'timeout',
  /** No answer: the name did not resolve, the connection was refused, reset or broken. */
  connectionFailed: 'connection failed',
  /** The host is, or resolved only to, an address outside the public internet and the allowed networks. */
  addressNotAllowed: 'address not allowed',
} as const);

/** The `code` of the error a transport rejects with when the address policy refuses the connection. */
export const ADDRESS_NOT_ALLOWED_CODE = 'IPOKIT_ADDRESS_NOT_ALLOWED';

/**
 * The error a transport rejects with when the address it would connect to is refused
 * (`code` {@link ADDRESS_NOT_ALLOWED_CODE}); {@link deliverWebhook} shows it as `address not allowed`.
 *
 * @example
 * ```ts
 * if (!isAddressAllowed(address, allowed)) throw addressNotAllowedError(address);
 * ```
 */
export function addressNotAllowedError(address?: string): Error & { code: string } {
  const err = new Error(address === undefined ? 'address not allowed' : `address not allowed: ${address}`) as Error & { code: string };
  err.name = 'AddressNotAllowedError';
  err.code = ADDRESS_NOT_ALLOWED_CODE;
  return err;
}

/**
 * What one attempt came to. `status` is the endpoint's HTTP status, when it answered, and
 * `body` the first {@link MAX_ANSWER_KEPT_BYTES} of its answer (NUL characters as U+FFFD, so
 * that every store keeps the same text), null when no answer came.
 */
export type DeliveryOutcome = { ok: true; status: number; body: string | null } | { ok: false; status: number | null; error: string; body: string | null };

/** What an attempt needs: the endpoint, the message, and how to send it. */
export interface DeliveryAttempt {
  url: string;
  secret: string;
  /**
   * A second secret that also signs (the one before a rotation, while its overlap lasts):
   * `webhook-signature` then carries both, the new first (`v1,<new> v1,<old>`).
   */
  previousSecret?: string | null;
  /** The message id (`webhook-id`): the same on every retry of this message. */
  id: string;
  /** Unix seconds of this attempt (`webhook-timestamp`). */
  timestamp: number;
  /** The JSON text sent: `{ "type", "timestamp", "data" }`. */
  body: string;
  /** Default `WEBHOOK_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Send to `http:` URLs too (tests, local receivers). Default false: `https:` only. */
  allowInsecure?: boolean;
  /** How the request is sent. Default `fetchTransport()`. */
  transport?: WebhookTransport;
  /**
   * Networks outside the public internet that may be sent to (CIDRs, or their parsed form):
   * an address literal or `localhost` host outside them and the public internet is refused
   * here, before the transport. Names are the transport's to check (the Node transport does,
   * on the address it connects to). Default none.
   */
  allowedNetworks?: AllowedNetworksInput;
}

/** One signed webhook request, as a transport sends it. */
export interface WebhookRequest {
  /** The endpoint's URL, parsed once and shared by its attempts: read it, never change it. */
  url: URL;
  /** `content-type`, `webhook-id`, `webhook-timestamp`, `webhook-signature`, `user-agent`. */
  headers: Record<string, string>;
  body: string;
  /** The attempt's time, from the call: no status by then is a timeout. */
  timeoutMs: number;
  /**
   * Aborted when the attempt's time is up: the transport stops and rejects. Made when first
   * read (with its timer): a transport that keeps the time itself need not read it.
   */
  readonly signal: AbortSignal;
}

/**
 * Sends one webhook request as a `POST`, never following a redirect: resolves to the
 * answer's status once the connection is released (the body read to its end) or closed
 * (the body read past {@link MAX_ANSWER_READ_BYTES}, or the time up after the status came),
 * so an attempt holds its place until then; `body` is at most the first
 * {@link MAX_ANSWER_KEPT_BYTES} of the answer. Rejects when no answer came: with an error
 * named `TimeoutError` when the time ran out, one with `code` {@link ADDRESS_NOT_ALLOWED_CODE}
 * when the address policy refused the connection, any other error else. It stops when
 * `signal` aborts, or, never reading `signal`, after `timeoutMs`.
 */
export type WebhookTransport = (request: WebhookRequest) => Promise<{ status: number; body?: string }>;

/**
 * The transport on `fetch` (every runtime): `redirect: 'manual'`, the attempt's signal; the
 * answer's body read to its end or to 64 KB (then cancelled, which closes the connection),
 * its first 1 KB kept. It resolves names as `fetch` does, so it checks no resolved address:
 * where a name may resolve inside the operator's network, use `nodeWebhookTransport` (the
 * worker's default on Node), which does.
 *
 * @example
 * ```ts
 * const worker = startWebhookWorker(store, { transport: fetchTransport(myFetch) });
 * ```
 */
export function fetchTransport(fetchImpl?: typeof fetch): WebhookTransport {
  return async (request) => {
    const res = await (fetchImpl ?? fetch)(request.url.href, { method: 'POST', headers: request.headers, body: request.body, redirect: 'manual', signal: request.signal });
    // Read (within the timeout) so the connection is freed, but never more than 64 KB.
    const body = await readBounded(res.body).catch(() => '');
    return { status: res.status, body };
  };
}

async function readBounded(stream: ReadableStream<Uint8Array> | null): Promise<string> {
  if (stream === null) return '';
  const reader = stream.getReader();
  const kept = new Uint8Array(MAX_ANSWER_KEPT_BYTES);
  let keptBytes = 0;
  let read = 0;
  try {
    while (read <= MAX_ANSWER_READ_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      if (keptBytes < kept.length) {
        const part = value.subarray(0, kept.length - keptBytes);
        kept.set(part, keptBytes);
        keptBytes += part.length;
      }
      read += value.length;
    }
  } finally {
    // (past 64 KB: cancelling closes the connection rather than read on)
    if (read > MAX_ANSWER_READ_BYTES) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  return new TextDecoder().decode(kept.subarray(0, keptBytes));
}

const defaultTransport = fetchTransport();

/** Endpoint URLs as parsed (false: not a URL), by their text: a worker sends to few, over and over. */
const parsedUrls = new LRUCache<string, URL | false>({ max: 1_024 });

function parsedUrl(text: string): URL | null {
  let url = parsedUrls.get(text);
  if (url === undefined) {
    try {
      url = new URL(text);
    } catch {
      url = false;
    }
    parsedUrls.set(text, url);
  }
  return url === false ? null : url;
}

/** Whether a URL's host is refused before any connection, by URL object and policy (a worker sends to few URLs, over and over). */
const refusals = new WeakMap<URL, WeakMap<AllowedNetworks, boolean>>();

function hostRefused(url: URL, allowed: AllowedNetworks): boolean {
  let byPolicy = refusals.get(url);
  if (byPolicy === undefined) refusals.set(url, (byPolicy = new WeakMap()));
  let refused = byPolicy.get(allowed);
  if (refused === undefined) byPolicy.set(allowed, (refused = refusedHost(url, allowed) !== null));
  return refused;
}

/**
 * Makes one attempt: resolves to its outcome, never rejects. A 2xx within the timeout is
 * delivered; any other status, a redirect (not followed), or no status is a failure, with a
 * short reason: `answered N`, or one of {@link WEBHOOK_ERRORS} (`timeout`, `connection
 * failed`, `address not allowed`: a host that is an address literal or `localhost` outside
 * the public internet and `allowedNetworks` is never connected to, on any transport), or
 * an `http:` URL without `allowInsecure`.
 *
 * @example
 * ```ts
 * const outcome = await deliverWebhook({ url, secret, id: 'msg_1', timestamp: Math.floor(now / 1000), body }); // now: the injected clock's reading
 * if (!outcome.ok) console.log(outcome.status, outcome.error); // e.g. 500 'answered 500', or null 'timeout'
 * ```
 */
export async function deliverWebhook(attempt: DeliveryAttempt): Promise<DeliveryOutcome> {
  const url = parsedUrl(attempt.url);
  if (url === null) return { ok: false, status: null, error: 'not a URL', body: null };
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && attempt.allowInsecure === true)) {
    return { ok: false, status: null, error: `${url.protocol} is not sent to (https: only; allowInsecureWebhooks allows http:)`, body: null };
  }
  let allowed: AllowedNetworks;
  try {
    allowed = parseAllowedNetworks(attempt.allowedNetworks);
  } catch {
    return { ok: false, status: null, error: WEBHOOK_ERRORS.addressNotAllowed, body: null };
  }
  if (hostRefused(url, allowed)) return { ok: false, status: null, error: WEBHOOK_ERRORS.addressNotAllowed, body: null };
  let signature = webhookSignature({ id: attempt.id, timestamp: attempt.timestamp, body: attempt.body, secret: attempt.secret });
  // (Standard Webhooks: several signatures, space-separated; a receiver accepts any one)
  if (typeof attempt.previousSecret === 'string') signature += ` ${webhookSignature({ id: attempt.id, timestamp: attempt.timestamp, body: attempt.body, secret: attempt.previousSecret })}`;
  const timeoutMs = attempt.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // The signal and its timer are made only for a transport that reads it (fetch's does; the
  // Node transport keeps the time itself: an AbortSignal and a timer per attempt were a
  // tenth of a worker's time).
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = performance.now();
  try {
    const { status, body: answer } = await (attempt.transport ?? defaultTransport)({
      url,
      headers: {
        'content-type': 'application/json',
        'webhook-id': attempt.id,
        'webhook-timestamp': String(attempt.timestamp),
        'webhook-signature': signature,
        'user-agent': 'ipokit-webhooks',
      },
      body: attempt.body,
      timeoutMs,
      get signal(): AbortSignal {
        if (controller === null) {
          const made = new AbortController();
          controller = made;
          timer = setTimeout(() => made.abort(), Math.max(0, timeoutMs - (performance.now() - started)));
        }
        return controller.signal;
      },
    });
    const body = keptAnswer(answer);
    if (status >= 200 && status < 300) return { ok: true, status, body };
    if (status >= 300 && status < 400) return { ok: false, status, error: `answered ${status}: redirects are not followed`, body };
    return { ok: false, status, error: `answered ${status}`, body };
  } catch (err) {
    const code = (err as { code?: unknown })?.code ?? (err as { cause?: { code?: unknown } })?.cause?.code;
    if (code === ADDRESS_NOT_ALLOWED_CODE) return { ok: false, status: null, error: WEBHOOK_ERRORS.addressNotAllowed, body: null };
    if ((controller as AbortController | null)?.signal.aborted === true || (err as { name?: unknown })?.name === 'TimeoutError') {
      return { ok: false, status: null, error: WEBHOOK_ERRORS.timeout, body: null };
    }
    // (never the socket's error: ECONNREFUSED against ECONNRESET tells closed ports from open ones)
    return { ok: false, status: null, error: WEBHOOK_ERRORS.connectionFailed, body: null };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The answer body as kept: at most {@link MAX_ANSWER_KEPT_BYTES} of UTF-8 (a transport of
 * someone else's may give more), a character cut at the end dropped, and NUL as U+FFFD
 * (PostgreSQL refuses NUL in text: every store keeps the same string).
 */
function keptAnswer(body: string | undefined): string | null {
  // (a transport that reads no body gives none: nothing is known of it)
  if (body === undefined) return null;
  const text = body.toWellFormed().replaceAll('\u0000', '\uFFFD');
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= MAX_ANSWER_KEPT_BYTES) return text;
  // (cut at a character's first byte: never half a character)
  let end = MAX_ANSWER_KEPT_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}
