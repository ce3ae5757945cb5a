/**
 * @ipokit/core: the pure engine behind the ipokit routers and stores.
 */
export * from './types.js';
export * from './errors.js';
export * from './numbers.js';
export * from './dates.js';
export * from './status.js';
export * from './sliding-window.js';
export * from './keys.js';
export * from './aggregate.js';
