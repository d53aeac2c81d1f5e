/**
 * `ledgerstore`, the command line: look into a Honcho ledger without changing it, append record
 * lines to it, check record lines, or write a synthetic one. `ledgerstore --help` lists the
 * commands.
 *
 * Exit status: 0 on success; 1 when the ledger refuses a record or is damaged or unreadable (the
 * error's text on stderr, with its runbook pointer); 2 on a usage error; 128 + n when stopped by
 * signal n.
 *
 * Output is written a chunk at a time and waits for the reader (`ledgerstore outbox big.jsonl |
 * head` reads only what it needs, and a reader that goes away ends the command quietly with 0).
 * Progress goes to stderr, and only when stderr is a terminal.
 *
 * `main` touches nothing of `process`: everything it reads and writes comes in `io` (the bin,
 * `lib/cli.ts`, hands over the process's own).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { printableTarget } from '../printable.js';
import { describeSystemError } from '../system-errors.js';
import { type Args, FLAGS, parseArgs, UsageError } from './args.js';
import { COMMANDS, commandHelp, help, isCommand, synopsisOf, usage, version } from './commands.js';
import type { Command } from './context.js';
import type { CliIo } from './io.js';
import { writeFailureJson } from './json.js';
import { Output, OutputClosed, report, Stderr } from './output.js';
import { didYouMean } from './suggest.js';

/** A word of the command line, quoted, as a usage error repeats it: a target in it without its password. */
function quoted(word: string): string {
  return JSON.stringify(printableTarget(word));
}

/** Writes `text` as stdout's lines: exit status 0. */
async function say(out: Output, text: string): Promise<number> {
  out.line(text);
  await out.flush();
  return 0;
}

/** What `version --help` says: it is `--version`'s other name. */
const VERSION_HELP = 'usage: ledgerstore --version (or -V, or ledgerstore version)\n\nSays which ledgerstore this is.';

/** The words a first positional may be: every command, and `help` and `version`. */
const WORDS = [...Object.keys(COMMANDS), 'help', 'version'];

/** An unknown command, with the nearest known word if one is near. */
function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command ${quoted(name)}${didYouMean(name, WORDS)}`, undefined);
}

/** The first mistake in the flags, with the flag of `command` (or any) an unknown one was likely meant to be. */
function flagMistake({ mistake, unknownFlag }: Args, command: Command | undefined): string | undefined {
  if (mistake === undefined || unknownFlag === undefined) return mistake;
  const flags = command === undefined ? Object.keys(FLAGS) : [...command.flags, 'help'];
  return `${mistake}${didYouMean(unknownFlag.replace(/^-+/, ''), flags, '--')}`;
}

/** Checks the command line against the command and runs it. */
async function run(parsed: Args, io: CliIo, out: Output, err: Stderr): Promise<number> {
  const { positionals, switches, values } = parsed;
  const [name, ...args] = positionals;
  if (name === 'version' || (name === undefined && switches.has('version'))) {
    // `version` is `--version` (and `-V`) by another name
    if (switches.has('help')) return say(out, VERSION_HELP);
    if (args[0] !== undefined) throw new UsageError(`version takes no argument ${JSON.stringify(args[0])}`, undefined);
    return say(out, version());
  }
  if (switches.has('help') || name === 'help') {
    // `help <command>` and `<command> --help` give the command's own help
    const about = name === 'help' ? args[0] : name;
    if (about === undefined) return say(out, help());
    if (about === 'version') return say(out, VERSION_HELP);
    if (!isCommand(about)) throw unknownCommand(about);
    return say(out, commandHelp(about));
  }
  if (name === undefined) throw new UsageError(flagMistake(parsed, undefined) ?? 'no command given', undefined);
  if (!isCommand(name)) throw unknownCommand(name);
  const command: Command = COMMANDS[name];
  const mistake = flagMistake(parsed, command);
  if (mistake !== undefined) throw new UsageError(mistake, name);
  for (const flag of [...switches, ...values.keys()]) {
    if (!command.flags.includes(flag)) throw new UsageError(`${name} takes no --${flag}`, name);
  }
  // An empty name would reach the file system as the path '' and fail there with ENOENT, as if
  // something were missing: it is a mistake in the command line.
  if (values.get('index') === '') throw new UsageError('--index needs a folder, not an empty name', name);
  const actions = command.actions;
  if (actions !== undefined && !actions.includes(args[0] ?? '')) {
    const them = `${actions.slice(0, -1).join(', ')} or ${actions.at(-1)}`;
    // `index <ledger> --index d`: the one argument given is the ledger, and the action is missing.
    if (args.length < command.args.length) throw new UsageError(`${name} needs an action first: ${them}`, name);
    throw new UsageError(`${name} takes ${them}, not ${quoted(args[0] ?? '')}`, name);
  }
  const missing = command.args[args.length];
  if (missing !== undefined) throw new UsageError(`${name} needs ${missing}`, name);
  if (args.length > command.args.length)
    throw new UsageError(`${name} takes no argument ${quoted(args[command.args.length] ?? '')}`, name);
  return command.run({
    args,
    switches,
    values,
    out,
    err,
    progress: err.progress,
    stdin: io.stdin,
    signals: io.signals,
  });
}

/**
 * The ledger a command line names, for a `--json` failure to say: the command's `<ledger>`, or
 * its `--ledger`; `undefined` when it names none (or not as one ledger: `copy`).
 */
function ledgerOf({ positionals: [name = '', ...args], values }: Args): string | undefined {
  if (!isCommand(name)) return undefined;
  const at = COMMANDS[name].args.indexOf('<ledger>');
  return at === -1 ? values.get('ledger') : args[at];
}

/** Whether the command line asks for JSON of a command that writes it: a failure is written as JSON too. */
function wantsJson({ positionals: [name = ''], switches }: Args): boolean {
  return switches.has('json') && isCommand(name) && (COMMANDS[name].flags as readonly string[]).includes('json');
}

/**
 * Runs the command line `argv` (the arguments after the program's name) and gives the exit
 * status; every failure is reported on `io.stderr` here, none is thrown. With `--json`, a
 * failure (exit 1) is also one JSON object on stdout (`json.ts`, `failureJson`); a usage error
 * (exit 2) is on stderr only.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const err = new Stderr(io.stderr, io.stderrIsTTY, io.now ?? (() => performance.now()), io.stderrColumns);
  const out = new Output(io.stdout);
  const parsed = parseArgs(argv);
  try {
    return await run(parsed, io, out, err);
  } catch (e) {
    if (e instanceof UsageError) {
      err.warn(e.message);
      if (e.showUsage)
        err.write(
          e.command === undefined || !isCommand(e.command)
            ? usage()
            : `usage: ${synopsisOf(e.command)}\n(ledgerstore ${e.command} --help says more)\n`,
        );
      return 2;
    }
    if (e instanceof OutputClosed) {
      // The reader stopped reading (`| head`): what it read is what it wanted. Anything else
      // (a full disk under a redirect) is a failure.
      const code = (e.failure as NodeJS.ErrnoException | null)?.code;
      if (e.failure === null || code === 'EPIPE') return 0;
      err.warn(`stdout: ${describeSystemError(e.failure)}`);
      return 1;
    }
    if (wantsJson(parsed)) await writeFailureJson(out, e, ledgerOf(parsed));
    err.warn(report(e));
    return 1;
  }
}
