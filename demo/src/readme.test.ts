import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLOCKS, ROOT, freePort, parseCurlLine, readmeBlock, startBlock, stopBlock } from '../../test/readme-blocks.js';

// The README's Express, Koa and Hono blocks run as pasted: each is written to a file and run the
// way the README says, `node server.mjs` or `npx tsx server.mts`, and the curl line it
// prints must answer 200 with the IPO. Neither way uses the `source` export condition:
// @ipokit/* resolve through node_modules to the packages' dist/, as for someone who has run
// `npm ci` (whose prepare script builds dist/) and pastes a block into a file in the clone.
// test/fresh-clone.test.ts checks that `npm ci` does leave that dist/.

const TSX = `${ROOT}node_modules/tsx/dist/cli.mjs`;

/** How a reader runs a block: as the README says it, the file's extension, Node's arguments. */
const RUNNERS: ReadonlyArray<readonly [how: string, ext: string, args: (file: string) => string[]]> = [
  ['node server.mjs', 'mjs', (file) => [file]],
  ['npx tsx server.mts', 'mts', (file) => [TSX, file]],
];

/** The packages the blocks import. */
const USED = ['core', 'storage-memory', 'express', 'koa', 'fetch'];

/** Packages whose dist/ is older than a file of their src/ (a failure's likely cause when not empty). */
async function staleBuilds(): Promise<string[]> {
  const stale: string[] = [];
  for (const name of USED) {
    const dir = join(ROOT, 'packages', name);
    const built = await stat(join(dir, 'dist', 'index.js')).then((s) => s.mtimeMs, () => undefined);
    if (built === undefined) continue; // not built at all: startBlock's error says so
    const sources = await readdir(join(dir, 'src'), { recursive: true });
    const newest = Math.max(...(await Promise.all(sources.map((f) => stat(join(dir, 'src', f)).then((s) => s.mtimeMs)))));
    if (newest > built) stale.push(`@ipokit/${name}`);
  }
  return stale;
}

/** The URLs of the curl lines in the sh block after "More queries against either". */
async function moreQueries(): Promise<string[]> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf('More queries against either');
  if (at < 0) throw new Error('README has no "More queries against either"');
  const sh = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  const urls = [...(sh?.[1] ?? '').matchAll(/curl -s '([^']+)' -H "x-api-key: \$KEY"/g)].map((x) => x[1]!);
  if (urls.length === 0) throw new Error('no curl lines after "More queries against either"');
  return urls;
}

describe.each(BLOCKS)('README block "%s"', (heading, name) => {
  it.each(RUNNERS)('runs as pasted with %s and prints a curl line that works', async (_how, ext, args) => {
    const file = `${ROOT}demo/src/.readme-${name}-${process.pid}.${ext}`;
    await writeFile(file, await readmeBlock(heading));
    const port = await freePort();
    const { child, line: printed } = startBlock(args(file), port);
    try {
      const line = await printed.catch(async (err: Error) => {
        const stale = await staleBuilds();
        throw stale.length === 0 ? err : new Error(`${err.message}\n(dist/ is older than src/ in ${stale.join(', ')}: npm run prepare rebuilds it)`);
      });
      const curl = parseCurlLine(line);
      expect(curl, line).not.toBeNull();
      const res = await fetch(curl!.url, { headers: { 'x-api-key': curl!.key } });
      expect(res.status, `built: ${(await staleBuilds()).join(', ') || 'up to date'}`).toBe(200);
      const body = (await res.json()) as { ipo: { symbol: string; gmp?: { aggregations: { mean: number } } } };
      expect(body.ipo.symbol).toBe('ORBIT');
      if (name === 'express') expect(body.ipo.gmp?.aggregations.mean).toBe(41.25);
      // "More queries against either": the README's curl lines, on this server and key.
      for (const url of await moreQueries()) {
        const more = await fetch(url.replace('http://localhost:3000', `http://127.0.0.1:${port}`), { headers: { 'x-api-key': curl!.key } });
        expect(more.status, `${url}: ${await more.clone().text()}`).toBe(200);
        await more.arrayBuffer();
      }
    } finally {
      await stopBlock(child);
      await rm(file, { force: true });
    }
  });
});

describe('README "Use it in your Express app"', () => {
  it('says to run the block the ways tested above', async () => {
    const readme = await readFile(`${ROOT}README.md`, 'utf8');
    const at = readme.indexOf('\n## Use it in your Express app\n');
    const intro = readme.slice(at, readme.indexOf('```ts', at));
    for (const [how] of RUNNERS) expect(intro).toContain(`\`${how}\``);
    expect(intro, 'Node 20 does not run a .ts file').not.toMatch(/\(or `\.ts`\)/);
  });
});

// The proxy setting the README gives (the commented line, switched on: the app's own switch,
// or for Hono a clientAddress that reads what the proxy appended) behind a proxy that
// appends the client's address to X-Forwarded-For: each real client keeps one window, however
// the client fills the header itself. This one runs on the sources (tsx, `source` condition).
describe.each(BLOCKS)('README block "%s" behind an appending proxy', (heading, name) => {
  it('keeps one keyless window per real client, whatever X-Forwarded-For the client sends', async () => {
    const lines = (await readmeBlock(heading)).split('\n');
    const proxyLine = lines.findIndex((l) => /^\s*\/\/ .*proxy/.test(l));
    expect(proxyLine, 'the block has a commented proxy setting').toBeGreaterThanOrEqual(0);
    lines[proxyLine] = lines[proxyLine]!.replace(/^(\s*)\/\/ /, '$1');
    const file = `${ROOT}demo/src/.readme-proxy-${name}-${process.pid}.mts`;
    await writeFile(file, lines.join('\n'));
    const port = await freePort();
    // The proxy: the real client's address comes from the test (all of them are 127.0.0.1
    // here), and is appended to whatever the client sent, as nginx's
    // $proxy_add_x_forwarded_for does.
    const proxy = createHttpServer((req, res) => {
      const real = String(req.headers['x-test-client']);
      const sent = req.headers['x-forwarded-for'];
      const upstream = httpRequest(
        { host: '127.0.0.1', port, path: req.url, method: req.method, headers: { ...req.headers, 'x-forwarded-for': sent === undefined ? real : `${String(sent)}, ${real}` } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      upstream.end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as { port: number }).port;
    const { child, line } = startBlock(['--conditions=source', '--import', 'tsx', file], port);
    try {
      await line;
      const get = async (real: string, forged?: string): Promise<number> => {
        const headers: Record<string, string> = { 'x-test-client': real };
        if (forged !== undefined) headers['x-forwarded-for'] = forged;
        const res = await fetch(`http://127.0.0.1:${proxyPort}/ipos?status=open`, { headers });
        await res.arrayBuffer();
        return res.status;
      };
      // 6 keyless requests a minute per client (the default), each with a new forged address
      const first: number[] = [];
      for (let i = 0; i < 7; i++) first.push(await get('198.51.100.7', `203.0.113.${i}`));
      expect(first).toEqual([200, 200, 200, 200, 200, 200, 429]);
      expect(await get('198.51.100.7')).toBe(429);
      // another real client has its own window
      expect(await get('198.51.100.8', '198.51.100.7')).toBe(200);
    } finally {
      await stopBlock(child);
      proxy.close();
      await rm(file, { force: true });
    }
  });
});
