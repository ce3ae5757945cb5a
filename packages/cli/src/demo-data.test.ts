import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { todayInIst, validateDataset } from '@ipokit/core';
import { datasetJson } from './demo-data.js';
import { generateDataset } from './generate.js';
import { runCli } from './index.js';
import { capture } from './test-helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-demo-data-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: string[]) {
  const out = capture({ cwd: dir });
  const code = await runCli(['demo-data', ...argv], out.io);
  return { code, stdout: out.stdout(), stderr: out.stderr() };
}

describe('ipokit demo-data', () => {
  it('writes the generated dataset to stdout: valid JSON, one record per line, a valid dataset', async () => {
    const r = await run(['--today', '2026-11-23', '--seed', '7']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const dataset = JSON.parse(r.stdout);
    expect(dataset).toEqual(generateDataset({ seed: 7, today: '2026-11-23', now: Date.parse('2026-11-23T06:30:00.000Z') }));
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('{"ipos":[');
    expect(dataset.subscription.length).toBeGreaterThan(0);
    expect(lines.length).toBe(dataset.ipos.length + dataset.gmp.length + dataset.subscription.length + 5);
    expect(lines).toContain('],"subscription":[');
    expect(() => validateDataset(dataset)).not.toThrow();
  });

  it('is deterministic for the same --today and --seed, and differs for another seed', async () => {
    const a = await run(['--today', '2026-11-23', '--seed', '7']);
    const b = await run(['--seed', '7', '--today', '2026-11-23']);
    const c = await run(['--today', '2026-11-23', '--seed', '8']);
    expect(a.stdout).toBe(b.stdout);
    expect(c.stdout).not.toBe(a.stdout);
  });

  it('writes the same bytes to --out (relative to the working directory), with a summary on stderr', async () => {
    const r = await run(['--out', 'ipos.json', '--today', '2027-01-05']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Wrote 3\d\d IPOs, \d+ GMP snapshots and \d+ subscription snapshots \(today 2027-01-05, seed 20190101\) to ipos\.json\.\n$/);
    const written = await readFile(join(dir, 'ipos.json'), 'utf8');
    expect(written).toBe((await run(['--today', '2027-01-05'])).stdout);
  });

  it('defaults --today to today in India', async () => {
    const r = await run([]);
    expect(r.code).toBe(0);
    const today = todayInIst(new Date());
    expect(r.stdout).toBe((await run(['--today', today])).stdout);
  });

  it('says why a file cannot be written, exit 1', async () => {
    const r = await run(['--out', 'no/such/dir/ipos.json', '--today', '2026-11-23']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ipokit demo-data: cannot write no\/such\/dir\/ipos\.json: ENOENT[^\n]*\n$/);
  });

  it('datasetJson writes empty parts as valid JSON', () => {
    expect(JSON.parse(datasetJson({}))).toEqual({ ipos: [], gmp: [], subscription: [] });
  });
});
