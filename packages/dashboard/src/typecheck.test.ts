import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The root type check leaves the dashboard out (it is a browser app with its own settings), so
// `npm test` checks it here: the app with tsconfig.json, its browser tests (Node, and the
// packages' sources) with tsconfig.test.json.
describe('the dashboard', () => {
  it.each(['tsconfig.json', 'tsconfig.test.json'])('type-checks with packages/dashboard/%s', (config) => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const project = fileURLToPath(new URL(`../${config}`, import.meta.url));
    const run = spawnSync(process.execPath, [tsc, '-p', project, '--noEmit'], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);
});
