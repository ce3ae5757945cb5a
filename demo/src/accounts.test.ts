import { describe, expect, it } from 'vitest';
import { runDemo } from '@ipokit/cli';
import { KEY_PREFIX_LENGTH } from '@ipokit/core/backend';
import { capture, openCliTestDatabase } from '../../packages/cli/src/test-helpers.js';

// `DATABASE_URL=... npm start` twice on one database: the second start reuses the demo's
// accounts (one per plan) and prints a new key for each, instead of adding three accounts
// at every restart. In-process on PGlite, or on the real PostgreSQL of DATABASE_URL.

describe('npm start on PostgreSQL, started twice', () => {
  it('leaves one demo account per plan, each with one active key: the one printed last', async () => {
    const db = await openCliTestDatabase('demo_restart');
    try {
      const printed: Array<Record<string, string>> = [];
      for (let run = 0; run < 2; run++) {
        const stop = new AbortController();
        const out = capture({ ...db.io({ IPOKIT_SCHEMA: db.schema, IPOKIT_DRAIN_MS: '500', IPOKIT_LOG: 'off' }), signal: stop.signal });
        const done = runDemo(['--port', '0'], out.io);
        await Promise.race([out.waitForStdout(/^  pro +ipk_/m, 120_000), done.then((code) => Promise.reject(new Error(`exited ${code}: ${out.stderr()}`)))]);
        const keys: Record<string, string> = {};
        for (const m of out.stdout().matchAll(/^ {2}(free|paid|pro) +(ipk_[A-Za-z0-9]{32})/gm)) keys[m[1]!] = m[2]!;
        printed.push(keys);
        stop.abort();
        expect(await done).toBe(0);
      }
      expect(Object.keys(printed[1]!).sort()).toEqual(['free', 'paid', 'pro']);
      const accounts = await db.client.query(`SELECT name, plan FROM "${db.schema}".accounts ORDER BY name`);
      expect(accounts.rows).toEqual([
        { name: 'ipokit demo (free)', plan: 'free' },
        { name: 'ipokit demo (paid)', plan: 'paid' },
        { name: 'ipokit demo (pro)', plan: 'pro' },
      ]);
      const active = await db.client.query(`SELECT prefix FROM "${db.schema}".api_keys WHERE revoked_at IS NULL ORDER BY prefix`);
      expect((active.rows as Array<{ prefix: string }>).map((r) => r.prefix).sort()).toEqual(Object.values(printed[1]!).map((k) => k.slice(0, KEY_PREFIX_LENGTH)).sort());
    } finally {
      await db.close();
    }
  }, 240_000);
});
