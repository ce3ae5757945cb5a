import { rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROOT, freePort, readmeBlock, startBlock, stopBlock } from '../../test/readme-blocks.js';

// The README's "Webhooks" blocks run as pasted (`node sender.mjs`, `node receiver.mjs`, on the
// packages' dist/): the sender prints the endpoint's secret; its first attempts find no
// receiver; the receiver, started with that secret, gets both events on the first retry
// (5 s later), verified by the standardwebhooks package, and refuses a request it cannot
// verify.

describe('README "Webhooks"', () => {
  it('runs as pasted: the sender delivers to the receiver, which verifies every delivery', { timeout: 40_000 }, async () => {
    const sender = `${ROOT}demo/src/.readme-webhooks-sender-${process.pid}.mjs`;
    const receiver = `${ROOT}demo/src/.readme-webhooks-receiver-${process.pid}.mjs`;
    await writeFile(sender, await readmeBlock('Webhooks'));
    await writeFile(receiver, await readmeBlock('Receiving them'));
    const port = await freePort();
    const s = startBlock([sender], await freePort(), ROOT, { WEBHOOK_URL: `http://127.0.0.1:${port}/hooks/ipo` });
    let r: ReturnType<typeof startBlock> | null = null;
    try {
      const printed = await s.line;
      expect(printed).toMatch(/^WEBHOOK_SECRET=whsec_[A-Za-z0-9+/]{32}$/);
      const secret = printed.slice('WEBHOOK_SECRET='.length);
      // The first attempts fail (nothing listens yet); the retry 5 s later finds the receiver.
      r = startBlock([receiver], port, ROOT, { WEBHOOK_SECRET: secret });
      let out = '';
      r.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const started = performance.now();
      while (!(out.includes('ipo.created ') && out.includes('gmp.snapshot ')) && performance.now() - started < 20_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const lines = out.trim().split('\n').sort();
      expect(lines).toHaveLength(2);
      const [gmp, created] = lines.map((l) => [l.slice(0, l.indexOf(' ')), JSON.parse(l.slice(l.indexOf(' ') + 1))] as const);
      expect(gmp![0]).toBe('gmp.snapshot');
      expect(gmp![1]).toMatchObject({ ipoId: '2026000001', aggregations: { mean: 42.5, median: 42.5, min: 42.5, max: 42.5, mode: 42.5 } });
      expect(created![0]).toBe('ipo.created');
      expect(created![1]).toMatchObject({ id: '2026000001', name: 'Orbit Aerospace Ltd', symbol: 'ORBIT' });
      // A request it cannot verify is refused.
      const forged = await fetch(`http://127.0.0.1:${port}/hooks/ipo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': 'evt_x', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{"type":"ipo.deleted","timestamp":"2026-11-24T00:00:00.000Z","data":{"id":"2026000001"}}',
      });
      expect(forged.status).toBe(400);
    } finally {
      await stopBlock(s.child);
      if (r !== null) await stopBlock(r.child);
      await rm(sender, { force: true });
      await rm(receiver, { force: true });
    }
  });
});
