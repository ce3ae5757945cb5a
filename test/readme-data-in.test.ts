/**
 * The README's "Getting data in": its in-app collector block runs as pasted with plain Node
 * (the packages from their dist/) and prints exactly the text block that follows it; its
 * sources file is valid settings of `ipokit serve --sources` and `ipokit collect`. (Its push
 * commands are run by packages/cli/src/readme-data-in.test.ts.)
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkSourcesSettings } from '../packages/cli/src/sources-config.js';
import { codeAndOutput, ROOT, runBlockWithNode } from './readme-blocks.js';

const HEADING = 'Getting data in';

describe('README "Getting data in"', () => {
  it('the collector block runs as pasted with Node and prints the text block under it', async () => {
    const { code, output } = await codeAndOutput(HEADING);
    const result = await runBlockWithNode(code, 'data-in');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(output);
  }, 30_000);

  it('the sources file is valid sources settings', async () => {
    const readme = await readFile(`${ROOT}README.md`, 'utf8');
    const at = readme.indexOf(`\n## ${HEADING}\n`);
    const json = /```json\n([\s\S]*?)```/.exec(readme.slice(at, readme.indexOf('\n## ', at + 1)));
    expect(json, 'a json block').not.toBeNull();
    const { settings, problems } = checkSourcesSettings(JSON.parse(json![1]!));
    expect(problems).toEqual([]);
    expect(settings.sources.map((s) => s.type)).toEqual(['upstream', 'url', 'file']);
  });
});
