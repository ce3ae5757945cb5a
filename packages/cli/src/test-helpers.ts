/**
 * For this package's tests: a `CliIo` whose output is captured, and a database to run the
 * commands on: PGlite in-process (through `io.openDatabase`), or the real PostgreSQL of
 * `DATABASE_URL` when it is set (then through `DATABASE_URL`, as from a shell), each test
 * file in a fresh schema that is not migrated yet.
 */
import { Writable } from 'node:stream';
import { PGlite } from '@electric-sql/pglite';
import type { PostgresClient } from '@ipokit/storage-postgres';
import pg from 'pg';
import { expect } from 'vitest';
import { runCli } from './index.js';
import type { CliIo } from './io.js';

/** Captured output of a `CliIo`. */
export interface Captured {
  io: CliIo;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout, as soon as it appears. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

/**
 * A `CliIo` that records what is written.
 *
 * @example
 * ```ts
 * const out = capture({ env: {} });
 * await runCli(['--version'], out.io);
 * out.stdout(); // '0.1.0\n'
 * ```
 */
export function capture(overrides: Partial<CliIo> = {}): Captured {
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString());
        for (const l of listeners) l();
        callback();
      },
    });
  const io: CliIo = {
    stdout: sink((t) => (out += t)),
    stderr: sink((t) => (err += t)),
    env: {},
    cwd: process.cwd(),
    ...overrides,
  };
  return {
    io,
    stdout: () => out,
    stderr: () => err,
    waitForStdout: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m === null) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`stdout never matched ${pattern}; stdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
  };
}

/** A database for the CLI's tests. */
export interface CliTestDatabase {
  kind: 'postgres' | 'pglite';
  /** A fresh schema, not migrated. */
  schema: string;
  /** A client on the same database, for checks. */
  client: PostgresClient;
  /** What a command's `CliIo` needs to reach it: `openDatabase` (PGlite) or `env.DATABASE_URL`. */
  io(env?: Record<string, string | undefined>): Pick<CliIo, 'env'> & Partial<Pick<CliIo, 'openDatabase'>>;
  close(): Promise<void>;
}

/**
 * Opens the test database with a fresh schema name.
 *
 * @example
 * ```ts
 * const db = await openCliTestDatabase('keys');
 * await runCli(['migrate', '--schema', db.schema], capture(db.io()).io);
 * ```
 */
export async function openCliTestDatabase(name: string): Promise<CliTestDatabase> {
  const schema = `ipokit_cli_${name}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = process.env.DATABASE_URL;
  if (url !== undefined && url !== '') {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    return {
      kind: 'postgres',
      schema,
      client: pool,
      io: (env = {}) => ({ env: { DATABASE_URL: url, ...env } }),
      async close() {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
      },
    };
  }
  const lite = await PGlite.create();
  return {
    kind: 'pglite',
    schema,
    client: lite,
    io: (env = {}) => ({ env, openDatabase: async () => ({ client: lite, close: async () => undefined }) }),
    close: () => lite.close(),
  };
}

/**
 * `run` (the exit code and both outputs) and `ok` (stdout, failing the test on a non-zero
 * exit) of `ipokit ...argv --schema <the database's schema>`, in process.
 *
 * @example
 * ```ts
 * const { ok } = cliRunner(() => db);
 * const accountId = (await ok(['accounts', 'create', '--name', 'Acme', '--plan', 'pro', '-q'])).trim();
 * ```
 */
export function cliRunner(database: () => CliTestDatabase): {
  run: (argv: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
  ok: (argv: string[]) => Promise<string>;
} {
  const run = async (argv: string[]) => {
    const db = database();
    const out = capture(db.io());
    const code = await runCli([...argv, '--schema', db.schema], out.io);
    return { code, stdout: out.stdout(), stderr: out.stderr() };
  };
  const ok = async (argv: string[]) => {
    const r = await run(argv);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  return { run, ok };
}
