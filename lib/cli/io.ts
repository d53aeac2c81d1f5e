/**
 * What the command line is given to talk to the world: `main` reads and writes only these, never
 * `process`, so that a test runs a command in its own process with streams of its own (and a
 * terminal that is not one), and the bin (`lib/cli.ts`) hands over the real ones.
 *
 * @module
 */
import type { Readable, Writable } from 'node:stream';

/** The signals a command that builds something aside stops for, cleaning up. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Where a command hears of a signal (`process` is one). */
export interface SignalSource {
  once(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
  off(signal: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

/** The streams and the signals of one run of the command line. */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Whether stderr is a terminal: progress is drawn only there. */
  readonly stderrIsTTY: boolean;
  /** The terminal's width, to keep the progress line on one row; `undefined` when not known. */
  readonly stderrColumns?: number | undefined;
  readonly signals: SignalSource;
  /** The clock progress is measured by, in milliseconds. Default: `performance.now`. */
  readonly now?: () => number;
}
