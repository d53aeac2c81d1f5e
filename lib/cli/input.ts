/**
 * Record lines read from stdin (`append`, `check`).
 *
 * @module
 */
import type { Readable } from 'node:stream';

/**
 * The lines of `input`, as bytes, split on `\n` only (a `\r` is the line's, and JSON's whitespace).
 * Each keeps its `\n`, as the ledger's reader keeps it, so that serde's error positions are the
 * ones memoryd would give for the same line in the file. What follows the last newline is a line
 * too, unless it is empty.
 */
export async function* inputLines(input: Readable): AsyncGenerator<Buffer> {
  let carried: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline + 1);
      yield carried.length === 0 ? piece : Buffer.concat([...carried, piece]);
      carried = [];
      start = newline + 1;
    }
    if (start < chunk.length) carried.push(chunk.subarray(start));
  }
  if (carried.length > 0) yield Buffer.concat(carried);
}
