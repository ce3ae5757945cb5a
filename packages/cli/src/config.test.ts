import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from 'node:util';
import { ConfigFileError, resolveSettings, routerOptionsOf, settingsFlags, settingsJson, SETTINGS_FLAGS, type ServeSettings } from './config.js';
import { runCli } from './index.js';
import { CliError } from './io.js';
import { capture } from './test-helpers.js';

// The settings of `ipokit serve`: each from its flag, else its variable, else the config
// file, else its default; the router's options checked by the router's own rules; a file
// with problems listed whole; --print-config.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ipokit-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: unknown): Promise<string> {
  await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return name;
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = capture({ cwd: dir, env });
  const code = await runCli(['serve', ...args], out.io);
  return { code, stdout: out.stdout(), stderr: out.stderr() };
}

describe('resolveSettings', () => {
  it('has the defaults of the router and of serve, with the OpenAPI document on', () => {
    const s = resolveSettings();
    expect(s).toMatchObject({
      framework: 'node',
      port: 3000,
      host: '127.0.0.1',
      mount: '/ipos',
      trustProxy: 0,
      log: 'text',
      drainMs: 10_000,
      openapi: true,
      limits: {
        free: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
        paid: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
        pro: { perMinute: 6, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity },
        keyless: { perMinute: 6, perHour: Infinity, perDay: Infinity },
      },
      rateLimitHeaders: 'draft-6',
      maxListLimit: { free: 1, paid: 100, pro: 100 },
      gmpPreviewEnds: '2026-09-30',
      maxGmpBuckets: 20_000,
      maxUrlLength: 4096,
      storeTimeoutMs: 5000,
      keyCacheTtlMs: 5000,
      limiterFailOpen: false,
      maxKeysPerAccount: 100,
      connections: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000, idleTimeoutMs: 30_000 },
    });
  });

  it('takes a flag over its variable, the variable over the file, the file over the default', () => {
    const fileSays = { name: 'f.json', json: { port: 1111, host: '127.0.0.3', openapi: false, storeTimeoutMs: 100, limits: { free: { perMinute: 9 } } } };
    const flag = (path: string, label: string, text: string) => ({ path, label, text });
    expect(resolveSettings({ file: fileSays }).port).toBe(1111);
    expect(resolveSettings({ file: fileSays, env: { PORT: '2222' } }).port).toBe(2222);
    expect(resolveSettings({ file: fileSays, env: { PORT: '2222' }, flags: [flag('port', '--port', '3333')] }).port).toBe(3333);
    // an empty variable is no variable
    expect(resolveSettings({ file: fileSays, env: { PORT: '' } }).port).toBe(1111);
    // a flag wins even over a variable the rules would refuse: the variable is not read
    expect(resolveSettings({ env: { PORT: 'http' }, flags: [flag('port', '--port', '1')] }).port).toBe(1);
    const s = resolveSettings({ file: fileSays, env: { IPOKIT_OPENAPI: 'true', IPOKIT_STORE_TIMEOUT_MS: '200' }, flags: [flag('limits.free.perMinute', '--limit free.perMinute', 'off')] });
    expect(s).toMatchObject({ host: '127.0.0.3', openapi: true, storeTimeoutMs: 200 });
    expect(s.limits.free).toEqual({ perMinute: Infinity, perHour: Infinity, perDay: Infinity, gmpPerMinute: 3, gmpPerDay: Infinity });
    expect(resolveSettings({ file: fileSays, flags: [flag('openapi', '--no-openapi', 'false')], env: { IPOKIT_OPENAPI: '1' } }).openapi).toBe(false);
  });

  it.each([
    [{ PORT: 'http' }, 'PORT must be a whole number from 0 to 65535, got "http"'],
    [{ HOST: 'a b' }, 'HOST must be a host name or an IP address, e.g. 0.0.0.0, got "a b"'],
    [{ IPOKIT_MOUNT: 'ipos' }, 'IPOKIT_MOUNT must be a path like /ipos or /api/v1/ipos (segments of letters, digits and ._~-), or / for the root, got "ipos"'],
    [{ IPOKIT_MOUNT: '/healthz/x' }, `IPOKIT_MOUNT must not be under /healthz, the health check's path, got "/healthz/x"`],
    [{ IPOKIT_TRUST_PROXY: 'yes' }, 'IPOKIT_TRUST_PROXY must be a whole number from 0 to 100, got "yes"'],
    [{ IPOKIT_LOG: 'xml' }, 'IPOKIT_LOG must be text, json or off, got "xml"'],
    [{ IPOKIT_OPENAPI: 'maybe' }, 'IPOKIT_OPENAPI must be true or false, got "maybe"'],
    [{ IPOKIT_STORE_TIMEOUT_MS: '0' }, 'IPOKIT_STORE_TIMEOUT_MS must be a whole number >= 1, got "0"'],
    [{ IPOKIT_KEY_CACHE_TTL_MS: '-1' }, 'IPOKIT_KEY_CACHE_TTL_MS must be a whole number >= 0, got "-1"'],
    [{ IPOKIT_LIMITER_FAIL_OPEN: '2' }, 'IPOKIT_LIMITER_FAIL_OPEN must be true or false, got "2"'],
    [{ IPOKIT_FRAMEWORK: 'hapi' }, 'IPOKIT_FRAMEWORK must be node, express or koa, got "hapi"'],
    [{ IPOKIT_MAX_KEYS_PER_ACCOUNT: '0' }, 'IPOKIT_MAX_KEYS_PER_ACCOUNT must be a whole number of keys >= 1, or "off" for no cap, got "0"'],
  ])('refuses %j with the rule, naming the variable', (env, message) => {
    expect(() => resolveSettings({ env })).toThrow(new CliError(message));
  });

  it('lists every problem of a file at once, each with its path', () => {
    const json = {
      port: 70000,
      limits: { free: { perMinute: 0, burst: 3 }, keyless: { perMinute: 'off', gmpPerMinute: 1 }, paid: 5 },
      maxListLimit: { paid: 'x' },
      gmpPreviewEnds: '2026-02-30',
      mount: 'ipos',
      limiterFailOpen: 'no',
      connections: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 },
      tls: true,
    };
    let error: unknown;
    try {
      resolveSettings({ file: { name: 'bad.json', json } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).problems).toEqual([
      'port: must be a whole number from 0 to 65535, got 70000',
      'limits.free.perMinute: must be a whole number of requests >= 1, or "off" to turn the window off, got 0',
      'limits.free.burst: unknown setting (in limits.free: perMinute, perHour, perDay, gmpPerMinute, gmpPerDay)',
      'limits.keyless.gmpPerMinute: unknown setting (in limits.keyless: perMinute, perHour, perDay)',
      'limits.paid: must be a JSON object of perMinute, perHour, perDay, gmpPerMinute, gmpPerDay, got 5',
      'maxListLimit.paid: must be a whole number >= 1, got "x"',
      'gmpPreviewEnds: must be a calendar date written YYYY-MM-DD, got "2026-02-30"',
      'mount: must be a path like /ipos or /api/v1/ipos (segments of letters, digits and ._~-), or / for the root, got "ipos"',
      'limiterFailOpen: must be true or false, got "no"',
      'tls: unknown setting (settings: framework, port, host, mount, trustProxy, log, drainMs, openapi, limits, rateLimitHeaders, maxListLimit, gmpPreviewEnds, maxGmpBuckets, maxUrlLength, storeTimeoutMs, keyCacheTtlMs, limiterFailOpen, maxKeysPerAccount, connections, webhooks, allowInsecureWebhooks, webhookConcurrency, webhookAllowedNetworks, ingest, sources, metrics)',
      'connections: connections.headersTimeoutMs (5000) must not exceed connections.requestTimeoutMs (1000): the headers are part of the request; 0 turns either off',
    ]);
    expect(() => resolveSettings({ file: { name: 'list.json', json: [1] } })).toThrow(/\(the file\): must be a JSON object, got \[1\]/);
  });

  it('maxKeysPerAccount: the flag, IPOKIT_MAX_KEYS_PER_ACCOUNT or the file; "off" for no cap (printed "off"); given to the routers', () => {
    const flag = (text: string) => ({ path: 'maxKeysPerAccount', label: '--max-keys-per-account', text });
    expect(resolveSettings().maxKeysPerAccount).toBe(100);
    expect(resolveSettings({ file: { name: 'f.json', json: { maxKeysPerAccount: 20 } } }).maxKeysPerAccount).toBe(20);
    expect(resolveSettings({ file: { name: 'f.json', json: { maxKeysPerAccount: 20 } }, env: { IPOKIT_MAX_KEYS_PER_ACCOUNT: '30' } }).maxKeysPerAccount).toBe(30);
    expect(resolveSettings({ env: { IPOKIT_MAX_KEYS_PER_ACCOUNT: '30' }, flags: [flag('500')] }).maxKeysPerAccount).toBe(500);
    const off = resolveSettings({ flags: [flag('off')] });
    expect(off.maxKeysPerAccount).toBe(Infinity);
    expect(JSON.parse(settingsJson(off)).maxKeysPerAccount).toBe('off');
    expect(resolveSettings({ file: { name: 'f.json', json: { maxKeysPerAccount: 'off' } } }).maxKeysPerAccount).toBe(Infinity);
    expect(routerOptionsOf(resolveSettings({ flags: [flag('7')] })).maxKeysPerAccount).toBe(7);
    expect(() => resolveSettings({ flags: [flag('1.5')] })).toThrow(new CliError('--max-keys-per-account must be a whole number of keys >= 1, or "off" for no cap, got "1.5"'));
    expect(() => resolveSettings({ file: { name: 'f.json', json: { maxKeysPerAccount: 0 } } })).toThrow(/maxKeysPerAccount: must be a whole number of keys >= 1, or "off" for no cap, got 0/);
  });

  it('webhookAllowedNetworks: --webhook-allow-network (repeatable), IPOKIT_WEBHOOK_ALLOW_NETWORKS (comma-separated) or the file; none by default; a bad CIDR named', () => {
    expect(resolveSettings().webhookAllowedNetworks).toEqual([]);
    expect(resolveSettings({ file: { name: 'f.json', json: { webhookAllowedNetworks: ['10.1.0.0/16'] } } }).webhookAllowedNetworks).toEqual(['10.1.0.0/16']);
    const env = { IPOKIT_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8, ::1/128' };
    expect(resolveSettings({ file: { name: 'f.json', json: { webhookAllowedNetworks: ['10.1.0.0/16'] } }, env }).webhookAllowedNetworks).toEqual(['127.0.0.0/8', '::1/128']);
    const { values } = parseArgs({ args: ['--webhook-allow-network', '10.0.0.0/8', '--webhook-allow-network', 'fd00::/8'], options: SETTINGS_FLAGS });
    const flags = settingsFlags(values);
    expect(flags).toEqual([{ path: 'webhookAllowedNetworks', label: '--webhook-allow-network', text: '10.0.0.0/8,fd00::/8' }]);
    expect(resolveSettings({ env, flags }).webhookAllowedNetworks).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(() => resolveSettings({ env: { IPOKIT_WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/33' } })).toThrow(
      new CliError('IPOKIT_WEBHOOK_ALLOW_NETWORKS must be a list of CIDRs (e.g. 10.1.0.0/16, ::1/128): "10.0.0.0/33": the prefix length must be a whole number from 0 to 32., got "10.0.0.0/33"'),
    );
    expect(() => resolveSettings({ file: { name: 'f.json', json: { webhookAllowedNetworks: '10.0.0.0/8' } } })).toThrow(/webhookAllowedNetworks: must be a list of CIDRs, e\.g\. \["10\.1\.0\.0\/16", "127\.0\.0\.0\/8"\], got "10\.0\.0\.0\/8"/);
    expect(() => resolveSettings({ file: { name: 'f.json', json: { webhookAllowedNetworks: ['localhost'] } } })).toThrow(/webhookAllowedNetworks: must be a list of CIDRs/);
  });

  it('prints the settings in the file format: a window that is off is "off", and the output reads back as the same settings', () => {
    const s = resolveSettings({ file: { name: 'f.json', json: { limits: { keyless: { perMinute: 'off' } }, mount: '/v1/ipos/' } } });
    expect(s.mount).toBe('/v1/ipos');
    const text = settingsJson(s);
    expect(JSON.parse(text)).toMatchObject({ mount: '/v1/ipos', limits: { keyless: { perMinute: 'off' } } });
    const again: ServeSettings = resolveSettings({ file: { name: 'printed.json', json: JSON.parse(text) } });
    expect(again).toEqual(s);
  });
});

describe('the ingest settings (the push route)', () => {
  it('are off by default, with a 16 MiB body limit', () => {
    expect(resolveSettings().ingest).toEqual({ tokenFile: null, maxBytes: 16_777_216 });
  });

  it('come from the flags, else IPOKIT_INGEST_*, else the file (ingest.tokenFile, ingest.maxBytes)', () => {
    const file = { name: 'f.json', json: { ingest: { tokenFile: 'from-file.txt', maxBytes: 1000 } } };
    expect(resolveSettings({ file }).ingest).toEqual({ tokenFile: 'from-file.txt', maxBytes: 1000 });
    const env = { IPOKIT_INGEST_TOKEN_FILE: 'from-env.txt', IPOKIT_INGEST_MAX_BYTES: '2000' };
    expect(resolveSettings({ file, env }).ingest).toEqual({ tokenFile: 'from-env.txt', maxBytes: 2000 });
    const { values } = parseArgs({ args: ['--ingest-token-file', 'from-flag.txt', '--ingest-max-bytes', '3000'], options: SETTINGS_FLAGS });
    expect(resolveSettings({ file, env, flags: settingsFlags(values) }).ingest).toEqual({ tokenFile: 'from-flag.txt', maxBytes: 3000 });
    // null in a file (as --print-config writes it) is off
    expect(resolveSettings({ file: { name: 'f.json', json: { ingest: { tokenFile: null } } } }).ingest.tokenFile).toBeNull();
  });

  it('refuses a body limit out of range and an empty file name', () => {
    const flags = (args: string[]) => settingsFlags(parseArgs({ args, options: SETTINGS_FLAGS }).values);
    expect(() => resolveSettings({ flags: flags(['--ingest-max-bytes', '0']) })).toThrow('--ingest-max-bytes must be a whole number from 1 to 268435456, got "0"');
    expect(() => resolveSettings({ flags: flags(['--ingest-token-file', '']) })).toThrow('--ingest-token-file must not be empty');
    expect(() => resolveSettings({ file: { name: 'f.json', json: { ingest: { tokenFile: 5, maxBytes: 'big', other: 1 } } } })).toThrow(ConfigFileError);
    try {
      resolveSettings({ file: { name: 'f.json', json: { ingest: { tokenFile: 5, maxBytes: 'big', other: 1 } } } });
    } catch (err) {
      expect((err as ConfigFileError).problems).toEqual([
        'ingest.tokenFile: must be a file name, or null for none, got 5',
        'ingest.maxBytes: must be a whole number from 1 to 268435456, got "big"',
        'ingest.other: unknown setting (in ingest: tokenFile, maxBytes)',
      ]);
    }
  });

  it('print as a config file that reads back the same', () => {
    const s = resolveSettings({ file: { name: 'f.json', json: { ingest: { tokenFile: 'tokens.txt' } } } });
    expect(JSON.parse(settingsJson(s)).ingest).toEqual({ tokenFile: 'tokens.txt', maxBytes: 16_777_216 });
    expect(resolveSettings({ file: { name: 'printed.json', json: JSON.parse(settingsJson(s)) } })).toEqual(s);
    const off = resolveSettings();
    expect(resolveSettings({ file: { name: 'printed.json', json: JSON.parse(settingsJson(off)) } })).toEqual(off);
  });
});

describe('ipokit serve --config and --print-config', () => {
  it('--print-config prints the settings in force as JSON and exits 0 without serving', async () => {
    const config = await file('some.json', { port: 8080, framework: 'koa', limits: { paid: { perMinute: 600 } }, connections: { maxConnections: 50 } });
    const r = await serve(['--config', config, '--print-config', '--limit', 'free.gmpPerMinute=off', '--max-list-limit', 'paid=20', '--trust-proxy', '2', '--no-openapi'], {
      HOST: '0.0.0.0',
      IPOKIT_LOG: 'json',
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const printed = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual([
      'framework', 'port', 'host', 'mount', 'trustProxy', 'log', 'drainMs', 'openapi', 'limits', 'rateLimitHeaders', 'maxListLimit', 'gmpPreviewEnds',
      'maxGmpBuckets', 'maxUrlLength', 'storeTimeoutMs', 'keyCacheTtlMs', 'limiterFailOpen', 'maxKeysPerAccount', 'connections', 'webhooks',
      'allowInsecureWebhooks', 'webhookConcurrency', 'webhookAllowedNetworks', 'ingest', 'sources', 'metrics',
    ]);
    expect(printed).toMatchObject({
      framework: 'koa',
      port: 8080,
      host: '0.0.0.0',
      mount: '/ipos',
      trustProxy: 2,
      log: 'json',
      openapi: false,
      limits: { free: { perMinute: 6, gmpPerMinute: 'off' }, paid: { perMinute: 600, gmpPerMinute: 3 } },
      maxListLimit: { free: 1, paid: 20, pro: 100 },
      connections: { maxConnections: 50, idleTimeoutMs: 30_000 },
    });
    // what it prints is a config file
    await writeFile(join(dir, 'printed.json'), r.stdout);
    const again = await serve(['--config', 'printed.json', '--print-config']);
    expect(again).toEqual({ code: 0, stdout: r.stdout, stderr: '' });
    // IPOKIT_CONFIG names the file when --config is not given
    expect((await serve(['--print-config'], { IPOKIT_CONFIG: 'printed.json' })).stdout).toBe(r.stdout);
  });

  it('a file with problems: every one listed with its path, nothing served, exit 2', async () => {
    const config = await file('bad.json', { port: -1, limits: { pro: { gmpPerMinute: 1.5 } }, connections: { idleTimeoutMs: 'soon' }, extra: 1 });
    const r = await serve(['--config', config, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        'ipokit serve: config file bad.json has 4 problems; nothing was served:',
        '  port: must be a whole number from 0 to 65535, got -1',
        '  limits.pro.gmpPerMinute: must be a whole number of requests >= 1, or "off" to turn the window off, got 1.5',
        '  connections.idleTimeoutMs: must be a whole number from 0 to 2147483647, got "soon"',
        '  extra: unknown setting (settings: framework, port, host, mount, trustProxy, log, drainMs, openapi, limits, rateLimitHeaders, maxListLimit, gmpPreviewEnds, maxGmpBuckets, maxUrlLength, storeTimeoutMs, keyCacheTtlMs, limiterFailOpen, maxKeysPerAccount, connections, webhooks, allowInsecureWebhooks, webhookConcurrency, webhookAllowedNetworks, ingest, sources, metrics)',
        '',
      ].join('\n'),
    );
  });

  it.each([
    [['--config', 'missing.json'], /^ipokit serve: cannot read config file missing\.json: ENOENT$/m],
    [['--config', 'broken'], /^ipokit serve: config file broken is not valid JSON: /m],
    [['--config', ''], /^ipokit serve: --config must not be empty$/m],
    [['--limit', 'gold.perMinute=5'], /^ipokit serve: --limit must be PLAN\.WINDOW=N or PLAN\.WINDOW=off \(.*\), got "gold\.perMinute=5"$/m],
    [['--limit', 'free.perMinute=0'], /^ipokit serve: --limit free\.perMinute must be a whole number of requests >= 1, or "off" to turn the window off, got "0"$/m],
    [['--max-list-limit', 'pro=0'], /^ipokit serve: --max-list-limit pro must be a whole number >= 1, got "0"$/m],
    [['--openapi', '--no-openapi'], /^ipokit serve: --openapi and --no-openapi contradict each other: give one$/m],
    [['--gmp-preview-ends', 'soon'], /^ipokit serve: --gmp-preview-ends must be a calendar date written YYYY-MM-DD, got "soon"$/m],
    [['--mount', '/a//b'], /^ipokit serve: --mount must be a path like \/ipos/m],
    [['--trust-proxy', '101'], /^ipokit serve: --trust-proxy must be a whole number from 0 to 100, got "101"$/m],
    [['--log', 'verbose'], /^ipokit serve: --log must be text, json or off, got "verbose"$/m],
  ])('refuses %j: one line, the usage, exit 2', async (args, message) => {
    await file('broken', '{"port": ');
    const r = await serve([...args, '--print-config']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.split('\n')[1]).toMatch(/^Usage: ipokit serve /);
  });

  // JSON.parse reads any depth; printing a value nested 100,000 deep in a problem overflowed the stack
  const DEEP = 100_000;
  const deepArrays = '['.repeat(DEEP) + ']'.repeat(DEEP);
  const deepObjects = '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP);
  it.each([
    ['arrays.json', deepArrays],
    ['objects.json', deepObjects],
    ['port.json', `{"port":${deepArrays}}`],
    ['limits.json', `{"limits":{"free":{"perMinute":${deepObjects}}}}`],
    ['just-over.json', `{"port":${'['.repeat(32)}${']'.repeat(32)}}`],
  ])('refuses a config file nested too deep (%s): one line naming it, the usage, exit 2', async (name, content) => {
    await file(`deep-${name}`, content);
    for (const command of [['serve'], ['worker'], ['accounts', 'show', 'acct_x']]) {
      const out = capture({ cwd: dir, env: {} });
      const code = await runCli([...command, '--config', `deep-${name}`, ...(command[0] === 'serve' ? ['--print-config'] : [])], out.io);
      expect(code, command.join(' ')).toBe(2);
      expect(out.stdout()).toBe('');
      const lines = out.stderr().split('\n');
      // an action is named with its command: `ipokit accounts show: ...`
      expect(lines[0]).toBe(`ipokit ${command.filter((word) => !word.startsWith('acct_')).join(' ')}: config file deep-${name} is nested too deep: more than 32 levels of arrays and objects`);
      expect(lines[1]).toMatch(/^Usage: ipokit /);
    }
  });

  it('takes a config file nested 32 deep as far as its settings (the deepest that is not refused)', async () => {
    const config = await file('deep-32.json', `{"port":${'['.repeat(31)}${']'.repeat(31)}}`);
    const r = await serve(['--config', config, '--print-config']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[1]).toMatch(/^ {2}port: must be a whole number from 0 to 65535, got \[\[\[/);
  });

  it('names the source of each connection limit when limits from several sources contradict each other', async () => {
    const config = await file('limits.json', { connections: { requestTimeoutMs: 1000 } });
    const r = await serve(['--config', config, '--headers-timeout-ms', '5000', '--print-config']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      'ipokit serve: --headers-timeout-ms (5000) must not exceed connections.requestTimeoutMs in limits.json (1000): the headers are part of the request; 0 turns either off',
    );
  });
});

describe("the README's config file", () => {
  it('is a valid config file: --print-config takes it whole and prints the same settings back', async () => {
    const readme = await readFile(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
    const at = readme.indexOf('\n### Running ipokit serve for real\n');
    expect(at).toBeGreaterThan(0);
    const block = /```json\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
    await writeFile(join(dir, 'readme.config.json'), block);
    const r = await serve(['--config', 'readme.config.json', '--print-config']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const given = JSON.parse(block) as Record<string, unknown>;
    expect(JSON.parse(r.stdout)).toMatchObject({ ...given, limits: { free: { perMinute: 10, gmpPerMinute: 3 }, paid: { perMinute: 600 }, keyless: { perMinute: 'off' } } });
  });
});


describe('the metrics settings', () => {
  const flags = (args: string[]) => settingsFlags(parseArgs({ args, options: SETTINGS_FLAGS }).values);

  it('are off by default, on 127.0.0.1 when on', () => {
    expect(resolveSettings().metrics).toEqual({ port: null, host: '127.0.0.1' });
  });

  it('come from the flags, else IPOKIT_METRICS_*, else the file (metrics.port, metrics.host)', () => {
    const file = { name: 'f.json', json: { metrics: { port: 9464, host: '0.0.0.0' } } };
    expect(resolveSettings({ file }).metrics).toEqual({ port: 9464, host: '0.0.0.0' });
    const env = { IPOKIT_METRICS_PORT: '9465', IPOKIT_METRICS_HOST: '10.0.0.1' };
    expect(resolveSettings({ file, env }).metrics).toEqual({ port: 9465, host: '10.0.0.1' });
    expect(resolveSettings({ file, env, flags: flags(['--metrics-port', '0', '--metrics-host', '::1']) }).metrics).toEqual({ port: 0, host: '::1' });
    // null in a file (as --print-config writes it) is off
    expect(resolveSettings({ file: { name: 'f.json', json: { metrics: { port: null } } } }).metrics.port).toBeNull();
    const printed = resolveSettings({ file: { name: 'printed.json', json: JSON.parse(settingsJson(resolveSettings())) } });
    expect(printed.metrics).toEqual({ port: null, host: '127.0.0.1' });
  });

  it('refuse a bad port or host in one line naming the setting', () => {
    expect(() => resolveSettings({ flags: flags(['--metrics-port', '70000']) })).toThrow('--metrics-port must be a port number from 0 to 65535, or null for no metrics, got "70000"');
    expect(() => resolveSettings({ flags: flags(['--metrics-port', 'abc']) })).toThrow(/^--metrics-port must be/);
    expect(() => resolveSettings({ env: { IPOKIT_METRICS_PORT: '-1' } })).toThrow(/^IPOKIT_METRICS_PORT must be/);
    expect(() => resolveSettings({ flags: flags(['--metrics-host', 'a b']) })).toThrow(/^--metrics-host must be a host name or an IP address/);
    expect(() => resolveSettings({ file: { name: 'f.json', json: { metrics: { port: 'x', other: 1 } } } })).toThrow(ConfigFileError);
  });
});
