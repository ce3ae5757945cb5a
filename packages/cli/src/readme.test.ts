import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ListResponse } from '@ipokit/core';
import { runCli } from './index.js';
import { capture, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';
import { shellWords, stripComment } from './test-readme.js';

// The README's "Command line" block runs as written, line by line and in order: every
// `npm run ipokit -- ...` line (in-process through runCli on PGlite; as real `npm run`
// child processes against the real PostgreSQL when DATABASE_URL is set), the curl line
// against the server it started, the variables the block captures, and its `kill %1`.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL || undefined;

/** The first ```sh block of the README section `## Command line`. */
async function readmeBlock(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Command line\n');
  if (start < 0) throw new Error('README has no "## Command line" section');
  const end = readme.indexOf('\n## ', start + 1);
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(start, end < 0 ? undefined : end));
  if (m === null) throw new Error('the "Command line" section has no ```sh block');
  return m[1]!.split('\n').map(stripComment).filter((line) => line !== '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `ipokit` commands the way the README's reader would, in this test's world. */
interface Runner {
  run(npmArgs: string[]): Promise<Ran>;
  /** Starts a command that serves; resolves once it prints where, with a way to stop it. */
  background(npmArgs: string[]): Promise<{ stop(): Promise<void>; output(): string }>;
}

/** `npm run [-s] ipokit -- ARGS`: the ipokit arguments. */
function ipokitArgs(npmArgs: string[]): string[] {
  const at = npmArgs.indexOf('--');
  const head = npmArgs.slice(0, at);
  if (at < 0 || !(head.join(' ') === 'run ipokit' || head.join(' ') === 'run -s ipokit')) {
    throw new Error(`not an "npm run ipokit -- ..." line: npm ${npmArgs.join(' ')}`);
  }
  return npmArgs.slice(at + 1);
}

const BANNER = / at (http:\/\/localhost:\d+)\/ipos\n/;

/** In-process: runCli on the test database (PGlite via io.openDatabase). */
function inProcess(db: CliTestDatabase, env: Record<string, string>, cwd: string): Runner {
  return {
    async run(npmArgs) {
      const out = capture({ ...db.io(env), cwd });
      const code = await runCli(ipokitArgs(npmArgs), out.io);
      return { code, stdout: out.stdout(), stderr: out.stderr() };
    },
    async background(npmArgs) {
      const controller = new AbortController();
      const out = capture({ ...db.io(env), cwd, signal: controller.signal });
      const done = runCli(ipokitArgs(npmArgs), out.io);
      await Promise.race([
        out.waitForStdout(BANNER, 120_000),
        done.then((code) => Promise.reject(new Error(`exited with ${code}: ${out.stderr()}`))),
      ]);
      return {
        output: () => out.stdout() + out.stderr(),
        async stop() {
          controller.abort();
          expect(await done).toBe(0);
        },
      };
    },
  };
}

/** Child processes: `npm --prefix ROOT run ...` from a scratch directory, on the real PostgreSQL. */
function childProcesses(env: Record<string, string>, cwd: string): Runner {
  const start = (npmArgs: string[], detached: boolean): ChildProcess => {
    ipokitArgs(npmArgs);
    return spawn('npm', ['--prefix', ROOT, ...npmArgs], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached });
  };
  return {
    run(npmArgs) {
      const child = start(npmArgs, false);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
    },
    async background(npmArgs) {
      // Its own process group, like a shell job: `kill %1` signals npm and the server alike.
      const child = start(npmArgs, true);
      let output = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          output += d.toString();
          if (BANNER.test(output)) resolve();
        });
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        void exited.then((code) => reject(new Error(`exited with ${code}: ${output}`)));
      });
      return {
        output: () => output,
        async stop() {
          process.kill(-child.pid!, 'SIGTERM');
          await exited;
        },
      };
    },
  };
}

describe(`the README's Command line block (${DATABASE_URL ? 'child processes on PostgreSQL' : 'in-process on PGlite'})`, () => {
  it('runs as written: import your data, create your keys, serve, curl, rotate, usage, revoke', async () => {
    const lines = await readmeBlock();
    expect(lines[0]).toBe('npm ci');
    expect(lines[1]).toMatch(/^export DATABASE_URL=postgres:\/\/\S+$/);
    expect(lines.filter((l) => / ipokit -- /.test(l)).map((l) => /ipokit -- ([a-z-]+(?: [a-z]+)?)/.exec(l)?.[1])).toEqual(
      expect.arrayContaining(['migrate', 'demo-data', 'import ipos', 'accounts create', 'keys create', 'keys list', 'serve', 'keys rotate', 'usage', 'keys revoke']),
    );

    const db = await openCliTestDatabase('readme');
    const cwd = await mkdtemp(join(tmpdir(), 'ipokit-readme-'));
    const port = await freePort();
    const env = { IPOKIT_SCHEMA: db.schema, PORT: String(port), IPOKIT_DRAIN_MS: '2000', ...(DATABASE_URL ? { DATABASE_URL } : {}) };
    const runner = DATABASE_URL ? childProcesses(env, cwd) : inProcess(db, env, cwd);
    const vars = new Map<string, string>();
    let server: Awaited<ReturnType<Runner['background']>> | null = null;
    let lastCurl: { url: string; headers: Record<string, string> } | null = null;
    const ran: string[] = [];
    try {
      for (const line of lines.slice(2)) {
        ran.push(line);
        const assignment = /^([A-Z_][A-Z0-9_]*)=\$\((.*)\)$/.exec(line);
        if (assignment !== null) {
          const words = shellWords(assignment[2]!, vars);
          expect(words[0], line).toBe('npm');
          const r = await runner.run(words.slice(1));
          expect(r.code, `${line}\n${r.stderr}`).toBe(0);
          vars.set(assignment[1]!, r.stdout.replace(/\n+$/, ''));
          continue;
        }
        if (line === 'kill %1') {
          expect(server, 'kill %1 with no server running').not.toBeNull();
          await server!.stop();
          server = null;
          continue;
        }
        const background = line.endsWith(' &');
        const words = shellWords(background ? line.slice(0, -2) : line, vars);
        if (words[0] === 'npm') {
          if (background) {
            expect(server, 'a second server').toBeNull();
            server = await runner.background(words.slice(1));
          } else {
            const r = await runner.run(words.slice(1));
            expect(r.code, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
            if (words.includes('revoke') && lastCurl !== null) await expectRefusedSoon(lastCurl);
          }
        } else if (words[0] === 'curl') {
          expect(server, 'curl with no server running').not.toBeNull();
          lastCurl = curlRequest(words, port);
          const res = await fetch(lastCurl.url, { headers: lastCurl.headers });
          const body = (await res.json()) as ListResponse;
          expect(res.status, JSON.stringify(body)).toBe(200);
          expect(body.meta.count).toBeGreaterThan(100);
          expect(body.ipos).toHaveLength(5);
        } else {
          throw new Error(`the test does not know how to run this README line: ${line}`);
        }
      }
      expect(vars.get('ACCOUNT')).toMatch(/^acct_\w+$/);
      expect(vars.get('KEY')).toMatch(/^ipk_[A-Za-z0-9]{32}$/);
      expect(vars.get('KEY_ID')).toMatch(/^key_\w+$/);
      expect(vars.get('NEW_KEY')).toMatch(/^ipk_[A-Za-z0-9]{32}$/);
      expect(vars.get('NEW_KEY')).not.toBe(vars.get('KEY'));
      expect(ran.at(-1)).toBe('kill %1');
    } finally {
      await server?.stop().catch(() => undefined);
      await db.close();
      await rm(cwd, { recursive: true, force: true });
    }
  }, 300_000);
});

/** The README's curl line as a fetch: its URL (port 3000 moved to the test's port) and headers. */
function curlRequest(words: string[], port: number): { url: string; headers: Record<string, string> } {
  const url = words.find((w) => w.startsWith('http://'));
  if (url === undefined) throw new Error(`no URL in: curl ${words.join(' ')}`);
  expect(url.startsWith('http://localhost:3000/'), 'the README curl should use the default port').toBe(true);
  const headers: Record<string, string> = {};
  words.forEach((w, i) => {
    if (w === '-H') {
      const [name, ...value] = (words[i + 1] ?? '').split(':');
      headers[name!.trim()] = value.join(':').trim();
    }
  });
  return { url: url.replace('localhost:3000', `127.0.0.1:${port}`), headers };
}

/** After `keys revoke`, the running server refuses the key within 5 s (its key cache). */
async function expectRefusedSoon(request: { url: string; headers: Record<string, string> }): Promise<void> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const res = await fetch(request.url, { headers: request.headers });
    await res.arrayBuffer();
    if (res.status === 401) return;
    if (Date.now() > deadline) throw new Error(`the revoked key is still accepted: ${res.status}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
