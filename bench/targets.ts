/**
 * The benchmark's targets, each a ratio to the bare loop measured in the same run (or, for
 * memory, a peak RSS; for a point query, also a time): what the results table and the charts
 * set each figure against.
 *
 * @module
 */

/** The targets of the replay, the read model's build, the appends and the point queries. */
export const TARGETS = {
  replay: {
    /** `Ledger.open` of a JSONL file, against the bare `JSON.parse` loop. */
    jsonl: 2.0,
    /** `Ledger.open` of the LevelDB backend, against the same bare loop. */
    level: 1.0,
    /** `Ledger.open` of the LevelDB backend, against classic-level's bare iterator loop over the same folder. */
    levelOfIterator: 0.9,
    /** The JSONL replay rate at the largest ledger against the rate at this size... */
    rateHeldFrom: 1_000_000,
    /** ... is at least this share of it: the state must not slow down as it grows. */
    rateHeld: 0.9,
    /** The peak RSS of the replay of a ledger of this size... */
    peakAt: 10_000_000,
    /** ... in MiB. */
    peakMiB: 1024,
  },
  /** The read model's cold build of the largest ledger, against the chunked bare loop. */
  readModelBuild: 0.33,
  /** Appends by so many appenders at once, against the one-sync-per-record bare loop. */
  append: {
    jsonl: [
      { appenders: 1, ratio: 0.95 },
      { appenders: 16, ratio: 14 },
      { appenders: 64, ratio: 25 },
    ],
    level: [
      { appenders: 1, ratio: 0.8 },
      { appenders: 16, ratio: 10 },
    ],
  },
  /**
   * A point query (`isDecided`, `sentIds`, `conclusion`) on a 200,000-record ledger: within a few
   * times the backend's bare point read of one record, and well under a millisecond.
   */
  points: {
    /** The query's time over the bare point read's, at most. */
    timesBare: 5,
    /** The query's time in µs, at most. */
    micros: 100,
  },
} as const;
