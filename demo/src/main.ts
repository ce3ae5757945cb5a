/**
 * `npm start`: the demo server as a command. PORT (default 3000) and IPOKIT_DATASET
 * (a dataset JSON file instead of the generated one) come from the environment;
 * `npm start -- --koa` (or IPOKIT_FRAMEWORK=koa) serves it with Koa instead of Express.
 */
import { isIpokitError } from '@ipokit/core';
import { DemoError, startDemo, type Demo } from './server.js';


async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}.`);
    process.exit(1);
  }
  const framework = frameworkOf(process.argv.slice(2), process.env.IPOKIT_FRAMEWORK);
  const datasetFile = process.env.IPOKIT_DATASET || undefined;
  const databaseUrl = process.env.DATABASE_URL || undefined;
  let demo: Demo;
  try {
    demo = await startDemo({ port, framework, ...(datasetFile === undefined ? {} : { datasetFile }), ...(databaseUrl === undefined ? {} : { databaseUrl }) });
  } catch (err) {
    if (err instanceof DemoError) {
      console.error(err.message);
    } else if (isIpokitError(err, 'ERR:UNAVAILABLE') && databaseUrl !== undefined) {
      const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
      console.error(`Cannot serve from DATABASE_URL (${maskPassword(databaseUrl)}): ${err.message}${cause}`);
    } else if (isIpokitError(err, 'ERR:DATASET')) {
      console.error(`IPOKIT_DATASET file ${datasetFile} is not a valid dataset (${err.problemCount} problem(s)):`);
      for (const p of err.problems ?? []) console.error(`  ${p.path}: ${p.message}`);
      if ((err.problemCount ?? 0) > (err.problems?.length ?? 0)) console.error(`  ... and ${(err.problemCount ?? 0) - (err.problems?.length ?? 0)} more`);
    } else {
      console.error(err);
    }
    process.exit(1);
  }
  const from = databaseUrl === undefined ? 'memory' : `PostgreSQL at ${maskPassword(databaseUrl)}`;
  const what = demo.imported ? (datasetFile ?? 'a generated dataset') : 'the IPOs already stored';
  console.log(`ipokit demo serving ${what} from ${from} with ${framework === 'koa' ? 'Koa' : 'Express'} at ${demo.url}/ipos`);
  console.log('');
  console.log('API keys (shown once; default limits: 6 requests/min, GMP 3/min):');
  console.log(`  free  ${demo.keys.free}`);
  console.log(`  paid  ${demo.keys.paid}`);
  console.log(`  pro   ${demo.keys.pro}   (with the GMP add-on)`);
  console.log('');
  console.log('Try:');
  for (const c of demo.curls) console.log(`  ${c}`);
  const drainMs = Number(process.env.IPOKIT_DRAIN_MS ?? 10_000);
  const stop = () => {
    // Stop accepting connections; requests under way finish, keep-alive connections close
    // as soon as they are idle, then the process exits. Connections still open after
    // IPOKIT_DRAIN_MS (default 10 s: a stuck client, one that never sent a request) are cut.
    demo.server.close(() => process.exit(0));
    demo.server.closeIdleConnections();
    setInterval(() => demo.server.closeIdleConnections(), 100).unref();
    setTimeout(() => demo.server.closeAllConnections(), drainMs).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** A connection URL with its password hidden. */
function maskPassword(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

/** `--koa` / `--express` on the command line, else IPOKIT_FRAMEWORK, else Express. */
function frameworkOf(args: string[], env: string | undefined): 'express' | 'koa' {
  const usage = 'Usage: npm start [-- --express | --koa]  (or IPOKIT_FRAMEWORK=express|koa)';
  let chosen: string | undefined = env === undefined || env === '' ? undefined : env.toLowerCase();
  for (const arg of args) {
    if (arg === '--koa' || arg === '--express') chosen = arg.slice(2);
    else {
      console.error(`Unknown argument ${JSON.stringify(arg)}.\n${usage}`);
      process.exit(1);
    }
  }
  if (chosen === undefined || chosen === 'express' || chosen === 'koa') return chosen ?? 'express';
  console.error(`IPOKIT_FRAMEWORK must be express or koa, got ${JSON.stringify(env)}.\n${usage}`);
  process.exit(1);
}

void main();
