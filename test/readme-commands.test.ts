/**
 * The README's shell commands cannot rot: every `npm run <script>` in any of its sh blocks
 * names a script of the root package.json, and the development scripts that finish in
 * seconds with small arguments are run here (fuzzing, fault injection). The other blocks
 * are run elsewhere: the Express and Koa apps by demo/src/readme.test.ts, the Command
 * line walk-through by packages/cli/src/readme.test.ts, the client by
 * packages/client/src/readme.test.ts; `npm test`, `npm run typecheck` and `npm run build`
 * by CI (.ci/run); the benchmarks by `npm run bench`, whose results are BENCHMARKS.md.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function shBlocks(): Promise<string[]> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function postgresInstalled(): boolean {
  return existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`));
}

describe('README commands', () => {
  it('every npm run in the README names a script of package.json', async () => {
    const pkg = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };
    const named = (await shBlocks()).flatMap((block) => [...block.matchAll(/\bnpm run(?: -s)? ([\w:-]+)/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => pkg.scripts[name] === undefined)).toEqual([]);
  });

  it('npm run fuzz runs (48 generated requests on every adapter and store)', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'fuzz', '--', '--runs', '48', '--seed', '7'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toMatch(/48|requests/);
  }, 180_000);

  it.runIf(postgresInstalled() || Boolean(process.env.DATABASE_URL))(
    'npm run faults runs (one outage under load, checked)',
    async () => {
      const args = ['run', '--silent', 'faults', '--', '--cycles', '1', '--workers', '8', '--collector-cycles', '1', ...(postgresInstalled() ? [] : ['--mode', 'proxy'])];
      // On failure, what the script printed (its FAILED list) goes into the message.
      const { stdout } = await run('npm', args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch((err: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`${err.message}\n${(err.stdout ?? '').slice(-3000)}\n${(err.stderr ?? '').slice(-2000)}`);
      });
      expect(stdout).toMatch(/faults injected:\s+1/);
      expect(stdout).toMatch(/result:\s+no crash/);
    },
    300_000,
  );
});
