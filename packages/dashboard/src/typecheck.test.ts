import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The root type check leaves the dashboard out (it is a browser app with its own settings), so
// `npm test` checks it here.
describe('the dashboard app', () => {
  it('type-checks with packages/dashboard/tsconfig.json', () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const project = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
    const run = spawnSync(process.execPath, [tsc, '-p', project, '--noEmit'], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 60_000);
});
