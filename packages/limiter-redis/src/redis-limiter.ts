/**
 * The exact rate limiter on Redis: every sliding window a request draws on is a Redis list
 * of hit times, every calendar window (an IST day) a counter, the usage of an account's
 * day a hash, and one Lua script decides, charges and counts a whole request atomically
 * (see script.ts), so that every app process sharing the server admits exactly as the
 * core's `rateLimitHit` would.
 */
import { IpokitError, type RateLimiter, type UsageRow } from '@ipokit/core';
import { compareCodePoints, isCalendarDate, type RateLimitOutcome, type RateLimitWindow, type RateLimitWindowState, type StoreCallOptions, type UsageCharge, type UsageRoute, WINDOW_MS } from '@ipokit/core/backend';
import { USAGE_ROUTES } from '@ipokit/core';
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

/** Where the script's `lateAfter` is in its ARGV (0-based here, ARGV[3] in Lua). */
const LATE_AFTER = 2;

/** The length of a day window (an IST calendar day), which gets the short key suffix `:d:<start>`. */
const DAY_MS = 86_400_000;

/**
 * How long an account's usage of one day is kept after its latest request: about 400 days,
 * so that a year of usage (the longest range `getUsage` reads, 366 days) is always there.
 */
const USAGE_TTL_S = 400 * 86_400;

/** Most days one `readUsage` reads: 366 days between `from` and `to`. */
const MAX_USAGE_DAYS = 367;

/** Longest expiry the limiter sets (ms): far beyond any window, far below Redis's limit. */
const MAX_EXPIRY_MS = 1e15;

/** A usage hash field: `<key id>:<route>:a` (admitted) or `:r` (refused); the key id may hold `:`. */
const USAGE_FIELD = new RegExp(`^([\\s\\S]*):(${USAGE_ROUTES.join('|')}):([ar])$`);

/**
 * How long the server clock's offset estimates are kept (two periods): long enough to
 * cover every node of a cluster, short enough to follow a server clock that was stepped.
 */
const CLOCK_PERIOD_MS = 5_000;

/**
 * The exact rate limiter on Redis, for `ipoRouter(store, { limiter })`: every process that
 * shares the Redis server shares the windows (sliding minutes and hours, IST days) and the
 * usage counts, and admits exactly as `rateLimitHit` of `@ipokit/core/backend` decides.
 * One Lua script per request (EVALSHA), which also counts the request's usage.
 *
 * Calls the core makes with a deadline never record a hit (or count usage) once it has
 * passed: the script compares the server's clock with the deadline, so a call that waited
 * in the client's offline queue while Redis was away does nothing when it finally runs.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { redisLimiter } from '@ipokit/limiter-redis';
 *
 * const limiter = redisLimiter({ client: new Redis('redis://127.0.0.1:6379') });
 * const outcome = await limiter.hitRateLimit({ now: Date.now(), windows: [{ key: 'acct:a1', quota: 6, ms: 60_000 }] });
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
    async hitRateLimit({ now, windows, usage }, within?: StoreCallOptions): Promise<RateLimitOutcome> {
      if (windows.length === 0 && usage === undefined) return { admitted: true, windows: [] };
      const { keys, args } = request(prefix, 'hit', now, windows, usage);
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

    async peekRateLimit({ now, windows }): Promise<RateLimitWindowState[]> {
      if (windows.length === 0) return [];
      const { keys, args } = request(prefix, 'peek', now, windows, undefined);
      return outcome(await call(keys, args), windows.length).windows;
    },

    async readUsage({ accountId, from, to, keyId }): Promise<UsageRow[]> {
      const days = daysFrom(from, to);
      if (days.length === 0) return [];
      const reply = await call(
        days.map((day) => usageKey(prefix, accountId, day)),
        ['usage'],
      );
      if (!Array.isArray(reply) || reply.length !== days.length) throw badReply(reply);
      const rows: UsageRow[] = [];
      days.forEach((day, d) => {
        const fields: unknown = reply[d];
        if (!Array.isArray(fields)) throw badReply(reply);
        const byKey = new Map<string, UsageRow>();
        for (let i = 0; i + 1 < fields.length; i += 2) {
          const m = USAGE_FIELD.exec(String(fields[i]));
          if (m === null || (keyId !== undefined && m[1] !== keyId)) continue;
          const [, k, route, side] = m as unknown as [string, string, UsageRoute, 'a' | 'r'];
          const id = `${route}:${k}`;
          let row = byKey.get(id);
          if (row === undefined) byKey.set(id, (row = { day, keyId: k, route, admitted: 0, refused: 0 }));
          row[side === 'a' ? 'admitted' : 'refused'] += Number(fields[i + 1]);
        }
        const ofDay = [...byKey.values()].filter((r) => r.admitted !== 0 || r.refused !== 0);
        ofDay.sort((a, b) => compareCodePoints(a.keyId, b.keyId) || compareCodePoints(a.route, b.route));
        rows.push(...ofDay);
      });
      return rows;
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
 * The script's KEYS and ARGV for one request: each distinct window once (a window named
 * twice is charged once) with its length, start and expiry, the usage hash when counted,
 * then per window its key's index and its quota. A quota that is not a whole number
 * admits as its ceiling does (counts are whole), and reports its blocking hit as the
 * ceiling would.
 */
function request(
  prefix: string,
  mode: 'hit' | 'peek',
  now: number,
  windows: readonly RateLimitWindow[],
  usage: UsageCharge | undefined,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const index = new Map<string, number>();
  const perKey: string[] = [];
  const perWindow: string[] = [];
  for (const w of windows) {
    const key = windowKey(prefix, w);
    let i = index.get(key);
    if (i === undefined) {
      i = keys.push(key);
      index.set(key, i);
      perKey.push(String(w.ms), w.start === undefined ? '' : String(w.start), String(expiryMs(w, now)));
    }
    perWindow.push(String(i), String(Math.ceil(w.quota)));
  }
  const n = keys.length;
  let field = '';
  if (usage !== undefined) {
    keys.push(usageKey(prefix, usage.accountId, usage.day));
    field = `${usage.keyId}:${usage.route}:`;
  }
  return { keys, args: [mode, String(now), '', String(n), field, String(USAGE_TTL_S), ...perKey, ...perWindow] };
}

/**
 * How long a window's key lives after its latest charge (ms).
 *
 * A sliding window: two window lengths. A hit charged at `now` counts for a later request
 * at `now'` while `now' - now < ms`; every app host's clock being within `s` of the
 * others, that is at most `ms + s` of real time after the charge, whatever host asks. Twice
 * the window covers any skew up to a whole window (hosts kept by NTP are milliseconds
 * apart). Memory held by idle windows is bounded by the windows charged in the last two
 * window lengths.
 *
 * A calendar window: what is left of its period at `now`, plus one more period, so that
 * hosts whose clocks lag still find its count until they have left the period too. The
 * script only ever lengthens it.
 */
function expiryMs(w: RateLimitWindow, now: number): number {
  const ms = w.start === undefined ? 2 * w.ms : w.ms + Math.min(w.ms, Math.max(0, w.start + w.ms - now));
  return Math.min(MAX_EXPIRY_MS, Math.max(1, Math.ceil(ms)));
}

/**
 * The Redis key of a window. Its owner part is `<prefix><kind>:{<owner>}` for
 * `acct:<id>`, `gmp:<id>` and `addr:<address>`: the braces make the owner the cluster hash
 * tag, so that the windows of one request (`acct:<id>` and `gmp:<id>` of one account, and
 * its usage) are in one slot. Then the length and period: nothing for a sliding minute (the
 * key of the limiter's earlier versions, which only had those), `:<ms>` for another sliding
 * length (`:3600000`, the hour), `:d:<start>` for a day window, `:<ms>:<start>` for a
 * calendar window of another length.
 *
 * Distinct windows give distinct Redis keys: the kind holds no `:`; the suffix holds no
 * `}` and, after its first `:`, never a `{`, so the last `}` (or, for a key without a kind,
 * the first `:`) ends the owner; and a number's text holds no `:` and never begins with `d`.
 */
function windowKey(prefix: string, w: RateLimitWindow): string {
  const { key } = w;
  const colon = key.indexOf(':');
  const owner = colon < 0 ? prefix + key : `${prefix}${key.slice(0, colon)}:{${key.slice(colon + 1)}}`;
  if (w.start !== undefined) return w.ms === DAY_MS ? `${owner}:d:${w.start}` : `${owner}:${w.ms}:${w.start}`;
  return w.ms === WINDOW_MS ? owner : `${owner}:${w.ms}`;
}

/**
 * The Redis hash of an account's usage on one IST day, `<prefix>usage:{<account id>}:<day>`,
 * in the slot of the account's windows (`acct:{<id>}`, `gmp:{<id>}`). Its fields are
 * `<key id>:<route>:a` (admitted) and `<key id>:<route>:r` (refused).
 */
function usageKey(prefix: string, accountId: string, day: string): string {
  return `${prefix}usage:{${accountId}}:${day}`;
}

/**
 * The days from `from` to `to`, inclusive, ascending; none when `to` is before `from`. The
 * core validates both (at most 366 days apart) before it asks; anything else is refused
 * rather than read day by day.
 */
function daysFrom(from: string, to: string): string[] {
  for (const [name, day] of [['from', from], ['to', to]] as const) {
    if (typeof day !== 'string' || !isCalendarDate(day)) {
      throw new IpokitError('ERR:BADPARAM', `readUsage: ${name} must be a calendar date YYYY-MM-DD.`, { parameter: name });
    }
  }
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (end < start) return [];
  if ((end - start) / DAY_MS >= MAX_USAGE_DAYS) {
    throw new IpokitError('ERR:BADPARAM', `readUsage reads at most ${MAX_USAGE_DAYS} days.`, { parameter: 'to' });
  }
  const days: string[] = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
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
