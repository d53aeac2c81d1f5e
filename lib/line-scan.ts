/**
 * How a codec reads many lines at once ({@link RecordCodec.lineScan}), so that a line-oriented
 * backend (the JSONL file) can read a large log through on several cores: a **scan** of a run of
 * lines' bytes, pure (bytes in, numbers out) and so runnable on a worker thread, which finds each
 * line's end and whatever else the codec wants to know; and the **records** made from that scan,
 * in order, on the thread that reads the log through. A line the scan cannot vouch for is decoded
 * there the ordinary way, when it is reached, so that the first damage in the file is the one
 * reported, at its line, after every line before it was taken and none after.
 *
 * @module
 */

/** What a scan gives: `length` slots of `slots`, in the codec's own layout. */
export interface Scanned {
  readonly slots: Int32Array;
  readonly length: number;
}

/**
 * The signature of a scan: the lines of `bytes[from, to)`, each ending with its newline (so
 * `bytes[to - 1]` is one). It may reuse the array it returns for its next call.
 */
export type ScanLines = (bytes: Uint8Array, from: number, to: number) => Scanned;

/** The lines of a scanned run, one after another. */
export interface ScannedLines<R> {
  /** Moves to the next line: `false` when there is none. */
  next(): boolean;
  /** Where the line at hand's newline is, in the bytes scanned. */
  readonly end: number;
  /**
   * The record of the line at hand.
   * @throws `DecodeError` saying why it is not a record
   */
  record(): R;
  /**
   * Where the newline of every line moved to is, in order: once the last was moved past, every
   * line's (for a backend's bookkeeping once the run was taken).
   */
  lineEnds(): Int32Array;
}

/** Whether a batch of a read-through is a run of scanned lines (else an iterable of records). */
export function isScannedLines<R>(batch: Iterable<R> | ScannedLines<R>): batch is ScannedLines<R> {
  return typeof (batch as Partial<ScannedLines<R>>).record === 'function';
}

/** A codec's scan, and how records are made from it. */
export interface LineScan<R> {
  /**
   * The URL of an ES module that exports the scan as `scanLines` ({@link ScanLines}): what a
   * worker thread imports. It must import nothing that needs the main thread.
   */
  readonly module: string;
  /**
   * The same scan, run on this thread. What it gives must stay as it is until the lines made of
   * it were read through (their `lineEnds()`), though this thread scans another run meanwhile
   * (another log read through at once, while a replay of this one waits).
   */
  readonly scan: ScanLines;
  /** The lines of `bytes[from, to)` from what the scan gave for them. */
  lines(bytes: Buffer, from: number, to: number, scanned: Scanned): ScannedLines<R>;
}
