/**
 * The LevelDB log's records read the fast way (`value-scan.ts`): the values' CBOR checked
 * against its canonical shape by `cbor-scan.ts`, in the layout of the JSON lines' scan, and
 * read as canonical lines are (`canonical.ts`), so that the state takes them without their
 * records (`Projection.replayLine`). A value the scan does not vouch for is the backend's
 * general decoding's, which accepts or refuses it in its own words.
 *
 * @module
 */
import type { ValueScan } from '../value-scan.js';
import { CanonicalLines } from './canonical.js';
import { releaseValues, scanValuesRun } from './cbor-scan.js';
import type { Record } from './record.js';

/** A run of values scanned as {@link CanonicalLines}, each one the scan left to it read by `fallback`. */
class CborValues extends CanonicalLines {
  /** The value at hand's place in the run. */
  private index = -1;
  /** What the scan gave, given back once the last value was moved past. */
  private readonly scanned: Int32Array;

  constructor(
    bytes: Buffer,
    from: number,
    to: number,
    scanned: { readonly slots: Int32Array; readonly length: number },
    private readonly fallback: (n: number) => Record,
  ) {
    super(bytes, from, to, scanned.slots, scanned.length);
    this.scanned = scanned.slots;
  }

  override next(): boolean {
    const more = super.next();
    if (more) this.index++;
    else releaseValues(this.scanned);
    return more;
  }

  /** The record of the value at hand: the backend's general decoding's where the scan did not vouch for it. */
  override record(): Record {
    return this.canonicalRecord() ?? this.fallback(this.index);
  }
}

/** The Honcho codec's scan of a LevelDB log's values. */
export const cborValueScan: ValueScan<Record> = {
  values: (bytes, starts, ends, count, fallback) => {
    const from = count === 0 ? 0 : (starts[0] as number);
    const to = count === 0 ? 0 : (ends[count - 1] as number);
    return new CborValues(bytes, from, to, scanValuesRun(bytes, starts, ends, count), fallback);
  },
};
