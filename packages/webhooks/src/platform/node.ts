/**
 * The `#platform` import on Node (package.json `imports`): the worker's default transport is
 * undici's, which resolves names itself and checks the addresses it connects to.
 */
import type { AllowedNetworks } from '@ipokit/core/backend';
import type { WebhookTransport } from '../delivery.js';
import { nodeWebhookTransport } from '../node.js';

export { nodeWebhookTransport };

/**
 * The default webhook transport on this platform: `nodeWebhookTransport`.
 *
 * @example
 * ```ts
 * const transport = platformTransport({ allowedNetworks: parseAllowedNetworks(['10.1.0.0/16']) });
 * transport.close();
 * ```
 */
export function platformTransport(options: { allowedNetworks: AllowedNetworks }): WebhookTransport & { close(): void } {
  return nodeWebhookTransport({ allowedNetworks: options.allowedNetworks });
}
