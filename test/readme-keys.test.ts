/**
 * The README's "Keys: expiry, rotation, last use" block runs as pasted (`node keys.mjs` on
 * the packages' dist/) and prints what the text says: the rotated trial key expiring in an
 * hour, the new key when the trial would have (in 30 days) and rotated from it, neither used
 * yet.
 */
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT, readmeBlock, readerEnv } from './readme-blocks.js';

it('README "Keys: expiry, rotation, last use" runs as pasted', async () => {
  const file = `${ROOT}test/.readme-keys-${process.pid}.mjs`;
  await writeFile(file, await readmeBlock('Keys: expiry, rotation, last use'));
  try {
    const before = Date.now();
    const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: ROOT, env: readerEnv(0) });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    // (created in one millisecond, the two keys list by id, which is random)
    const words = lines.map((l) => l.split(' '));
    const old = words.find((w) => w[9] === 'none');
    const next = words.find((w) => w !== old);
    // ipk_XXXXXXXX trial expires <ISO> last used never rotated from none
    expect(old).toEqual([expect.stringMatching(/^ipk_[0-9A-Za-z]{8}$/), 'trial', 'expires', expect.any(String), 'last', 'used', 'never', 'rotated', 'from', 'none']);
    const expires = Date.parse(old![3]!);
    expect(expires - before).toBeGreaterThanOrEqual(3_600_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(3_600_000);
    // the new key keeps the trial's expiry (30 days from the block's start), rotated from the old one
    expect(next).toEqual([expect.stringMatching(/^ipk_[0-9A-Za-z]{8}$/), 'trial', 'expires', expect.any(String), 'last', 'used', 'never', 'rotated', 'from', expect.stringMatching(/^key_/)]);
    const trialEnds = Date.parse(next![3]!);
    expect(trialEnds - before).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(trialEnds - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
  } finally {
    await rm(file, { force: true });
  }
});
