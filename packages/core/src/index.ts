/**
 * @ipokit/core: the pure engine behind the ipokit routers and stores.
 */
export * from './types.js';
export * from './ascii.js';
export * from './errors.js';
export * from './numbers.js';
export * from './dates.js';
export * from './status.js';
export * from './sliding-window.js';
export * from './keys.js';
export * from './aggregate.js';
export * from './request.js';
export * from './options.js';
export * from './params.js';
export * from './gmp.js';
export * from './serialize.js';
export * from './rate-limit.js';
export * from './key-cache.js';
export * from './handler.js';
export * from './openapi.js';
export * from './admin.js';
export * from './dataset.js';
