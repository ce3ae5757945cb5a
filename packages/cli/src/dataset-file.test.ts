import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstInvalidUtf8, readDatasetJson, Utf8Blocks } from './dataset-file.js';
import { readDatasetFile } from './import.js';
import { CliError } from './io.js';
import { startServer } from './server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-dataset-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** What `readDatasetJson` rejects with: the CliError's message and exit code. */
async function refusal(path: string, label = 'IPOKIT_DATASET'): Promise<{ message: string; exitCode: number }> {
  try {
    await readDatasetJson(path, label);
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return { message: (err as CliError).message, exitCode: (err as CliError).exitCode };
  }
  throw new Error(`${path} was read`);
}

/** The message `ipokit import` gives for the same file (its reader's error). */
async function importMessage(path: string): Promise<string> {
  try {
    for await (const item of readDatasetFile(path, { blockSize: 7 })) void item;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${path} was read`);
}

describe('firstInvalidUtf8', () => {
  it('finds the first byte of the first ill-formed sequence', () => {
    const at = (...bytes: number[]) => firstInvalidUtf8(Uint8Array.from(bytes));
    expect(at()).toBe(-1);
    expect(at(0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xf4, 0x8f, 0xbf, 0xbf, 0xed, 0x9f, 0xbf)).toBe(-1);
    expect(at(0x61, 0xc0, 0xaf, 0xff, 0xed, 0xa0, 0x80)).toBe(1);
    expect(at(0x61, 0xff)).toBe(1);
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // a surrogate
    expect(at(0xe0, 0x9f, 0xbf)).toBe(0); // overlong
    expect(at(0xf0, 0x8f, 0xbf, 0xbf)).toBe(0); // overlong
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // above U+10FFFF
    expect(at(0xf5, 0x80, 0x80, 0x80)).toBe(0);
    expect(at(0x61, 0x80)).toBe(1); // a continuation byte alone
    expect(at(0x61, 0xe2, 0x82)).toBe(1); // cut short
    expect(at(0xe2, 0x82, 0x61)).toBe(0);
  });

  it('agrees with a strict decoder, and the bytes before it are valid (property)', () => {
    const bytes = fc.array(
      fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => [b]) },
        { weight: 3, arbitrary: fc.string({ unit: 'grapheme' }).map((s) => [...Buffer.from(s)]) },
        { weight: 1, arbitrary: fc.constantFrom([0xef, 0xbf, 0xbd], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0x80], [0xe2, 0x82]) },
      ),
      { maxLength: 12 },
    );
    const strict = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(bytes, (parts) => {
        const b = Uint8Array.from(parts.flat());
        const at = firstInvalidUtf8(b);
        let valid = true;
        try {
          strict.decode(b);
        } catch {
          valid = false;
        }
        expect(at === -1).toBe(valid);
        if (at >= 0) {
          expect(() => strict.decode(b.subarray(0, at))).not.toThrow();
          // Whatever follows, no character starts at `at`.
          for (const more of [[], [0x80], [0x80, 0x80], [0x80, 0x80, 0x80]]) {
            const decoded = new TextDecoder().decode(Uint8Array.from([...b.subarray(at, at + 1), ...more]));
            if (b[at]! >= 0xc2 && b[at]! <= 0xf4 && more.length > 0) continue; // a lead byte that could start one
            expect(decoded.startsWith('\uFFFD')).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('Utf8Blocks', () => {
  it('decodes blocks cut anywhere, and names the offset of the first invalid byte in the whole stream', () => {
    const text = Buffer.from('a\u{1F600}é€b');
    for (let size = 1; size <= text.length; size++) {
      const blocks = new Utf8Blocks();
      let out = '';
      for (let i = 0; i < text.length; i += size) out += blocks.write(text.subarray(i, i + size));
      out += blocks.end();
      expect(out).toBe('a\u{1F600}é€b');

      const bad = Buffer.concat([text, Buffer.from([0xe2, 0x82, 0x61])]);
      const failing = new Utf8Blocks();
      expect(() => {
        for (let i = 0; i < bad.length; i += size) failing.write(bad.subarray(i, i + size));
        failing.end();
      }).toThrow(expect.objectContaining({ name: 'InvalidUtf8Error', offset: text.length, byte: 0xe2, message: `invalid byte 0xE2 at byte offset ${text.length}` }) as Error);
    }
  });
});

describe('readDatasetJson: the demo’s dataset file (IPOKIT_DATASET, ipokit serve --dataset)', () => {
  it('reads a dataset, skipping a byte-order mark', async () => {
    const path = await file('good.json', '\uFEFF{"ipos": [], "gmp": []}');
    expect(await readDatasetJson(path, 'IPOKIT_DATASET')).toEqual({ ipos: [], gmp: [] });
  });

  it('refuses invalid UTF-8 with the byte offset of the first invalid byte, as ipokit import does', async () => {
    const head = '{"ipos":[{"id":"a1","name":"Ac';
    const path = await file('latin.json', Buffer.concat([Buffer.from(head), Buffer.from([0xc0, 0xaf, 0xff, 0xed, 0xa0, 0x80]), Buffer.from('me"}]}')]));
    expect(await refusal(path)).toEqual({ message: `IPOKIT_DATASET ${path} is not valid UTF-8: invalid byte 0xC0 at byte offset ${head.length}`, exitCode: 1 });
    expect(await importMessage(path)).toBe(`invalid byte 0xC0 at byte offset ${head.length}`);
  });

  it('says that an empty file is empty, and reports malformed JSON with its line and column, as ipokit import does', async () => {
    const empty = await file('empty.json', '');
    expect(await refusal(empty)).toEqual({ message: `IPOKIT_DATASET ${empty} is not valid JSON: the file is empty`, exitCode: 1 });
    expect(await importMessage(empty)).toBe('the file is empty');
    const blank = await file('blank.json', ' \n');
    expect((await refusal(blank)).message).toBe(`IPOKIT_DATASET ${blank} is not valid JSON: the file holds only white space`);

    for (const [name, text] of [
      ['comma.json', '{"ipos": [\n  {"id": "a1", "name": "Acme"\n   "slug": "acme"}\n]}'],
      ['truncated.json', '\uFEFF{"ipos": [{"id": "a1"'],
      ['trailing.json', '{"ipos": []}\n\n  x'],
      ['unicode.json', '{"ipos": ["\u{1F600}é", tru]}'],
    ] as const) {
      const path = await file(name, text);
      const expected = await importMessage(path);
      expect(expected).toMatch(/ at line \d+, column \d+$/);
      expect(await refusal(path)).toEqual({ message: `IPOKIT_DATASET ${path} is not valid JSON: ${expected}`, exitCode: 1 });
    }
    expect(await importMessage(await file('comma2.json', '{"ipos": [\n  {"id": "a1", "name": "Acme"\n   "slug": "acme"}\n]}'))).toBe("expected ',' at line 3, column 4");
  });

  it('is what startServer reads for datasetFile', async () => {
    const path = await file('served-latin.json', Buffer.from([0x7b, 0xff, 0x7d]));
    await expect(startServer({ port: 0, datasetFile: path, datasetLabel: 'IPOKIT_DATASET' })).rejects.toThrow(
      new CliError(`IPOKIT_DATASET ${path} is not valid UTF-8: invalid byte 0xFF at byte offset 1`, 1),
    );
    const empty = await file('served-empty.json', '');
    await expect(startServer({ port: 0, datasetFile: empty })).rejects.toThrow(`dataset file ${empty} is not valid JSON: the file is empty`);
  });
});
