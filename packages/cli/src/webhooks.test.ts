import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, importDataset, listDeliveries, type DeliveryInfo, type Store, type WebhookInfo, type WebhookStore } from '@ipokit/core';
import { startWebhookWorker, type WebhookTransport } from '@ipokit/webhooks';
import { storeOf } from './database.js';
import { runCli } from './index.js';
import { CliError } from './io.js';
import { capture, cliRunner, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';
import { deliveriesTable, eventsOf, webhookState, webhooksTable } from './webhooks.js';

// `ipokit webhooks create | list | delete | deliveries | replay` through runCli, on PGlite
// (io.openDatabase), or on the real PostgreSQL through DATABASE_URL when it is set. The
// deliveries are made by the core's worker through a transport that answers in-process.

let db: CliTestDatabase;
/** The same database through the store, for imports and the worker. */
let store: Store & WebhookStore;
/** Where config files are written. */
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-webhooks-'));
  db = await openCliTestDatabase('webhooks');
  expect(await runCli(['migrate', '--schema', db.schema], capture(db.io()).io)).toBe(0);
  store = storeOf(db);
});

afterAll(async () => {
  await store?.close?.();
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

const { run, ok } = cliRunner(() => db);

/** What `webhooks create --json` prints. */
interface Created extends WebhookInfo {
  secret: string;
  accountId: string;
}

const SECRET = /whsec_[A-Za-z0-9+/]{32}/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY = 86_400_000;
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function account(plan: 'free' | 'paid' | 'pro' = 'pro'): Promise<string> {
  return (await ok(['accounts', 'create', '--name', `Hooks ${plan}`, '--plan', plan, '-q'])).trim();
}

async function createHook(accountId: string, url: string, events = 'all', ...more: string[]): Promise<Created> {
  return JSON.parse(await ok(['webhooks', 'create', '--account', accountId, '--url', url, '--events', events, '--json', ...more])) as Created;
}

async function deliveriesOf(webhookId: string, ...more: string[]): Promise<DeliveryInfo[]> {
  return JSON.parse(await ok(['webhooks', 'deliveries', webhookId, '--json', ...more])) as DeliveryInfo[];
}

let ipoCount = 0;
/** `n` IPOs not stored yet, long listed (no status changes ahead), the first with a GMP snapshot. */
function newIpos(n: number): { ipos: unknown[]; gmp: unknown[] } {
  const ipos = Array.from({ length: n }, () => {
    const i = ++ipoCount;
    return { id: `20200${String(i).padStart(5, '0')}`, name: `Hook Test ${i} Ltd`, symbol: `HOOK${i}`, slug: `hook-test-${i}-ipo`, type: 'EQ', startDate: '2020-01-01', endDate: '2020-01-03', listingDate: '2020-01-08' };
  });
  return { ipos, gmp: [{ ipoId: (ipos[0] as { id: string }).id, timestamp: '2020-01-02T09:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12 }] }] };
}

/** Waits until `check` holds, looking every 50 ms. */
async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A transport that never leaves the process: a URL ending in /fail answers 500, any other 204. */
const answering: WebhookTransport = async (request) => ({ status: request.url.pathname.endsWith('/fail') ? 500 : 204 });

describe('--events and the tables', () => {
  it('--events: all, or a comma-separated list of types, each once in the contract order', () => {
    expect(eventsOf('all')).toEqual([...EVENT_TYPES]);
    expect(eventsOf('gmp.snapshot,ipo.created')).toEqual(['ipo.created', 'gmp.snapshot']);
    expect(eventsOf(' ipo.deleted , ipo.deleted,ipo.status_changed ')).toEqual(['ipo.deleted', 'ipo.status_changed']);
    expect(() => eventsOf('ipo.created,ipo.listed')).toThrow(
      new CliError('--events: unknown event type "ipo.listed": use all, or a comma-separated list of ipo.created, ipo.updated, ipo.deleted, ipo.status_changed, gmp.snapshot, subscription.snapshot'),
    );
    for (const bad of ['', ',', 'ipo.created,', 'ipo.created,,gmp.snapshot']) {
      expect(() => eventsOf(bad), bad).toThrow(/^--events must be all, or a comma-separated list of ipo\.created, .*; got /);
    }
    expect(() => eventsOf('all,ipo.created')).toThrow(/unknown event type "all"/);
    expect(() => eventsOf('ALL')).toThrow(/unknown event type "ALL"/);
  });

  it('an endpoint is enabled, or disabled since when it was; EVENTS is all when it takes every type', () => {
    expect(webhookState({ disabledAt: null })).toBe('enabled');
    expect(webhookState({ disabledAt: '2026-11-29T10:00:00.000Z' })).toBe('disabled since 2026-11-29T10:00:00.000Z');
    const hook: WebhookInfo = { id: 'wh_1', url: 'https://example.com/hooks/ipo', events: [...EVENT_TYPES], description: 'alerts', createdAt: '2026-11-24T09:14:05.120Z', disabledAt: null, pausedAt: null };
    expect(webhooksTable([hook, { ...hook, id: 'wh_2', events: ['ipo.created', 'gmp.snapshot'], description: null, disabledAt: '2026-11-29T10:00:00.000Z' }])).toBe(
      'ID    URL                            EVENTS                    STATE                                    CREATED                   DESCRIPTION\n' +
        'wh_1  https://example.com/hooks/ipo  all                       enabled                                  2026-11-24T09:14:05.120Z  alerts\n' +
        'wh_2  https://example.com/hooks/ipo  ipo.created,gmp.snapshot  disabled since 2026-11-29T10:00:00.000Z  2026-11-24T09:14:05.120Z\n',
    );
    expect(webhooksTable([{ ...hook, description: 'two\nlines' }])).toContain(' two\\nlines\n');
  });

  it('a delivery row: - where there is nothing yet', () => {
    const base: DeliveryInfo = {
      id: 'dlv_1',
      eventId: 'evt_1',
      eventType: 'ipo.created',
      state: 'pending',
      attempts: 0,
      createdAt: '2026-11-24T09:14:05.120Z',
      nextAttemptAt: '2026-11-24T09:14:05.120Z',
      lastAttemptAt: null,
      lastStatus: null,
      lastError: null,
    };
    expect(deliveriesTable([base, { ...base, id: 'dlv_2', state: 'failed', attempts: 8, nextAttemptAt: null, lastStatus: null, lastError: 'connection refused' }])).toBe(
      'ID     EVENT  TYPE         STATE    ATTEMPTS  LAST STATUS  NEXT ATTEMPT              LAST ERROR\n' +
        'dlv_1  evt_1  ipo.created  pending  0         -            2026-11-24T09:14:05.120Z  -\n' +
        'dlv_2  evt_1  ipo.created  failed   8         -            -                         connection refused\n',
    );
  });
});

describe('ipokit webhooks create', () => {
  it('opens networks with --webhook-allow-network (repeatable), IPOKIT_WEBHOOK_ALLOW_NETWORKS or the config file, as the server does', async () => {
    const acct = await account();
    const create = (url: string, more: string[] = [], env: Record<string, string> = {}) => {
      const out = capture({ ...db.io(env), cwd: dir });
      return runCli(['webhooks', 'create', '--account', acct, '--url', url, '--events', 'all', '-q', '--schema', db.schema, ...more], out.io).then((code) => ({ code, stderr: out.stderr() }));
    };
    expect((await create('http://10.1.2.3/h')).code).toBe(1);
    expect(await create('http://10.1.2.3/h', ['--webhook-allow-network', '127.0.0.0/8', '--webhook-allow-network', '10.1.0.0/16'])).toMatchObject({ code: 0 });
    expect(await create('http://[::1]:9/h', [], { IPOKIT_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8, ::1/128' })).toMatchObject({ code: 0 });
    await writeFile(join(dir, 'allow.json'), JSON.stringify({ webhookAllowedNetworks: ['192.168.0.0/16'] }));
    expect(await create('http://192.168.7.7/h', ['--config', 'allow.json'])).toMatchObject({ code: 0 });
    expect((await create('http://192.168.7.7/h')).code).toBe(1);
    expect(await create('https://example.com/h', ['--webhook-allow-network', '10.1.2.3/16'])).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^ipokit webhooks create: --webhook-allow-network must be a list of CIDRs \(e\.g\. 10\.1\.0\.0\/16, ::1\/128\): "10\.1\.2\.3\/16" has bits set past its \/16: did you mean 10\.1\.0\.0\/16\?, got "10\.1\.2\.3\/16"\n/),
    });
  });

  it('prints the endpoint and its secret, once, with a line on stderr saying so', async () => {
    const acct = await account();
    const r = await run(['webhooks', 'create', '--account', acct, '--url', 'https://example.com/hooks/ipo', '--events', 'gmp.snapshot,ipo.created', '--description', 'price alerts']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^id {11}wh_\\w+\\naccount {6}${acct}\\nurl {10}https://example\\.com/hooks/ipo\\nevents {7}ipo\\.created, gmp\\.snapshot\\n` +
          `description {2}price alerts\\ncreatedAt {4}\\d{4}-\\S+Z\\nsecret {7}${SECRET.source}\\n$`,
      ),
    );
    const id = /^id +(\S+)/.exec(r.stdout)![1]!;
    expect(r.stderr).toBe(`This is the only time the signing secret of webhook ${id} is shown: store it now, where the receiver verifies deliveries with it.\n`);
    // Without a description, no row for it; an http: URL gets a note on stderr.
    const plain = await run(['webhooks', 'create', '--account', acct, '--url', 'http://127.0.0.1:9/hook', '--events', 'all', '--webhook-allow-network', '127.0.0.0/8']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('description');
    expect(plain.stdout).toMatch(/\nevents {5}ipo\.created, ipo\.updated, ipo\.deleted, ipo\.status_changed, gmp\.snapshot, subscription\.snapshot\n/);
    expect(plain.stderr.split('\n')[1]).toBe(
      'Its URL is http:, which a worker sends to only with --allow-insecure-webhooks (IPOKIT_ALLOW_INSECURE_WEBHOOKS): use https: beyond local tests.',
    );
    expect(plain.stderr).not.toMatch(SECRET);
  });

  it('--json prints the endpoint as stored with its secret; --quiet the secret alone', async () => {
    const acct = await account();
    const before = Date.now();
    const json = await createHook(acct, 'HTTPS://Example.COM:443/hooks/%7Eipo?x=1', 'ipo.status_changed,ipo.created,ipo.created');
    expect(json).toEqual({
      id: expect.stringMatching(/^wh_[A-Za-z0-9]{20}$/),
      secret: expect.stringMatching(new RegExp(`^${SECRET.source}$`)),
      accountId: acct,
      url: 'https://example.com/hooks/%7Eipo?x=1',
      events: ['ipo.created', 'ipo.status_changed'],
      description: null,
      createdAt: expect.stringMatching(ISO),
      disabledAt: null,
    });
    expect(Object.keys(json)).toEqual(['id', 'secret', 'accountId', 'url', 'events', 'description', 'createdAt', 'disabledAt']);
    expect(Date.parse(json.createdAt)).toBeGreaterThanOrEqual(before - 1);
    const quiet = await run(['webhooks', 'create', '--account', acct, '--url', 'https://example.com/q', '--events', 'all', '-q', '--description', 'q']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(new RegExp(`^${SECRET.source}\\n$`));
    expect(quiet.stderr).toMatch(/^This is the only time the signing secret of webhook wh_\w+ is shown/);
    const listed = JSON.parse(await ok(['webhooks', 'list', '--account', acct, '--json'])) as WebhookInfo[];
    expect(listed.map((h) => [h.url, h.events, h.description])).toEqual([
      ['https://example.com/hooks/%7Eipo?x=1', ['ipo.created', 'ipo.status_changed'], null],
      ['https://example.com/q', [...EVENT_TYPES], 'q'],
    ]);
  });

  it("refuses an unknown account, a plan without webhooks and a bad URL with the core's message (exit 1), creating nothing", async () => {
    const create = (accountId: string, url = 'https://example.com/hooks') => run(['webhooks', 'create', '--account', accountId, '--url', url, '--events', 'all']);
    expect(await create('acct_nope')).toEqual({ code: 1, stdout: '', stderr: 'ipokit webhooks create: No account has the id "acct_nope".\n' });
    for (const plan of ['free', 'paid'] as const) {
      const acct = await account(plan);
      expect(await create(acct)).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks create: Webhooks need the pro plan: this account is on ${plan}.\n` });
      expect(await ok(['webhooks', 'list', '--account', acct, '--json'])).toBe('[]\n');
    }
    const pro = await account();
    for (const [url, message] of [
      ['example.com/hooks', 'url must be an absolute http: or https: URL, e.g. https://example.com/hooks/ipo.'],
      ['ftp://example.com/hooks', 'url must be an http: or https: URL (got ftp:).'],
      ['https://example.com/hooks#top', 'url must not have a #fragment: it is never sent.'],
      [`https://example.com/${'x'.repeat(2100)}`, 'url must be an absolute http: or https: URL of at most 2048 characters.'],
    ] as const) {
      expect(await create(pro, url), url).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks create: ${message}\n` });
    }
    // The operator's own network (docs/spec.md#webhooks): refused unless --webhook-allow-network opens it.
    for (const url of ['http://127.0.0.1:9/hook', 'http://2130706433:9/hook', 'http://[::1]:9/hook', 'http://localhost:9/hook', 'http://10.0.0.5/hook', 'http://169.254.169.254/']) {
      const r = await create(pro, url);
      expect(r.code, url).toBe(1);
      expect(r.stderr, url).toMatch(/^ipokit webhooks create: url's host \S+ is (this machine|not a public internet address): webhooks are sent to the public internet only/);
    }
    expect((await create(pro, 'https://alice:s3cret@example.com/h')).stderr).toBe(
      'ipokit webhooks create: url must not carry credentials (user:password@): they would be stored and listed; authenticate the request by its webhook-signature.\n',
    );
    expect(await ok(['webhooks', 'list', '--account', pro, '--json'])).toBe('[]\n');
    const long = await run(['webhooks', 'create', '--account', pro, '--url', 'https://example.com/h', '--events', 'all', '--description', 'd'.repeat(201)]);
    expect(long).toEqual({ code: 1, stdout: '', stderr: 'ipokit webhooks create: description must be a string of at most 200 characters.\n' });
    expect(await ok(['webhooks', 'list', '--account', pro, '--json'])).toBe('[]\n');
  });

  it.each([
    [['--events', 'ipo.listed'], 'ipokit webhooks create: --events: unknown event type "ipo.listed": use all, or a comma-separated list of ipo.created, ipo.updated, ipo.deleted, ipo.status_changed, gmp.snapshot, subscription.snapshot'],
    [['--events', 'ipo.created,'], 'ipokit webhooks create: --events must be all, or a comma-separated list of ipo.created, ipo.updated, ipo.deleted, ipo.status_changed, gmp.snapshot, subscription.snapshot; got "ipo.created,"'],
    [['--events', ''], 'ipokit webhooks create: --events must not be empty'],
    [['--events', 'all', '--description', ''], 'ipokit webhooks create: --description must not be empty (leave it out for none)'],
    [['--events', 'all', '--json', '-q'], 'ipokit webhooks create: give --json or --quiet, not both'],
    [[], 'ipokit webhooks create: missing option --events'],
  ])('refuses %j as a usage error (exit 2), before touching the database', async (args, line) => {
    const r = await run(['webhooks', 'create', '--account', 'acct_any', '--url', 'https://example.com/hooks', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe(line);
    expect(lines[1]).toBe('Usage: ipokit webhooks create --account ID --url URL --events TYPES [--description TEXT] [--webhook-allow-network CIDR]... [--config FILE] [--json | --quiet] [--schema S]');
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe("Run 'ipokit webhooks --help' for details.");
  });

  it.each([
    [['create', '--url', 'https://x.test', '--events', 'all'], 'ipokit webhooks create: missing option --account'],
    [['create', '--account', 'a', '--events', 'all'], 'ipokit webhooks create: missing option --url'],
    [['create', '--account', 'a', '--url', 'https://x.test', '--events', 'all', 'extra'], 'ipokit webhooks create: unexpected argument "extra"'],
    [['list'], 'ipokit webhooks list: missing option --account'],
    [['list', '--account', 'a', '--json', '-q'], 'ipokit webhooks list: give --json or --quiet, not both'],
    [['delete'], 'ipokit webhooks delete: missing argument ID'],
    [['delete', ''], 'ipokit webhooks delete: ID must not be empty'],
    [['delete', 'wh_1', '--json'], 'ipokit webhooks delete: unknown option --json'],
    [['deliveries'], 'ipokit webhooks deliveries: missing argument ID'],
    [['deliveries', 'wh_1', '--limit', '0'], 'ipokit webhooks deliveries: --limit must be a whole number from 1 to 100, got "0"'],
    [['deliveries', 'wh_1', '--limit', '101'], 'ipokit webhooks deliveries: --limit must be a whole number from 1 to 100, got "101"'],
    [['deliveries', 'wh_1', '--before', ''], 'ipokit webhooks deliveries: --before must not be empty'],
    [['deliveries', 'wh_1', '-q'], 'ipokit webhooks deliveries: unknown option -q'],
    [['replay', 'wh_1'], 'ipokit webhooks replay: missing argument DELIVERY_ID'],
    [['replay', 'wh_1', 'dlv_1', 'dlv_2'], 'ipokit webhooks replay: unexpected argument "dlv_2"'],
    [['replay', '', 'dlv_1'], 'ipokit webhooks replay: WEBHOOK_ID must not be empty'],
    [['show', 'wh_1'], 'ipokit webhooks: unknown action "show": create, list, delete, deliveries, replay, pause, resume, rotate-secret or test'],
  ])('%j: one line, the usage, exit 2', async (args, line) => {
    const r = await run(['webhooks', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe(line);
    expect(r.stderr.split('\n')[1]).toMatch(/^Usage: ipokit webhooks create /);
  });

  it('no action: one line, the usage, exit 2', async () => {
    const out = capture(db.io());
    expect(await runCli(['webhooks'], out.io)).toBe(2);
    expect(out.stderr().split('\n').slice(0, 2)).toEqual(['ipokit webhooks: missing action: create, list, delete, deliveries, replay, pause, resume, rotate-secret or test', expect.stringMatching(/^Usage: ipokit webhooks create /)]);
  });
});

describe('ipokit webhooks list and delete', () => {
  it('lists an account\'s endpoints (never a secret): a table, JSON or the ids', async () => {
    const acct = await account();
    const empty = await run(['webhooks', 'list', '--account', acct]);
    expect(empty).toEqual({ code: 0, stdout: '', stderr: `Account ${acct} has no webhooks: create one with 'ipokit webhooks create --account ${acct} --url URL --events all'.\n` });
    expect(await ok(['webhooks', 'list', '--account', acct, '-q'])).toBe('');
    const a = await createHook(acct, 'https://example.com/a', 'all', '--description', 'everything');
    const b = await createHook(acct, 'https://example.com/b', 'ipo.status_changed,ipo.deleted');
    const table = await ok(['webhooks', 'list', '--account', acct]);
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +URL +EVENTS +STATE +CREATED +DESCRIPTION$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${a.id} +https://example\\.com/a +all +enabled +${esc(a.createdAt)} +everything$`)),
      expect.stringMatching(new RegExp(`^${b.id} +https://example\\.com/b +ipo\\.deleted,ipo\\.status_changed +enabled +${esc(b.createdAt)}$`)),
    ]);
    const json = JSON.parse(await ok(['webhooks', 'list', '--account', acct, '--json'])) as WebhookInfo[];
    const { secret: _a, accountId: _aa, ...aInfo } = a;
    const { secret: _b, accountId: _ba, ...bInfo } = b;
    expect(json).toEqual([{ ...aInfo, pausedAt: null }, { ...bInfo, pausedAt: null }]);
    expect(await ok(['webhooks', 'list', '--account', acct, '--quiet'])).toBe(`${a.id}\n${b.id}\n`);
    for (const out of [table, JSON.stringify(json)]) expect(out).not.toMatch(SECRET);
    expect(await run(['webhooks', 'list', '--account', 'acct_nope'])).toEqual({ code: 1, stdout: '', stderr: 'ipokit webhooks list: No account has the id "acct_nope".\n' });
  });

  it('deletes an endpoint and its deliveries; an unknown id is refused (exit 1)', async () => {
    const acct = await account();
    const keep = await createHook(acct, 'https://example.com/keep');
    const gone = await createHook(acct, 'https://example.com/gone');
    await importDataset(store, newIpos(1));
    expect(await deliveriesOf(gone.id)).toHaveLength(2);
    expect(await ok(['webhooks', 'delete', gone.id])).toBe(`Deleted webhook ${gone.id} and its deliveries: nothing more is sent to it.\n`);
    expect(await ok(['webhooks', 'list', '--account', acct, '-q'])).toBe(`${keep.id}\n`);
    expect(await run(['webhooks', 'delete', gone.id])).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks delete: No webhook has the id "${gone.id}".\n` });
    expect(await run(['webhooks', 'deliveries', gone.id])).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks deliveries: No webhook has the id "${gone.id}".\n` });
    expect(await deliveriesOf(keep.id)).toHaveLength(2);
  });
});

describe('ipokit webhooks pause, resume, rotate-secret and test', () => {
  it('pauses and resumes an endpoint, rotates its secret with an overlap (printed once), and sends it a test event', async () => {
    const acct = await account();
    const hook = await createHook(acct, 'https://example.com/t');
    const paused = JSON.parse(await ok(['webhooks', 'pause', hook.id, '--json'])) as WebhookInfo;
    expect(paused.pausedAt).toMatch(ISO);
    expect(await run(['webhooks', 'test', hook.id])).toMatchObject({ code: 1, stderr: expect.stringMatching(/paused/) });
    expect(await ok(['webhooks', 'resume', hook.id])).toBe(`Resumed webhook ${hook.id}: its waiting deliveries are due now.\n`);
    const rotated = JSON.parse(await ok(['webhooks', 'rotate-secret', hook.id, '--overlap-seconds', '60', '--json'])) as { secret: string; previousSecretExpiresAt: string };
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    expect((await run(['webhooks', 'rotate-secret', hook.id, '--overlap-seconds', '604801'])).code).toBe(2);
    const id = (await ok(['webhooks', 'test', hook.id, '-q'])).trim();
    expect((await deliveriesOf(hook.id)).map((d) => [d.id, d.eventType])).toContainEqual([id, 'webhook.test']);
    expect((await run(['webhooks', 'pause', 'wh_nope'])).code).toBe(1);
  });
});

describe('ipokit webhooks deliveries and replay', () => {
  it('lists deliveries newest first, as they are made: pending, delivered, retried, and pages with --limit and --before', async () => {
    const acct = await account();
    const good = await createHook(acct, 'https://receiver.test/ok');
    const bad = await createHook(acct, 'https://receiver.test/fail', 'ipo.created');
    const idle = await createHook(acct, 'https://receiver.test/idle', 'ipo.deleted');
    const noneYet = await run(['webhooks', 'deliveries', idle.id]);
    expect(noneYet).toEqual({ code: 0, stdout: '', stderr: `Webhook ${idle.id} has no deliveries yet: one is made for each event of the types it takes.\n` });
    expect(await ok(['webhooks', 'deliveries', idle.id, '--json'])).toBe('[]\n');

    // 3 new IPOs, the first with a snapshot: 4 events for `good` (all types), 3 for `bad`.
    await importDataset(store, newIpos(3));
    const pending = await deliveriesOf(good.id);
    expect(pending.map((d) => d.eventType).sort()).toEqual(['gmp.snapshot', 'ipo.created', 'ipo.created', 'ipo.created']);
    expect(pending.every((d) => d.state === 'pending' && d.attempts === 0 && d.lastStatus === null && d.lastError === null && d.nextAttemptAt !== null)).toBe(true);
    expect(pending.map((d) => Object.keys(d))).toEqual(
      Array(4).fill(['id', 'eventId', 'eventType', 'state', 'attempts', 'createdAt', 'nextAttemptAt', 'lastAttemptAt', 'lastStatus', 'lastError']),
    );
    expect(pending).toEqual(await listDeliveries(store, { webhookId: good.id }));
    const pendingTable = (await ok(['webhooks', 'deliveries', good.id])).trimEnd().split('\n');
    expect(pendingTable[0]).toMatch(/^ID +EVENT +TYPE +STATE +ATTEMPTS +LAST STATUS +NEXT ATTEMPT +LAST ERROR$/);
    expect(pendingTable.slice(1)).toEqual(pending.map((d) => expect.stringMatching(new RegExp(`^${d.id} +${d.eventId} +${esc(d.eventType)} +pending +0 +- +${esc(d.nextAttemptAt!)} +-$`))));

    // A worker makes the first attempts: `good` answers 204, `bad` 500.
    const failures: unknown[] = [];
    const worker = startWebhookWorker(store, { transport: answering, onError: (err) => failures.push(err) });
    try {
      await until('the first attempts', async () => (await deliveriesOf(good.id)).every((d) => d.state === 'delivered') && (await deliveriesOf(bad.id)).every((d) => d.attempts === 1));
    } finally {
      await worker.stop();
    }
    expect(failures).toEqual([]);
    const delivered = await deliveriesOf(good.id);
    expect(delivered.map((d) => d.id)).toEqual(pending.map((d) => d.id));
    expect(delivered.every((d) => d.attempts === 1 && d.lastStatus === 204 && d.nextAttemptAt === null && d.lastError === null)).toBe(true);
    const goodTable = (await ok(['webhooks', 'deliveries', good.id])).trimEnd().split('\n');
    expect(goodTable.slice(1)).toEqual(delivered.map((d) => expect.stringMatching(new RegExp(`^${d.id} +${d.eventId} +${esc(d.eventType)} +delivered +1 +204 +- +-$`))));
    const retried = await deliveriesOf(bad.id);
    expect(retried).toHaveLength(3);
    for (const d of retried) {
      expect(d).toMatchObject({ eventType: 'ipo.created', state: 'pending', attempts: 1, lastStatus: 500, lastError: 'answered 500' });
      // the first retry, 5 s after the attempt
      expect(Date.parse(d.nextAttemptAt!) - Date.parse(d.lastAttemptAt!)).toBe(5_000);
    }
    const badTable = (await ok(['webhooks', 'deliveries', bad.id])).trimEnd().split('\n');
    expect(badTable.slice(1)).toEqual(retried.map((d) => expect.stringMatching(new RegExp(`^${d.id} +${d.eventId} +ipo\\.created +pending +1 +500 +${esc(d.nextAttemptAt!)} +answered 500$`))));

    // Pages: --limit, then --before the last one shown, as the hint on stderr says.
    const first = await run(['webhooks', 'deliveries', good.id, '--limit', '3']);
    expect(first.code).toBe(0);
    expect(first.stdout.trimEnd().split('\n').slice(1).map((l) => l.split(' ')[0])).toEqual(delivered.slice(0, 3).map((d) => d.id));
    expect(first.stderr).toBe(`More may follow: --before ${delivered[2]!.id}\n`);
    const rest = await run(['webhooks', 'deliveries', good.id, '--limit', '3', '--before', delivered[2]!.id]);
    expect(rest.stdout.trimEnd().split('\n').slice(1).map((l) => l.split(' ')[0])).toEqual([delivered[3]!.id]);
    expect(rest.stderr).toBe('');
    expect(await deliveriesOf(good.id, '--limit', '2', '--before', delivered[0]!.id)).toEqual(delivered.slice(1, 3));
    const past = await run(['webhooks', 'deliveries', good.id, '--before', delivered[3]!.id]);
    expect(past).toEqual({ code: 0, stdout: '', stderr: `Webhook ${good.id} has no delivery older than ${delivered[3]!.id} (or ${delivered[3]!.id} is not one of its deliveries).\n` });
    expect(await run(['webhooks', 'deliveries', 'wh_nope'])).toEqual({ code: 1, stdout: '', stderr: 'ipokit webhooks deliveries: No webhook has the id "wh_nope".\n' });
  }, 60_000);

  it('replays a settled delivery as a new one, due now, of the same event, and a pending one not at all; refuses unknown ids and a disabled endpoint (exit 1)', async () => {
    const acct = await account();
    const hook = await createHook(acct, 'https://receiver.test/fail', 'ipo.created');
    const other = await createHook(acct, 'https://receiver.test/other', 'ipo.created');
    await importDataset(store, newIpos(1));
    const [original] = await deliveriesOf(hook.id);
    const [ofOther] = await deliveriesOf(other.id);

    // Still pending: a replay adds nothing (docs/spec.md#webhooks: replays are bounded).
    const pending = await run(['webhooks', 'replay', hook.id, original!.id]);
    expect(pending).toEqual({
      code: 0,
      stdout: `${original!.id} is still pending (next attempt ${original!.nextAttemptAt}): a replay adds nothing; a worker sends it when it is due.\n`,
      stderr: '',
    });
    expect(JSON.parse(await ok(['webhooks', 'replay', hook.id, original!.id, '--json']))).toEqual(original);
    expect(await deliveriesOf(hook.id)).toEqual([original]);

    // Delivered: a replay is a new delivery of the same event, due now.
    const deliver = startWebhookWorker(store, { transport: answering });
    try {
      await until('the delivery to the other endpoint', async () => (await deliveriesOf(other.id))[0]!.state === 'delivered');
    } finally {
      await deliver.stop();
    }
    const r = await run(['webhooks', 'replay', other.id, ofOther!.id]);
    expect(r.code, r.stderr).toBe(0);
    const [again] = await deliveriesOf(other.id);
    expect(again!.id).not.toBe(ofOther!.id);
    expect(again).toMatchObject({ eventId: ofOther!.eventId, eventType: 'ipo.created', state: 'pending', attempts: 0, lastStatus: null });
    expect(r).toEqual({
      code: 0,
      stdout: `Replaying ${ofOther!.id} as ${again!.id}: event ${ofOther!.eventId} (ipo.created) is due now, for the next worker on this database to send (with the same webhook-id, so the receiver can tell it is a repeat).\n`,
      stderr: '',
    });
    // Twenty more replays of it while one is pending add nothing either.
    for (let i = 0; i < 20; i++) await ok(['webhooks', 'replay', other.id, again!.id, '-q']);
    expect(await deliveriesOf(other.id)).toHaveLength(2);

    expect(await run(['webhooks', 'replay', hook.id, 'dlv_nope'])).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks replay: Webhook "${hook.id}" has no delivery "dlv_nope".\n` });
    expect(await run(['webhooks', 'replay', hook.id, ofOther!.id])).toEqual({ code: 1, stdout: '', stderr: `ipokit webhooks replay: Webhook "${hook.id}" has no delivery "${ofOther!.id}".\n` });
    expect(await run(['webhooks', 'replay', 'wh_nope', original!.id])).toEqual({ code: 1, stdout: '', stderr: 'ipokit webhooks replay: No webhook has the id "wh_nope".\n' });

    // Failing for 5 days disables the endpoint: a worker fails now, then one whose clock is 6 days on.
    const failNow = startWebhookWorker(store, { transport: answering });
    try {
      await until('the first failures', async () => (await deliveriesOf(hook.id)).every((d) => d.attempts >= 1));
    } finally {
      await failNow.stop();
    }
    const later = startWebhookWorker(store, { transport: answering, now: () => new Date(Date.now() + 6 * DAY) });
    let disabledAt = '';
    try {
      await until('the endpoint disabled', async () => {
        const [listed] = (JSON.parse(await ok(['webhooks', 'list', '--account', acct, '--json'])) as WebhookInfo[]).filter((h) => h.id === hook.id);
        disabledAt = listed?.disabledAt ?? '';
        return disabledAt !== '';
      });
    } finally {
      await later.stop();
    }
    expect(await ok(['webhooks', 'list', '--account', acct])).toMatch(new RegExp(`\\n${hook.id} +https://receiver\\.test/fail +ipo\\.created +disabled since ${esc(disabledAt)} +`));
    expect(await run(['webhooks', 'replay', hook.id, original!.id])).toEqual({
      code: 1,
      stdout: '',
      stderr: `ipokit webhooks replay: The webhook was disabled at ${disabledAt} after failing for 5 days: create a new one to send to it again.\n`,
    });
  }, 60_000);
});

describe('ipokit webhooks without a database', () => {
  it('says how to set DATABASE_URL (exit 2)', async () => {
    for (const argv of [
      ['webhooks', 'create', '--account', 'a', '--url', 'https://x.test', '--events', 'all'],
      ['webhooks', 'list', '--account', 'a'],
      ['webhooks', 'delete', 'wh_1'],
      ['webhooks', 'deliveries', 'wh_1'],
      ['webhooks', 'replay', 'wh_1', 'dlv_1'],
    ]) {
      const out = capture({ env: {} });
      expect(await runCli(argv, out.io), argv.join(' ')).toBe(2);
      expect(out.stderr().split('\n')[0]).toBe(`ipokit ${argv.slice(0, 2).join(' ')}: set DATABASE_URL=postgres://user:password@host:5432/database to say which PostgreSQL to use`);
    }
  });
});
