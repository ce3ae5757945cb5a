/**
 * `npm run pack`: the tarballs a release would publish, for installing without the registry.
 * Builds every package (`npm run build`: ESM, CommonJS and .d.ts), packs each published
 * workspace (every one not `"private"`) with `npm pack --workspace` into ./tarballs/ (emptied
 * of older .tgz files first), checks that the tarballs install together (every @ipokit
 * dependency of one is another of them, at a version its range accepts) and prints their
 * paths, one a line:
 *
 *   npm run pack
 *   npm install ./tarballs/*.tgz express     # in your app, before the first publish
 *
 * `--no-build` packs the dist/ folders as they are; `--out DIR` writes elsewhere.
 * test/tarball-install.test.ts installs what this makes into a fresh app.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Where `npm run pack` writes (gitignored). */
export const TARBALLS = join(ROOT, 'tarballs');

/** A workspace that is published: its folder (relative to the root), name and version. */
export interface PublishedWorkspace {
  dir: string;
  name: string;
  version: string;
}

/** The parts of a package.json the checks read. */
export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/**
 * The root package.json's workspaces that are published (not `"private": true`), in its order.
 *
 * @example
 * ```ts
 * const names = (await publishedWorkspaces()).map((w) => w.name); // ['@ipokit/core', ...], no @ipokit/demo
 * ```
 */
export async function publishedWorkspaces(root: string = ROOT): Promise<PublishedWorkspace[]> {
  const { workspaces = [] } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const out: PublishedWorkspace[] = [];
  for (const dir of workspaces) {
    const pkg = JSON.parse(await readFile(join(root, dir, 'package.json'), 'utf8')) as Manifest;
    if (pkg.private !== true) out.push({ dir, name: pkg.name, version: pkg.version });
  }
  return out;
}

/**
 * Packs the given workspaces (folders relative to the root) with one `npm pack --workspace`
 * into `outDir`, without running any lifecycle script (build first), and resolves to the
 * tarballs' absolute paths, in the same order.
 *
 * @example
 * ```ts
 * const tarballs = await packWorkspaces(['packages/core', 'packages/express'], '/tmp/out');
 * ```
 */
export async function packWorkspaces(dirs: readonly string[], outDir: string, root: string = ROOT): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir, ...dirs.map((d) => `--workspace=${d}`)];
  const { stdout } = await run(NPM, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const packed = JSON.parse(stdout) as Array<{ filename: string }>;
  if (packed.length !== dirs.length) throw new Error(`npm pack made ${packed.length} tarballs for ${dirs.length} workspaces`);
  return packed.map((p) => join(outDir, p.filename));
}

/**
 * Checks that a set of tarballs installs on its own: every `@ipokit/*` dependency (also
 * peer and optional) of each is one of the set, at a version its range accepts. Ranges
 * are the ones changesets writes: `^x.y.z` or an exact `x.y.z`; anything else (`*`, a
 * `workspace:` range) is refused, since a published `*` takes whatever the registry has.
 * Rejects with one line per problem, naming the package.json to change.
 *
 * @example
 * ```ts
 * await checkTarballsInstallTogether(await packWorkspaces(['packages/core', 'packages/express', 'packages/dashboard'], '/tmp/out'));
 * ```
 */
export async function checkTarballsInstallTogether(tarballs: readonly string[]): Promise<void> {
  const manifests = await Promise.all(
    tarballs.map(async (t) => JSON.parse((await run('tar', ['-xzOf', t, 'package/package.json'], { maxBuffer: 16 * 1024 * 1024 })).stdout) as Manifest),
  );
  const problems = installProblems(manifests);
  if (problems.length > 0) throw new Error(`the tarballs do not install together:\n${problems.join('\n')}`);
}

/**
 * What keeps a set of packages (their package.json) from installing on their own, one line
 * each, as `checkTarballsInstallTogether` checks; `[]` when nothing does.
 *
 * @example
 * ```ts
 * installProblems([{ name: '@ipokit/express', version: '0.1.0', dependencies: { '@ipokit/core': '*' } }, { name: '@ipokit/core', version: '0.1.0' }]);
 * // ['@ipokit/express depends on @ipokit/core@"*", which does not accept the packed 0.1.0: set it to "^0.1.0" in its package.json']
 * ```
 */
export function installProblems(manifests: readonly Manifest[]): string[] {
  const versions = new Map(manifests.map((m) => [m.name, m.version]));
  const problems: string[] = [];
  for (const m of manifests) {
    for (const deps of [m.dependencies, m.peerDependencies, m.optionalDependencies]) {
      for (const [dep, range] of Object.entries(deps ?? {})) {
        if (!dep.startsWith('@ipokit/')) continue;
        const version = versions.get(dep);
        if (version === undefined) problems.push(`${m.name} depends on ${dep}, which is not among the tarballs (is it private?)`);
        else if (!rangeAccepts(range, version)) problems.push(`${m.name} depends on ${dep}@"${range}", which does not accept the packed ${version}: set it to "^${version}" in its package.json`);
      }
    }
  }
  return problems;
}

/** `^x.y.z` or `x.y.z` (release versions only) accepting `version`, as npm's semver does. */
function rangeAccepts(range: string, version: string): boolean {
  const v = parse(version);
  if (v === null) return false;
  if (range === version) return true;
  const r = range.startsWith('^') ? parse(range.slice(1)) : null;
  if (r === null) return false;
  const [major, minor, patch] = v;
  const [rMajor, rMinor, rPatch] = r;
  const atLeast = major > rMajor || (major === rMajor && (minor > rMinor || (minor === rMinor && patch >= rPatch)));
  // The caret keeps the left-most non-zero part: ^1.2.3 <2.0.0, ^0.2.3 <0.3.0, ^0.0.3 <0.0.4.
  if (rMajor > 0) return atLeast && major === rMajor;
  if (rMinor > 0) return atLeast && major === 0 && minor === rMinor;
  return major === 0 && minor === 0 && patch === rPatch;
}

function parse(version: string): [number, number, number] | null {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3])];
}

async function main(argv: string[]): Promise<void> {
  let build = true;
  let outDir = TARBALLS;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--no-build') build = false;
    else if (argv[i] === '--out' && argv[i + 1] !== undefined) outDir = resolve(argv[++i]!);
    else throw new Error(`"${argv[i]}" is not an option: npm run pack [-- --no-build] [--out DIR]`);
  }
  if (build) await run(NPM, ['run', 'build'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  await mkdir(outDir, { recursive: true });
  for (const f of await readdir(outDir)) if (f.endsWith('.tgz')) await rm(join(outDir, f));
  const workspaces = await publishedWorkspaces();
  const tarballs = await packWorkspaces(workspaces.map((w) => w.dir), outDir);
  await checkTarballsInstallTogether(tarballs);
  for (const t of tarballs) console.log(relative(process.cwd(), t) || t);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`npm run pack: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
