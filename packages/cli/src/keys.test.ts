import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, type ApiKeyInfo, type CreatedApiKey } from '@ipokit/core';
import { postgresStore } from '@ipokit/storage-postgres';
import { runCli } from './index.js';
import { CliError } from './io.js';
import { expiresOf, keyState, keysTable, overlapOf } from './keys.js';
import { capture, cliRunner, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';

// Key expiry, rotation and last use through runCli (docs/spec.md#command-line), on PGlite
// (io.openDatabase), or on the real PostgreSQL through DATABASE_URL when it is set.

let db: CliTestDatabase;

beforeAll(async () => {
  db = await openCliTestDatabase('keys');
  expect(await runCli(['migrate', '--schema', db.schema], capture(db.io()).io)).toBe(0);
});

afterAll(async () => {
  await db?.close();
});

const { run, ok } = cliRunner(() => db);

async function account(plan: 'free' | 'paid' | 'pro' = 'pro'): Promise<string> {
  return (await ok(['accounts', 'create', '--name', `Keys ${plan}`, '--plan', plan, '-q'])).trim();
}

type Created = CreatedApiKey;

interface Rotated extends Created {
  oldKey: { id: string; expiresAt: string | null };
}

type Listed = ApiKeyInfo;

async function createKey(accountId: string, label: string, ...more: string[]): Promise<Created> {
  return JSON.parse(await ok(['keys', 'create', '--account', accountId, '--label', label, '--json', ...more])) as Created;
}

async function listKeys(accountId: string): Promise<Listed[]> {
  return JSON.parse(await ok(['keys', 'list', '--account', accountId, '--json'])) as Listed[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('--expires and --overlap values', () => {
  const now = Date.parse('2026-11-24T00:00:00.000Z');

  it('--expires: an ISO-8601 instant with a zone as written, or minutes, hours or days from now', () => {
    expect(expiresOf('2026-12-31T18:30:00Z', now)).toBe('2026-12-31T18:30:00Z');
    expect(expiresOf('2027-01-01T00:00+05:30', now)).toBe('2027-01-01T00:00+05:30');
    expect(expiresOf('2020-01-01T00:00:00.123456Z', now)).toBe('2020-01-01T00:00:00.123456Z'); // the past is the core's to refuse
    expect(expiresOf('90m', now)).toBe('2026-11-24T01:30:00.000Z');
    expect(expiresOf('12h', now)).toBe('2026-11-24T12:00:00.000Z');
    expect(expiresOf('30d', now)).toBe('2026-12-24T00:00:00.000Z');
    for (const bad of ['', '30', '1w', '30D', ' 30d', '-1d', '+1d', '1.5h', '30 days', '2026-12-31', '2026-12-31T18:30:00', '2026-12-31 18:30:00Z', 'tomorrow']) {
      expect(() => expiresOf(bad, now), bad).toThrow(/^--expires must be an ISO-8601 instant with a zone \(e\.g\. 2026-12-31T18:30:00Z\) or a time from now: .*30d/);
    }
    expect(() => expiresOf('0m', now)).toThrow('--expires must be later than now, got "0m"');
    expect(() => expiresOf('2920000d', now)).toThrow(/past the year 9999/);
    try {
      expiresOf('1w', now);
    } catch (err) {
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(2);
    }
  });

  it('--overlap: whole seconds, or s, m, h or d, from 0 to 7 days', () => {
    expect(['0', '0s', '0d', '3600', '45s', '90m', '1h', '2d', '7d', '604800'].map(overlapOf)).toEqual([0, 0, 0, 3600, 45, 5400, 3600, 172_800, 604_800, 604_800]);
    for (const bad of ['', '1w', '-1', '1.5h', '1 h', 'H', '1H', '1hm']) expect(() => overlapOf(bad), bad).toThrow(/^--overlap must be a whole number of seconds/);
    for (const far of ['604801', '8d', '169h', '10081m']) expect(() => overlapOf(far), far).toThrow(/^--overlap must be from 0 to 7d \(604800 s\)/);
  });

  it('a key is revoked if revoked, else expired from its expiresAt on, else active', () => {
    const at = '2026-11-24T00:00:00.000Z';
    expect(keyState({ revokedAt: null, expiresAt: null }, now)).toBe('active');
    expect(keyState({ revokedAt: null, expiresAt: '2026-11-24T00:00:00.001Z' }, now)).toBe('active');
    expect(keyState({ revokedAt: null, expiresAt: at }, now)).toBe('expired');
    expect(keyState({ revokedAt: at, expiresAt: null }, now)).toBe('revoked');
    expect(keyState({ revokedAt: at, expiresAt: '2020-01-01T00:00:00.000Z' }, now)).toBe('revoked');
  });

  it('the keys table: never for what is not set, the state by the clock it is given', () => {
    const key = { id: 'key_1', prefix: 'ipk_abcdefgh', label: 'l', createdAt: '2026-11-01T00:00:00.000Z', revokedAt: null, expiresAt: '2026-11-24T00:00:00.000Z', lastUsedAt: null, rotatedFrom: null };
    expect(keysTable([key], now - 1)).toBe(
      'ID     PREFIX           LABEL  CREATED                   EXPIRES                   LAST USED  ROTATED FROM  STATE\n' +
        'key_1  ipk_abcdefgh...  l      2026-11-01T00:00:00.000Z  2026-11-24T00:00:00.000Z  never      -             active\n',
    );
    expect(keysTable([{ ...key, expiresAt: null, lastUsedAt: '2026-11-23T10:00:00.000Z' }], now)).toMatch(/ never +2026-11-23T10:00:00\.000Z +- +active\n$/);
    expect(keysTable([key], now)).toMatch(/ expired\n$/);
    expect(keysTable([{ ...key, rotatedFrom: 'key_0' }], now - 1)).toMatch(/ never +key_0 +active\n$/);
  });
});

describe('ipokit keys create --expires', () => {
  it('takes an ISO-8601 instant, and shows the expiry in the table, JSON and list', async () => {
    const acct = await account();
    const json = await createKey(acct, 'trial', '--expires', '2030-01-02T03:04:05Z');
    expect(json).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^ipk_[A-Za-z0-9]{32}$/),
      prefix: json.key.slice(0, 12),
      label: 'trial',
      accountId: acct,
      createdAt: expect.any(String),
      expiresAt: '2030-01-02T03:04:05.000Z',
    });
    const table = await run(['keys', 'create', '--account', acct, '--label', 'ist', '--expires', '2030-01-02T08:34:05+05:30']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^id {9}key_\w+\naccount {4}acct_\w+\nlabel {6}ist\ncreatedAt {2}\S+\nexpiresAt {2}2030-01-02T03:04:05\.000Z\nkey {8}ipk_[A-Za-z0-9]{32}\n$/);
    expect(table.stderr).toMatch(/^This is the only time key key_\w+ \(ipk_[A-Za-z0-9]{8}\.\.\.\) is shown/);
    expect(await ok(['keys', 'create', '--account', acct, '--label', 'q', '--expires', '2030-01-01T00:00:00Z', '-q'])).toMatch(/^ipk_[A-Za-z0-9]{32}\n$/);
    const listed = await listKeys(acct);
    expect(listed.map((k) => [k.label, k.expiresAt])).toEqual([
      ['trial', '2030-01-02T03:04:05.000Z'],
      ['ist', '2030-01-02T03:04:05.000Z'],
      ['q', '2030-01-01T00:00:00.000Z'],
    ]);
    expect(await ok(['keys', 'list', '--account', acct])).toContain(` ${json.prefix}...  trial  ${json.createdAt}  2030-01-02T03:04:05.000Z  never      -             active\n`);
  });

  it('takes a time from now: minutes, hours or days', async () => {
    const acct = await account('paid');
    for (const [value, ms] of [['90m', 90 * 60_000], ['12h', 12 * HOUR], ['30d', 30 * DAY]] as const) {
      const before = Date.now();
      const key = await createKey(acct, value, '--expires', value);
      const after = Date.now();
      expect(Date.parse(key.expiresAt!), value).toBeGreaterThanOrEqual(before + ms);
      expect(Date.parse(key.expiresAt!), value).toBeLessThanOrEqual(after + ms);
    }
  });

  it('refuses a value of neither form (exit 2, both forms shown); an instant not after now is the core\'s refusal (exit 1)', async () => {
    const acct = await account('paid');
    for (const bad of ['30', '1w', 'next week', '2030-01-02', '2030-01-02T03:04:05']) {
      const r = await run(['keys', 'create', '--account', acct, '--label', 'x', '--expires', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toBe(
        `ipokit keys create: --expires must be an ISO-8601 instant with a zone (e.g. 2026-12-31T18:30:00Z) or a time from now: a whole number of minutes, hours or days (e.g. 90m, 12h, 30d); got ${JSON.stringify(bad)}`,
      );
      expect(r.stderr.split('\n')[1]).toMatch(/^Usage: ipokit keys create --account ID --label LABEL \[--expires WHEN\]/);
    }
    const past = await run(['keys', 'create', '--account', acct, '--label', 'x', '--expires', '2020-01-01T00:00:00Z']);
    expect(past).toEqual({ code: 1, stdout: '', stderr: expect.stringMatching(/^ipokit keys create: expiresAt must be after now \(\d{4}-\d\d-\d\dT[\d:.]+Z\)\.\n$/) });
    expect(await listKeys(acct)).toEqual([]);
  });
});

describe('ipokit keys rotate', () => {
  it('prints the new key once, and when the old key stops working', async () => {
    const acct = await account('paid');
    const old = await createKey(acct, 'prod server');
    const r = await run(['keys', 'rotate', old.id, '--overlap', '1h']);
    expect(r.code, r.stderr).toBe(0);
    const m = /^id {15}(key_\w+)\naccount {10}(acct_\w+)\nlabel {12}prod server\ncreatedAt {8}(\S+)\nexpiresAt {8}never\nkey {14}(ipk_[A-Za-z0-9]{32})\noldKey {11}(key_\w+)\noldKeyExpiresAt {2}(\S+)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    const [, id, accountId, createdAt, key, oldId, oldExpiresAt] = m!;
    expect([accountId, oldId]).toEqual([acct, old.id]);
    expect(id).not.toBe(old.id);
    expect(Date.parse(oldExpiresAt!) - Date.parse(createdAt!)).toBe(HOUR);
    expect(r.stderr).toBe(
      `This is the only time key ${id} (${key!.slice(0, 12)}...) is shown: store it now. ipokit keeps only its hash.\n` +
        `The old key ${old.id} works until ${oldExpiresAt} (1 h from now): move its clients to the new key by then.\n`,
    );
    expect(r.stderr.match(/ipk_[A-Za-z0-9]{32}/)).toBeNull();

    // Both keys listed: the old one with its new expiry, still active; the new one with the same label.
    const listed = await listKeys(acct);
    expect(listed).toEqual([
      { id: old.id, prefix: old.prefix, label: 'prod server', createdAt: old.createdAt, revokedAt: null, expiresAt: oldExpiresAt, lastUsedAt: null, rotatedFrom: null },
      { id, prefix: key!.slice(0, 12), label: 'prod server', createdAt, revokedAt: null, expiresAt: null, lastUsedAt: null, rotatedFrom: old.id },
    ]);
    const table = (await ok(['keys', 'list', '--account', acct])).split('\n');
    expect(table[1]).toMatch(new RegExp(`^${old.id} +${esc(old.prefix)}\\.\\.\\. +prod server +${esc(old.createdAt)} +${esc(oldExpiresAt!)} +never +- +active$`));
    expect(table[2]).toMatch(new RegExp(`^${id} +.* +never +never +${old.id} +active$`));
  });

  it('takes --overlap as seconds or with s, m, h or d (default 1 day); --json adds the old key, --quiet prints the key alone', async () => {
    const acct = await account('pro');
    for (const [flag, seconds] of [['3600', 3600], ['45s', 45], ['90m', 5400], ['2d', 172_800], ['7d', 604_800], [undefined, 86_400]] as const) {
      const old = await createKey(acct, `overlap ${flag}`);
      const next = JSON.parse(await ok(['keys', 'rotate', old.id, '--json', ...(flag === undefined ? [] : ['--overlap', flag])])) as Rotated;
      expect(next).toEqual({
        id: expect.stringMatching(/^key_/),
        key: expect.stringMatching(/^ipk_[A-Za-z0-9]{32}$/),
        prefix: next.key.slice(0, 12),
        label: `overlap ${flag}`,
        accountId: acct,
        createdAt: expect.any(String),
        expiresAt: null,
        oldKey: { id: old.id, expiresAt: expect.any(String) },
      });
      expect(Date.parse(next.oldKey.expiresAt!) - Date.parse(next.createdAt), String(flag)).toBe(seconds * 1000);
    }
    const old = await createKey(acct, 'quiet');
    const quiet = await run(['keys', 'rotate', old.id, '-q', '--overlap', '1d']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^ipk_[A-Za-z0-9]{32}\n$/);
    expect(quiet.stderr).toMatch(/^This is the only time key key_\w+ \(ipk_\w{8}\.\.\.\) is shown: .*\nThe old key key_\w+ works until \S+ \(1 d from now\): /);
    // The new key is the one that was printed.
    const listed = await listKeys(acct);
    expect(listed.at(-1)!.prefix).toBe(quiet.stdout.slice(0, 12));
  });

  it('--overlap 0 stops the old key at once: listed as expired, and it cannot be rotated again', async () => {
    const acct = await account('paid');
    const old = await createKey(acct, 'leaked');
    const r = await run(['keys', 'rotate', old.id, '--overlap', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[1]).toBe(`The old key ${old.id} stopped working now: servers on this database refuse it within 5 s (keyCacheTtlMs).`);
    const table = (await ok(['keys', 'list', '--account', acct])).trimEnd().split('\n');
    expect(table).toHaveLength(3);
    expect(table[1]).toMatch(new RegExp(`^${old.id} +.* +${esc(old.createdAt)} +\\S+Z +never +- +expired$`));
    expect(table[2]).toMatch(new RegExp(` leaked +\\S+ +never +never +${old.id} +active$`));
    const again = await run(['keys', 'rotate', old.id]);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `ipokit keys rotate: The key "${old.id}" is revoked or expired: create a new key instead.\n` });
  });

  it("keeps an old key's own expiry when it comes before the overlap ends, and gives the new key that expiry: a rotated trial key stays a trial key", async () => {
    const acct = await account('paid');
    const old = await createKey(acct, 'short', '--expires', '2h');
    const next = JSON.parse(await ok(['keys', 'rotate', old.id, '--json'])) as Rotated;
    expect(next.oldKey).toEqual({ id: old.id, expiresAt: old.expiresAt });
    expect(next.expiresAt).toBe(old.expiresAt);
    // the table and the messages say when the new key stops, as the old one would have
    const trial = await createKey(acct, 'trial', '--expires', '30d');
    const r = await run(['keys', 'rotate', trial.id, '--overlap', '1h']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`\nexpiresAt        ${trial.expiresAt}\n`);
    expect(r.stderr.split('\n')[2]).toBe(`The new key expires at ${trial.expiresAt}, as the old one would have: rotating a key never extends its life.`);
    const rotated = (await listKeys(acct)).find((k) => k.rotatedFrom === trial.id);
    expect(rotated).toMatchObject({ label: 'trial', expiresAt: trial.expiresAt });
    expect(await ok(['keys', 'list', '--account', acct])).toMatch(new RegExp(`\n${rotated!.id} +.* +${esc(trial.expiresAt!)} +never +${trial.id} +active\n`));
  });

  it('refuses a revoked key or an unknown id with the core\'s message (exit 1)', async () => {
    const acct = await account('paid');
    const old = await createKey(acct, 'gone');
    await ok(['keys', 'revoke', old.id]);
    expect(await run(['keys', 'rotate', old.id, '--overlap', '1h'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `ipokit keys rotate: The key "${old.id}" is revoked or expired: create a new key instead.\n`,
    });
    expect(await run(['keys', 'rotate', 'key_nope'])).toEqual({ code: 1, stdout: '', stderr: 'ipokit keys rotate: No API key has the id "key_nope".\n' });
    expect(await listKeys(acct)).toHaveLength(1);
  });

  it('on the free plan: rotates the one key; another key during the overlap is refused (exit 1)', async () => {
    const acct = await account('free');
    const old = await createKey(acct, 'only');
    const next = JSON.parse(await ok(['keys', 'rotate', old.id, '--overlap', '1h', '--json'])) as Rotated;
    const again = await run(['keys', 'rotate', next.id]);
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "ipokit keys rotate: The account already holds the active keys its plan allows besides the one being rotated (free: 1, paid and pro: 100): wait for the last rotation's overlap to end, or revoke a key.\n",
    });
    const create = await run(['keys', 'create', '--account', acct, '--label', 'another']);
    expect(create.code).toBe(1);
    expect(create.stderr).toMatch(/^ipokit keys create: The free plan allows one active key/);
    // Once the old key is gone, the new one rotates.
    await ok(['keys', 'revoke', old.id]);
    await ok(['keys', 'rotate', next.id, '--overlap', '0', '-q']);
    expect((await listKeys(acct)).map((k) => k.label)).toEqual(['only', 'only', 'only']);
  });
});

describe("the server's key cap (maxKeysPerAccount)", () => {
  /** runCli with more environment, in `cwd`. */
  async function runWith(argv: string[], env: Record<string, string>, cwd = process.cwd()) {
    const out = capture({ ...db.io(env), cwd });
    const code = await runCli([...argv, '--schema', db.schema], out.io);
    return { code, stdout: out.stdout(), stderr: out.stderr() };
  }

  it('keys create refuses the 101st active key of a paid account (exit 1, the limit and how to free a slot said); a revoked key frees one', async () => {
    const acct = await account('paid');
    const store = postgresStore({ client: db.client, schema: db.schema });
    try {
      for (let i = 0; i < 99; i++) await createApiKey(store, { accountId: acct, label: `k${i}` });
    } finally {
      await store.close?.();
    }
    const hundredth = await createKey(acct, 'k99');
    expect(await run(['keys', 'create', '--account', acct, '--label', 'k100'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "ipokit keys create: The paid plan allows 100 active keys: revoke one (or wait for a rotated key's overlap to end) before creating another.\n",
    });
    await ok(['keys', 'revoke', hundredth.id]);
    expect((await createKey(acct, 'k100')).label).toBe('k100');
  });

  it('takes the cap from --max-keys-per-account, else IPOKIT_MAX_KEYS_PER_ACCOUNT, else the config file; off is no cap; a bad one is a usage error', async () => {
    const acct = await account('pro');
    await createKey(acct, 'one');
    await createKey(acct, 'two');
    const create = (label: string, more: string[] = [], env: Record<string, string> = {}, cwd?: string) =>
      runWith(['keys', 'create', '--account', acct, '--label', label, '-q', ...more], env, cwd);
    expect(await create('x', ['--max-keys-per-account', '2'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/The pro plan allows 2 active keys/) });
    expect(await create('x', [], { IPOKIT_MAX_KEYS_PER_ACCOUNT: '2' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/allows 2 active keys/) });
    const dir = await mkdtemp(join(tmpdir(), 'ipokit-keys-cap-'));
    try {
      await writeFile(join(dir, 'server.json'), JSON.stringify({ maxKeysPerAccount: 2 }));
      expect(await create('x', ['--config', 'server.json'], {}, dir)).toMatchObject({ code: 1, stderr: expect.stringMatching(/allows 2 active keys/) });
      expect(await create('x', [], { IPOKIT_CONFIG: 'server.json' }, dir)).toMatchObject({ code: 1, stderr: expect.stringMatching(/allows 2 active keys/) });
      // the flag over the variable over the file
      expect(await create('three', ['--config', 'server.json'], { IPOKIT_MAX_KEYS_PER_ACCOUNT: '3' }, dir)).toMatchObject({ code: 0 });
      expect(await create('four', ['--max-keys-per-account', 'off'], { IPOKIT_MAX_KEYS_PER_ACCOUNT: '3' })).toMatchObject({ code: 0 });
      // rotate and accounts update apply it too
      const [first] = await listKeys(acct);
      expect(await runWith(['keys', 'rotate', first!.id, '--max-keys-per-account', '3'], {})).toMatchObject({ code: 1, stderr: expect.stringMatching(/paid and pro: 3\)/) });
      expect(await runWith(['accounts', 'update', acct, '--plan', 'paid', '--config', 'server.json'], {}, dir)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'ipokit accounts update: The paid plan allows 2 active keys and this account holds more: revoke some before moving to it.\n',
      });
      expect(await runWith(['accounts', 'update', acct, '--plan', 'paid', '-q'], {})).toMatchObject({ code: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const bad = await create('x', ['--max-keys-per-account', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe('ipokit keys create: --max-keys-per-account must be a whole number of keys >= 1, or "off" for no cap, got "0"');
    expect((await create('x', [], { IPOKIT_MAX_KEYS_PER_ACCOUNT: 'lots' })).stderr).toMatch(/^ipokit keys create: IPOKIT_MAX_KEYS_PER_ACCOUNT must be a whole number of keys >= 1/);
    expect(await listKeys(acct)).toHaveLength(4);
  });
});

describe('ipokit keys list and accounts show', () => {
  it('print a key\'s expiry, last use and state: active, expired or revoked', async () => {
    const acct = await account('pro');
    const active = await createKey(acct, 'active', '--expires', '30d');
    const revoked = await createKey(acct, 'revoked');
    await ok(['keys', 'revoke', revoked.id]);
    const expired = await createKey(acct, 'rotated');
    const next = JSON.parse(await ok(['keys', 'rotate', expired.id, '--overlap', '0', '--json'])) as Rotated;
    // A server on this database records a request with the key (at most once a minute).
    const used = '2026-11-24T09:14:05.120Z';
    const store = postgresStore({ client: db.client, schema: db.schema });
    await store.recordKeyUse({ id: active.id, at: used });

    const table = await ok(['keys', 'list', '--account', acct]);
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +PREFIX +LABEL +CREATED +EXPIRES +LAST USED +ROTATED FROM +STATE$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${active.id} +${esc(active.prefix)}\\.\\.\\. +active +${esc(active.createdAt)} +${esc(active.expiresAt!)} +${esc(used)} +- +active$`)),
      expect.stringMatching(new RegExp(`^${revoked.id} +${esc(revoked.prefix)}\\.\\.\\. +revoked +${esc(revoked.createdAt)} +never +never +- +revoked$`)),
      expect.stringMatching(new RegExp(`^${expired.id} +${esc(expired.prefix)}\\.\\.\\. +rotated +${esc(expired.createdAt)} +${esc(next.oldKey.expiresAt!)} +never +- +expired$`)),
      expect.stringMatching(new RegExp(`^${next.id} +${esc(next.prefix)}\\.\\.\\. +rotated +${esc(next.createdAt)} +never +never +${expired.id} +active$`)),
    ]);
    // The columns line up.
    const at = lines[0]!.indexOf('STATE');
    for (const line of lines.slice(1)) expect(line.slice(at)).toMatch(/^(active|revoked|expired)$/);

    // --json: the core's rows as they are; --quiet: the ids.
    const json = await listKeys(acct);
    expect(json.map((k) => Object.keys(k).sort())).toEqual(Array(4).fill(['createdAt', 'expiresAt', 'id', 'label', 'lastUsedAt', 'prefix', 'revokedAt', 'rotatedFrom']));
    expect(json[0]).toEqual({ id: active.id, prefix: active.prefix, label: 'active', createdAt: active.createdAt, revokedAt: null, expiresAt: active.expiresAt, lastUsedAt: used, rotatedFrom: null });
    expect(json[3]!.rotatedFrom).toBe(expired.id);
    expect(json[1]!.revokedAt).toEqual(expect.any(String));
    expect(await ok(['keys', 'list', '--account', acct, '-q'])).toBe([active.id, revoked.id, expired.id, next.id].map((id) => `${id}\n`).join(''));

    // accounts show prints its keys the same way.
    const shown = await ok(['accounts', 'show', acct]);
    expect(shown.endsWith(`\n\n${table}`)).toBe(true);
    expect(JSON.parse(await ok(['accounts', 'show', acct, '--json'])).keys).toEqual(json);
  });
});
