import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README's Express and Koa blocks run as pasted: each is written to a file, run with
// Node, and the curl line it prints must answer 200 with the IPO.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The first ```ts block after the heading. */
async function block(heading: string): Promise<string> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`README has no heading "${heading}"`);
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (m === null) throw new Error(`README has no ts block after "${heading}"`);
  return m[1]!;
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

describe.each([
  ['Use it in your Express app', 'express'],
  ['With Koa', 'koa'],
])('README block "%s"', (heading, name) => {
  it('runs as pasted and prints a curl line that works', async () => {
    const file = `${ROOT}demo/src/.readme-${name}-${process.pid}.mts`;
    await writeFile(file, await block(heading));
    const port = await freePort();
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      });
      const m = /^curl -s '([^']+)' -H 'x-api-key: (ipk_[A-Za-z0-9]{32})'$/.exec(line);
      expect(m, line).not.toBeNull();
      const res = await fetch(m![1]!.replace('localhost', '127.0.0.1'), { headers: { 'x-api-key': m![2]! } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { ipo: { symbol: string; gmp?: { aggregations: { mean: number } } } };
      expect(body.ipo.symbol).toBe('ORBIT');
      if (name === 'express') expect(body.ipo.gmp?.aggregations.mean).toBe(41.25);
      // "More queries against either": the README's curl lines, on this server and key.
      for (const url of await moreQueries()) {
        const more = await fetch(url.replace('http://localhost:3000', `http://127.0.0.1:${port}`), { headers: { 'x-api-key': m![2]! } });
        expect(more.status, `${url}: ${await more.clone().text()}`).toBe(200);
        await more.arrayBuffer();
      }
    } finally {
      child.kill();
      await rm(file, { force: true });
    }
  });
});

// The proxy setting the README gives (the commented line, switched on) behind a proxy that
// appends the client's address to X-Forwarded-For: each real client keeps one window, however
// the client fills the header itself.
describe.each([
  ['Use it in your Express app', 'express'],
  ['With Koa', 'koa'],
])('README block "%s" behind an appending proxy', (heading, name) => {
  it('keeps one keyless window per real client, whatever X-Forwarded-For the client sends', async () => {
    const lines = (await block(heading)).split('\n');
    const proxyLine = lines.findIndex((l) => /^\/\/ app\..*proxy/.test(l));
    expect(proxyLine, 'the block has a commented proxy setting').toBeGreaterThanOrEqual(0);
    lines[proxyLine] = lines[proxyLine]!.slice(3);
    const file = `${ROOT}demo/src/.readme-proxy-${name}-${process.pid}.mts`;
    await writeFile(file, lines.join('\n'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
    try {
      await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      });
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
      child.kill();
      proxy.close();
      await rm(file, { force: true });
    }
  });
});

