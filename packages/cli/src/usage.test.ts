import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, type UsageRow } from '@ipokit/core';
import { migrate, postgresStore } from '@ipokit/storage-postgres';
import { runCli } from './index.js';
import { capture, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';
import { dayBars } from './usage.js';

// `ipokit usage` reads what the limiter counted: here charged through the store, as the
// router charges it, on PGlite (or the PostgreSQL of DATABASE_URL).

describe('ipokit usage', () => {
  let db: CliTestDatabase;
  let accountId: string;
  let keyA: string;
  let keyB: string;
  beforeAll(async () => {
    db = await openCliTestDatabase('usage');
    await migrate(db.client, { schema: db.schema });
    const store = postgresStore({ client: db.client, schema: db.schema, dataCacheTtlMs: 0 });
    accountId = (await createAccount(store, { name: 'Acme', plan: 'paid' })).id;
    keyA = (await createApiKey(store, { accountId, label: 'a' })).id;
    const other = (await createAccount(store, { name: 'Other', plan: 'pro' })).id;
    keyB = (await createApiKey(store, { accountId: other, label: 'b' })).id;
    const windows = [{ key: `acct:${accountId}`, quota: 2, ms: 60_000 }];
    const t = Date.UTC(2026, 10, 20, 6);
    for (let i = 0; i < 3; i++) await store.hitRateLimit({ now: t + i, windows, usage: { accountId, keyId: keyA, route: 'list', day: '2026-11-20' } });
    await store.hitRateLimit({ now: t + 120_000, windows, usage: { accountId, keyId: keyA, route: 'gmp', day: '2026-11-21' } });
    await store.hitRateLimit({ now: t, windows: [], usage: { accountId: other, keyId: keyB, route: 'ipo', day: '2026-11-20' } });
    await store.close?.();
  });
  afterAll(async () => {
    await db.close();
  });

  const run = async (argv: string[], tty = false) => {
    const out = capture(db.io());
    if (tty) (out.io.stdout as { isTTY?: boolean }).isTTY = true;
    const code = await runCli(['usage', ...argv, '--schema', db.schema], out.io);
    return { code, stdout: out.stdout(), stderr: out.stderr() };
  };

  it('prints a row per day, key and route, admitted and refused', async () => {
    const r = await run(['--account', accountId, '--from', '2026-11-01', '--to', '2026-11-30']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n').map((l) => l.split(/\s+/));
    expect(lines).toEqual([
      ['DAY', 'KEY', 'ROUTE', 'ADMITTED', 'REFUSED'],
      ['2026-11-20', keyA, 'list', '2', '1'],
      ['2026-11-21', keyA, 'gmp', '1', '0'],
    ]);
  });

  it('--json prints the rows; --key and the days narrow them; no bars off a terminal', async () => {
    const r = await run(['--account', accountId, '--from', '2026-11-21', '--to', '2026-11-21', '--json']);
    expect(JSON.parse(r.stdout)).toEqual([{ day: '2026-11-21', keyId: keyA, route: 'gmp', admitted: 1, refused: 0 }]);
    const none = await run(['--account', accountId, '--from', '2026-11-01', '--to', '2026-11-30', '--key', keyB]);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(none.stderr).toMatch(/^No usage counted for account .* from 2026-11-01 to 2026-11-30/);
  });

  it('draws a bar per day on a terminal', async () => {
    const r = await run(['--account', accountId, '--from', '2026-11-01', '--to', '2026-11-30'], true);
    expect(r.stdout).toContain(dayBars([
      { day: '2026-11-20', keyId: keyA, route: 'list', admitted: 2, refused: 1 },
      { day: '2026-11-21', keyId: keyA, route: 'gmp', admitted: 1, refused: 0 },
    ]));
  });

  it('refuses bad days, a range over 366 days and an unknown account', async () => {
    expect(await run(['--account', accountId, '--from', '2026-02-30'])).toMatchObject({ code: 2 });
    const long = await run(['--account', accountId, '--from', '2025-01-01', '--to', '2026-11-30']);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/at most 366 days/);
    const unknown = await run(['--account', 'acct_nope', '--from', '2026-11-01', '--to', '2026-11-02']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/acct_nope/);
  });
});

describe('dayBars', () => {
  it('scales each day to the busiest, admitted before refused', () => {
    const rows: UsageRow[] = [
      { day: '2026-11-20', keyId: 'a', route: 'list', admitted: 10, refused: 0 },
      { day: '2026-11-20', keyId: 'b', route: 'ipo', admitted: 10, refused: 10 },
      { day: '2026-11-21', keyId: 'a', route: 'list', admitted: 3, refused: 0 },
    ];
    expect(dayBars(rows)).toBe(
      `2026-11-20 ${'█'.repeat(20)}${'░'.repeat(10)} 20 admitted, 10 refused\n` + `2026-11-21 ${'███'.padEnd(30)} 3 admitted\n`,
    );
  });
});
