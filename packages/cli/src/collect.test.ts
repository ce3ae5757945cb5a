/**
 * The collector in the CLI (docs/spec.md#sources): the sources settings, `ipokit serve
 * --sources` with `GET /-/sources`, `ipokit sources` from a server and from the database,
 * `ipokit collect` on PostgreSQL (PGlite without DATABASE_URL), and the demo's live sources.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './index.js';
import { startServer } from './server.js';
import { checkSourcesSettings } from './sources-config.js';
import { capture, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';

const TOKEN = 'c'.repeat(40);
const ORBIT = { id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT', slug: 'orbit-aerospace-ipo', type: 'EQ', priceRange: '95-100' };

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-collect-'));
  await writeFile(join(dir, 'orbit.json'), JSON.stringify({ ipos: [ORBIT] }));
  await writeFile(join(dir, 'token.txt'), `${TOKEN}\n`);
  await writeFile(join(dir, 'gmp.json'), JSON.stringify({ gmpReports: [{ ipoId: ORBIT.id, gmpPrice: 42 }] }));
  await writeFile(join(dir, 'sources.json'), JSON.stringify({ sources: [{ type: 'file', name: 'ipowatch', path: 'gmp.json', everyMs: 60_000 }] }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Polls `read` until `done` holds (real time, at most 10 s). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (done(value) || i >= 200) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the sources settings', () => {
  it('names every problem with its path', () => {
    const { problems } = checkSourcesSettings({
      staleAfterMs: 0,
      other: true,
      sources: [
        { type: 'upstream', baseUrl: 'https://x', apiKey: 'k', apiKeyFile: 'f', statuses: ['gone'] },
        { type: 'url', url: '' },
        { type: 'file', path: 'a.json', headers: {} },
        { type: 'ftp' },
        'x',
      ],
    });
    expect(problems).toEqual([
      'other: unknown setting (the settings are sources, staleAfterMs, timeoutMs)',
      'staleAfterMs: must be a whole number above 0, got 0',
      'sources[0]: give one of apiKey and apiKeyFile',
      'sources[0].statuses: must be a non-empty array of open, upcoming, listed, closed, announced, got ["gone"]',
      'sources[1].url: is required, a non-empty string, got ""',
      'sources[1].everyMs: is required for a url source',
      'sources[2].headers: not an option of a file source (its options are type, name, path, everyMs, maxBytes)',
      'sources[3].type: must be "upstream", "url" or "file", got "ftp"',
      'sources[4]: must be an object with "type", got "x"',
    ]);
    expect(checkSourcesSettings({ sources: [] }).problems).toEqual(['sources: must be a non-empty array of sources, got []']);
    expect(checkSourcesSettings({ sources: [{ type: 'file', path: 'a.json' }] })).toEqual({ settings: { sources: [{ type: 'file', path: 'a.json' }] }, problems: [] });
  });

  it('ipokit serve refuses a sources file with problems, each on its line (exit 2)', async () => {
    await writeFile(join(dir, 'bad-sources.json'), JSON.stringify({ sources: [{ type: 'url' }] }));
    const out = capture({ cwd: dir, env: {} });
    expect(await runCli(['serve', '--port', '0', '--dataset', 'orbit.json', '--sources', 'bad-sources.json', '--no-webhooks'], out.io)).toBe(2);
    expect(out.stderr()).toMatch(/bad-sources\.json has 2 problems/);
    expect(out.stderr()).toMatch(/sources\[0\]\.url: is required/);
  });
});

describe('ipokit serve --sources', () => {
  it('runs the collector in the server: GET /-/sources shows it (with the ingest token), ipokit sources --url prints it', async () => {
    const controller = new AbortController();
    const out = capture({ cwd: dir, env: {}, signal: controller.signal });
    const done = runCli(['serve', '--port', '0', '--dataset', 'orbit.json', '--sources', 'sources.json', '--ingest-token-file', 'token.txt', '--log', 'off', '--no-webhooks'], out.io);
    const line = await out.waitForStdout(/\nSources: 1 running in this process \(ipowatch\); status: GET (http:\/\/\S+)\/-\/sources/);
    const base = line[1]!.replace('localhost', '127.0.0.1');
    const read = async () => {
      const r = await fetch(`${base}/-/sources`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return { status: r.status, body: (await r.json()) as { sources: Array<Record<string, unknown>> } };
    };
    const seen = await until(read, (r) => r.body.sources[0]?.['lastSuccessAt'] !== null);
    expect(seen.status).toBe(200);
    expect(seen.body.sources).toEqual([expect.objectContaining({ name: 'ipowatch', lastError: null, records: 1, staleReports: 0 })]);
    expect((await fetch(`${base}/-/sources`)).status).toBe(401);
    expect((await fetch(`${base}/-/sources`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);

    const table = capture({ cwd: dir, env: {} });
    expect(await runCli(['sources', '--url', base, '--token-file', 'token.txt'], table.io)).toBe(0);
    expect(table.stdout()).toMatch(/^NAME\s+LAST RUN\s+LAST SUCCESS\s+RECORDS\s+STALE\s+NEXT RUN\s+LAST ERROR\nipowatch\s+\S+Z\s+\S+Z\s+1\s+0\s+\S+Z\s+-\n$/);
    controller.abort();
    expect(await done).toBe(0);
  }, 60_000);

  it('the demo runs its live sources beside the generated dataset', async () => {
    const running = await startServer({ port: 0, demoLive: true, now: () => new Date('2026-11-24T05:30:00Z'), router: { openapi: false } });
    try {
      expect(running.collector?.status().map((s) => s.name)).toHaveLength(4);
      expect(running.collector?.status().map((s) => s.name)).toContain('exchange-bids');
    } finally {
      await running.close();
    }
    // Not with a dataset file: its IPOs are not the generated ones.
    const file = await startServer({ port: 0, demoLive: true, datasetFile: join(dir, 'orbit.json') });
    expect(file.collector).toBeNull();
    await file.close();
  }, 60_000);
});

describe('ipokit collect and ipokit sources on the database', () => {
  let db: CliTestDatabase;
  beforeAll(async () => {
    db = await openCliTestDatabase('collect');
    const out = capture({ ...db.io(), cwd: dir });
    expect(await runCli(['migrate', '--schema', db.schema], out.io)).toBe(0);
    expect(await runCli(['import', 'orbit.json', '--schema', db.schema], out.io), out.stderr()).toBe(0);
  }, 60_000);
  afterAll(() => db?.close());

  it('collects until stopped, and ipokit sources reads the status from the database', async () => {
    const controller = new AbortController();
    const out = capture({ ...db.io(), cwd: dir, signal: controller.signal });
    const done = runCli(['collect', '--sources', 'sources.json', '--schema', db.schema], out.io);
    await out.waitForStdout(/^ipokit collect running 1 source on PostgreSQL at .* \(schema \S+\): ipowatch \(every 1 min\)\.\n/);
    const status = async () => {
      const table = capture({ ...db.io(), cwd: dir });
      expect(await runCli(['sources', '--sources', 'sources.json', '--json', '--schema', db.schema], table.io)).toBe(0);
      return JSON.parse(table.stdout()) as Array<Record<string, unknown>>;
    };
    const seen = await until(status, (s) => s[0]?.['lastSuccessAt'] !== null);
    expect(seen).toEqual([expect.objectContaining({ name: 'ipowatch', lastError: null, records: 1, staleReports: 0, running: false })]);
    const rows = await db.client.query(`SELECT count(*)::text AS n FROM "${db.schema}".snapshots`);
    expect((rows.rows[0] as { n: string } | undefined)?.n).toBe('1');
    controller.abort();
    expect(await done).toBe(0);
    expect(out.stdout()).toMatch(/ipokit collect stopped/);
  }, 60_000);

  it('needs a sources file', async () => {
    const out = capture({ ...db.io(), cwd: dir });
    expect(await runCli(['collect', '--schema', db.schema], out.io)).toBe(2);
    expect(out.stderr()).toMatch(/--sources FILE is required/);
  });
});
