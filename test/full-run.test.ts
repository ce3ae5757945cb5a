/**
 * The split of test/full-run.ts cannot go wrong unseen: `npm test` and `npm run test:all`
 * together run every test file, a file is in one run only unless it is SPLIT (then in
 * both, each time its own part), and the lists name files that exist.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FULL_RUN, FULL_RUN_ONLY, SPLIT, oneOfEach } from './full-run.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const run = promisify(execFile);

/** Every *.test.ts under packages/<name>/src, demo/src and test, relative to the root. */
function testFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  for (const pkg of readdirSync(join(ROOT, 'packages'))) if (existsSync(join(ROOT, 'packages', pkg, 'src'))) walk(`packages/${pkg}/src`);
  walk('demo/src');
  walk('test');
  return found.sort();
}

describe('the quick and the full run (test/full-run.ts)', () => {
  it('lists files that exist, each once, none both full-run-only and split', () => {
    const all = new Set(testFiles());
    const listed = [...FULL_RUN_ONLY, ...SPLIT];
    expect(listed.filter((f) => !all.has(f)), 'listed in test/full-run.ts but no such test file').toEqual([]);
    expect(listed.filter((f, i) => listed.indexOf(f) !== i), 'listed twice').toEqual([]);
  });

  it('a file splits with oneOfEach exactly when it is in SPLIT (else one of its halves would never run)', () => {
    const splitting = testFiles().filter((f) => f !== 'test/full-run.test.ts' && /\boneOfEach\(/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(splitting).toEqual([...SPLIT].sort());
  });

  it('oneOfEach gives the quick run the first item and the full run the rest', () => {
    expect(oneOfEach(['express 5', 'express 4', 'koa'])).toEqual(FULL_RUN ? ['express 4', 'koa'] : ['express 5']);
    expect(oneOfEach([])).toEqual([]);
  });

  it('vitest puts every test file in one project, the SPLIT files in both', async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', '--json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const projects = new Map<string, string[]>();
    for (const { file, projectName } of JSON.parse(stdout) as Array<{ file: string; projectName: string }>) {
      const path = relative(ROOT, file).split('\\').join('/');
      projects.set(path, [...(projects.get(path) ?? []), projectName].sort());
    }
    const expected = new Map(testFiles().map((f) => [f, SPLIT.includes(f) ? ['all', 'quick'] : FULL_RUN_ONLY.includes(f) ? ['all'] : ['quick']]));
    expect(Object.fromEntries(projects)).toEqual(Object.fromEntries(expected));
  }, 120_000);
});
