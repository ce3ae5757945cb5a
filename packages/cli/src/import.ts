/**
 * `ipokit import <file>`: a dataset file of any size into PostgreSQL (docs/spec.md#datasets), streamed.
 * The file is read record by record with stream-json, twice: the first pass checks all of it,
 * the second writes it in batches inside one transaction (`importDatasetStream`), so that a
 * 10-million-snapshot file needs no more memory than a small one, and is imported whole or
 * not at all.
 */
import { open, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isIpokitError } from '@ipokit/core';
import { type DatasetItem, type DatasetPart } from '@ipokit/core/backend';
import { DEFAULT_IMPORT_BATCH_SIZE, importDatasetStream, type StreamImportProgress } from '@ipokit/storage-postgres';
import { Assembler } from 'stream-json/core/assembler.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { integer, parseOrThrow, takePositionals } from './args.js';
import { openDatabase, schemaOf } from './database.js';
import { InvalidUtf8Error, isBlank, locateJsonFault, MalformedJsonError, noJsonValue, Utf8Blocks } from './dataset-file.js';
import type { CliIo, Command } from './io.js';
import { reportError } from './report.js';

/** The usage line of `ipokit import`. */
export const IMPORT_USAGE = 'Usage: ipokit import <file> [--batch-size N] [--schema S] [--json]';

/**
 * `ipokit import <file> [--batch-size N] [--schema S] [--json]`: imports a dataset file
 * into PostgreSQL (`DATABASE_URL`, or `io.openDatabase`), all or nothing. Progress goes to
 * stderr (one updating line on a terminal, a line every few seconds otherwise), the summary
 * to stdout (`--json`: `{"ipos":N,"snapshots":M,"subscription":K,"seconds":T}`).
 *
 * Exit codes: 0 imported; 1 refused (every problem as `path: message`, then the count),
 * malformed JSON (with its line and column; an empty file is said to be empty), bytes that
 * are not UTF-8 (with the offset of the first), an unreadable file or a database failure
 * (one line); 2 bad usage (thrown as a `CliError`, which `runCli` prints with the usage).
 * A value too large to hold is refused as it streams by (see {@link readDatasetFile}).
 *
 * @example
 * ```ts
 * const code = await importCommand(['ipos.json', '--batch-size', '10000'], io);
 * // stdout: "imported 1200 IPOs, 48000 GMP snapshots and 900 subscription snapshots in 3.4 s"
 * ```
 */
export const importCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { 'batch-size': { type: 'string' }, schema: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
    allowPositionals: true,
  });
  const [file] = takePositionals(positionals, ['<file>']) as [string];
  const batchSize = values['batch-size'] === undefined ? DEFAULT_IMPORT_BATCH_SIZE : integer('--batch-size', values['batch-size'], 1, 50_000);
  const schema = schemaOf(values.schema, io);
  const path = resolve(io.cwd, file);
  const say = (line: string) => io.stderr.write(`ipokit import: ${line}\n`);

  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
  } catch (err) {
    say(`cannot read ${file}: ${(err as { code?: string }).code === 'ENOENT' ? 'no such file' : errorText(err)}`);
    return 1;
  }

  const db = await openDatabase(io, schema);
  const started = performance.now();
  const read = { bytes: 0 };
  const progress = new ProgressReport(io, size, () => read.bytes);
  try {
    const result = await importDatasetStream(
      { client: db.client, schema, batchSize, onProgress: (p) => progress.update(p) },
      () => readDatasetFile(path, { progress: read }),
    );
    progress.end();
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    io.stdout.write(
      values.json === true
        ? `${JSON.stringify({ ipos: result.ipos, snapshots: result.snapshots, subscription: result.subscription, seconds })}\n`
        : `imported ${result.ipos} IPOs, ${result.snapshots} GMP snapshots and ${result.subscription} subscription snapshots in ${seconds} s\n`,
    );
    return 0;
  } catch (err) {
    progress.abandon();
    if (err instanceof MalformedJsonError) {
      say(`${file} is not valid JSON: ${err.message}; nothing was written`);
      return 1;
    }
    if (err instanceof InvalidUtf8Error) {
      say(`${file} is not valid UTF-8: ${err.message}; nothing was written`);
      return 1;
    }
    if (isIpokitError(err, 'ERR:DATASET')) {
      const problems = err.problems ?? [];
      printRefusal(io, 'ipokit import', file, problems, err.problemCount ?? problems.length);
      return 1;
    }
    if (isReadError(err)) {
      say(`cannot read ${file}: ${errorText(err)}; nothing was written`);
      return 1;
    }
    return reportError(err, io, { command: 'import', usage: IMPORT_USAGE });
  } finally {
    await db.close();
  }
};

export { InvalidUtf8Error, MalformedJsonError } from './dataset-file.js';

/**
 * How a refused dataset is told on stderr (by `ipokit import` and `ipokit push`): every
 * problem as `path: message`, one a line, then `WHO: FILE was refused: N problems (the first
 * M listed); nothing was written`.
 *
 * @example
 * ```ts
 * printRefusal(io, 'ipokit import', 'ipos.json', err.problems, err.problemCount);
 * // ipos[2].endDate: endDate 2026-12-05 is before startDate 2026-12-10
 * // ipokit import: ipos.json was refused: 1 problem; nothing was written
 * ```
 */
export function printRefusal(io: CliIo, who: string, file: string, problems: ReadonlyArray<{ path: string; message: string }>, count: number): void {
  for (const p of problems) io.stderr.write(`${oneLine(p.path)}: ${oneLine(p.message)}\n`);
  const listed = count > problems.length ? ` (the first ${problems.length} listed)` : '';
  io.stderr.write(`${who}: ${file} was refused: ${count} problem${count === 1 ? '' : 's'}${listed}; nothing was written\n`);
}

/** Bytes read at a time. */
const BLOCK_SIZE = 1 << 16;

// What one value of a file may be. A dataset needs far less (docs/spec.md#datasets): these bounds only
// keep a hostile file from making the reader hold more than it can, each with a margin.
/** Arrays and objects in one another, the dataset's own included: a dataset needs 6 (`ipos[i].gmp.sources[j]` of the API's output). */
const MAX_NESTING = 32;
/**
 * UTF-16 units kept of a string: two per character of the longest string a dataset holds
 * (10,000 characters), and one character more. A longer string is cut there, and the
 * checker still finds it longer than 10,000 characters.
 */
const MAX_STRING_UNITS = 2 * 10_000 + 2;
/** UTF-16 units kept of a key: every field name is short, and any longer key is unknown however it goes on. */
const MAX_KEY_UNITS = 256;
/** Characters of a number: a dataset's are at most 11 ("-9999999.99"); JSON writers use at most ~25. */
const MAX_NUMBER_LENGTH = 1_000;
/**
 * Characters the fast parser may read without giving a token: it gathers a string, key or
 * number whole, so one longer than this (or that much white space) makes the file be read
 * again by the parser that gives them in chunks (slower, so only then). A dataset's longest
 * string is 120,000 characters of JSON at most (10,000 characters as \u escapes).
 */
const QUIET_LIMIT = 1 << 20;
/** Values (scalars, arrays and objects) of one IPO record or snapshot (GMP or subscription). */
const MAX_RECORD_VALUES = 100_000;
/** Characters of text (strings and keys, as kept) of one IPO record or snapshot (GMP or subscription). */
const MAX_RECORD_TEXT = 4_000_000;

/** Options of {@link readDatasetFile}. */
export interface ReadDatasetFileOptions {
  /** Counts the bytes read so far (reset to 0 when reading starts), for progress. */
  progress?: { bytes: number };
  /** Bytes read at a time; default 64 KiB. */
  blockSize?: number;
  /** Characters read without a token before the chunked parser takes over; default 1 Mi (tests set it low). */
  quietLimit?: number;
}

/**
 * The {@link DatasetItem}s of a dataset JSON file, read as a stream: one IPO record, GMP
 * snapshot or subscription snapshot assembled at a time (never the whole file). Gives what `JSON.parse` of the file
 * would give (a leading byte-order mark is skipped); a top-level key given twice is passed
 * on once more without its value, for the checker to refuse.
 *
 * No value is ever held whole beyond what a dataset can need: a string is kept to its
 * first 10,001 characters at least (enough for the checker to refuse it as too long), a
 * key to its first 256 UTF-16 units (a key that long is unknown anyway); a number of more
 * than 1,000 characters, or a record of more than 100,000 values or 4,000,000 characters
 * of text, is a `refused` item in place of the record; arrays and objects nested more than
 * 32 deep are a `refused` item after which the file is read no further.
 *
 * A syntax error rejects with {@link MalformedJsonError} giving its line and column (an
 * empty file: "the file is empty"); bytes that are not UTF-8 with {@link InvalidUtf8Error}
 * giving the offset of the first.
 *
 * @example
 * ```ts
 * for await (const item of readDatasetFile('ipos.json')) if (item.kind === 'subscription') count += 1;
 * ```
 */
export async function* readDatasetFile(path: string, options: ReadDatasetFileOptions = {}): AsyncGenerator<DatasetItem> {
  let given = 0;
  try {
    for await (const item of readPass(path, options, false)) {
      given += 1;
      yield item;
    }
    return;
  } catch (err) {
    if (!(err instanceof TooQuiet)) throw err;
  }
  // Read again, in chunks, past the items already given: the same items, in bounded memory.
  let skip = given;
  for await (const item of readPass(path, options, true)) {
    if (skip > 0) skip -= 1;
    else yield item;
  }
}

/** The fast parser read {@link QUIET_LIMIT} characters without a token. */
class TooQuiet extends Error {}

/** One reading of the file: with the fast parser, or with the one that gives values in chunks. */
async function* readPass(path: string, options: ReadDatasetFileOptions, chunked: boolean): AsyncGenerator<DatasetItem> {
  const read = options.progress ?? { bytes: 0 };
  const quietLimit = options.quietLimit ?? QUIET_LIMIT;
  const blockSize = options.blockSize ?? BLOCK_SIZE;
  read.bytes = 0;
  const handle = await open(path, 'r');
  try {
    const utf8 = new Utf8Blocks();
    const parse = jsonParser(chunked ? { packValues: false, streamValues: true } : { packValues: true, streamValues: false });
    let quiet = 0;
    const items = new ItemBuilder();
    const buffer = Buffer.allocUnsafe(blockSize);
    let first = true;
    /** Nothing but a byte-order mark so far; nothing but white space so far. */
    let empty = true;
    let blank = true;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, blockSize, null);
      read.bytes += bytesRead;
      let text = bytesRead === 0 ? utf8.end() : utf8.write(buffer.subarray(0, bytesRead));
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      if (text.length > 0) empty = false;
      if (blank && !isBlank(text)) blank = false;
      let tokens: unknown;
      try {
        tokens = text.length > 0 ? parse(text) : undefined;
        if (bytesRead === 0) {
          if (blank) throw noJsonValue(empty);
          const last = parse(NONE as unknown as string);
          for (const token of tokensOf(tokens)) items.token(token);
          tokens = last;
        }
        const some = tokensOf(tokens);
        for (const token of some) items.token(token);
        quiet = some.length > 0 ? 0 : quiet + text.length;
      } catch (err) {
        if (err instanceof MalformedJsonError) throw err;
        throw await locateJsonFault(path, err);
      }
      if (!chunked && quiet > quietLimit && !items.stopped) throw new TooQuiet();
      if (items.ready.length > 0) {
        const ready = items.ready;
        items.ready = [];
        yield* ready;
      }
      if (items.stopped || bytesRead === 0) break;
    }
    if (!items.ended && !items.stopped) throw await locateJsonFault(path, new Error('the file ends before the dataset does'));
  } finally {
    await handle.close();
  }
}

/** stream-chain's marker for "no more input" (a registered symbol, so shared by every copy). */
const NONE = Symbol.for('object-stream.none');

function tokensOf(out: unknown): readonly Token[] {
  if (typeof out === 'object' && out !== null && Array.isArray((out as { values?: unknown }).values)) return (out as { values: Token[] }).values;
  return [];
}

/**
 * Turns the parser's tokens into items: the top level is followed key by key, each element
 * of `ipos`, `gmp` and `subscription` is assembled alone, everything else is skipped
 * without being built.
 */
class ItemBuilder {
  ready: DatasetItem[] = [];
  /** The top-level value has ended. */
  ended = false;
  /** A value was refused that the reader cannot get past (nested too deep): nothing more is read. */
  stopped = false;
  private state: 'start' | 'key' | 'value' | 'skip' | 'array' | 'element' | 'end' = 'start';
  private key = '';
  private readonly seen = new Set<string>();
  /** While skipping: how deep in the skipped value, where to go after it, and where it is. */
  private depth = 0;
  private afterSkip: 'key' | 'end' | 'array' = 'key';
  private skipping = '$';
  private part: DatasetPart = 'ipos';
  private index = 0;
  private assembler = new Assembler();
  /** Arrays and objects open, the dataset's own included. */
  private level = 0;
  /** Values and characters of text of the element being assembled. */
  private values = 0;
  private textLength = 0;
  /** The string, key or number being read: what is kept of it, how much may be, whether more came. */
  private text = '';
  private limit = 0;
  private over = false;

  token(t: Token): void {
    switch (t.name) {
      case 'startString':
      case 'startKey':
      case 'startNumber':
        this.text = '';
        this.over = false;
        this.limit = t.name === 'startString' ? MAX_STRING_UNITS : t.name === 'startKey' ? MAX_KEY_UNITS : MAX_NUMBER_LENGTH;
        return;
      case 'stringChunk':
      case 'numberChunk':
        // A skipped value is not kept at all.
        if (!this.over && this.state !== 'skip' && this.state !== 'end') this.append(t.value);
        return;
      case 'endString':
        this.structure({ name: 'stringValue', value: this.text });
        return;
      case 'endKey':
        this.structure({ name: 'keyValue', value: this.text });
        return;
      case 'endNumber':
        if (this.over) this.numberTooLong();
        else this.structure({ name: 'numberValue', value: this.text });
        return;
      // Whole values from the fast parser (at most QUIET_LIMIT long): kept as the chunks would be.
      case 'stringValue':
        this.structure(t.value.length > MAX_STRING_UNITS ? { name: t.name, value: start(t.value, MAX_STRING_UNITS) } : t);
        return;
      case 'keyValue':
        this.structure(t.value.length > MAX_KEY_UNITS ? { name: t.name, value: start(t.value, MAX_KEY_UNITS) } : t);
        return;
      case 'numberValue':
        if (t.value.length > MAX_NUMBER_LENGTH) this.numberTooLong();
        else this.structure(t);
        return;
      default:
        this.structure(t);
    }
  }

  /** Keeps `chunk` up to the limit. */
  private append(chunk: string): void {
    const room = this.limit - this.text.length;
    if (chunk.length <= room) {
      this.text += chunk;
      return;
    }
    this.text = start(this.text + chunk, this.limit);
    this.over = true;
  }

  /** A token of the structure, or a whole string, key or number. */
  private structure(t: Token): void {
    if (this.state === 'end') return;
    if (t.name === 'startObject' || t.name === 'startArray') {
      if (++this.level > MAX_NESTING) {
        this.tooDeep();
        return;
      }
    } else if (t.name === 'endObject' || t.name === 'endArray') this.level -= 1;

    switch (this.state) {
      case 'start':
        if (t.name === 'startObject') this.state = 'key';
        else {
          this.ready.push({ kind: 'not-an-object', value: scalarOrEmpty(t) });
          this.skipFrom(t, 'end', '$');
        }
        return;
      case 'key':
        if (t.name === 'keyValue') {
          this.key = t.value;
          this.ready.push({ kind: 'key', key: t.value });
          this.state = 'value';
        } else if (t.name === 'endObject') this.goto('end');
        return;
      case 'value': {
        const key = this.key;
        // A repeated `ipos`, `gmp` or `subscription` is skipped: the checker refuses the repetition.
        if (isPart(key) && !this.seen.has(key)) {
          this.seen.add(key);
          if (t.name === 'startArray') {
            this.ready.push({ kind: 'value', key, value: [] });
            this.part = key;
            this.index = 0;
            this.state = 'array';
            return;
          }
          this.ready.push({ kind: 'value', key, value: scalarOrEmpty(t) });
        }
        this.skipFrom(t, 'key', key);
        return;
      }
      case 'skip':
        if (t.name === 'startObject' || t.name === 'startArray') this.depth += 1;
        else if ((t.name === 'endObject' || t.name === 'endArray') && --this.depth === 0) this.goto(this.afterSkip);
        return;
      case 'array':
        if (t.name === 'endArray') {
          this.state = 'key';
          return;
        }
        this.state = 'element';
        this.values = 0;
        this.textLength = 0;
      // falls through: the first token of an element
      case 'element':
        if (t.name === 'keyValue' || t.name === 'stringValue') this.textLength += t.value.length;
        if (t.name !== 'keyValue' && t.name !== 'endObject' && t.name !== 'endArray') this.values += 1;
        this.assembler.consume(t);
        if (this.assembler.done) {
          const value: unknown = this.assembler.current;
          this.assembler.current = null;
          const index = this.index++;
          this.ready.push({ kind: ELEMENT_KIND[this.part], index, value });
          this.state = 'array';
        } else if (this.values > MAX_RECORD_VALUES) {
          this.refuseElement(`${this.part}[${this.index}]`, `a record of more than ${grouped(MAX_RECORD_VALUES)} values (it was not checked)`);
        } else if (this.textLength > MAX_RECORD_TEXT) {
          this.refuseElement(`${this.part}[${this.index}]`, `a record of more than ${grouped(MAX_RECORD_TEXT)} characters of text (it was not checked)`);
        }
        return;
    }
  }

  /** A number too long to keep: a problem where it is, in place of its record if it is in one. */
  private numberTooLong(): void {
    const message = `a number of more than ${grouped(MAX_NUMBER_LENGTH)} characters`;
    switch (this.state) {
      case 'array':
      case 'element':
        this.refuseElement(this.elementPath(), `${message} (the rest of this record was not checked)`);
        return;
      case 'start':
        this.ready.push({ kind: 'refused', record: null, path: '$', message });
        this.goto('end');
        return;
      case 'value':
        if (isPart(this.key) && !this.seen.has(this.key)) {
          this.seen.add(this.key);
          this.ready.push({ kind: 'refused', record: null, path: this.key, message });
        }
        this.state = 'key';
        return;
      default:
        return;
    }
  }

  /** The element being assembled is refused at `path`; the rest of it is skipped, not built. */
  private refuseElement(path: string, message: string): void {
    this.ready.push({ kind: 'refused', record: { part: this.part, index: this.index++ }, path, message });
    const open = this.assembler.depth;
    this.assembler = new Assembler();
    if (open === 0) this.state = 'array';
    else {
      this.depth = open;
      this.afterSkip = 'array';
      this.state = 'skip';
    }
  }

  /** Nested too deep: the parser itself would hold every level, so reading stops here. */
  private tooDeep(): void {
    const message = `more than ${MAX_NESTING} levels of nested arrays and objects (the file was not read further)`;
    if (this.state === 'element') {
      const path = this.elementPath();
      this.ready.push({ kind: 'refused', record: { part: this.part, index: this.index++ }, path, message });
    } else {
      this.ready.push({ kind: 'refused', record: null, path: this.state === 'skip' ? this.skipping : '$', message });
    }
    this.state = 'end';
    this.stopped = true;
  }

  /** Where the value that starts now is, within the element being assembled. */
  private elementPath(): string {
    let path = `${this.part}[${this.index}]`;
    const a = this.assembler;
    if (!a.done) {
      const here = Array.isArray(a.current) ? a.current.length : (a.key ?? '');
      for (const step of [...a.path, here]) path += typeof step === 'number' ? `[${step}]` : `.${step}`;
    }
    return cutPath(path);
  }

  /** Skips the value that starts with `t`, then goes on in `then`; `where` names it in a problem. */
  private skipFrom(t: Token, then: 'key' | 'end', where: string): void {
    if (t.name === 'startObject' || t.name === 'startArray') {
      this.depth = 1;
      this.afterSkip = then;
      this.skipping = cutPath(where);
      this.state = 'skip';
    } else this.goto(then);
  }

  private goto(state: 'key' | 'end' | 'array'): void {
    this.state = state;
    if (state === 'end') this.ended = true;
  }
}

/** The item kind of an element of each top-level array. */
const ELEMENT_KIND = { ipos: 'ipo', gmp: 'snapshot', subscription: 'subscription' } as const satisfies Record<DatasetPart, DatasetItem['kind']>;

/** Whether a top-level key is one of the dataset's arrays. */
function isPart(key: string): key is DatasetPart {
  return key === 'ipos' || key === 'gmp' || key === 'subscription';
}

/** How much of a path a problem shows: a key in it can be long (see the core's checker). */
const PATH_LENGTH = 100;

function cutPath(path: string): string {
  return path.length <= PATH_LENGTH ? path : `${start(path, PATH_LENGTH)}…`;
}

/**
 * The first `units` UTF-16 units of `text`, less a last one that is half of a surrogate
 * pair (a cut must not make a lone surrogate, which the checker would call invalid Unicode).
 * A copy, so that the long text can be freed.
 */
function start(text: string, units: number): string {
  const last = text.charCodeAt(units - 1);
  const cut = text.slice(0, last >= 0xd800 && last <= 0xdbff ? units - 1 : units);
  return ` ${cut}`.slice(1);
}

/** The value a scalar token stands for; an empty object or array for one that opens. */
function scalarOrEmpty(t: Token): unknown {
  switch (t.name) {
    case 'startObject':
      return {};
    case 'startArray':
      return [];
    case 'stringValue':
      return t.value;
    case 'numberValue':
      return Number(t.value);
    case 'trueValue':
      return true;
    case 'falseValue':
      return false;
    default:
      return null;
  }
}

/**
 * How an import is shown on stderr: on a terminal one line per pass, redrawn (`\r`) at most
 * ten times a second, with a bar, the share of the file read, the records and records per
 * second; otherwise a line every five seconds, and one when a pass ends.
 */
class ProgressReport {
  private readonly tty: boolean;
  private pass: 1 | 2 | null = null;
  private passStarted = 0;
  private last = 0;
  private latest: StreamImportProgress | null = null;
  private drawn = false;

  constructor(
    private readonly io: CliIo,
    private readonly size: number,
    private readonly bytes: () => number,
  ) {
    this.tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  }

  update(p: StreamImportProgress): void {
    const now = performance.now();
    if (p.pass !== this.pass) {
      if (this.pass !== null) this.endPass(now);
      this.pass = p.pass;
      this.passStarted = now;
      // A terminal shows the pass at once; a log gets its first line after five seconds.
      this.last = this.tty ? -Infinity : now;
    }
    this.latest = p;
    if (now - this.last >= (this.tty ? 100 : 5_000)) {
      this.last = now;
      this.draw(now);
    }
  }

  /** The import is done: the last pass's line is completed. */
  end(): void {
    if (this.pass !== null) this.endPass(performance.now());
    this.pass = null;
  }

  /** The import failed: a half-drawn line is ended so that the error starts on its own. */
  abandon(): void {
    if (this.tty && this.drawn) this.io.stderr.write('\n');
    this.drawn = false;
    this.pass = null;
  }

  private endPass(now: number): void {
    const p = this.latest;
    if (p === null) return;
    if (this.tty) {
      this.draw(now, true);
      this.io.stderr.write('\n');
      this.drawn = false;
    } else {
      const seconds = ((now - this.passStarted) / 1000).toFixed(1);
      this.io.stderr.write(`ipokit import: ${p.pass === 1 ? 'checked' : 'wrote'} ${p.ipos} IPOs and ${p.snapshots} snapshots in ${seconds} s\n`);
    }
  }

  private draw(now: number, final = false): void {
    const p = this.latest;
    if (p === null) return;
    const records = p.ipos + p.snapshots;
    const elapsed = Math.max(now - this.passStarted, 1) / 1000;
    const rate = Math.round(records / elapsed);
    const share = final || this.size === 0 ? 1 : Math.min(1, this.bytes() / this.size);
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    const doing = p.pass === 1 ? 'pass 1/2 checking' : 'pass 2/2 writing ';
    if (this.tty) {
      const width = 24;
      const filled = Math.round(share * width);
      const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
      this.io.stderr.write(`\r${doing} ${bar} ${percent}  ${grouped(records)} records  ${grouped(rate)}/s\u001b[K`);
      this.drawn = true;
    } else if (!final) {
      this.io.stderr.write(`ipokit import: ${doing.trim()}: ${percent.trim()} of the file, ${records} records, ${rate} records/s\n`);
    }
  }
}

function grouped(n: number): string {
  return n.toLocaleString('en-US');
}

/** A file system error (of reading the file in a pass). */
function isReadError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code) && 'syscall' in err;
}

function errorText(err: unknown): string {
  return oneLine(err instanceof Error ? err.message : String(err));
}

function oneLine(text: string): string {
  return text.replace(/\r?\n/g, ' ');
}
