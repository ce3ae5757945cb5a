/**
 * The package as users install it: built with tsup, copied alone into a temporary
 * node_modules (no @ipokit/core anywhere), imported as ESM and CommonJS, its types checked
 * by a strict consumer with the DOM lib (a browser) and with @types/node alone (Node), and
 * linted by publint and arethetypeswrong.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SLOW = 120_000;

const ESM_SCRIPT = `
import { createRequire } from 'node:module';
import { createClient, isIpokitApiError, IpokitApiError } from '@ipokit/client';
const cjs = createRequire(import.meta.url)('@ipokit/client');
const answers = [
  { status: 200, body: { ipo: { id: '2026000001', symbol: 'ORBIT' } } },
  { status: 404, body: { status: '404', title: 'Not Found', detail: 'No IPO has the identifier "X".', code: 'ERR:NOTFOUND' } },
];
const fetch = async (url, init) => {
  const a = answers.shift();
  return new Response(JSON.stringify(a.body), { status: a.status });
};
const client = createClient({ baseUrl: 'http://example.test/ipos/', apiKey: 'ipk_k', fetch });
const ipo = await client.get('ORBIT');
const err = await client.get('X').catch((e) => e);
console.log(JSON.stringify({
  ipo: ipo.id,
  esm: err instanceof IpokitApiError && isIpokitApiError(err, 'ERR:NOTFOUND'),
  cjsGuard: cjs.isIpokitApiError(err, 'ERR:NOTFOUND'),
  twoCopies: cjs.IpokitApiError !== IpokitApiError,
  status: err.status,
}));
`;

const CJS_SCRIPT = `
const { createClient, isIpokitApiError } = require('@ipokit/client');
const client = createClient({
  baseUrl: 'http://example.test/ipos',
  fetch: async (url) => new Response(JSON.stringify({ meta: { count: 0, countOnPage: 0, totalPages: 0, page: 1, limit: 3 }, ipos: [], url }), { status: 200 }),
});
client.list({ status: 'open', type: ['EQ', 'SME'] }).then((r) => console.log(JSON.stringify({ url: r.url, guard: typeof isIpokitApiError })));
`;

// A consumer in strict mode: the types must be complete without @ipokit/core.
const CONSUMER_ESM = `
import { createClient, isIpokitApiError, type GmpSeries, type Ipo, type ListResponse } from '@ipokit/client';

const client = createClient({ baseUrl: '/ipos', apiKey: 'ipk_x', retry: { retries: 1 }, fetch });
const page: ListResponse = await client.list({ status: 'open', type: ['EQ', 'SME'], year: 2026, signal: AbortSignal.timeout(1000) });
const first: Ipo | undefined = page.ipos[0];
const symbol: string | null | undefined = first?.symbol;
const mean: number | null | undefined = first?.gmp?.aggregations.mean;
for await (const ipo of client.all({ status: 'listed' })) ipo.status satisfies 'open' | 'upcoming' | 'listed' | 'closed' | 'announced';
const series: GmpSeries = await client.gmp('ORBIT', { interval: 'hourly', field: 'median' });
series.series[0]?.price satisfies number | null | undefined;
try {
  await client.get('ORBIT');
} catch (err) {
  if (isIpokitApiError(err, 'ERR:BADPARAM')) {
    const code: 'ERR:BADPARAM' | 'ERR:RATELIMIT' | 'ERR:UNEXPECTED' | string = err.code;
    const meta = err.meta;
    if (meta !== undefined && 'parameter' in meta) meta.parameter satisfies string;
    console.log(code, err.status satisfies number);
  }
}
// @ts-expect-error status is required
await client.list({});
// @ts-expect-error not a status
await client.list({ status: 'soon' });
// @ts-expect-error not an interval
await client.gmp('x', { interval: 'yearly' });
console.log(symbol, mean);
`;

const CONSUMER_CJS = `
import client = require('@ipokit/client');
const c: client.IpokitClient = client.createClient({ baseUrl: 'https://api.example.com/ipos' });
export const one: Promise<client.Ipo> = c.get('ORBIT');
`;

describe('the published package', () => {
  let tmp: string;
  beforeAll(async () => {
    // The real build (dist/ is ignored by git), then a copy of the package alone.
    await run(process.execPath, [`${ROOT}node_modules/tsup/dist/cli-default.js`], { cwd: CLIENT });
    tmp = await mkdtemp(join(tmpdir(), 'ipokit-client-'));
    const pkg = join(tmp, 'node_modules', '@ipokit', 'client');
    await mkdir(pkg, { recursive: true });
    await cp(join(CLIENT, 'dist'), join(pkg, 'dist'), { recursive: true });
    await cp(join(CLIENT, 'package.json'), join(pkg, 'package.json'));
  }, SLOW);
  afterAll(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  });

  it('dist imports nothing: the types of @ipokit/core are inlined, no node: module, no dependency', async () => {
    const pkg = JSON.parse(await readFile(join(CLIENT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
    for (const file of ['index.d.ts', 'index.d.cts', 'index.js', 'index.cjs']) {
      const text = await readFile(join(CLIENT, 'dist', file), 'utf8');
      expect(text, file).not.toMatch(/^\s*import\s[^;]*from\s|^\s*export\s[^;]*from\s|\brequire\(\s*['"]|import\(\s*['"]/m);
      expect(text.replace(/^\s*\/\/.*$/gm, ''), file).not.toMatch(/@ipokit\/core|['"]node:/);
    }
    const dts = await readFile(join(CLIENT, 'dist', 'index.d.ts'), 'utf8');
    expect(dts).toContain('interface Ipo {');
    expect(dts).toContain('interface GmpSeries {');
    expect(await readFile(join(CLIENT, 'dist', 'index.d.cts'), 'utf8')).toBe(dts);
  });

  it('runs as ESM and as CommonJS outside the workspace; the error guard works across both copies', async () => {
    await writeFile(join(tmp, 'esm.mjs'), ESM_SCRIPT);
    await writeFile(join(tmp, 'cjs.cjs'), CJS_SCRIPT);
    const esm = await run(process.execPath, ['esm.mjs'], { cwd: tmp });
    expect(JSON.parse(esm.stdout)).toEqual({ ipo: '2026000001', esm: true, cjsGuard: true, twoCopies: true, status: 404 });
    const cjs = await run(process.execPath, ['cjs.cjs'], { cwd: tmp });
    expect(JSON.parse(cjs.stdout)).toEqual({ url: 'http://example.test/ipos?status=open&type=EQ%2CSME', guard: 'function' });
  });

  it(
    'its types check in a strict consumer, ESM and CommonJS, in a browser (DOM lib) and in Node (@types/node)',
    async () => {
      await writeFile(join(tmp, 'consumer.mts'), CONSUMER_ESM);
      await writeFile(join(tmp, 'consumer.cts'), CONSUMER_CJS);
      const base = { strict: true, noEmit: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noUncheckedIndexedAccess: true };
      const configs = {
        'tsconfig.dom.json': { compilerOptions: { ...base, lib: ['es2022', 'dom'], types: [] }, files: ['consumer.mts', 'consumer.cts'] },
        'tsconfig.node.json': {
          compilerOptions: { ...base, lib: ['es2022'], types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] },
          files: ['consumer.mts', 'consumer.cts'],
        },
      };
      for (const [name, config] of Object.entries(configs)) {
        await writeFile(join(tmp, name), JSON.stringify(config));
        const result = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', name], { cwd: tmp }).catch(
          (err: { stdout?: string; stderr?: string }) => ({ stdout: `FAILED\n${err.stdout ?? ''}${err.stderr ?? ''}` }),
        );
        expect(result.stdout, name).toBe('');
      }
    },
    SLOW,
  );

  it(
    'publint and arethetypeswrong find no problem',
    async () => {
      const { messages } = await publint({ pkgDir: CLIENT, level: 'suggestion', strict: true });
      expect(messages).toEqual([]);
      const attw = await run(process.execPath, [join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js'), '--pack', '.', '--format', 'json'], {
        cwd: CLIENT,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '{}' }));
      const report = JSON.parse(attw.stdout) as { problems?: unknown };
      expect(report.problems).toEqual({});
    },
    SLOW,
  );
});
