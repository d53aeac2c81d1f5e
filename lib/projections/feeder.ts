/**
 * Records in log order into generations of rows: a chunk of records at a time through each
 * generation's `apply`, a batch at a time into LevelDB. The open's read-through (catching rows up
 * from their checkpoints, building them from the log's start), a build in a worker thread and the
 * catch-up of a build that takes over all feed rows this way.
 *
 * A generation fed from a position applies only the records from there on. Batches before the
 * last mark the rows `building`, so that a crash in the middle leaves rows that are never used;
 * the last batch writes the checkpoint and clears the mark. A refused record is damage at its
 * line: the feeder throws the `DamagedError`, naming the log and the record's line.
 *
 * @module
 */
import { DamagedError } from '../errors.js';
import type { Position } from '../log.js';
import type { Database } from './database.js';
import { type Generation, refusalOf } from './generation.js';
import type { Checkpoint } from './layout.js';

/** Records applied together: what `apply` gets at once in a read-through or a build. */
export const CHUNK = 4096;
/** Records between two batches of a read-through or a build. */
export const BATCH = 65_536;
/** Batches in flight before the feeder waits for the oldest. */
const IN_FLIGHT = 2;

/** A generation to feed, and the first position it takes. */
export interface Target<R> {
  readonly generation: Generation<R>;
  readonly from: Position;
  /**
   * Held in memory, never written by the feeder, up to this many records: a build tried during
   * an open, kept only if the log turns out that short (else dropped, to be built elsewhere).
   */
  readonly holdUpTo?: number;
}

/** Feeds records to generations; see the module's doc. */
export class Feeder<R> {
  private chunk: R[] = [];
  private chunkFirst: Position = 0;
  private sinceBatch = 0;
  private targets: Target<R>[];
  /** Batches submitted and not written yet, oldest first. */
  private readonly inFlight: Promise<void>[] = [];
  /** How many records were fed. */
  count = 0;
  /** The held targets dropped for holding more than they may. */
  readonly dropped: Generation<R>[] = [];

  constructor(
    targets: readonly Target<R>[],
    /** The log's name, for damage. */
    private readonly logName: string,
    private readonly onChunk?: (fed: number) => void,
    private readonly batchRecords = BATCH,
  ) {
    this.targets = [...targets];
  }

  /** Whether any generation is still fed. */
  get empty(): boolean {
    return this.targets.length === 0;
  }

  /** Takes the record at `position` (positions follow one another); may ask the caller to wait for LevelDB. */
  push(record: R, position: Position): void | Promise<void> {
    if (this.chunk.length === 0) this.chunkFirst = position;
    this.chunk.push(record);
    this.count++;
    if (this.chunk.length < CHUNK) return;
    this.flushChunk();
    if (this.sinceBatch >= this.batchRecords) return this.writeBatch();
  }

  /** Applies the records taken and not applied yet. @throws DamagedError at the first refused one */
  flushChunk(): void {
    const records = this.chunk;
    if (records.length === 0) return;
    const first = this.chunkFirst;
    this.chunk = []; // a new array: `records` is applied below (and may be kept by a generation)
    this.sinceBatch += records.length;
    for (const target of this.targets) {
      const slice = sliceFor(target, records, first);
      if (slice === null) continue;
      try {
        target.generation.apply(slice.records, slice.first);
      } catch (e) {
        const refused = refusalOf(e);
        if (refused === null) throw e;
        // a refusal that does not say which record: the first of its chunk is the nearest line known
        const position = slice.first + (refused.index ?? 0);
        throw new DamagedError(this.logName, position + 1, refused.refusal.message, { cause: refused.refusal });
      }
    }
    this.dropOverfull();
    this.onChunk?.(this.count);
  }

  /** Reads at once what the records taken will read of the rows (see {@link Generation.prefetch}). */
  private async prefetch(): Promise<void> {
    const records = this.chunk;
    await Promise.all(
      this.targets.map((target) => {
        const slice = sliceFor(target, records, this.chunkFirst);
        return slice === null ? undefined : target.generation.prefetch(slice.records);
      }),
    );
  }

  private dropOverfull(): void {
    for (const target of this.targets) {
      if (target.holdUpTo === undefined || target.generation.staged <= target.holdUpTo) continue;
      target.generation.dropStaged();
      this.dropped.push(target.generation);
    }
    if (this.dropped.length > 0) this.targets = this.targets.filter((t) => !this.dropped.includes(t.generation));
  }

  /** Writes what is staged of the generations that are written, marked building, and waits while too many batches are in flight. */
  private async writeBatch(): Promise<void> {
    this.sinceBatch = 0;
    for (const [database, generations] of this.byDatabase(false)) {
      this.inFlight.push(submit(database, generations, null, true, false));
    }
    while (this.inFlight.length > IN_FLIGHT) await this.inFlight.shift();
  }

  /**
   * Applies what is left, and writes every generation fed (the held ones included; only those
   * `needed` says need it) with `checkpoint`, clearing its building mark; with `sync`, LevelDB
   * syncs the last batch.
   */
  async finish(
    checkpoint: Checkpoint,
    sync: boolean,
    needed: (generation: Generation<R>) => boolean = () => true,
  ): Promise<void> {
    // the tail of a read-through, all of a short catch-up: its reads of stored rows, at once
    await this.prefetch();
    this.flushChunk();
    const writes = [...this.byDatabase(true)].flatMap(([database, generations]) => {
      const due = generations.filter(needed);
      return due.length === 0 ? [] : [submit(database, due, checkpoint, false, sync)];
    });
    await Promise.all([...this.inFlight.splice(0), ...writes]);
  }

  /** Waits for the batches in flight (after a failure, so that nothing is left writing). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.inFlight.splice(0));
  }

  /** The generations fed, by database: all of them, or only those the feeder writes (not held). */
  private byDatabase(withHeld: boolean): Map<Database, Generation<R>[]> {
    const grouped = new Map<Database, Generation<R>[]>();
    for (const { generation, holdUpTo } of this.targets) {
      if (holdUpTo !== undefined && !withHeld) continue;
      const list = grouped.get(generation.db);
      if (list === undefined) grouped.set(generation.db, [generation]);
      else list.push(generation);
    }
    return grouped;
  }
}

/** The records of a chunk from position `first` that `target` takes, or `null` for none. */
function sliceFor<R>(
  target: Target<R>,
  records: readonly R[],
  first: Position,
): { readonly records: readonly R[]; readonly first: Position } | null {
  const skip = Math.max(0, target.from - first);
  if (skip >= records.length) return null;
  return { records: skip === 0 ? records : records.slice(skip), first: first + skip };
}

/**
 * Writes the staged rows of `generations` (all in `database`) as one batch, with `checkpoint`
 * and the building mark; resolves when the batch is written and the rows count as LevelDB's.
 */
export function submit<R>(
  database: Database,
  generations: readonly Generation<R>[],
  checkpoint: Checkpoint | null,
  building: boolean,
  sync: boolean,
): Promise<void> {
  const stages: [Generation<R>, ReturnType<Generation<R>['fill']>][] = [];
  const written = database.submit((batch) => {
    for (const generation of generations) stages.push([generation, generation.fill(batch, checkpoint, building)]);
  }, sync);
  for (const [, stage] of stages) stage.written = written;
  return written.then(() => {
    for (const [generation, stage] of stages) generation.written(stage);
  });
}
