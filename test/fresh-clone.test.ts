/**
 * `npm ci` leaves a working tree (issue 16): in a fresh clone nothing has built dist/ yet,
 * and the README's `node server.mjs` must work all the same. CI cannot show it, since it
 * runs `npm run build` before the tests, and neither can the repository's own dist/, which
 * any earlier build made. So the test lays out a tree as a fresh clone after `npm ci`
 * installed the dependencies: the root package.json and tsconfig, every workspace's files
 * but dist/, node_modules linked to the repository's, except @ipokit/*, linked to the
 * scratch tree's packages as npm links workspaces. There the README's blocks first fail
 * with no dist/ (the clone before the prepare script), then the root's `prepare` script,
 * which `npm ci` runs after installing, builds what Node needs, and the blocks answer.
 */
import { execFile } from 'node:child_process';
import { access, cp, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKS, ROOT, freePort, parseCurlLine, readmeBlock, startBlock, stopBlock } from './readme-blocks.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const LINK = process.platform === 'win32' ? 'junction' : 'dir';

interface PackageJson {
  name: string;
  workspaces?: string[];
  scripts?: Record<string, string>;
  main?: string;
  module?: string;
  bin?: string | Record<string, string>;
  exports?: unknown;
}

/** The files a package.json sends Node to (every export condition but types and source, main, module, bin). */
function runtimeFiles(pkg: PackageJson): string[] {
  const files = new Set<string>();
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (key !== 'types' && key !== 'source' && !value.endsWith('package.json')) files.add(value);
    } else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  walk(pkg.exports, '');
  for (const file of [pkg.main, pkg.module, ...(typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {}))]) if (file !== undefined) files.add(file);
  return [...files];
}

describe('a fresh clone after npm ci', () => {
  let clone: string;
  let workspaces: string[];

  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'ipokit-fresh-clone-'));
    const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
    workspaces = root.workspaces ?? [];
    for (const file of ['package.json', 'tsconfig.json', 'README.md', 'scripts/prepare.mjs', 'scripts/tsup.base.ts']) await cp(join(ROOT, file), join(clone, file));
    // What git holds: no build output, no installed modules, none of the tests' dot files.
    const tracked = (src: string) => !['dist', 'node_modules'].includes(basename(src)) && !basename(src).startsWith('.');
    for (const w of workspaces) await cp(join(ROOT, w), join(clone, w), { recursive: true, filter: tracked });
    // What `npm ci` installs: the same modules, and the workspaces linked (node_modules/@ipokit/core -> ../../packages/core).
    await mkdir(join(clone, 'node_modules', '@ipokit'), { recursive: true });
    for (const entry of await readdir(join(ROOT, 'node_modules'), { withFileTypes: true })) {
      if (entry.name === '@ipokit' || !entry.isDirectory()) continue;
      await symlink(join(ROOT, 'node_modules', entry.name), join(clone, 'node_modules', entry.name), LINK);
    }
    for (const name of await readdir(join(ROOT, 'node_modules', '@ipokit'))) {
      const target = await readlink(join(ROOT, 'node_modules', '@ipokit', name));
      await symlink(target, join(clone, 'node_modules', '@ipokit', name), LINK);
    }
  }, 60_000);

  afterAll(async () => {
    if (clone !== undefined) await rm(clone, { recursive: true, force: true });
  });

  /** Runs a README block in the clone with `node server.mjs`, hands its first line to `check`, then stops it. */
  async function serve(heading: string, check: (line: Promise<string>, port: number) => Promise<void>): Promise<void> {
    const file = join(clone, 'server.mjs');
    await writeFile(file, await readmeBlock(heading));
    const port = await freePort();
    const { child, line } = startBlock([file], port, clone);
    try {
      await check(line, port);
    } finally {
      await stopBlock(child);
      await rm(file, { force: true });
    }
  }

  it.each(BLOCKS)('without a build, "%s" as server.mjs does not start (the clone without a prepare script)', async (heading) => {
    await serve(heading, async (line) => {
      await expect(line).rejects.toThrow(/ERR_MODULE_NOT_FOUND[\s\S]*[\\/]dist[\\/]|[\\/]dist[\\/][\s\S]*ERR_MODULE_NOT_FOUND/);
    });
  });

  it('npm ci runs the prepare script, which builds every file Node loads from the packages', async () => {
    const root = JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')) as PackageJson;
    expect(root.scripts?.prepare, 'npm ci runs "prepare" after installing').toBeDefined();
    await run(NPM, ['run', '--silent', 'prepare'], { cwd: clone, maxBuffer: 16 * 1024 * 1024 });
    const missing: string[] = [];
    for (const w of workspaces) {
      if (!(await access(join(clone, w, 'tsup.config.ts')).then(() => true, () => false))) continue;
      const pkg = JSON.parse(await readFile(join(clone, w, 'package.json'), 'utf8')) as PackageJson;
      for (const file of runtimeFiles(pkg)) if (!(await access(join(clone, w, file)).then(() => true, () => false))) missing.push(`${pkg.name} ${file}`);
    }
    expect(missing).toEqual([]);
    // The command too: node_modules/.bin/ipokit is packages/cli/dist/bin.js.
    const version = await run(process.execPath, [join(clone, 'packages', 'cli', 'dist', 'bin.js'), '--version'], { cwd: clone });
    expect(version.stdout).toMatch(/\d+\.\d+\.\d+/);
  }, 120_000);

  it.each(BLOCKS)('then "%s" as server.mjs runs with node and its curl line answers', async (heading) => {
    await serve(heading, async (line) => {
      const curl = parseCurlLine(await line);
      expect(curl).not.toBeNull();
      const res = await fetch(curl!.url, { headers: { 'x-api-key': curl!.key } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { ipo: { symbol: string } }).ipo.symbol).toBe('ORBIT');
    });
  });
});
