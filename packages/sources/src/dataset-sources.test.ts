import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCollector, type Collector } from './collector.js';
import { datasetFileSource, datasetUrlSource } from './dataset-sources.js';
import { ManualClock } from './test-clock.js';
import { recordingStore } from './test-store.js';
import type { SourceRunContext } from './types.js';

const signal = new AbortController().signal;

/** Moves the clock on, then waits (really) for the run it started, which reads a real file. */
async function step(clock: ManualClock, collector: Collector, ms: number): Promise<void> {
  await clock.advance(ms);
  for (let i = 0; i < 400 && collector.status().some((s) => s.running); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  await clock.settle();
}
const at = (iso: string, lastSuccessAt: string | null = null): SourceRunContext => ({ now: new Date(iso), signal, lastSuccessAt: lastSuccessAt === null ? null : new Date(iso) });

describe('datasetUrlSource', () => {
  let server: Server;
  let base = '';
  let document = JSON.stringify({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 12 }] });
  let etag = '"v1"';
  const seen: Array<{ path: string; ifNoneMatch: string | undefined; auth: string | undefined }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', ifNoneMatch: req.headers['if-none-match'], auth: req.headers.authorization });
      if (req.url === '/down') return void res.writeHead(503, 'Service Unavailable').end();
      if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(2_000));
      if (req.url === '/junk') return void res.writeHead(200).end('<html>');
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
      res.writeHead(200, { 'content-type': 'application/json', etag }).end(document);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches the document with its headers, and asks with If-None-Match once the last one was written', async () => {
    const source = datasetUrlSource({ url: `${base}/data.json`, headers: { authorization: 'Bearer t' }, everyMs: 60_000 });
    expect(source.name).toMatch(/^url-127\.0\.0\.1-\d+$/);
    expect(await source.collect(at('2026-11-24T04:00:00Z'))).toEqual({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 12 }] });
    // The run was not written (no success since): no If-None-Match, the whole document again.
    expect(await source.collect(at('2026-11-24T04:01:00Z'))).toEqual({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 12 }] });
    // Written: 304, nothing.
    expect(await source.collect(at('2026-11-24T04:02:00Z', 'written'))).toEqual({});
    document = JSON.stringify({ gmpReports: [] });
    etag = '"v2"';
    expect(await source.collect(at('2026-11-24T04:03:00Z', 'written'))).toEqual({ gmpReports: [] });
    expect(seen.slice(-4).map((s) => [s.ifNoneMatch ?? null, s.auth])).toEqual([
      [null, 'Bearer t'],
      [null, 'Bearer t'],
      ['"v1"', 'Bearer t'],
      ['"v1"', 'Bearer t'],
    ]);
  });

  it('fails a run on another status, a document too large, or one that is not JSON', async () => {
    await expect(datasetUrlSource({ url: `${base}/down`, everyMs: 60_000 }).collect(at('2026-11-24T04:00:00Z'))).rejects.toThrow(`GET ${base}/down answered 503 Service Unavailable.`);
    await expect(datasetUrlSource({ url: `${base}/big`, everyMs: 60_000, maxBytes: 1_000 }).collect(at('2026-11-24T04:00:00Z'))).rejects.toThrow(/more than the 1000/);
    await expect(datasetUrlSource({ url: `${base}/junk`, everyMs: 60_000 }).collect(at('2026-11-24T04:00:00Z'))).rejects.toThrow(/is not JSON/);
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => datasetUrlSource({ url: 'file:///etc/passwd', everyMs: 60_000 })).toThrow(/http: or https:/);
    expect(() => datasetUrlSource({ url: 'nope', everyMs: 60_000 })).toThrow(/is not a URL/);
  });
});

describe('datasetFileSource', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ipokit-file-source-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('imports the file at start and each time it changes, and again after a refused answer', async () => {
    const file = join(dir, 'today gmp.json');
    await writeFile(file, JSON.stringify({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 1.234 }] }));
    const clock = new ManualClock('2026-11-24T04:00:00Z');
    const recording = await recordingStore();
    const source = datasetFileSource(file, { everyMs: 10_000 });
    expect(source.name).toBe('file-today-gmp.json');
    const collector = await startCollector(recording.store, { sources: [source], now: clock.now, timers: clock });
    await step(clock, collector, 0);
    expect(collector.status()[0]?.lastError).toMatch(/gmpPrice 1\.234 has more than 2 decimals/);
    await step(clock, collector, 5_000); // the backoff: read again, refused again
    expect(collector.status()[0]?.lastError).toMatch(/more than 2 decimals/);
    await writeFile(file, JSON.stringify({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 12 }] }));
    await utimes(file, new Date('2026-11-24T04:00:30Z'), new Date('2026-11-24T04:00:30Z'));
    await step(clock, collector, 10_000);
    expect(collector.status()[0]).toMatchObject({ lastError: null, records: 1 });
    const writes = recording.writes;
    await step(clock, collector, 30_000); // unchanged: nothing read, nothing written
    expect(recording.writes).toBe(writes);
    await writeFile(file, JSON.stringify({ gmpReports: [{ ipoId: 'ipo-1', gmpPrice: 13 }] }));
    await utimes(file, new Date('2026-11-24T04:02:00Z'), new Date('2026-11-24T04:02:00Z'));
    await step(clock, collector, 10_000);
    expect(recording.snapshots.map((s) => s.sources[0]?.paise)).toEqual([1200, 1300]);
    await collector.stop();
  });

  it('fails a run on a missing file', async () => {
    await expect(datasetFileSource(join(dir, 'missing.json')).collect(at('2026-11-24T04:00:00Z'))).rejects.toThrow(/ENOENT/);
  });
});
