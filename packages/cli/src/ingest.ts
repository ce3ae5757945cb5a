/**
 * The push route of `ipokit serve --ingest-token-file F`: `POST /-/ingest` at the root of
 * the server (outside the mount, no API key), a dataset as `application/json` behind a
 * bearer token, imported whole or not at all (`importDataset`). Framework-neutral: the
 * server calls {@link ingestRoute}'s function before the mount, as it calls the health
 * checks, with Express and Koa alike.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { SourceStatus } from '@ipokit/sources';
import { isUtf8 } from 'node:buffer';
import { importDataset, isIpokitError, type DatasetProblem, type IpoStore } from '@ipokit/core';
import { errorBody, type WireErrorCode } from '@ipokit/core/backend';
import { jsonFault } from './dataset-file.js';
import { CliError } from './io.js';

/** Where the push route answers. */
export const INGEST_PATH = '/-/ingest';

/** The largest body the route reads by default: 16 MiB. */
export const DEFAULT_INGEST_MAX_BYTES = 16 * 1024 * 1024;

/** The largest `maxBytes` allowed: the body is held whole, then as one string, to be parsed. */
export const MAX_INGEST_MAX_BYTES = 256 * 1024 * 1024;

/** The shortest token accepted: 32 characters (e.g. `openssl rand -hex 16`). */
export const MIN_INGEST_TOKEN_LENGTH = 32;

/** An answer of the push route, for the framework to write. */
export interface IngestAnswer {
  status: 200 | 400 | 401 | 405 | 413 | 415 | 500 | 503;
  headers: Record<string, string>;
  /** JSON text. */
  body: string;
}

/** Options of {@link ingestRoute}. */
export interface IngestOptions {
  /** The accepted bearer tokens (each at least {@link MIN_INGEST_TOKEN_LENGTH} characters). */
  tokens: readonly string[];
  /** The largest body read, in bytes. Default {@link DEFAULT_INGEST_MAX_BYTES}. */
  maxBytes?: number;
  /** The clock the import stamps its events with. Default the system clock. */
  now?: () => Date;
  /** Receives why the store failed (the client sees a 503) or an unexpected error (a 500). */
  onError?: (err: unknown) => void;
}

/**
 * The bearer-token check of the push route (and of the collector's status route): whether
 * the request's `Authorization: Bearer <token>` names one of `tokens`. The token sent and
 * every token kept are compared as SHA-256 digests with `timingSafeEqual`, against every
 * token without stopping at a match, so the time taken tells nothing of how much matched or
 * which token did. Throws a `RangeError` when there is no token or one is too short.
 *
 * @example
 * ```ts
 * const authorized = ingestAuth(['0123456789abcdef0123456789abcdef']);
 * authorized({ headers: { authorization: 'Bearer 0123456789abcdef0123456789abcdef' } }); // true
 * authorized({ headers: {} });                                                              // false
 * ```
 */
export function ingestAuth(tokens: readonly string[]): (req: Pick<IncomingMessage, 'headers'>) => boolean {
  checkIngestOptions({ tokens });
  const digests = tokens.map(sha256);
  return (req) => {
    const presented = bearerToken(req.headers.authorization);
    if (presented === null) return false;
    const digest = sha256(presented);
    let matched = false;
    for (const kept of digests) matched = timingSafeEqual(digest, kept) || matched;
    return matched;
  };
}

/**
 * The 401 answer of a request without a valid bearer token, with `WWW-Authenticate: Bearer`.
 *
 * @example
 * ```ts
 * if (!authorized(req)) return unauthorizedAnswer();
 * ```
 */
export function unauthorizedAnswer(): IngestAnswer {
  const answer = errorAnswer('ERR:INVLDKEY', 'A valid ingest token is required: send it as Authorization: Bearer <token>.');
  answer.headers['WWW-Authenticate'] = 'Bearer realm="ipokit ingest"';
  return answer;
}

/**
 * The push route over a store: a function that answers requests to `/-/ingest` (null for
 * any other path, which is not its). `POST` with a valid bearer token and a dataset as
 * `application/json` (charset utf-8 allowed) of at most `maxBytes` imports it with the
 * server's clock: 200 `{"ipos":n,"gmp":n,"subscription":n}` (the counts written); a refused
 * dataset is a 400 with its `problems` (the first 1,000) and `problemCount`, and nothing is
 * written. Every other answer has the service's error body: 400 (not UTF-8, not JSON),
 * 401 (no or a wrong token), 405 (not POST), 413 (too large: said by Content-Length, or
 * counted while reading, which stops there), 415 (another media type or a content coding),
 * 503 (the store failed). An answer given before the body was read whole closes the
 * connection, so that the rest of the body is not read at all.
 *
 * @example
 * ```ts
 * const ingest = ingestRoute(store, { tokens: await readIngestTokens('tokens.txt') });
 * http.createServer(async (req, res) => {
 *   const answering = ingest(req);
 *   if (answering === null) return next(req, res);
 *   const answer = await answering;
 *   res.writeHead(answer.status, answer.headers).end(answer.body);
 * });
 * ```
 */
export function ingestRoute(store: IpoStore, options: IngestOptions): (req: IncomingMessage) => Promise<IngestAnswer> | null {
  checkIngestOptions(options);
  const authorized = ingestAuth(options.tokens);
  const maxBytes = options.maxBytes ?? DEFAULT_INGEST_MAX_BYTES;
  const now = options.now ?? (() => new Date());
  const onError = options.onError ?? ((err: unknown) => console.error('[ipokit ingest]', err));

  const answer = async (req: IncomingMessage): Promise<IngestAnswer> => {
    // Every answer before the body is read whole closes the connection: Node would otherwise
    // read the rest of the body (up to any size) to reach the next request.
    const early = (a: IngestAnswer) => (hasBody(req) ? closing(a) : a);
    if (req.method !== 'POST') {
      const a = errorAnswer('ERR:METHOD', `The method ${JSON.stringify((req.method ?? '').slice(0, 50))} is not allowed here: use POST.`);
      a.headers['Allow'] = 'POST';
      return early(a);
    }
    if (!authorized(req)) return early(unauthorizedAnswer());
    if (!isJson(req.headers['content-type'])) {
      return early(errorAnswer('ERR:MEDIATYPE', 'A push needs Content-Type: application/json (charset utf-8 if any), with a dataset as its body.'));
    }
    const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (coding !== 'identity' && coding !== '') {
      return early(errorAnswer('ERR:MEDIATYPE', 'A push must not be compressed (no Content-Encoding): send the dataset as plain JSON.'));
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBytes) return early(tooLarge(maxBytes));
    const body = await readBody(req, maxBytes);
    if (body === 'tooLarge') return closing(tooLarge(maxBytes));
    if (body === 'gone') return closing(errorAnswer('ERR:BADPARAM', 'The request body was cut short.', { parameter: 'body' }));
    const dataset = parseBody(body);
    if ('fault' in dataset) return errorAnswer('ERR:BADPARAM', dataset.fault, { parameter: 'body' });
    try {
      const written = await importDataset(store, dataset.value, { now });
      return json(200, { ipos: written.ipos, gmp: written.snapshots, subscription: written.subscription });
    } catch (err) {
      if (isIpokitError(err, 'ERR:DATASET')) return refused(err.message, err.problems ?? [], err.problemCount ?? err.problems?.length ?? 0);
      onError(err);
      if (isIpokitError(err, 'ERR:UNAVAILABLE')) return errorAnswer('ERR:UNAVAILABLE', 'The store failed, so nothing was written: retry in a few seconds.');
      return errorAnswer('ERR:INTERNAL', 'The server failed to import the dataset: retry later, and report it if it persists.');
    }
  };

  return (req) => (pathOf(req.url) === INGEST_PATH ? answer(req) : null);
}

/** Where the collector's status is read (`GET`, with an ingest token). */
export const SOURCES_PATH = '/-/sources';

/**
 * The collector's status route (docs/spec.md#sources): `GET /-/sources` with one of the ingest
 * `tokens` as a bearer token answers 200 `{"sources": [...]}`, each source's status as
 * `status()` gives it (an empty list when the server runs no collector); 401 without a valid
 * token, 405 for another method. Null for any other path.
 *
 * @example
 * ```ts
 * const sources = sourcesRoute(tokens, () => collector?.status() ?? []);
 * const answering = sources(req); // null, or the answer to write
 * ```
 */
export function sourcesRoute(tokens: readonly string[], status: () => readonly SourceStatus[]): (req: IncomingMessage) => IngestAnswer | null {
  const authorized = ingestAuth(tokens);
  return (req) => {
    if (pathOf(req.url) !== SOURCES_PATH) return null;
    const early = (a: IngestAnswer) => (hasBody(req) ? closing(a) : a);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const a = errorAnswer('ERR:METHOD', `The method ${JSON.stringify((req.method ?? '').slice(0, 50))} is not allowed here: use GET.`);
      a.headers['Allow'] = 'GET, HEAD';
      return early(a);
    }
    if (!authorized(req)) return early(unauthorizedAnswer());
    return json(200, { sources: status() });
  };
}

/**
 * Checks the push route's tokens and body limit, as {@link ingestRoute} does, before anything
 * is started: a `RangeError` saying what is wrong.
 *
 * @example
 * ```ts
 * checkIngestOptions({ tokens: ['short'] }); // throws RangeError('ingest tokens: each token must be at least 32 characters')
 * ```
 */
export function checkIngestOptions(options: Pick<IngestOptions, 'tokens' | 'maxBytes'>): void {
  if (options.tokens.length === 0) throw new RangeError('ingest tokens: give at least one token');
  for (const token of options.tokens) {
    if (token.length < MIN_INGEST_TOKEN_LENGTH) throw new RangeError(`ingest tokens: each token must be at least ${MIN_INGEST_TOKEN_LENGTH} characters`);
  }
  const maxBytes = options.maxBytes ?? DEFAULT_INGEST_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_INGEST_MAX_BYTES) {
    throw new RangeError(`ingest maxBytes must be a whole number from 1 to ${MAX_INGEST_MAX_BYTES}, got ${String(maxBytes)}`);
  }
}

/**
 * Reads a token file (relative to `cwd`; messages name it as given): one token per line, blank lines and lines starting with `#` ignored,
 * white space around a token trimmed. A file that cannot be read, holds no token, or holds
 * a token shorter than {@link MIN_INGEST_TOKEN_LENGTH} characters or with white space or
 * control characters inside is a `CliError` (exit 2) naming the file (and the line).
 *
 * @example
 * ```ts
 * const tokens = await readIngestTokens('/run/secrets/ipokit-ingest'); // ['3f9c...', ...]
 * ```
 */
export async function readIngestTokens(file: string, cwd: string = process.cwd()): Promise<string[]> {
  if (file === '') throw new CliError('the ingest token file must not be empty');
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new CliError(`cannot read ingest token file ${file}: ${code === 'ENOENT' ? 'no such file' : typeof code === 'string' ? code : (err as Error).message}`);
  }
  const tokens: string[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    const token = line.trim();
    if (token === '' || token.startsWith('#')) continue;
    if (!/^[\x21-\x7e]+$/.test(token)) {
      throw new CliError(`ingest token file ${file}, line ${i + 1}: a token must be printable ASCII without spaces (it is sent in an HTTP header)`);
    }
    if (token.length < MIN_INGEST_TOKEN_LENGTH) {
      throw new CliError(`ingest token file ${file}, line ${i + 1}: a token must be at least ${MIN_INGEST_TOKEN_LENGTH} characters, got ${token.length} (make one with 'openssl rand -hex 32')`);
    }
    tokens.push(token);
  }
  if (tokens.length === 0) throw new CliError(`ingest token file ${file} holds no token: write one per line (blank lines and # comments are ignored)`);
  return tokens;
}

/**
 * For a server's `checkContinue` event (a request with `Expect: 100-continue`): true when the
 * request is the push route's, whose `100 Continue` is then held until the route reads the
 * body, so that a request refused on its headers (401, 413 by Content-Length, 415) is
 * answered before its body is sent at all; false for any other path (the caller sends
 * `100 Continue` at once).
 *
 * @example
 * ```ts
 * server.on('checkContinue', (req, res) => {
 *   if (!holdContinue(req, () => res.writeContinue())) res.writeContinue();
 *   listener(req, res);
 * });
 * ```
 */
export function holdContinue(req: IncomingMessage, writeContinue: () => void): boolean {
  if (pathOf(req.url) !== INGEST_PATH) return false;
  HELD_CONTINUES.set(req, writeContinue);
  return true;
}

const HELD_CONTINUES = new WeakMap<IncomingMessage, () => void>();

/** The most problems a refusal lists (the core keeps as many; the count says how many there were). */
const MAX_SENT_PROBLEMS = 1_000;

function refused(message: string, problems: readonly DatasetProblem[], problemCount: number): IngestAnswer {
  const sent = problems.slice(0, MAX_SENT_PROBLEMS).map(({ path, message: m }) => ({ path, message: m }));
  return json(400, { ...errorBody('ERR:BADPARAM', `${message} Nothing was written.`, { parameter: 'body' }), problems: sent, problemCount: Math.max(problemCount, sent.length) });
}

function tooLarge(maxBytes: number): IngestAnswer {
  return errorAnswer('ERR:TOOLARGE', `The request body is larger than ${maxBytes} bytes (the server's --ingest-max-bytes): split the dataset into smaller pushes.`);
}

function errorAnswer(code: WireErrorCode, detail: string, meta?: { parameter: string }): IngestAnswer {
  const body = errorBody(code, detail, meta);
  return json(Number(body.status) as IngestAnswer['status'], body);
}

function json(status: IngestAnswer['status'], value: unknown): IngestAnswer {
  const body = JSON.stringify(value);
  return {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) },
    body,
  };
}

function closing(answer: IngestAnswer): IngestAnswer {
  answer.headers['Connection'] = 'close';
  return answer;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The token of `Bearer <token>` (the scheme in any case), or null. */
function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer +([^\s]+) *$/i.exec(header ?? '');
  return m === null ? null : m[1]!;
}

function pathOf(url: string | undefined): string {
  const target = url ?? '/';
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** `application/json`, with at most a `charset=utf-8` parameter. */
function isJson(type: string | undefined): boolean {
  if (type === undefined) return false;
  const [media, ...params] = type.split(';').map((p) => p.trim().toLowerCase());
  if (media !== 'application/json') return false;
  return params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The body, counted as it arrives: `tooLarge` as soon as it passes `maxBytes` (reading stops
 * there), `gone` when the client went away before its end.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'tooLarge' | 'gone'> {
  const writeContinue = HELD_CONTINUES.get(req);
  HELD_CONTINUES.delete(req);
  writeContinue?.();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = (result: Buffer | 'tooLarge' | 'gone') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('aborted', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        req.pause();
        done('tooLarge');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(Buffer.concat(chunks, bytes));
    const onGone = () => done('gone');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('aborted', onGone);
  });
}

/** The dataset of a body, or why it is none: not UTF-8, empty, not JSON (with line and column). */
function parseBody(body: Buffer): { value: unknown } | { fault: string } {
  if (!isUtf8(body)) return { fault: 'The request body is not UTF-8: send the dataset as UTF-8 JSON.' };
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    const why = (jsonFault(text)?.message ?? (err as Error).message).replace(/^the file /, 'the body ');
    return { fault: `The request body is not JSON: ${why}.` };
  }
}
