/**
 * Helpers of this package's tests (not published): the Redis at REDIS_URL, a random key
 * prefix per test, and the removal of every key under it. Other test files use the same
 * server at the same time, so nothing here ever flushes a database.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * The Redis the tests use, or undefined: then they skip. test/global-setup.ts sets REDIS_URL
 * before any test file runs: REDIS_URL as given, else redis://127.0.0.1:6379 when a server
 * there answers PING, else unset (and it prints one line saying that the Redis tests skip).
 */
export const REDIS_URL = process.env.REDIS_URL || undefined;

/**
 * A prefix no other test uses (no glob characters, so SCAN MATCH takes it as it is).
 *
 * @example
 * ```ts
 * redisLimiter({ client, prefix: randomPrefix('io') }); // ipokit-test:io:3f9a0c1d2e4b:
 * ```
 */
export function randomPrefix(label = 't'): string {
  return `ipokit-test:${label}:${randomBytes(6).toString('hex')}:`;
}

/**
 * Every key under `prefix`.
 *
 * @example
 * ```ts
 * await keysUnder(admin, prefix); // ['ipokit-test:io:3f9a0c1d2e4b:acct:{a1}']
 * ```
 */
export async function keysUnder(admin: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/**
 * Removes every key under `prefix`.
 *
 * @example
 * ```ts
 * afterEach(() => deleteKeysUnder(admin, prefix));
 * ```
 */
export async function deleteKeysUnder(admin: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(admin, prefix);
  for (let i = 0; i < keys.length; i += 500) await admin.unlink(...keys.slice(i, i + 500));
}

/**
 * `redis-server` on PATH or in /usr/bin, or null.
 *
 * @example
 * ```ts
 * describe.skipIf(redisServerPath() === null)('with a throwaway server', () => {});
 * ```
 */
export function redisServerPath(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
  if (found !== '') return found;
  return existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : null;
}

/**
 * A port nothing listens on now.
 *
 * @example
 * ```ts
 * const server = await throwawayRedis(await freePort());
 * ```
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A throwaway redis-server (no persistence, its own temp directory) on 127.0.0.1:`port`,
 * as a child of this process, that a test may stop and start again on the same port:
 * never the machine's own.
 *
 * @example
 * ```ts
 * let server = await throwawayRedis(port);
 * await server.stop();
 * server = await throwawayRedis(port); // empty again
 * ```
 */
export async function throwawayRedis(port: number, extra: string[] = []): Promise<{ stop(): Promise<void> }> {
  const bin = redisServerPath();
  if (bin === null) throw new Error('redis-server not found');
  const dir = mkdtempSync(join(tmpdir(), 'ipokit-redis-'));
  const child: ChildProcess = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], {
    stdio: 'ignore',
  });
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const deadline = performance.now() + 10_000;
  for (;;) {
    if (await answersPing(port)) break;
    if (performance.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
