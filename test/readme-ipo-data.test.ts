/**
 * The README's "What IPO readers look at first" block runs as pasted: it is written to a
 * file and run with plain Node (the packages from their dist/, as a reader has them after
 * `npm ci`), and prints exactly the text block that follows it.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROOT } from './readme-blocks.js';

const HEADING = '## What IPO readers look at first';

async function section(): Promise<{ code: string; output: string }> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  const at = readme.indexOf(`\n${HEADING}\n`);
  if (at < 0) throw new Error(`README has no heading "${HEADING}"`);
  const next = readme.indexOf('\n## ', at + 1);
  const text = readme.slice(at, next < 0 ? undefined : next);
  const code = /```ts\n([\s\S]*?)```/.exec(text);
  if (code === null) throw new Error(`README has no ts block under "${HEADING}"`);
  const output = /```text\n([\s\S]*?)```/.exec(text.slice(code.index + code[0].length));
  if (output === null) throw new Error(`README has no text block after the ts block under "${HEADING}"`);
  return { code: code[1]!, output: output[1]! };
}

function runNode(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawn(process.execPath, [file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('README "What IPO readers look at first"', () => {
  it('runs as pasted with Node and prints the text block under it', async () => {
    const { code, output } = await section();
    // Outside every src/: neither the type check nor vitest picks it up while it exists.
    const file = `${ROOT}.readme-ipo-data-${process.pid}-${Date.now()}.mjs`;
    await writeFile(file, code);
    try {
      const result = await runNode(file);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(output);
    } finally {
      await rm(file, { force: true });
    }
  }, 30_000);
});
