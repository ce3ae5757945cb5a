/**
 * `ipokit collect` runs the collector alone on PostgreSQL (docs/spec.md#sources) until SIGTERM
 * or Ctrl-C; any number of them, and servers started with `--sources`, may share a database.
 * `ipokit sources` shows each source's status, from the database or from a server.
 */
import { migrate } from '@ipokit/storage-postgres';
import { isSourceStore, sourceStatuses, startCollector, type Collector, type SourceStatus } from '@ipokit/sources';
import { parseOrThrow, required, takePositionals } from './args.js';
import { reportConfigProblems } from './config.js';
import { openDatabase, schemaOf, storeOf } from './database.js';
import { columns, printable } from './format.js';
import { CliError, stopped, type CliIo, type Command } from './io.js';
import { readIngestTokens } from './ingest.js';
import { describeCause } from './report.js';
import { buildSources, readSourcesFile, type SourcesSettings } from './sources-config.js';

/**
 * The collector's `onError` for the CLI: each failed run is a line on stderr
 * (`2026-11-24T09:14:05.120Z source ipowatch: ...`), and the collector goes on.
 *
 * @example
 * ```ts
 * await startCollector(store, { sources, onError: collectorErrors(io) });
 * ```
 */
export function collectorErrors(io: CliIo): (err: unknown, source: string) => void {
  return (err, source) => {
    const text = err instanceof Error ? `${err.message}${err.cause === undefined ? '' : `: ${describeCause(err.cause)}`}` : String(err);
    io.stderr.write(`${new Date().toISOString()} source ${source}: ${text.replace(/\r?\n/g, ' ')}\n`);
  };
}

/** The sources file: `--sources`, else `IPOKIT_SOURCES`. */
function sourcesFileOf(option: string | undefined, io: CliIo): string {
  const file = option ?? io.env['IPOKIT_SOURCES'];
  if (file === undefined || file === '') throw new CliError('--sources FILE is required (or IPOKIT_SOURCES): the sources to run, as JSON', 2);
  return file;
}

const COLLECT_OPTIONS = {
  sources: { type: 'string' },
  schema: { type: 'string' },
} as const;

/**
 * `ipokit collect --sources FILE [--schema S]`: migrates the schema (as `ipokit serve` does),
 * then runs the file's sources on the database until `io.signal` aborts; the runs under way
 * are then cut and it resolves to 0. Each failed run is a line on stderr.
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * const done = collectCommand(['--sources', 'sources.json'], { ...io, signal: stop.signal });
 * stop.abort();
 * await done; // 0
 * ```
 */
export const collectCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: COLLECT_OPTIONS, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  const file = sourcesFileOf(values.sources, io);
  let settings: SourcesSettings;
  try {
    settings = await readSourcesFile(file, io.cwd);
  } catch (err) {
    return reportConfigProblems(err, 'ipokit collect: sources file', 'nothing was started', io);
  }
  const sources = await buildSources(settings, io.cwd);
  const db = await openDatabase(io, schemaOf(values.schema, io));
  try {
    await migrate(db.client, { schema: db.schema });
    const store = storeOf(db);
    let collector: Collector | null = null;
    try {
      collector = await startCollector(store, {
        sources,
        ...(settings.staleAfterMs === undefined ? {} : { staleAfterMs: settings.staleAfterMs }),
        ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs }),
        onError: collectorErrors(io),
      });
      const names = sources.map((s) => `${s.name} (every ${everyText(s.everyMs)})`).join(', ');
      io.stdout.write(`ipokit collect running ${sources.length} source${sources.length === 1 ? '' : 's'} on PostgreSQL at ${db.where} (schema ${db.schema}): ${names}.\n`);
      await stopped(io.signal);
      await collector.stop();
      io.stdout.write('ipokit collect stopped: the runs under way were cut; every write is whole or not made.\n');
    } finally {
      await collector?.stop();
      await store.close?.();
    }
  } finally {
    await db.close();
  }
  return 0;
};

const SOURCES_OPTIONS = {
  sources: { type: 'string' },
  schema: { type: 'string' },
  url: { type: 'string' },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * `ipokit sources [--sources FILE] [--json]` (from the database) or `ipokit sources --url URL
 * --token-file F [--json]` (from a server's `GET /-/sources`): each source's status, a row per
 * source (NAME, LAST RUN, LAST SUCCESS, RECORDS, STALE, NEXT RUN, LAST ERROR); `--json` prints
 * the statuses as JSON.
 *
 * @example
 * ```ts
 * await sourcesCommand(['--url', 'http://127.0.0.1:3000', '--token-file', 'ingest.token'], io);
 * ```
 */
export const sourcesCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: SOURCES_OPTIONS, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  let statuses: SourceStatus[];
  if (values.url !== undefined) {
    const tokenFile = required('--token-file', values['token-file']);
    statuses = await fromServer(values.url, (await readIngestTokens(tokenFile, io.cwd))[0]!);
  } else {
    if (values['token-file'] !== undefined) throw new CliError('--token-file goes with --url (a server\'s GET /-/sources)', 2);
    const file = sourcesFileOf(values.sources, io);
    let settings: SourcesSettings;
    try {
      settings = await readSourcesFile(file, io.cwd);
    } catch (err) {
      return reportConfigProblems(err, 'ipokit sources: sources file', 'nothing was read', io);
    }
    const names = (await buildSources(settings, io.cwd)).map((s) => s.name);
    const db = await openDatabase(io, schemaOf(values.schema, io));
    try {
      const store = storeOf(db);
      try {
        if (!isSourceStore(store)) throw new CliError('this store keeps no collector state');
        statuses = await sourceStatuses(store, names, settings.staleAfterMs === undefined ? {} : { staleAfterMs: settings.staleAfterMs });
      } finally {
        await store.close?.();
      }
    } finally {
      await db.close();
    }
  }
  if (values.json === true) io.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
  else io.stdout.write(statusTable(statuses));
  return 0;
};

/**
 * The statuses as the command prints them: a row per source; times as ISO-8601 or `never`.
 *
 * @example
 * ```ts
 * io.stdout.write(statusTable(collector.status()));
 * ```
 */
export function statusTable(statuses: readonly SourceStatus[]): string {
  const rows = statuses.map((s) => [
    s.name,
    s.lastRunAt ?? 'never',
    s.lastSuccessAt ?? 'never',
    String(s.records),
    String(s.staleReports),
    s.running ? 'running' : (s.nextRunAt ?? '-'),
    s.lastError === null ? '-' : printable(s.lastError.length > 120 ? `${s.lastError.slice(0, 117)}...` : s.lastError),
  ]);
  return columns(['NAME', 'LAST RUN', 'LAST SUCCESS', 'RECORDS', 'STALE', 'NEXT RUN', 'LAST ERROR'], rows);
}

async function fromServer(url: string, token: string): Promise<SourceStatus[]> {
  const target = `${url.replace(/\/+$/, '')}/-/sources`;
  let response: Response;
  try {
    response = await fetch(target, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  } catch (err) {
    throw new CliError(`cannot reach ${target}: ${describeCause(err)}`);
  }
  const text = await response.text();
  if (response.status !== 200) throw new CliError(`GET ${target} answered ${response.status}: ${text.slice(0, 200).replace(/\s+/g, ' ')}`);
  const body = JSON.parse(text) as { sources?: SourceStatus[] };
  if (!Array.isArray(body.sources)) throw new CliError(`GET ${target} did not answer { "sources": [...] }`);
  return body.sources;
}

function everyText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
