/**
 * `@ipokit/sources/node`: the built-in source that needs a file system (docs/spec.md#sources):
 * a dataset file imported each time it changes. Node, and runtimes with `node:fs`.
 */
import { readFile, stat } from 'node:fs/promises';
import { IpokitError } from '@ipokit/core';
import { DEFAULT_MAX_DOCUMENT_BYTES, parseDocument, wasWritten } from './dataset-sources.js';
import type { Source, SourceAnswer, SourceRunContext } from './types.js';

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
 * from the last written answer's, else nothing (a refused answer is read again).
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
      const info = await stat(path);
      const signature = `${info.size}:${info.mtimeMs}:${info.ino}`;
      if (answered !== null && answered.signature === signature && wasWritten(answered.runAt, context)) return {};
      if (info.size > maxBytes) throw new IpokitError('ERR:TOOLARGE', `${path} is ${info.size} bytes, more than the ${maxBytes} this source reads.`);
      const text = await readFile(path, { encoding: 'utf8', signal: context.signal });
      const answer = parseDocument(text, path);
      answered = { signature, runAt: context.now.getTime() };
      return answer;
    },
  };
}

