/** `ipokit import <file>` (being built: streaming two-pass import into PostgreSQL). */
import type { Command } from './io.js';

/** `ipokit import <file> [--batch-size N] [--schema S]`. */
export const importCommand: Command = async (_argv, io) => {
  io.stderr.write('ipokit import: not built yet\n');
  return 1;
};
