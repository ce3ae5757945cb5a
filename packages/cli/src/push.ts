/**
 * `ipokit push FILE --url URL --token-file F`: sends a dataset file to a server's push route
 * (`POST /-/ingest` of `ipokit serve --ingest-token-file`), streamed from the disk, and
 * prints what the server wrote, or why it refused the file.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { resolve } from 'node:path';
import { parseOrThrow, required, takePositionals } from './args.js';
import { printable } from './format.js';
import { printRefusal } from './import.js';
import { INGEST_PATH, readIngestTokens } from './ingest.js';
import { CliError, type CliIo, type Command } from './io.js';
import { describeCause } from './report.js';

/** The usage line of `ipokit push`. */
export const PUSH_USAGE = 'Usage: ipokit push <file> --url URL --token-file F [--json]';

/** Files at least this large show their progress (on a terminal, and a final line otherwise). */
export const PUSH_PROGRESS_MIN_BYTES = 1024 * 1024;

/** Options of {@link pushDataset}. */
export interface PushOptions {
  /** The dataset file, relative to `io.cwd`. */
  file: string;
  /** The server's base URL, e.g. `http://127.0.0.1:3000`: the file goes to `${url}/-/ingest`. */
  url: string;
  /** The bearer token. */
  token: string;
  /** Print the server's counts as JSON. */
  json?: boolean;
  /** Milliseconds, for the progress line's pace. Default `performance.now`. */
  clock?: () => number;
  /**
   * How long to wait for the server's `100 Continue` before sending the body anyway (a proxy
   * may drop `Expect`). Default 2,000 ms.
   */
  continueTimeoutMs?: number;
}

/**
 * `ipokit push <file> --url URL --token-file F [--json]`: the first token of the token
 * file (the format `ipokit serve --ingest-token-file` reads) authorizes the push.
 *
 * Exit codes: 0 written (the counts on stdout); 1 refused (every problem, as `ipokit
 * import` prints them), a wrong token, a file too large for the server, a server that
 * cannot be reached or that failed (one line); 2 bad usage.
 *
 * @example
 * ```ts
 * const code = await pushCommand(['ipos.json', '--url', 'http://127.0.0.1:3000', '--token-file', 'token.txt'], io);
 * // stdout: "pushed ipos.json: wrote 12 IPOs, 340 GMP snapshots and 5 subscription snapshots"
 * ```
 */
export const pushCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({
    args: [...argv],
    options: { url: { type: 'string' }, 'token-file': { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
    allowPositionals: true,
  });
  const [file] = takePositionals(positionals, ['<file>']) as [string];
  const url = required('--url', values.url);
  const tokenFile = required('--token-file', values['token-file']);
  const [token] = await readIngestTokens(tokenFile, io.cwd);
  return pushDataset({ file, url, token: token!, json: values.json === true }, io);
};

/**
 * Sends one dataset file to a server's push route and reports the answer (see
 * {@link pushCommand} for the exit codes). The file is streamed as the request body, never
 * held whole; the request asks for `100 Continue`, so that a push refused on its headers
 * (the token, the size) sends no body. Progress goes to stderr for a file of at least
 * {@link PUSH_PROGRESS_MIN_BYTES}: an updating line on a terminal (at most four a second),
 * else one final line.
 *
 * @example
 * ```ts
 * const code = await pushDataset({ file: 'ipos.json', url: 'http://127.0.0.1:3000', token }, io); // 0
 * ```
 */
export async function pushDataset(options: PushOptions, io: CliIo): Promise<number> {
  const { file } = options;
  const say = (line: string) => io.stderr.write(`ipokit push: ${line}\n`);
  const target = ingestUrl(options.url);
  const path = resolve(io.cwd, file);
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
  } catch (err) {
    say(`cannot read ${file}: ${(err as { code?: string }).code === 'ENOENT' ? 'no such file' : describeCause(err)}; nothing was sent`);
    return 1;
  }
  const progress = new PushProgress(io, size, options.clock ?? (() => performance.now()));
  let answer: { status: number; body: string };
  try {
    answer = await send(target, path, size, options.token, (sent) => progress.update(sent), options.continueTimeoutMs ?? 2_000);
  } catch (err) {
    progress.abandon();
    if (err instanceof FileReadError) say(`cannot read ${file}: ${describeCause(err.cause)}; the push was cut short and nothing was written`);
    else say(`cannot reach ${target.origin}: ${describeCause(err)}; nothing was written`);
    return 1;
  }
  progress.end(answer.status === 200);
  const body = parseJson(answer.body);
  const detail = typeof body?.detail === 'string' ? printable(body.detail) : printable(answer.body.slice(0, 200));
  if (answer.status === 200) {
    const n = (key: string) => (typeof body?.[key] === 'number' ? (body[key] as number) : 0);
    io.stdout.write(
      options.json === true
        ? `${JSON.stringify({ ipos: n('ipos'), gmp: n('gmp'), subscription: n('subscription') })}\n`
        : `pushed ${file}: wrote ${n('ipos')} IPOs, ${n('gmp')} GMP snapshots and ${n('subscription')} subscription snapshots\n`,
    );
    return 0;
  }
  if (answer.status === 400 && Array.isArray(body?.problems)) {
    const problems = (body.problems as unknown[]).map((p) => {
      const { path: at, message } = (p ?? {}) as { path?: unknown; message?: unknown };
      return { path: printable(String(at)), message: printable(String(message)) };
    });
    printRefusal(io, 'ipokit push', file, problems, typeof body.problemCount === 'number' ? body.problemCount : problems.length);
    return 1;
  }
  const why: Record<number, string> = {
    400: `${file} was refused`,
    401: `the server refused the token of --token-file (401)`,
    404: `the server has no push route at ${target.href} (404): is it started with --ingest-token-file?`,
    413: `${file} (${size} bytes) is larger than the server accepts (413)`,
    415: `the server refused the request's media type (415)`,
  };
  say(`${why[answer.status] ?? `the server answered ${answer.status}`}: ${detail}${answer.status >= 500 ? '; retry later' : ''}`);
  return 1;
}

/** A read of the file failed while it was being sent. */
class FileReadError extends Error {
  constructor(cause: unknown) {
    super('the file could not be read', { cause });
  }
}

/** `${url}/-/ingest`, keeping a path the server is mounted under (behind a proxy). */
function ingestUrl(url: string): URL {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new CliError(`--url must be the server's URL, e.g. http://127.0.0.1:3000, got ${JSON.stringify(url)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new CliError(`--url must be an http: or https: URL, got ${JSON.stringify(url)}`);
  if (base.search !== '' || base.hash !== '') throw new CliError(`--url must be the server's base URL, without a query or fragment, got ${JSON.stringify(url)}`);
  return new URL(`${base.pathname.replace(/\/+$/, '')}${INGEST_PATH}`, base);
}

/**
 * POSTs the file and resolves with the answer. The body starts on `100 Continue` (or after
 * `continueTimeoutMs` without one); an answer that comes first (a refusal on the headers)
 * ends the push without sending it.
 */
function send(target: URL, path: string, size: number, token: string, onSent: (bytes: number) => void, continueTimeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolvePush, reject) => {
    let settled = false;
    let started = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (act: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      act();
    };
    const request: ClientRequest = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': String(size),
        Authorization: `Bearer ${token}`,
        Accept: 'application/json',
        Expect: '100-continue',
      },
    });
    const file = createReadStream(path);
    const startBody = () => {
      if (started || settled) return;
      started = true;
      clearTimeout(timer);
      let sent = 0;
      file.on('data', (chunk) => {
        sent += chunk.length;
        onSent(sent);
      });
      file.pipe(request);
    };
    file.on('error', (err) => {
      settle(() => reject(new FileReadError(err)));
      request.destroy();
    });
    request.on('continue', startBody);
    request.on('response', (res: IncomingMessage) => {
      // An answer before the whole body went (a refusal): the rest is not sent.
      file.unpipe(request);
      file.destroy();
      readAnswer(res).then(
        (body) => {
          settle(() => resolvePush({ status: res.statusCode ?? 0, body }));
          request.destroy();
        },
        (err: unknown) => settle(() => reject(err)),
      );
    });
    request.on('error', (err) => settle(() => reject(err)));
    request.flushHeaders();
    timer = setTimeout(startBody, continueTimeoutMs);
  });
}

/** The answer's body as text, at most 16 MiB (a refusal lists at most 1,000 problems). */
function readAnswer(res: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= 16 * 1024 * 1024) chunks.push(chunk);
    });
    res.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('the server closed the connection before the end of its answer')));
  });
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The progress of a push on stderr, for a file of at least {@link PUSH_PROGRESS_MIN_BYTES}: on
 * a terminal one line drawn again at most every 250 ms (bytes sent of the total); otherwise
 * nothing until one final line.
 */
class PushProgress {
  private readonly tty: boolean;
  private readonly shown: boolean;
  private readonly started: number;
  private last = -Infinity;
  private sent = 0;
  private drawn = false;

  constructor(
    private readonly io: CliIo,
    private readonly size: number,
    private readonly clock: () => number,
  ) {
    this.tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
    this.shown = size >= PUSH_PROGRESS_MIN_BYTES;
    this.started = clock();
  }

  update(sent: number): void {
    this.sent = sent;
    if (!this.shown || !this.tty) return;
    const now = this.clock();
    if (now - this.last < 250) return;
    this.last = now;
    this.draw();
  }

  /** The body went: the line is completed (on a terminal) or the final line written. */
  end(written: boolean): void {
    if (!this.shown) return;
    const seconds = ((this.clock() - this.started) / 1000).toFixed(1);
    if (this.tty) {
      if (this.sent > 0) {
        this.draw();
        this.io.stderr.write('\n');
      }
      this.drawn = false;
    } else if (this.sent > 0) {
      this.io.stderr.write(`ipokit push: sent ${grouped(this.sent)} of ${grouped(this.size)} bytes in ${seconds} s${written ? '' : ' (refused)'}\n`);
    }
  }

  /** The push failed: a half-drawn line is ended so that the error starts on its own. */
  abandon(): void {
    if (this.tty && this.drawn) this.io.stderr.write('\n');
    this.drawn = false;
  }

  private draw(): void {
    const share = this.size === 0 ? 1 : Math.min(1, this.sent / this.size);
    const width = 24;
    const filled = Math.round(share * width);
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    this.io.stderr.write(`\rpushing [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}  ${mib(this.sent)} of ${mib(this.size)} MiB\u001b[K`);
    this.drawn = true;
  }
}

function grouped(n: number): string {
  return n.toLocaleString('en-US');
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
