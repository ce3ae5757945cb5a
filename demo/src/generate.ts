/**
 * The demo dataset generator now lives in `@ipokit/cli` (`ipokit demo-data`); this module
 * keeps the old import path working (bench/http-server.ts imports it).
 */
export { DEFAULT_SEED, generateDataset, type GenerateDatasetOptions } from '@ipokit/cli';
