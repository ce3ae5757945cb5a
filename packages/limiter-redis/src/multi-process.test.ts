import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '@ipokit/core';
import { redisLimiter, type RedisLimiter } from './index.js';
import { APP_KEYS } from './test-app.js';
import { deleteKeysUnder, randomPrefix, REDIS_URL } from './test-redis.js';

// Three app processes, each with its own memory store (the same accounts and keys) and one
// Redis for the windows and usage, hit at once for one key: exactly the quota of each
// window is admitted across all of them (a minute, an hour and an IST day), every refusal
// says when to come back, and the usage counts every request once, admitted or refused.

const APP = fileURLToPath(new URL('./test-app.ts', import.meta.url));
const LIMITS = { free: { perMinute: 1000, perHour: 40, perDay: 30 }, paid: { perMinute: 50 }, pro: { perMinute: 2000, gmpPerMinute: 20 } };
const NOW = Date.UTC(2026, 10, 20, 12);
/** NOW's IST day, and when it began (00:00 IST) and ends. */
const TODAY = '2026-11-20';
const DAY0 = Date.UTC(2026, 10, 19, 18, 30);
const DAY_END_S = (DAY0 + 86_400_000 - NOW) / 1000;
const PROCESSES = 3;

describe.skipIf(!REDIS_URL)(`${PROCESSES} app processes sharing the Redis at REDIS_URL (skipped: set REDIS_URL)`, () => {
  const prefix = randomPrefix('procs');
  const apps: Array<{ child: ChildProcess; origin: string }> = [];
  let admin: Redis;
  /** The limiter as the apps have it, to read the usage they counted. */
  let limiter: RedisLimiter;
  const usage = (account: string) => limiter.readUsage({ accountId: account, from: TODAY, to: TODAY });

  beforeAll(async () => {
    admin = new Redis(REDIS_URL!);
    limiter = redisLimiter({ client: admin, prefix });
    for (let i = 0; i < PROCESSES; i++) apps.push(await startApp());
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map(({ child }) => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))));
    await deleteKeysUnder(admin, prefix);
    await admin.quit();
  });

  async function startApp(): Promise<{ child: ChildProcess; origin: string }> {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', APP, '--serve'], {
      env: { ...process.env, IPOKIT_PREFIX: prefix, IPOKIT_NOW: String(NOW), IPOKIT_LIMITS: JSON.stringify(LIMITS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`app exited with ${code}`)));
    });
    return { child, origin: `http://127.0.0.1:${port}` };
  }

  /** `n` requests fired at once, spread over the processes in turn. */
  async function burst(n: number, path: string, key: string): Promise<Array<{ status: number; body: unknown; headers: Headers }>> {
    return Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await fetch(`${apps[i % apps.length]!.origin}${path}`, { headers: { 'x-api-key': key } });
        return { status: res.status, body: await res.json(), headers: res.headers };
      }),
    );
  }

  it('admit exactly the account quota for one key out of 1,000 concurrent requests; every other one is a 429 with the right expiresIn', async () => {
    const results = await burst(1_000, '/ipos/ORBIT', APP_KEYS.paid);
    expect(results.filter((r) => r.status === 200)).toHaveLength(50);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(950);
    for (const r of refused) {
      // every hit is at the same instant (the clocks are pinned): the blocking one leaves in 60 s
      expect((r.body as ErrorBody).meta).toEqual({ quotaPerMinute: 50, expiresIn: 60, window: 'minute', quota: 50 });
      expect(r.headers.get('retry-after')).toBe('60');
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
    }
    expect(await admin.llen(`${prefix}acct:{acct_mp_paid}`)).toBe(50);
    // each request counted once, in the step that decided it
    expect(await usage('acct_mp_paid')).toEqual([{ day: TODAY, keyId: 'key_acct_mp_paid', route: 'ipo', admitted: 50, refused: 950 }]);
  });

  it('admit exactly the GMP quota out of 1,000 concurrent requests on the GMP route, while the account window still has room', async () => {
    const results = await burst(1_000, '/ipos/ORBIT/gmp?interval=hourly', APP_KEYS.proGmp);
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(980);
    for (const r of refused) expect((r.body as ErrorBody).meta).toEqual({ quotaPerMinute: 20, expiresIn: 60, window: 'gmp-minute', quota: 20 });
    // the account window counted only the admitted GMP requests
    expect((await burst(3, '/ipos/ORBIT', APP_KEYS.proGmp)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await admin.llen(`${prefix}acct:{acct_mp_pro}`)).toBe(23);
    expect(await admin.llen(`${prefix}gmp:{acct_mp_pro}`)).toBe(20);
    expect(await usage('acct_mp_pro')).toEqual([
      { day: TODAY, keyId: 'key_acct_mp_pro', route: 'gmp', admitted: 20, refused: 980 },
      { day: TODAY, keyId: 'key_acct_mp_pro', route: 'ipo', admitted: 3, refused: 0 },
    ]);
  });

  it('admit exactly the IST day quota out of 600 concurrent requests, with an hour window drawn on too; the usage adds up to 600', async () => {
    const results = await burst(600, '/ipos/ORBIT', APP_KEYS.free);
    expect(results.filter((r) => r.status === 200)).toHaveLength(30);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(570);
    // the day window refuses: it frees its places at 00:00 IST
    for (const r of refused) expect((r.body as ErrorBody).meta).toEqual({ quotaPerMinute: 1000, expiresIn: DAY_END_S, window: 'day', quota: 30 });
    expect(await admin.get(`${prefix}acct:{acct_mp_free}:d:${DAY0}`)).toBe('30');
    expect(await admin.llen(`${prefix}acct:{acct_mp_free}:3600000`)).toBe(30);
    expect(await admin.llen(`${prefix}acct:{acct_mp_free}`)).toBe(30);
    const [row] = await usage('acct_mp_free');
    expect(row).toEqual({ day: TODAY, keyId: 'key_acct_mp_free', route: 'ipo', admitted: 30, refused: 570 });
    expect(row!.admitted + row!.refused).toBe(600);
  });
});
