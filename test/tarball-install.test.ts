/**
 * The install the README promises before the first publish (issue #33, "a release"): `npm
 * run pack`'s tarballs, every published package, installed together with express into a
 * fresh app (`npm init -y`) outside the workspace, with no @ipokit package from any
 * registry; then the README's Express block, saved as server.mjs as pasted, runs with plain
 * Node on a free port and answers its own curl line with the IPO.
 *
 * A full-run test (slow: an npm install of the whole tree of dependencies). It packs the
 * dist/ folders as they are (`npm run pack -- --no-build`): CI builds them (`npm run build`)
 * before the tests, `npm ci` builds their JavaScript (the root prepare script), and the
 * README's other blocks run on them the same way. Third-party dependencies come from npm's
 * cache or the registry; where the registry does not answer, the test skips with one line.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedWorkspaces } from '../scripts/pack.js';
import { freePort, parseCurlLine, readmeBlock, startBlock, stopBlock } from './readme-blocks.js';
import { NPM, ROOT, npmInstall, registryAnswers, run } from './tarballs.js';

const SLOW = 900_000;
const online = await registryAnswers();
if (!online) console.warn('tarball install test skipped: the npm registry does not answer (npm ping), and the fresh app needs express and the packages\' dependencies from it');

describe.skipIf(!online)('npm run pack: the tarballs installed into a fresh app', () => {
  let tmp: string;
  let app: string;
  let tarballs: string[];

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ipokit-tarball-install-'));
    const out = join(tmp, 'tarballs');
    // The script itself, as a maintainer runs it, writing elsewhere than ./tarballs/.
    const { stdout } = await run(NPM, ['run', '--silent', 'pack', '--', '--no-build', '--out', out], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    tarballs = stdout.trim().split('\n').map((line) => join(ROOT, line));
    app = join(tmp, 'app');
    await mkdir(app);
    await run(NPM, ['init', '-y'], { cwd: app });
    // Fails if any @ipokit package is wanted from a registry: the scope's registry has none.
    await npmInstall(app, [...tarballs, 'express']);
  }, SLOW);

  afterAll(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });

  it('packs one tarball per published package, and prints their paths', async () => {
    const published = await publishedWorkspaces();
    expect(published.map((w) => w.name)).not.toContain('@ipokit/demo');
    expect(tarballs.map((t) => t.split(/[\\/]/).pop())).toEqual(published.map((w) => `${w.name.slice(1).replace('/', '-')}-${w.version}.tgz`));
    expect((await readdir(join(tmp, 'tarballs'))).sort()).toEqual(tarballs.map((t) => t.split(/[\\/]/).pop()).sort());
  });

  it('installs every package from its tarball, with nothing missing or invalid', async () => {
    const pkg = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const { name } of await publishedWorkspaces()) expect(pkg.dependencies[name], name).toMatch(/^file:.*\.tgz$/);
    // `npm ls` exits non-zero on a missing, invalid or extraneous dependency.
    await expect(run(NPM, ['ls', '--all', '--json'], { cwd: app, maxBuffer: 64 * 1024 * 1024 })).resolves.toBeDefined();
  });

  it("runs the README's Express block as pasted: its curl line answers 200 with the IPO", async () => {
    await writeFile(join(app, 'server.mjs'), await readmeBlock('Use it in your Express app'));
    const port = await freePort();
    const { child, line } = startBlock(['server.mjs'], port, app);
    try {
      const curl = parseCurlLine(await line);
      expect(curl, 'the block prints a curl line').not.toBeNull();
      expect(curl!.url).toContain(`:${port}/`);
      const res = await fetch(curl!.url, { headers: { 'x-api-key': curl!.key } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { ipo: { symbol: string; gmp: unknown } };
      expect(body.ipo.symbol).toBe('ORBIT');
      expect(body.ipo.gmp).not.toBeNull();
    } finally {
      await stopBlock(child);
    }
  }, 60_000);
});
