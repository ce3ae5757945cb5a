import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAccessLog, redactTarget, type AccessLogEntry } from './access-log.js';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { capture } from './test-helpers.js';

// The access log of `ipokit serve`: a line per request on stdout once its response is
// done (text by default, JSON with --log json, none with --log off), naming method,
// target, status, time, client address and the account of a valid key, and never a key.

const ORBIT = {
  ipos: [{ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2099-11-24' }],
};
const STRANGER = `ipk_${'Z'.repeat(32)}`;
const TEXT_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) ([A-Z]+) (\S+) (\d{3}) (\d+(?:\.\d)?)ms (\S+) (\S+)( aborted)?$/;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-access-log-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify(ORBIT));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('redactTarget', () => {
  it.each([
    ['/ipos?status=open&limit=5', '/ipos?status=open&limit=5'],
    ['/ipos?status=open&api_key=abc&x-api-key=1&apiKey=2&token=t&access_token=u&password=p&sig=s&Authorization=a', '/ipos?status=open&api_key=***&x-api-key=***&apiKey=***&token=***&access_token=***&password=***&sig=***&Authorization=***'],
    ['/ipos?%61pi_key=abc&key', '/ipos?%61pi_key=***&key'],
    [`/ipos/${STRANGER}/gmp`, '/ipos/ipk_***/gmp'],
    [`/ipos?q=${STRANGER}`, '/ipos?q=ipk_***'],
    ['/ipos/a b"c\\d\u00e9\u0001', '/ipos/a%20b%22c%5Cd%C3%A9%01'],
  ])('%s', (target, logged) => {
    expect(redactTarget(target)).toBe(logged);
  });

  it('cuts a long target', () => {
    const logged = redactTarget(`/ipos?pad=${'x'.repeat(5000)}`);
    expect(logged).toHaveLength(2048 + 3);
    expect(logged.endsWith('...')).toBe(true);
  });
});

describe('formatAccessLog', () => {
  const entry: AccessLogEntry = { time: '2026-11-23T06:30:00.000Z', method: 'GET', path: '/ipos?status=open', status: 200, ms: 3.2, address: '203.0.113.9', account: 'acct_1' };
  it('writes text with - for what is unknown, or JSON', () => {
    expect(formatAccessLog(entry, 'text')).toBe('2026-11-23T06:30:00.000Z GET /ipos?status=open 200 3.2ms 203.0.113.9 acct_1');
    expect(formatAccessLog({ ...entry, address: null, account: null, aborted: true }, 'text')).toBe('2026-11-23T06:30:00.000Z GET /ipos?status=open 200 3.2ms - - aborted');
    expect(JSON.parse(formatAccessLog(entry, 'json'))).toEqual(entry);
  });
});

/** Serves orbit.json with these flags; runs `requests`; resolves with the log lines once each request has its line. */
async function logOf(args: string[], requests: (api: string, keys: Record<'free' | 'paid' | 'pro', string>) => Promise<number>, env: CliIo['env'] = {}, waitMs = 5000): Promise<{ lines: string[]; keys: Record<string, string> }> {
  const controller = new AbortController();
  const out = capture({ cwd: dir, env, signal: controller.signal });
  const done = runCli(['serve', '--port', '0', '--dataset', 'orbit.json', ...args], out.io);
  const banner = await out.waitForStdout(/ at (http:\/\/localhost:\d+)\/ipos\n[\s\S]*\nTry:\n(?: {2}curl .*\n)+/);
  const key = (plan: string) => new RegExp(`^  ${plan} +(ipk_[A-Za-z0-9]{32})`, 'm').exec(out.stdout())?.[1] ?? '';
  const keys = { free: key('free'), paid: key('paid'), pro: key('pro') };
  const sent = await requests(`${banner[1]!.replace('localhost', '127.0.0.1')}/ipos`, keys);
  const logged = () => out.stdout().slice(banner.index + banner[0].length).split('\n').filter((l) => l !== '');
  const deadline = Date.now() + waitMs;
  while (logged().length < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  expect(await done).toBe(0);
  return { lines: logged(), keys };
}

/** The requests every log test makes; resolves with how many. */
async function traffic(api: string, keys: Record<'free' | 'paid' | 'pro', string>): Promise<number> {
  const calls: Array<[string, Record<string, string>]> = [
    [`${api}?status=open&api_key=${keys.paid}&token=s3cret`, {}],
    [`${api}?status=open`, { 'x-api-key': keys.paid }],
    [`${api}/ORBIT`, { 'x-api-key': STRANGER }],
    [`${api}/${keys.pro}`, { 'x-api-key': keys.pro }],
    [`${api}?status=open`, { 'x-api-key': keys.free }],
    [`${api}?status=open`, { 'x-api-key': keys.free }],
    [`${api.replace('/ipos', '')}/healthz`, {}],
    [`${api}?status=open`, { 'x-api-key': keys.paid, 'x-forwarded-for': '198.51.100.4' }],
  ];
  for (const [url, headers] of calls) await (await fetch(url, { headers })).arrayBuffer();
  return calls.length;
}

describe.each(['node', 'express', 'koa'])('ipokit serve access log with %s', (framework) => {
  it('text by default: one line per request, no key, secrets as ***, the account of a valid key', async () => {
    const { lines, keys } = await logOf(['--framework', framework, '--limit', 'free.perMinute=1'], traffic);
    expect(lines, lines.join('\n')).toHaveLength(8);
    const parsed = lines.map((line) => {
      const m = TEXT_LINE.exec(line);
      expect(m, line).not.toBeNull();
      return { method: m![2], path: m![3], status: Number(m![4]), address: m![6], account: m![7] };
    });
    for (const line of lines) for (const key of [...Object.values(keys), STRANGER, 's3cret']) expect(line).not.toContain(key);
    expect(parsed.map((p) => [p.method, p.path, p.status])).toEqual([
      ['GET', '/ipos?status=open&api_key=***&token=***', 200],
      ['GET', '/ipos?status=open', 200],
      ['GET', '/ipos/ORBIT', 401],
      ['GET', '/ipos/ipk_***', 404],
      ['GET', '/ipos?status=open', 200],
      ['GET', '/ipos?status=open', 429],
      ['GET', '/healthz', 200],
      ['GET', '/ipos?status=open', 200],
    ]);
    expect(parsed.every((p) => p.address === '127.0.0.1')).toBe(true);
    const [keyless, paid, stranger, pro, free, freeRefused, health, paidAgain] = parsed.map((p) => p.account);
    expect([keyless, stranger, health]).toEqual(['-', '-', '-']);
    expect(paid).toMatch(/^acct_\w+$/);
    expect(paidAgain).toBe(paid);
    expect(pro).toMatch(/^acct_\w+$/);
    expect(free).toMatch(/^acct_\w+$/);
    // refused by its account's window: still that account
    expect(freeRefused).toBe(free);
    expect(new Set([paid, pro, free]).size).toBe(3);
  });

  it('--log json: one JSON object per line; the address forwarded by a trusted proxy', async () => {
    const { lines, keys } = await logOf(['--framework', framework, '--log', 'json', '--trust-proxy', '1'], traffic);
    expect(lines).toHaveLength(8);
    const entries = lines.map((line) => JSON.parse(line) as AccessLogEntry);
    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(['account', 'address', 'method', 'ms', 'path', 'status', 'time']);
      expect(Number.isFinite(e.ms) && e.ms >= 0).toBe(true);
      expect(new Date(e.time).toISOString()).toBe(e.time);
    }
    for (const line of lines) for (const key of [...Object.values(keys), STRANGER, 's3cret']) expect(line).not.toContain(key);
    expect(entries[0]).toMatchObject({ path: '/ipos?status=open&api_key=***&token=***', status: 200, account: null, address: '127.0.0.1' });
    expect(entries[1]).toMatchObject({ status: 200, account: expect.stringMatching(/^acct_/) });
    expect(entries[7]).toMatchObject({ status: 200, address: '198.51.100.4', account: entries[1]!.account });
  });

  it('--log off (or IPOKIT_LOG=off): no line', async () => {
    expect((await logOf(['--framework', framework, '--log', 'off'], traffic, {}, 300)).lines).toEqual([]);
    expect((await logOf(['--framework', framework], traffic, { IPOKIT_LOG: 'off' }, 300)).lines).toEqual([]);
  });
});
