/**
 * The fuzzer as a vitest suite: hostile requests against each target, every answer checked
 * against the contract, and every target's answers compared byte for byte with the first
 * one's (or with a reference run, e.g. the memory store's). Kept apart from fuzz.ts, which
 * scripts/fuzz.ts loads without vitest.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@ipokit/core';
import { REPORTED_BUGS, compareFuzzReports, fuzzHttp, type FuzzReport } from './fuzz.js';
import type { HttpTarget } from './http-suite.js';

/** Options of {@link testFuzz}. */
export interface TestFuzzOptions {
  /** Shown in the describe block, e.g. `'Express on memoryStore'`. */
  name: string;
  /** Every target gets the same generated requests. */
  targets: readonly HttpTarget[];
  /** Returns an EMPTY store; the fixture is imported into it. */
  createStore: () => Store | Promise<Store>;
  destroyStore?: (store: Store) => void | Promise<void>;
  /** Generated requests per target (default 1,000). */
  runs?: number;
  /** fast-check seed: `FUZZ_SEED` when set, else random (it is in the describe name). */
  seed?: number;
  /** When given, each target must answer with exactly these statuses (e.g. all but 5xx). */
  statuses?: readonly string[];
  /** A run every target's answers must equal; default: the first target's. */
  reference?: (seed: number, runs: number) => Promise<FuzzReport>;
}

/**
 * Registers the fuzzing tests of some targets on one kind of store.
 *
 * @example
 * ```ts
 * testFuzz({ name: 'Express on memoryStore', targets: [expressTarget(EXPRESS_VERSIONS[0]!)], createStore: () => memoryStore() });
 * ```
 */
export function testFuzz(options: TestFuzzOptions): void {
  const runs = options.runs ?? 1000;
  const seed = options.seed ?? (process.env.FUZZ_SEED === undefined ? (Math.random() * 0x7fffffff) | 0 : Number(process.env.FUZZ_SEED));
  describe(`fuzzing: ${options.name} (seed ${seed})`, () => {
    const reports: FuzzReport[] = [];
    for (const target of options.targets) {
      it(`${target.name}: ${runs} generated requests break no rule of the contract`, async () => {
        const report = await fuzzHttp({
          target,
          createStore: options.createStore,
          destroyStore: options.destroyStore,
          runs,
          seed,
          // defects found and reported: counted, not failed, until their fixes land
          knownBugs: REPORTED_BUGS,
        });
        reports.push(report);
        expect(report.runs).toBe(runs);
        if (options.statuses !== undefined) expect(Object.keys(report.statuses).sort()).toEqual([...options.statuses].sort());
        else expect(report.statuses['200']).toBeGreaterThan(0);
      }, 60_000);
    }
    const against = options.reference === undefined ? 'each other' : 'the reference run';
    it(`the targets answer the same requests with the same status and bytes as ${against}`, async () => {
      expect(reports).toHaveLength(options.targets.length);
      const reference = options.reference === undefined ? reports[0]! : await options.reference(seed, runs);
      for (const report of reports) expect(compareFuzzReports(reference, report)).toEqual([]);
    }, 60_000);
  });
}
