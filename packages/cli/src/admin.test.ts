import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { runCli } from './index.js';
import { capture, cliRunner, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStore, SCHEMA_VERSION } from '@ipokit/storage-postgres';

// migrate, accounts and keys through runCli, on PGlite (io.openDatabase), or on the real
// PostgreSQL through DATABASE_URL when it is set.

let db: CliTestDatabase;

beforeAll(async () => {
  db = await openCliTestDatabase('admin');
});

afterAll(async () => {
  await db?.close();
});

const { run, ok } = cliRunner(() => db);

const KEY = /ipk_[A-Za-z0-9]{32}/g;

describe('ipokit migrate, accounts, keys', () => {
  it('refuses to work on a schema that is not migrated, saying to run ipokit migrate', async () => {
    const r = await run(['keys', 'list', '--account', 'acct_x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ipokit keys list: The PostgreSQL schema "ipokit_cli_admin_\w+" is not migrated; .*run 'ipokit migrate' first\.\n$/);
  });

  it('migrates, and says so again when there is nothing to do', async () => {
    expect(await ok(['migrate'])).toBe(`Migrated schema ${db.schema} to version ${SCHEMA_VERSION} (applied ${Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(', ')}).\n`);
    expect(await ok(['migrate'])).toBe(`Schema ${db.schema} is up to date (version ${SCHEMA_VERSION}).\n`);
  });

  it('creates an account: a short table, JSON, or the id alone', async () => {
    const table = await ok(['accounts', 'create', '--name', 'Acme Capital', '--plan', 'pro', '--gmp-addon']);
    expect(table).toMatch(/^id {9}acct_\w+\nname {7}Acme Capital\nplan {7}pro\ngmpAddon {3}yes\ncreatedAt {2}\d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    const json = JSON.parse(await ok(['accounts', 'create', '--name', 'Beta', '--plan', 'free', '--json']));
    expect(json).toEqual({ id: expect.stringMatching(/^acct_/), name: 'Beta', plan: 'free', gmpAddon: false, createdAt: expect.any(String) });
    expect(await ok(['accounts', 'create', '--name', 'Gamma', '--plan', 'paid', '-q'])).toMatch(/^acct_\w+\n$/);
  });

  it('refuses the GMP add-on on a plan other than pro (exit 2): it would mean nothing', async () => {
    for (const plan of ['free', 'paid']) {
      const r = await run(['accounts', 'create', '--name', 'Odd', '--plan', plan, '--gmp-addon']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--gmp-addon is for the pro plan/);
    }
    const id = (await ok(['accounts', 'create', '--name', 'Epsilon', '--plan', 'paid', '--quiet'])).trim();
    const r = await run(['accounts', 'update', id, '--gmp-addon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--gmp-addon is for the pro plan: account \S+ is on paid; add --plan pro/);
    expect((await run(['accounts', 'update', id, '--plan', 'free', '--gmp-addon'])).code).toBe(2);
    expect(JSON.parse(await ok(['accounts', 'update', id, '--plan', 'pro', '--gmp-addon', '--json']))).toMatchObject({ plan: 'pro', gmpAddon: true });
  });

  it('lists accounts by id, a page at a time, and shows one with its keys', async () => {
    const all = JSON.parse(await ok(['accounts', 'list', '--json', '--limit', '1000'])) as Array<{ id: string; name: string }>;
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all.map((a) => a.id)).toEqual([...all.map((a) => a.id)].sort());
    const [first, second] = all;
    expect(JSON.parse(await ok(['accounts', 'list', '--json', '--limit', '1']))).toEqual([first]);
    expect(JSON.parse(await ok(['accounts', 'list', '--json', '--after', first!.id, '--limit', '1']))).toEqual([second]);
    expect(await ok(['accounts', 'list', '--quiet'])).toBe(all.map((a) => `${a.id}\n`).join(''));
    const table = await ok(['accounts', 'list']);
    expect(table.split('\n')[0]).toMatch(/^ID +NAME +PLAN +GMP +CREATED$/);
    expect((await run(['accounts', 'list', '--limit', '0'])).code).toBe(2);

    const id = (await ok(['accounts', 'create', '--name', 'Zeta', '--plan', 'pro', '--gmp-addon', '--quiet'])).trim();
    await ok(['keys', 'create', '--account', id, '--label', 'zeta laptop', '-q']);
    const shown = await ok(['accounts', 'show', id]);
    expect(shown).toMatch(
      new RegExp(
        `^id +${id}\nname +Zeta\nplan +pro\ngmpAddon +yes\ncreatedAt +\\S+\n\n` +
          'WINDOW +QUOTA +USED +REMAINING +RESETS IN\nminute +6 +0 +6 +-\ngmp-minute +3 +0 +3 +-\n\n' +
          'ID +PREFIX +LABEL +CREATED +EXPIRES +LAST USED +ROTATED FROM +STATE\nkey_\\w+ +ipk_\\w{8}\\.\\.\\. +zeta laptop +\\S+ +never +never +- +active\n$',
      ),
    );
    const json = JSON.parse(await ok(['accounts', 'show', id, '--json']));
    expect(json).toMatchObject({ account: { id, name: 'Zeta', plan: 'pro', gmpAddon: true }, keys: [{ label: 'zeta laptop', revokedAt: null, expiresAt: null, lastUsedAt: null, rotatedFrom: null }] });
    expect(json.windows).toEqual([
      { name: 'minute', quota: 6, seconds: 60, remaining: 6, reset: 0 },
      { name: 'gmp-minute', quota: 3, seconds: 60, remaining: 3, reset: 0 },
    ]);
    const missing = await run(['accounts', 'show', 'acct_nobody']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No account has the id "acct_nobody"/);
  });

  it('shows the windows now, under the quotas of the server config file and IPOKIT_* variables, charging nothing', async () => {
    const id = (await ok(['accounts', 'create', '--name', 'Windows', '--plan', 'paid', '--quiet'])).trim();
    // Two requests 20 s ago and one GMP request, as a server on this database records them.
    const store = postgresStore({ client: db.client, schema: db.schema });
    const at = Date.now() - 20_000;
    expect((await store.hitRateLimit({ now: at, windows: [{ key: `acct:${id}`, quota: 6, ms: 60_000 }] })).admitted).toBe(true);
    expect((await store.hitRateLimit({ now: at + 1, windows: [{ key: `acct:${id}`, quota: 6, ms: 60_000 }, { key: `gmp:${id}`, quota: 3, ms: 60_000 }] })).admitted).toBe(true);
    const table = await ok(['accounts', 'show', id]);
    expect(table).toMatch(/\nWINDOW +QUOTA +USED +REMAINING +RESETS IN\nminute +6 +2 +4 +(39|40) s\ngmp-minute +3 +1 +2 +(39|40) s\n\nNo keys/);

    const dir = await mkdtemp(join(tmpdir(), 'ipokit-show-'));
    const config = join(dir, 'ipokit.config.json');
    await writeFile(config, JSON.stringify({ limits: { paid: { perMinute: 600, gmpPerMinute: 'off' } } }));
    const json = JSON.parse(await ok(['accounts', 'show', id, '--config', config, '--json']));
    expect(json.windows).toEqual([{ name: 'minute', quota: 600, seconds: 60, remaining: 598, reset: expect.any(Number) }]);
    // the environment, as ipokit serve reads it
    const out = capture({ ...db.io({ IPOKIT_CONFIG: config }) });
    expect(await runCli(['accounts', 'show', id, '--json', '--schema', db.schema], out.io)).toBe(0);
    expect(JSON.parse(out.stdout()).windows).toHaveLength(1);
    // nothing was charged by looking
    expect(JSON.parse(await ok(['accounts', 'show', id, '--json'])).windows.map((w: { remaining: number }) => w.remaining)).toEqual([4, 2]);
    await writeFile(config, JSON.stringify({ limits: { paid: { perMinute: 0 } } }));
    const bad = await run(['accounts', 'show', id, '--config', config]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/limits\.paid\.perMinute/);
    await rm(dir, { recursive: true });
  });

  it('updates an account plan and add-on; refuses what the core refuses (exit 1)', async () => {
    const id = (await ok(['accounts', 'create', '--name', 'Delta', '--plan', 'paid', '--quiet'])).trim();
    expect(JSON.parse(await ok(['accounts', 'update', id, '--plan', 'pro', '--gmp-addon', '--json']))).toMatchObject({ id, plan: 'pro', gmpAddon: true });
    expect(JSON.parse(await ok(['accounts', 'update', id, '--no-gmp-addon', '--json']))).toMatchObject({ id, plan: 'pro', gmpAddon: false });
    expect(await ok(['accounts', 'update', id, '--plan', 'paid', '-q'])).toBe(`${id}\n`);
    await ok(['keys', 'create', '--account', id, '--label', 'one', '-q']);
    await ok(['keys', 'create', '--account', id, '--label', 'two', '-q']);
    const refused = await run(['accounts', 'update', id, '--plan', 'free']);
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'ipokit accounts update: The free plan allows one active key: revoke the others before moving to it.\n' });
    const unknown = await run(['accounts', 'update', 'acct_nope', '--plan', 'pro']);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'ipokit accounts update: No account has the id "acct_nope".\n' });
    const badName = await run(['accounts', 'create', '--name', 'x'.repeat(201), '--plan', 'pro']);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toBe('ipokit accounts create: name must be a string of 1 to 200 characters.\n');
  });

  it('creates a key: shown once, with a line on stderr saying it will not be shown again', async () => {
    const account = (await ok(['accounts', 'create', '--name', 'Keys Inc', '--plan', 'pro', '-q'])).trim();
    const table = await run(['keys', 'create', '--account', account, '--label', 'prod server']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^id {9}key_\w+\naccount {4}acct_\w+\nlabel {6}prod server\ncreatedAt {2}\S+\nexpiresAt {2}never\nkey {8}ipk_[A-Za-z0-9]{32}\n$/);
    expect(table.stderr).toMatch(/^This is the only time key key_\w+ \(ipk_[A-Za-z0-9]{8}\.\.\.\) is shown: store it now\. ipokit keeps only its hash\.\n$/);
    expect(table.stderr.match(KEY)).toBeNull();

    const quiet = await run(['keys', 'create', '--account', account, '--label', 'laptop', '--quiet']);
    expect(quiet.stdout).toMatch(/^ipk_[A-Za-z0-9]{32}\n$/);
    expect(quiet.stderr).toContain('only time');
    const json = JSON.parse((await run(['keys', 'create', '--account', account, '--label', 'ci', '--json'])).stdout);
    expect(json).toEqual({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^ipk_/), prefix: json.key.slice(0, 12), label: 'ci', accountId: account, createdAt: expect.any(String), expiresAt: null });
  });

  it('lists keys with id, prefix, label and dates, and revokes them', async () => {
    const account = (await ok(['accounts', 'create', '--name', 'Lister', '--plan', 'paid', '-q'])).trim();
    const empty = await run(['keys', 'list', '--account', account]);
    expect(empty).toEqual({ code: 0, stdout: '', stderr: `Account ${account} has no keys: create one with 'ipokit keys create --account ${account} --label L'.\n` });
    expect(await ok(['keys', 'list', '--account', account, '--json'])).toBe('[]\n');
    const first = JSON.parse(await ok(['keys', 'create', '--account', account, '--label', 'first', '--json']));
    const second = JSON.parse(await ok(['keys', 'create', '--account', account, '--label', 'line\nbreak', '--json']));
    const table = await ok(['keys', 'list', '--account', account]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID +PREFIX +LABEL +CREATED +EXPIRES +LAST USED +ROTATED FROM +STATE$/);
    expect(lines[1]).toMatch(new RegExp(`^${first.id} +${first.prefix}\\.\\.\\. +first +${first.createdAt.replace(/\./g, '\\.')} +never +never +- +active$`));
    expect(lines[2]).toContain('line\\nbreak');
    expect(await ok(['keys', 'list', '--account', account, '-q'])).toBe(`${first.id}\n${second.id}\n`);

    expect(await ok(['keys', 'revoke', first.id])).toBe(`Revoked key ${first.id}. Servers on this database refuse it within 5 s (keyCacheTtlMs).\n`);
    expect(await ok(['keys', 'revoke', first.id])).toContain('Revoked'); // a no-op the second time
    const listed = JSON.parse(await ok(['keys', 'list', '--account', account, '--json']));
    expect(listed).toEqual([
      { id: first.id, prefix: first.prefix, label: 'first', createdAt: first.createdAt, revokedAt: expect.any(String), expiresAt: null, lastUsedAt: null, rotatedFrom: null },
      { id: second.id, prefix: second.prefix, label: 'line\nbreak', createdAt: second.createdAt, revokedAt: null, expiresAt: null, lastUsedAt: null, rotatedFrom: null },
    ]);
    expect(await run(['keys', 'revoke', 'key_nope'])).toEqual({ code: 1, stdout: '', stderr: 'ipokit keys revoke: No API key has the id "key_nope".\n' });
    expect(await run(['keys', 'list', '--account', 'acct_nope'])).toEqual({ code: 1, stdout: '', stderr: 'ipokit keys list: No account has the id "acct_nope".\n' });
  });

  it('holds the free plan to one active key (exit 1), and frees the slot on revoke', async () => {
    const account = (await ok(['accounts', 'create', '--name', 'Freebie', '--plan', 'free', '-q'])).trim();
    await ok(['keys', 'create', '--account', account, '--label', 'only', '-q']);
    const second = await run(['keys', 'create', '--account', account, '--label', 'another']);
    expect(second).toEqual({ code: 1, stdout: '', stderr: 'ipokit keys create: The free plan allows one active key: revoke it (or wait for a rotated key to expire) or upgrade before creating another.\n' });
    const [id] = (await ok(['keys', 'list', '--account', account, '-q'])).trim().split('\n');
    await ok(['keys', 'revoke', id!]);
    await ok(['keys', 'create', '--account', account, '--label', 'another', '-q']);
  });

  it('never prints a whole key when listing, whatever the labels (property)', async () => {
    const account = (await ok(['accounts', 'create', '--name', 'Property', '--plan', 'pro', '-q'])).trim();
    const created: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => [...s].length <= 100),
        fc.constantFrom('table', 'json', 'quiet'),
        fc.boolean(),
        async (label, output, revoke) => {
          const r = await run(['keys', 'create', '--account', account, `--label=${label}`, '--json']);
          expect(r.code, r.stderr).toBe(0);
          const key = JSON.parse(r.stdout) as { id: string; key: string };
          created.push(key.key);
          if (revoke) await ok(['keys', 'revoke', key.id]);
          const flag = output === 'table' ? [] : [`--${output}`];
          const listed = await run(['keys', 'list', '--account', account, ...flag]);
          expect(listed.code).toBe(0);
          const printed = listed.stdout + listed.stderr;
          for (const whole of created) expect(printed).not.toContain(whole);
          for (const whole of created) expect(printed).not.toContain(whole.slice(12));
          expect(printed.match(KEY)).toBeNull();
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
