import { defineConfig } from 'vitest/config';
import { defaultServerConditions } from 'vite';

// Tests run on the TypeScript sources: the `source` export condition points every
// workspace package at its src/, so no build is needed first.
export default defineConfig({
  // (without `module`: @opentelemetry/api, which prom-client requires, points that condition
  // at an ESM build of extensionless imports that Node cannot load)
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  resolve: { conditions: ['source'] },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'demo/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
