import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importDataset, IpokitError, type DeliveryInfo, type Store, type WebhookStore } from '@ipokit/core';
import { resolveSettings } from './config.js';
import { storeOf } from './database.js';
import { runCli } from './index.js';
import type { CliIo } from './io.js';
import { capture, cliRunner, openCliTestDatabase, type CliTestDatabase } from './test-helpers.js';
import { startNodeWorker, workerOptions, workerText } from './worker.js';

// `ipokit worker`, in process and as a real process, and the worker inside `ipokit serve`:
// events recorded by an import reach a local receiver (node:http on 127.0.0.1), signed as
// the standardwebhooks package verifies; on stop the attempts under way finish first.

const BIN = fileURLToPath(new URL('./bin.ts', import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL || undefined;

let db: CliTestDatabase;
let store: Store & WebhookStore;
let dir: string;

beforeAll(async () => {
  db = await openCliTestDatabase('worker');
  expect(await runCli(['migrate', '--schema', db.schema], capture(db.io()).io)).toBe(0);
  store = storeOf(db);
  dir = await mkdtemp(join(tmpdir(), 'ipokit-worker-'));
  await writeFile(join(dir, 'one.json'), JSON.stringify(newIpo().dataset));
});

afterAll(async () => {
  await store?.close?.();
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

const { ok } = cliRunner(() => db);

/** The receivers are local: the workers and servers here open loopback explicitly (docs/spec.md#webhooks). */
const LOCAL_ENV = { IPOKIT_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8,::1/128' };

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  /** Where to send, `http://127.0.0.1:PORT/hooks/ipo`. */
  url: string;
  received: Received[];
  /** Resolves once `n` requests have arrived (their answers may still be held back). */
  arrived(n?: number, ms?: number): Promise<void>;
  /** Requests answered so far. */
  answered(): number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A local endpoint that answers 204, after `delayMs`. */
async function receiver(delayMs = 0): Promise<Receiver> {
  const received: Received[] = [];
  let answered = 0;
  const waiting = new Set<() => void>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      for (const w of waiting) w();
      setTimeout(() => {
        res.writeHead(204).end();
        answered++;
      }, delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/ipo`,
    received,
    answered: () => answered,
    arrived: (n = 1, ms = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < n) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`the receiver got ${received.length} requests in ${ms} ms, not ${n}`));
        }, ms);
        waiting.add(check);
        check();
      }),
  };
}

/** The delivery as the standardwebhooks package verifies it with the endpoint's secret. */
function verified(got: Received, secret: string): { type: string; data: { id?: string } } {
  return new Webhook(secret).verify(got.body, {
    'webhook-id': String(got.headers['webhook-id']),
    'webhook-timestamp': String(got.headers['webhook-timestamp']),
    'webhook-signature': String(got.headers['webhook-signature']),
  }) as { type: string; data: { id?: string } };
}

/** A pro account with an endpoint at `url` for ipo.created: its ids and secret. */
async function endpoint(url: string): Promise<{ accountId: string; id: string; secret: string }> {
  const accountId = (await ok(['accounts', 'create', '--name', 'Receiver', '--plan', 'pro', '-q'])).trim();
  const { id, secret } = JSON.parse(await ok(['webhooks', 'create', '--account', accountId, '--url', url, '--events', 'ipo.created', '--webhook-allow-network', '127.0.0.0/8', '--json'])) as { id: string; secret: string };
  return { accountId, id, secret };
}

async function deliveriesOf(webhookId: string): Promise<DeliveryInfo[]> {
  return JSON.parse(await ok(['webhooks', 'deliveries', webhookId, '--json'])) as DeliveryInfo[];
}

let ipoCount = 0;
/** One IPO not stored yet (long listed: no status change ahead): an ipo.created event. */
function newIpo(): { id: string; dataset: { ipos: unknown[] } } {
  const i = ++ipoCount;
  const id = `20210${String(i).padStart(5, '0')}`;
  return { id, dataset: { ipos: [{ id, name: `Worker Test ${i} Ltd`, symbol: `WRK${i}`, slug: `worker-test-${i}-ipo`, type: 'EQ', startDate: '2021-01-01', endDate: '2021-01-03', listingDate: '2021-01-08' }] } };
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `ipokit ...args` in process until stopped: its output, and `stop()` resolving to the exit code. */
function background(args: string[], io: Partial<CliIo> = db.io(LOCAL_ENV)): { out: ReturnType<typeof capture>; done: Promise<number>; stop(): Promise<number> } {
  const controller = new AbortController();
  const out = capture({ cwd: dir, ...io, signal: controller.signal });
  const done = runCli(args, out.io);
  return {
    out,
    done,
    stop: () => {
      controller.abort();
      return done;
    },
  };
}

/** Waits for `pattern` on stdout, failing at once if the command ends first. */
async function started(cmd: ReturnType<typeof background>, pattern: RegExp): Promise<RegExpExecArray> {
  return Promise.race([
    cmd.out.waitForStdout(pattern, 60_000),
    cmd.done.then((code) => Promise.reject(new Error(`exited with ${code}: ${cmd.out.stderr()}`))),
  ]);
}

const WORKER_STARTED = /^ipokit worker delivering webhooks from PostgreSQL at (.+) \(schema (\w+)\): (.+)\.\n/;
const WORKER_STOPPED = 'ipokit worker stopped: the attempts under way finished and were recorded.\n';

describe('the worker settings', () => {
  it('default to on in serve, https: only, 64 attempts at once; each from its flag, variable or config file', () => {
    expect(resolveSettings()).toMatchObject({ webhooks: true, allowInsecureWebhooks: false, webhookConcurrency: 64 });
    const env = { IPOKIT_WEBHOOKS: 'off', IPOKIT_ALLOW_INSECURE_WEBHOOKS: 'yes', IPOKIT_WEBHOOK_CONCURRENCY: '8' };
    expect(resolveSettings({ env })).toMatchObject({ webhooks: false, allowInsecureWebhooks: true, webhookConcurrency: 8 });
    const file = { name: 'f.json', json: { webhooks: false, allowInsecureWebhooks: true, webhookConcurrency: 500 } };
    expect(resolveSettings({ file })).toMatchObject({ webhooks: false, allowInsecureWebhooks: true, webhookConcurrency: 500 });
    const flags = [
      { path: 'webhooks', label: '--webhooks', text: 'true' },
      { path: 'webhookConcurrency', label: '--concurrency', text: '2' },
    ];
    expect(resolveSettings({ file, env, flags })).toMatchObject({ webhooks: true, allowInsecureWebhooks: true, webhookConcurrency: 2 });
  });

  it.each([
    [{ IPOKIT_WEBHOOKS: 'maybe' }, 'IPOKIT_WEBHOOKS must be true or false, got "maybe"'],
    [{ IPOKIT_ALLOW_INSECURE_WEBHOOKS: '2' }, 'IPOKIT_ALLOW_INSECURE_WEBHOOKS must be true or false, got "2"'],
    [{ IPOKIT_WEBHOOK_CONCURRENCY: '0' }, 'IPOKIT_WEBHOOK_CONCURRENCY must be a whole number from 1 to 1000, got "0"'],
    [{ IPOKIT_WEBHOOK_CONCURRENCY: '1001' }, 'IPOKIT_WEBHOOK_CONCURRENCY must be a whole number from 1 to 1000, got "1001"'],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => resolveSettings({ env })).toThrow(message);
  });

  it('serve --print-config prints them, and takes them from its flags', async () => {
    const out = capture({ cwd: dir });
    expect(await runCli(['serve', '--print-config', '--no-webhooks', '--allow-insecure-webhooks', '--webhook-concurrency', '16'], out.io)).toBe(0);
    expect(JSON.parse(out.stdout())).toMatchObject({ webhooks: false, allowInsecureWebhooks: true, webhookConcurrency: 16 });
    const both = capture({ cwd: dir });
    expect(await runCli(['serve', '--webhooks', '--no-webhooks'], both.io)).toBe(2);
    expect(both.stderr().split('\n')[0]).toBe('ipokit serve: --webhooks and --no-webhooks contradict each other: give one');
  });

  it('the start-up lines say what is sent to; a store failure is one line on stderr', () => {
    expect(workerText({ allowInsecure: false, concurrency: 64 })).toBe('up to 64 attempts at once, to https: URLs only (--allow-insecure-webhooks allows http:)');
    expect(workerText({ allowInsecure: true, concurrency: 1 })).toBe('up to 1 attempt at once, to http: and https: URLs (--allow-insecure-webhooks)');
    const out = capture();
    const options = workerOptions({ allowInsecure: true, concurrency: 3 }, out.io);
    expect(options).toMatchObject({ allowInsecureWebhooks: true, concurrency: 3 });
    const cause = Object.assign(new Error('terminating connection\ndue to administrator command'), { code: '57P01' });
    options.onError!(new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store failed.', { cause }));
    options.onError!(new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL schema "x" is not migrated; run migrate(client) first.'));
    options.onError!(new TypeError('store.claimDeliveries is not a function'));
    expect(out.stderr().split('\n')).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z webhook worker: The PostgreSQL store failed\.: terminating connection due to administrator command$/),
      expect.stringMatching(/Z webhook worker: The PostgreSQL schema "x" is not migrated; run 'ipokit migrate' first\.$/),
      expect.stringMatching(/Z webhook worker: store\.claimDeliveries is not a function$/),
      '',
    ]);
  });
});

describe('startNodeWorker', () => {
  it("refuses the core's bad options; stops more than once; sends through the transport it is given", async () => {
    expect(() => startNodeWorker(store, { concurrency: 0 })).toThrow('concurrency must be a whole number of at least 1.');
    const r = await receiver();
    const hook = await endpoint(r.url);
    const sent: string[] = [];
    const worker = startNodeWorker(store, { allowInsecureWebhooks: true, webhookAllowedNetworks: ['127.0.0.0/8'], transport: async (request) => (sent.push(request.url.href), { status: 204 }) });
    await importDataset(store, newIpo().dataset);
    await until('the attempt', async () => (await deliveriesOf(hook.id))[0]?.state === 'delivered');
    await worker.stop();
    await worker.stop();
    expect(sent).toContain(r.url);
    expect(r.received).toEqual([]);
  });
});

describe('ipokit worker usage errors', () => {
  it.each([
    [['--concurrency', '0'], 'ipokit worker: --concurrency must be a whole number from 1 to 1000, got "0"'],
    [['--concurrency', '1.5'], 'ipokit worker: --concurrency must be a whole number from 1 to 1000, got "1.5"'],
    [['--concurrency'], 'ipokit worker: option --concurrency needs a value'],
    [['--allow-insecure-webhooks=yes'], 'ipokit worker: option --allow-insecure-webhooks takes no value'],
    [['--no-webhooks'], 'ipokit worker: unknown option --no-webhooks'],
    [['now'], 'ipokit worker: unexpected argument "now"'],
    [['--config', ''], 'ipokit worker: --config must not be empty'],
    [['--config', 'missing.json'], 'ipokit worker: cannot read config file missing.json: ENOENT'],
    [[], 'ipokit worker: set DATABASE_URL=postgres://user:password@host:5432/database to say which PostgreSQL to use'],
  ])('%j: one line, the usage, exit 2', async (args, line) => {
    const out = capture({ cwd: dir, env: {} });
    expect(await runCli(['worker', ...args], out.io)).toBe(2);
    expect(out.stdout()).toBe('');
    expect(out.stderr().split('\n').slice(0, 2)).toEqual([line, 'Usage: ipokit worker [--allow-insecure-webhooks] [--concurrency N] [--webhook-allow-network CIDR]... [--config FILE] [--schema S]']);
  });

  it('reads IPOKIT_WEBHOOK_CONCURRENCY and the config file as serve does: a bad value names its source; a file with problems lists them, exit 2', async () => {
    const env = capture({ cwd: dir, env: { IPOKIT_WEBHOOK_CONCURRENCY: 'lots' } });
    expect(await runCli(['worker'], env.io)).toBe(2);
    expect(env.stderr().split('\n')[0]).toBe('ipokit worker: IPOKIT_WEBHOOK_CONCURRENCY must be a whole number from 1 to 1000, got "lots"');
    // the flag wins over the variable, which is then not read
    const flag = capture({ cwd: dir, env: { IPOKIT_WEBHOOK_CONCURRENCY: 'lots' } });
    expect(await runCli(['worker', '--concurrency', '4'], flag.io)).toBe(2);
    expect(flag.stderr().split('\n')[0]).toMatch(/: set DATABASE_URL=/);
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ webhookConcurrency: 0, allowInsecureWebhooks: 'yes', port: -1 }));
    const file = capture({ cwd: dir, env: { IPOKIT_CONFIG: 'bad.json' } });
    expect(await runCli(['worker'], file.io)).toBe(2);
    expect(file.stdout()).toBe('');
    expect(file.stderr()).toBe(
      [
        'ipokit worker: config file bad.json has 3 problems; nothing was started:',
        '  webhookConcurrency: must be a whole number from 1 to 1000, got 0',
        '  allowInsecureWebhooks: must be true or false, got "yes"',
        '  port: must be a whole number from 0 to 65535, got -1',
        '',
      ].join('\n'),
    );
  });
});

describe('ipokit worker', () => {
  it('delivers an import\'s event to a local receiver, signed with the endpoint\'s secret, until stopped', async () => {
    const r = await receiver();
    const hook = await endpoint(r.url);
    const worker = background(['worker', '--allow-insecure-webhooks', '--concurrency', '8', '--schema', db.schema]);
    const [, , schema, what] = await started(worker, WORKER_STARTED);
    expect([schema, what]).toEqual([db.schema, 'up to 8 attempts at once, to http: and https: URLs (--allow-insecure-webhooks)']);
    const ipo = newIpo();
    await importDataset(store, ipo.dataset);
    await r.arrived();
    expect(r.received).toHaveLength(1);
    const event = verified(r.received[0]!, hook.secret);
    expect(event).toMatchObject({ type: 'ipo.created', data: { id: ipo.id } });
    expect(r.received[0]!.headers['webhook-id']).toMatch(/^evt_/);
    await until('the delivery recorded', async () => (await deliveriesOf(hook.id))[0]?.state === 'delivered');
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ eventType: 'ipo.created', attempts: 1, lastStatus: 204, eventId: r.received[0]!.headers['webhook-id'] });
    expect(await worker.stop()).toBe(0);
    expect(worker.out.stdout().replace(WORKER_STARTED, '')).toBe(WORKER_STOPPED);
    expect(worker.out.stderr()).toBe('');
  }, 60_000);

  it('sends to https: only unless told otherwise: an http: URL is a failed attempt, retried', async () => {
    const r = await receiver();
    const hook = await endpoint(r.url);
    const worker = background(['worker', '--schema', db.schema], db.io({ ...LOCAL_ENV, IPOKIT_ALLOW_INSECURE_WEBHOOKS: '' }));
    const [, , , what] = await started(worker, WORKER_STARTED);
    expect(what).toBe('up to 64 attempts at once, to https: URLs only (--allow-insecure-webhooks allows http:)');
    await importDataset(store, newIpo().dataset);
    await until('the attempt', async () => (await deliveriesOf(hook.id))[0]?.attempts === 1);
    expect(await worker.stop()).toBe(0);
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ state: 'pending', lastStatus: null, lastError: 'http: is not sent to (https: only; allowInsecureWebhooks allows http:)' });
    expect(r.received).toEqual([]);
    // IPOKIT_ALLOW_INSECURE_WEBHOOKS allows it: the replay goes through.
    const [failed] = await deliveriesOf(hook.id);
    await ok(['webhooks', 'replay', hook.id, failed!.id, '-q']);
    const allowed = background(['worker', '--schema', db.schema], db.io({ ...LOCAL_ENV, IPOKIT_ALLOW_INSECURE_WEBHOOKS: 'true' }));
    await started(allowed, WORKER_STARTED);
    await r.arrived();
    expect(verified(r.received[0]!, hook.secret).type).toBe('ipo.created');
    expect(await allowed.stop()).toBe(0);
  }, 60_000);

  it('on stop, claims nothing more but finishes and records the attempt under way', async () => {
    const r = await receiver(1_500);
    const hook = await endpoint(r.url);
    const worker = background(['worker', '--allow-insecure-webhooks', '--schema', db.schema]);
    await started(worker, WORKER_STARTED);
    await importDataset(store, newIpo().dataset);
    await r.arrived();
    const stopping = worker.stop();
    // Nothing is claimed once stopping: an event now waits for the next worker.
    await importDataset(store, newIpo().dataset);
    await sleep(300);
    expect(r.answered()).toBe(0);
    expect(worker.out.stdout()).not.toContain('stopped');
    expect(await stopping).toBe(0);
    expect(r.answered()).toBe(1);
    expect(worker.out.stdout()).toMatch(/\nipokit worker stopped: /);
    const [second, first] = await deliveriesOf(hook.id);
    expect(first).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 204 });
    expect(second).toMatchObject({ state: 'pending', attempts: 0 });
    expect(r.received).toHaveLength(1);
  }, 60_000);
});

describe.runIf(DATABASE_URL)('ipokit worker as a process, on the PostgreSQL of DATABASE_URL', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('delivers, and on %s finishes the attempt under way, then exits 0', async (signal) => {
    const r = await receiver(1_000);
    const hook = await endpoint(r.url);
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, 'worker', '--concurrency', '4'], {
      env: { ...process.env, DATABASE_URL: DATABASE_URL!, IPOKIT_SCHEMA: db.schema, IPOKIT_ALLOW_INSECURE_WEBHOOKS: 'true', IPOKIT_CONFIG: '', ...LOCAL_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      new Promise<string>((resolve) => lines.once('line', resolve)),
      exited.then((code) => Promise.reject(new Error(`the worker exited with ${code}: ${stderr}`))),
    ]);
    lines.on('line', (line) => (stdout += `${line}\n`));
    expect(first).toBe(
      `ipokit worker delivering webhooks from PostgreSQL at ${DATABASE_URL!.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')} (schema ${db.schema}): up to 4 attempts at once, to http: and https: URLs (--allow-insecure-webhooks).`,
    );
    const ipo = newIpo();
    await importDataset(store, ipo.dataset);
    await r.arrived();
    expect(verified(r.received[0]!, hook.secret)).toMatchObject({ type: 'ipo.created', data: { id: ipo.id } });
    child.kill(signal);
    expect(await exited).toBe(0);
    expect(r.answered()).toBe(1);
    expect(stdout).toBe(WORKER_STOPPED);
    expect(stderr).toBe('');
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ state: 'delivered', lastStatus: 204 });
  }, 60_000);
});

describe('the worker inside ipokit serve', () => {
  it('from memory: on by default, --no-webhooks or IPOKIT_WEBHOOKS=false turn it off; stopping drains it', async () => {
    const on = background(['serve', '--port', '0', '--log', 'off', '--dataset', 'one.json'], { env: {} });
    await started(on, /\nWebhooks: .*\n/);
    expect(on.out.stdout()).toContain('\nWebhooks: delivered from this process, up to 64 attempts at once, to https: URLs only (--allow-insecure-webhooks allows http:).\n');
    expect(await on.stop()).toBe(0);
    expect(on.out.stderr()).toMatch(/^Stopping: finishing the requests under way \(connections still open after 10000 ms are cut\)\. Webhook attempts under way finish too\.\n$/);
    for (const [args, env] of [[['--no-webhooks'], {}], [[], { IPOKIT_WEBHOOKS: 'false' }]] as const) {
      const off = background(['serve', '--port', '0', '--log', 'off', '--dataset', 'one.json', ...args], { env });
      await started(off, /\nWebhooks: .*\n/);
      expect(off.out.stdout()).toContain('\nWebhooks: off (--webhooks turns them on).\n');
      expect(await off.stop()).toBe(0);
      expect(off.out.stderr()).toBe('Stopping: finishing the requests under way (connections still open after 10000 ms are cut).\n');
    }
  }, 60_000);

  it('from PostgreSQL: serve --no-webhooks does not deliver; plain serve does', async () => {
    const r = await receiver();
    const hook = await endpoint(r.url);
    const off = background(['serve', '--port', '0', '--log', 'off', '--no-webhooks', '--allow-insecure-webhooks', '--schema', db.schema]);
    await started(off, /\nWebhooks: .*\n/);
    expect(off.out.stdout()).toContain("\nWebhooks: off (--webhooks turns them on): run 'ipokit worker' to deliver them.\n");
    await importDataset(store, newIpo().dataset);
    // a worker would have sent it within a second or two
    await sleep(2_500);
    expect(r.received).toEqual([]);
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await off.stop()).toBe(0);

    const on = background(['serve', '--port', '0', '--log', 'off', '--schema', db.schema], db.io({ ...LOCAL_ENV, IPOKIT_ALLOW_INSECURE_WEBHOOKS: '1' }));
    await started(on, /\nWebhooks: .*\n/);
    expect(on.out.stdout()).toContain('\nWebhooks: delivered from this process, up to 64 attempts at once, to http: and https: URLs (--allow-insecure-webhooks).\n');
    await r.arrived();
    expect(verified(r.received[0]!, hook.secret).type).toBe('ipo.created');
    // and what is imported while it serves
    const ipo = newIpo();
    await importDataset(store, ipo.dataset);
    await r.arrived(2);
    expect(verified(r.received[1]!, hook.secret)).toMatchObject({ type: 'ipo.created', data: { id: ipo.id } });
    await until('both deliveries recorded', async () => (await deliveriesOf(hook.id)).every((d) => d.state === 'delivered'));
    expect(await on.stop()).toBe(0);
    expect(on.out.stderr()).toContain('Webhook attempts under way finish too.');
    expect(r.received).toHaveLength(2);
  }, 120_000);

  it('the demo keys and the API are served as before, with the worker running', async () => {
    const serving = background(['serve', '--port', '0', '--log', 'off', '--schema', db.schema, '--demo-keys']);
    const [, url] = await started(serving, / at (http:\/\/localhost:\d+)\/ipos\n/);
    const key = /^ {2}paid {2}(ipk_\w+)$/m.exec(serving.out.stdout())![1]!;
    const res = await fetch(`${url!.replace('localhost', '127.0.0.1')}/ipos?status=listed`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    expect(await serving.stop()).toBe(0);
    expect(serving.out.stderr()).toMatch(/^(The database holds no IPO yet: .*\n)?Stopping: .* Webhook attempts under way finish too\.\n$/);
  }, 60_000);
});
