/**
 * The quotas of docs/spec.md#limits measured side by side, in one run:
 *
 * 1. **Windows**: on each limiter (memory, PostgreSQL, Redis), the cost of one decision with
 *    the hosted service's three windows (minute 6 + hour 360 + IST day 8,640) against the
 *    minute window of 6 alone. Every decision is admitted and the windows are kept full:
 *    16 accounts take turns on a virtual clock that gives each account one request every
 *    10.001 s, so each account's hour window holds 359 hits (its steady state under that
 *    quota) and its day window counts up to 8,639. One call in flight, the request path's
 *    own (with the usage count), rounds alternating between the two shapes; the median
 *    round of each. Target: 3 windows <= 1.3x one.
 * 2. **PostgreSQL, one hot account from 3 processes**: decisions per second with the three
 *    windows on (quotas no run reaches, so every decision is admitted and kept) and with
 *    the minute window alone, rounds alternating, each with the usage count as the request
 *    path makes it; after the run the hour and day windows must hold exactly the decisions
 *    made. Target: >= 3,000/s with all three windows.
 * 3. **Usage counting**: in process, `createIpoHandler` on a memory store answering
 *    GET /{id} with a paid key, its limiter passing the usage count on or dropping it
 *    (the same wrapper in both, so only the count differs): the share of a request's cost
 *    that is counting its usage. Target: <= 10%. The same request with the three windows
 *    against the minute window alone shows what part 1's ratio means for a request.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 npm run bench:quotas
 *
 * Without a Redis answering at REDIS_URL the Redis rows are left out with one line.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createAccount, createApiKey, importDataset, type RateLimiter } from '@ipokit/core';
import { HOUR_MS, istDayStart, type RateLimitWindow, type UsageCharge, WINDOW_MS } from '@ipokit/core/backend';
import { createIpoHandler } from '@ipokit/core/adapter';
import { fixtureDataset } from '@ipokit/testing';
import { redisLimiter } from '@ipokit/limiter-redis';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { formatRows, type BenchRow } from './rows.js';

/** Options of {@link runQuotasBench}. */
export interface QuotasBenchOptions {
  databaseUrl?: string;
  redisUrl?: string;
  /** Rounds per shape, alternating. */
  rounds?: number;
  /** Progress (default: to stderr). */
  log?: (line: string) => void;
}

const DAY_MS = 86_400_000;
const SCHEMA = 'ipokit_bench_quotas';
const ACCOUNTS = 16;
/** Each account's requests are this far apart on the virtual clock: 359 fit in an hour, 8,639 in a day. */
const SPACING_MS = 10_001;
/** The hosted service's plan: 6 a minute, 360 an hour, 8,640 a day. */
const HOSTED = { minute: 6, hour: 360, day: 8_640 };
/** Quotas that no run of part 2 reaches. */
const NEVER = 100_000_000;

type Shape = 'one' | 'three';

/** The windows of one account for a shape at `now`, as the router draws them. */
function windowsOf(shape: Shape, key: string, now: number, quotas: { minute: number; hour: number; day: number }): RateLimitWindow[] {
  const minute = { key, quota: quotas.minute, ms: WINDOW_MS };
  if (shape === 'one') return [minute];
  return [minute, { key, quota: quotas.hour, ms: HOUR_MS }, { key, quota: quotas.day, ms: DAY_MS, start: istDayStart(now) }];
}

/** A shape's accounts on a limiter, with their own virtual clock. */
class VirtualLoad {
  private now = Date.now();
  private turn = 0;
  admitted = 0;
  refused = 0;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly shape: Shape,
    private readonly tag: string,
  ) {}

  /** Runs `calls` decisions one after another; resolves to microseconds per decision. */
  async run(calls: number): Promise<number> {
    const started = performance.now();
    for (let i = 0; i < calls; i++) {
      const account = this.turn % ACCOUNTS;
      this.turn += 1;
      this.now += SPACING_MS / ACCOUNTS;
      const usage: UsageCharge = { accountId: `acct_${this.tag}${account}`, keyId: `key_${this.tag}${account}`, route: 'ipo', day: '2026-11-24' };
      const r = await this.limiter.hitRateLimit({ now: this.now, windows: windowsOf(this.shape, `acct:${this.tag}${account}`, this.now, HOSTED), usage });
      if (r.admitted) this.admitted += 1;
      else this.refused += 1;
    }
    return ((performance.now() - started) * 1000) / calls;
  }
}

/**
 * Runs the three parts and returns their rows.
 *
 * @example
 * ```ts
 * const rows = await runQuotasBench({ rounds: 3 });
 * rows.filter((r) => r.pass === false); // the targets missed
 * ```
 */
export async function runQuotasBench(options: QuotasBenchOptions = {}): Promise<BenchRow[]> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const databaseUrl = options.databaseUrl ?? (process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
  const redisUrl = options.redisUrl ?? (process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  const rounds = options.rounds ?? 5;
  const rows: BenchRow[] = [];

  const admin = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(admin, { schema: SCHEMA });
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  const withRedis = await redis.connect().then(
    () => true,
    () => false,
  );
  if (!withRedis) log(`no Redis answers at ${redisUrl}: the Redis rows are left out`);
  const prefix = `ipokit-bench-q:${randomBytes(4).toString('hex')}:`;
  try {
    // 2. PostgreSQL, one hot account from 3 processes: first, on the fresh schema, so that
    // the dead rows part 1 leaves (and autovacuum) do not weigh on it.
    rows.push(...(await postgresHotAccount(databaseUrl, admin, rounds, log)));

    // 1. Windows.
    const backends: Array<{ name: string; limiter: RateLimiter; calls: number }> = [
      { name: 'memory', limiter: memoryStore(), calls: 40_000 },
      { name: 'PostgreSQL', limiter: postgresStore({ client: admin, schema: SCHEMA }), calls: 1_500 },
    ];
    if (withRedis) backends.push({ name: 'Redis', limiter: redisLimiter({ client: redis, prefix }), calls: 5_000 });
    for (const b of backends) {
      const loads: Record<Shape, VirtualLoad> = { one: new VirtualLoad(b.limiter, 'one', `${b.name}1-`), three: new VirtualLoad(b.limiter, 'three', `${b.name}3-`) };
      // warm up to the steady state: every account's hour window full to 359
      for (const shape of ['one', 'three'] as const) await loads[shape].run(ACCOUNTS * 370);
      const us: Record<Shape, number[]> = { one: [], three: [] };
      for (let round = 0; round < rounds; round++) {
        for (const shape of round % 2 === 0 ? (['one', 'three'] as const) : (['three', 'one'] as const)) us[shape].push(await loads[shape].run(b.calls));
      }
      const one = median(us.one);
      const three = median(us.three);
      log(`windows on ${b.name}: one ${us.one.map((x) => x.toFixed(1)).join(', ')} us; three ${us.three.map((x) => x.toFixed(1)).join(', ')} us`);
      const refused = loads.one.refused + loads.three.refused;
      rows.push(
        { group: 'Quotas', name: `${b.name}: one decision, minute 6 alone`, value: round1(one), unit: 'us', note: `median of ${rounds} rounds of ${b.calls.toLocaleString('en-US')}; rounds ${us.one.map(round1).join(', ')}` },
        { group: 'Quotas', name: `${b.name}: one decision, minute 6 + hour 360 + day 8,640`, value: round1(three), unit: 'us', note: `rounds ${us.three.map(round1).join(', ')}; ${refused} refused (must be 0)` },
        { group: 'Quotas', name: `${b.name}: three windows / one`, value: round2(three / one), unit: 'x', target: '<= 1.3', pass: three / one <= 1.3 && refused === 0 },
      );
    }

    // 3. Usage counting, and the windows as a request sees them.
    rows.push(...(await handlerRows(rounds, log)));
    return rows;
  } finally {
    if (withRedis) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
      await redis.quit();
    } else redis.disconnect();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
  }
}

type ToWorker = { seconds: number; shape: Shape } | { stop: true };
type FromWorker = { ready: true } | { decisions: number; admitted: number; ms: number };

const PROCESSES = 3;
const CONNECTIONS = 4;
const SECONDS = 3;
const HOT = 'acct:bench-hot-';

async function postgresHotAccount(databaseUrl: string, admin: pg.Pool, rounds: number, log: (line: string) => void): Promise<BenchRow[]> {
  const workers: ChildProcess[] = Array.from({ length: PROCESSES }, () =>
    fork(fileURLToPath(import.meta.url), ['--worker'], {
      execArgv: ['--conditions=source', '--import', 'tsx'],
      env: { ...process.env, BENCH_DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const inbox = new Map<ChildProcess, Array<(m: FromWorker) => void>>();
  const next = (w: ChildProcess): Promise<FromWorker> => new Promise((res) => inbox.get(w)!.push(res));
  for (const w of workers) {
    inbox.set(w, []);
    w.on('message', (m: FromWorker) => inbox.get(w)!.shift()?.(m));
  }
  try {
    await Promise.all(workers.map(next));
    const perSecond: Record<Shape, number[]> = { one: [], three: [] };
    const totals: Record<Shape, { decisions: number; admitted: number }> = { one: { decisions: 0, admitted: 0 }, three: { decisions: 0, admitted: 0 } };
    const dayStart = istDayStart(Date.now());
    // round 0 warms connections and the JIT up: counted in the totals, not in the rates
    for (let round = 0; round <= rounds; round++) {
      for (const shape of round % 2 === 0 ? (['one', 'three'] as const) : (['three', 'one'] as const)) {
        const replies = workers.map(next);
        for (const w of workers) w.send({ seconds: round === 0 ? 1 : SECONDS, shape } satisfies ToWorker);
        const done = (await Promise.all(replies)) as Array<{ decisions: number; admitted: number; ms: number }>;
        const decisions = done.reduce((a, d) => a + d.decisions, 0);
        totals[shape].decisions += decisions;
        totals[shape].admitted += done.reduce((a, d) => a + d.admitted, 0);
        if (round > 0) perSecond[shape].push(decisions / (Math.max(...done.map((d) => d.ms)) / 1000));
      }
    }
    const held = async (key: string): Promise<number> => Number((await admin.query<{ n: number }>(`SELECT n_hits AS n FROM ${SCHEMA}.rate_windows WHERE key = $1`, [key])).rows[0]?.n ?? -1);
    const hour = await held(`${HOT}three\x1f${HOUR_MS}`);
    const day = await held(`${HOT}three\x1f${DAY_MS}\x1f${dayStart}`);
    const counted = Number((await admin.query<{ n: string }>(`SELECT coalesce(sum(admitted), 0)::text AS n FROM ${SCHEMA}.key_usage WHERE account_id = 'acct_bench-hot-three'`)).rows[0]?.n ?? -1);
    const t = totals.three;
    const exact = t.admitted === t.decisions && hour === t.decisions && day === t.decisions && counted === t.decisions;
    const one = median(perSecond.one);
    const three = median(perSecond.three);
    log(`PostgreSQL hot account: one ${perSecond.one.map(Math.round).join(', ')}/s; three ${perSecond.three.map(Math.round).join(', ')}/s`);
    return [
      { group: 'Quotas', name: `PostgreSQL, one hot account from ${PROCESSES} processes: minute alone, decisions per second`, value: Math.round(one), unit: 'decisions/s', note: `rounds ${perSecond.one.map(Math.round).join(', ')}; ${CONNECTIONS} connections per process, usage counted` },
      { group: 'Quotas', name: `PostgreSQL, one hot account from ${PROCESSES} processes: minute + hour + day, decisions per second`, value: Math.round(three), unit: 'decisions/s', target: '>= 3,000', pass: three >= 3_000, note: `rounds ${perSecond.three.map(Math.round).join(', ')}` },
      { group: 'Quotas', name: 'PostgreSQL, three windows / one (throughput)', value: round2(three / one), unit: 'x' },
      {
        group: 'Quotas',
        name: 'PostgreSQL, three windows: every decision admitted, held by the hour and day windows and counted in usage',
        value: Number(exact),
        unit: '(1 = yes)',
        target: '1',
        pass: exact,
        note: `${t.admitted}/${t.decisions} admitted; hour window ${hour}, day window ${day}, usage ${counted}${day === -1 ? ' (an IST midnight fell inside the run)' : ''}`,
      },
    ];
  } finally {
    for (const w of workers) if (w.connected) w.send({ stop: true } satisfies ToWorker);
    await Promise.all(workers.map((w) => new Promise((res) => (w.exitCode !== null ? res(null) : w.once('exit', res)))));
  }
}

/** One process of part 2: its own pool and store; each round, as many decisions as it can make. */
async function worker(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: CONNECTIONS });
  await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.query('SELECT 1')));
  const limiter = postgresStore({ client: pool, schema: SCHEMA });
  process.on('message', (m: ToWorker) => {
    if ('stop' in m) {
      void pool.end().finally(() => process.exit(0));
      return;
    }
    void (async () => {
      const started = performance.now();
      const until = started + m.seconds * 1000;
      let decisions = 0;
      let admitted = 0;
      const usage: UsageCharge = { accountId: `acct_bench-hot-${m.shape}`, keyId: 'key_bench-hot', route: 'ipo', day: '2026-11-24' };
      const lane = async (): Promise<void> => {
        while (performance.now() < until) {
          const now = Date.now();
          const windows = windowsOf(m.shape, `${HOT}${m.shape}`, now, { minute: NEVER, hour: NEVER, day: NEVER });
          const r = await limiter.hitRateLimit({ now, windows, usage }, { deadline: performance.now() + 2_000 });
          decisions += 1;
          if (r.admitted) admitted += 1;
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, lane));
      process.send!({ decisions, admitted, ms: performance.now() - started } satisfies FromWorker);
    })();
  });
  process.send!({ ready: true } satisfies FromWorker);
}

/**
 * Part 3, and the windows again as a request sees them: GET /{id} in process on a memory
 * store with a paid key, one request every 10.001 s on a virtual clock (so the windows hold
 * their steady state and admit every request): the hosted plan's three windows against the
 * minute window alone, and the three with the usage count dropped by the limiter wrapper.
 */
async function handlerRows(rounds: number, log: (line: string) => void): Promise<BenchRow[]> {
  const store = memoryStore();
  await importDataset(store, fixtureDataset());
  const account = await createAccount(store, { name: 'Bench', plan: 'paid' });
  const { key } = await createApiKey(store, { accountId: account.id, label: 'bench' });
  const passing = (keepUsage: boolean): RateLimiter => ({
    hitRateLimit: (input, call) => store.hitRateLimit(keepUsage ? input : { now: input.now, windows: input.windows }, call),
    peekRateLimit: (input) => store.peekRateLimit(input),
    readUsage: (query) => store.readUsage(query),
  });
  // Each variant on its own virtual clock, starting where the others do.
  const variant = (limits: { perMinute: number; perHour?: number; perDay?: number }, keepUsage: boolean) => {
    let clock = Date.now();
    const handle = createIpoHandler(store, { limiter: passing(keepUsage), limits: { paid: limits }, now: () => new Date(clock) });
    return { handle, tick: () => (clock += SPACING_MS) };
  };
  // Each variant has an account and key of its own: they share no window.
  const variants = {
    one: variant({ perMinute: HOSTED.minute }, true),
    three: variant({ perMinute: HOSTED.minute, perHour: HOSTED.hour, perDay: HOSTED.day }, true),
    uncounted: variant({ perMinute: HOSTED.minute, perHour: HOSTED.hour, perDay: HOSTED.day }, false),
  };
  const keys: Record<keyof typeof variants, string> = { one: key, three: '', uncounted: '' };
  for (const name of ['three', 'uncounted'] as const) {
    const other = await createAccount(store, { name: `Bench ${name}`, plan: 'paid' });
    keys[name] = (await createApiKey(store, { accountId: other.id, label: 'bench' })).key;
  }
  const calls = 20_000;
  const time = async (name: keyof typeof variants, n = calls): Promise<number> => {
    const { handle, tick } = variants[name];
    const request = { method: 'GET', url: '/ORBIT', path: '/ORBIT', query: '', headers: { 'x-api-key': keys[name] }, clientAddress: '203.0.113.9' };
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      tick();
      const res = await handle(request);
      if (res.status !== 200) throw new Error(`GET /ORBIT answered ${res.status} (${name})`);
    }
    return ((performance.now() - started) * 1000) / n;
  };
  const names = ['one', 'three', 'uncounted'] as const;
  for (const name of names) await time(name, 5_000);
  const us: Record<(typeof names)[number], number[]> = { one: [], three: [], uncounted: [] };
  for (let round = 0; round < rounds * 2; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) us[name].push(await time(name));
  }
  const [one, three, uncounted] = names.map((n) => median(us[n])) as [number, number, number];
  const share = (three - uncounted) / three;
  log(`handler: one ${us.one.map((x) => x.toFixed(2)).join(', ')} us; three ${us.three.map((x) => x.toFixed(2)).join(', ')} us; uncounted ${us.uncounted.map((x) => x.toFixed(2)).join(', ')} us`);
  const note = `median of ${rounds * 2} rounds of ${calls.toLocaleString('en-US')}`;
  return [
    { group: 'Quotas', name: 'GET /{id} in process (memory store, paid key): minute 6 alone', value: round2(one), unit: 'us', note },
    { group: 'Quotas', name: 'GET /{id} in process: minute 6 + hour 360 + day 8,640', value: round2(three), unit: 'us', note: `rounds ${us.three.map(round2).join(', ')}` },
    { group: 'Quotas', name: 'GET /{id} in process: three windows / one', value: round2(three / one), unit: 'x' },
    { group: 'Quotas', name: 'GET /{id} in process: three windows, usage dropped by the limiter wrapper', value: round2(uncounted), unit: 'us', note: `rounds ${us.uncounted.map(round2).join(', ')}` },
    {
      group: 'Quotas',
      name: "usage counting's share of the request's cost",
      value: Math.round(share * 1000) / 10,
      unit: '%',
      target: '<= 10',
      pass: share <= 0.1,
      note: 'in process, without HTTP: over HTTP the request costs more and the share is smaller',
    },
  ];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const round2 = (x: number): number => Math.round(x * 100) / 100;

if (process.argv.includes('--worker')) {
  await worker();
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--rounds');
  const rows = await runQuotasBench(at >= 0 ? { rounds: Number(process.argv[at + 1]) } : {});
  console.log(formatRows(rows));
  process.exitCode = rows.every((r) => r.pass !== false) ? 0 : 1;
}
