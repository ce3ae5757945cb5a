/**
 * Built-in sources of dataset documents (docs/spec.md#sources): one fetched from a URL (an
 * operator's scraper, anywhere), one read from a file each time it changes.
 */
import { IpokitError } from '@ipokit/core';
import type { Source, SourceAnswer, SourceRunContext } from './types.js';

/** The largest document a dataset source reads by default: 64 MiB. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/** Options of {@link datasetUrlSource}. */
export interface DatasetUrlSourceOptions {
  /** Where the dataset document is (`http:` or `https:`): JSON, with `gmpReports` allowed beside the dataset's arrays. */
  url: string;
  /** Headers sent with each request (an `Authorization`, say). */
  headers?: Record<string, string>;
  /** How often it is fetched, ms. */
  everyMs: number;
  /** The source's name. Default `url-` and the URL's host (":" as "-"). */
  name?: string;
  /** How long a run may take, ms. Default the collector's. */
  timeoutMs?: number;
  /** The largest document read, in bytes. Default 64 MiB. */
  maxBytes?: number;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A source that fetches a dataset document from a URL each run (docs/spec.md#sources). It
 * sends `If-None-Match` with the last document's `ETag` once that document was written, so
 * an unchanged document (`304`) answers nothing. Any status but 200 and 304 fails the run.
 *
 * @example
 * ```ts
 * const scraper = datasetUrlSource({ url: 'https://scraper.internal/ipos.json', headers: { authorization: `Bearer ${token}` }, everyMs: 60_000 });
 * await startCollector(store, { sources: [scraper] });
 * ```
 */
export function datasetUrlSource(options: DatasetUrlSourceOptions): Source {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new IpokitError('ERR:BADPARAM', `datasetUrlSource: url ${JSON.stringify(options.url)} is not a URL.`, { parameter: 'url' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new IpokitError('ERR:BADPARAM', `datasetUrlSource: url must be http: or https:, got ${parsed.protocol}`, { parameter: 'url' });
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const doFetch = options.fetch ?? globalThis.fetch;
  const shown = `${parsed.origin}${parsed.pathname}`;
  /** The ETag of the last document answered, and the run that answered it. */
  let answered: { etag: string; runAt: number } | null = null;
  return {
    name: options.name ?? `url-${parsed.host.replace(/:/g, '-')}`,
    everyMs: options.everyMs,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    async collect(context: SourceRunContext): Promise<SourceAnswer> {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (answered !== null && wasWritten(answered.runAt, context)) headers['if-none-match'] = answered.etag;
      const response = await doFetch(options.url, { headers, signal: context.signal });
      if (response.status === 304) {
        await response.body?.cancel();
        return {};
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new IpokitError('ERR:UNAVAILABLE', `GET ${shown} answered ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}.`);
      }
      const text = await readText(response, maxBytes, shown);
      const answer = parseDocument(text, shown);
      const etag = response.headers.get('etag');
      answered = etag === null ? null : { etag, runAt: context.now.getTime() };
      return answer;
    },
  };
}

/** Options of {@link datasetFileSource}. */
export interface DatasetFileSourceOptions {
  /** The source's name. Default `file-` and the file's name (other characters than A-Z, a-z, 0-9, ".", "_", "-" as "-"). */
  name?: string;
  /** How often the file is looked at, ms. Default 10,000. */
  everyMs?: number;
  /** The largest file read, in bytes. Default 64 MiB. */
  maxBytes?: number;
}

/**
 * A source that imports a dataset file each time it changes (docs/spec.md#sources): each run
 * looks at the file's size and modification time and answers its content when they differ
 * from the last written answer's, else nothing. Node (and runtimes with `node:fs`) only; the
 * module loads `node:fs` on the first run.
 *
 * @example
 * ```ts
 * await startCollector(store, { sources: [datasetFileSource('/var/lib/ipo/today.json')] });
 * ```
 */
export function datasetFileSource(path: string, options: DatasetFileSourceOptions = {}): Source {
  if (typeof path !== 'string' || path === '') throw new IpokitError('ERR:BADPARAM', 'datasetFileSource needs a file path.', { parameter: 'path' });
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const base = path.split(/[\\/]/).pop() ?? path;
  /** The file as the last answer read it, and the run that answered it. */
  let answered: { signature: string; runAt: number } | null = null;
  return {
    name: options.name ?? `file-${base.replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 64),
    everyMs: options.everyMs ?? 10_000,
    async collect(context: SourceRunContext): Promise<SourceAnswer> {
      const fs = await import('node:fs/promises');
      const info = await fs.stat(path);
      const signature = `${info.size}:${info.mtimeMs}:${info.ino}`;
      if (answered !== null && answered.signature === signature && wasWritten(answered.runAt, context)) return {};
      if (info.size > maxBytes) throw new IpokitError('ERR:TOOLARGE', `${path} is ${info.size} bytes, more than the ${maxBytes} this source reads.`);
      const text = await fs.readFile(path, { encoding: 'utf8', signal: context.signal });
      const answer = parseDocument(text, path);
      answered = { signature, runAt: context.now.getTime() };
      return answer;
    },
  };
}

/** Whether the run at `runAt` was written: the source has succeeded since (a refused answer is given again). */
function wasWritten(runAt: number, context: SourceRunContext): boolean {
  const last = context.lastSuccessAt;
  return last !== undefined && last !== null && last.getTime() >= runAt;
}

async function readText(response: Response, maxBytes: number, shown: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new IpokitError('ERR:TOOLARGE', `GET ${shown} is ${declared} bytes, more than the ${maxBytes} this source reads.`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new IpokitError('ERR:TOOLARGE', `GET ${shown} is more than the ${maxBytes} bytes this source reads.`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

function parseDocument(text: string, where: string): SourceAnswer {
  try {
    return JSON.parse(text) as SourceAnswer;
  } catch (err) {
    throw new IpokitError('ERR:DATASET', `${where} is not JSON: ${err instanceof Error ? err.message : String(err)}`, {
      problems: [{ path: '$', message: 'the document is not JSON' }],
      problemCount: 1,
    });
  }
}
