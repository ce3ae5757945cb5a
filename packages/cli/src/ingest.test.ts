import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PostgresClient } from '@ipokit/storage-postgres';
import { ingestAuth, readIngestTokens } from './ingest.js';
import { runCli } from './index.js';
import { startServer, type RunningServer } from './server.js';
import { capture, openCliTestDatabase } from './test-helpers.js';
import { connectRaw, within } from './test-sockets.js';

// Every comparison of the token check goes through node:crypto's timingSafeEqual: this spy
// counts the calls (and compares as it does).
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});
const { timingSafeEqual } = await import('node:crypto');

// The push route, POST /-/ingest, through a real server on port 0: memory with node:http,
// Express and Koa, and PostgreSQL (PGlite, or the real server when DATABASE_URL is set).

const NOW = Date.UTC(2026, 10, 23, 6, 30);
const TOKEN_A = 'a'.repeat(24) + '0123456789';
const TOKEN_B = 'b'.repeat(40);
const ORBIT = { id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', exchanges: ['nse', 'bse'], startDate: '2026-11-20', endDate: '2026-11-24' };
const NOVA = { id: '2026000002', name: 'Nova Foods Ltd', symbol: 'NOVA', slug: 'nova-foods-ipo', type: 'SME', exchanges: ['nse'], startDate: '2026-11-21', endDate: '2026-11-25' };
const PUSHED = {
  ipos: [NOVA],
  gmp: [{ ipoId: NOVA.id, timestamp: '2026-11-22T09:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12 }] }],
  subscription: [{ ipoId: NOVA.id, timestamp: '2026-11-22T10:00:00.000Z', times: { total: 1.5 } }],
};
/** A valid IPO and a broken one: refused whole. */
const REFUSED = { ipos: [{ ...NOVA }, { ...ORBIT, id: '2026000003', symbol: 'BAD', slug: 'bad-ipo', endDate: '2026-11-01' }] };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-ingest-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify({ ipos: [ORBIT] }));
  await writeFile(join(dir, 'tokens.txt'), `# the collector\n${TOKEN_A}\n\n  ${TOKEN_B}  \n# old: revoked\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = {}, method = 'POST'): Promise<Answer> {
  const res = await fetch(`${url}/-/ingest`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}`, ...headers },
    ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
  });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: res.status, headers: res.headers, body: json ? (JSON.parse(text) as Record<string, unknown>) : { text } };
}

async function ipoStatus(running: RunningServer, id: string): Promise<number> {
  const res = await fetch(`${running.url.replace('localhost', '127.0.0.1')}/ipos/${id}`, { headers: { 'x-api-key': running.keys!.pro } });
  await res.arrayBuffer();
  return res.status;
}

/** The tests read the API back many times: no rate limit in the way. */
const UNLIMITED = { limits: { pro: { perMinute: Infinity, gmpPerMinute: Infinity } } };

const errorShape = (status: number, code: string) => ({ status: String(status), code, title: expect.any(String), detail: expect.any(String) });

describe.each(['node', 'express', 'koa'] as const)('POST /-/ingest on memory with %s', (framework) => {
  let running: RunningServer;
  let url: string;
  beforeAll(async () => {
    running = await startServer({
      port: 0,
      framework,
      datasetFile: join(dir, 'orbit.json'),
      now: () => new Date(NOW),
      ingest: { tokens: await readIngestTokens(join(dir, 'tokens.txt')), maxBytes: 1024 * 1024 },
      router: UNLIMITED,
      onError: () => undefined,
    });
    url = running.url.replace('localhost', '127.0.0.1');
  });
  afterAll(async () => {
    running.server.closeAllConnections();
    await running.close();
  });

  it('200: writes the dataset and answers the counts written; the API serves it at once', async () => {
    expect(running.ingestUrl).toBe(`${running.url}/-/ingest`);
    expect(await ipoStatus(running, NOVA.id)).toBe(404);
    const r = await post(url, JSON.stringify(PUSHED), { 'content-type': 'application/json; charset=UTF-8' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ipos: 1, gmp: 1, subscription: 1 });
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await ipoStatus(running, NOVA.id)).toBe(200);
    // the second token of the file is accepted too; a push that changes nothing writes the same counts again
    const again = await post(url, JSON.stringify({ ipos: [ORBIT] }), { authorization: `bearer ${TOKEN_B}` });
    expect([again.status, again.body]).toEqual([200, { ipos: 1, gmp: 0, subscription: 0 }]);
  });

  it('400: a refused dataset lists its problems and writes nothing (the valid IPO in it is not stored)', async () => {
    const r = await post(url, JSON.stringify(REFUSED).replace(/2026000002/g, '2026000009').replace('nova-foods-ipo', 'nova-9').replace('"NOVA"', '"NOVA9"'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ...errorShape(400, 'ERR:BADPARAM'), meta: { parameter: 'body' }, problemCount: 1 });
    expect(r.body.problems).toEqual([{ path: 'ipos[1].endDate', message: expect.stringMatching(/endDate 2026-11-01 is before startDate 2026-11-20/) }]);
    expect(r.body.detail).toMatch(/^The dataset has 1 problem, at ipos\[1\]\.endDate: .*Nothing was written\.$/);
    expect(await ipoStatus(running, '2026000009')).toBe(404);
    expect(await ipoStatus(running, '2026000003')).toBe(404);
  });

  it('400: at most 1,000 problems, with problemCount saying how many there were', async () => {
    const ipos = Array.from({ length: 1_500 }, (_, i) => ({ id: `x${i}` }));
    const r = await post(url, JSON.stringify({ ipos }));
    expect(r.status).toBe(400);
    expect((r.body.problems as unknown[]).length).toBe(1_000);
    expect(r.body.problemCount).toBeGreaterThan(1_500);
  });

  it.each([
    ['not JSON', '{"ipos": [', /^The request body is not JSON: .*line 1, column 11/],
    ['empty', '', /^The request body is not JSON: the body is empty\.$/],
    ['not UTF-8', Uint8Array.from([0x7b, 0xc0, 0xaf, 0x7d]), /^The request body is not UTF-8/],
  ])('400: a body that is %s', async (_name, body, detail) => {
    const r = await post(url, body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ...errorShape(400, 'ERR:BADPARAM'), meta: { parameter: 'body' } });
    expect(r.body.detail).toMatch(detail);
  });

  it.each([
    ['no Authorization header', { authorization: '' }],
    ['a wrong token', { authorization: `Bearer ${'c'.repeat(40)}` }],
    ['a token that only starts like a good one', { authorization: `Bearer ${TOKEN_A}x` }],
    ['another scheme', { authorization: `Basic ${TOKEN_A}` }],
  ])('401: %s, with WWW-Authenticate: Bearer, and nothing written', async (_name, headers) => {
    const r = await post(url, JSON.stringify({ ipos: [{ ...NOVA, id: '2026000077', symbol: 'N77', slug: 'n77' }] }), headers);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(r.body).toMatchObject(errorShape(401, 'ERR:INVLDKEY'));
    expect(await ipoStatus(running, '2026000077')).toBe(404);
  });

  it.each(['GET', 'PUT', 'DELETE'])('405: %s, with Allow: POST', async (method) => {
    const r = await post(url, '{}', {}, method);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.body).toMatchObject(errorShape(405, 'ERR:METHOD'));
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['another charset', { 'content-type': 'application/json; charset=latin1' }],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['a compressed body', { 'content-encoding': 'gzip' }],
  ])('415: %s', async (_name, headers) => {
    const r = await post(url, '{}', headers);
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject(errorShape(415, 'ERR:MEDIATYPE'));
  });

  it('413: a Content-Length over the limit is refused before the body is read, and the connection closed', async () => {
    const big = `{"ipos":[]}${' '.repeat(1024 * 1024)}`;
    const r = await post(url, big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject(errorShape(413, 'ERR:TOOLARGE'));
    expect(r.headers.get('connection')).toBe('close');
    // exactly the limit is fine
    const fits = await post(url, `{"ipos":[]}${' '.repeat(1024 * 1024 - 11)}`);
    expect([fits.status, fits.body]).toEqual([200, { ipos: 0, gmp: 0, subscription: 0 }]);
  });

  it('413: a chunked body is counted as it comes, and answered as soon as it passes the limit (the rest never sent)', async () => {
    const socket = await connectRaw((running.server.address() as AddressInfo).port);
    socket.socket.write(
      `POST /-/ingest HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = ' '.repeat(600 * 1024);
    socket.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    socket.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    // no last chunk: the request is not over, but the server has its answer
    await within(socket.closed, 5_000, 'the server answering 413 and closing');
    expect(socket.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(socket.received()).toMatch(/"code":"ERR:TOOLARGE"/);
  });

  it('Expect: 100-continue: a push refused on its headers gets no 100 Continue, a good one does', async () => {
    const port = (running.server.address() as AddressInfo).port;
    const refused = await connectRaw(port);
    refused.socket.write(`POST /-/ingest HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n`);
    await within(refused.closed, 5_000, 'the 401 and the close');
    expect(refused.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused.received()).not.toMatch(/100 Continue/);

    const accepted = await connectRaw(port);
    accepted.socket.write(
      `POST /-/ingest HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 11\r\nAuthorization: Bearer ${TOKEN_A}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    await within(
      new Promise<void>((resolve) => {
        const check = () => (accepted.received().includes('100 Continue') ? resolve() : setTimeout(check, 10));
        check();
      }),
      5_000,
      'the 100 Continue',
    );
    accepted.socket.write('{"ipos":[]}');
    await within(accepted.closed, 5_000, 'the answer');
    expect(accepted.received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it('answers only at /-/ingest: the API and the health checks are as before', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const other = await fetch(`${url}/-/ingest/x`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_A}` } });
    expect(other.status).toBe(404);
  });
});

describe('POST /-/ingest without --ingest-token-file', () => {
  it('is not there: the request goes to the router as any other', async () => {
    const running = await startServer({ port: 0, datasetFile: join(dir, 'orbit.json'), router: UNLIMITED });
    try {
      expect(running.ingestUrl).toBeNull();
      const r = await post(running.url.replace('localhost', '127.0.0.1'), JSON.stringify(PUSHED));
      expect(r.status).toBe(404);
      expect(await ipoStatus(running, NOVA.id)).toBe(404);
    } finally {
      await running.close();
    }
  });

  it('startServer refuses tokens that are too short, before anything starts', async () => {
    await expect(startServer({ port: 0, ingest: { tokens: ['short'] } })).rejects.toThrow(/at least 32 characters/);
    await expect(startServer({ port: 0, ingest: { tokens: [] } })).rejects.toThrow(/at least one token/);
    await expect(startServer({ port: 0, ingest: { tokens: [TOKEN_A], maxBytes: 0 } })).rejects.toThrow(/maxBytes must be a whole number/);
  });
});

describe('POST /-/ingest on PostgreSQL', () => {
  it('200 writes, a refused push writes nothing, and a failing store is a 503', async () => {
    const db = await openCliTestDatabase('ingest');
    const breakable = breakableClient(db.client);
    const running = await startServer({
      port: 0,
      database: { client: breakable.client, schema: db.schema, close: async () => undefined },
      datasetFile: join(dir, 'orbit.json'),
      demoKeys: true,
      now: () => new Date(NOW),
      ingest: { tokens: [TOKEN_A] },
      router: UNLIMITED,
      onError: () => undefined,
    });
    const url = running.url.replace('localhost', '127.0.0.1');
    const count = async (table: string) => (await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".${table}`)).rows[0] as { n: number };
    try {
      const ok = await post(url, JSON.stringify(PUSHED));
      expect([ok.status, ok.body]).toEqual([200, { ipos: 1, gmp: 1, subscription: 1 }]);
      expect(await ipoStatus(running, NOVA.id)).toBe(200);
      const before = { ipos: await count('ipos'), gmp: await count('snapshots'), subscription: await count('subscription_snapshots') };
      expect(before).toEqual({ ipos: { n: 2 }, gmp: { n: 1 }, subscription: { n: 1 } });

      const refused = await post(
        url,
        JSON.stringify({ ...REFUSED, gmp: [{ ipoId: ORBIT.id, timestamp: '2026-11-22T11:00:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 40 }] }] }).replace(/2026000002/g, '2026000009').replace('nova-foods-ipo', 'nova-9').replace('"NOVA"', '"NOVA9"'),
      );
      expect(refused.status).toBe(400);
      expect(refused.body.problemCount).toBe(1);
      expect({ ipos: await count('ipos'), gmp: await count('snapshots'), subscription: await count('subscription_snapshots') }).toEqual(before);

      breakable.broken = true;
      const failed = await post(url, JSON.stringify({ ipos: [ORBIT] }));
      expect(failed.status).toBe(503);
      expect(failed.body).toMatchObject(errorShape(503, 'ERR:UNAVAILABLE'));
      breakable.broken = false;
    } finally {
      running.server.closeAllConnections();
      await running.close();
      await db.close();
    }
  }, 120_000);
});

describe('the token check', () => {
  it('compares the sha256 of the token sent with every token kept, in constant time, without stopping at a match', () => {
    const tokens = [TOKEN_A, TOKEN_B, 'c'.repeat(32)];
    const authorized = ingestAuth(tokens);
    const spy = vi.mocked(timingSafeEqual);
    for (const [header, expected] of [
      [`Bearer ${TOKEN_A}`, true],
      [`Bearer ${'c'.repeat(32)}`, true],
      [`Bearer ${'c'.repeat(31)}`, false],
      [`Bearer ${TOKEN_B.slice(0, 20)}`, false],
    ] as const) {
      spy.mockClear();
      expect(authorized({ headers: { authorization: header } })).toBe(expected);
      expect(spy).toHaveBeenCalledTimes(tokens.length);
      // both sides are 32-byte digests, whatever the lengths of the tokens
      for (const [a, b] of spy.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
    }
    spy.mockClear();
    expect(authorized({ headers: {} })).toBe(false);
    expect(authorized({ headers: { authorization: TOKEN_A } })).toBe(false);
  });

  it('needs at least one token, each at least 32 characters', () => {
    expect(() => ingestAuth([])).toThrow(RangeError);
    expect(() => ingestAuth(['x'.repeat(31)])).toThrow(/at least 32 characters/);
  });
});

describe('the token file', () => {
  it('holds one token a line; blank lines and # comments are skipped', async () => {
    expect(await readIngestTokens('tokens.txt', dir)).toEqual([TOKEN_A, TOKEN_B]);
    await writeFile(join(dir, 'crlf.txt'), `${TOKEN_B}\r\n`);
    expect(await readIngestTokens(join(dir, 'crlf.txt'))).toEqual([TOKEN_B]);
  });

  it.each([
    ['no token', '# nothing yet\n\n', /^ingest token file bad\.txt holds no token/],
    ['an empty file', '', /^ingest token file bad\.txt holds no token/],
    ['a short token', `${TOKEN_A}\nshort-token\n`, /^ingest token file bad\.txt, line 2: a token must be at least 32 characters, got 11/],
    ['a token with a space inside', `${'x'.repeat(20)} ${'y'.repeat(20)}\n`, /^ingest token file bad\.txt, line 1: a token must be printable ASCII without spaces/],
  ])('refuses %s, naming the file', async (_name, text, message) => {
    await writeFile(join(dir, 'bad.txt'), text);
    await expect(readIngestTokens('bad.txt', dir)).rejects.toThrow(message);
  });

  it('a file that cannot be read is named', async () => {
    await expect(readIngestTokens('missing.txt', dir)).rejects.toThrow(/^cannot read ingest token file missing\.txt: no such file$/);
  });

  it('ipokit serve refuses to start with a bad token file (exit 2, one line), and prints the push route when it is good', async () => {
    await writeFile(join(dir, 'short.txt'), 'too-short\n');
    const bad = capture({ cwd: dir, env: {} });
    expect(await runCli(['serve', '--port', '0', '--dataset', 'orbit.json', '--ingest-token-file', 'short.txt'], bad.io)).toBe(2);
    expect(bad.stderr().split('\n')[0]).toBe("ipokit serve: ingest token file short.txt, line 1: a token must be at least 32 characters, got 9 (make one with 'openssl rand -hex 32')");
    expect(bad.stdout()).toBe('');

    const controller = new AbortController();
    const good = capture({ cwd: dir, env: { IPOKIT_INGEST_TOKEN_FILE: 'tokens.txt', IPOKIT_INGEST_MAX_BYTES: '2048' }, signal: controller.signal });
    const done = runCli(['serve', '--port', '0', '--dataset', 'orbit.json', '--log', 'off', '--no-webhooks'], good.io);
    const line = await good.waitForStdout(/\nPush: POST (http:\/\/\S+)\/-\/ingest with a bearer token of tokens\.txt, bodies up to 2048 bytes/);
    const r = await post(line[1]!.replace('localhost', '127.0.0.1'), JSON.stringify({ ipos: [NOVA] }), { authorization: `Bearer ${TOKEN_B}` });
    expect([r.status, r.body]).toEqual([200, { ipos: 1, gmp: 0, subscription: 0 }]);
    controller.abort();
    expect(await done).toBe(0);
  }, 60_000);
});

/** A client whose queries, connections and transactions fail while `broken` is set. */
function breakableClient(inner: PostgresClient): { client: PostgresClient; broken: boolean } {
  const state = { broken: false, client: inner };
  const fail = () => Promise.reject(Object.assign(new Error('injected database failure'), { code: 'ECONNRESET' }));
  state.client = new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== 'query' && property !== 'connect' && property !== 'transaction') return bound;
      return (...args: unknown[]) => (state.broken ? fail() : bound(...args));
    },
  });
  return state;
}
