import { describe, expect, it } from 'vitest';
import { REPORTED_BUGS, compareFuzzReports, fuzzHttp, type FuzzReport } from '@ipokit/core/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressTarget } from './test-target.js';

// Hostile requests (odd paths and encodings, unicode, long and repeated parameters, huge
// numbers, impossible dates, odd header values) against Express 5 and 4 on the memory
// store: never a 5xx, every answer as the contract says. One random seed per run of this
// file (it is in any failure); FUZZ_SEED replays one. `scripts/fuzz.ts` sends 100,000+.
const RUNS = 1000;
const SEED = process.env.FUZZ_SEED === undefined ? (Math.random() * 0x7fffffff) | 0 : Number(process.env.FUZZ_SEED);

describe(`fuzzing: Express on memoryStore (seed ${SEED})`, () => {
  const reports: FuzzReport[] = [];
  for (const framework of EXPRESS_VERSIONS) {
    it(`${framework.name}: ${RUNS} generated requests break no rule of the contract`, async () => {
      const report = await fuzzHttp({
        target: expressTarget(framework),
        createStore: () => memoryStore(),
        destroyStore: (s) => s.close?.(),
        runs: RUNS,
        seed: SEED,
        // defects found and reported: counted, not failed, until their fixes land
        knownBugs: REPORTED_BUGS,
      });
      reports.push(report);
      expect(report.runs).toBe(RUNS);
      // the generator reaches every status of the contract but the 5xx
      expect(Object.keys(report.statuses).sort()).toEqual(['200', '400', '401', '403', '404', '405', '414', '429']);
    }, 60_000);
  }
  it('Express 5 and Express 4 answer the same requests with the same status and bytes', () => {
    expect(reports).toHaveLength(2);
    expect(compareFuzzReports(reports[0]!, reports[1]!)).toEqual([]);
  });
});
