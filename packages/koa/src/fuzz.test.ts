import { testFuzz } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { koaTargets } from './test-target.js';

// Hostile requests (odd paths and encodings, unicode, long and repeated parameters, huge
// numbers, impossible dates, odd header values) against Koa 3 and 2 (router `prefix`) on
// the memory store: never a 5xx, every answer as the contract says, and Koa 3 and 2 give
// the same bytes. One random seed per run of this file (it is in any failure); FUZZ_SEED
// replays one. `scripts/fuzz.ts` sends 100,000+.
testFuzz({
  name: 'Koa on memoryStore',
  targets: koaTargets().filter((t) => t.name.endsWith(', prefix')),
  createStore: () => memoryStore(),
  destroyStore: (s) => s.close?.(),
  // the generator reaches every status of the contract but the 5xx
  statuses: ['200', '400', '401', '403', '404', '405', '414', '429'],
});
