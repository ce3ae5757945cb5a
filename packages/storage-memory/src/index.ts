/**
 * @ipokit/storage-memory: the embedded default store of ipokit, everything in memory.
 *
 * @example
 * ```ts
 * import { memoryStore } from '@ipokit/storage-memory';
 * const store = memoryStore();
 * ```
 */
export { memoryStore, type MemoryStoreOptions } from './memory-store.js';
