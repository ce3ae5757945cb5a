/**
 * The README's "Getting data in" push block runs as written, line by line and in order: the
 * token line with the real shell, each `npm run ipokit -- ...` in-process through runCli in
 * a scratch directory (the server from memory, on a free port for the README's 3000), and
 * its `kill %1`. The push must write the whole file.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from './index.js';
import { capture } from './test-helpers.js';
import { shellWords, stripComment } from './test-readme.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const sh = promisify(execFile);

/** The ```sh block of the README section `## Getting data in` (indented in its list), line by line. */
async function pushBlock(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Getting data in\n');
  if (start < 0) throw new Error('README has no "## Getting data in" section');
  const end = readme.indexOf('\n## ', start + 1);
  const m = /^[ \t]*```sh\n([\s\S]*?)^[ \t]*```/m.exec(readme.slice(start, end < 0 ? undefined : end));
  if (m === null) throw new Error('the "Getting data in" section has no ```sh block');
  return m[1]!.split('\n').map((line) => stripComment(line.trim())).filter((line) => line !== '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** `npm run [-s] ipokit -- ARGS`: the ipokit arguments. */
function ipokitArgs(words: string[]): string[] {
  const at = words.indexOf('--');
  if (words[0] !== 'npm' || at < 0 || !['npm run ipokit', 'npm run -s ipokit'].includes(words.slice(0, at).join(' '))) {
    throw new Error(`not an "npm run ipokit -- ..." line: ${words.join(' ')}`);
  }
  return words.slice(at + 1);
}

describe('the README\'s "Getting data in" push block', () => {
  it('runs as written: a token, a server with the push route, a dataset pushed whole', async () => {
    const lines = await pushBlock();
    expect(lines.map((l) => /ipokit -- ([a-z-]+)/.exec(l)?.[1] ?? l.split(' ')[0])).toEqual(['node', 'serve', 'demo-data', 'push', 'kill']);
    const cwd = await mkdtemp(join(tmpdir(), 'ipokit-readme-push-'));
    const port = await freePort();
    const env = { PORT: String(port), IPOKIT_DRAIN_MS: '2000' };
    let server: { stop(): Promise<void> } | null = null;
    try {
      for (const line of lines) {
        if (line === 'kill %1') {
          expect(server, 'kill %1 with no server running').not.toBeNull();
          await server!.stop();
          server = null;
          continue;
        }
        if (line.startsWith('node ')) {
          await sh('bash', ['-c', line], { cwd });
          expect((await readFile(join(cwd, 'ingest.token'), 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
          continue;
        }
        const background = line.endsWith(' &');
        const args = ipokitArgs(shellWords(background ? line.slice(0, -2) : line, new Map())).map((a) => a.replace('http://localhost:3000', `http://127.0.0.1:${port}`));
        if (background) {
          const controller = new AbortController();
          const out = capture({ cwd, env, signal: controller.signal });
          const done = runCli(args, out.io);
          await Promise.race([out.waitForStdout(/\nPush: POST http:\/\/localhost:\d+\/-\/ingest/, 120_000), done.then((code) => Promise.reject(new Error(`exited with ${code}: ${out.stderr()}`)))]);
          server = {
            async stop() {
              controller.abort();
              expect(await done).toBe(0);
            },
          };
          continue;
        }
        const out = capture({ cwd, env });
        const code = await runCli(args, out.io);
        expect(code, `${line}\n${out.stdout()}\n${out.stderr()}`).toBe(0);
        if (args[0] === 'push') {
          const dataset = JSON.parse(await readFile(join(cwd, 'ipos.json'), 'utf8')) as { ipos: unknown[]; gmp: unknown[]; subscription: unknown[] };
          expect(out.stdout()).toBe(`pushed ipos.json: wrote ${dataset.ipos.length} IPOs, ${dataset.gmp.length} GMP snapshots and ${dataset.subscription.length} subscription snapshots\n`);
        }
      }
    } finally {
      await server?.stop().catch(() => undefined);
      await rm(cwd, { recursive: true, force: true });
    }
  }, 180_000);
});
