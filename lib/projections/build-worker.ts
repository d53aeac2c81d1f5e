/**
 * A worker thread that builds generations of rows from a log's start, while the thread that
 * opened the log serves: it opens the log itself (read-only, beside the writer), feeds its records
 * up to the point it was given into a database of its own (the one LevelDB opens in this thread),
 * writes that point as the rows' checkpoint, closes the database, checks its tables' blocks, and
 * says it is done. The thread that serves then opens the database, catches the rows up with what
 * was appended meanwhile, and lets them take over (`background.ts`).
 *
 * It runs at a lower priority than the thread that serves (on Linux, its own nice value), so that
 * on a machine with few cores the appends and queries come first.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { isLedgerError, type LedgerError } from '../errors.js';
import type { LogBackend, Position, ResumePoint } from '../log.js';
import { Database } from './database.js';
import type { Loadable, ProjectionDefinition } from './definition.js';
import { Feeder } from './feeder.js';
import { createDatabase, verifyWritten } from './folder.js';
import { Generation, type GenerationEntry } from './generation.js';
import { load } from './loadable.js';

/** What the serving thread gives a build. */
export interface BuildOrder {
  readonly log: Loadable;
  readonly logName: string;
  /** The database folder to build in (new). */
  readonly folder: string;
  /** The generations to build, each with where its definition is. */
  readonly generations: readonly { readonly entry: GenerationEntry; readonly definition: Loadable }[];
  /** Build the records before this point, and take it for the rows' checkpoint. */
  readonly limit: ResumePoint;
  readonly batchRecords?: number;
}

/** What a build says: how far it is, that it is done, or why it failed. */
export type BuildMessage =
  | { readonly type: 'progress'; readonly done: number }
  | { readonly type: 'done' }
  | { readonly type: 'failed'; readonly error: FailureReport };

/** An error, in what survives the copy between threads. */
export interface FailureReport {
  readonly message: string;
  readonly code: string | null;
  /** For damage: the log's name, the line and why. */
  readonly damage: { readonly path: string; readonly line: number; readonly why: string } | null;
}

/** Thrown from the replay once the records before the limit are in: the rest was appended meanwhile, and is caught up by the serving thread. */
const ENOUGH = new Error('the records before the limit are built');

/** How often the build says how far it is. */
const PROGRESS_MS = 250;

function lowerPriority(): void {
  try {
    const thread = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(thread)) os.setPriority(thread, 10);
  } catch {
    // not Linux, or not allowed: the build runs at the serving thread's priority
  }
}

async function build(order: BuildOrder, say: (message: BuildMessage) => void): Promise<void> {
  const backend = await load<LogBackend<unknown>>(order.log);
  const definitions = await Promise.all(
    order.generations.map((g) => load<ProjectionDefinition<unknown>>(g.definition)),
  );
  const database = new Database(order.folder, await createDatabase(order.folder), order.folder, true);
  let said = performance.now();
  try {
    const generations = order.generations.map(({ entry }, n) => {
      const definition = definitions[n] as ProjectionDefinition<unknown>;
      if (definition.name !== entry.projection || definition.version !== entry.version)
        throw new Error(
          `${order.generations[n]?.definition.module}: its export is ${definition.name} version ${definition.version}, not ${entry.projection} version ${entry.version}`,
        );
      const generation = new Generation(entry, definition, database);
      generation.startEmpty();
      return generation;
    });
    const feeder = new Feeder(
      generations.map((generation) => ({ generation, from: 0 })),
      order.logName,
      (done) => {
        const now = performance.now();
        if (now - said < PROGRESS_MS) return;
        said = now;
        say({ type: 'progress', done });
      },
      order.batchRecords,
    );
    const limit = order.limit.position;
    let reached: Position = 0;
    try {
      const log = await backend.open({
        readOnly: true,
        replay: (record, position) => {
          if (position >= limit) throw ENOUGH;
          reached = position + 1;
          return feeder.push(record, position);
        },
      });
      await log.close();
    } catch (e) {
      if (e !== ENOUGH) {
        await feeder.settle();
        throw e;
      }
    }
    if (reached < limit)
      throw new Error(`${order.logName}: the log holds ${reached} records, fewer than the ${limit} to build`);
    await feeder.finish({ resume: order.limit, log: order.logName }, true);
  } finally {
    await database.close();
  }
  verifyWritten(order.folder);
  say({ type: 'done' });
}

function report(e: unknown): FailureReport {
  const error = e as Partial<LedgerError> & { path?: unknown; line?: unknown; why?: unknown };
  const damage =
    isLedgerError(e, 'LEDGER_DAMAGED') && typeof error.line === 'number'
      ? { path: String(error.path), line: error.line, why: String(error.why) }
      : null;
  return { message: e instanceof Error ? e.message : String(e), code: isLedgerError(e) ? e.code : null, damage };
}

if (parentPort !== null) {
  const port = parentPort;
  lowerPriority();
  build(workerData as BuildOrder, (message) => port.postMessage(message)).catch((e: unknown) =>
    port.postMessage({ type: 'failed', error: report(e) } satisfies BuildMessage),
  );
}
