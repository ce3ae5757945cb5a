#!/usr/bin/env node
/** The `ipokit` command. */
import { processIo, runCli } from './index.js';

const argv = process.argv.slice(2);
// Only `serve` runs until stopped; every other command keeps the default signal handling.
void runCli(argv, processIo({ stopOnSignals: argv[0] === 'serve' })).then((code) => {
  process.exitCode = code;
});
