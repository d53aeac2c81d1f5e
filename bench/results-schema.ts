/**
 * The shape of `bench/results.json`: what `bench/run.ts` writes and `bench/report.ts` and the
 * charts (`bench/chart-data.ts`) read. Fields added after the first runs are optional, so that a
 * results file written before a figure was measured still reads (and draws) without it.
 *
 * @module
 */

/** A rate measured a few times: the best, and every run's, per second; a replay's peak RSS. */
export interface Rate {
  readonly perSecond: number;
  readonly runs?: readonly number[];
  /** The peak RSS (MiB) of the best run's process, and of every run's, where the run reports it. */
  readonly peakMiB?: number;
  readonly peaksMiB?: readonly number[];
}

/**
 * What an engine's figure cannot pass, measured beside it: its rate, its ratio to the bare loop,
 * and `share`, the engine's rate over it (1.00: the engine reaches its limit).
 */
export interface Limit {
  readonly engine: Rate;
  readonly ratio: number;
  readonly share: number;
}

/**
 * One pair: the bare loop's rate and one appender's, per second, run one after the other; for a
 * group, the rate of its appenders at once, and `limit`, the bare loop's writing as many lines
 * per sync.
 */
export interface Pair {
  readonly bare: number;
  readonly engine: number;
  readonly limit?: number;
}

/** Appenders at once, each awaiting its own appends, which the ledger group-commits. */
export interface GroupCommit {
  readonly appenders: number;
  readonly records: number;
  readonly engine: Rate;
  readonly ratio: number;
  /** The bare loop writing `appenders` lines per write and sync: group commit's limit with batches that size. */
  readonly limit?: Limit;
  /**
   * The group, the bare loop and the limit taking turns in one process: every round, the median
   * of the rounds' ratios to the bare loop, and of their shares of the limit.
   */
  readonly paired?: {
    readonly rounds: readonly Pair[];
    readonly bare: number;
    readonly engine: number;
    readonly ratio: number;
    readonly share: number;
  };
  /** The LevelDB backend's figure, against the same bare loop; `limit`: LevelDB's own, as many writers at once. */
  readonly level?: { readonly engine: Rate; readonly ratio: number; readonly limit?: Limit };
}

/** An engine's figure against the bare loop of its size. */
export interface Beside {
  readonly engine: Rate;
  readonly ratio: number;
}

/** The replay of one ledger size. */
export interface ReplayResult {
  readonly records: number;
  readonly bytes: number;
  readonly bare: Rate;
  readonly engine: Rate;
  readonly ratio: number;
  /** The bare loop read the file in 8 MiB chunks (a file longer than a string can be). */
  readonly bareChunked?: boolean;
  /**
   * The same ledger in LevelDB: the folder's size, and `Ledger.open` of it against the same bare
   * loop; `limit`: LevelDB's own, classic-level's iterator alone reading every value.
   */
  readonly level?: Beside & { readonly bytes: number; readonly limit?: Limit };
  /** The same records in the in-memory backend: `Ledger.open` of it against the same bare loop. */
  readonly memory?: Beside;
  /** The loop a user would write by hand (`readline`, `JSON.parse`, a `Map`), against the same bare loop. */
  readonly user?: Beside;
  /** The JSONL replay on 1, 2, 4, ... threads (up to the machine's), against the same bare loop. */
  readonly threads?: readonly (Beside & { readonly threads: number })[];
}

/** The queries of the point-query rows, by their `Ledger` method. */
export type PointQuery = 'isDecided' | 'sentIds' | 'conclusion';

/** One backend's point queries, each beside the backend's bare point read of the same run. */
export interface PointBackend {
  readonly backend: 'jsonl' | 'level' | 'postgres';
  /** The bare point reads (one record's bytes at a known place, nothing decoded), per second. */
  readonly bare: Rate;
  readonly queries: readonly {
    readonly query: PointQuery;
    /** Queries per second, each awaited before the next. */
    readonly engine: Rate;
    /** The best run's time per query, in µs, and its ratio to the bare read's (lower is better). */
    readonly micros: number;
    readonly timesBare: number;
  }[];
}

/** The point queries on a ledger of `records` records, `queries` of each kind per run. */
export interface PointQueries {
  readonly records: number;
  readonly queries: number;
  readonly backends: readonly PointBackend[];
}

/** The appends, every figure against the one-sync-per-record bare loop. */
export interface AppendResults {
  readonly records: number;
  readonly meanLineBytes: number;
  readonly bare: Rate;
  readonly bareAsync: Rate;
  /** The loop a user would write by hand (`appendFile` + `datasync` on a handle), against the same bare loop. */
  readonly user?: Rate;
  readonly engine: Rate;
  readonly ratio: number;
  /** One appender and the bare loop taking turns in one process: every pair, and the median of their ratios. */
  readonly paired: {
    readonly pairs: readonly Pair[];
    readonly bare: number;
    readonly engine: number;
    readonly ratio: number;
  };
  /** Group commit with 16 appenders, the JSONL file and (`level`) LevelDB. */
  readonly concurrent: GroupCommit;
  /** Group commit with 64 appenders, the JSONL file. */
  readonly many?: GroupCommit;
  /** The LevelDB backend's figure, against the same bare loop; `limit`: LevelDB's own, one record per synced write. */
  readonly level: Beside & { readonly limit?: Limit };
  /** The in-memory backend's figure (no I/O at all), against the same bare loop. */
  readonly memory: Beside;
}

/** `bench/results.json`. */
export interface Results {
  readonly date: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
    readonly filesystem: string;
  };
  readonly method: string;
  readonly replay: readonly ReplayResult[];
  readonly append: AppendResults;
  /** The point queries (measured since issue 23). */
  readonly points?: PointQueries;
}

/** The ratio of two rates, to a thousandth, as every ratio of the results file is written. */
export const ratioOf = (a: Rate, b: Rate): number => Math.round((1000 * a.perSecond) / b.perSecond) / 1000;

/** The limit `rate` of the figure `of`, against the bare loop `bare`. */
export const limitOf = (rate: Rate, of: Rate, bare: Rate): Limit => ({
  engine: rate,
  ratio: ratioOf(rate, bare),
  share: ratioOf(of, rate),
});
