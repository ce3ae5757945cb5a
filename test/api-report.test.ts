import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { apiReports } from '../scripts/api-report.js';

// The public surface is recorded in api/*.api.md (npm run api): a change to what a package
// exports, or to the shape of an exported type or signature, must come with its report,
// so that review sees it.
it('api/*.api.md record the public surface of every entry point (npm run api rewrites them)', () => {
  const dir = join(import.meta.dirname, '..', 'api');
  const reports = apiReports();
  const stale = [...reports].filter(([file, text]) => !existsSync(join(dir, file)) || readFileSync(join(dir, file), 'utf8') !== text).map(([file]) => file);
  const orphans = readdirSync(dir).filter((f) => f.endsWith('.api.md') && !reports.has(f));
  expect({ stale, orphans }, 'run npm run api and review the diff').toEqual({ stale: [], orphans: [] });
}, 120_000);
