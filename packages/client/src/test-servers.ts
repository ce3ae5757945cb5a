/**
 * Real servers for the client's tests: Express 5 (`app.use('/ipos', ipoRouter(store))`) and
 * Koa 3 (`ipoRouter(store, { prefix: '/ipos' })`) over a memory store seeded with the HTTP
 * suite's fixture, on 127.0.0.1 port 0, with a clock the test moves. Not published (the
 * package ships dist/ only, built from index.ts).
 */
import type { IpoRouterOptions } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, type FixtureKeys, type HttpTarget, type StartedTarget } from '@ipokit/testing';
import { memoryStore } from '@ipokit/storage-memory';
// The adapters' own test apps (not published), by path: the same servers their suites use.
import { EXPRESS_VERSIONS, expressTarget } from '../../express/src/test-target.js';
import { koaTargets } from '../../koa/src/test-target.js';

/** A way to serve the router at `/ipos`. */
export type Framework = HttpTarget;

/** A server that listens. */
export type Served = StartedTarget;

/** The frameworks the client is tested against: Express 5, and Koa 3 with `prefix: '/ipos'`. */
export const FRAMEWORKS: readonly Framework[] = [expressTarget(EXPRESS_VERSIONS[0]!), ...koaTargets('koa 3')];

/** No window refuses anything (for tests that send many requests). */
export const NO_LIMITS: NonNullable<IpoRouterOptions['limits']> = {
  free: { perMinute: Infinity, gmpPerMinute: Infinity },
  paid: { perMinute: Infinity, gmpPerMinute: Infinity },
  pro: { perMinute: Infinity, gmpPerMinute: Infinity },
  keyless: { perMinute: Infinity },
};

/** A fixture server: its URL, the fixture's keys, and its clock (epoch ms, starting at FIXTURE_NOW). */
export interface FixtureServer extends Served {
  keys: FixtureKeys;
  clock: { now: number };
}

/**
 * Seeds a fresh memory store with the fixture and serves it with `framework`; the router's
 * clock reads `clock.now`.
 *
 * @example
 * ```ts
 * const server = await fixtureServer(FRAMEWORKS[0]!, { limits: NO_LIMITS });
 * ```
 */
export async function fixtureServer(framework: Framework, options: IpoRouterOptions = {}): Promise<FixtureServer> {
  const store = memoryStore();
  const { keys } = await seedFixture(store);
  const clock = { now: FIXTURE_NOW };
  const served = await framework.start(store, { onError: () => {}, ...options, now: () => new Date(clock.now) });
  return {
    ...served,
    keys,
    clock,
    close: async () => {
      await served.close();
      await store.close?.();
    },
  };
}
