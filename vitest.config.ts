import { defineConfig } from 'vitest/config';
import { defaultServerConditions } from 'vite';

// Tests run on the TypeScript sources: the `source` export condition points every
// workspace package at its src/, so no build is needed first.
export default defineConfig({
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions] } },
  resolve: { conditions: ['source'] },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'demo/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
