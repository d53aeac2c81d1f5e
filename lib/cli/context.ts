/**
 * What a command is: its words for the usage and help, what it takes, and the function that runs
 * it with a {@link Context}.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import type { Flag } from './args.js';
import type { SignalSource } from './io.js';
import type { Output, Stderr } from './output.js';
import type { Progress } from './progress.js';

/** What a command is given. */
export interface Context {
  /** The positionals after the command's name, as many as it names. */
  readonly args: readonly string[];
  readonly switches: ReadonlySet<Flag>;
  readonly values: ReadonlyMap<Flag, string>;
  readonly out: Output;
  readonly err: Stderr;
  /** `err`'s progress line. */
  readonly progress: Progress;
  readonly stdin: Readable;
  readonly signals: SignalSource;
}

/** One command of the table in `commands.ts`. */
export interface Command {
  /** The arguments and flags, for the usage text. */
  readonly synopsis: string;
  /** One line for the list of every command (`ledgerstore --help`). */
  readonly summary: string;
  /** Its own help (`ledgerstore <command> --help`): what it does, its flags, what it writes. */
  readonly help: readonly string[];
  /** The names of its positionals. */
  readonly args: readonly string[];
  /** The words its first positional must be one of (`index build|status|rebuild`), if it names an action. */
  readonly actions?: readonly string[];
  readonly flags: readonly Flag[];
  /** Runs it: the exit status. */
  readonly run: (context: Context) => Promise<number>;
}
