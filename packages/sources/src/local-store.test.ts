/**
 * localSourceStore over the memory store passes the SourceStore suite PostgreSQL's store
 * passes (docs/spec.md#sources): one process's collector state behaves as the shared one.
 */
import { memoryStore } from '@ipokit/storage-memory';
import { testSourceStore } from '@ipokit/testing';
import { localSourceStore } from './local-store.js';

testSourceStore('localSourceStore(memoryStore())', () => {
  const memory = memoryStore();
  return { store: Object.assign(Object.create(null) as object, memory, localSourceStore(memory)) as typeof memory & ReturnType<typeof localSourceStore> };
});
