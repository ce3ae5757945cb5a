import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { PUSH_PROGRESS_MIN_BYTES, pushDataset } from './push.js';
import { startServer, type RunningServer } from './server.js';
import { capture } from './test-helpers.js';

// `ipokit push FILE --url URL --token-file F` end to end, against a started server with the
// push route (memory).

const TOKEN = 't'.repeat(40);
const ORBIT = { id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-20', endDate: '2026-11-24' };
const NOVA = { id: '2026000002', name: 'Nova Foods Ltd', symbol: 'NOVA', slug: 'nova-foods-ipo', type: 'SME', exchanges: ['nse'], startDate: '2026-11-21', endDate: '2026-11-25' };
const PUSHED = {
  ipos: [NOVA],
  gmp: [{ ipoId: NOVA.id, timestamp: '2026-11-22T09:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12 }] }],
};
const MAX_BYTES = 3 * 1024 * 1024;

let dir: string;
let running: RunningServer;
let url: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-push-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify({ ipos: [ORBIT] }));
  await writeFile(join(dir, 'token.txt'), `# push token\n${TOKEN}\n`);
  await writeFile(join(dir, 'wrong-token.txt'), `${'w'.repeat(40)}\n`);
  await writeFile(join(dir, 'nova.json'), JSON.stringify(PUSHED));
  await writeFile(join(dir, 'bad.json'), JSON.stringify({ ipos: [{ ...NOVA, id: '2026000003', symbol: 'B3', slug: 'b3', endDate: '2026-11-01' }, { id: 'x' }] }));
  // 2 MiB of JSON: one IPO and white space
  await writeFile(join(dir, 'large.json'), `{"ipos":[${JSON.stringify({ ...NOVA, id: '2026000004', symbol: 'L4', slug: 'l4' })}]}${' '.repeat(2 * 1024 * 1024)}`);
  await writeFile(join(dir, 'huge.json'), `{"ipos":[]}${' '.repeat(MAX_BYTES + 1)}`);
  running = await startServer({
    port: 0,
    datasetFile: join(dir, 'orbit.json'),
    ingest: { tokens: [TOKEN], maxBytes: MAX_BYTES },
    router: { limits: { pro: { perMinute: Infinity, gmpPerMinute: Infinity } } },
    onError: () => undefined,
  });
  url = running.url.replace('localhost', '127.0.0.1');
});
afterAll(async () => {
  running.server.closeAllConnections();
  await running.close();
  await rm(dir, { recursive: true, force: true });
});

async function push(args: string[], io: Partial<CliIo> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = capture({ cwd: dir, ...io });
  const code = await runCli(['push', ...args], out.io);
  return { code, stdout: out.stdout(), stderr: out.stderr() };
}

async function ipoStatus(id: string): Promise<number> {
  const res = await fetch(`${url}/ipos/${id}`, { headers: { 'x-api-key': running.keys!.pro } });
  await res.arrayBuffer();
  return res.status;
}

describe('ipokit push', () => {
  it('sends the file and prints the counts the server wrote', async () => {
    const r = await push(['nova.json', '--url', `${url}/`, '--token-file', 'token.txt']);
    expect(r).toEqual({ code: 0, stdout: 'pushed nova.json: wrote 1 IPOs, 1 GMP snapshots and 0 subscription snapshots\n', stderr: '' });
    expect(await ipoStatus(NOVA.id)).toBe(200);
    const json = await push(['nova.json', '--url', url, '--token-file', 'token.txt', '--json']);
    expect(json).toEqual({ code: 0, stdout: '{"ipos":1,"gmp":1,"subscription":0}\n', stderr: '' });
  });

  it('a refused dataset: every problem, as ipokit import prints them, exit 1, nothing written', async () => {
    const r = await push(['bad.json', '--url', url, '--token-file', 'token.txt']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ipos\[0\]\.endDate: endDate 2026-11-01 is before startDate 2026-11-21/);
    expect(lines.slice(1, -1).every((l) => /^ipos\[1\]\.\w+: /.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^ipokit push: bad\.json was refused: \d+ problems; nothing was written$/);
    expect(await ipoStatus('2026000003')).toBe(404);
  });

  it('a wrong token: one line, exit 1, and no body sent (no progress line: not a byte of the file was read)', async () => {
    const r = await push(['huge.json', '--url', url, '--token-file', 'wrong-token.txt']);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ipokit push: the server refused the token of --token-file (401): A valid ingest token is required: send it as Authorization: Bearer <token>.\n',
    });
  });

  it('a file larger than the server takes: one line, exit 1', async () => {
    const r = await push(['huge.json', '--url', url, '--token-file', 'token.txt']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ipokit push: huge.json (${MAX_BYTES + 12} bytes) is larger than the server accepts (413): The request body is larger than ${MAX_BYTES} bytes (the server's --ingest-max-bytes): split the dataset into smaller pushes.\n`);
  });

  it('a server that cannot be reached: one line, exit 1', async () => {
    const port = await freePort();
    const r = await push(['nova.json', '--url', `http://127.0.0.1:${port}`, '--token-file', 'token.txt']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^ipokit push: cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; nothing was written\\n$`));
  });

  it('a server without the push route: one line saying so, exit 1', async () => {
    const plain = await startServer({ port: 0, datasetFile: join(dir, 'orbit.json') });
    try {
      const r = await push(['nova.json', '--url', plain.url, '--token-file', 'token.txt']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^ipokit push: the server has no push route at http:\/\/localhost:\d+\/-\/ingest \(404\): is it started with --ingest-token-file\?: /);
    } finally {
      await plain.close();
    }
  });

  it.each([
    [['nova.json', '--token-file', 'token.txt'], /^ipokit push: missing option --url$/],
    [['nova.json', '--url', 'URL'], /^ipokit push: missing option --token-file$/],
    [['--url', 'URL', '--token-file', 'token.txt'], /^ipokit push: missing argument <file>$/],
    [['nova.json', '--url', 'ftp://x', '--token-file', 'token.txt'], /^ipokit push: --url must be an http: or https: URL, got "ftp:\/\/x"$/],
    [['nova.json', '--url', 'localhost:3000', '--token-file', 'token.txt'], /^ipokit push: --url must be an http: or https: URL/],
    [['nova.json', '--url', 'URL', '--token-file', 'missing.txt'], /^ipokit push: cannot read ingest token file missing\.txt: no such file$/],
  ])('usage error %j: one line, the usage, exit 2', async (args, message) => {
    const r = await push(args.map((a) => (a === 'URL' ? url : a)));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toMatch(message);
    expect(r.stderr.split('\n')[1]).toMatch(/^Usage: ipokit push /);
  });

  it('a file that cannot be read: one line, exit 1', async () => {
    const r = await push(['nope.json', '--url', url, '--token-file', 'token.txt']);
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'ipokit push: cannot read nope.json: no such file; nothing was sent\n' });
  });
});

describe('ipokit push progress', () => {
  it('on a terminal: one line drawn again at most every 250 ms, bytes sent of the total, ended at 100%', async () => {
    const stderr = fakeStderr(true);
    const out = capture({ cwd: dir, stderr: stderr.stream });
    let t = 0;
    // every read of the clock is 20 ms later: about one draw in 13 chunks
    const code = await pushDataset({ file: 'large.json', url, token: TOKEN, clock: () => (t += 20) }, out.io);
    expect(code).toBe(0);
    expect(out.stdout()).toBe('pushed large.json: wrote 1 IPOs, 0 GMP snapshots and 0 subscription snapshots\n');
    const text = stderr.text();
    expect(text.endsWith('\n')).toBe(true);
    const draws = text.trimEnd().split('\r').filter((d) => d !== '');
    expect(draws.length).toBeGreaterThanOrEqual(2);
    expect(draws.every((d) => /^pushing \[[#-]{24}\] +\d+%  \d+\.\d of 2\.0 MiB\u001b\[K$/.test(d))).toBe(true);
    expect(draws.at(-1)).toMatch(/\[#{24}\] 100%  2\.0 of 2\.0 MiB/);
    // 2 MiB goes in chunks of 64 KiB: 33 or so updates, each 20 ms apart; at most one draw per 250 ms and the last
    const updates = Math.ceil((2 * 1024 * 1024 + 200) / 65_536);
    expect(draws.length).toBeLessThanOrEqual(Math.ceil((updates * 20) / 250) + 2);
  });

  it('not on a terminal: one final line, nothing before', async () => {
    const stderr = fakeStderr(false);
    const out = capture({ cwd: dir, stderr: stderr.stream });
    expect(await pushDataset({ file: 'large.json', url, token: TOKEN }, out.io)).toBe(0);
    expect(stderr.text()).toMatch(/^ipokit push: sent 2,097,\d{3} of 2,097,\d{3} bytes in \d+\.\d s\n$/);
  });

  it('none for a small file, on a terminal or not', async () => {
    for (const tty of [true, false]) {
      const stderr = fakeStderr(tty);
      const out = capture({ cwd: dir, stderr: stderr.stream });
      expect(await pushDataset({ file: 'nova.json', url, token: TOKEN }, out.io)).toBe(0);
      expect(stderr.text()).toBe('');
    }
    expect(PUSH_PROGRESS_MIN_BYTES).toBe(1024 * 1024);
  });
});

/** A stderr that says it is (or is not) a terminal, and records what is written. */
function fakeStderr(isTTY: boolean): { stream: NodeJS.WritableStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  Object.assign(stream, { isTTY });
  return { stream, text: () => text };
}

/** A port nothing listens on (it was free a moment ago). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
