import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Where `npm start` listens: `--port N` / `--host H` on its command line (after `--`), else
// PORT / HOST, else 3000 on 127.0.0.1. Every message about the port names the flag and the
// variable, and the demo serves its OpenAPI document.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const BANNER = /^ipokit demo serving .* at (http:\/\/([^/]+))\/ipos$/m;

interface Demo {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the demo (`node main.ts ARGS`, or `npm start -- ARGS`) in memory on a one-IPO file. */
function start(args: string[], env: Record<string, string> = {}, viaNpm = false): Demo {
  const base = { ...process.env, DATABASE_URL: '', IPOKIT_DATASET: '', IPOKIT_DRAIN_MS: '500', PORT: '', HOST: '', ...env };
  const child = viaNpm
    ? spawn('npm', ['start', '--', ...args], { cwd: ROOT, env: base, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN, ...args], { env: base, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves with the banner's base URL, as printed, once the demo is serving. */
async function served(demo: Demo): Promise<{ printed: string; host: string }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const m = BANNER.exec(demo.output());
    if (m !== null) return { printed: m[1]!, host: m[2]! };
    const code = await Promise.race([demo.exited, new Promise((resolve) => setTimeout(() => resolve('waiting'), 100))]);
    if (code !== 'waiting') throw new Error(`the demo exited with ${String(code)}: ${demo.output()}`);
    if (Date.now() > deadline) throw new Error(`no banner: ${demo.output()}`);
  }
}

async function stop(demo: Demo, group = false): Promise<number | null> {
  if (group) process.kill(-demo.child.pid!, 'SIGTERM');
  else demo.child.kill('SIGTERM');
  return demo.exited;
}

function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, host, () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

let taken: Server;
let takenPort: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(() => {
  taken.close();
});

describe('npm start: port and host', () => {
  it('npm start -- --port N listens on N (and serves the OpenAPI document)', async () => {
    const port = await freePort();
    const demo = start(['--port', String(port)], {}, true);
    try {
      const { printed } = await served(demo);
      expect(printed).toBe(`http://localhost:${port}`);
      const list = await fetch(`http://127.0.0.1:${port}/ipos?status=listed`);
      expect(list.status).toBe(200);
      const doc = await fetch(`http://127.0.0.1:${port}/ipos/-/openapi.json`);
      expect(doc.status).toBe(200);
      expect(((await doc.json()) as { servers: unknown }).servers).toEqual([expect.objectContaining({ url: '/ipos' })]);
    } finally {
      await stop(demo, true);
    }
  }, 90_000);

  it('--host H --port 0 listens on H only, and says so in the banner', async () => {
    const demo = start(['--host', '127.0.0.2', '--port', '0', '--koa']);
    try {
      const { printed, host } = await served(demo);
      expect(printed).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      const port = Number(host.split(':')[1]);
      expect((await fetch(`http://127.0.0.2:${port}/ipos?status=listed`)).status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${port}/ipos?status=listed`)).rejects.toThrow();
      expect(demo.output()).toContain('with Koa at');
    } finally {
      expect(await stop(demo)).toBe(0);
    }
  }, 60_000);

  it('HOST and PORT from the environment; a flag wins over its variable', async () => {
    const port = await freePort('127.0.0.2');
    const fromEnv = start([], { HOST: '127.0.0.2', PORT: String(port) });
    try {
      expect((await served(fromEnv)).printed).toBe(`http://127.0.0.2:${port}`);
    } finally {
      expect(await stop(fromEnv)).toBe(0);
    }
    const flagWins = start(['--port', '0', '--host', '127.0.0.1'], { HOST: '127.0.0.2', PORT: String(takenPort) });
    try {
      expect((await served(flagWins)).printed).toMatch(/^http:\/\/localhost:\d+$/);
    } finally {
      expect(await stop(flagWins)).toBe(0);
    }
  }, 60_000);

  it.each([
    [[], { PORT: 'taken' }],
    [['--port', 'taken'], {}],
  ])('a port in use (%j %j) names --port and PORT, exit 1', async (args, env) => {
    const fill = (v: string) => (v === 'taken' ? String(takenPort) : v);
    const demo = start(args.map(fill), Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v)])));
    expect(await demo.exited).toBe(1);
    expect(demo.output()).toContain(`cannot listen on 127.0.0.1:${takenPort}: the port is in use (choose another with --port or PORT, or 0 for any free one)`);
  }, 30_000);

  it.each([
    [['--port', 'x'], {}, '--port must be a whole number from 0 to 65535, got "x"'],
    [[], { PORT: '70000' }, 'PORT must be a whole number from 0 to 65535, got "70000"'],
    [['--host', ''], {}, '--host must not be empty'],
    [['--bogus'], {}, 'unknown option --bogus'],
    [['--prot', '4000'], {}, 'unknown option --prot; did you mean --port?'],
  ])('refuses %j %j naming what to change, with the usage, exit 2', async (args, env, message) => {
    const demo = start(args, env);
    expect(await demo.exited).toBe(2);
    const lines = demo.output().trimEnd().split('\n');
    expect(lines[0]).toBe(`ipokit demo: ${message}`);
    expect(lines[1]).toMatch(/^Usage: npm start \[-- .*--port N.*--host H/);
  }, 30_000);
});
