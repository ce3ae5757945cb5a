/**
 * The collector's settings of `ipokit serve --sources FILE` and `ipokit collect` (config
 * `sources`, docs/spec.md#sources): the built-in sources with their options, checked with
 * every problem named, then made into sources.
 *
 * ```json
 * { "staleAfterMs": 21600000,
 *   "sources": [
 *     { "type": "upstream", "baseUrl": "https://api.example.com/ipos", "apiKeyFile": "/run/secrets/upstream" },
 *     { "type": "url", "name": "ipowatch", "url": "https://scraper.internal/ipowatch.json", "everyMs": 60000 },
 *     { "type": "file", "path": "data/today.json" } ] }
 * ```
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { STATUS_VALUES, type IpoStatus } from '@ipokit/core';
import { datasetUrlSource, upstreamSource, type Source } from '@ipokit/sources';
import { datasetFileSource } from '@ipokit/sources/node';
import { ConfigFileError, readConfigFile } from './config.js';
import { CliError } from './io.js';

/** One built-in source as the settings give it. */
export type SourceSetting =
  | {
      type: 'upstream';
      name?: string;
      baseUrl: string;
      /** The key, or a file holding it (first line), so that the settings file holds no secret. */
      apiKey?: string;
      apiKeyFile?: string;
      everyMs?: number;
      timeoutMs?: number;
      statuses?: IpoStatus[];
      includeGmp?: boolean;
      subscription?: boolean;
    }
  | { type: 'url'; name?: string; url: string; headers?: Record<string, string>; everyMs: number; timeoutMs?: number; maxBytes?: number }
  | { type: 'file'; name?: string; path: string; everyMs?: number; maxBytes?: number };

/** The collector's settings: its sources and its own options. */
export interface SourcesSettings {
  sources: SourceSetting[];
  staleAfterMs?: number;
  timeoutMs?: number;
}

const TOP_KEYS = ['sources', 'staleAfterMs', 'timeoutMs'];
const KEYS: Record<SourceSetting['type'], readonly string[]> = {
  upstream: ['type', 'name', 'baseUrl', 'apiKey', 'apiKeyFile', 'everyMs', 'timeoutMs', 'statuses', 'includeGmp', 'subscription'],
  url: ['type', 'name', 'url', 'headers', 'everyMs', 'timeoutMs', 'maxBytes'],
  file: ['type', 'name', 'path', 'everyMs', 'maxBytes'],
};

/**
 * Checks the collector's settings (a parsed JSON value): an object with `sources` (an array of
 * built-in sources, each with its `type`: `upstream`, `url` or `file`) and optionally
 * `staleAfterMs` and `timeoutMs`. Every problem is one line, `sources[1].url: ...`.
 *
 * @example
 * ```ts
 * const { settings, problems } = checkSourcesSettings({ sources: [{ type: 'file', path: 'today.json' }] });
 * // problems: []
 * ```
 */
export function checkSourcesSettings(value: unknown): { settings: SourcesSettings; problems: string[] } {
  const problems: string[] = [];
  const settings: SourcesSettings = { sources: [] };
  if (!isObject(value)) return { settings, problems: [`must be an object with "sources", got ${shown(value)}`] };
  for (const key of Object.keys(value)) if (!TOP_KEYS.includes(key)) problems.push(`${key}: unknown setting (the settings are ${TOP_KEYS.join(', ')})`);
  const stale = positiveMs(value['staleAfterMs'], 'staleAfterMs', problems);
  if (stale !== undefined) settings.staleAfterMs = stale;
  const timeout = positiveMs(value['timeoutMs'], 'timeoutMs', problems);
  if (timeout !== undefined) settings.timeoutMs = timeout;
  const list = value['sources'];
  if (!Array.isArray(list) || list.length === 0) {
    problems.push(`sources: must be a non-empty array of sources, got ${shown(list)}`);
    return { settings, problems };
  }
  list.forEach((item: unknown, i) => {
    const at = `sources[${i}]`;
    if (!isObject(item)) return void problems.push(`${at}: must be an object with "type", got ${shown(item)}`);
    const type = item['type'];
    if (type !== 'upstream' && type !== 'url' && type !== 'file') return void problems.push(`${at}.type: must be "upstream", "url" or "file", got ${shown(type)}`);
    for (const key of Object.keys(item)) if (!KEYS[type].includes(key)) problems.push(`${at}.${key}: not an option of a ${type} source (its options are ${KEYS[type].join(', ')})`);
    const before = problems.length;
    const name = optionalText(item['name'], `${at}.name`, problems);
    const everyMs = positiveMs(item['everyMs'], `${at}.everyMs`, problems);
    const base = { ...(name === undefined ? {} : { name }) };
    if (type === 'upstream') {
      const baseUrl = requiredText(item['baseUrl'], `${at}.baseUrl`, problems);
      const apiKey = optionalText(item['apiKey'], `${at}.apiKey`, problems);
      const apiKeyFile = optionalText(item['apiKeyFile'], `${at}.apiKeyFile`, problems);
      if ((apiKey === undefined) === (apiKeyFile === undefined)) problems.push(`${at}: give one of apiKey and apiKeyFile`);
      const statuses = item['statuses'];
      if (statuses !== undefined && (!Array.isArray(statuses) || statuses.length === 0 || statuses.some((s) => !(STATUS_VALUES as readonly unknown[]).includes(s)))) {
        problems.push(`${at}.statuses: must be a non-empty array of ${STATUS_VALUES.join(', ')}, got ${shown(statuses)}`);
      }
      const includeGmp = optionalBoolean(item['includeGmp'], `${at}.includeGmp`, problems);
      const subscription = optionalBoolean(item['subscription'], `${at}.subscription`, problems);
      const timeoutMs = positiveMs(item['timeoutMs'], `${at}.timeoutMs`, problems);
      if (problems.length === before && baseUrl !== undefined) {
        settings.sources.push({
          type,
          ...base,
          baseUrl,
          ...(apiKey === undefined ? {} : { apiKey }),
          ...(apiKeyFile === undefined ? {} : { apiKeyFile }),
          ...(everyMs === undefined ? {} : { everyMs }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(statuses === undefined ? {} : { statuses: statuses as IpoStatus[] }),
          ...(includeGmp === undefined ? {} : { includeGmp }),
          ...(subscription === undefined ? {} : { subscription }),
        });
      }
    } else if (type === 'url') {
      const url = requiredText(item['url'], `${at}.url`, problems);
      const headers = item['headers'];
      if (headers !== undefined && (!isObject(headers) || Object.values(headers).some((h) => typeof h !== 'string'))) {
        problems.push(`${at}.headers: must be an object of header names and string values, got ${shown(headers)}`);
      }
      if (everyMs === undefined && item['everyMs'] === undefined) problems.push(`${at}.everyMs: is required for a url source`);
      const timeoutMs = positiveMs(item['timeoutMs'], `${at}.timeoutMs`, problems);
      const maxBytes = positiveMs(item['maxBytes'], `${at}.maxBytes`, problems);
      if (problems.length === before && url !== undefined && everyMs !== undefined) {
        settings.sources.push({
          type,
          ...base,
          url,
          everyMs,
          ...(headers === undefined ? {} : { headers: headers as Record<string, string> }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(maxBytes === undefined ? {} : { maxBytes }),
        });
      }
    } else {
      const path = requiredText(item['path'], `${at}.path`, problems);
      const maxBytes = positiveMs(item['maxBytes'], `${at}.maxBytes`, problems);
      if (problems.length === before && path !== undefined) {
        settings.sources.push({ type, ...base, path, ...(everyMs === undefined ? {} : { everyMs }), ...(maxBytes === undefined ? {} : { maxBytes }) });
      }
    }
  });
  return { settings, problems };
}

/**
 * Reads and checks a sources file (JSON, see {@link checkSourcesSettings}), relative to `cwd`.
 *
 * @throws {ConfigFileError} naming every problem (exit 2); {@link CliError} for a file that
 * cannot be read or is not JSON.
 *
 * @example
 * ```ts
 * const settings = await readSourcesFile('sources.json', process.cwd());
 * ```
 */
export async function readSourcesFile(file: string, cwd: string): Promise<SourcesSettings> {
  const { json } = await readConfigFile(file, cwd);
  const { settings, problems } = checkSourcesSettings(json);
  if (problems.length > 0) throw new ConfigFileError(file, problems);
  return settings;
}

/**
 * The sources the settings describe (an `apiKeyFile`'s first line read now, relative to `cwd`).
 * A source a built-in refuses (a URL that is not one, say) is a {@link CliError}.
 *
 * @example
 * ```ts
 * const sources = await buildSources(settings, process.cwd());
 * const collector = await startCollector(store, { sources, staleAfterMs: settings.staleAfterMs });
 * ```
 */
export async function buildSources(settings: SourcesSettings, cwd: string): Promise<Source[]> {
  const sources: Source[] = [];
  for (const [i, s] of settings.sources.entries()) {
    try {
      if (s.type === 'upstream') {
        const apiKey = s.apiKey ?? (await keyFromFile(s.apiKeyFile ?? '', cwd, `sources[${i}].apiKeyFile`));
        sources.push(
          upstreamSource({
            baseUrl: s.baseUrl,
            apiKey,
            ...(s.name === undefined ? {} : { name: s.name }),
            ...(s.everyMs === undefined ? {} : { everyMs: s.everyMs }),
            ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }),
            ...(s.statuses === undefined ? {} : { statuses: s.statuses }),
            ...(s.includeGmp === undefined ? {} : { includeGmp: s.includeGmp }),
            ...(s.subscription === undefined ? {} : { subscription: s.subscription }),
          }),
        );
      } else if (s.type === 'url') {
        sources.push(datasetUrlSource({ url: s.url, everyMs: s.everyMs, ...(s.name === undefined ? {} : { name: s.name }), ...(s.headers === undefined ? {} : { headers: s.headers }), ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }), ...(s.maxBytes === undefined ? {} : { maxBytes: s.maxBytes }) }));
      } else {
        sources.push(datasetFileSource(resolve(cwd, s.path), { ...(s.name === undefined ? {} : { name: s.name }), ...(s.everyMs === undefined ? {} : { everyMs: s.everyMs }), ...(s.maxBytes === undefined ? {} : { maxBytes: s.maxBytes }) }));
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`sources[${i}]: ${err instanceof Error ? err.message : String(err)}`, 2);
    }
  }
  return sources;
}

async function keyFromFile(file: string, cwd: string, label: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new CliError(`${label}: cannot read ${file}: ${typeof code === 'string' ? code : err instanceof Error ? err.message : String(err)}`);
  }
  const key = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (key === '') throw new CliError(`${label}: ${file} holds no key on its first line`);
  return key;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function positiveMs(value: unknown, label: string, problems: string[]): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    problems.push(`${label}: must be a whole number above 0, got ${shown(value)}`);
    return undefined;
  }
  return value;
}

function requiredText(value: unknown, label: string, problems: string[]): string | undefined {
  if (typeof value !== 'string' || value === '') {
    problems.push(`${label}: is required, a non-empty string, got ${shown(value)}`);
    return undefined;
  }
  return value;
}

function optionalText(value: unknown, label: string, problems: string[]): string | undefined {
  return value === undefined ? undefined : requiredText(value, label, problems);
}

function optionalBoolean(value: unknown, label: string, problems: string[]): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    problems.push(`${label}: must be true or false, got ${shown(value)}`);
    return undefined;
  }
  return value;
}
