/**
 * `npm start`: the demo, which is `ipokit serve` (`@ipokit/cli`) with the demo's defaults:
 * one key per plan (on PostgreSQL, DATABASE_URL, the same three demo accounts at every
 * start, each with a new key), and on PostgreSQL the generated dataset imported into an
 * empty database. Where it listens: `npm start -- --port N --host H`, else PORT and HOST,
 * else 127.0.0.1:3000; `npm start -- --koa` (or IPOKIT_FRAMEWORK=koa) serves it with Koa.
 * IPOKIT_DATASET names a dataset JSON file to serve instead of the generated one. Every
 * other option of `ipokit serve` works too (`--config FILE`, `--log json`, ...). It serves
 * the OpenAPI document at /ipos/-/openapi.json, the health checks at /healthz and /readyz,
 * and logs a line per request on stdout. SIGTERM or Ctrl-C drains (IPOKIT_DRAIN_MS).
 */
import { processIo, runDemo } from '@ipokit/cli';

void runDemo(process.argv.slice(2), processIo({ stopOnSignals: true })).then((code) => {
  process.exitCode = code;
});
