/**
 * The demo's `npm start`: `ipokit serve` with the demo's defaults (one key per plan, tiered
 * limits, the generated dataset imported into an empty PostgreSQL, `IPOKIT_DATASET` for a
 * file of your own), and `--node` / `--express` / `--koa` as short forms of `--framework`.
 */
import type { IpoRouterOptions } from '@ipokit/core';
import { reportError } from './report.js';
import { CliError, type CliIo } from './io.js';
import { runServe } from './serve.js';

/** The usage of `npm start`, printed after a usage error and by `npm start -- --help`. */
export const DEMO_USAGE =
  'Usage: npm start [-- --node | --express | --koa] [--port N] [--host H] [--log text|json|off] [--config FILE] [any other option of ipokit serve]';

/**
 * The demo's limits per plan, a layer under the user's own (`--limit`, the config file win
 * over it); `ipokit serve` and the library keep the contract's 6 a minute for every plan.
 * Free keeps the seed's 6 requests a minute (GMP 3), so that the demo still shows what a
 * limit looks like: opening one IPO in the dashboard costs 3 requests (the IPO, its
 * subscription series, its GMP series), so the third IPO in a minute meets a 429. Paid and
 * pro get 10 and 100 times as much (20 and 200 IPOs opened a minute, the GMP route alike),
 * so that the dashboard can be explored on them without meeting the limit. Keyless callers
 * keep 6. The hour and day windows stay off, as in `ipokit serve`.
 */
export const DEMO_LIMITS = {
  free: { perMinute: 6, gmpPerMinute: 3 },
  paid: { perMinute: 60, gmpPerMinute: 30 },
  pro: { perMinute: 600, gmpPerMinute: 300 },
  keyless: { perMinute: 6 },
} as const satisfies NonNullable<IpoRouterOptions['limits']>;

/**
 * Runs the demo until `io.signal` aborts and resolves to its exit code: 0 stopped, 1 failed
 * (a port in use, a refused dataset, a database that cannot be reached), 2 bad usage (one
 * line, then the usage). Flags as `ipokit serve` takes them (`--port`, `--host`,
 * `--config`, ...), each over its variable (`PORT`, `HOST`, `IPOKIT_*`).
 *
 * @example
 * ```ts
 * process.exitCode = await runDemo(process.argv.slice(2), processIo({ stopOnSignals: true }));
 * ```
 */
export async function runDemo(argv: readonly string[], io: CliIo): Promise<number> {
  const args: string[] = [];
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') {
      io.stdout.write(`${DEMO_USAGE}\n\nThe options are those of 'ipokit serve': npm run ipokit -- serve --help lists them.\n`);
      return 0;
    }
    args.push(arg === '--koa' ? '--framework=koa' : arg === '--express' ? '--framework=express' : arg === '--node' ? '--framework=node' : arg);
  }
  try {
    return await runServe(args, io, { who: 'ipokit demo', title: 'ipokit demo', demoKeys: true, limits: DEMO_LIMITS, seedEmptyDatabase: true, datasetEnv: 'IPOKIT_DATASET', demoLive: true });
  } catch (err) {
    if (err instanceof CliError && err.exitCode === 2) {
      io.stderr.write(`ipokit demo: ${err.message.replace(/\r?\n/g, ' ')}\n${DEMO_USAGE}\n`);
      return 2;
    }
    return reportError(err, io, { command: 'demo' });
  }
}
