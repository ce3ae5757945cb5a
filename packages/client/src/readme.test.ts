/**
 * The README's "The client" block runs as pasted: it is written to a file and run with Node
 * (IPOKIT_URL, IPOKIT_KEY), against the demo (`npm start`: the generated dataset, one key per
 * plan, the default limits) and against the HTTP suite's fixture. It must finish in seconds,
 * with nothing on stderr (no wait reported by its onWait), and print what the README shows.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '@ipokit/cli';
import { type GmpSeries, type Ipo, type ListResponse } from '@ipokit/core';
import { DEFAULT_OPTIONS } from '@ipokit/core/adapter';
import { FRAMEWORKS, fixtureServer, NO_LIMITS, type FixtureServer } from './test-servers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HEADING = '## The client';
/** The block makes a handful of requests: it has this long to start Node and make them. */
const DEADLINE_MS = 15_000;

interface Section {
  /** The first ```ts block. */
  code: string;
  /** The first ```text block after it: what the block prints against the demo. */
  output: string[];
  /** The section's text, heading included. */
  text: string;
  /** What follows the section. */
  next: string;
}

async function section(): Promise<Section> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n${HEADING}\n`);
  if (at < 0) throw new Error(`README has no heading "${HEADING}"`);
  const next = readme.indexOf('\n## ', at + 1);
  const text = readme.slice(at, next < 0 ? undefined : next);
  const code = /```ts\n([\s\S]*?)```/.exec(text);
  if (code === null) throw new Error(`README has no ts block under "${HEADING}"`);
  const output = /```text\n([\s\S]*?)```/.exec(text.slice(code.index + code[0].length));
  if (output === null) throw new Error(`README has no text block (what the client block prints) after the ts block under "${HEADING}"`);
  return { code: code[1]!, output: output[1]!.split('\n'), text, next: readme.slice(next + 1, next + 1 + '## Options\n'.length) };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/**
 * Runs `file` with plain Node, as the README says (`node client.mjs`): @ipokit/client comes
 * from its dist/, which `npm ci` builds (prepare). Killed after DEADLINE_MS.
 */
function run(file: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
    const child = spawn(process.execPath, [file], {
      cwd: `${ROOT}packages/client`,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, DEADLINE_MS);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

/** Writes the block next to the client package and runs it against `baseUrl` with `apiKey`. */
async function runBlock(code: string, baseUrl: string, apiKey: string): Promise<Run> {
  // Outside src/: neither the type check nor vitest picks it up while it exists.
  const file = `${ROOT}packages/client/.readme-client-${process.pid}-${Date.now()}.mjs`;
  await writeFile(file, code);
  try {
    return await run(file, { IPOKIT_URL: baseUrl, IPOKIT_KEY: apiKey });
  } finally {
    await rm(file, { force: true });
  }
}

/** Each line the block prints, as a pattern; the README's sample output must match them too. */
const LINES: readonly RegExp[] = [
  /^\d+ open, first: \S+ \(.+\)$/,
  /^\d+ mainboard IPOs listed, \d+ of them above the issue price$/,
  /^\S+ \S+: GMP -?[\d.]+ now, \d+ days of GMP data$/,
  /^404 ERR:NOTFOUND No IPO has the identifier "NO-SUCH-IPO": .+$/,
  /^$/,
];

/**
 * What the block prints, read from the server's JSON with plain fetch (not the client):
 * `listKey` for the lists, `gmpKey` (pro with the GMP add-on) for the IPO and its series.
 */
async function expectedOutput(baseUrl: string, listKey: string, gmpKey: string): Promise<string[]> {
  async function body<T>(path: string, key: string): Promise<T> {
    const response = await fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': key } });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  }
  const open = await body<ListResponse>('?status=open&type=EQ,SME&limit=100', listKey);
  const first = open.ipos[0];
  if (first === undefined) throw new Error('the server has no open EQ or SME IPO');
  const listed: Ipo[] = [];
  for (let page = 1; ; page++) {
    const answer = await body<ListResponse>(`?status=listed&type=EQ&limit=100&page=${page}`, listKey);
    listed.push(...answer.ipos);
    if (page >= answer.meta.totalPages) break;
  }
  const { ipo } = await body<{ ipo: Ipo }>(`/${encodeURIComponent(first.symbol ?? first.id)}?includeGmp=true`, gmpKey);
  const series = await body<GmpSeries>(`/${encodeURIComponent(ipo.id)}/gmp?interval=daily&field=median`, gmpKey);
  return [
    `${open.meta.count} open, first: ${first.symbol} (${first.name})`,
    `${listed.length} mainboard IPOs listed, ${listed.filter((i) => Number(i.listingGain) > 0).length} of them above the issue price`,
    `${ipo.symbol} ${ipo.priceRange}: GMP ${ipo.gmp?.aggregations.mean} now, ${series.series.length} days of GMP data`,
    '404 ERR:NOTFOUND No IPO has the identifier "NO-SUCH-IPO": use an IPO id, symbol or slug.',
    '',
  ];
}

function expectLines(lines: string[], what: string): void {
  expect(lines, what).toHaveLength(LINES.length);
  lines.forEach((line, i) => expect(line, `${what}, line ${i + 1}`).toMatch(LINES[i]!));
}

function expectFinished(result: Run): void {
  const report = `stdout so far:\n${result.stdout}\nstderr so far:\n${result.stderr}`;
  expect(result.timedOut, `the block did not finish within ${DEADLINE_MS / 1000} s (${report})`).toBe(false);
  expect(result.stderr, report).toBe('');
  expect(result.code, report).toBe(0);
}

describe('README block "The client"', () => {
  it('sits right before "## Options", shows its output and states the demo limits it is written for', async () => {
    const { text, next, output } = await section();
    expect(next).toBe('## Options\n');
    expectLines(output, 'the README sample output');
    const { limits, maxListLimit } = DEFAULT_OPTIONS;
    const prose = text.replace(/\s+/g, ' ');
    expect(prose).toContain(`${limits.pro.perMinute} requests a minute`);
    expect(prose).toContain(`GMP route ${limits.pro.gmpPerMinute}`);
    expect(prose).toContain(`free ${maxListLimit.free}, paid and pro ${maxListLimit.paid}`);
    expect(maxListLimit.paid).toBe(maxListLimit.pro);
  });

  describe('against the demo (npm start)', () => {
    let demo: RunningServer;
    let twin: RunningServer;
    beforeAll(async () => {
      // The demo as `npm start` starts it (serve: startServer in memory with the demo keys and
      // the default limits), on a clock that stands still: the data is the day's, and a window
      // never frees, so any 429 would show as a wait on stderr and a timeout. Its twin holds the
      // same data and answers the expected values, without touching the demo's windows.
      const at = new Date();
      const options = { port: 0, framework: 'express', demoKeys: true, now: () => at, onError: () => {} } as const;
      [demo, twin] = await Promise.all([startServer(options), startServer(options)]);
    });
    afterAll(async () => {
      await demo?.close();
      await twin?.close();
    });

    it('runs as pasted with the pro key: finishes in seconds with no wait and prints what the README shows', async () => {
      const { code } = await section();
      const result = await runBlock(code, `${demo.url}/ipos`, demo.keys!.pro);
      expectFinished(result);
      expect(result.ms).toBeLessThan(DEADLINE_MS);
      const lines = result.stdout.split('\n');
      expectLines(lines, 'the output');
      expect(lines).toEqual(await expectedOutput(`${twin.url}/ipos`, twin.keys!.paid, twin.keys!.pro));
    }, DEADLINE_MS + 10_000);
  });

  describe('against any app that mounts ipokit (the HTTP suite fixture)', () => {
    let server: FixtureServer;
    beforeAll(async () => {
      server = await fixtureServer(FRAMEWORKS[0]!, { limits: NO_LIMITS });
    });
    afterAll(() => server.close());

    it('runs as pasted and prints what the server holds', async () => {
      const { code } = await section();
      const result = await runBlock(code, server.baseUrl, server.keys.proGmp);
      expectFinished(result);
      expect(result.stdout.split('\n')).toEqual(await expectedOutput(server.baseUrl, server.keys.proGmp, server.keys.proGmp));
    }, DEADLINE_MS + 10_000);
  });
});
