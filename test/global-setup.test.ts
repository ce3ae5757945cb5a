/**
 * test/global-setup.ts: the servers the tests use, found without variables, and one line
 * per server saying what the run uses or skips.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_POSTGRES, LOCAL_REDIS, findServers } from './global-setup.js';

const yes = async (): Promise<boolean> => true;
const no = async (): Promise<boolean> => false;

describe('findServers', () => {
  it('keeps REDIS_URL and DATABASE_URL when set, without probing', async () => {
    const env: NodeJS.ProcessEnv = { REDIS_URL: 'redis://:s3cret@cache:6379', DATABASE_URL: 'postgres://u:pw@db/x' };
    const lines = await findServers(env, { redis: () => Promise.reject(new Error('probed')), postgres: () => Promise.reject(new Error('probed')) });
    expect(env).toEqual({ REDIS_URL: 'redis://:s3cret@cache:6379', DATABASE_URL: 'postgres://u:pw@db/x' });
    expect(lines).toEqual(['redis: the Redis tests use REDIS_URL (redis://:***@cache:6379)', 'postgres: the PostgreSQL tests use DATABASE_URL (postgres://u:***@db/x)']);
  });

  it('uses the local servers when they answer', async () => {
    const env: NodeJS.ProcessEnv = { REDIS_URL: '' };
    const lines = await findServers(env, { redis: yes, postgres: yes });
    expect(env).toEqual({ REDIS_URL: LOCAL_REDIS, DATABASE_URL: LOCAL_POSTGRES });
    expect(lines).toHaveLength(2);
  });

  it('says in one line per server what skips when none answers', async () => {
    const env: NodeJS.ProcessEnv = { REDIS_URL: '', DATABASE_URL: '' };
    const lines = await findServers(env, { redis: no, postgres: no });
    expect(env).toEqual({});
    expect(lines).toEqual([
      expect.stringMatching(/^redis: no server at REDIS_URL or 127\.0\.0\.1:6379; the Redis tests skip/),
      expect.stringMatching(/^postgres: no server at DATABASE_URL or postgres:\/\/postgres@127\.0\.0\.1:5432\/test; the PostgreSQL tests run on PGlite/),
    ]);
  });
});
