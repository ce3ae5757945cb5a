/** The `CliIo` of a real process: its streams, environment and directory, and its signals. */
import type { CliIo } from './io.js';

/**
 * The process's `CliIo`. With `stopOnSignals`, SIGTERM and SIGINT abort `signal` (once each:
 * a second Ctrl-C ends the process at once), and so does, under `npm run`, the end of the
 * parent process; commands that do not serve leave the signals alone. A closed stdout
 * (`ipokit demo-data | head`) ends the process quietly. Relative paths resolve against the directory `npm run ipokit` was typed in
 * (`INIT_CWD`), since npm runs scripts from the project's root.
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2), processIo({ stopOnSignals: true }));
 * ```
 */
export function processIo(options: { stopOnSignals: boolean }): CliIo {
  // `ipokit demo-data | head`: once the reader has gone, end quietly instead of crashing
  // on an unhandled EPIPE with a stack trace. Nobody reads stderr then either.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.env.npm_lifecycle_event === 'ipokit' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd(),
  };
  if (options.stopOnSignals) {
    const controller = new AbortController();
    process.once('SIGTERM', () => controller.abort());
    process.once('SIGINT', () => controller.abort());
    if (process.env.npm_lifecycle_event !== undefined) {
      // Under `npm run`, a SIGTERM to npm reaches the `sh -c` between it and us, which dies
      // without passing it on (`kill %1` in a script, a supervisor stopping npm): when our
      // parent is gone, stop as if signalled instead of serving on as an orphan.
      const parent = process.ppid;
      const watch = setInterval(() => {
        if (process.ppid === parent) return;
        clearInterval(watch);
        controller.abort();
      }, 500);
      watch.unref();
    }
    io.signal = controller.signal;
  }
  return io;
}
