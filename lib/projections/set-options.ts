/**
 * The options of a read model's open (`ProjectionSet.open`), apart so that the set's parts can
 * name them without importing the set.
 *
 * @module
 */

import type { Position } from '../log.js';
import type { Db } from './database.js';
import type { Loadable, ProjectionDefinition } from './definition.js';

/** How to open a log's projections. */
export interface ProjectionSetOptions<R> {
  /**
   * Where the rows are: a folder of their own (created if missing), a caller's abstract-level
   * database of bytes (left open at close), or `null` for a database in memory (built at every
   * open).
   */
  readonly index: string | Db | null;
  readonly projections: readonly ProjectionDefinition<R>[];
  /** The log is opened read-only; the rows are still brought up to date (they are the read model's own). */
  readonly readOnly?: boolean;
  /** Told, once, of a build: of a new read model, or why rows are built again. */
  readonly onNotice?: (message: string) => void;
  /** Every build runs during the open, which returns once every projection is ready. */
  readonly waitForIndex?: boolean;
  /** How a worker thread opens this log, read-only, to build projections there (without it, builds run in the open). */
  readonly worker?: Loadable;
  /** The fewest records a build runs in the background for; shorter logs are built in the open. Default 50,000. */
  readonly backgroundFrom?: number;
  /** Projections whose queries the caller answers itself while no rows do (the engine keeps no copy of them). */
  readonly answeredElsewhere?: readonly string[];
  /**
   * Asked once, when the read model is looked at, with the queries of `answeredElsewhere`
   * projections that no rows will answer while they are built: gives what to call with every
   * record from the log's start (the caller's copy in memory), or `null`.
   */
  readonly fallback?: (
    unanswered: ReadonlyMap<string, readonly string[]>,
  ) => ((record: R, position: Position) => void) | null;
  /**
   * Called with every record of the log from its start, before the projections: the caller's own
   * state in memory, kept whatever the rows are (it may refuse a record, which is then damage).
   */
  readonly replay?: (record: R, position: Position) => void;
  /** Told whenever what answers a projection changes (a build took over). */
  readonly onChange?: () => void;
}
