/**
 * The command line, split into positionals and flags, and the mistakes in it (`UsageError`,
 * exit 2).
 *
 * @module
 */
import { printableTarget } from '../printable.js';

/** Every flag any command takes: a switch, or one that takes a value (`--records 10`, `--records=10`). */
export const FLAGS = {
  json: 'switch',
  help: 'switch',
  version: 'switch',
  yes: 'switch',
  records: 'value',
  seed: 'value',
  index: 'value',
  ledger: 'value',
  from: 'value',
} as const;
export type Flag = keyof typeof FLAGS;

/** The command line, split into positionals and flags. */
export interface Args {
  readonly positionals: readonly string[];
  readonly switches: ReadonlySet<Flag>;
  readonly values: ReadonlyMap<Flag, string>;
  /** The first mistake in the flags, reported once the command is known (for its usage). */
  readonly mistake: string | undefined;
  /** The flag that mistake is about when it is an unknown one, as typed: the command's flags say what it was meant to be. */
  readonly unknownFlag: string | undefined;
}

/** A mistake in the command line: exit 2, with the usage of `command` (or of every command). */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage follows the message; `undefined` for the usage of every command. */
    readonly command: string | undefined,
    /** Whether to follow the message with the usage (not for a bad value the message explains). */
    readonly showUsage = true,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A flag as typed, for a message: a URI typed after a stray `-` shown without its password. */
function shownFlag(text: string): string {
  const dashes = /^-*/.exec(text)?.[0] ?? '';
  return `${dashes}${printableTarget(text.slice(dashes.length))}`;
}

function isFlag(name: string): name is Flag {
  return Object.hasOwn(FLAGS, name);
}

/**
 * Splits `argv` into positionals and flags. Flags may come anywhere; `--` ends them, so that a
 * text that starts with `-` can be given. `-h` is `--help`, `-V` is `--version`.
 */
export function parseArgs(argv: readonly string[]): Args {
  const positionals: string[] = [];
  const switches = new Set<Flag>();
  const values = new Map<Flag, string>();
  let flagsEnded = false;
  let mistake: string | undefined;
  let unknownFlag: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (flagsEnded || arg === '-' || !arg.startsWith('-')) {
      positionals.push(arg);
    } else if (arg === '--') {
      flagsEnded = true;
    } else if (arg === '-h') {
      switches.add('help');
    } else if (arg === '-V') {
      switches.add('version');
    } else {
      const equals = arg.indexOf('=');
      const name = arg.slice(2, equals === -1 ? undefined : equals);
      if (!arg.startsWith('--') || !isFlag(name)) {
        const typed = equals === -1 ? arg : arg.slice(0, equals);
        if (mistake === undefined) unknownFlag = typed;
        mistake ??= `unknown flag ${shownFlag(typed)}`;
      } else if (FLAGS[name] === 'switch') {
        if (equals !== -1) mistake ??= `--${name} takes no value`;
        switches.add(name);
      } else {
        const value = equals === -1 ? argv[++i] : arg.slice(equals + 1);
        if (value === undefined) mistake ??= `--${name} needs a value`;
        else if (values.has(name)) mistake ??= `--${name} is given twice`;
        else values.set(name, value);
      }
    }
  }
  return { positionals, switches, values, mistake, unknownFlag };
}

/** A flag's value as a whole number from 0 to 2^53-1. */
export function wholeNumber(command: string, flag: Flag, text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(
      `--${flag} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not ${JSON.stringify(printableTarget(text))}`,
      command,
    );
  }
  return n;
}
