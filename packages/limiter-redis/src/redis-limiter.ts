/**
 * The exact sliding-window rate limiter on Redis: every window a request draws on is a
 * Redis list of hit times, and one Lua script decides and charges a whole request
 * atomically (see script.ts), so that every app process sharing the server admits exactly
 * as the core's `slidingWindowHit` would.
 */
import { IpokitError } from '@ipokit/core';
import type { RateLimitOutcome, RateLimitWindow, RateLimitWindowState, RateLimiter, StoreCallOptions } from '@ipokit/core';
import { scriptRunner, type IoredisClient, type NodeRedisClient } from './clients.js';

/** Options of {@link redisLimiter}. */
export interface RedisLimiterOptions {
  /**
   * An ioredis client (`new Redis(url)` or `new Cluster(nodes)`) or a connected node-redis
   * client (`await createClient({ url }).connect()`). Never closed by the limiter.
   */
  client: IoredisClient | NodeRedisClient;
  /**
   * Put before every key the limiter writes; default `'ipokit:rl:'`. It must not hold `{`
   * or `}`: the keys carry their own cluster hash tags.
   */
  prefix?: string;
}

/** A {@link RateLimiter} on Redis, with a `close()` that frees only what the limiter holds. */
export interface RedisLimiter extends RateLimiter {
  /** Refuses later calls (`ERR:UNAVAILABLE`); leaves the client, and what it stored, alone. */
  close(): Promise<void>;
}

/** Default key prefix. */
const DEFAULT_PREFIX = 'ipokit:rl:';

/** Where the script's `lateAfter` is in its ARGV (0-based here, ARGV[5] in Lua). */
const LATE_AFTER = 4;

/**
 * How long the server clock's offset estimates are kept (two periods): long enough to
 * cover every node of a cluster, short enough to follow a server clock that was stepped.
 */
const CLOCK_PERIOD_MS = 5_000;

/**
 * The exact sliding-window rate limiter on Redis, for `ipoRouter(store, { limiter })`:
 * every process that shares the Redis server shares the windows, and admits exactly as
 * `slidingWindowHit` of `@ipokit/core` decides. One Lua script per request (EVALSHA).
 *
 * Calls the core makes with a deadline never record a hit once it has passed: the
 * script compares the server's clock with the deadline, so a call that waited in the
 * client's offline queue while Redis was away does nothing when it finally runs.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { redisLimiter } from '@ipokit/limiter-redis';
 *
 * const limiter = redisLimiter({ client: new Redis('redis://127.0.0.1:6379') });
 * const outcome = await limiter.hitRateLimit({ now: Date.now(), windowMs: 60_000, windows: [{ key: 'acct:a1', quota: 6 }] });
 * outcome.admitted; // true
 * ```
 */
export function redisLimiter(options: RedisLimiterOptions): RedisLimiter {
  if (typeof options !== 'object' || options === null) {
    throw new IpokitError('ERR:BADPARAM', 'redisLimiter takes an options object: redisLimiter({ client }).', { parameter: 'client' });
  }
  const run = scriptRunner(options.client);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new IpokitError('ERR:BADPARAM', 'redisLimiter option prefix must be a string without { or }.', { parameter: 'prefix' });
  }
  const clock = new ServerClock();
  let closed = false;
  let probing: Promise<number> | null = null;

  const call = async (keys: string[], args: string[]): Promise<unknown> => {
    if (closed) throw new IpokitError('ERR:UNAVAILABLE', 'The Redis limiter is closed.');
    try {
      return await run(keys, args);
    } catch (err) {
      throw new IpokitError('ERR:UNAVAILABLE', 'The Redis rate limiter failed.', { cause: err });
    }
  };

  /** The server clock's offset, asking the server once when nothing has told it yet. */
  const serverOffset = async (): Promise<number> => {
    const known = clock.offset();
    if (known !== null) return known;
    probing ??= call([], ['time']).then(
      (reply) => {
        probing = null;
        clock.observe(serverMs(reply, 0), performance.now());
        return clock.offset() as number;
      },
      (err: unknown) => {
        probing = null;
        throw err;
      },
    );
    return probing;
  };

  return {
    async hitRateLimit({ now, windowMs, windows }, within?: StoreCallOptions): Promise<RateLimitOutcome> {
      if (windows.length === 0) return { admitted: true, windows: [] };
      const { keys, args } = request(prefix, 'hit', now, windowMs, windows);
      const hit = async (lateAfter: string): Promise<RateLimitOutcome> => {
        args[LATE_AFTER] = lateAfter;
        const reply = await call(keys, args);
        clock.observe(serverMs(reply, 1), performance.now());
        if (firstOf(reply) === 'late') {
          throw new IpokitError('ERR:UNAVAILABLE', 'The rate-limit call reached Redis after its deadline: it recorded nothing.');
        }
        return outcome(reply, windows.length);
      };
      if (within === undefined) return hit('');
      const { deadline } = within;
      return beforeDeadline(deadline, async () => {
        const offset = await serverOffset();
        if (performance.now() >= deadline) throw notStarted();
        // The deadline on the server's clock, never later than the true one (see ServerClock).
        return hit(String(deadline + offset));
      });
    },

    async peekRateLimit({ now, windowMs, windows }): Promise<RateLimitWindowState[]> {
      if (windows.length === 0) return [];
      const { keys, args } = request(prefix, 'peek', now, windowMs, windows);
      return outcome(await call(keys, args), windows.length).windows;
    },

    async close() {
      closed = true;
    },
  };
}

/**
 * A lower bound of (the Redis server's clock - `performance.now()`), in ms, from the
 * server times that replies carry. A reply read the server's clock at some instant before
 * it was received, so `serverMs - receivedAt` can only be below the true offset; the
 * deadline handed to the script, `deadline + offset`, therefore passes on the server no
 * later than the real one passes here. Exact up to how late the reply was noticed (the
 * network's return leg and this event loop), and that error only ever refuses a call that
 * ran within that many ms of its deadline: it never records a late hit. Using
 * `performance.now()` rather than `Date.now()` keeps a step of this host's wall clock out
 * of it; the smallest sample of the last one or two periods covers several servers (a
 * cluster's nodes) and follows a server clock that was stepped (NTP) within 10 s.
 */
class ServerClock {
  private current = Infinity;
  private previous = Infinity;
  private since = -Infinity;

  observe(serverMs: number, receivedAt: number): void {
    if (receivedAt - this.since >= CLOCK_PERIOD_MS) {
      this.previous = receivedAt - this.since >= 2 * CLOCK_PERIOD_MS ? Infinity : this.current;
      this.current = Infinity;
      this.since = receivedAt;
    }
    this.current = Math.min(this.current, serverMs - receivedAt);
  }

  offset(): number | null {
    const o = Math.min(this.current, this.previous);
    return o === Infinity ? null : o;
  }
}

/**
 * Runs `work` unless the deadline has passed, and rejects at the deadline if it is still
 * running: the core has answered 503 by then, and a client that queues commands while
 * disconnected would keep the promise (and its request) waiting for long.
 */
function beforeDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  const left = deadline - performance.now();
  if (left <= 0) return Promise.reject(notStarted());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new IpokitError('ERR:UNAVAILABLE', 'Redis did not answer the rate-limit call before its deadline.'));
    }, left);
    timer.unref?.();
    work().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function notStarted(): IpokitError {
  return new IpokitError('ERR:UNAVAILABLE', 'The rate-limit call was not started: its deadline had passed.');
}

/**
 * The script's KEYS and ARGV for one request: each distinct window key once (a key named
 * twice is charged once), then per window its key's index and its quota. A quota that is
 * not a whole number admits as its ceiling does (counts are whole), and reports its
 * blocking hit as the ceiling would.
 */
function request(prefix: string, mode: 'hit' | 'peek', now: number, windowMs: number, windows: readonly RateLimitWindow[]): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const index = new Map<string, number>();
  const args = [mode, String(now), String(windowMs), String(expiryMs(windowMs)), ''];
  for (const { key, quota } of windows) {
    let i = index.get(key);
    if (i === undefined) {
      i = keys.push(windowKey(prefix, key));
      index.set(key, i);
    }
    args.push(String(i), String(Math.ceil(quota)));
  }
  return { keys, args };
}

/**
 * How long a window's list lives after its latest charge. A hit charged at `now` counts for
 * a later request at `now'` while `now' - now < windowMs`; every app host's clock being
 * within `s` of the others, that is at most `windowMs + s` of real time after the charge,
 * whatever host asks. Twice the window covers any skew up to a whole window (hosts kept
 * by NTP are milliseconds apart), and the script only ever lengthens a key's expiry, so a
 * process using a longer window keeps its hits. Memory held by idle windows is bounded by
 * the windows charged in the last two window lengths.
 */
function expiryMs(windowMs: number): number {
  return Math.max(1, Math.ceil(2 * windowMs));
}

/**
 * The Redis key of a window: `<prefix><kind>:{<owner>}` for `acct:<id>`, `gmp:<id>` and
 * `addr:<address>`. The braces make the owner the cluster hash tag, so that the windows of
 * one request (`acct:<id>` and `gmp:<id>` of one account) are in one slot. Distinct window
 * keys give distinct Redis keys (the kind holds no `:`).
 */
function windowKey(prefix: string, key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? prefix + key : `${prefix}${key.slice(0, colon)}:{${key.slice(colon + 1)}}`;
}

function outcome(reply: unknown, n: number): RateLimitOutcome {
  if (!Array.isArray(reply) || reply[0] !== 'ok' || reply.length !== 4 + 3 * n) throw badReply(reply);
  const windows: RateLimitWindowState[] = [];
  for (let i = 4; i < reply.length; i += 3) {
    windows.push({ count: Number(reply[i]), oldest: time(reply[i + 1]), blocking: time(reply[i + 2]) });
  }
  return { admitted: Number(reply[3]) === 1, windows };
}

/** A hit time as the app wrote it (a string), or null for the script's false (nil). */
function time(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw badReply(value);
  return Number(value);
}

/** The server's TIME (seconds, microseconds) found at `at` in a reply, in ms. */
function serverMs(reply: unknown, at: number): number {
  const [seconds, micros] = Array.isArray(reply) ? [reply[at], reply[at + 1]] : [];
  if (typeof seconds !== 'string' || typeof micros !== 'string' || !/^\d+$/.test(seconds) || !/^\d+$/.test(micros)) throw badReply(reply);
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

function firstOf(reply: unknown): unknown {
  return Array.isArray(reply) ? reply[0] : undefined;
}

function badReply(reply: unknown): IpokitError {
  return new IpokitError('ERR:UNAVAILABLE', `Unexpected reply from the Redis rate-limit script: ${JSON.stringify(reply)?.slice(0, 200)}`);
}
