import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset, IpokitError, validateDataset } from '@ipokit/core';
import { createDatasetChecker, type DatasetItem } from '@ipokit/core/backend';
import { datasetArbitrary, makeIpo, makeSnapshot, toDataset } from '@ipokit/testing';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import pg from 'pg';
// The storage package's own test helper (not published), by path.
import { failingOnSnapshotInsert } from '../../storage-postgres/src/test-database.js';
import { readDatasetFile } from './import.js';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { capture, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';

const ON = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
let db: CliTestDatabase;
let dir: string;
beforeAll(async () => {
  db = await openCliTestDatabase('import');
  await migrate(db.client, { schema: db.schema });
  dir = await mkdtemp(join(tmpdir(), 'ipokit-import-'));
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function run(argv: string[], overrides: Partial<CliIo> = {}) {
  const out = capture({ ...db.io(), cwd: dir, ...overrides });
  const code = await runCli(argv, out.io);
  return { code, stdout: out.stdout(), stderr: out.stderr() };
}

async function empty(): Promise<void> {
  for (const t of ['snapshots', 'ipos']) await db.client.query(`DELETE FROM "${db.schema}".${t}`);
}

const count = async (table: string): Promise<number> =>
  Number(((await db.client.query(`SELECT count(*)::int AS n FROM "${db.schema}".${table}`)).rows[0] as { n: number }).n);

const IPOS = [
  makeIpo({ id: 'a1', name: 'Acme', symbol: 'ACME', startDate: '2026-11-20', endDate: '2026-11-24' }),
  makeIpo({ id: 'b2', name: 'Beta', symbol: 'BETA' }),
];
const SNAPSHOTS = Array.from({ length: 30 }, (_, i) => makeSnapshot(i % 2 === 0 ? 'a1' : 'b2', Date.UTC(2026, 10, 18) + i * 60_000, { ipowatch: 100 * i, x: null }));
const GOOD = toDataset({ ipos: IPOS, snapshots: SNAPSHOTS });

describe(`ipokit import (${ON})`, () => {
  it('imports a good file: exit 0, the summary on stdout, what was written is what importDataset writes', async () => {
    await empty();
    await file('good.json', GOOD);
    const r = await run(['import', 'good.json', '--schema', db.schema, '--batch-size', '7']);
    expect(r.stderr).toMatch(/^ipokit import: checked 2 IPOs and 30 snapshots in \d+\.\d s\nipokit import: wrote 2 IPOs and 30 snapshots in \d+\.\d s\n$/);
    expect(r.stdout).toMatch(/^imported 2 IPOs, 30 GMP snapshots and 0 subscription snapshots in \d+(\.\d)? s\n$/);
    expect(r.code).toBe(0);
    const store = postgresStore({ client: db.client, schema: db.schema });
    const found = await store.findIpo({ identifier: 'acme', gmpAt: Date.UTC(2027, 0, 1) });
    expect(found?.ipo).toEqual(IPOS[0]);
    expect(found?.gmp).toEqual(SNAPSHOTS[28]);
    expect(await count('snapshots')).toBe(30);

    // Again, with --json: nothing changes.
    const again = await run(['import', join(dir, 'good.json'), '--schema', db.schema, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ipos: 2, snapshots: 30, subscription: 0, seconds: expect.any(Number) as unknown });
    expect(await count('snapshots')).toBe(30);
  });

  it('refuses malformed JSON with its line and column: exit 1, nothing written', async () => {
    await empty();
    await file('bad.json', '{"ipos": [\n  {"id": "a1", "name": "Acme"\n   "slug": "acme"}\n]}');
    const r = await run(['import', 'bad.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`ipokit import: bad.json is not valid JSON: expected ',' at line 3, column 4; nothing was written\n`);
    expect(await count('ipos')).toBe(0);

    await file('truncated.json', JSON.stringify(GOOD).slice(0, 200));
    const t = await run(['import', 'truncated.json', '--schema', db.schema]);
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(/^ipokit import: truncated\.json is not valid JSON: .* at line 1, column \d+; nothing was written\n$/);
  });

  it('refuses a file with a bad record: every problem as path: message, then the total; exit 1', async () => {
    await empty();
    const bad = { ipos: [...GOOD.ipos, { id: 'c3', name: 'C', slug: 'c3', type: 'EQ', startDate: '2026-12-10', endDate: '2026-12-05' }, { id: 'd4' }], gmp: GOOD.gmp, typo: 1 };
    await file('bad-record.json', bad);
    const r = await run(['import', 'bad-record.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => !l.startsWith('ipokit import: checked'))).toEqual([
      'typo: unknown top-level key "typo": a dataset holds only "ipos", "gmp" and "subscription"',
      'ipos[2].endDate: endDate 2026-12-05 is before startDate 2026-12-10',
      'ipos[3].name: name is required',
      'ipos[3].slug: slug is required',
      'ipos[3].type: type is required',
      'ipokit import: bad-record.json was refused: 5 problems; nothing was written',
      '',
    ]);
    expect(await count('ipos')).toBe(0);
  });

  it('refuses a file that conflicts with stored data: exit 1, the stored data unchanged', async () => {
    await empty();
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), toDataset({ ipos: [makeIpo({ id: 'held', symbol: 'ACME' })], snapshots: [] }));
    await file('conflict.json', { ipos: GOOD.ipos, gmp: [...GOOD.gmp, { ipoId: 'ghost', timestamp: '2026-11-18T09:30:00Z', sources: [] }] });
    const r = await run(['import', 'conflict.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: (checked|wrote)/.test(l))).toEqual([
      'ipos[0].symbol: symbol "ACME" is already held by the stored IPO "held"',
      'gmp[30].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'ipokit import: conflict.json was refused: 2 problems; nothing was written',
      '',
    ]);
    expect(await count('ipos')).toBe(1);
    expect(await count('snapshots')).toBe(0);
  });

  it('reports snapshots of unknown IPOs in the same pass as the other problems', async () => {
    await empty();
    await importDataset(postgresStore({ client: db.client, schema: db.schema }), toDataset({ ipos: [makeIpo({ id: 'held', symbol: 'HELD' })], snapshots: [] }));
    const bad = { id: 'c3', name: 'C', slug: 'c3', type: 'EQ', startDate: '2026-12-10', endDate: '2026-12-05' };
    const at = (ipoId: string, minute: number, more: object = {}) => ({ ipoId, timestamp: new Date(Date.UTC(2026, 10, 18) + minute * 60_000).toISOString(), sources: [], ...more });
    await file('unknown-and-bad.json', {
      ipos: [...GOOD.ipos, bad],
      gmp: [at('ghost', 1), at('held', 2), at('c3', 3), at('a1', 4), at('ghost', 5, { typo: 1 }), at('phantom', 6)],
    });
    const r = await run(['import', 'unknown-and-bad.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: checked/.test(l))).toEqual([
      'ipos[2].endDate: endDate 2026-12-05 is before startDate 2026-12-10',
      'gmp[0].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'gmp[4].typo: unknown field "typo" in a GMP snapshot',
      'gmp[4].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'gmp[5].ipoId: ipoId "phantom" names no IPO in the dataset or the store',
      'ipokit import: unknown-and-bad.json was refused: 5 problems; nothing was written',
      '',
    ]);
    expect(await count('ipos')).toBe(1);
  });

  it('imports subscription snapshots with the rest: the summary counts them, the store reads them', async () => {
    await empty();
    const subscription = [
      { ipoId: 'a1', timestamp: '2026-11-20T17:00:00+05:30', times: { qib: 1.25, retail: 3, total: 2.1 } },
      { ipoId: 'b2', timestamp: '2026-11-20T11:30:00Z', times: { total: null } },
      { ipoId: 'a1', timestamp: '2026-11-21T11:30:00Z', times: { qib: 10.5, nii: 4, total: 7.75 } },
    ];
    await file('subscription.json', { subscription, ipos: GOOD.ipos, gmp: GOOD.gmp });
    const r = await run(['import', 'subscription.json', '--schema', db.schema, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ipos: 2, snapshots: 30, subscription: 3, seconds: expect.any(Number) as unknown });
    const text = await run(['import', 'subscription.json', '--schema', db.schema]);
    expect(text.stdout).toMatch(/^imported 2 IPOs, 30 GMP snapshots and 3 subscription snapshots in \d+(\.\d)? s\n$/);
    const store = postgresStore({ client: db.client, schema: db.schema });
    const series = await store.subscriptionSeries({ ipoId: 'a1', from: Date.UTC(2000, 0, 1), to: Date.UTC(2027, 0, 1) });
    expect(series).toEqual(validateDataset({ subscription }).subscription.filter((x) => x.ipoId === 'a1'));
    expect((await store.findIpo({ identifier: 'a1', gmpAt: null, subscriptionAt: Date.UTC(2026, 10, 21) }))?.subscription?.times.qib).toBe(1.25);
  });

  it('refuses subscription snapshots with problems, naming those of unknown IPOs in the same pass, after the GMP snapshots’', async () => {
    await empty();
    const sub = (ipoId: string, times: unknown) => ({ ipoId, timestamp: '2026-11-20T11:30:00Z', times });
    await file('bad-subscription.json', {
      subscription: [sub('a1', { total: 1 }), sub('ghost', { qib: -1 }), sub('a1', { total: 2 }), sub('phantom', {})],
      ipos: GOOD.ipos,
      gmp: [{ ipoId: 'ghost', timestamp: '2026-11-18T09:30:00Z', sources: [] }],
    });
    const r = await run(['import', 'bad-subscription.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: checked/.test(l))).toEqual([
      'gmp[0].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'subscription[1].times.qib: times.qib -1 is negative',
      'subscription[1].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'subscription[2].timestamp: a subscription snapshot of ipoId "a1" at 2026-11-20T11:30:00.000Z is already given by subscription[0]',
      'subscription[3].times: times gives no category: give at least one of "qib", "nii", "bnii", "snii", "retail", "employee", "shareholder" and "total" (null for one the issue does not have)',
      'subscription[3].ipoId: ipoId "phantom" names no IPO in the dataset or the store',
      'ipokit import: bad-subscription.json was refused: 6 problems; nothing was written',
      '',
    ]);
    expect(await count('ipos')).toBe(0);
  });

  it('refuses a valid file whose subscription snapshot names an IPO neither in it nor stored: exit 1, nothing written', async () => {
    await empty();
    await file('subscription-conflict.json', { ...GOOD, subscription: [{ ipoId: 'a1', timestamp: '2026-11-20T11:30:00Z', times: { total: 1 } }, { ipoId: 'ghost', timestamp: '2026-11-20T11:30:00Z', times: { total: 1 } }] });
    const r = await run(['import', 'subscription-conflict.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: (checked|wrote)/.test(l))).toEqual([
      'subscription[1].ipoId: ipoId "ghost" names no IPO in the dataset or the store',
      'ipokit import: subscription-conflict.json was refused: 1 problem; nothing was written',
      '',
    ]);
    expect(await count('ipos')).toBe(0);
  });

  it('says that an empty file is empty', async () => {
    await empty();
    await file('empty.json', '');
    expect(await run(['import', 'empty.json', '--schema', db.schema])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ipokit import: empty.json is not valid JSON: the file is empty; nothing was written\n',
    });
    await file('blank.json', '\uFEFF \n\t\r\n');
    expect((await run(['import', 'blank.json', '--schema', db.schema])).stderr).toBe(
      'ipokit import: blank.json is not valid JSON: the file holds only white space; nothing was written\n',
    );
  });

  it('refuses invalid UTF-8 with the byte offset of the first invalid byte; exit 1, nothing written', async () => {
    await empty();
    // The bytes C0 AF FF ED A0 80: an overlong "/", a byte that is never UTF-8, an encoded surrogate.
    const head = '{"ipos":[{"id":"a1","name":"Ac';
    const bytes = Buffer.concat([Buffer.from(head), Buffer.from([0xc0, 0xaf, 0xff, 0xed, 0xa0, 0x80]), Buffer.from('me","slug":"acme","type":"EQ"}]}')]);
    await writeFile(join(dir, 'latin.json'), bytes);
    const r = await run(['import', 'latin.json', '--schema', db.schema]);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `ipokit import: latin.json is not valid UTF-8: invalid byte 0xC0 at byte offset ${head.length}; nothing was written\n`,
    });
    expect(await count('ipos')).toBe(0);
  });

  it('refuses a string, key or number too long to hold with one problem line each, cutting long paths', async () => {
    await empty();
    const longKey = 'k'.repeat(300);
    const topKey = 't'.repeat(300);
    const text =
      `{"ipos":[` +
      `{"id":"a1","name":"Acme","slug":"acme","type":"EQ","about":"${'x'.repeat(30_000)}"},` +
      `{"id":"b2","name":"Beta","slug":"beta","type":"EQ","minQty":${'1'.repeat(1_001)},"typo":1},` +
      `{"id":"c3","name":"Cee","slug":"cee","type":"EQ","${longKey}":1}` +
      `],"gmp":[],"${topKey}":"${'y'.repeat(20_000)}"}`;
    await file('long.json', text);
    const r = await run(['import', 'long.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: checked/.test(l))).toEqual([
      `${'t'.repeat(100)}…: unknown top-level key "${'t'.repeat(50)}"…: a dataset holds only "ipos", "gmp" and "subscription"`,
      `ipos[0].about: about "${'x'.repeat(50)}"… is longer than 10,000 characters`,
      'ipos[1].minQty: a number of more than 1,000 characters (the rest of this record was not checked)',
      `ipos[2].${'k'.repeat(100)}…: unknown field "${'k'.repeat(50)}"… in an IPO record`,
      'ipokit import: long.json was refused: 4 problems; nothing was written',
      '',
    ]);
  });

  it('stops reading at a value nested too deep, with one problem line', async () => {
    await empty();
    const deep = `${'['.repeat(40)}${']'.repeat(40)}`;
    await file('deep.json', `{"ipos":[{"id":"a1","name":"Acme","slug":"acme","type":"EQ","about":${deep}}],"gmp":[{"ipoId":"a1"}]}`);
    const r = await run(['import', 'deep.json', '--schema', db.schema]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: checked/.test(l))).toEqual([
      `ipos[0].about${'[0]'.repeat(29)}: more than 32 levels of nested arrays and objects (the file was not read further)`,
      'ipokit import: deep.json was refused: 1 problem; nothing was written',
      '',
    ]);

    await file('deep-aside.json', `{"ipos":[],"x":{"y":${deep}}}`);
    const aside = await run(['import', 'deep-aside.json', '--schema', db.schema]);
    expect(aside.stderr.split('\n').filter((l) => !/^ipokit import: checked/.test(l))).toEqual([
      'x: unknown top-level key "x": a dataset holds only "ipos", "gmp" and "subscription"',
      'x: more than 32 levels of nested arrays and objects (the file was not read further)',
      'ipokit import: deep-aside.json was refused: 2 problems; nothing was written',
      '',
    ]);
  });

  it('answers usage errors with exit 2, an unreadable file and an unmigrated schema with exit 1', async () => {
    await file('good.json', GOOD);
    const usage = async (argv: string[], message: RegExp, overrides: Partial<CliIo> = {}) => {
      const r = await run(argv, overrides);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')[0]).toMatch(message);
      expect(r.stderr).toContain('Usage: ipokit import');
    };
    await usage(['import'], /missing argument <file>/);
    await usage(['import', 'a.json', 'b.json'], /unexpected argument "b.json"/);
    await usage(['import', 'good.json', '--batch-size', '0'], /--batch-size must be a whole number from 1 to 50000, got "0"/);
    await usage(['import', 'good.json', '--batches', '5'], /unknown option --batches/);
    await usage(['import', 'good.json', '--schema', 'Bad-Name'], /--schema must be lowercase/);
    await usage(['import', 'good.json'], /set DATABASE_URL=postgres:/, { env: {}, openDatabase: undefined });

    const missing = await run(['import', 'nope.json', '--schema', db.schema]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'ipokit import: cannot read nope.json: no such file\n' });

    const unmigrated = await run(['import', 'good.json', '--schema', 'ipokit_never_migrated']);
    expect(unmigrated.code).toBe(1);
    expect(unmigrated.stderr).toMatch(/^ipokit import: The PostgreSQL schema "?ipokit_never_migrated"? is not migrated; .* run 'ipokit migrate' first\.\n$/);
  });

  it('says in one line, without a stack, that the database failed halfway; exit 1, nothing written', async () => {
    await empty();
    await file('good.json', GOOD);
    const pool = db.kind === 'postgres' ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 }) : null;
    const client = failingOnSnapshotInsert(pool ?? db.client, 2);
    const r = await run(['import', 'good.json', '--schema', db.schema, '--batch-size', '10'], {
      openDatabase: async () => ({ client, close: async () => void (await pool?.end()) }),
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => !/^ipokit import: (checked|wrote)/.test(l))).toEqual([
      'ipokit import: The PostgreSQL store failed.: connection lost halfway (injected)',
      '',
    ]);
    expect(await count('ipos')).toBe(0);
    expect(await count('snapshots')).toBe(0);
  });

  it('draws one updating progress line per pass on a terminal', async () => {
    await empty();
    await file('good.json', GOOD);
    let err = '';
    const tty = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          err += chunk.toString();
          callback();
        },
      }),
      { isTTY: true },
    );
    const r = await run(['import', 'good.json', '--schema', db.schema, '--batch-size', '10'], { stderr: tty });
    expect(r.code).toBe(0);
    const lines = err.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\rpass 1\/2 checking \[[#-]{24}\] +\d+%  \d+ records  [\d,]+\/s\u001b\[K/);
    expect(lines[0]).toMatch(/\rpass 1\/2 checking \[#{24}\] 100%  32 records  [\d,]+\/s\u001b\[K$/);
    expect(lines[1]).toMatch(/\rpass 2\/2 writing  \[#{24}\] 100%  32 records  [\d,]+\/s\u001b\[K$/);
    expect(lines[2]).toBe('');
  });
});

describe('readDatasetFile', () => {
  /** What validateDataset says of the parsed text, and what the checker says of the streamed file. */
  async function both(text: string, blockSize: number, quietLimit?: number): Promise<void> {
    const path = await file('property.json', text);
    const expected = outcome(() => validateDataset(JSON.parse(text)));
    const checker = createDatasetChecker();
    const records: unknown[] = [];
    for await (const item of readDatasetFile(path, { blockSize, ...(quietLimit === undefined ? {} : { quietLimit }) })) {
      const record = checker.feed(item);
      if (record !== null) records.push(record);
    }
    const got = outcome(() => {
      checker.finish();
      return records;
    });
    if ('ok' in expected) expect(got).toEqual({ ok: [...expected.ok.ipos, ...expected.ok.snapshots, ...expected.ok.subscription] });
    else expect(got).toEqual(expected);
  }

  function outcome<T>(run: () => T): { ok: T } | { problems: unknown; problemCount: unknown; message: string } {
    try {
      return { ok: run() };
    } catch (err) {
      if (!(err instanceof IpokitError)) throw err;
      return { problems: err.problems, problemCount: err.problemCount, message: err.message };
    }
  }

  it('streams what JSON.parse reads, whatever the block boundaries, and whenever the chunked parser takes over (property)', async () => {
    const value = fc.oneof(
      { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom('\u{1F600}é', 'a\u2028b', '\\"', 1e21, -0, 0.1, 5e-324) },
    );
    // Subscription snapshots of the generated IPOs, some of them repeated or malformed.
    const subscription = (ids: readonly string[]) =>
      fc.array(
        fc.record({
          ipoId: ids.length === 0 ? fc.constant('a1') : fc.constantFrom(...ids),
          timestamp: fc.constantFrom('2026-11-18T09:30:00Z', '2026-11-18T15:00:00.5+05:30', '2026-11-19T10:00Z'),
          times: fc.dictionary(fc.constantFrom('qib', 'nii', 'retail', 'total', 'x'), fc.oneof(fc.constantFrom(null, 0, 1.25, 12345.67, -1, 1.005), value), { minKeys: 1, maxKeys: 3 }),
        }),
        { maxLength: 6 },
      );
    const top = fc.oneof(
      {
        weight: 6,
        arbitrary: datasetArbitrary({ maxIpos: 4, maxSnapshots: 8 }).chain((r) =>
          subscription(r.ipos.map((i) => i.id)).map((list) => ({ ...toDataset(r), subscription: list }) as Record<string, unknown>),
        ),
      },
      { weight: 2, arbitrary: fc.dictionary(fc.constantFrom('ipos', 'gmp', 'subscription', 'x', '1', '__proto__'), fc.oneof(value, fc.array(value))) },
      { weight: 1, arbitrary: value },
    );
    await fc.assert(
      fc.asyncProperty(top, fc.integer({ min: 1, max: 64 }), fc.boolean(), fc.constantFrom(undefined, 0, 5, 40), async (dataset, blockSize, pretty, quietLimit) => {
        const text = JSON.stringify(dataset, null, pretty ? 2 : undefined) ?? 'null';
        await both(text, blockSize, quietLimit);
      }),
      { numRuns: 300 },
    );
  });

  it('names the offset of the first invalid UTF-8 byte, whatever the block boundaries', async () => {
    const cases: Array<[string, number[]]> = [
      ['an overlong "/"', [0xc0, 0xaf]],
      ['a byte that is never UTF-8', [0xff]],
      ['an encoded surrogate', [0xed, 0xa0, 0x80]],
      ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
      ['an overlong three-byte form', [0xe0, 0x80, 0xaf]],
      ['a lone continuation byte', [0x80]],
      ['a sequence cut short', [0xe2, 0x82]],
    ];
    for (const [what, bad] of cases) {
      const head = Buffer.from('{"ipos":[{"about":"\u{1F600}é');
      const path = join(dir, 'utf8.json');
      await writeFile(path, Buffer.concat([head, Buffer.from(bad), Buffer.from('"}]}')]));
      for (const blockSize of [1, 2, 3, 5, 7, 64]) {
        const failure = await (async () => {
          for await (const item of readDatasetFile(path, { blockSize })) void item;
        })().then(
          () => null,
          (err: unknown) => err,
        );
        expect(failure, `${what}, blocks of ${blockSize}`).toMatchObject({ name: 'InvalidUtf8Error', offset: head.length, byte: bad[0] });
      }
    }
    // A file that ends inside a character.
    const cut = join(dir, 'cut.json');
    await writeFile(cut, Buffer.concat([Buffer.from('"\u{1F600}'), Buffer.from([0xf0, 0x9f, 0x98])]));
    await expect(
      (async () => {
        for await (const item of readDatasetFile(cut, { blockSize: 2 })) void item;
      })(),
    ).rejects.toMatchObject({ name: 'InvalidUtf8Error', offset: 5, byte: 0xf0, message: 'invalid byte 0xF0 at byte offset 5 (the file ends inside a character)' });
  });

  it('skips a byte-order mark, keeps a "__proto__" key as data, and reads a repeated key for the checker to refuse', async () => {
    const path = await file('odd.json', '\uFEFF{"gmp": 5, "__proto__": {"a": 1}, "ipos": [{"__proto__": 1}], "gmp": [1]}');
    const items: DatasetItem[] = [];
    for await (const item of readDatasetFile(path, { blockSize: 2 })) items.push(item);
    expect(items).toEqual([
      { kind: 'key', key: 'gmp' },
      { kind: 'value', key: 'gmp', value: 5 },
      { kind: 'key', key: '__proto__' },
      { kind: 'key', key: 'ipos' },
      { kind: 'value', key: 'ipos', value: [] },
      { kind: 'ipo', index: 0, value: JSON.parse('{"__proto__": 1}') as unknown },
      { kind: 'key', key: 'gmp' },
    ]);
    expect(Object.getPrototypeOf((items[5] as { value: object }).value)).toBe(Object.prototype);
  });

  it('gives each element of subscription as a subscription item, in its own index order, and a repeated or scalar subscription for the checker', async () => {
    const text = JSON.stringify({ gmp: [{ ipoId: 'a1' }], subscription: [{ ipoId: 'a1', times: { qib: 1.5, total: null } }, 7] }).slice(0, -1) + ', "subscription": 5}';
    const items: DatasetItem[] = [];
    for await (const item of readDatasetFile(await file('subscription.json', text), { blockSize: 3 })) items.push(item);
    expect(items).toEqual([
      { kind: 'key', key: 'gmp' },
      { kind: 'value', key: 'gmp', value: [] },
      { kind: 'snapshot', index: 0, value: { ipoId: 'a1' } },
      { kind: 'key', key: 'subscription' },
      { kind: 'value', key: 'subscription', value: [] },
      { kind: 'subscription', index: 0, value: { ipoId: 'a1', times: { qib: 1.5, total: null } } },
      { kind: 'subscription', index: 1, value: 7 },
      { kind: 'key', key: 'subscription' },
    ]);
    const scalar: DatasetItem[] = [];
    for await (const item of readDatasetFile(await file('subscription-scalar.json', '{"subscription": "none"}'))) scalar.push(item);
    expect(scalar).toEqual([
      { kind: 'key', key: 'subscription' },
      { kind: 'value', key: 'subscription', value: 'none' },
    ]);
  });

  it('refuses a number too long to hold in a subscription snapshot in place of that snapshot, and as the subscription value itself', async () => {
    const long = '1'.repeat(1_001);
    const items: DatasetItem[] = [];
    const text = `{"subscription": [{"ipoId": "a1", "times": {"qib": ${long}}}, {"ipoId": "a1"}]}`;
    for await (const item of readDatasetFile(await file('subscription-long.json', text), { blockSize: 64 })) items.push(item);
    expect(items.slice(2)).toEqual([
      { kind: 'refused', record: { part: 'subscription', index: 0 }, path: 'subscription[0].times.qib', message: 'a number of more than 1,000 characters (the rest of this record was not checked)' },
      { kind: 'subscription', index: 1, value: { ipoId: 'a1' } },
    ]);
    const top: DatasetItem[] = [];
    for await (const item of readDatasetFile(await file('subscription-long-top.json', `{"subscription": ${long}, "ipos": []}`))) top.push(item);
    expect(top).toEqual([
      { kind: 'key', key: 'subscription' },
      { kind: 'refused', record: null, path: 'subscription', message: 'a number of more than 1,000 characters' },
      { kind: 'key', key: 'ipos' },
      { kind: 'value', key: 'ipos', value: [] },
    ]);
  });
});

describe(`ipokit import in little memory (${ON})`, () => {
  // 300,000 snapshots (about 40 MB of JSON) under a 64 MB V8 heap. Holding the file would
  // not fit: its text alone is 40 MB and JSON.parse makes ~100 MB of objects of it (the
  // control below proves that this limit kills a process that does). Streamed, the heap
  // holds one batch and the checker's 12 bytes a snapshot (in array buffers, outside it).
  const HEAP_MB = 64;
  const SNAPSHOTS_IN_FILE = 300_000;
  let big: string;

  beforeAll(async () => {
    big = join(dir, 'big.json');
    const out = createWriteStream(big);
    const write = async (text: string) => {
      if (!out.write(text)) await once(out, 'drain');
    };
    await write('{"ipos":[');
    for (let i = 0; i < 100; i++) {
      await write(`${i === 0 ? '' : ','}${JSON.stringify({ id: `M${i}`, name: `Memory ${i} Ltd`, symbol: `MEM${i}`, slug: `memory-${i}`, type: 'EQ', exchanges: ['nse'] })}`);
    }
    await write('],"gmp":[');
    const t0 = Date.UTC(2026, 0, 1);
    for (let j = 0; j < SNAPSHOTS_IN_FILE; j++) {
      const ts = new Date(t0 + Math.floor(j / 100) * 60_000).toISOString();
      await write(`${j === 0 ? '' : ','}{"ipoId":"M${j % 100}","timestamp":"${ts}","sources":[{"name":"ipowatch","gmpPrice":${(j % 997) / 4}},{"name":"investorgain","gmpPrice":null}]}`);
    }
    await write(']}');
    out.end();
    await once(out, 'finish');
  }, 60_000);

  const child = promisify(execFile);
  const node = (args: string[], env: Record<string, string | undefined> = {}) =>
    child(process.execPath, [`--max-old-space-size=${HEAP_MB}`, ...args], {
      cwd: process.cwd(),
      env: { ...process.env, ...env },
      maxBuffer: 1 << 20,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
    );

  it('imports 300,000 snapshots with a 64 MB heap, which JSON.parse of the same file exceeds', async () => {
    await empty();
    const control = await node(['-e', `JSON.parse(require('fs').readFileSync(${JSON.stringify(big)}, 'utf8'))`]);
    expect(control.code).not.toBe(0);
    expect(control.stderr).toMatch(/heap out of memory/i);

    // The child runs the command as a shell would, on PGlite or on DATABASE_URL.
    const script = `
      import { runCli } from '@ipokit/cli';
      const url = process.env.DATABASE_URL;
      let openDatabase;
      if (!url) {
        const { PGlite } = await import('@electric-sql/pglite');
        const { migrate } = await import('@ipokit/storage-postgres');
        const lite = await PGlite.create();
        await migrate(lite, { schema: 'ipokit_memory' });
        openDatabase = async () => ({ client: lite, close: async () => {} });
      }
      let peak = 0;
      const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage().heapUsed); }, 20);
      const code = await runCli(['import', ${JSON.stringify(big)}, '--schema', process.env.IPOKIT_SCHEMA, '--json'],
        { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), openDatabase });
      clearInterval(sample);
      process.stderr.write('peak heap ' + Math.round(peak / 1048576) + ' MB\\n');
      process.exitCode = code;
    `;
    const started = Date.now();
    const r = await node(['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
      IPOKIT_SCHEMA: db.kind === 'postgres' ? db.schema : 'ipokit_memory',
    });
    expect(r.stderr).toMatch(/peak heap \d+ MB/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ipos: 100, snapshots: SNAPSHOTS_IN_FILE });
    if (db.kind === 'postgres') expect(await count('snapshots')).toBe(SNAPSHOTS_IN_FILE);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});


describe('ipokit import of hostile values in little memory', () => {
  // One value of a file that nothing could hold, under a 64 MB V8 heap: each is refused
  // while it streams by, with the problem line of its place, never built whole. The child
  // imports into a database that is migrated and empty (a refused file gets no further).
  const HEAP_MB = 64;
  const child = promisify(execFile);

  /** Writes `{"ipos":[{<a valid record>,` + what `body(write)` writes + `}]}` to a new file. */
  async function hostile(name: string, body: (write: (text: string) => Promise<void>) => Promise<void>): Promise<string> {
    const path = join(dir, name);
    const out = createWriteStream(path);
    const write = async (text: string) => {
      if (!out.write(text)) await once(out, 'drain');
    };
    await write('{"ipos":[{"id":"a1","name":"Acme","slug":"acme","type":"EQ",');
    await body(write);
    await write('}]}');
    out.end();
    await once(out, 'finish');
    return path;
  }

  /** `text` written `times` times, in blocks of a megabyte. */
  const repeated = (text: string, times: number) => async (write: (text: string) => Promise<void>) => {
    const perBlock = Math.max(1, Math.floor(2 ** 20 / text.length));
    for (let done = 0; done < times; done += perBlock) await write(text.repeat(Math.min(perBlock, times - done)));
  };

  async function importInLittleMemory(path: string): Promise<{ code: number; stderr: string }> {
    const script = `
      import { runCli } from '@ipokit/cli';
      import { SCHEMA_VERSION } from '@ipokit/storage-postgres';
      // Answers the schema check; the file is refused before anything is written.
      const client = { query: async () => ({ rows: [{ v: SCHEMA_VERSION }] }), transaction: async () => { throw new Error('no write expected'); } };
      const code = await runCli(['import', ${JSON.stringify(basename(path))}, '--schema', 'ipokit_hostile'],
        { stdout: process.stdout, stderr: process.stderr, env: {}, cwd: ${JSON.stringify(dirname(path))}, openDatabase: async () => ({ client, close: async () => {} }) });
      process.stderr.write('max rss ' + Math.round(process.resourceUsage().maxRSS / 1024) + ' MB\\n');
      process.exitCode = code;
    `;
    try {
      const r = await child(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: process.cwd(),
        maxBuffer: 1 << 20,
      });
      return { code: 0, stderr: r.stderr };
    } catch (err) {
      const e = err as { code?: number; signal?: string; stderr?: string };
      return { code: e.code ?? -1, stderr: `${e.stderr ?? ''}${e.signal ?? ''}` };
    }
  }

  /** The problem lines and the verdict of a refused import; the peak RSS it took is logged. */
  async function refused(path: string): Promise<string[]> {
    const r = await importInLittleMemory(path);
    expect(r.stderr).not.toMatch(/heap out of memory|SIGABRT/i);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^max rss \d+ MB$/m);
    return r.stderr.split('\n').filter((l) => l !== '' && !/^(ipokit import: checked|max rss)/.test(l));
  }

  it('refuses a value nested a million levels deep (2 MB)', async () => {
    const path = await hostile('nested.json', async (write) => {
      await write('"about":');
      await repeated('[', 1_000_000)(write);
      await repeated(']', 1_000_000)(write);
    });
    expect(await refused(path)).toEqual([
      `ipos[0].about${'[0]'.repeat(29)}: more than 32 levels of nested arrays and objects (the file was not read further)`,
      'ipokit import: nested.json was refused: 1 problem; nothing was written',
    ]);
  }, 30_000);

  it('refuses a string of 50 MB', async () => {
    const path = await hostile('string.json', async (write) => {
      await write('"about":"');
      await repeated('x', 50 * 2 ** 20)(write);
      await write('"');
    });
    expect(await refused(path)).toEqual([
      `ipos[0].about: about "${'x'.repeat(50)}"… is longer than 10,000 characters`,
      'ipokit import: string.json was refused: 1 problem; nothing was written',
    ]);
  }, 30_000);

  it('refuses a key of 50 MB, printing its path cut short', async () => {
    const path = await hostile('key.json', async (write) => {
      await write('"');
      await repeated('k', 50 * 2 ** 20)(write);
      await write('":1');
    });
    expect(await refused(path)).toEqual([
      `ipos[0].${'k'.repeat(100)}…: unknown field "${'k'.repeat(50)}"… in an IPO record`,
      'ipokit import: key.json was refused: 1 problem; nothing was written',
    ]);
  }, 30_000);

  it('refuses a number of 50 MB', async () => {
    const path = await hostile('number.json', async (write) => {
      await write('"minQty":');
      await repeated('1', 50 * 2 ** 20)(write);
    });
    expect(await refused(path)).toEqual([
      'ipos[0].minQty: a number of more than 1,000 characters (the rest of this record was not checked)',
      'ipokit import: number.json was refused: 1 problem; nothing was written',
    ]);
  }, 30_000);

  it('refuses a record of 10 million values (40 MB)', async () => {
    const path = await hostile('values.json', async (write) => {
      await write('"strengths":["x"');
      await repeated(',"x"', 10_000_000)(write);
      await write(']');
    });
    expect(await refused(path)).toEqual([
      'ipos[0]: a record of more than 100,000 values (it was not checked)',
      'ipokit import: values.json was refused: 1 problem; nothing was written',
    ]);
  }, 30_000);
});
