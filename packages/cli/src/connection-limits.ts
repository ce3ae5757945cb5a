/**
 * How long a connection may take and how many may be open at once: the limits of
 * `ipokit serve`, of the demo, and of any `node:http` server given to
 * {@link applyConnectionLimits}. Without them a client that opens connections and sends
 * nothing holds a file descriptor each until the process runs out of them, and then every
 * new request fails.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';

/** The connection limits of a server. 0 turns a timeout off. */
export interface ConnectionLimits {
  /** Time from the start of a request (or from connecting) until its headers are all in: a 408 and the connection closed after. Default 10,000. */
  headersTimeoutMs: number;
  /** The same for the whole request, body included; at least `headersTimeoutMs`. Default 30,000. */
  requestTimeoutMs: number;
  /** How long a keep-alive connection waits for its next request (Node adds a second); at most `idleTimeoutMs`. Default 5,000. */
  keepAliveTimeoutMs: number;
  /** A connection with no bytes in either direction for this long is closed, whatever it is doing. Default 30,000. */
  idleTimeoutMs: number;
  /** Connections past this many are closed as soon as they are accepted. Default 1,000, or fewer when the open-files limit is low. */
  maxConnections: number;
}

/** The defaults, before {@link resolveConnectionLimits} fits `maxConnections` to the open-files limit. */
export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  maxConnections: 1000,
});

/** Open files kept for everything but the connections: the database pool, the dataset file, stdio, Node's own. */
export const RESERVED_FILES = 64;

/** Node's timers hold at most 2^31 - 1 ms; a longer socket timeout silently becomes 1 ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** An upper bound that keeps a typo (an extra zero or three) from meaning "unlimited". */
export const MAX_CONNECTIONS = 1_000_000;

const TIMEOUTS = ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'idleTimeoutMs'] as const;

/** Options of {@link resolveConnectionLimits}. */
export interface ResolveOptions {
  /** The soft open-files limit; null when there is none or it is unknown. Default {@link openFilesLimit}(). */
  openFiles?: number | null;
  /** How messages name a limit (the CLI: its flags). Default the property's name. */
  nameOf?: (key: keyof ConnectionLimits) => string;
}

/**
 * The limits with the defaults filled in, checked. A default headers (keep-alive) timeout
 * is lowered to a shorter request (idle) timeout that is given, as Node does; a value that
 * is given and contradicts another is refused. Throws a `RangeError` naming the limit.
 *
 * @example
 * ```ts
 * resolveConnectionLimits({ requestTimeoutMs: 4000 }, { openFiles: 1024 });
 * // { headersTimeoutMs: 4000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 5000, idleTimeoutMs: 30000, maxConnections: 960 }
 * ```
 */
export function resolveConnectionLimits(given: Partial<ConnectionLimits> = {}, options: ResolveOptions = {}): ConnectionLimits {
  const nameOf = options.nameOf ?? ((key) => key);
  for (const key of TIMEOUTS) {
    const value = given[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIMEOUT_MS)) {
      throw new RangeError(`${nameOf(key)} must be a whole number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, got ${value}`);
    }
  }
  if (given.maxConnections !== undefined && !(Number.isSafeInteger(given.maxConnections) && given.maxConnections >= 1 && given.maxConnections <= MAX_CONNECTIONS)) {
    throw new RangeError(`${nameOf('maxConnections')} must be a whole number from 1 to ${MAX_CONNECTIONS}, got ${given.maxConnections}`);
  }
  const d = DEFAULT_CONNECTION_LIMITS;
  const requestTimeoutMs = given.requestTimeoutMs ?? d.requestTimeoutMs;
  const idleTimeoutMs = given.idleTimeoutMs ?? d.idleTimeoutMs;
  const defaultMax = () => {
    const openFiles = options.openFiles === undefined ? openFilesLimit() : options.openFiles;
    return openFiles === null ? d.maxConnections : Math.max(1, Math.min(d.maxConnections, openFiles - RESERVED_FILES));
  };
  const limits: ConnectionLimits = {
    headersTimeoutMs: given.headersTimeoutMs ?? shorter(d.headersTimeoutMs, requestTimeoutMs),
    requestTimeoutMs,
    keepAliveTimeoutMs: given.keepAliveTimeoutMs ?? shorter(d.keepAliveTimeoutMs, idleTimeoutMs),
    idleTimeoutMs,
    maxConnections: given.maxConnections ?? defaultMax(),
  };
  const exceeds = (a: keyof ConnectionLimits, b: keyof ConnectionLimits) =>
    `${nameOf(a)} (${limits[a]}) must not exceed ${nameOf(b)} (${limits[b]}${given[b] === undefined ? ', the default' : ''})`;
  if (limits.headersTimeoutMs > 0 && limits.requestTimeoutMs > 0 && limits.headersTimeoutMs > limits.requestTimeoutMs) {
    // Node's own rule: http.createServer throws on it, and a property set later would be silently meaningless.
    throw new RangeError(`${exceeds('headersTimeoutMs', 'requestTimeoutMs')}: the headers are part of the request; 0 turns either off`);
  }
  // Not Node's rule: while a keep-alive connection waits, Node swaps the idle timeout for the
  // keep-alive one (plus a second). Ours, so that the idle timeout means what it says.
  if (limits.keepAliveTimeoutMs > 0 && limits.idleTimeoutMs > 0 && limits.keepAliveTimeoutMs > limits.idleTimeoutMs) {
    throw new RangeError(
      `${exceeds('keepAliveTimeoutMs', 'idleTimeoutMs')}: a connection waiting for its next request is idle too; 0 turns either off`,
    );
  }
  return limits;
}

/**
 * Applies the limits (the defaults for those not given) to a server and returns what it
 * applied. Call it before `server.listen()`: Node starts checking the headers and request
 * timeouts when the server starts listening, here every second (or every timeout, when
 * shorter) instead of Node's 30 s. Throws a `RangeError` for limits that contradict each
 * other, leaving the server as it was.
 *
 * @example
 * ```ts
 * const server = createServer(handler);
 * applyConnectionLimits(server, { maxConnections: 500 });
 * server.listen(3000);
 * ```
 */
export function applyConnectionLimits(server: Server, limits: Partial<ConnectionLimits> = {}): ConnectionLimits {
  const applied = resolveConnectionLimits(limits);
  server.headersTimeout = applied.headersTimeoutMs;
  server.requestTimeout = applied.requestTimeoutMs;
  server.keepAliveTimeout = applied.keepAliveTimeoutMs;
  // Unlike the headers timeout, this also covers a keep-alive connection between requests
  // (with the keep-alive timeout off) and a client that stops reading a response.
  server.setTimeout(applied.idleTimeoutMs);
  server.maxConnections = applied.maxConnections;
  // A createServer option that Node reads again on 'listening'; the type only has the option.
  Object.assign(server, { connectionsCheckingInterval: checkingIntervalMs(applied) });
  return applied;
}

/**
 * The soft limit on open files of this process, from `/proc/self/limits` (Linux); null
 * when it is unlimited or the file cannot be read (another system).
 *
 * @example
 * ```ts
 * openFilesLimit(); // 1024 under `ulimit -n 1024`
 * ```
 */
export function openFilesLimit(file = '/proc/self/limits'): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const soft = /^Max open files +(\d+) /m.exec(text)?.[1];
  return soft === undefined ? null : Number(soft);
}

/**
 * A warning when `maxConnections` would leave fewer than {@link RESERVED_FILES} open files
 * for the rest of the process; null when it fits (or the limit is unknown).
 *
 * @example
 * ```ts
 * openFilesWarning(5000, 1024); // 'at most 5000 connections, but the open-files limit is 1024 ...'
 * ```
 */
export function openFilesWarning(maxConnections: number, openFiles: number | null): string | null {
  if (openFiles === null || maxConnections <= openFiles - RESERVED_FILES) return null;
  return (
    `at most ${maxConnections} connections, but the open-files limit is ${openFiles} and ${RESERVED_FILES} are kept for the database and the process: ` +
    `past ${Math.max(0, openFiles - RESERVED_FILES)} connections new ones may fail (EMFILE); raise the limit (ulimit -n) or lower the connections`
  );
}

/** Node's check runs every 30 s by default: a 10 s headers timeout would act after up to 40 s. */
function checkingIntervalMs(limits: ConnectionLimits): number {
  const timeouts = [limits.headersTimeoutMs, limits.requestTimeoutMs].filter((t) => t > 0);
  // The floor keeps a tiny timeout from turning the check into a busy loop.
  return Math.max(50, Math.min(1000, ...timeouts));
}

/** The default, or the other limit when that one is on and shorter. */
function shorter(fallback: number, other: number): number {
  return other > 0 ? Math.min(fallback, other) : fallback;
}
