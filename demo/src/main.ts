/**
 * `npm start`: the demo, which is `ipokit serve` (`@ipokit/cli`) with the demo's defaults:
 * one key per plan, and on PostgreSQL (DATABASE_URL) the generated dataset imported into an
 * empty database. PORT (default 3000) and IPOKIT_DATASET (a dataset JSON file instead of the
 * generated one) come from the environment; `npm start -- --koa` (or IPOKIT_FRAMEWORK=koa)
 * serves it with Koa instead of Express. SIGTERM or Ctrl-C drains (IPOKIT_DRAIN_MS).
 * The connection limits are serve's defaults (printed under the address): at most 1000
 * connections (fewer under a low `ulimit -n`), each closed after 30 s without traffic.
 */
import { CliError, processIo, reportError, serve } from '@ipokit/cli';

const USAGE = 'Usage: npm start [-- --express | --koa]  (or IPOKIT_FRAMEWORK=express|koa)';

async function main(): Promise<number> {
  const io = processIo({ stopOnSignals: true });
  try {
    const port = Number(process.env.PORT ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}.`, 1);
    const datasetFile = process.env.IPOKIT_DATASET || undefined;
    const drainMs = Number(process.env.IPOKIT_DRAIN_MS || 10_000);
    if (!Number.isInteger(drainMs) || drainMs < 0) throw new CliError(`IPOKIT_DRAIN_MS must be a whole number of milliseconds, got ${JSON.stringify(process.env.IPOKIT_DRAIN_MS)}.`, 1);
    return await serve(
      {
        port,
        framework: frameworkOf(process.argv.slice(2), process.env.IPOKIT_FRAMEWORK),
        demoKeys: true,
        seedEmptyDatabase: true,
        drainMs,
        title: 'ipokit demo',
        datasetLabel: 'IPOKIT_DATASET file',
        ...(datasetFile === undefined ? {} : { datasetFile }),
      },
      io,
    );
  } catch (err) {
    return reportError(err, io, { command: 'demo' });
  }
}

/** `--koa` / `--express` on the command line, else IPOKIT_FRAMEWORK, else Express. */
function frameworkOf(args: string[], env: string | undefined): 'express' | 'koa' {
  let chosen: string | undefined = env === undefined || env === '' ? undefined : env.toLowerCase();
  for (const arg of args) {
    if (arg === '--koa' || arg === '--express') chosen = arg.slice(2);
    else throw new CliError(`Unknown argument ${JSON.stringify(arg)}.\n${USAGE}`, 1);
  }
  if (chosen === undefined || chosen === 'express' || chosen === 'koa') return chosen ?? 'express';
  throw new CliError(`IPOKIT_FRAMEWORK must be express or koa, got ${JSON.stringify(env)}.\n${USAGE}`, 1);
}

void main().then((code) => {
  process.exitCode = code;
});
