/**
 * What a command writes: lines to stdout, gathered into chunks and paced by the reader
 * ({@link Output}); notices on stderr ({@link Stderr}), around its progress line (`progress.ts`).
 *
 * @module
 */
import type { Writable } from 'node:stream';
import { LedgerError } from '../errors.js';
import { describeSystemError } from '../system-errors.js';
import { Progress } from './progress.js';

/** The reader of stdout went away or stdout failed: stop writing. */
export class OutputClosed extends Error {
  constructor(readonly failure: Error | null) {
    super('stdout is closed');
    this.name = 'OutputClosed';
  }
}

/** Below this much buffered text, lines are only gathered; a write per line would be slow. */
const CHUNK = 64 * 1024;

/**
 * Lines to a stream, gathered into chunks; `flush` waits while the reader is behind, so memory
 * stays bounded however many lines a command writes.
 */
export class Output {
  private parts: string[] = [];
  private size = 0;
  private failure: Error | null = null;

  constructor(private readonly stream: Writable) {
    // Without a listener, EPIPE (the reader went away) would be thrown as an uncaught error.
    stream.on('error', (e: Error) => {
      this.failure ??= e;
    });
  }

  /** Whether enough is gathered that the caller should `await flush()` before going on. */
  get full(): boolean {
    return this.size >= CHUNK;
  }

  /** Gathers one line (without its newline). */
  line(text: string): void {
    this.parts.push(text, '\n');
    this.size += text.length + 1;
  }

  /** Gathers lines, flushing as they fill a chunk. */
  async lines(lines: Iterable<string>): Promise<void> {
    for (const text of lines) {
      this.line(text);
      if (this.full) await this.flush();
    }
    await this.flush();
  }

  /**
   * Writes what is gathered and waits until the stream takes more.
   * @throws {@link OutputClosed} when the reader went away or the stream failed
   */
  async flush(): Promise<void> {
    if (this.size === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    const stream = this.stream;
    if (this.failure !== null || stream.destroyed) throw new OutputClosed(this.failure);
    if (stream.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (): void => {
        stream.off('drain', settle);
        stream.off('close', settle);
        stream.off('error', settle);
        if (this.failure !== null || stream.destroyed) reject(new OutputClosed(this.failure));
        else resolve();
      };
      stream.on('drain', settle);
      stream.on('close', settle);
      stream.on('error', settle);
    });
  }
}

/** stderr: notices as `ledgerstore: <text>`, other lines as they are, each after the progress line is taken off. */
export class Stderr {
  readonly progress: Progress;

  /**
   * @param isTTY whether the stream is a terminal: the progress line is drawn only there
   * @param now the progress line's clock, in milliseconds
   * @param columns the terminal's width, when known
   */
  constructor(
    private readonly stream: Writable,
    isTTY: boolean,
    now: () => number,
    columns: number | undefined,
  ) {
    // A stderr whose reader went away must not turn a finished command into a crash.
    stream.on('error', () => {});
    this.progress = new Progress(stream, isTTY, now, columns);
  }

  /** A line as `ledgerstore: <text>`. */
  warn(text: string): void {
    this.write(`ledgerstore: ${text}\n`);
  }

  /** Text as it is (a usage text, a summary line). */
  write(text: string): void {
    this.progress.hide();
    this.stream.write(text);
  }
}

/** `f` of each of `items`, one at a time: rows are formatted as they are written, not all first. */
export function* mapped<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item);
}

/** An error's text for stderr: a ledger error with its runbook pointer; a bug with its stack. */
export function report(error: unknown): string {
  if (error instanceof LedgerError) return error.report;
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string')
    return describeSystemError(error);
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
