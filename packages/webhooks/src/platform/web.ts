/**
 * The `#platform` import beside Node (Bun, Deno, Workers, browsers): the worker's default
 * transport is `fetch`, which resolves names itself, so only address literals and
 * `localhost` are checked (by deliverWebhook) there.
 */
import type { AllowedNetworks } from '@ipokit/core/backend';
import { fetchTransport, type WebhookTransport } from '../delivery.js';

export { fetchTransport };

/**
 * The default webhook transport on this platform: `fetchTransport()`; `close()` does nothing.
 *
 * @example
 * ```ts
 * const transport = platformTransport({ allowedNetworks: parseAllowedNetworks([]) });
 * ```
 */
export function platformTransport(_options: { allowedNetworks: AllowedNetworks }): WebhookTransport & { close(): void } {
  return Object.assign(fetchTransport(), { close(): void {} });
}
