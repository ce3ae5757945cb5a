/**
 * Packing the packages and installing the tarballs into a project outside the workspace, as
 * a user would, shared by test/packages.test.ts (imports, types and linting of the built
 * packages) and test/tarball-install.test.ts (`npm run pack`'s tarballs in a fresh app
 * running the README's Express block). Test-only: nothing here is published.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
export const TSUP = join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js');

/**
 * Builds a package as `npm run build` does (its tsup config, .d.ts included), but into a
 * directory beside dist/, then renames each file into dist/: entry points last, after the
 * chunks they import, and files the build no longer makes removed at the end. tsup's own
 * `clean` would empty dist/ first, and a README block started with plain Node at that
 * moment (demo/src/readme.test.ts, in parallel) would find no @ipokit/core.
 */
export async function buildIntoDist(name: string): Promise<void> {
  const dir = join(ROOT, 'packages', name);
  const staging = join(dir, `.dist-${process.pid}`);
  const dist = join(dir, 'dist');
  try {
    await run(process.execPath, [TSUP, '--out-dir', staging], { cwd: dir });
    const built = await readdir(staging);
    const entry = (f: string) => /^(index|testing|bin)\./.test(f);
    await mkdir(dist, { recursive: true });
    for (const f of [...built.filter((f) => !entry(f)), ...built.filter(entry)]) await rename(join(staging, f), join(dist, f));
    for (const f of await readdir(dist)) if (!built.includes(f)) await rm(join(dist, f), { recursive: true, force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Builds @ipokit/client into a copy of the package under `tmp` and packs that copy, leaving
 * packages/client/dist alone: its own test (packages/client/src/package.test.ts) rebuilds
 * it in place meanwhile. Resolves to the tarball's path.
 */
export async function packClientCopy(tmp: string): Promise<string> {
  const client = join(tmp, 'client-package');
  await mkdir(client, { recursive: true });
  for (const f of ['package.json', 'README.md', 'LICENSE', 'src']) await cp(join(ROOT, 'packages', 'client', f), join(client, f), { recursive: true });
  await run(process.execPath, [TSUP, '--out-dir', join(client, 'dist')], { cwd: join(ROOT, 'packages', 'client') });
  return packDirectory(client, tmp);
}

/** `npm pack` of one package folder into `dest`, no lifecycle scripts; the tarball's path. */
export async function packDirectory(dir: string, dest: string): Promise<string> {
  const { stdout } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  return join(dest, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
}

/**
 * Installs tarballs and registry packages (`specs`, e.g. `express@5`) into `project` with
 * npm, as a user's `npm install` would: no audit, dependencies from npm's cache where `npm ci`
 * put them (`--prefer-offline`). The @ipokit scope is sent to a registry of the test's own on
 * loopback that has no package at all (404, as the npm registry before the first publish), so
 * every @ipokit package must come from the tarballs. npm still asks it for some (the
 * dependencies of @ipokit/cli, while it places the tree); resolves to what it asked for.
 */
export async function npmInstall(project: string, specs: readonly string[]): Promise<string[]> {
  const asked: string[] = [];
  const registry = createServer((req, res) => {
    asked.push(decodeURIComponent(req.url ?? ''));
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  const { port } = registry.address() as AddressInfo;
  try {
    await run(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', `--@ipokit:registry=http://127.0.0.1:${port}/`, ...specs], {
      cwd: project,
      maxBuffer: 64 * 1024 * 1024,
    });
  } finally {
    registry.close();
  }
  return asked;
}

/**
 * Whether the npm registry answers (`npm ping`, one try of at most 15 s): the tarball
 * install fetches third-party dependencies (express, pg, ...) missing from npm's cache.
 */
export async function registryAnswers(): Promise<boolean> {
  try {
    await run(NPM, ['ping', '--fetch-retries=0', '--fetch-timeout=15000'], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}
