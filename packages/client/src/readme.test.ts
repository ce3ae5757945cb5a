/**
 * The README's "The client" block runs as pasted: it is written to a file, run with Node
 * against a fixture server (IPOKIT_URL, IPOKIT_KEY), and prints what the fixture holds.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECTED_ORDER, expectedIpo, expectedSeries, expectedSnapshot, FIXTURE_NOW, IPO_IDS } from '@ipokit/core/testing';
import { FRAMEWORKS, fixtureServer, NO_LIMITS, type FixtureServer } from './test-servers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HEADING = '## The client';

/** The first ```ts block after the heading; the heading must come right before "## Options". */
async function block(): Promise<{ code: string; section: string }> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n${HEADING}\n`);
  if (at < 0) throw new Error(`README has no heading "${HEADING}"`);
  const next = readme.indexOf('\n## ', at + 1);
  const section = readme.slice(at, next < 0 ? undefined : next);
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (m === null) throw new Error(`README has no ts block under "${HEADING}"`);
  return { code: m[1]!, section: readme.slice(next + 1, next + 1 + '## Options\n'.length) };
}

function run(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: `${ROOT}packages/client`,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('README block "The client"', () => {
  let server: FixtureServer;
  beforeAll(async () => {
    server = await fixtureServer(FRAMEWORKS[0]!, { limits: NO_LIMITS });
  });
  afterAll(() => server.close());

  it('sits right before "## Options", runs as pasted and prints what the server holds', async () => {
    const { code, section } = await block();
    expect(section).toBe('## Options\n');
    // Outside src/: neither the type check nor vitest picks it up while it exists.
    const file = `${ROOT}packages/client/.readme-client-${process.pid}.mts`;
    await writeFile(file, code);
    try {
      const result = await run(file, { IPOKIT_URL: server.baseUrl, IPOKIT_KEY: server.keys.proGmp });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const open = EXPECTED_ORDER.open.map((id) => expectedIpo(id)).filter((ipo) => ipo.type !== 'DEBT');
      const listed = EXPECTED_ORDER.listed.map((id) => expectedIpo(id)).filter((ipo) => ipo.startDate?.startsWith('2026'));
      const series = expectedSeries({ ipoId: IPO_IDS.orbit, interval: 'hourly', field: 'median', from: '2026-11-20', to: '2026-11-21', now: FIXTURE_NOW });
      if (series === 'from') throw new Error('empty range');
      expect(result.stdout.split('\n')).toEqual([
        `${open.length} open, first: ${open[0]!.name}`,
        ...listed.map((ipo) => `${ipo.symbol} ${ipo.listingDate} ${ipo.listingGain}`),
        `95.5-100 ${expectedSnapshot(IPO_IDS.orbit, FIXTURE_NOW)!.aggregations.mean} ${series.series.length}`,
        '404 ERR:NOTFOUND No IPO has the identifier "NO-SUCH-IPO": use an IPO id, symbol or slug.',
        '',
      ]);
    } finally {
      await rm(file, { force: true });
    }
  });
});
