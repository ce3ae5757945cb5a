import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpoResponse, ListResponse } from '@ipokit/core';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { capture, openCliTestDatabase } from './test-helpers.js';
import { connectRaw, within } from './test-sockets.js';

// `ipokit serve` in-process: it runs until io.signal aborts, then drains and resolves 0.

// `ipokit serve` runs on the wall clock, and one test asks for status=open: the IPO stays open
// until 2099 (an end date of 2026-11-24 made that test fail from the IST day 2026-11-25 on).
const ORBIT = {
  ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-20', endDate: '2099-11-24' }],
  gmp: [{ ipoId: '2026000001', timestamp: '2026-11-18T09:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 42 }] }],
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-serve-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify(ORBIT));
  await writeFile(join(dir, 'bad.json'), JSON.stringify({ ipos: [{ ...ORBIT.ipos[0], type: 'IPO', endDate: '2026-11-01' }, { id: 'x' }] }));
  await writeFile(join(dir, 'broken.json'), '{"ipos": [');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Serving {
  /** The server's root, as fetch reaches it. */
  url: string;
  /** The root as the banner prints it. */
  printed: string;
  /** The mount path the banner prints. */
  mount: string;
  stdout: () => string;
  stderr: () => string;
  stop: () => Promise<number>;
}

/** Starts `ipokit serve ...args` and waits for its banner. */
async function startServe(args: string[], io: Partial<CliIo> = {}): Promise<Serving> {
  const controller = new AbortController();
  const out = capture({ cwd: dir, ...io, signal: controller.signal });
  const done = runCli(['serve', '--port', '0', ...args], out.io);
  const banner = await Promise.race([
    out.waitForStdout(/ at (http:\/\/[^\s/]+)(\/\S*)\n/),
    done.then((code) => {
      throw new Error(`serve exited with ${code}: ${out.stderr()}`);
    }),
  ]);
  return {
    url: banner[1]!.replace('localhost', '127.0.0.1'),
    printed: banner[1]!,
    mount: banner[2]!,
    stdout: out.stdout,
    stderr: out.stderr,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

async function get(url: string, key?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, key === undefined ? {} : { headers: { 'x-api-key': key } });
  return { status: res.status, body: await res.json() };
}

function keysOf(stdout: string): Record<'free' | 'paid' | 'pro', string> {
  const key = (plan: string) => new RegExp(`^  ${plan} +(ipk_[A-Za-z0-9]{32})`, 'm').exec(stdout)?.[1] ?? '';
  return { free: key('free'), paid: key('paid'), pro: key('pro') };
}

describe('ipokit serve from memory', () => {
  it.each([
    ['node:http', [], {}],
    ['Express', ['--framework', 'express'], {}],
    ['Koa', ['--framework', 'koa'], {}],
    ['Koa (IPOKIT_FRAMEWORK)', [], { IPOKIT_FRAMEWORK: 'KOA' }],
  ])('serves the generated dataset with %s, prints a key per plan and curl lines, and drains on stop', async (name, args, env) => {
    const serving = await startServe(args, { env });
    const stdout = serving.stdout();
    expect(stdout).toMatch(new RegExp(`^ipokit serving a generated dataset from memory with ${name.split(' ')[0]} at http://localhost:\\d+/ipos\\n`));
    const keys = keysOf(stdout);
    expect(Object.values(keys).every((k) => k !== '')).toBe(true);
    const curls = [...stdout.matchAll(/^  curl -s '([^']+)' -H 'x-api-key: (ipk_\w+)'$/gm)];
    expect(curls).toHaveLength(3);
    for (const [, url, key] of curls) expect((await get(url!.replace('localhost', '127.0.0.1'), key)).status).toBe(200);
    expect(await serving.stop()).toBe(0);
    expect(serving.stderr()).toMatch(/^Stopping: finishing the requests under way/);
    await expect(fetch(serving.url)).rejects.toThrow();
  });

  it('serves --dataset FILE instead (relative to the working directory)', async () => {
    const serving = await startServe(['--dataset', 'orbit.json', '--host', '127.0.0.1']);
    expect(serving.stdout()).toMatch(/^ipokit serving orbit\.json from memory with node:http at/);
    const one = await get(`${serving.url}/ipos/orbit`, keysOf(serving.stdout()).paid);
    expect(one.status).toBe(200);
    expect((one.body as IpoResponse).ipo.id).toBe('2026000001');
    expect(await serving.stop()).toBe(0);
  });

  it('refuses a bad dataset file with every problem listed, exit 1', async () => {
    const out = capture({ cwd: dir });
    expect(await runCli(['serve', '--port', '0', '--dataset', 'bad.json'], out.io)).toBe(1);
    const lines = out.stderr().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ipokit serve: dataset file \S+bad\.json is not a valid dataset: The dataset has \d+ problems/);
    expect(lines[1]).toMatch(/^\d+ problems; nothing was written:$/);
    expect(lines.slice(2)).toEqual(expect.arrayContaining([expect.stringMatching(/^  ipos\[0\]\.type: /), expect.stringMatching(/^  ipos\[1\]\.name: /)]));
    expect(out.stdout()).toBe('');
  });

  it.each([
    ['missing.json', /^ipokit serve: cannot read dataset file \S+missing\.json: ENOENT/],
    ['broken.json', /^ipokit serve: dataset file \S+broken\.json is not valid JSON: /],
  ])('says why %s cannot be served, exit 1', async (file, message) => {
    const out = capture({ cwd: dir });
    expect(await runCli(['serve', '--port', '0', '--dataset', file], out.io)).toBe(1);
    expect(out.stderr()).toMatch(message);
    expect(out.stderr().trimEnd().split('\n')).toHaveLength(1);
  });

  it('says when the port is taken, exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const out = capture({ cwd: dir, env: { PORT: String(port) } });
      expect(await runCli(['serve', '--dataset', 'orbit.json'], out.io)).toBe(1);
      expect(out.stderr()).toBe(`ipokit serve: cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port or PORT, or 0 for any free one)\n`);
    } finally {
      taken.close();
    }
  });

  it('listens on HOST from the environment; --host wins over it', async () => {
    const fromEnv = await startServe(['--dataset', 'orbit.json'], { env: { HOST: '127.0.0.2' } });
    try {
      expect(fromEnv.printed).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      expect((await get(`${fromEnv.url}/ipos/orbit`)).status).toBe(401);
      await expect(fetch(fromEnv.url.replace('127.0.0.2', '127.0.0.1'))).rejects.toThrow();
    } finally {
      expect(await fromEnv.stop()).toBe(0);
    }
    const flag = await startServe(['--dataset', 'orbit.json', '--host', '127.0.0.1'], { env: { HOST: '127.0.0.2' } });
    expect(flag.printed).toMatch(/^http:\/\/localhost:\d+$/);
    expect(await flag.stop()).toBe(0);
  });

  it('serves the OpenAPI document by default; --no-openapi turns it off, and the 404 says how to turn it on', async () => {
    const serving = await startServe(['--dataset', 'orbit.json']);
    try {
      const doc = await get(`${serving.url}/ipos/-/openapi.json`);
      expect(doc.status).toBe(200);
      expect((doc.body as { servers: unknown }).servers).toEqual([expect.objectContaining({ url: '/ipos' })]);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
    const off = await startServe(['--dataset', 'orbit.json', '--no-openapi']);
    try {
      const doc = await get(`${off.url}/ipos/-/openapi.json`);
      expect(doc.status).toBe(404);
      expect(doc.body).toMatchObject({ status: '404', code: 'ERR:NOTFOUND', detail: expect.stringContaining('set the router option openapi: true') });
    } finally {
      expect(await off.stop()).toBe(0);
    }
  });

  it('says when the host is not an address of this machine, naming --host and HOST, exit 1', async () => {
    const out = capture({ cwd: dir, env: { HOST: '192.0.2.1' } });
    expect(await runCli(['serve', '--port', '0', '--dataset', 'orbit.json'], out.io)).toBe(1);
    expect(out.stderr()).toBe(
      'ipokit serve: cannot listen on 192.0.2.1:0: no network interface of this machine has that address (choose another with --host or HOST; 0.0.0.0 is every interface)\n',
    );
  });

  it('refuses a bad PORT or IPOKIT_DRAIN_MS from the environment, exit 2', async () => {
    for (const env of [{ PORT: 'http' }, { IPOKIT_DRAIN_MS: '-1' }]) {
      const out = capture({ cwd: dir, env });
      expect(await runCli(['serve'], out.io)).toBe(2);
      expect(out.stderr()).toMatch(/^ipokit serve: (PORT|IPOKIT_DRAIN_MS) must be a whole number/);
    }
  });
});

describe('ipokit serve connection limits', () => {
  it('applies the limit flags and prints the limits under the address', async () => {
    const serving = await startServe(['--dataset', 'orbit.json', '--idle-timeout-ms', '300', '--headers-timeout-ms', '0', '--request-timeout-ms', '0', '--keep-alive-timeout-ms', '200', '--max-connections', '5']);
    try {
      expect(serving.stdout().split('\n')[1]).toBe(
        'Connections: at most 5, each closed after 300 ms without traffic; timeouts: headers off, request off, keep-alive 200 ms.',
      );
      const port = Number(new URL(serving.url).port);
      const silent = await connectRaw(port);
      expect(await within(silent.closed, 1500, 'the server closing a connection that sends nothing')).toBeGreaterThanOrEqual(250);
      const kept = await connectRaw(port);
      expect(await kept.get('/')).toBe(200);
      // Node waits a second more than the keep-alive timeout it advertises
      await within(kept.closed, 2500, 'the server closing an idle keep-alive connection');
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  });

  it('prints the default limits', async () => {
    const serving = await startServe(['--dataset', 'orbit.json']);
    expect(serving.stdout().split('\n')[1]).toMatch(
      /^Connections: at most \d+, each closed after 30 s without traffic; timeouts: headers 10 s, request 30 s, keep-alive 5 s\.$/,
    );
    expect(await serving.stop()).toBe(0);
  });

  it.each([
    [['--headers-timeout-ms', '1.5'], '--headers-timeout-ms must be a whole number from 0 to 2147483647, got "1.5"'],
    [['--request-timeout-ms=-1'], '--request-timeout-ms must be a whole number from 0 to 2147483647, got "-1"'],
    [['--keep-alive-timeout-ms', 'soon'], '--keep-alive-timeout-ms must be a whole number from 0 to 2147483647, got "soon"'],
    [['--idle-timeout-ms', '2147483648'], '--idle-timeout-ms must be a whole number from 0 to 2147483647, got "2147483648"'],
    [['--idle-timeout-ms', ''], '--idle-timeout-ms must be a whole number from 0 to 2147483647, got ""'],
    [['--max-connections', '0'], '--max-connections must be a whole number from 1 to 1000000, got "0"'],
    [['--max-connections', '1e3'], '--max-connections must be a whole number from 1 to 1000000, got "1e3"'],
    [['--max-connections'], 'option --max-connections needs a value'],
    [
      ['--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'],
      '--headers-timeout-ms (5000) must not exceed --request-timeout-ms (1000): the headers are part of the request; 0 turns either off',
    ],
    [['--headers-timeout-ms', '40000'], '--headers-timeout-ms (40000) must not exceed --request-timeout-ms (30000, the default): the headers are part of the request; 0 turns either off'],
    [
      ['--keep-alive-timeout-ms', '60000'],
      '--keep-alive-timeout-ms (60000) must not exceed --idle-timeout-ms (30000, the default): a connection waiting for its next request is idle too; 0 turns either off',
    ],
  ])('refuses %j, exit 2', async (args, message) => {
    const out = capture({ cwd: dir });
    expect(await runCli(['serve', '--port', '0', '--dataset', 'orbit.json', ...args], out.io)).toBe(2);
    const lines = out.stderr().split('\n');
    expect(lines[0]).toBe(`ipokit serve: ${message}`);
    expect(lines[1]).toMatch(/^Usage: ipokit serve /);
    expect(out.stderr()).toContain('[--idle-timeout-ms N] [--max-connections N]');
    expect(out.stdout()).toBe('');
  });

  it('explains each limit and its default in --help', async () => {
    const out = capture({ cwd: dir });
    expect(await runCli(['serve', '--help'], out.io)).toBe(0);
    // each flag, then its default before the next flag
    const help = out.stdout();
    for (const [flag, byDefault] of [
      ['--headers-timeout-ms N', '(default 10000)'],
      ['--request-timeout-ms N', '(default 30000)'],
      ['--keep-alive-timeout-ms N', '(default 5000)'],
      ['--idle-timeout-ms N', '(default 30000)'],
      ['--max-connections N', '(default 1000, or on Linux the open-files limit'],
    ] as const) {
      const at = help.indexOf(`\n  ${flag} `);
      expect(at, flag).toBeGreaterThan(0);
      const entry = help.slice(at + 1).split(/\n  --/)[0]!;
      expect(entry.replace(/\s+/g, ' ')).toContain(byDefault);
    }
    expect(help).toContain('0 turns a timeout off');
  });
});

describe('ipokit serve from PostgreSQL', () => {
  it('migrates and serves what is stored, with no key unless --demo-keys; --dataset imports first', async () => {
    const db = await openCliTestDatabase('serve');
    try {
      const io = { ...db.io() };
      const bare = await startServe(['--schema', db.schema], io);
      expect(bare.stdout()).toMatch(/^ipokit serving the 0 IPOs already stored from PostgreSQL at .+ \(schema ipokit_cli_serve_\w+\) with node:http at /);
      expect(bare.stdout()).toContain('No demo key was created (--demo-keys makes one per plan).');
      expect(bare.stdout()).not.toMatch(/ipk_[A-Za-z0-9]{32}/);
      expect(bare.stderr()).toContain("The database holds no IPO yet: load a dataset with 'ipokit import <file>'");
      expect(await bare.stop()).toBe(0);
      const accounts = async () => (await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".accounts`)).rows;
      expect(await accounts()).toEqual([{ n: 0 }]);

      const loaded = await startServe(['--schema', db.schema, '--dataset', 'orbit.json', '--demo-keys', '--framework', 'koa'], io);
      expect(loaded.stdout()).toMatch(/^ipokit serving orbit\.json from PostgreSQL .* with Koa at /);
      const keys = keysOf(loaded.stdout());
      const list = await get(`${loaded.url}/ipos?status=open&limit=5`, keys.pro);
      expect(list.status).toBe(200);
      expect((list.body as ListResponse).meta.count).toBe(1);
      expect(await loaded.stop()).toBe(0);
      expect(await accounts()).toEqual([{ n: 3 }]);

      // what is stored stays: a plain serve now serves it, with a key made by the CLI
      const account = capture({ ...io });
      await runCli(['accounts', 'create', '--name', 'Mine', '--plan', 'paid', '-q', '--schema', db.schema], account.io);
      const key = capture({ ...io });
      await runCli(['keys', 'create', '--account', account.stdout().trim(), '--label', 'mine', '-q', '--schema', db.schema], key.io);
      const again = await startServe([], { ...io, env: { ...io.env, IPOKIT_SCHEMA: db.schema } });
      expect(again.stdout()).toMatch(/^ipokit serving the 1 IPOs already stored from PostgreSQL/);
      expect((await get(`${again.url}/ipos/ORBIT`, key.stdout().trim())).status).toBe(200);
      expect(await again.stop()).toBe(0);
    } finally {
      await db.close();
    }
  }, 120_000);
});
