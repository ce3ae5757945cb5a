/**
 * The server of bench/sources.ts's push measurements, in its own process so that the pushing
 * client and the server do not share a core: `node ... bench/ingest-server.ts`.
 *
 * It reads one JSON command a line on stdin and answers each with one JSON line on stdout:
 * - `{"start":{"schema":null}}`: `startServer` of `ipokit serve` on an empty memory store
 *   (an empty dataset file, no demo keys) with the push route (`ingest`: the token and
 *   `maxBytes` of the environment, IPOKIT_BENCH_TOKEN and IPOKIT_BENCH_MAX_BYTES) answers
 *   `{"port":n}`; with `"schema":"name"` the same on PostgreSQL (DATABASE_URL, that schema,
 *   migrated by the server);
 * - `{"stop":true}`: closes the server (and its pool), answers `{"stopped":true}`.
 * The benchmark reads the process's CPU time from /proc around each push.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { startServer, type RunningServer } from '@ipokit/cli';

const token = process.env.IPOKIT_BENCH_TOKEN ?? '';
const maxBytes = Number(process.env.IPOKIT_BENCH_MAX_BYTES ?? 16 * 1024 * 1024);
const url = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(os.tmpdir(), 'ipokit-bench-ingest-'));
const emptyDataset = join(dir, 'empty.json');
writeFileSync(emptyDataset, '{"ipos":[]}');

let running = null as RunningServer | null;

async function start(schema: string | null): Promise<number> {
  if (running !== null) throw new Error('a server is already running');
  const common = {
    port: 0,
    datasetFile: emptyDataset,
    demoKeys: false,
    ingest: { tokens: [token], maxBytes },
    onError: (err: unknown) => console.error('[ingest-server]', err),
  };
  if (schema === null) {
    running = await startServer(common);
  } else {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    running = await startServer({ ...common, database: { client: pool, schema, close: () => pool.end() } });
  }
  return (running.server.address() as { port: number }).port;
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const command = JSON.parse(line) as { start?: { schema: string | null }; stop?: true };
  try {
    if (command.start !== undefined) {
      process.stdout.write(`${JSON.stringify({ port: await start(command.start.schema) })}\n`);
    } else if (command.stop !== undefined) {
      await running?.close();
      running = null;
      process.stdout.write(`${JSON.stringify({ stopped: true })}\n`);
    }
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  }
}
await running?.close();
rmSync(dir, { recursive: true, force: true });
