import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, runDemo } from '@ipokit/cli';
import { capture } from '../../packages/cli/src/test-helpers.js';

// `npm start` has the connection limits of `ipokit serve`: run under `ulimit -n 200`, it
// takes at most 200 - 64 = 136 connections (the rest of the open files are kept for the
// process), refuses the next one, and still answers on those it holds.

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const OPEN_FILES = 200;
const MAX = OPEN_FILES - 64;

/** A raw connection that reads what it is sent, so that it sees the server close it. */
function open(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.on('data', (d: Buffer) => (data += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('the demo server’s connection limits', () => {
  it.runIf(process.platform === 'linux')(`prints them, and under ulimit -n ${OPEN_FILES} refuses connection ${MAX + 1} while serving the ${MAX} it holds`, async () => {
    const child = spawn('/bin/sh', ['-c', `ulimit -n ${OPEN_FILES} && exec "$0" "$@"`, process.execPath, '--conditions=source', '--import', 'tsx', MAIN], {
      env: { ...process.env, PORT: '0', DATABASE_URL: '', IPOKIT_DATASET: '', IPOKIT_DRAIN_MS: '500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const held: Array<Awaited<ReturnType<typeof open>>> = [];
    try {
      const lines: string[] = [];
      const input = createInterface({ input: child.stdout! });
      const port = await new Promise<number>((resolve, reject) => {
        input.on('line', (line) => {
          lines.push(line);
          const m = /at http:\/\/localhost:(\d+)\/ipos$/.exec(lines[0] ?? '');
          if (m && lines.length === 2) resolve(Number(m[1]));
        });
        void exited.then((code) => reject(new Error(`the demo exited with ${code}: ${stderr}`)));
      });
      expect(lines[1]).toBe(`Connections: at most ${MAX}, each closed after 30 s without traffic; timeouts: headers 10 s, request 30 s, keep-alive 5 s.`);

      for (let i = 0; i < MAX; i++) held.push(await open(port));
      // the server counts a connection when it accepts it: one round trip on the last one makes sure all are counted
      const last = held.at(-1)!;
      last.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise<void>((resolve) => last.socket.once('data', () => resolve()));
      expect(last.received()).toMatch(/^HTTP\/1\.1 200 OK/);

      const extra = await open(port).catch(() => null);
      if (extra !== null) {
        await Promise.race([extra.closed, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('connection past the limit still open')), 1000))]);
        expect(extra.received()).toBe('');
      }
      const first = held[0]!;
      first.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise<void>((resolve) => first.socket.once('data', () => resolve()));
      expect(first.received()).toMatch(/^HTTP\/1\.1 200 OK/);
    } finally {
      for (const h of held) h.socket.destroy();
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 30_000);
});

// The demo's rate limits are tiered (free 6 a minute, GMP 3; paid 60, GMP 30; pro 600, GMP
// 300; keyless 6), a layer under the user's own: `--limit` and the config file win over
// them window by window. `ipokit serve` keeps the contract's 6 for every plan.

type Limits = Record<'free' | 'paid' | 'pro', { perMinute: number | 'off'; gmpPerMinute: number | 'off' }> & { keyless: { perMinute: number | 'off' } };

/** The limits that `--print-config` prints for these arguments (`npm start` or, with `serve` first, `ipokit serve`). */
async function printedLimits(argv: string[], env: Record<string, string> = {}, cwd = process.cwd()): Promise<Limits> {
  const out = capture({ env, cwd });
  const code = argv[0] === 'serve' ? await runCli([...argv, '--print-config'], out.io) : await runDemo([...argv, '--print-config'], out.io);
  expect(out.stderr()).toBe('');
  expect(code).toBe(0);
  return (JSON.parse(out.stdout()) as { limits: Limits }).limits;
}

describe('the demo’s rate limits per plan', () => {
  it('are tiered in the demo, and the same 6 a minute for every plan in ipokit serve', async () => {
    expect(await printedLimits([])).toMatchObject({
      free: { perMinute: 6, perHour: 'off', perDay: 'off', gmpPerMinute: 3, gmpPerDay: 'off' },
      paid: { perMinute: 60, perHour: 'off', perDay: 'off', gmpPerMinute: 30, gmpPerDay: 'off' },
      pro: { perMinute: 600, perHour: 'off', perDay: 'off', gmpPerMinute: 300, gmpPerDay: 'off' },
      keyless: { perMinute: 6, perHour: 'off', perDay: 'off' },
    });
    const serve = await printedLimits(['serve']);
    for (const plan of ['free', 'paid', 'pro'] as const) expect(serve[plan]).toMatchObject({ perMinute: 6, gmpPerMinute: 3 });
    expect(serve.keyless).toMatchObject({ perMinute: 6 });
  });

  it('give way to the user’s --limit, config file and IPOKIT_CONFIG, window by window', async () => {
    expect(await printedLimits(['--limit', 'paid.perMinute=7', '--limit', 'free.gmpPerMinute=off'])).toMatchObject({
      free: { perMinute: 6, gmpPerMinute: 'off' },
      paid: { perMinute: 7, gmpPerMinute: 30 },
      pro: { perMinute: 600, gmpPerMinute: 300 },
    });
    const dir = await mkdtemp(join(tmpdir(), 'ipokit-demo-limits-'));
    try {
      await writeFile(join(dir, 'limits.json'), JSON.stringify({ limits: { pro: { perMinute: 9, gmpPerDay: 50 }, keyless: { perMinute: 'off' } } }));
      const fromFile = { free: { perMinute: 6, gmpPerMinute: 3 }, paid: { perMinute: 60, gmpPerMinute: 30 }, pro: { perMinute: 9, gmpPerMinute: 300, gmpPerDay: 50 }, keyless: { perMinute: 'off' } };
      expect(await printedLimits(['--config', 'limits.json'], {}, dir)).toMatchObject(fromFile);
      expect(await printedLimits([], { IPOKIT_CONFIG: 'limits.json' }, dir)).toMatchObject(fromFile);
      // the flag wins over the file
      expect(await printedLimits(['--config', 'limits.json', '--limit', 'pro.perMinute=12'], {}, dir)).toMatchObject({ pro: { perMinute: 12, gmpPerMinute: 300 } });

      // a file's problems are still its own
      await writeFile(join(dir, 'bad.json'), JSON.stringify({ limits: { paid: 5, pro: { perMinute: 0 } } }));
      const out = capture({ env: {}, cwd: dir });
      expect(await runDemo(['--config', 'bad.json'], out.io)).toBe(2);
      expect(out.stderr()).toMatch(/^ipokit demo: config file bad\.json has 2 problems; nothing was served:\n {2}limits\.paid: must be a JSON object of [^\n]*\n {2}limits\.pro\.perMinute: [^\n]*, got 0\n$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('are printed in the banner and applied by the served demo', async () => {
    const stop = new AbortController();
    const out = capture({ env: { IPOKIT_DRAIN_MS: '500', IPOKIT_LOG: 'off' }, signal: stop.signal });
    const done = runDemo(['--port', '0', '--limit', 'pro.gmpPerMinute=200'], out.io);
    try {
      await Promise.race([out.waitForStdout(/^ {2}pro +ipk_/m, 120_000), done.then((code) => Promise.reject(new Error(`exited ${code}: ${out.stderr()}`)))]);
      const banner = out.stdout();
      expect(banner).toContain('API keys (shown once; limits: free 6 requests/min, GMP 3/min; paid 60 requests/min, GMP 30/min; pro 600 requests/min, GMP 200/min):\n');
      const api = /at (http:\/\/\S+\/ipos)$/m.exec(banner)![1]!;
      const keys: Record<string, string> = {};
      for (const m of banner.matchAll(/^ {2}(free|paid|pro) +(ipk_[A-Za-z0-9]{32})/gm)) keys[m[1]!] = m[2]!;
      const get = (path: string, key?: string) => fetch(`${api}${path}`, key === undefined ? {} : { headers: { 'x-api-key': key } });

      const first = await get('?status=listed&limit=1', keys.paid);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('60');
      const id = ((await first.json()) as { ipos: Array<{ id: string }> }).ipos[0]!.id;
      // the GMP route also draws on the GMP window, which is closer to refusing
      const gmp = await get(`/${id}/gmp?interval=daily&field=median`, keys.paid);
      expect(gmp.headers.get('ratelimit-limit')).toBe('30');
      await gmp.body?.cancel();
      const pro = await get('?status=listed&limit=1', keys.pro);
      expect(pro.headers.get('ratelimit-limit')).toBe('600');
      await pro.body?.cancel();
      const keyless = await get('?status=listed&limit=1');
      expect(keyless.headers.get('ratelimit-limit')).toBe('6');
      await keyless.body?.cancel();

      // the dashboard's explorer (the account router's /ipos) draws on the same tiered windows
      const signIn = /^Account dashboard: (\S+)/m.exec(banner)![1]!;
      const signedIn = await fetch(`${signIn}?plan=paid`, { redirect: 'manual' });
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      await signedIn.body?.cancel();
      const explorer = await fetch(new URL('/account/ipos?status=listed&limit=1', api), { headers: { cookie } });
      expect(explorer.status).toBe(200);
      expect(explorer.headers.get('ratelimit-limit')).toBe('60');
      await explorer.body?.cancel();

      // free still meets its limit: 6 a minute, then 429
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await get('?status=listed&limit=1', keys.free);
        statuses.push(r.status);
        await r.body?.cancel();
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    } finally {
      stop.abort();
    }
    expect(await done).toBe(0);
  }, 180_000);
});
