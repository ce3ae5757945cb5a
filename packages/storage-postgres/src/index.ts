/**
 * @ipokit/storage-postgres: the ipokit Store on PostgreSQL, shared by every app instance.
 */
export { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { DEFAULT_DATA_CACHE_MAX_BYTES, DEFAULT_DATA_CACHE_TTL_MS } from './data-cache.js';
export { migrate, DEFAULT_SCHEMA, SCHEMA_VERSION, type SchemaOptions } from './migrations.js';
export type { PostgresClient, PostgresConnection, PostgresPool, Queryable, TransactionalClient } from './client.js';
export {
  importDatasetStream,
  DEFAULT_IMPORT_BATCH_SIZE,
  type StreamImportOptions,
  type StreamImportProgress,
} from './stream-import.js';
