import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '@ipokit/core';
import { APP_KEYS } from './test-app.js';
import { deleteKeysUnder, randomPrefix, REDIS_URL } from './test-redis.js';

// Three app processes, each with its own memory store (the same accounts and keys) and one
// Redis for the windows, hit at once for one key: exactly the quota of each window is
// admitted across all of them, and every refusal says when to come back.

const APP = fileURLToPath(new URL('./test-app.ts', import.meta.url));
const LIMITS = { paid: { perMinute: 50 }, pro: { perMinute: 2000, gmpPerMinute: 20 } };
const NOW = Date.UTC(2026, 10, 20, 12);
const PROCESSES = 3;

describe.skipIf(!REDIS_URL)(`${PROCESSES} app processes sharing the Redis at REDIS_URL (skipped: set REDIS_URL)`, () => {
  const prefix = randomPrefix('procs');
  const apps: Array<{ child: ChildProcess; origin: string }> = [];
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL!);
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
      expect((r.body as ErrorBody).meta).toEqual({ quotaPerMinute: 50, expiresIn: 60 });
      expect(r.headers.get('retry-after')).toBe('60');
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
    }
    expect(await admin.llen(`${prefix}acct:{acct_mp_paid}`)).toBe(50);
  });

  it('admit exactly the GMP quota out of 1,000 concurrent requests on the GMP route, while the account window still has room', async () => {
    const results = await burst(1_000, '/ipos/ORBIT/gmp?interval=hourly', APP_KEYS.proGmp);
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(980);
    for (const r of refused) expect((r.body as ErrorBody).meta).toEqual({ quotaPerMinute: 20, expiresIn: 60 });
    // the account window counted only the admitted GMP requests
    expect((await burst(3, '/ipos/ORBIT', APP_KEYS.proGmp)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await admin.llen(`${prefix}acct:{acct_mp_pro}`)).toBe(23);
    expect(await admin.llen(`${prefix}gmp:{acct_mp_pro}`)).toBe(20);
  });
});
