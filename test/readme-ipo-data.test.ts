/**
 * The README's "What IPO readers look at first" block runs as pasted: it is written to a
 * file and run with plain Node (the packages from their dist/, as a reader has them after
 * `npm ci`), and prints exactly the text block that follows it.
 */
import { describe, expect, it } from 'vitest';
import { codeAndOutput, runBlockWithNode } from './readme-blocks.js';

describe('README "What IPO readers look at first"', () => {
  it('runs as pasted with Node and prints the text block under it', async () => {
    const { code, output } = await codeAndOutput('What IPO readers look at first');
    const result = await runBlockWithNode(code, 'ipo-data');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(output);
  }, 30_000);
});
