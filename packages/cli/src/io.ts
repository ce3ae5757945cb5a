/**
 * What every `ipokit` command receives: its streams, environment and working directory,
 * and an optional way to open the database, so that commands run in-process in tests
 * (with PGlite) exactly as they run from a shell.
 */
import type { PostgresClient } from '@ipokit/storage-postgres';

/** The world a command runs in. */
export interface CliIo {
  /** Results (tables, ids, the one-time key). */
  stdout: NodeJS.WritableStream;
  /** Progress, warnings and errors. */
  stderr: NodeJS.WritableStream;
  /** Environment variables (DATABASE_URL, PORT, ...). */
  env: Readonly<Record<string, string | undefined>>;
  /** Directory relative paths are resolved against. */
  cwd: string;
  /**
   * Opens the database the command works on. Absent: a `pg.Pool` on `env.DATABASE_URL`.
   * Tests pass a PGlite instance here. `close` is called when the command is done.
   */
  openDatabase?: () => Promise<{ client: PostgresClient; close: () => Promise<void> }>;
  /**
   * Stops long-running commands (`serve`, `worker`): when it aborts, the server stops
   * accepting connections, the webhook worker stops claiming deliveries, the requests and
   * delivery attempts under way finish and the command resolves. `bin.ts` aborts it on
   * SIGTERM and SIGINT; absent, they run until the process ends.
   */
  signal?: AbortSignal;
}

/** One command: its arguments after the command name; resolves to the exit code. */
export type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

/** A usage or input error: printed without a stack trace, exit code 2 by default. */
export class CliError extends Error {
  /** The process exit code. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/**
 * Resolves when the signal aborts; never without one (the process ends the command).
 *
 * @example
 * ```ts
 * await stopped(io.signal); // SIGTERM or Ctrl-C (bin.ts aborts it)
 * ```
 */
export function stopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
