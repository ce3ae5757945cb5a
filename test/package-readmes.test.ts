/**
 * Each package's README (shipped in its tarball, see test/packages.test.ts) shows one
 * example. The examples are JavaScript to paste into a `.mjs` file: each must parse as one
 * (`node --check`), and every name it imports from an @ipokit package must be an export of
 * that package.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = ['core', 'webhooks', 'testing', 'storage-memory', 'storage-postgres', 'express', 'koa', 'fetch', 'client', 'sources', 'cli'] as const;

async function jsBlocks(name: string): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'packages', name, 'README.md'), 'utf8');
  return [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('the packages\' READMEs', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ipokit-package-readmes-'));
  });
  afterAll(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });

  it.each(PACKAGES)('@ipokit/%s: the example parses as a .mjs and imports only what the packages export', async (name) => {
    const blocks = await jsBlocks(name);
    if (name === 'cli') {
      // The command's README shows commands, not code.
      expect(blocks).toEqual([]);
      return;
    }
    expect(blocks.length, 'one js example').toBeGreaterThan(0);
    for (const [i, block] of blocks.entries()) {
      const file = join(tmp, `${name}-${i}.mjs`);
      await writeFile(file, block);
      await run(process.execPath, ['--check', file]);
      for (const m of block.matchAll(/^import \{([^}]+)\} from '(@ipokit\/[\w-]+)';$/gm)) {
        const module = (await import(m[2]!)) as Record<string, unknown>;
        const names = m[1]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
        expect(names.filter((n) => module[n] === undefined), `${m[2]} exports`).toEqual([]);
      }
      expect(block, 'the example uses its own package').toContain(`from '@ipokit/${name}'`);
    }
  });
});
