/**
 * What a dataset file must be before it is JSON (docs/spec.md#datasets: valid Unicode), and how its
 * faults are told, shared by `ipokit import` (which streams the file) and the demo's
 * `IPOKIT_DATASET` / `ipokit serve --dataset` (which read it whole): UTF-8 checked to the
 * byte, an empty file called empty, a JSON syntax error placed by line and column.
 */
import { readFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { jsonVerifier } from 'stream-json/core/utils/verifier.js';
import { verifyFile } from 'stream-json/file/verifier.js';
import { CliError } from './io.js';

/** A JSON syntax error in a dataset file, with where it is (or an empty file). */
export class MalformedJsonError extends Error {
  /** 1-based line and column (in characters) of the fault; null when it has no place. */
  readonly line: number | null;
  readonly column: number | null;
  constructor(message: string, line: number | null, column: number | null) {
    super(message);
    this.name = 'MalformedJsonError';
    this.line = line;
    this.column = column;
  }
}

/** A dataset file that is not UTF-8: where the first byte that is no part of a character is. */
export class InvalidUtf8Error extends Error {
  /** Its offset in the file, from 0 (a byte-order mark counts). */
  readonly offset: number;
  /** The byte. */
  readonly byte: number;
  constructor(offset: number, byte: number, endsInside: boolean) {
    const hex = byte.toString(16).toUpperCase().padStart(2, '0');
    super(`invalid byte 0x${hex} at byte offset ${offset}${endsInside ? ' (the file ends inside a character)' : ''}`);
    this.name = 'InvalidUtf8Error';
    this.offset = offset;
    this.byte = byte;
  }
}

/**
 * The index of the first byte of the first ill-formed sequence in `bytes` (as the Unicode
 * standard's table of well-formed UTF-8 has them: no overlong form, no surrogate, nothing
 * above U+10FFFF), or -1 when all of it is UTF-8. A sequence cut short by the end is
 * ill-formed.
 *
 * @example
 * ```ts
 * firstInvalidUtf8(Uint8Array.from([0x61, 0xc0, 0xaf])); // 1 (an overlong "/")
 * firstInvalidUtf8(new TextEncoder().encode('é€'));     // -1
 * ```
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  return scanUtf8(bytes)?.at ?? -1;
}

/** Where `bytes` stop being UTF-8, and whether only because they end inside a character. */
function scanUtf8(bytes: Uint8Array): { at: number; endsInside: boolean } | null {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    // The continuation bytes that follow this lead byte, and the range of the first of them.
    let more: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) more = 1;
    else if (b === 0xe0) [more, low] = [2, 0xa0];
    else if (b === 0xed) [more, high] = [2, 0x9f];
    else if (b >= 0xe1 && b <= 0xef) more = 2;
    else if (b === 0xf0) [more, low] = [3, 0x90];
    else if (b === 0xf4) [more, high] = [3, 0x8f];
    else if (b >= 0xf1 && b <= 0xf3) more = 3;
    else return { at: i, endsInside: false };
    for (let k = 1; k <= more; k++) {
      if (i + k >= n) return { at: i, endsInside: true };
      const c = bytes[i + k]!;
      if (k === 1 ? c < low || c > high : (c & 0xc0) !== 0x80) return { at: i, endsInside: false };
    }
    i += more + 1;
  }
  return null;
}

/**
 * UTF-8 blocks (read one after the other from a file) to text, strictly: a block may end
 * inside a character, whose start waits for the next; a byte that cannot be UTF-8 throws
 * {@link InvalidUtf8Error} with its offset in the whole stream. Nothing is replaced by
 * U+FFFD, and a byte-order mark is kept (the reader decides about it).
 *
 * @example
 * ```ts
 * const utf8 = new Utf8Blocks();
 * let text = utf8.write(Buffer.from([0x61, 0xe2, 0x82])); // 'a'
 * text += utf8.write(Buffer.from([0xac]));                // '€'
 * text += utf8.end();
 * ```
 */
export class Utf8Blocks {
  /** The start of a character that the last block ended inside (0 to 3 bytes). */
  private carry: Uint8Array = new Uint8Array(0);
  /** The stream offset of `carry[0]`. */
  private offset = 0;

  /** The text of `block` (and of what the last one left), but a character it ends inside. */
  write(block: Uint8Array): string {
    const data = this.carry.length === 0 ? block : Buffer.concat([this.carry, block]);
    const cut = completeLength(data);
    const whole = data.subarray(0, cut);
    // The native check is fast; the scan in JavaScript only finds the offset once it failed.
    if (!isUtf8(whole)) this.fail(whole);
    const text = Buffer.from(whole.buffer, whole.byteOffset, whole.length).toString('utf8');
    // A copy (Buffer's slice() would be a view): the caller may reuse the block's memory.
    this.carry = new Uint8Array(data.subarray(cut));
    this.offset += cut;
    return text;
  }

  /** The end of the stream: a character it ends inside is an error. */
  end(): string {
    if (this.carry.length > 0) this.fail(this.carry);
    return '';
  }

  private fail(bytes: Uint8Array): never {
    const found = scanUtf8(bytes) ?? { at: 0, endsInside: true };
    throw new InvalidUtf8Error(this.offset + found.at, bytes[found.at]!, found.endsInside);
  }
}

/** How much of `data` does not end inside a character (its last 1 to 3 bytes may). */
function completeLength(data: Uint8Array): number {
  const n = data.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = data[n - back]!;
    if ((b & 0xc0) === 0x80) continue;
    if (b < 0xc0) return n;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return back < length ? n - back : n;
  }
  return n;
}

/** stream-chain's marker for "no more input" (a registered symbol, so shared by every copy). */
const NONE = Symbol.for('object-stream.none');

/** JSON's white space. */
const BLANK_RE = /^[ \t\n\r]*$/;

/**
 * Why a text that is not JSON is not: empty, only white space, or the syntax error the
 * stream-json verifier finds, with its line and column (the same words `ipokit import`
 * gives for the same file). A text without a leading byte-order mark.
 *
 * @example
 * ```ts
 * jsonFault('{"ipos": [\n  {"id": "a1"\n   "slug": "acme"}\n]}').message; // "expected ',' at line 3, column 4"
 * ```
 */
export function jsonFault(text: string): MalformedJsonError | null {
  if (BLANK_RE.test(text)) return noJsonValue(text.length === 0);
  const verify = jsonVerifier();
  try {
    verify(text);
    verify(NONE as unknown as string);
  } catch (err) {
    return verifierFault(err);
  }
  return null;
}

/**
 * The fault of a file that holds no JSON value: nothing (a byte-order mark at most), or
 * white space only. A parser would say it expected a value at line 1, column 1.
 *
 * @example
 * ```ts
 * noJsonValue(true).message; // 'the file is empty'
 * ```
 */
export function noJsonValue(empty: boolean): MalformedJsonError {
  return new MalformedJsonError(empty ? 'the file is empty' : 'the file holds only white space', null, null);
}

/**
 * Whether `text` is JSON white space only (or nothing).
 *
 * @example
 * ```ts
 * isBlank(' \n'); // true
 * ```
 */
export function isBlank(text: string): boolean {
  return BLANK_RE.test(text);
}

/**
 * The syntax error of the JSON file at `path`, placed by line and column: the verifier
 * reads it again (the parser that failed does not know where it was).
 *
 * @example
 * ```ts
 * throw await locateJsonFault('ipos.json', parserError);
 * ```
 */
export async function locateJsonFault(path: string, parserError: unknown): Promise<MalformedJsonError> {
  try {
    await verifyFile(path);
  } catch (err) {
    const fault = verifierFault(err);
    if (fault !== null) return fault;
  }
  const text = parserError instanceof Error ? parserError.message : String(parserError);
  return new MalformedJsonError(text.replace(/^Parser cannot parse input: /, ''), null, null);
}

function verifierFault(err: unknown): MalformedJsonError | null {
  const e = err as { line?: unknown; pos?: unknown; message?: unknown };
  if (typeof e.line !== 'number' || typeof e.pos !== 'number') return null;
  const what = String(e.message)
    .replace(/^ERROR at \d+ \(\d+, \d+\): /, '')
    .replace(/^Verifier cannot parse input: /, '')
    .replace(/^Verifier has expected /, 'expected ');
  return new MalformedJsonError(`${what} at line ${e.line}, column ${e.pos}`, e.line, e.pos);
}

/**
 * Reads a whole dataset file as `JSON.parse` would (a leading byte-order mark skipped),
 * for the demo's `IPOKIT_DATASET` and `ipokit serve --dataset`. Every fault is a one-line
 * {@link CliError} (exit 1) that starts with `label` and the file: unreadable, not UTF-8
 * (with the byte offset of the first invalid byte), empty, or not JSON (with the line and
 * column, as `ipokit import` says it).
 *
 * @example
 * ```ts
 * const dataset = await readDatasetJson('ipos.json', 'IPOKIT_DATASET');
 * // or throws CliError('IPOKIT_DATASET ipos.json is not valid UTF-8: invalid byte 0xC0 at byte offset 30')
 * ```
 */
export async function readDatasetJson(file: string, label: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new CliError(`cannot read ${label} ${file}: ${(err as Error).message}`, 1);
  }
  if (!isUtf8(bytes)) {
    const found = scanUtf8(bytes) ?? { at: 0, endsInside: false };
    throw new CliError(`${label} ${file} is not valid UTF-8: ${new InvalidUtf8Error(found.at, bytes[found.at] ?? 0, found.endsInside).message}`, 1);
  }
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(`${label} ${file} is not valid JSON: ${jsonFault(text)?.message ?? (err as Error).message}`, 1);
  }
}
