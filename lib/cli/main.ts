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
import { parseArgs, UsageError } from './args.js';
import { COMMANDS, commandHelp, help, isCommand, synopsisOf, usage, version } from './commands.js';
import type { Command } from './context.js';
import type { CliIo } from './io.js';
import { Output, OutputClosed, report, Stderr } from './output.js';

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

/** Checks the command line against the command and runs it. */
async function run(argv: readonly string[], io: CliIo, out: Output, err: Stderr): Promise<number> {
  const { positionals, switches, values, mistake } = parseArgs(argv);
  const [name, ...args] = positionals;
  if (switches.has('version') && name === undefined) return say(out, version());
  if (switches.has('help') || name === 'help') {
    // `help <command>` and `<command> --help` give the command's own help
    const about = name === 'help' ? args[0] : name;
    if (about === undefined) return say(out, help());
    if (!isCommand(about)) throw new UsageError(`unknown command ${quoted(about)}`, undefined);
    return say(out, commandHelp(about));
  }
  if (name === undefined) throw new UsageError(mistake ?? 'no command given', undefined);
  if (!isCommand(name)) throw new UsageError(`unknown command ${quoted(name)}`, undefined);
  if (mistake !== undefined) throw new UsageError(mistake, name);
  const command: Command = COMMANDS[name];
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
 * Runs the command line `argv` (the arguments after the program's name) and gives the exit
 * status; every failure is reported on `io.stderr` here, none is thrown.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const err = new Stderr(io.stderr, io.stderrIsTTY, io.now ?? (() => performance.now()), io.stderrColumns);
  const out = new Output(io.stdout);
  try {
    return await run(argv, io, out, err);
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
    err.warn(report(e));
    return 1;
  }
}
