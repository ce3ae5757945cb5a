/**
 * `ipokit import <file>`: a dataset file of any size into PostgreSQL (CONTRACT 9), streamed.
 * The file is read record by record with stream-json, twice: the first pass checks all of it,
 * the second writes it in batches inside one transaction (`importDatasetStream`), so that a
 * 10-million-snapshot file needs no more memory than a small one, and is imported whole or
 * not at all.
 */
import { open, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { parseArgs } from 'node:util';
import { isIpokitError, type DatasetItem } from '@ipokit/core';
import { DEFAULT_IMPORT_BATCH_SIZE, importDatasetStream, type StreamImportProgress } from '@ipokit/storage-postgres';
import { Assembler } from 'stream-json/core/assembler.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { verifyFile } from 'stream-json/file/verifier.js';
import { integer, parseOrThrow, takePositionals } from './args.js';
import { openDatabase, schemaOf } from './database.js';
import type { CliIo, Command } from './io.js';
import { reportError } from './report.js';

/** The usage line of `ipokit import`. */
export const IMPORT_USAGE = 'Usage: ipokit import <file> [--batch-size N] [--schema S] [--json]';

/**
 * `ipokit import <file> [--batch-size N] [--schema S] [--json]`: imports a dataset file
 * into PostgreSQL (`DATABASE_URL`, or `io.openDatabase`), all or nothing. Progress goes to
 * stderr (one updating line on a terminal, a line every few seconds otherwise), the summary
 * to stdout (`--json`: `{"ipos":N,"snapshots":M,"seconds":T}`).
 *
 * Exit codes: 0 imported; 1 refused (every problem as `path: message`, then the count),
 * malformed JSON (with its line and column), an unreadable file or a database failure (one
 * line); 2 bad usage (thrown as a `CliError`, which `runCli` prints with the usage).
 *
 * @example
 * ```ts
 * const code = await importCommand(['ipos.json', '--batch-size', '10000'], io);
 * // stdout: "imported 1200 IPOs and 48000 snapshots in 3.4 s"
 * ```
 */
export const importCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow(() =>
    parseArgs({
      args: [...argv],
      options: { 'batch-size': { type: 'string' }, schema: { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
      allowPositionals: true,
    }),
  );
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
        ? `${JSON.stringify({ ipos: result.ipos, snapshots: result.snapshots, seconds })}\n`
        : `imported ${result.ipos} IPOs and ${result.snapshots} snapshots in ${seconds} s\n`,
    );
    return 0;
  } catch (err) {
    progress.abandon();
    if (err instanceof MalformedJsonError) {
      say(`${file} is not valid JSON: ${err.message}; nothing was written`);
      return 1;
    }
    if (isIpokitError(err, 'ERR:DATASET')) {
      const problems = err.problems ?? [];
      const count = err.problemCount ?? problems.length;
      for (const p of problems) io.stderr.write(`${oneLine(p.path)}: ${oneLine(p.message)}\n`);
      const listed = count > problems.length ? ` (the first ${problems.length} listed)` : '';
      say(`${file} was refused: ${count} problem${count === 1 ? '' : 's'}${listed}; nothing was written`);
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

/** A JSON syntax error in the file, with where it is. */
export class MalformedJsonError extends Error {
  /** 1-based line and column (in characters) of the fault. */
  readonly line: number | null;
  readonly column: number | null;
  constructor(message: string, line: number | null, column: number | null) {
    super(message);
    this.name = 'MalformedJsonError';
    this.line = line;
    this.column = column;
  }
}

/** Bytes read at a time. */
const BLOCK_SIZE = 1 << 16;

/** Options of {@link readDatasetFile}. */
export interface ReadDatasetFileOptions {
  /** Counts the bytes read so far (reset to 0 when reading starts), for progress. */
  progress?: { bytes: number };
  /** Bytes read at a time; default 64 KiB. */
  blockSize?: number;
}

/**
 * The {@link DatasetItem}s of a dataset JSON file, read as a stream: one IPO record or
 * snapshot assembled at a time (never the whole file). Gives what `JSON.parse` of the file
 * would give (a leading byte-order mark is skipped); a top-level key given twice is passed
 * on once more without its value, for the checker to refuse. A syntax error rejects with
 * {@link MalformedJsonError} giving its line and column.
 *
 * @example
 * ```ts
 * for await (const item of readDatasetFile('ipos.json')) if (item.kind === 'snapshot') count += 1;
 * ```
 */
export async function* readDatasetFile(path: string, options: ReadDatasetFileOptions = {}): AsyncGenerator<DatasetItem> {
  const read = options.progress ?? { bytes: 0 };
  const blockSize = options.blockSize ?? BLOCK_SIZE;
  read.bytes = 0;
  const handle = await open(path, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const parse = jsonParser({ packValues: true, streamValues: false });
    const items = new ItemBuilder();
    const buffer = Buffer.allocUnsafe(blockSize);
    let first = true;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, blockSize, null);
      read.bytes += bytesRead;
      let text = bytesRead === 0 ? decoder.end() : decoder.write(buffer.subarray(0, bytesRead));
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
      }
      let tokens: unknown;
      try {
        tokens = text.length > 0 ? parse(text) : undefined;
        if (bytesRead === 0) {
          const last = parse(NONE as unknown as string);
          for (const token of tokensOf(tokens)) items.token(token);
          tokens = last;
        }
        for (const token of tokensOf(tokens)) items.token(token);
      } catch (err) {
        if (err instanceof MalformedJsonError) throw err;
        throw await locate(path, err);
      }
      if (items.ready.length > 0) {
        const ready = items.ready;
        items.ready = [];
        yield* ready;
      }
      if (bytesRead === 0) break;
    }
    if (!items.ended) throw await locate(path, new Error('the file ends before the dataset does'));
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
 * of `ipos` and `gmp` is assembled alone, everything else is skipped without being built.
 */
class ItemBuilder {
  ready: DatasetItem[] = [];
  /** The top-level value has ended. */
  ended = false;
  private state: 'start' | 'key' | 'value' | 'skip' | 'array' | 'element' | 'end' = 'start';
  private key = '';
  private readonly seen = new Set<string>();
  /** While skipping: how deep in the skipped value, and where to go after it. */
  private depth = 0;
  private afterSkip: 'key' | 'end' = 'key';
  private part: 'ipos' | 'gmp' = 'ipos';
  private index = 0;
  private readonly assembler = new Assembler();

  token(t: Token): void {
    switch (this.state) {
      case 'start':
        if (t.name === 'startObject') this.state = 'key';
        else {
          this.ready.push({ kind: 'not-an-object', value: scalarOrEmpty(t) });
          this.skipFrom(t, 'end');
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
        // A repeated `ipos` or `gmp` is skipped: the checker refuses the repetition.
        if ((key === 'ipos' || key === 'gmp') && !this.seen.has(key)) {
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
        this.skipFrom(t, 'key');
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
      // falls through: the first token of an element
      case 'element':
        this.assembler.consume(t);
        if (this.assembler.done) {
          const value: unknown = this.assembler.current;
          this.assembler.current = null;
          const index = this.index++;
          this.ready.push(this.part === 'ipos' ? { kind: 'ipo', index, value } : { kind: 'snapshot', index, value });
          this.state = 'array';
        }
        return;
      case 'end':
        return;
    }
  }

  /** Skips the value that starts with `t`, then goes on in `then`. */
  private skipFrom(t: Token, then: 'key' | 'end'): void {
    if (t.name === 'startObject' || t.name === 'startArray') {
      this.depth = 1;
      this.afterSkip = then;
      this.state = 'skip';
    } else this.goto(then);
  }

  private goto(state: 'key' | 'end'): void {
    this.state = state;
    if (state === 'end') this.ended = true;
  }
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

/** Where the syntax error is: the verifier reads the file again and knows the line and column. */
async function locate(path: string, parserError: unknown): Promise<MalformedJsonError> {
  try {
    await verifyFile(path);
  } catch (err) {
    const e = err as { line?: unknown; pos?: unknown; message?: unknown };
    if (typeof e.line === 'number' && typeof e.pos === 'number') {
      const what = String(e.message).replace(/^ERROR at \d+ \(\d+, \d+\): /, '').replace(/^Verifier cannot parse input: /, '');
      return new MalformedJsonError(`${what} at line ${e.line}, column ${e.pos}`, e.line, e.pos);
    }
  }
  return new MalformedJsonError(errorText(parserError).replace(/^Parser cannot parse input: /, ''), null, null);
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
