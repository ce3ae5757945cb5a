import { configDefaults, defineConfig } from 'vitest/config';
import { defaultServerConditions } from 'vite';
import { FULL_RUN_ONLY, SPLIT, TEST_GLOBS } from './test/full-run.js';

// Tests run on the TypeScript sources: the `source` export condition points every
// workspace package at its src/, so no build is needed first.
//
// Two projects, split by the one list in test/full-run.ts: `quick` (`npm test`: every file
// but the full run's) and `all` (`npm run test:all`: the full run's files, and the other half
// of the SPLIT files, with IPOKIT_TEST_ALL=1). `npx vitest run FILE` runs the file in
// whichever project has it. test/global-setup.ts finds Redis and PostgreSQL first.
export default defineConfig({
  // (without `module`: @opentelemetry/api, which prom-client requires, points that condition
  // at an ESM build of extensionless imports that Node cannot load)
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  resolve: { conditions: ['source'] },
  test: {
    // Two files at a time whatever the cores (vitest's default is one fewer than the cores:
    // one on a 2-core machine, where most of a file's time is spent waiting on PostgreSQL,
    // Redis, child processes and sockets, not on the CPU).
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'quick', include: TEST_GLOBS, exclude: [...configDefaults.exclude, ...FULL_RUN_ONLY] } },
      { extends: true, test: { name: 'all', include: [...FULL_RUN_ONLY, ...SPLIT], env: { IPOKIT_TEST_ALL: '1' } } },
    ],
  },
});
