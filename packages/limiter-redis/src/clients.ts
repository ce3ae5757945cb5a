/**
 * The two client libraries the limiter takes, told apart by the shape of their script
 * commands, behind one small `run(keys, args)`. Not exported from the package, except the
 * two client types.
 */
import { IpokitError } from '@ipokit/core';
import { LIMITER_SCRIPT, LIMITER_SCRIPT_SHA } from './script.js';

/**
 * What the limiter uses of an ioredis client: `new Redis(...)` or `new Cluster(...)`
 * (ioredis 5 and later), whose script commands take the key count and then keys and
 * arguments as positional strings.
 */
export interface IoredisClient {
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/**
 * What the limiter uses of a node-redis client: `createClient(...)` (redis 4 and later),
 * connected, whose script commands take `{ keys, arguments }`.
 */
export interface NodeRedisClient {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Runs the limiter's script: EVALSHA, then EVAL (which also caches it) when the server does not know it yet. */
export type ScriptRunner = (keys: string[], args: string[]) => Promise<unknown>;

/**
 * The runner for a client, or an `ERR:BADPARAM` naming `client` when it is neither kind.
 * node-redis is asked first: it names the command `evalSha` (and `EVALSHA`), ioredis
 * `evalsha`.
 *
 * @example
 * ```ts
 * const run = scriptRunner(new Redis());
 * await run([], ['time']); // ['1795176000', '123456']: the server's TIME
 * ```
 */
export function scriptRunner(client: unknown): ScriptRunner {
  const c = client as Partial<Record<'evalSha' | 'evalsha' | 'eval', unknown>> | null | undefined;
  if (typeof c === 'object' && c !== null && typeof c.eval === 'function') {
    if (typeof c.evalSha === 'function') {
      const nodeRedis = client as NodeRedisClient;
      return withFallback(
        (keys, args) => nodeRedis.evalSha(LIMITER_SCRIPT_SHA, { keys, arguments: args }),
        (keys, args) => nodeRedis.eval(LIMITER_SCRIPT, { keys, arguments: args }),
      );
    }
    if (typeof c.evalsha === 'function') {
      const ioredis = client as IoredisClient;
      return withFallback(
        (keys, args) => ioredis.evalsha(LIMITER_SCRIPT_SHA, keys.length, ...keys, ...args),
        (keys, args) => ioredis.eval(LIMITER_SCRIPT, keys.length, ...keys, ...args),
      );
    }
  }
  throw new IpokitError(
    'ERR:BADPARAM',
    'redisLimiter option client must be an ioredis client (new Redis() or new Cluster(), with evalsha) or a node-redis client (createClient(), with evalSha).',
    { parameter: 'client' },
  );
}

function withFallback(evalsha: ScriptRunner, evalScript: ScriptRunner): ScriptRunner {
  return async (keys, args) => {
    try {
      return await evalsha(keys, args);
    } catch (err) {
      // A server restarted, flushed (SCRIPT FLUSH) or newly added to a cluster has no cached
      // script. Both clients reply NOSCRIPT in the message.
      if (!String((err as Error | undefined)?.message).startsWith('NOSCRIPT')) throw err;
      return evalScript(keys, args);
    }
  };
}
