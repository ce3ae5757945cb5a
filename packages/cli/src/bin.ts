#!/usr/bin/env node
/** The `ipokit` command. */
import { processIo, runCli } from './index.js';

const argv = process.argv.slice(2);
// Only `serve` and `worker` run until stopped; every other command keeps the default signal handling.
void runCli(argv, processIo({ stopOnSignals: argv[0] === 'serve' || argv[0] === 'worker' })).then((code) => {
  process.exitCode = code;
});
