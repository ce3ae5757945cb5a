/**
 * One delivery attempt of a webhook message (docs/spec.md#webhooks): a signed `POST` per Standard
 * Webhooks, answered within the timeout with a 2xx or counted as failed; redirects are not
 * followed, and only `https:` is sent to unless insecure URLs are allowed. It sends through a
 * transport: `fetchTransport()` by default, so it runs wherever the core does
 * (`nodeWebhookTransport()` of `@ipokit/core/node` is faster on Node). The worker that
 * schedules attempts builds on it.
 */
import { webhookSignature } from './events.js';

/** How long an endpoint has to answer: 15 s. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** What one attempt came to. `status` is the endpoint's HTTP status, when it answered. */
export type DeliveryOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** What an attempt needs: the endpoint, the message, and how to send it. */
export interface DeliveryAttempt {
  url: string;
  secret: string;
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
 * answer's status (its body, not needed, is read and dropped or the connection closed);
 * rejects when no answer came, the error's `code` (or its `cause`'s) naming why where there
 * is one (`ECONNREFUSED`). It stops when `signal` aborts, or, never reading `signal`, after
 * `timeoutMs`, rejecting then with an error named `TimeoutError`.
 */
export type WebhookTransport = (request: WebhookRequest) => Promise<{ status: number }>;

/**
 * The transport on `fetch` (every runtime): `redirect: 'manual'`, the attempt's signal.
 *
 * @example
 * ```ts
 * const worker = startWebhookWorker(store, { transport: fetchTransport(myFetch) });
 * ```
 */
export function fetchTransport(fetchImpl?: typeof fetch): WebhookTransport {
  return async (request) => {
    const res = await (fetchImpl ?? fetch)(request.url.href, { method: 'POST', headers: request.headers, body: request.body, redirect: 'manual', signal: request.signal });
    // The answer's body is not needed; reading it (within the timeout) frees the connection.
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status };
  };
}

const defaultTransport = fetchTransport();

/** Endpoint URLs as parsed, by their text: a worker sends to few, over and over. */
const parsedUrls = new Map<string, URL | null>();

function parsedUrl(text: string): URL | null {
  let url = parsedUrls.get(text);
  if (url === undefined) {
    if (parsedUrls.size >= 1_024) parsedUrls.clear();
    try {
      url = new URL(text);
    } catch {
      url = null;
    }
    parsedUrls.set(text, url);
  }
  return url;
}

/**
 * Makes one attempt: resolves to its outcome, never rejects. A 2xx within the timeout is
 * delivered; any other status, a redirect (not followed), a timeout, a refused connection or
 * an `http:` URL without `allowInsecure` is a failure, with a short reason.
 *
 * @example
 * ```ts
 * const outcome = await deliverWebhook({ url, secret, id: 'msg_1', timestamp: Math.floor(now / 1000), body }); // now: the injected clock's reading
 * if (!outcome.ok) console.log(outcome.status, outcome.error); // e.g. 500 'answered 500'
 * ```
 */
export async function deliverWebhook(attempt: DeliveryAttempt): Promise<DeliveryOutcome> {
  const url = parsedUrl(attempt.url);
  if (url === null) return { ok: false, status: null, error: 'not a URL' };
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && attempt.allowInsecure === true)) {
    return { ok: false, status: null, error: `${url.protocol} is not sent to (https: only; allowInsecureWebhooks allows http:)` };
  }
  const signature = webhookSignature({ id: attempt.id, timestamp: attempt.timestamp, body: attempt.body, secret: attempt.secret });
  const timeoutMs = attempt.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  // The signal and its timer are made only for a transport that reads it (fetch's does; the
  // Node transport keeps the time itself: an AbortSignal and a timer per attempt were a
  // tenth of a worker's time).
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = performance.now();
  try {
    const { status } = await (attempt.transport ?? defaultTransport)({
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
    if (status >= 200 && status < 300) return { ok: true, status };
    if (status >= 300 && status < 400) return { ok: false, status, error: `answered ${status}: redirects are not followed` };
    return { ok: false, status, error: `answered ${status}` };
  } catch (err) {
    if ((controller as AbortController | null)?.signal.aborted === true || (err as { name?: unknown })?.name === 'TimeoutError') {
      return { ok: false, status: null, error: `no answer within ${timeoutMs} ms` };
    }
    const code = (err as { code?: unknown })?.code ?? (err as { cause?: { code?: unknown } })?.cause?.code;
    return { ok: false, status: null, error: typeof code === 'string' ? `the request failed (${code})` : 'the request failed' };
  } finally {
    clearTimeout(timer);
  }
}
