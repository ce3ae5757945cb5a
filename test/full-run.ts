/**
 * Which tests `npm test` runs and which only `npm run test:all` runs: the one place that says
 * so (vitest.config.ts reads it; test/full-run.test.ts checks it).
 *
 * - `npm test` (the vitest project `quick`): every test file but those in FULL_RUN_ONLY. A
 *   new test file is in it without a change here.
 * - `npm run test:all` (the vitest project `all`, which sets IPOKIT_TEST_ALL=1): the files in
 *   FULL_RUN_ONLY (several processes, browsers, packaging, fresh clones, servers started for
 *   the README's walk-throughs, faults), and the files in SPLIT once more, for their other
 *   half.
 * - A file in SPLIT runs in both, each time a different part of it: it runs a shared suite
 *   over several frameworks or backends through {@link oneOfEach}, which gives the quick run
 *   the first of them and the full run all the others. So `npm test` then
 *   `npm run test:all` run every test exactly once.
 *
 * Paths are relative to the repository's root, as vitest's include globs are.
 */

/** True in `npm run test:all` (the vitest project `all` sets IPOKIT_TEST_ALL=1). */
export const FULL_RUN = process.env.IPOKIT_TEST_ALL === '1';

/** Every test file vitest runs, quick or full. */
export const TEST_GLOBS = ['packages/*/src/**/*.test.ts', 'demo/src/**/*.test.ts', 'test/**/*.test.ts'];

/** Files only `npm run test:all` runs, by kind. */
export const FULL_RUN_ONLY: readonly string[] = [
  // a browser
  'packages/dashboard/src/browser.test.ts',
  // several processes on one database, one Redis, one source; a Redis cluster
  'packages/storage-postgres/src/multi-process.test.ts',
  'packages/storage-postgres/src/webhook-processes.test.ts',
  'packages/limiter-redis/src/multi-process.test.ts',
  'packages/limiter-redis/src/cluster.test.ts',
  'packages/sources/src/collector-processes.test.ts',
  'packages/cli/src/worker.test.ts',
  'demo/src/ports.test.ts',
  'demo/src/shutdown.test.ts',
  'demo/src/limits.test.ts',
  // packaging: tarballs, a fresh clone, the packages' READMEs
  'test/packages.test.ts',
  'test/tarball-install.test.ts',
  'test/fresh-clone.test.ts',
  'test/package-readmes.test.ts',
  'packages/client/src/package.test.ts',
  // the README's walk-throughs and blocks, run as pasted (servers, the CLI, npm run fuzz and faults)
  'test/readme-commands.test.ts',
  'test/readme-data-in.test.ts',
  'test/readme-ipo-data.test.ts',
  'test/readme-keys.test.ts',
  'test/readme-plans.test.ts',
  'demo/src/readme.test.ts',
  'demo/src/readme-stores.test.ts',
  'packages/cli/src/readme.test.ts',
  'packages/cli/src/readme-data-in.test.ts',
  'packages/client/src/readme.test.ts',
  // faults: outages, stalls, deadlines, an unreachable database
  'packages/storage-postgres/src/outage.test.ts',
  'packages/storage-postgres/src/limiter-outage.test.ts',
  'packages/storage-postgres/src/deadline.test.ts',
  'packages/storage-postgres/src/failures.test.ts',
  'packages/limiter-redis/src/deadline.test.ts',
  // the shared suites on every other backend x framework (npm test: the store, webhook and
  // worker suites on memoryStore, the source-store suite on localSourceStore, the HTTP suite
  // on Express, the account suite on the fetch adapter, fuzzing on Express)
  'packages/storage-postgres/src/postgres-store.test.ts',
  'packages/storage-postgres/src/postgres-http.test.ts',
  'packages/storage-postgres/src/source-store.test.ts',
  'packages/storage-postgres/src/fuzz.test.ts',
  'packages/storage-postgres/src/plans.test.ts',
  'packages/storage-postgres/src/webhooks.test.ts',
  'packages/limiter-redis/src/redis-limiter.test.ts',
  'packages/limiter-redis/src/http.test.ts',
  'packages/koa/src/koa.test.ts',
  'packages/koa/src/account.test.ts',
  'packages/koa/src/fuzz.test.ts',
  'packages/koa/src/parity.test.ts',
  'packages/koa/src/client-address.test.ts',
  'packages/fetch/src/fetch.test.ts',
  'packages/fetch/src/fuzz.test.ts',
  'packages/fetch/src/parity.test.ts',
  'packages/express/src/account.test.ts',
  // the PostgreSQL store's own behaviour, the slowest files of a quick run (over a minute each
  // on a busy machine): the data cache with LISTEN, the limiter's windows in SQL
  'packages/storage-postgres/src/data-cache.test.ts',
  'packages/storage-postgres/src/limiter.test.ts',
  // the slowest files of a quick run measured on the integration branch (seconds of test
  // time under load): the CLI's bin run as processes (136), the import streaming property
  // (72), the server on every framework (42), the dashboard's type check (29), the shared
  // suites on the node:http listener (24; npm test runs them on Express)
  'packages/cli/src/bin.test.ts',
  'packages/cli/src/import.test.ts',
  'packages/cli/src/server.test.ts',
  'packages/dashboard/src/typecheck.test.ts',
  'packages/cli/src/node-app-http.test.ts',
];

/** Files both runs run, each its own part: they choose with {@link oneOfEach}. */
export const SPLIT: readonly string[] = [];

/**
 * The items this run covers: in `npm test` the first (one run of the suite), in
 * `npm run test:all` all the others, so the two runs cover each item once. For a file in
 * SPLIT that runs a shared suite over frameworks, versions or backends.
 *
 * @example
 * ```ts
 * for (const framework of oneOfEach(EXPRESS_VERSIONS)) testHttp({ target: expressTarget(framework), createStore });
 * ```
 */
export function oneOfEach<T>(items: readonly T[]): T[] {
  return FULL_RUN ? items.slice(1) : items.slice(0, 1);
}
