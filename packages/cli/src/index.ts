/**
 * @ipokit/cli: the `ipokit` command (`serve`, `worker`, `migrate`, `import`, `push`, `collect`, `sources`, `accounts`,
 * `keys`, `webhooks`, `usage`, `demo-data`), callable in-process with {@link runCli}.
 */
import pkg from '../package.json' with { type: 'json' };
import { accountsCommand } from './accounts.js';
import { unknownName, unknownOption } from './args.js';
import { demoDataCommand } from './demo-data.js';
import { COMMAND_HELP, MAIN_HELP, MAIN_USAGE } from './help.js';
import { importCommand } from './import.js';
import type { CliIo, Command } from './io.js';
import { keysCommand } from './keys.js';
import { migrateCommand } from './migrate.js';
import { pushCommand } from './push.js';
import { collectCommand, sourcesCommand } from './collect.js';
import { reportError } from './report.js';
import { serveCommand } from './serve.js';
import { closestName } from './suggest.js';
import { usageCommand } from './usage.js';
import { webhooksCommand } from './webhooks.js';
import { workerCommand } from './worker.js';

export { CliError, type CliIo, type Command } from './io.js';
export { processIo } from './process-io.js';
export { reportError, type ReportContext } from './report.js';
export { serve, type ServeOptions } from './serve.js';
export type { WorkerSettings } from './worker.js';
export { DEMO_USAGE, runDemo } from './demo.js';
export type { ConnectionLimits } from './connection-limits.js';
export {
  DEMO_ACCOUNT_NAMES,
  startServer,
  type DemoKeys,
  type RunningServer,
  type ServerDatabase,
  type ServerIngest,
  type ServerOptions,
  type ServerRouterOptions,
} from './server.js';
export {
  ConfigFileError,
  DEFAULT_MOUNT,
  HEALTH_PATHS,
  readConfigFile,
  resolveSettings,
  settingsJson,
  type FlagValue,
  type Framework,
  type IngestSettings,
  type LogFormat,
  type ServeSettings,
  type SettingsSources,
} from './config.js';
export { formatAccessLog, redactTarget, type AccessLogEntry } from './access-log.js';
export { healthChecks, type HealthAnswer, type HealthOptions } from './health.js';
export { DEFAULT_SEED, generateDataset, type GenerateDatasetOptions } from './generate.js';

/** The version of this package, printed by `ipokit --version`. */
export const VERSION: string = pkg.version;

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  migrate: migrateCommand,
  import: importCommand,
  push: pushCommand,
  collect: collectCommand,
  sources: sourcesCommand,
  accounts: accountsCommand,
  keys: keysCommand,
  webhooks: webhooksCommand,
  worker: workerCommand,
  usage: usageCommand,
  'demo-data': demoDataCommand,
};

const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  accounts: ['create', 'update', 'list', 'show'],
  keys: ['create', 'rotate', 'list', 'revoke'],
  webhooks: ['create', 'list', 'delete', 'deliveries', 'replay'],
};

/**
 * Runs one `ipokit` command line (the arguments after `ipokit`) and resolves to its exit
 * code: 0 done, 1 failed (an `IpokitError`, a database that cannot be reached, a file that
 * cannot be read), 2 bad usage (one line and the usage on stderr). Nothing is thrown, and no
 * stack trace is printed for a failure the user can fix.
 *
 * @example
 * ```ts
 * import { runCli } from '@ipokit/cli';
 * const code = await runCli(['keys', 'list', '--account', id, '--json'], {
 *   stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(),
 * });
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) return usageError('missing command', io);
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const help = topic === undefined ? undefined : COMMAND_HELP[topic];
    if (topic !== undefined && help === undefined) {
      const near = closestName(topic, Object.keys(COMMAND_HELP));
      return usageError(`no help for ${JSON.stringify(topic)}: not a command${near === undefined ? '' : `; did you mean ${JSON.stringify(near)}?`}`, io);
    }
    io.stdout.write(`${help === undefined ? MAIN_HELP : `${help.usage}\n\n${help.details}`}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    return usageError(name.startsWith('-') ? unknownOption(name, ['help', 'version']) : unknownName('command', name, [...Object.keys(COMMANDS), 'help']), io);
  }
  const help = COMMAND_HELP[name];
  if (wantsHelp(rest)) {
    io.stdout.write(`${help?.usage ?? ''}\n\n${help?.details ?? ''}\n`);
    return 0;
  }
  const action = rest[0] !== undefined && SUBCOMMANDS[name]?.includes(rest[0]) ? ` ${rest[0]}` : '';
  try {
    return await command(rest, io);
  } catch (err) {
    return reportError(err, io, { command: `${name}${action}`, ...(help === undefined ? {} : { usage: help.usage }) });
  }
}

function usageError(message: string, io: CliIo): number {
  io.stderr.write(`ipokit: ${message}\n${MAIN_USAGE}\nRun 'ipokit --help' for details.\n`);
  return 2;
}

/** `--help` or `-h` among the options (not after `--`). */
function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}
