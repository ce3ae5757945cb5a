/**
 * Argument parsing for every command: node's `util.parseArgs` in strict mode, with its
 * errors turned into one-line {@link CliError}s (exit code 2) that name what to change, and
 * an unknown option answered with the closest of the command's own (`did you mean`).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isCalendarDate } from '@ipokit/core/backend';
import { CliError } from './io.js';
import { closestName } from './suggest.js';

/**
 * `util.parseArgs(config)`, its failures turned into a usage error: an unknown option names
 * the closest of `config.options` (and `--help`) when one is close, e.g.
 * `unknown option --acount; did you mean --account?`.
 *
 * @example
 * ```ts
 * const { values } = parseOrThrow({ args: [...argv], options: { json: { type: 'boolean' } }, strict: true });
 * ```
 */
export function parseOrThrow<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new CliError(parseErrorMessage(err, Object.keys(config.options ?? {})));
  }
}

/**
 * What to say of something the user typed that is none of `names` (a command, an action):
 * `unknown command "migrat"; did you mean "migrate"?`, or, with no name close to it,
 * `unknown command "xyz"` and `otherwise` (e.g. `: create, rotate, list or revoke`).
 *
 * @example
 * ```ts
 * throw new CliError(unknownName('action', 'craete', ['create', 'list'], ': create or list')); // unknown action "craete"; did you mean "create"?
 * ```
 */
export function unknownName(what: string, typed: string, names: readonly string[], otherwise = ''): string {
  const near = closestName(typed, names);
  return `unknown ${what} ${JSON.stringify(typed)}${near === undefined ? otherwise : `; did you mean ${JSON.stringify(near)}?`}`;
}

/**
 * `unknown option --acount; did you mean --account?`, the option's name compared with the
 * long options in `names` (without their `--`); a short option (`-x`) gets no suggestion.
 *
 * @example
 * ```ts
 * unknownOption('--acount', ['account', 'json']); // 'unknown option --acount; did you mean --account?'
 * ```
 */
export function unknownOption(option: string, names: readonly string[]): string {
  const near = option.startsWith('--') ? closestName(option.slice(2), names) : undefined;
  return `unknown option ${option}${near === undefined ? '' : `; did you mean --${near}?`}`;
}

/**
 * The positional arguments a command takes, by name: too few or too many is a usage error.
 *
 * @example
 * ```ts
 * const [id] = takePositionals(positionals, ['ID']);
 * ```
 */
export function takePositionals(positionals: readonly string[], names: readonly string[]): string[] {
  if (positionals.length < names.length) throw new CliError(`missing argument ${names[positionals.length]}`);
  if (positionals.length > names.length) throw new CliError(`unexpected argument ${JSON.stringify(positionals[names.length])}`);
  return [...positionals];
}

/**
 * A required option's value: absent or empty is a usage error.
 *
 * @example
 * ```ts
 * const name = required('--name', values.name);
 * ```
 */
export function required(option: string, value: string | undefined): string {
  if (value === undefined) throw new CliError(`missing option ${option}`);
  if (value === '') throw new CliError(`${option} must not be empty`);
  return value;
}

/**
 * One of a fixed set of values, e.g. `--plan pro`.
 *
 * @example
 * ```ts
 * const plan = oneOf('--plan', values.plan, ['free', 'paid', 'pro'] as const);
 * ```
 */
export function oneOf<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw new CliError(`${option} must be ${listOr(allowed)}, got ${JSON.stringify(value)}`);
  return found;
}

/**
 * A whole number written in digits, within `[min, max]`.
 *
 * @example
 * ```ts
 * const port = integer('--port', values.port ?? '3000', 0, 65535);
 * ```
 */
export function integer(option: string, value: string, min: number, max: number): number {
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new CliError(`${option} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/**
 * A real calendar date written `YYYY-MM-DD`.
 *
 * @example
 * ```ts
 * const today = calendarDate('--today', '2026-11-23');
 * ```
 */
export function calendarDate(option: string, value: string): string {
  if (!isCalendarDate(value)) throw new CliError(`${option} must be a real date written YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return value;
}

/** `a`, `a or b`, `a, b or c`. */
function listOr(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/**
 * parseArgs's messages are long and suggest `--` tricks; say what is wrong in a few words.
 * `options`: the command's long options, for an unknown one's suggestion.
 */
function parseErrorMessage(err: unknown, options: readonly string[]): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const option = /'(-[^' ]*)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      // Every command answers --help (runCli does, before parsing).
      return option === undefined ? `unknown option ${message}` : unknownOption(option, [...options, 'help']);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(message)) return `option ${option} takes no value`;
      if (/ambiguous/.test(message)) return `option ${option} needs a value (for one that starts with "-", write ${option}=-...)`;
      return `option ${option} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const arg = /Unexpected argument '([^']*)'/.exec(message)?.[1];
      return `unexpected argument ${JSON.stringify(arg ?? message)}`;
    }
    default:
      return message;
  }
}
