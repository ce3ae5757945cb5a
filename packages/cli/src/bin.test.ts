import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { SCHEMA_VERSION } from '@ipokit/storage-postgres';
import { VERSION } from './index.js';

// The real `ipokit` process: `node --conditions=source --import tsx packages/cli/src/bin.ts`.

const BIN = fileURLToPath(new URL('./bin.ts', import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL;

interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function ipokit(args: string[], env: Record<string, string> = {}): Promise<Exited> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, ...args], {
    env: { ...process.env, DATABASE_URL: '', IPOKIT_SCHEMA: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr).not.toMatch(/Error:/);
}

describe('the ipokit process', () => {
  it('prints its version and help, exit 0', async () => {
    expect(await ipokit(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    const help = await ipokit(['keys', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ipokit keys create/);
  });

  it.each([
    [['serv'], 'ipokit: unknown command "serv"; did you mean "serve"?'],
    [['keys', 'craete'], 'ipokit keys: unknown action "craete"; did you mean "create"?'],
    [['serve', '--prot', '80'], 'ipokit serve: unknown option --prot; did you mean --port?'],
    [['migrate', '--force'], 'ipokit migrate: unknown option --force'],
    [['keys', 'create', '--account', 'a'], 'ipokit keys create: missing option --label'],
    [['accounts', 'create', '--name', 'A', '--plan', 'gold'], 'ipokit accounts create: --plan must be free, paid or pro, got "gold"'],
    [['migrate'], 'ipokit migrate: set DATABASE_URL=postgres://user:password@host:5432/database to say which PostgreSQL to use'],
  ])('bad input %j: one line and the usage on stderr, exit 2', async (args, line) => {
    const r = await ipokit(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(line);
    expect(lines[1]).toMatch(/^Usage: ipokit /);
    expectNoStack(r.stderr);
  });

  it('a database that cannot be reached: one line, exit 1', async () => {
    const r = await ipokit(['keys', 'list', '--account', 'a'], { DATABASE_URL: 'postgres://app:pw@127.0.0.1:1/ipos' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ipokit keys list: cannot connect to PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/ipos: [^\n]*ECONNREFUSED[^\n]*\n$/);
  });

  it('writes the demo dataset to stdout, the same bytes each time', async () => {
    const a = await ipokit(['demo-data', '--today', '2026-11-23', '--seed', '3']);
    const b = await ipokit(['demo-data', '--today', '2026-11-23', '--seed', '3']);
    expect(a.code).toBe(0);
    expect(a.stdout.length).toBeGreaterThan(1_000_000);
    expect(b.stdout).toBe(a.stdout);
  });

  it('ends quietly when the reader of its output goes away (ipokit demo-data | head)', async () => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, 'demo-data'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = new Promise<number | null>((resolve) => child.once('close', resolve));
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    expect(await code).toBe(0);
    expect(stderr).toBe('');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('serve answers, then drains and exits 0 on %s', async (signal) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, 'serve', '--port', '0'], {
      env: { ...process.env, DATABASE_URL: '', IPOKIT_DRAIN_MS: '2000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const all: string[] = [];
    const url = await new Promise<string>((resolve) =>
      lines.on('line', (line) => {
        all.push(line);
        const m = / at (http:\/\/localhost:\d+)\/ipos$/.exec(line);
        if (m) resolve(m[1]!.replace('localhost', '127.0.0.1'));
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const key = /^ {2}paid {2}(ipk_\w+)$/m.exec(all.join('\n'))?.[1];
    const res = await fetch(`${url}/ipos?status=listed`, { headers: { 'x-api-key': key ?? '' } });
    expect(res.status).toBe(200);
    child.kill(signal);
    expect(await exited).toBe(0);
  }, 30_000);

  it('serve --print-config prints the settings and exits 0; a config file with problems lists them all, exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ipokit-bin-config-'));
    try {
      await writeFile(join(dir, 'bad.json'), JSON.stringify({ port: 'http', limits: { free: { perMinute: 0 } } }));
      const printed = await ipokit(['serve', '--print-config', '--port', '8080'], { PORT: '', HOST: '0.0.0.0', IPOKIT_CONFIG: '' });
      expect(printed).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(printed.stdout)).toMatchObject({ port: 8080, host: '0.0.0.0', mount: '/ipos', openapi: true, log: 'text' });
      const bad = await ipokit(['serve', '--config', join(dir, 'bad.json')], { PORT: '', HOST: '', IPOKIT_CONFIG: '' });
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.split('\n').slice(1)).toEqual([
        '  port: must be a whole number from 0 to 65535, got "http"',
        '  limits.free.perMinute: must be a whole number of requests >= 1, or "off" to turn the window off, got 0',
        '',
      ]);
      expectNoStack(bad.stderr);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.runIf(DATABASE_URL)('runs against the real PostgreSQL of DATABASE_URL: migrate, accounts, keys, serve', async () => {
    const schema = `ipokit_cli_bin_${process.pid}`;
    const env = { DATABASE_URL: DATABASE_URL!, IPOKIT_SCHEMA: schema };
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    try {
      const versions = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(', ');
      expect(await ipokit(['migrate'], env)).toMatchObject({ code: 0, stdout: `Migrated schema ${schema} to version ${SCHEMA_VERSION} (applied ${versions}).\n` });
      const account = await ipokit(['accounts', 'create', '--name', 'Acme', '--plan', 'pro', '--gmp-addon', '-q'], env);
      expect(account.code).toBe(0);
      const created = await ipokit(['keys', 'create', '--account', account.stdout.trim(), '--label', 'bin test', '--json'], env);
      const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
      const listed = await ipokit(['keys', 'list', '--account', account.stdout.trim()], env);
      expect(listed.stdout).toContain(id);
      expect(listed.stdout).not.toContain(key);
      const dup = await ipokit(['accounts', 'update', 'acct_missing', '--plan', 'free'], env);
      expect(dup).toMatchObject({ code: 1, stderr: 'ipokit accounts update: No account has the id "acct_missing".\n' });
      expect(await ipokit(['keys', 'revoke', id], env)).toMatchObject({ code: 0 });
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  }, 60_000);
});
