import { rm, writeFile } from 'node:fs/promises';
import pg from 'pg';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ROOT, freePort, parseCurlLine, readmeBlock, startBlock, stopBlock } from '../../test/readme-blocks.js';

// The README's blocks under "Stores" run as pasted, as `node server.mjs` on the packages'
// dist/, against the services they name: the PostgreSQL block on a database of its own
// (created here on the server of DATABASE_URL and dropped after), the Redis block on the
// Redis at REDIS_URL. Each prints a curl line whose request must answer 200 with the IPO,
// and the Redis block's limits must be in Redis. Without the service, the block's test skips.

const DATABASE_URL = process.env.DATABASE_URL || undefined;
const REDIS_URL = process.env.REDIS_URL || undefined;

/** Runs a block with `env` and requests its curl line; returns the answer's status and IPO symbol. */
async function runBlock(heading: string, name: string, env: NodeJS.ProcessEnv): Promise<{ status: number; symbol: string }> {
  const file = `${ROOT}demo/src/.readme-${name}-${process.pid}.mjs`;
  await writeFile(file, await readmeBlock(heading));
  const port = await freePort();
  const { child, line } = startBlock([file], port, ROOT, env);
  try {
    const curl = parseCurlLine(await line);
    expect(curl).not.toBeNull();
    const res = await fetch(curl!.url, { headers: { 'x-api-key': curl!.key } });
    const body = (await res.json()) as { ipo?: { symbol: string } };
    return { status: res.status, symbol: body.ipo?.symbol ?? '' };
  } finally {
    await stopBlock(child);
    await rm(file, { force: true });
  }
}

describe('README "Stores"', () => {
  it('the memory store line runs as pasted', async () => {
    const file = `${ROOT}demo/src/.readme-memory-${process.pid}.mjs`;
    await writeFile(file, `${await readmeBlock('Stores')}\nif (typeof store.findIpo !== 'function') process.exit(1);\nconsole.log('ok');\n`);
    const { child, line } = startBlock([file], await freePort());
    try {
      expect(await line).toBe('ok');
    } finally {
      await stopBlock(child);
      await rm(file, { force: true });
    }
  });
});

describe.skipIf(!DATABASE_URL)('README "PostgreSQL: one database for every app instance" (skipped without DATABASE_URL)', () => {
  it('runs as pasted on an empty database and serves the IPO it imported', async () => {
    const database = `ipokit_readme_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
      const url = new URL(DATABASE_URL!);
      url.pathname = `/${database}`;
      const answer = await runBlock('PostgreSQL: one database for every app instance', 'postgres', { DATABASE_URL: url.href });
      expect(answer).toMatchObject({ status: 200, symbol: 'ORBIT' });
      // The data is in the database, in the schema the block says.
      const check = new pg.Client({ connectionString: url.href });
      await check.connect();
      try {
        const { rows } = await check.query<{ id: string }>('SELECT id FROM ipokit.ipos');
        expect(rows.map((r) => r.id)).toEqual(['2026000001']);
      } finally {
        await check.end();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe.skipIf(!REDIS_URL)('README "Redis: the rate limits of every app instance" (skipped without REDIS_URL)', () => {
  it('runs as pasted and keeps the windows in Redis', async () => {
    const answer = await runBlock('Redis: the rate limits of every app instance', 'redis', { REDIS_URL });
    expect(answer).toMatchObject({ status: 200, symbol: 'ORBIT' });
    // The request's account window is a key under the default prefix holding the one hit
    // (left to expire, 120 s after it, as the package says).
    const redis = new Redis(REDIS_URL!);
    try {
      const keys = await redis.keys('ipokit:rl:acct:*');
      const lengths = await Promise.all(keys.map((k) => redis.llen(k)));
      expect(lengths).toContain(1);
    } finally {
      redis.disconnect();
    }
  });
});
