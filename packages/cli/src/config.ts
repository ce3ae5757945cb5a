/**
 * The settings of `ipokit serve` and of the demo's `npm start`: where the server listens,
 * where the API is mounted, how many proxies stand in front of it, the access log, the
 * router's options, the connection limits, the webhook worker (which `ipokit worker`
 * reads too) and the push route. Each comes from its flag, else its
 * environment variable, else the config file (`--config FILE`, JSON), else its default.
 * The router's own rules check the router's options (`resolveOptions` of `@ipokit/core`),
 * the connection limits' rules the limits, so that each rule is written once.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isIpokitError, type IpoRouterOptions } from '@ipokit/core';
import { parseCidr } from '@ipokit/core/backend';
import { resolveOptions, type ResolvedOptions } from '@ipokit/core/adapter';
import { MAX_CONNECTIONS, MAX_TIMEOUT_MS, resolveConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { DEFAULT_INGEST_MAX_BYTES, MAX_INGEST_MAX_BYTES } from './ingest.js';
import { checkSourcesSettings, type SourcesSettings } from './sources-config.js';
import { CliError, type CliIo } from './io.js';

/** The web framework the server runs on. */
export type Framework = 'node' | 'express' | 'koa';

/** The access log: a text line per request, a JSON object per line, or none. */
export type LogFormat = 'text' | 'json' | 'off';

/**
 * Every setting of the server, resolved: what `ipokit serve --print-config` prints. The
 * router's own settings are the core's resolved options (the clock and onError aside).
 */
export interface ServeSettings extends Omit<ResolvedOptions, 'now' | 'onError' | 'onResponse' | 'onStoreCall'> {
  framework: Framework;
  port: number;
  host: string;
  /** The path the API answers under. Default `/ipos`; `/` for the root. */
  mount: string;
  /** How many proxies in front append to X-Forwarded-For; 0 (the default) trusts none. */
  trustProxy: number;
  log: LogFormat;
  /** How long a stopping server waits for the requests under way. */
  drainMs: number;
  connections: ConnectionLimits;
  /** `ipokit serve` delivers webhooks: it runs a worker in its process. Default true. */
  webhooks: boolean;
  /** The worker also sends to `http:` URLs (local receivers, tests). Default false: `https:` only. */
  allowInsecureWebhooks: boolean;
  /** Delivery attempts the worker has in flight at once. Default {@link DEFAULT_WEBHOOK_CONCURRENCY}. */
  webhookConcurrency: number;
  /**
   * Networks (CIDRs) outside the public internet that webhooks may be created for and sent to
   * (`--webhook-allow-network`, repeatable). Default none: only public addresses.
   */
  webhookAllowedNetworks: string[];
  /** The push route, `POST /-/ingest`: on when `tokenFile` names a file of bearer tokens. */
  ingest: IngestSettings;
  /**
   * The collector run in the server (docs/spec.md#sources): a sources file (`--sources FILE`,
   * `IPOKIT_SOURCES`) or, in the config file, the settings themselves; null (the default): none.
   */
  sources: string | SourcesSettings | null;
  /** Prometheus metrics at `GET /metrics` on a listener of their own (docs/spec.md#metrics). */
  metrics: MetricsServeSettings;
}

/** The metrics listener's settings (config key `metrics`). */
export interface MetricsServeSettings {
  /** Its port (`--metrics-port`, `IPOKIT_METRICS_PORT`; 0 picks a free one); null (the default): no metrics. */
  port: number | null;
  /** Its address (`--metrics-host`, `IPOKIT_METRICS_HOST`). Default `127.0.0.1`. */
  host: string;
}

/** The push route's settings (config key `ingest`). */
export interface IngestSettings {
  /** A file of bearer tokens, one per line (`--ingest-token-file`); null (the default): no push route. */
  tokenFile: string | null;
  /** The largest body read, in bytes (`--ingest-max-bytes`; default 16 MiB). */
  maxBytes: number;
}

/** The router's options among the settings. */
export type RouterSettings = Pick<
  ServeSettings,
  | 'openapi'
  | 'limits'
  | 'rateLimitHeaders'
  | 'maxListLimit'
  | 'gmpPreviewEnds'
  | 'maxGmpBuckets'
  | 'maxUrlLength'
  | 'storeTimeoutMs'
  | 'keyCacheTtlMs'
  | 'limiterFailOpen'
  | 'maxKeysPerAccount'
>;

/** The default mount path. */
export const DEFAULT_MOUNT = '/ipos';

/** The paths of the health checks, at the root of the server, outside the mount. */
export const HEALTH_PATHS = Object.freeze({ live: '/healthz', ready: '/readyz' });

/** The most proxies `trustProxy` may count: more is surely a typo. */
export const MAX_TRUST_PROXY = 100;

/** Delivery attempts a webhook worker has in flight at once, by default (the core's default). */
export const DEFAULT_WEBHOOK_CONCURRENCY = 64;

/** The most attempts a worker may have in flight: each holds a connection. */
export const MAX_WEBHOOK_CONCURRENCY = 1_000;

/** A value given as a flag: the setting's path, the flag as the user typed it, the text. */
export interface FlagValue {
  /** e.g. `limits.free.perMinute`. */
  path: string;
  /** e.g. `--limit free.perMinute`: how messages name it. */
  label: string;
  text: string;
}

/** Where {@link resolveSettings} reads the settings from. */
export interface SettingsSources {
  /** The flags given, in order (a later one wins). */
  flags?: readonly FlagValue[];
  /** The environment: PORT, HOST, IPOKIT_*. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The config file's parsed JSON, and its name as given. */
  file?: { name: string; json: unknown };
}

/** A config file with problems: every one of them, each `path: what is wrong`. Exit code 2. */
export class ConfigFileError extends CliError {
  /** The file, as given. */
  readonly file: string;
  /** One line per problem, `limits.free.perMinute: must be ..., got 0`. */
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`config file ${file} has ${problems.length} problem${problems.length === 1 ? '' : 's'}: ${problems.join('; ')}`, 2);
    this.name = 'ConfigFileError';
    this.file = file;
    this.problems = problems;
  }
}

/** One setting: how its text (flag, variable) and its JSON (file) become a value, and its rule. */
interface Leaf {
  path: string;
  flag?: string;
  env?: string;
  /** The flag's or variable's text as the value to check (left as text when it cannot be read). */
  fromText(text: string): unknown;
  /** The file's JSON value as the value to check. */
  fromJson(value: unknown): unknown;
  /** null when the value is fine, else what it must be (`must be ...`). */
  check(value: unknown): string | null;
}

const PLANS = ['free', 'paid', 'pro'] as const;
const WINDOWS = ['perMinute', 'perHour', 'perDay', 'gmpPerMinute', 'gmpPerDay'] as const;
const KEYLESS_WINDOWS = ['perMinute', 'perHour', 'perDay'] as const;
const CONNECTION_FLAGS: Readonly<Record<keyof ConnectionLimits, string>> = {
  headersTimeoutMs: '--headers-timeout-ms',
  requestTimeoutMs: '--request-timeout-ms',
  keepAliveTimeoutMs: '--keep-alive-timeout-ms',
  idleTimeoutMs: '--idle-timeout-ms',
  maxConnections: '--max-connections',
};

const same = (value: unknown): unknown => value;
const digits = (text: string): unknown => (/^[0-9]{1,16}$/.test(text) ? Number(text) : text);
/** `off` turns a rate-limit window off: the router's `Infinity`, which JSON cannot write. */
const quotaText = (text: string): unknown => (text === 'off' ? Infinity : digits(text));
const quotaJson = (value: unknown): unknown => (value === 'off' ? Infinity : value);
const booleanText = (text: string): unknown => {
  if (/^(true|1|yes|on)$/i.test(text)) return true;
  if (/^(false|0|no|off)$/i.test(text)) return false;
  return text;
};

function wholeNumber(min: number, max: number): (value: unknown) => string | null {
  return (value) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max ? null : `must be a whole number from ${min} to ${max}`);
}

function oneOf(allowed: readonly string[]): (value: unknown) => string | null {
  return (value) => (typeof value === 'string' && allowed.includes(value) ? null : `must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`);
}

/** A list of CIDRs as a flag or variable gives it: comma-separated. */
const cidrsText = (text: string): unknown => text.split(',').map((t) => t.trim());

function cidrList(value: unknown): string | null {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return 'must be a list of CIDRs, e.g. ["10.1.0.0/16", "127.0.0.0/8"]';
  for (const cidr of value as string[]) {
    try {
      parseCidr(cidr);
    } catch (err) {
      return `must be a list of CIDRs (e.g. 10.1.0.0/16, ::1/128): ${isIpokitError(err) ? err.message : String(err)}`;
    }
  }
  return null;
}

/** The metrics listener's port: null (as --print-config writes it) is none. */
function metricsPort(value: unknown): string | null {
  if (value === null) return null;
  return wholeNumber(0, 65535)(value) === null ? null : 'must be a port number from 0 to 65535, or null for no metrics';
}

function fileName(value: unknown): string | null {
  if (value === null) return null;
  if (value === '') return 'must not be empty';
  return typeof value === 'string' ? null : 'must be a file name, or null for none';
}

/** A sources file's name, or the sources settings themselves (every problem named). */
function sourcesValue(value: unknown): string | null {
  if (value === null || typeof value === 'string') return fileName(value);
  const { problems } = checkSourcesSettings(value);
  return problems.length === 0 ? null : `must be a sources file's name or the sources settings: ${problems.join('; ')}`;
}

function isBoolean(value: unknown): string | null {
  return typeof value === 'boolean' ? null : 'must be true or false';
}

/** The router's own rule for one option: `resolveOptions` of just that option. */
function routerRule(path: string): (value: unknown) => string | null {
  return (value) => {
    try {
      resolveOptions(nest(path, value) as IpoRouterOptions);
      return null;
    } catch (err) {
      if (!isIpokitError(err, 'ERR:BADPARAM')) throw err;
      // "ipoRouter option limits.free.perMinute must be ..., or Infinity to turn the window off."
      return err.message.replace(/^ipoRouter option \S+ /, '').replace(/\.$/, '').replace(/\bInfinity\b/, '"off"');
    }
  };
}

/**
 * What is wrong with a mount path, or null: `/` or segments of letters, digits and `._~-`,
 * not the health checks' paths.
 *
 * @example
 * ```ts
 * mountProblem('/api/v1/ipos'); // null
 * mountProblem('ipos');         // 'must be a path like /ipos or /api/v1/ipos ...'
 * ```
 */
export function mountProblem(mount: unknown): string | null {
  if (typeof mount !== 'string' || !(mount === '/' || /^(\/[A-Za-z0-9._~-]+)+$/.test(mount)) || /\/\.{1,2}(\/|$)/.test(mount)) {
    return 'must be a path like /ipos or /api/v1/ipos (segments of letters, digits and ._~-), or / for the root';
  }
  const first = `/${mount.split('/')[1] ?? ''}`.toLowerCase();
  if (first === HEALTH_PATHS.live || first === HEALTH_PATHS.ready) return `must not be under ${first}, the health check's path`;
  return null;
}

function hostRule(value: unknown): string | null {
  if (value === '') return 'must not be empty';
  return typeof value === 'string' && /^[^\s/?#@]{1,253}$/.test(value) ? null : 'must be a host name or an IP address, e.g. 0.0.0.0';
}

/** Every setting, in the order --print-config prints them. */
const LEAVES: readonly Leaf[] = [
  { path: 'framework', flag: '--framework', env: 'IPOKIT_FRAMEWORK', fromText: (t) => t.toLowerCase(), fromJson: same, check: oneOf(['node', 'express', 'koa']) },
  { path: 'port', flag: '--port', env: 'PORT', fromText: digits, fromJson: same, check: wholeNumber(0, 65535) },
  { path: 'host', flag: '--host', env: 'HOST', fromText: (t) => t, fromJson: same, check: hostRule },
  { path: 'mount', flag: '--mount', env: 'IPOKIT_MOUNT', fromText: trimSlash, fromJson: (v) => (typeof v === 'string' ? trimSlash(v) : v), check: mountProblem },
  { path: 'trustProxy', flag: '--trust-proxy', env: 'IPOKIT_TRUST_PROXY', fromText: digits, fromJson: same, check: wholeNumber(0, MAX_TRUST_PROXY) },
  { path: 'log', flag: '--log', env: 'IPOKIT_LOG', fromText: (t) => t.toLowerCase(), fromJson: same, check: oneOf(['text', 'json', 'off']) },
  { path: 'drainMs', flag: '--drain-ms', env: 'IPOKIT_DRAIN_MS', fromText: digits, fromJson: same, check: wholeNumber(0, MAX_TIMEOUT_MS) },
  { path: 'openapi', flag: '--openapi', env: 'IPOKIT_OPENAPI', fromText: booleanText, fromJson: same, check: isBoolean },
  ...[...PLANS, 'keyless' as const].flatMap((plan) =>
    (plan === 'keyless' ? KEYLESS_WINDOWS : WINDOWS).map((window): Leaf => {
      const path = `limits.${plan}.${window}`;
      return { path, fromText: quotaText, fromJson: quotaJson, check: routerRule(path) };
    }),
  ),
  { path: 'rateLimitHeaders', flag: '--rate-limit-headers', env: 'IPOKIT_RATE_LIMIT_HEADERS', fromText: (t) => t.toLowerCase(), fromJson: same, check: routerRule('rateLimitHeaders') },
  ...PLANS.map((plan): Leaf => ({ path: `maxListLimit.${plan}`, fromText: digits, fromJson: same, check: routerRule(`maxListLimit.${plan}`) })),
  { path: 'gmpPreviewEnds', flag: '--gmp-preview-ends', fromText: (t) => t, fromJson: same, check: routerRule('gmpPreviewEnds') },
  { path: 'maxGmpBuckets', flag: '--max-gmp-buckets', fromText: digits, fromJson: same, check: routerRule('maxGmpBuckets') },
  { path: 'maxUrlLength', flag: '--max-url-length', fromText: digits, fromJson: same, check: routerRule('maxUrlLength') },
  { path: 'storeTimeoutMs', flag: '--store-timeout-ms', env: 'IPOKIT_STORE_TIMEOUT_MS', fromText: digits, fromJson: same, check: routerRule('storeTimeoutMs') },
  { path: 'keyCacheTtlMs', flag: '--key-cache-ttl-ms', env: 'IPOKIT_KEY_CACHE_TTL_MS', fromText: digits, fromJson: same, check: routerRule('keyCacheTtlMs') },
  { path: 'limiterFailOpen', flag: '--limiter-fail-open', env: 'IPOKIT_LIMITER_FAIL_OPEN', fromText: booleanText, fromJson: same, check: isBoolean },
  // (`off`: no cap, the router's Infinity, as for a window)
  {
    path: 'maxKeysPerAccount',
    flag: '--max-keys-per-account',
    env: 'IPOKIT_MAX_KEYS_PER_ACCOUNT',
    fromText: quotaText,
    fromJson: quotaJson,
    check: routerRule('maxKeysPerAccount'),
  },
  ...(Object.keys(CONNECTION_FLAGS) as Array<keyof ConnectionLimits>).map(
    (key): Leaf => ({
      path: `connections.${key}`,
      flag: CONNECTION_FLAGS[key],
      fromText: digits,
      fromJson: same,
      check: key === 'maxConnections' ? wholeNumber(1, MAX_CONNECTIONS) : wholeNumber(0, MAX_TIMEOUT_MS),
    }),
  ),
  { path: 'webhooks', flag: '--webhooks', env: 'IPOKIT_WEBHOOKS', fromText: booleanText, fromJson: same, check: isBoolean },
  { path: 'allowInsecureWebhooks', flag: '--allow-insecure-webhooks', env: 'IPOKIT_ALLOW_INSECURE_WEBHOOKS', fromText: booleanText, fromJson: same, check: isBoolean },
  { path: 'webhookConcurrency', flag: '--webhook-concurrency', env: 'IPOKIT_WEBHOOK_CONCURRENCY', fromText: digits, fromJson: same, check: wholeNumber(1, MAX_WEBHOOK_CONCURRENCY) },
  // (the flag is repeatable: settingsFlags joins its values with commas, as the variable writes them)
  { path: 'webhookAllowedNetworks', flag: '--webhook-allow-network', env: 'IPOKIT_WEBHOOK_ALLOW_NETWORKS', fromText: cidrsText, fromJson: same, check: cidrList },
  { path: 'ingest.tokenFile', flag: '--ingest-token-file', env: 'IPOKIT_INGEST_TOKEN_FILE', fromText: (t) => t, fromJson: same, check: fileName },
  { path: 'ingest.maxBytes', flag: '--ingest-max-bytes', env: 'IPOKIT_INGEST_MAX_BYTES', fromText: digits, fromJson: same, check: wholeNumber(1, MAX_INGEST_MAX_BYTES) },
  { path: 'sources', flag: '--sources', env: 'IPOKIT_SOURCES', fromText: (t) => t, fromJson: same, check: sourcesValue },
  { path: 'metrics.port', flag: '--metrics-port', env: 'IPOKIT_METRICS_PORT', fromText: digits, fromJson: same, check: metricsPort },
  { path: 'metrics.host', flag: '--metrics-host', env: 'IPOKIT_METRICS_HOST', fromText: (t) => t, fromJson: same, check: hostRule },
];
const LEAF = new Map(LEAVES.map((leaf) => [leaf.path, leaf]));

/** The groups of the file: the names each may hold. */
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  '': [...new Set(LEAVES.map((l) => l.path.split('.')[0]!))],
  limits: [...PLANS, 'keyless'],
  'limits.free': WINDOWS,
  'limits.paid': WINDOWS,
  'limits.pro': WINDOWS,
  'limits.keyless': KEYLESS_WINDOWS,
  maxListLimit: PLANS,
  connections: Object.keys(CONNECTION_FLAGS),
  ingest: ['tokenFile', 'maxBytes'],
  metrics: ['port', 'host'],
};

function trimSlash(text: string): string {
  return text.length > 1 ? text.replace(/\/+$/, '') || '/' : text;
}

/** `{ a: { b: value } }` for the path `a.b`. */
function nest(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.');
  let object: Record<string, unknown> = { [parts.at(-1)!]: value };
  for (const part of parts.slice(0, -1).reverse()) object = { [part]: object };
  return object;
}

/** A value as a message shows it: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** A problem: `LABEL must be ..., got VALUE` (no `got` for an empty value that must not be empty). */
function problem(label: string, why: string, raw: unknown): string {
  return raw === '' && why === 'must not be empty' ? `${label} ${why}` : `${label} ${why}, got ${shown(raw)}`;
}

/**
 * Reads a config file: JSON, resolved against `cwd`. A file that cannot be read, is not
 * JSON or nests arrays and objects more than 32 deep is a usage error (exit 2) that names
 * it; what it holds is checked by {@link resolveSettings}.
 *
 * @example
 * ```ts
 * const file = await readConfigFile('ipokit.config.json', process.cwd());
 * const settings = resolveSettings({ file, env: process.env });
 * ```
 */
export async function readConfigFile(name: string, cwd: string): Promise<{ name: string; json: unknown }> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, name), 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new CliError(`cannot read config file ${name}: ${typeof code === 'string' ? code : err instanceof Error ? err.message : String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(`config file ${name} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  // JSON.parse reads any depth, but showing a value in a problem (JSON.stringify) recurses:
  // 100,000 levels overflowed the stack. Settings go 3 deep.
  if (nestedDeeperThan(json, MAX_CONFIG_DEPTH)) {
    throw new CliError(`config file ${name} is nested too deep: more than ${MAX_CONFIG_DEPTH} levels of arrays and objects`);
  }
  return { name, json };
}

/** The deepest nesting of arrays and objects a config file may have (its settings have 3; `ipokit import` allows 32 too). */
const MAX_CONFIG_DEPTH = 32;

/** Whether arrays and objects nest in `value` more than `max` levels (the value itself is level 1), found without recursion. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth > max) return true;
    for (const inner of Object.values(next.value)) pending.push({ value: inner, depth: next.depth + 1 });
  }
  return false;
}

/**
 * The file's settings by path, checked: every problem is collected (an unknown name, a value
 * its rule refuses, connection limits that contradict each other) and thrown at once as a
 * {@link ConfigFileError}.
 */
function fileValues(file: { name: string; json: unknown }): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const problems: string[] = [];
  const walk = (group: string, value: unknown) => {
    const names = GROUPS[group]!;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${group === '' ? '(the file)' : group}: must be a JSON object${group === '' ? '' : ` of ${names.join(', ')}`}, got ${shown(value)}`);
      return;
    }
    for (const [name, inner] of Object.entries(value)) {
      const path = group === '' ? name : `${group}.${name}`;
      if (!names.includes(name)) {
        problems.push(`${path}: unknown setting (${group === '' ? 'settings' : `in ${group}`}: ${names.join(', ')})`);
      } else if (GROUPS[path] !== undefined) {
        walk(path, inner);
      } else {
        const leaf = LEAF.get(path)!;
        const read = leaf.fromJson(inner);
        const why = leaf.check(read);
        if (why === null) values.set(path, read);
        else problems.push(`${path}: ${problem('', why, inner).trimStart()}`);
      }
    }
  };
  walk('', file.json);
  // The limits' own cross-checks, on what the file says alone.
  const given = connectionsOf(values);
  if (Object.keys(given).length > 1) {
    try {
      resolveConnectionLimits(given, { openFiles: null, nameOf: (key) => `connections.${key}` });
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      problems.push(`connections: ${err.message}`);
    }
  }
  if (problems.length > 0) throw new ConfigFileError(file.name, problems);
  return values;
}

function connectionsOf(values: ReadonlyMap<string, unknown>): Partial<ConnectionLimits> {
  const given: Partial<ConnectionLimits> = {};
  for (const key of Object.keys(CONNECTION_FLAGS) as Array<keyof ConnectionLimits>) {
    const value = values.get(`connections.${key}`);
    if (typeof value === 'number') given[key] = value;
  }
  return given;
}

/**
 * Every setting, each from its flag, else its environment variable, else the config file,
 * else its default; the OpenAPI document is on by default here. A flag or a variable the
 * rules refuse is a usage error (`CliError`, exit 2) naming it; a file with problems throws
 * a {@link ConfigFileError} listing every one.
 *
 * @example
 * ```ts
 * const settings = resolveSettings({ flags: [{ path: 'port', label: '--port', text: '8080' }], env: { HOST: '0.0.0.0' } });
 * settings.port; // 8080
 * settings.host; // '0.0.0.0'
 * settings.limits.free.perMinute; // 6
 * ```
 */
export function resolveSettings(sources: SettingsSources = {}): ServeSettings {
  const given = new Map<string, { value: unknown; label: string }>();
  if (sources.file !== undefined) {
    for (const [path, value] of fileValues(sources.file)) given.set(path, { value, label: `${path} in ${sources.file.name}` });
  }
  const env = sources.env ?? {};
  // A variable whose setting a flag gives is not read at all: the flag wins, even over a bad value.
  const flagged = new Set((sources.flags ?? []).map((f) => f.path));
  for (const leaf of LEAVES) {
    const text = leaf.env === undefined || flagged.has(leaf.path) ? undefined : env[leaf.env];
    if (text === undefined || text === '') continue;
    given.set(leaf.path, { value: read(leaf, leaf.env!, text), label: leaf.env! });
  }
  for (const flag of sources.flags ?? []) {
    const leaf = LEAF.get(flag.path);
    if (leaf === undefined) throw new Error(`no setting ${flag.path}`);
    given.set(flag.path, { value: read(leaf, flag.label, flag.text), label: flag.label });
  }
  const value = <T>(path: string, fallback: T): T => (given.has(path) ? (given.get(path)!.value as T) : fallback);

  const routerOptions: Record<string, unknown> = { openapi: true };
  for (const [path, { value: v }] of given) {
    if (path.startsWith('connections.') || !isRouterPath(path)) continue;
    merge(routerOptions, nest(path, v));
  }
  // Every option was checked alone; this applies the defaults (and would catch a rule that
  // spans options).
  let router: ResolvedOptions;
  try {
    router = resolveOptions(routerOptions as IpoRouterOptions);
  } catch (err) {
    if (isIpokitError(err, 'ERR:BADPARAM')) throw new CliError(err.message);
    throw err;
  }
  const connectionValues = new Map([...given].map(([path, g]) => [path, g.value]));
  let connections: ConnectionLimits;
  try {
    connections = resolveConnectionLimits(connectionsOf(connectionValues), {
      nameOf: (key) => given.get(`connections.${key}`)?.label ?? CONNECTION_FLAGS[key],
    });
  } catch (err) {
    if (err instanceof RangeError) throw new CliError(err.message);
    throw err;
  }
  return {
    framework: value<Framework>('framework', 'node'),
    port: value('port', 3000),
    host: value('host', '127.0.0.1'),
    mount: value('mount', DEFAULT_MOUNT),
    trustProxy: value('trustProxy', 0),
    log: value<LogFormat>('log', 'text'),
    drainMs: value('drainMs', 10_000),
    openapi: router.openapi,
    limits: router.limits,
    rateLimitHeaders: router.rateLimitHeaders,
    maxListLimit: router.maxListLimit,
    gmpPreviewEnds: router.gmpPreviewEnds,
    maxGmpBuckets: router.maxGmpBuckets,
    maxUrlLength: router.maxUrlLength,
    storeTimeoutMs: router.storeTimeoutMs,
    keyCacheTtlMs: router.keyCacheTtlMs,
    limiterFailOpen: router.limiterFailOpen,
    maxKeysPerAccount: router.maxKeysPerAccount,
    connections,
    webhooks: value('webhooks', true),
    allowInsecureWebhooks: value('allowInsecureWebhooks', false),
    webhookConcurrency: value('webhookConcurrency', DEFAULT_WEBHOOK_CONCURRENCY),
    webhookAllowedNetworks: value<string[]>('webhookAllowedNetworks', []),
    ingest: { tokenFile: value<string | null>('ingest.tokenFile', null), maxBytes: value('ingest.maxBytes', DEFAULT_INGEST_MAX_BYTES) },
    sources: value<string | SourcesSettings | null>('sources', null),
    metrics: { port: value<number | null>('metrics.port', null), host: value('metrics.host', '127.0.0.1') },
  };
}

const ROUTER_ROOTS = new Set([
  'openapi',
  'limits',
  'rateLimitHeaders',
  'maxListLimit',
  'gmpPreviewEnds',
  'maxGmpBuckets',
  'maxUrlLength',
  'storeTimeoutMs',
  'keyCacheTtlMs',
  'limiterFailOpen',
  'maxKeysPerAccount',
]);

function isRouterPath(path: string): boolean {
  return ROUTER_ROOTS.has(path.split('.')[0]!);
}

function merge(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(from)) {
    const current = into[key];
    if (value !== null && typeof value === 'object' && current !== null && typeof current === 'object') merge(current as Record<string, unknown>, value as Record<string, unknown>);
    else into[key] = value;
  }
}

/** A flag's or variable's text as its setting's value; refused by its rule: a usage error naming it. */
function read(leaf: Leaf, label: string, text: string): unknown {
  const value = leaf.fromText(text);
  const why = leaf.check(value);
  if (why !== null) throw new CliError(problem(label, why, text));
  return value;
}

/**
 * The router options of the settings, as `ipoRouter` takes them.
 *
 * @example
 * ```ts
 * app.use(settings.mount, ipoRouter(store, routerOptionsOf(settings)));
 * ```
 */
export function routerOptionsOf(settings: RouterSettings): RouterSettings {
  const { openapi, limits, rateLimitHeaders, maxListLimit, gmpPreviewEnds, maxGmpBuckets, maxUrlLength, storeTimeoutMs, keyCacheTtlMs, limiterFailOpen, maxKeysPerAccount } = settings;
  return { openapi, limits, rateLimitHeaders, maxListLimit, gmpPreviewEnds, maxGmpBuckets, maxUrlLength, storeTimeoutMs, keyCacheTtlMs, limiterFailOpen, maxKeysPerAccount };
}

/**
 * The settings as JSON text, in the config file's format (a window that is off is `"off"`),
 * so that `ipokit serve --print-config > ipokit.config.json` writes a file `--config` reads.
 *
 * @example
 * ```ts
 * io.stdout.write(settingsJson(resolveSettings({ env: io.env })));
 * ```
 */
export function settingsJson(settings: ServeSettings): string {
  return `${JSON.stringify(settings, (_key, value: unknown) => (value === Infinity ? 'off' : value), 2)}\n`;
}

/** The flags of the settings, as `util.parseArgs` takes them (shared by `ipokit serve` and `npm start`). */
export const SETTINGS_FLAGS = {
  config: { type: 'string' },
  'print-config': { type: 'boolean' },
  framework: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  mount: { type: 'string' },
  'trust-proxy': { type: 'string' },
  log: { type: 'string' },
  'drain-ms': { type: 'string' },
  openapi: { type: 'boolean' },
  'no-openapi': { type: 'boolean' },
  limit: { type: 'string', multiple: true },
  'rate-limit-headers': { type: 'string' },
  'max-list-limit': { type: 'string', multiple: true },
  'gmp-preview-ends': { type: 'string' },
  'max-gmp-buckets': { type: 'string' },
  'max-url-length': { type: 'string' },
  'store-timeout-ms': { type: 'string' },
  'key-cache-ttl-ms': { type: 'string' },
  'limiter-fail-open': { type: 'boolean' },
  'no-limiter-fail-open': { type: 'boolean' },
  'max-keys-per-account': { type: 'string' },
  'headers-timeout-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'keep-alive-timeout-ms': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  webhooks: { type: 'boolean' },
  'no-webhooks': { type: 'boolean' },
  'allow-insecure-webhooks': { type: 'boolean' },
  'webhook-concurrency': { type: 'string' },
  'webhook-allow-network': { type: 'string', multiple: true },
  'ingest-token-file': { type: 'string' },
  'ingest-max-bytes': { type: 'string' },
  sources: { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
} as const;

/**
 * The settings flags `util.parseArgs` read (with {@link SETTINGS_FLAGS}) as {@link FlagValue}s.
 * `--limit PLAN.WINDOW=N|off` and `--max-list-limit PLAN=N` may be repeated;
 * `--openapi` with `--no-openapi` is a usage error.
 *
 * @example
 * ```ts
 * const { values } = parseArgs({ args: ['--limit', 'free.perMinute=10'], options: SETTINGS_FLAGS });
 * settingsFlags(values); // [{ path: 'limits.free.perMinute', label: '--limit free.perMinute', text: '10' }]
 * ```
 */
export function settingsFlags(values: Readonly<Record<string, string | boolean | Array<string | boolean> | undefined>>): FlagValue[] {
  const flags: FlagValue[] = [];
  for (const leaf of LEAVES) {
    if (leaf.flag === undefined || leaf.path.startsWith('limits.') || leaf.path.startsWith('maxListLimit.')) continue;
    const name = leaf.flag.slice(2);
    const value = values[name];
    if (Array.isArray(value)) {
      const texts = strings(value);
      if (texts.length > 0) flags.push({ path: leaf.path, label: leaf.flag, text: texts.join(',') });
      continue;
    }
    if (typeof value === 'string') flags.push({ path: leaf.path, label: leaf.flag, text: value });
    if (typeof value === 'boolean' || values[`no-${name}`] !== undefined) {
      if (value !== undefined && values[`no-${name}`] !== undefined) throw new CliError(`${leaf.flag} and --no-${name} contradict each other: give one`);
      flags.push({ path: leaf.path, label: value === undefined ? `--no-${name}` : leaf.flag, text: value === undefined ? 'false' : 'true' });
    }
  }
  for (const text of strings(values.limit)) {
    const m = /^(free|paid|pro|keyless)\.(perMinute|perHour|perDay|gmpPerMinute|gmpPerDay)=(.*)$/.exec(text);
    if (m === null || (m[1] === 'keyless' && m[2]!.startsWith('gmp'))) {
      throw new CliError(
        `--limit must be PLAN.WINDOW=N or PLAN.WINDOW=off (free, paid or pro .perMinute, .perHour, .perDay, .gmpPerMinute or .gmpPerDay; keyless .perMinute, .perHour or .perDay), got ${shown(text)}`,
      );
    }
    flags.push({ path: `limits.${m[1]}.${m[2]}`, label: `--limit ${m[1]}.${m[2]}`, text: m[3]! });
  }
  for (const text of strings(values['max-list-limit'])) {
    const m = /^(free|paid|pro)=(.*)$/.exec(text);
    if (m === null) throw new CliError(`--max-list-limit must be PLAN=N (free, paid or pro), got ${shown(text)}`);
    flags.push({ path: `maxListLimit.${m[1]}`, label: `--max-list-limit ${m[1]}`, text: m[2]! });
  }
  return flags;
}

function strings(value: string | boolean | Array<string | boolean> | undefined): string[] {
  if (value === undefined || typeof value === 'boolean') return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}

/**
 * The settings in force: `flags`, else the environment (`PORT`, `HOST`, `IPOKIT_*`), else
 * the config file (`--config FILE`, else `IPOKIT_CONFIG`), else the defaults. A value the
 * rules refuse is a usage error (`CliError`); a config file with problems throws a
 * {@link ConfigFileError} listing them (see {@link reportConfigProblems}).
 *
 * @example
 * ```ts
 * const settings = await loadSettings(values.config, settingsFlags(values), io);
 * ```
 */
export async function loadSettings(config: string | undefined, flags: readonly FlagValue[], io: CliIo): Promise<ServeSettings> {
  if (config === '') throw new CliError('--config must not be empty');
  const name = config ?? (io.env.IPOKIT_CONFIG || undefined);
  const file = name === undefined ? undefined : await readConfigFile(name, io.cwd);
  return resolveSettings({ flags, env: io.env, ...(file === undefined ? {} : { file }) });
}

/**
 * The key cap the server applies (`maxKeysPerAccount`), resolved as `ipokit serve` resolves
 * it: `--max-keys-per-account`, else IPOKIT_MAX_KEYS_PER_ACCOUNT, else the config file
 * (`--config FILE`, else IPOKIT_CONFIG), else the default 100. The commands that make keys
 * and change plans (`keys create`, `keys rotate`, `accounts update`) apply it as the server's
 * account router does. Only this setting is read from the flag and the environment (a
 * problem in another IPOKIT_* variable is the server's); a named file is checked whole.
 *
 * @example
 * ```ts
 * const cap = await loadKeyCap(values.config, values['max-keys-per-account'], io); // 100
 * await createApiKey(store, { accountId, label }, { maxKeysPerAccount: cap });
 * ```
 */
export async function loadKeyCap(config: string | undefined, flag: string | undefined, io: CliIo): Promise<number> {
  const leaf = LEAF.get('maxKeysPerAccount')!;
  if (config === '') throw new CliError('--config must not be empty');
  const name = config ?? (io.env.IPOKIT_CONFIG || undefined);
  const fromFile = name === undefined ? undefined : fileValues(await readConfigFile(name, io.cwd)).get(leaf.path);
  const text = io.env[leaf.env!];
  const value = flag !== undefined ? read(leaf, leaf.flag!, flag) : text !== undefined && text !== '' ? read(leaf, leaf.env!, text) : fromFile;
  return typeof value === 'number' ? value : resolveOptions().maxKeysPerAccount;
}

/**
 * The networks webhooks may be created for (`webhookAllowedNetworks`), resolved as `ipokit
 * serve` resolves them: `--webhook-allow-network` (repeatable), else
 * IPOKIT_WEBHOOK_ALLOW_NETWORKS (comma-separated), else the config file (`--config FILE`, else
 * IPOKIT_CONFIG), else none. `ipokit webhooks create` applies them as the server's account
 * router does.
 *
 * @example
 * ```ts
 * const allowed = await loadAllowedNetworks(values.config, values['webhook-allow-network'], io); // []
 * await createWebhook(store, input, { webhookAllowedNetworks: allowed });
 * ```
 */
export async function loadAllowedNetworks(config: string | undefined, flags: readonly string[] | undefined, io: CliIo): Promise<string[]> {
  const leaf = LEAF.get('webhookAllowedNetworks')!;
  if (config === '') throw new CliError('--config must not be empty');
  const name = config ?? (io.env.IPOKIT_CONFIG || undefined);
  const fromFile = name === undefined ? undefined : fileValues(await readConfigFile(name, io.cwd)).get(leaf.path);
  const text = io.env[leaf.env!];
  const value = flags !== undefined && flags.length > 0 ? read(leaf, leaf.flag!, flags.join(',')) : text !== undefined && text !== '' ? read(leaf, leaf.env!, text) : fromFile;
  return Array.isArray(value) ? (value as string[]) : [];
}

/**
 * Reports a config file with problems, each on its own line, and resolves to 2; any other
 * error is thrown again, for the caller to report.
 *
 * @example
 * ```ts
 * try { settings = await loadSettings(...); } catch (err) { return reportConfigProblems(err, 'ipokit worker: config file', 'nothing was started', io); }
 * // ipokit worker: config file bad.json has 2 problems; nothing was started:
 * //   port: must be a whole number from 0 to 65535, got -1
 * //   ...
 * ```
 */
export function reportConfigProblems(err: unknown, who: string, outcome: string, io: CliIo): number {
  if (!(err instanceof ConfigFileError)) throw err;
  io.stderr.write(`${who} ${err.file} has ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}; ${outcome}:\n`);
  for (const line of err.problems) io.stderr.write(`  ${line.replace(/\r?\n/g, ' ')}\n`);
  return 2;
}
