/**
 * How a failed command is told to the user: one line (and, for a dataset, every problem),
 * never a stack trace for a failure the user can fix. The exit code comes back.
 */
import { isIpokitError } from '@ipokit/core';
import { CliError, type CliIo } from './io.js';

/** What the report may add: the command's name and usage line, for usage errors. */
export interface ReportContext {
  /** `serve`, `keys create`, ... */
  command?: string;
  /** The usage line(s) printed after a usage error. */
  usage?: string;
}

/**
 * Writes a failure to `io.stderr` and returns the exit code: a `CliError`'s own (usage
 * errors, exit 2, are followed by the usage), 1 for an `IpokitError` from the core (a
 * dataset's every problem as `path: message`) and for a database failure, 1 with the stack
 * for anything else (a defect).
 *
 * @example
 * ```ts
 * try { ... } catch (err) { return reportError(err, io, { command: 'migrate', usage: 'Usage: ipokit migrate [--schema S]' }); }
 * ```
 */
export function reportError(err: unknown, io: CliIo, context: ReportContext = {}): number {
  const who = context.command === undefined ? 'ipokit' : `ipokit ${context.command}`;
  const say = (line: string) => io.stderr.write(`${line}\n`);
  if (err instanceof CliError) {
    say(`${who}: ${oneLine(err.message)}`);
    if (err.exitCode === 2 && context.usage !== undefined) {
      say(context.usage);
      say(`Run 'ipokit ${context.command === undefined ? '' : `${context.command.split(' ')[0]} `}--help' for details.`);
    }
    return err.exitCode;
  }
  if (isIpokitError(err)) {
    if (err.code === 'ERR:UNAVAILABLE') {
      // The PostgreSQL store says "run migrate(client) first": from the shell, that is `ipokit migrate`.
      const message = err.message.replace('run migrate(client) first', "run 'ipokit migrate' first");
      const cause = err.cause === undefined ? '' : `: ${describeCause(err.cause)}`;
      say(`${who}: ${oneLine(message)}${oneLine(cause)}`);
      return 1;
    }
    say(`${who}: ${oneLine(err.message)}`);
    if (err.code === 'ERR:DATASET') {
      const problems = err.problems ?? [];
      const count = err.problemCount ?? problems.length;
      say(`${count} problem${count === 1 ? '' : 's'}${count > problems.length ? ` (the first ${problems.length} listed)` : ''}; nothing was written:`);
      for (const p of problems) say(`  ${oneLine(p.path)}: ${oneLine(p.message)}`);
      if (count > problems.length) say(`  ... and ${count - problems.length} more`);
    }
    return 1;
  }
  if (isDatabaseError(err)) {
    say(`${who}: database error: ${describeCause(err)}`);
    return 1;
  }
  say(`${who}: unexpected error (a defect in ipokit; please report it):`);
  say(err instanceof Error ? (err.stack ?? err.message) : String(err));
  return 1;
}

/**
 * A driver or network error in a few words: its message, else the messages of the errors
 * it gathers (Node's AggregateError when every address of `localhost` refused), else its code.
 *
 * @example
 * ```ts
 * describeCause(new Error('connect ECONNREFUSED 127.0.0.1:5432')); // 'connect ECONNREFUSED 127.0.0.1:5432'
 * ```
 */
export function describeCause(err: unknown): string {
  if (err instanceof Error) {
    if (err.message !== '') return oneLine(err.message);
    const inner = (err as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.length > 0) return [...new Set(inner.map(describeCause))].join('; ');
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    return err.name;
  }
  return oneLine(String(err));
}

/** pg's errors carry a SQLSTATE `code` (5 characters); network errors an `E...` code. */
function isDatabaseError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && (/^[0-9A-Z]{5}$/.test(code) || /^E[A-Z]+$/.test(code));
}

/** Line breaks in a message would break the one-line rule (and could forge lines). */
function oneLine(text: string): string {
  return text.replace(/\r?\n/g, ' ');
}
