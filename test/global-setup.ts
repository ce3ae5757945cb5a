/**
 * Vitest's globalSetup (vitest.config.ts): runs once in vitest's own process before any test
 * file, for `npm test` and `npm run test:all` alike.
 *
 * - Finds the servers the tests use, so that a developer needs no environment variables:
 *   Redis at REDIS_URL when set, else 127.0.0.1:6379 when it answers PING with PONG;
 *   PostgreSQL at DATABASE_URL when set, else postgres://postgres@127.0.0.1:5432/test when
 *   it answers `select 1`, else the tests run on PGlite in-process. What it found goes to the
 *   test workers (and the processes they start) as REDIS_URL and DATABASE_URL: vitest gives
 *   each worker the environment of this process. One line per server says what the run uses
 *   and, when there is none, which tests skip.
 * - In CI (`.ci/run` sets IPOKIT_TEST_HOLD_PORT=1), holds 127.0.0.1:3000, the port `npm start`
 *   and `ipokit serve` take by default, while the tests run (when it is free): a test that
 *   binds a fixed port fails there every time, instead of failing only when `npm start`
 *   happens to be running. A developer's own run holds nothing, so `npm start` beside
 *   `npm test` keeps its port.
 */
import net from 'node:net';
import pg from 'pg';

/** The port `npm start` and `ipokit serve` listen on by default. */
export const DEFAULT_PORT = 3000;

/** Masks a password in a URL for printing: `redis://user:pass@host` -> `redis://user:***@host`. */
function masked(url: string): string {
  return url.replace(/^([^:/?]+:\/\/[^:/@?]*):[^@]*@/, '$1:***@');
}

/**
 * True when 127.0.0.1:`port` answers PING with PONG within `timeoutMs` (a server wanting a
 * password answers -NOAUTH: not usable).
 *
 * @example
 * ```ts
 * if (await answersPing(6379)) process.env.REDIS_URL = 'redis://127.0.0.1:6379';
 * ```
 */
export function answersPing(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/**
 * True when `url` is a PostgreSQL server that answers `select 1` within `timeoutMs`.
 *
 * @example
 * ```ts
 * await answersSelect('postgres://postgres@127.0.0.1:5432/test'); // false: nothing there
 * ```
 */
export async function answersSelect(url: string, timeoutMs = 2000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ one: number }>('select 1 as one');
    return rows[0]?.one === 1;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The local servers probed when the variables are unset. */
export const LOCAL_REDIS = 'redis://127.0.0.1:6379';
export const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Sets REDIS_URL and DATABASE_URL in `env` to the servers found, and returns one line per
 * server saying what the tests use.
 *
 * @example
 * ```ts
 * for (const line of await findServers(process.env)) console.log(line);
 * // redis: found a server at redis://127.0.0.1:6379 (REDIS_URL unset); the Redis tests use it
 * ```
 */
export async function findServers(env: NodeJS.ProcessEnv, probe = { redis: () => answersPing(6379), postgres: () => answersSelect(LOCAL_POSTGRES) }): Promise<string[]> {
  const lines: string[] = [];
  if (env.REDIS_URL) lines.push(`redis: the Redis tests use REDIS_URL (${masked(env.REDIS_URL)})`);
  else if (await probe.redis()) {
    env.REDIS_URL = LOCAL_REDIS;
    lines.push(`redis: the Redis tests use the server found at ${LOCAL_REDIS} (REDIS_URL unset)`);
  } else {
    delete env.REDIS_URL;
    lines.push('redis: no server at REDIS_URL or 127.0.0.1:6379; the Redis tests skip (packages/limiter-redis, the README\'s Redis block)');
  }
  if (env.DATABASE_URL) lines.push(`postgres: the PostgreSQL tests use DATABASE_URL (${masked(env.DATABASE_URL)})`);
  else if (await probe.postgres()) {
    env.DATABASE_URL = LOCAL_POSTGRES;
    lines.push(`postgres: the PostgreSQL tests use the server found at ${LOCAL_POSTGRES} (DATABASE_URL unset)`);
  } else {
    delete env.DATABASE_URL;
    lines.push(
      `postgres: no server at DATABASE_URL or ${LOCAL_POSTGRES}; the PostgreSQL tests run on PGlite, and those that need a server skip (several processes or sessions on one database, LISTEN, a real outage)`,
    );
  }
  return lines;
}

/** Listens on 127.0.0.1:`port` and drops every connection; null when something else holds it already. */
async function hold(port: number): Promise<net.Server | null> {
  const server = net.createServer((socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const SETUP_DONE = Symbol.for('ipokit.test.globalSetup');

/**
 * Vitest's globalSetup hook; the function it returns is the teardown.
 *
 * @example
 * ```ts
 * // vitest.config.ts
 * export default defineConfig({ test: { globalSetup: ['test/global-setup.ts'] } });
 * ```
 */
export default async function setup(): Promise<() => Promise<void>> {
  // Each project of vitest.config.ts runs its globalSetup; once is enough for the servers and the lines.
  const state = globalThis as { [SETUP_DONE]?: boolean };
  if (state[SETUP_DONE]) return async () => undefined;
  state[SETUP_DONE] = true;
  for (const line of await findServers(process.env)) console.log(line);
  const held = process.env.IPOKIT_TEST_HOLD_PORT === '1' ? await hold(DEFAULT_PORT) : null;
  return async () => {
    if (held !== null) await new Promise((resolve) => held.close(resolve));
  };
}
