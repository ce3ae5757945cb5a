import { testFuzz } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressTarget } from './test-target.js';

// Hostile requests (odd paths and encodings, unicode, long and repeated parameters, huge
// numbers, impossible dates, odd header values) against Express 5 and 4 on the memory
// store: never a 5xx, every answer as the contract says, and Express 5 and 4 give the same
// bytes. One random seed per run of this file (it is in any failure); FUZZ_SEED replays
// one. `scripts/fuzz.ts` sends 100,000+.
testFuzz({
  name: 'Express on memoryStore',
  targets: EXPRESS_VERSIONS.map(expressTarget),
  createStore: () => memoryStore(),
  destroyStore: (s) => s.close?.(),
  // the generator reaches every status of the contract but the 5xx
  statuses: ['200', '400', '401', '403', '404', '405', '414', '429'],
});
