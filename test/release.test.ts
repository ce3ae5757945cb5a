/**
 * What a release needs, checked without a network or a build (issue #33, "a release"): the
 * CI workflow runs .ci/run; the release workflow may mint provenance (`id-token: write`),
 * runs the tests first and publishes with provenance; every published package says so in
 * its publishConfig and names the repository provenance is checked against; changesets
 * keeps one version for all of them, and that version has its entry in CHANGELOG.md; the
 * packages' own dependency ranges accept each other's versions, so their tarballs install
 * together. The workflows are read as text (no YAML parser among the dependencies).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installProblems, publishedWorkspaces, type Manifest } from '../scripts/pack.js';
import { ROOT } from './tarballs.js';

const REPOSITORY = 'git+https://github.com/ipokit/ipokit.git';

const text = (file: string) => readFile(join(ROOT, file), 'utf8');
const json = async <T>(file: string) => JSON.parse(await text(file)) as T;

/** The indented lines under a top-level key of a workflow (`on`, `permissions`), trimmed. */
function block(workflowText: string, key: string): string[] {
  const lines = workflowText.split('\n');
  const at = lines.indexOf(`${key}:`);
  if (at < 0) return [];
  const end = lines.findIndex((line, i) => i > at && line !== '' && !/^[ \t]/.test(line));
  return lines.slice(at + 1, end < 0 ? undefined : end).map((line) => line.trim()).filter((line) => line !== '');
}

/** The lines of a workflow that are not comments. */
async function workflow(name: string): Promise<string> {
  return (await text(`.github/workflows/${name}`))
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n');
}

interface Workspace extends Manifest {
  publishConfig?: { access?: string; provenance?: boolean };
  repository?: { type?: string; url?: string; directory?: string };
}

describe('the release machinery', () => {
  it('CI runs bash .ci/run on push and pull request, on Node 20, with PostgreSQL 15 and Redis 7', async () => {
    const ci = await workflow('ci.yml');
    expect(block(ci, 'on')).toContain('push:');
    expect(block(ci, 'on')).toContain('pull_request:');
    expect(ci).toMatch(/runs-on: ubuntu-/);
    expect(ci).toMatch(/node-version: 20\b/);
    expect(ci).toMatch(/^\s+- run: bash \.ci\/run$/m);
    expect(ci).toMatch(/image: postgres:15\b/);
    expect(ci).toMatch(/image: redis:7\b/);
    // what .ci/with-postgres.sh and .ci/with-redis.sh take as they are
    expect(ci).toMatch(/DATABASE_URL: postgres:\/\/postgres@127\.0\.0\.1:5432\/test/);
    expect(ci).toMatch(/REDIS_URL: redis:\/\/127\.0\.0\.1:6379/);
  });

  it('the release workflow runs on a v* tag, may mint provenance, runs the tests, then publishes with provenance', async () => {
    const release = await workflow('release.yml');
    expect(block(release, 'on')).toEqual(['push:', 'tags:', "- 'v*'"]);
    expect(block(release, 'permissions')).toContain('id-token: write');
    expect(block(release, 'permissions')).toContain('contents: write');
    const tests = release.search(/run: bash \.ci\/run$/m);
    const publish = release.search(/run: npx changeset publish$|run: npm publish .*--provenance/m);
    expect(tests, 'runs bash .ci/run').toBeGreaterThan(0);
    expect(publish, 'publishes').toBeGreaterThan(tests);
    const publishStep = release.slice(publish);
    if (/changeset publish/.test(publishStep.split('\n')[0]!)) expect(publishStep).toMatch(/NPM_CONFIG_PROVENANCE: true/);
    expect(publishStep).toMatch(/NODE_AUTH_TOKEN: \$\{\{ secrets\.NPM_TOKEN \}\}/);
    expect(release).toMatch(/registry-url: https:\/\/registry\.npmjs\.org/);
  });

  it('every published package: public, with provenance, and the repository field provenance checks', async () => {
    const { workspaces = [] } = await json<{ workspaces?: string[] }>('package.json');
    const published = await publishedWorkspaces();
    expect(published.map((w) => w.name)).toContain('@ipokit/testing');
    expect(published.length).toBe(workspaces.length - 1);
    for (const dir of workspaces) {
      const pkg = await json<Workspace>(`${dir}/package.json`);
      if (pkg.private === true) {
        expect(pkg.name, 'only the demo is private').toBe('@ipokit/demo');
        continue;
      }
      expect(pkg.publishConfig, pkg.name).toEqual({ access: 'public', provenance: true });
      expect(pkg.repository, pkg.name).toEqual({ type: 'git', url: REPOSITORY, directory: dir });
    }
    expect((await json<{ private?: boolean }>('package.json')).private).toBe(true);
  });

  it('changesets: one fixed version for every @ipokit package, public, CHANGELOG.md as the changelog', async () => {
    const config = await json<{ fixed: string[][]; access: string; changelog: unknown; ignore: string[] }>('.changeset/config.json');
    expect(config.fixed).toEqual([['@ipokit/*']]);
    expect(config.access).toBe('public');
    expect(config.changelog).toBe(false);
    const versions = new Set((await publishedWorkspaces()).map((w) => w.version));
    expect(versions.size, 'one version').toBe(1);
    const changelog = await text('CHANGELOG.md');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    for (const version of versions) expect(changelog).toMatch(new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
  });

  it("the packages' @ipokit dependency ranges accept each other's versions (the tarballs install together)", async () => {
    const manifests = await Promise.all((await publishedWorkspaces()).map((w) => json<Manifest>(`${w.dir}/package.json`)));
    expect(installProblems(manifests)).toEqual([]);
    // what the check refuses: a range npm would take from the registry, a private package
    const core = { name: '@ipokit/core', version: '0.2.0' };
    expect(installProblems([core, { name: '@ipokit/express', version: '0.2.0', dependencies: { '@ipokit/core': '*' } }])).toEqual([
      '@ipokit/express depends on @ipokit/core@"*", which does not accept the packed 0.2.0: set it to "^0.2.0" in its package.json',
    ]);
    expect(installProblems([core, { name: '@ipokit/koa', version: '0.2.0', dependencies: { '@ipokit/core': '^0.1.0' } }])).toHaveLength(1);
    expect(installProblems([core, { name: '@ipokit/koa', version: '0.2.0', dependencies: { '@ipokit/core': '^0.2.0', '@ipokit/demo': '^0.2.0' } }])).toEqual([
      '@ipokit/koa depends on @ipokit/demo, which is not among the tarballs (is it private?)',
    ]);
    expect(installProblems([{ name: '@ipokit/core', version: '0.2.3' }, { name: '@ipokit/koa', version: '0.2.3', peerDependencies: { '@ipokit/core': '^0.2.1' } }])).toEqual([]);
    expect(installProblems([{ name: '@ipokit/core', version: '1.4.0' }, { name: '@ipokit/koa', version: '1.4.0', dependencies: { '@ipokit/core': '^1.2.0' } }])).toEqual([]);
  });
});
