/**
 * How a codec reads many stored values at once ({@link RecordCodec.valueScan}), so that a
 * backend that stores each record as a value of its own (the LevelDB log) can read a large log
 * through without making a record of each: the backend checks each value's own frame (its
 * checksum), lays the records' bytes end to end, and the codec's scan says what they hold, as a
 * run of {@link ScannedLines} a state may take without their records. A value the scan cannot
 * vouch for is the backend's to decode the ordinary way when it is reached (`fallback`), so that
 * the first damage is the one reported, at its position, after every record before it was taken
 * and none after.
 *
 * @module
 */
import type { ScannedLines } from './line-scan.js';

/** A codec's scan of stored values, and how records are made from it. */
export interface ValueScan<R> {
  /**
   * The records of the `count` values in `bytes`, the n-th at `[starts[n], ends[n])`, in order
   * and apart, as a run of scanned lines: the n-th "line"'s record is `fallback(n)` where the
   * scan does not vouch for the value (which throws what is wrong with it).
   */
  values(
    bytes: Buffer,
    starts: Int32Array,
    ends: Int32Array,
    count: number,
    fallback: (n: number) => R,
  ): ScannedLines<R>;
}
