/** `ipokit migrate`: creates the tables, or upgrades them, in the schema. */
import { migrate, SCHEMA_VERSION } from '@ipokit/storage-postgres';
import { parseOrThrow, takePositionals } from './args.js';
import { schemaOf, withDatabase } from './database.js';
import type { Command } from './io.js';

/**
 * `ipokit migrate [--schema S]`: applies the migrations the schema lacks (idempotent).
 *
 * @example
 * ```ts
 * await migrateCommand(['--schema', 'ipokit'], io); // 0; "Migrated schema ipokit to version 1 ..."
 * ```
 */
export const migrateCommand: Command = async (argv, io) => {
  const { values, positionals } = parseOrThrow({ args: [...argv], options: { schema: { type: 'string' } }, strict: true, allowPositionals: true });
  takePositionals(positionals, []);
  const schema = schemaOf(values.schema, io);
  const applied = await withDatabase(io, schema, (db) => migrate(db.client, { schema }));
  io.stdout.write(
    applied.length === 0
      ? `Schema ${schema} is up to date (version ${SCHEMA_VERSION}).\n`
      : `Migrated schema ${schema} to version ${SCHEMA_VERSION} (applied ${applied.join(', ')}).\n`,
  );
  return 0;
};
