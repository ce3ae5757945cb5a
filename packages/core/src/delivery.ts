/**
 * One delivery attempt of a webhook message (docs/spec.md#webhooks): a signed `POST` per Standard
 * Webhooks, answered within the timeout with a 2xx or counted as failed; redirects are not
 * followed, and only `https:` is sent to unless insecure URLs are allowed. On `fetch`, so it
 * runs wherever the core does. The worker that schedules attempts builds on it.
 */
import { signWebhook } from './events.js';

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
  /** Default the global `fetch`. */
  fetch?: typeof fetch;
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
  let url: URL;
  try {
    url = new URL(attempt.url);
  } catch {
    return { ok: false, status: null, error: 'not a URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && attempt.allowInsecure === true)) {
    return { ok: false, status: null, error: `${url.protocol} is not sent to (https: only; allowInsecureWebhooks allows http:)` };
  }
  const signature = await signWebhook({ id: attempt.id, timestamp: attempt.timestamp, body: attempt.body, secret: attempt.secret });
  const controller = new AbortController();
  const timeoutMs = attempt.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await (attempt.fetch ?? fetch)(url.href, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': attempt.id,
        'webhook-timestamp': String(attempt.timestamp),
        'webhook-signature': signature,
        'user-agent': 'ipokit-webhooks',
      },
      body: attempt.body,
      redirect: 'manual',
      signal: controller.signal,
    });
    // The answer's body is not needed; reading it (within the timeout) frees the connection.
    await res.arrayBuffer().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    if (res.status >= 300 && res.status < 400) return { ok: false, status: res.status, error: `answered ${res.status}: redirects are not followed` };
    return { ok: false, status: res.status, error: `answered ${res.status}` };
  } catch (err) {
    if (controller.signal.aborted) return { ok: false, status: null, error: `no answer within ${timeoutMs} ms` };
    const cause = (err as { cause?: { code?: string } })?.cause?.code;
    return { ok: false, status: null, error: cause === undefined ? 'the request failed' : `the request failed (${cause})` };
  } finally {
    clearTimeout(timer);
  }
}
