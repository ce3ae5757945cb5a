/**
 * The README's Express, Koa and Hono blocks and how a reader runs one, shared by
 * demo/src/readme.test.ts (the blocks in the repository, on its dist/) and
 * test/fresh-clone.test.ts (the blocks in a tree laid out like a fresh clone after `npm ci`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The README sections holding an app block, each with a short name for its files. */
export const BLOCKS = [
  ['Use it in your Express app', 'express'],
  ['With Koa', 'koa'],
  ['With Hono (or any fetch runtime)', 'hono'],
] as const;

/** The first ```ts block after the heading `## {heading}` (or `### {heading}`). */
export async function readmeBlock(heading: string): Promise<string> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const level2 = readme.indexOf(`\n## ${heading}\n`);
  const at = level2 >= 0 ? level2 : readme.indexOf(`\n### ${heading}\n`);
  if (at < 0) throw new Error(`README has no heading "${heading}"`);
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (m === null) throw new Error(`README has no ts block after "${heading}"`);
  return m[1]!;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The environment of a reader's shell, with PORT: no NODE_OPTIONS, where a
 * `--conditions=source` would send @ipokit/* to their sources and hide a missing dist/.
 */
export function readerEnv(port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, PORT: String(port) };
  delete env.NODE_OPTIONS;
  return env;
}

export interface StartedBlock {
  child: ChildProcess;
  /** The first line the block prints (its curl line); rejects when the process exits first. */
  line: Promise<string>;
}

/**
 * Runs `node {args}` in `cwd`. Its first line on stdout is `line`; when it exits before,
 * `line` rejects with its stderr, and the fix when it exited because dist/ is not built.
 */
export function startBlock(args: readonly string[], port: number, cwd: string = ROOT, env: NodeJS.ProcessEnv = {}): StartedBlock {
  const child = spawn(process.execPath, args, { cwd, env: readerEnv(port, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => {
      const unbuilt = /ERR_MODULE_NOT_FOUND/.test(stderr) && /[\\/]dist[\\/]/.test(stderr);
      const hint = unbuilt ? ' (the packages are not built: `npm ci` builds them with the root prepare script; so do `npm run prepare` and `npm run build`)' : '';
      reject(new Error(`exited with ${code}${hint}: ${stderr}`));
    });
  });
  line.catch(() => {}); // a caller that stops the process without waiting for the line
  return { child, line };
}

/** Ends a started block's process and waits until it has exited. */
export async function stopBlock(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill();
  await exited;
}

/** The URL (on 127.0.0.1) and key of the curl line a block printed, or null when it is not one. */
export function parseCurlLine(line: string): { url: string; key: string } | null {
  const m = /^curl -s '([^']+)' -H 'x-api-key: (ipk_[A-Za-z0-9]{32})'$/.exec(line);
  return m === null ? null : { url: m[1]!.replace('localhost', '127.0.0.1'), key: m[2]! };
}

/**
 * A README section's first ```ts block and the ```text block after it (what the block
 * prints), under the heading `## {heading}`.
 */
export async function codeAndOutput(heading: string): Promise<{ code: string; output: string }> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`README has no heading "## ${heading}"`);
  const next = readme.indexOf('\n## ', at + 1);
  const text = readme.slice(at, next < 0 ? undefined : next);
  const code = /```ts\n([\s\S]*?)```/.exec(text);
  if (code === null) throw new Error(`README has no ts block under "${heading}"`);
  const output = /```text\n([\s\S]*?)```/.exec(text.slice(code.index + code[0].length));
  if (output === null) throw new Error(`README has no text block after the ts block under "${heading}"`);
  return { code: code[1]!, output: output[1]! };
}

/**
 * Runs a README block as a reader does: written to a .mjs file at the root (outside every
 * src/, so neither the type check nor vitest picks it up), run with plain Node (the packages
 * from their dist/), then removed. Its exit code and both outputs.
 */
export async function runBlockWithNode(code: string, name: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = `${ROOT}.readme-${name}-${process.pid}-${Date.now()}.mjs`;
  await writeFile(file, code);
  try {
    return await new Promise((resolve, reject) => {
      const { NODE_OPTIONS: _ignored, ...env } = process.env;
      const child = spawn(process.execPath, [file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('exit', (exit) => {
        clearTimeout(timer);
        resolve({ code: exit, stdout, stderr });
      });
    });
  } finally {
    await rm(file, { force: true });
  }
}
