/**
 * The client-address checks (docs/spec.md#limits, #settings): without a key, limits are per client
 * address; `X-Forwarded-For` counts only when the app's own proxy setting says so, so a
 * caller cannot dodge the limit by sending a new header each time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IpoRouterOptions } from '@ipokit/core';
import type { Store } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture } from './http-fixture.js';
import { referenceStore } from './reference-store.js';
import type { StartedTarget } from './http-suite.js';

/** How a framework starts the router at `/ipos`, trusting a proxy's headers or not. */
export interface ClientAddressTarget {
  /** Shown in the describe block, e.g. `'express 5'`. */
  name: string;
  /**
   * Serves `ipoRouter(store, options)` at `/ipos` on 127.0.0.1. `trustProxy` true sets the
   * framework's own switch (`app.set('trust proxy', true)`, `app.proxy = true`).
   */
  start(store: Store, options: IpoRouterOptions, trustProxy: boolean): Promise<StartedTarget>;
}

const KEYLESS_QUOTA = 3;
const OPTIONS: IpoRouterOptions = {
  now: () => new Date(FIXTURE_NOW),
  limits: { keyless: { perMinute: KEYLESS_QUOTA } },
  onError: () => {},
};

async function statuses(baseUrl: string, forwardedFor: readonly (string | null)[]): Promise<number[]> {
  const out: number[] = [];
  for (const xff of forwardedFor) {
    const res = await fetch(`${baseUrl}?status=listed`, { headers: xff === null ? {} : { 'x-forwarded-for': xff } });
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

/** Runs the client-address checks on one framework target. */
export function testClientAddress(target: ClientAddressTarget): void {
  describe(`client address: ${target.name}`, () => {
    async function withServer(trustProxy: boolean, run: (baseUrl: string) => Promise<void>): Promise<void> {
      const store = referenceStore();
      await seedFixture(store);
      const server = await target.start(store, OPTIONS, trustProxy);
      try {
        await run(server.baseUrl);
      } finally {
        await server.close();
      }
    }

    it('without a trusted proxy, a new X-Forwarded-For on every request does not dodge the keyless limit', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.option(fc.ipV4(), { nil: null }), { minLength: 1, maxLength: 8 }), async (headers) => {
          await withServer(false, async (baseUrl) => {
            const got = await statuses(baseUrl, headers);
            const admitted = got.filter((s) => s === 200).length;
            expect(admitted).toBe(Math.min(headers.length, KEYLESS_QUOTA));
            expect(got.slice(KEYLESS_QUOTA).every((s) => s === 429)).toBe(true);
          });
        }),
        { numRuns: 15 },
      );
    });

    it('with the framework trusting the proxy, each forwarded address has its own window', async () => {
      await withServer(true, async (baseUrl) => {
        const distinct = ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'];
        expect(await statuses(baseUrl, distinct)).toEqual([200, 200, 200, 200, 200]);
        const same = Array.from({ length: KEYLESS_QUOTA + 1 }, () => '198.51.100.7');
        expect(await statuses(baseUrl, same)).toEqual([...Array.from({ length: KEYLESS_QUOTA }, () => 200), 429]);
      });
    });

    it('with a trusted proxy, addresses are normalised: ::ffff:a.b.c.d is a.b.c.d, IPv6 counts by /64', async () => {
      await withServer(true, async (baseUrl) => {
        expect(await statuses(baseUrl, ['198.51.100.9', '::ffff:198.51.100.9', '198.51.100.9', '::ffff:198.51.100.9'])).toEqual([200, 200, 200, 429]);
        expect(await statuses(baseUrl, ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:1:2:abcd::', '2001:db8:1:2::77'])).toEqual([200, 200, 200, 429]);
        expect(await statuses(baseUrl, ['2001:db8:1:3::1'])).toEqual([200]);
      });
    });

    it('with a trusted proxy, a port the proxy appended does not make a new window', async () => {
      await withServer(true, async (baseUrl) => {
        expect(await statuses(baseUrl, ['203.0.113.7:49152', '203.0.113.7:49153', '203.0.113.7', '203.0.113.7:1'])).toEqual([200, 200, 200, 429]);
        expect(await statuses(baseUrl, ['[2001:db8:5:6::1]:443', '[2001:db8:5:6::2]:444', '2001:db8:5:6::3', '[2001:db8:5:6::4]'])).toEqual([200, 200, 200, 429]);
      });
    });

    it('with a trusted proxy, every value that is not an IP address shares one window, however long', async () => {
      await withServer(true, async (baseUrl) => {
        const junk = ['junk-1', 'x'.repeat(2_000), '203.000.113.007', 'unknown', 'localhost'];
        expect(await statuses(baseUrl, junk)).toEqual([200, 200, 200, 429, 429]);
        // real addresses keep their own windows
        expect(await statuses(baseUrl, ['203.0.113.9'])).toEqual([200]);
      });
    });
  });
}
