import { describe, expect, it } from 'vitest';
import { REPORTED_BUGS, compareFuzzReports, fuzzHttp, type FuzzReport } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
import { EXPRESS_VERSIONS, expressTarget } from '../../express/src/test-target.js';
import { fetchTarget, honoTarget, rewrittenRun, URL_PARSED_BY_RUNTIME } from './test-target.js';

// Hostile requests (odd paths and encodings, unicode, long and repeated parameters, huge
// numbers, impossible dates, odd header values) against the fetch handler as the whole
// server and under a Hono route, on @hono/node-server: never a 5xx, every answer as the
// contract says, and the same bytes as Express 5 gives. One random seed per run of this
// file (it is in any failure); FUZZ_SEED replays one.
//
// Except where the runtime rewrote the request-target before any fetch handler ran (dot
// segments resolved, characters percent-encoded, a `\` refused, absolute-form counted
// without its origin: rewrittenByRuntime in test-target.ts). Those requests are counted as
// `url-parsed-by-the-runtime`, not failed, and left out of the comparison with Express.

const RUNS = 1000;
const SEED = process.env.FUZZ_SEED === undefined ? (Math.random() * 0x7fffffff) | 0 : Number(process.env.FUZZ_SEED);

describe(`fuzzing: fetch handler on memoryStore (seed ${SEED})`, () => {
  const reports = new Map<string, FuzzReport>();
  for (const [target, mountIgnoresCase] of [
    [fetchTarget, true],
    [honoTarget, false], // Hono's router matches /ipos/* case-sensitively
  ] as const) {
    it(`${target.name}: ${RUNS} generated requests break no rule of the contract`, async () => {
      const report = await fuzzHttp({
        target,
        createStore: () => memoryStore(),
        destroyStore: (s) => s.close?.(),
        runs: RUNS,
        seed: SEED,
        mountIgnoresCase,
        knownBugs: [...REPORTED_BUGS, URL_PARSED_BY_RUNTIME],
      });
      reports.set(target.name, report);
      expect(report.runs).toBe(RUNS);
      // the generator reaches every status of the contract but the 5xx
      expect(Object.keys(report.statuses).sort()).toEqual(['200', '400', '401', '403', '404', '405', '414', '429']);
      // about 1 request in 100 is rewritten: more would hide a defect behind the tolerance
      expect(report.knownBugs[URL_PARSED_BY_RUNTIME.id] ?? 0).toBeLessThan(RUNS / 20);
    }, 60_000);
  }

  it('both answer every request the runtime passed on as sent with the status and bytes of Express 5', async () => {
    expect(reports.size).toBe(2);
    const reference = await fuzzHttp({ target: expressTarget(EXPRESS_VERSIONS[0]!), createStore: () => memoryStore(), destroyStore: (s) => s.close?.(), runs: RUNS, seed: SEED, knownBugs: REPORTED_BUGS });
    for (const [name, report] of reports) {
      const differences = compareFuzzReports(reference, report).filter(({ index }) => !rewrittenRun(SEED, index));
      expect(differences, name).toEqual([]);
    }
  }, 60_000);
});
