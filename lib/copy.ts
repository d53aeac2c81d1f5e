/**
 * Copying a ledger from one backend to another (`ledgerstore copy`), for an operator who moves a
 * ledger to another backend: the source is read through under the rules, the destination must
 * be empty, and the copy is checked by reading the destination through again: the same counts and the
 * same records, in the same order.
 *
 * A destination that is written in place, a PostgreSQL log, is marked unfinished while it is
 * filled ({@link PostgresBackend.fill}): from before its first record is written until its last
 * is, and checked. A copy (or gen) stopped, killed or cut off from its server in between leaves
 * a log that every open refuses, never one that reads as a ledger of part of the source.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { FillKind, PostgresBackend } from '../backends/postgres/index.js';
import { ConflictError, CopyMismatchError, DestinationNotEmptyError } from './errors.js';
import { encodeRecord } from './honcho/codec.js';
import { HonchoLedger } from './honcho/ledger.js';
import type { Counts, Record } from './honcho/record.js';
import type { LogBackend, Repair } from './log.js';
import { withReplayHook } from './replay-hook.js';

/** How many records one append of the copy carries. */
const BATCH = 10_000;

/**
 * Lets the event loop run, then checks `signal`. A signal's listener (Ctrl-C) runs from the
 * event loop, and the JSONL backend's I/O is synchronous: without a turn of the loop between
 * batches, a copy would run to its end in promise callbacks without ever hearing it.
 */
async function checkpoint(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}

/** `backend`, whose read-through at open stops at a {@link checkpoint} every {@link BATCH} records. */
function heeding(backend: LogBackend<Record>, signal: AbortSignal | undefined): LogBackend<Record> {
  if (signal === undefined) return backend;
  return withReplayHook(backend, (position) => ((position + 1) % BATCH === 0 ? checkpoint(signal) : undefined));
}

/**
 * What a copy is doing: appending the records (`copying`), then reading the copy through under
 * the rules (`reading the copy`), then reading its records again to compare them with the
 * source's (`comparing`).
 */
export type CopyPhase = 'copying' | 'reading the copy' | 'comparing';

/** How to copy. */
export interface CopyOptions {
  /** Called at the start of each phase and now and then in it: how many records of how many are done. */
  readonly onProgress?: (phase: CopyPhase, done: number, total: number) => void;
  /** Stops the copy at its next batch when aborted: it fails with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Called once the destination is marked unfinished (a PostgreSQL log): from then on, a copy
   * that does not end whole leaves it refused by every open, to be dropped before a copy again.
   */
  readonly onUnfinished?: () => void;
}

/** What a copy wrote. */
export interface Copied {
  readonly records: number;
  readonly counts: Counts;
  /** A cut-off last line of the source that was ignored (and not copied), or `null`. */
  readonly sourceRepair: Repair | null;
}

/**
 * Copies every record of `from` to `to`, which must be empty, then checks that `to` reads
 * through to the same counts and the same records. A copy that fails or is stopped leaves in
 * `to` what it appended: to have nothing there, build it aside and give it its name after (as
 * `ledgerstore copy` does for a file or folder). A PostgreSQL log is marked unfinished until the
 * copy is checked: left so, every open refuses it (`UnfinishedCopyError`) until it is dropped.
 * @throws {@link DestinationNotEmptyError} when `to` holds records (nothing is written)
 * @throws `UnfinishedCopyError` when `to` is a log an earlier copy or gen left unfinished (nothing is written)
 * @throws {@link CopyMismatchError} when the copy does not read back as its source
 */
export async function copyLedger(
  from: LogBackend<Record>,
  to: LogBackend<Record>,
  options: CopyOptions = {},
): Promise<Copied> {
  const signal = options.signal;
  const source = await HonchoLedger.open(heeding(from, signal), { readOnly: true });
  try {
    // the source's records are digested as they are copied, so that the check reads only the copy
    const digests: string[] = [];
    const total = source.size;
    const told = (phase: CopyPhase) => (done: number) => options.onProgress?.(phase, done, total);
    told('copying')(0);
    const fill = await begin(to, 'copy', options.onUnfinished);
    await fillOnce(fill.backend, digested(source.records(), digests), told('copying'), signal);
    await verifyCopy(source, digests, heeding(fill.backend, signal), signal, told);
    await fill.finish();
    return { records: source.size, counts: await source.counts(), sourceRepair: source.repaired };
  } finally {
    await source.close();
  }
}

/** `records`, passed on as they come, with the SHA-256 of each {@link BATCH} of their lines pushed to `digests`. */
async function* digested(records: AsyncIterable<Record>, digests: string[]): AsyncIterable<Record> {
  let hash = createHash('sha256');
  let inBatch = 0;
  for await (const record of records) {
    hash.update(`${encodeRecord(record)}\n`);
    if (++inBatch === BATCH) {
      digests.push(hash.digest('hex'));
      hash = createHash('sha256');
      inBatch = 0;
    }
    yield record;
  }
  if (inBatch > 0) digests.push(hash.digest('hex'));
}

/** Where a fill writes, and what ends it whole: a PostgreSQL log's mark, or nothing. */
interface Filling {
  readonly backend: LogBackend<Record>;
  finish(): Promise<void>;
}

/** Whether `to` is a log that is marked unfinished while it is filled (a PostgreSQL log). */
function marksUnfinished(to: LogBackend<Record>): to is PostgresBackend<Record> {
  return typeof (to as Partial<PostgresBackend<Record>>).fill === 'function';
}

/** Marks `to` unfinished, if it is of a backend that does (telling `onUnfinished`), and gives where to fill it. */
async function begin(to: LogBackend<Record>, by: FillKind, onUnfinished: (() => void) | undefined): Promise<Filling> {
  if (!marksUnfinished(to)) return { backend: to, finish: async () => undefined };
  const fill = await to.fill(by);
  onUnfinished?.();
  return fill;
}

/**
 * Appends `records` to `to`, which must be empty, in large batches, each expecting the head the
 * one before left: if another writer gets into the destination meanwhile, the fill stops. A
 * PostgreSQL log is marked unfinished until the last batch is written (as {@link copyLedger}).
 * @param onProgress called with the number of records appended so far, after each batch
 * @param signal stops the fill at its next batch when aborted: it fails with the signal's reason
 * @param onUnfinished called once `to` is marked unfinished, as {@link CopyOptions.onUnfinished}
 * @returns the number of records appended
 * @throws {@link DestinationNotEmptyError} when `to` holds records (nothing is written)
 * @throws `UnfinishedCopyError` when `to` is a log an earlier copy or gen left unfinished (nothing is written)
 */
export async function fillLedger(
  to: LogBackend<Record>,
  records: AsyncIterable<Record> | Iterable<Record>,
  onProgress?: (appended: number) => void,
  signal?: AbortSignal,
  onUnfinished?: () => void,
): Promise<number> {
  const fill = await begin(to, 'gen', onUnfinished);
  const appended = await fillOnce(fill.backend, records, onProgress, signal);
  await fill.finish();
  return appended;
}

/** {@link fillLedger}'s appends, into a destination already marked if it is to be. */
async function fillOnce(
  to: LogBackend<Record>,
  records: AsyncIterable<Record> | Iterable<Record>,
  onProgress?: (appended: number) => void,
  signal?: AbortSignal,
): Promise<number> {
  const destination = await to.open();
  try {
    if (destination.head > 0) throw new DestinationNotEmptyError(to.name, destination.head);
    let batch: Record[] = [];
    const flush = async (): Promise<void> => {
      await checkpoint(signal);
      await appendExpecting(destination.append(batch, { expectedHead: destination.head }), to.name);
      batch = [];
      onProgress?.(destination.head);
    };
    for await (const record of records) {
      batch.push(record);
      if (batch.length === BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    return destination.head;
  } finally {
    await destination.close();
  }
}

/** A conflict while copying means another writer got into the destination: say it plainly. */
async function appendExpecting(append: Promise<unknown>, destination: string): Promise<void> {
  try {
    await append;
  } catch (e) {
    if (e instanceof ConflictError) throw new DestinationNotEmptyError(destination, e.actual);
    throw e;
  }
}

/**
 * Reads the destination through as a ledger and compares it with the source: its size and counts,
 * and the digests of its records, {@link BATCH} at a time, with those taken while copying.
 */
async function verifyCopy(
  source: HonchoLedger,
  digests: readonly string[],
  to: LogBackend<Record>,
  signal: AbortSignal | undefined,
  told: (phase: CopyPhase) => (done: number) => void,
): Promise<void> {
  const reading = told('reading the copy');
  reading(0);
  const copy = await HonchoLedger.open(
    withReplayHook(to, (position) => {
      if ((position & 0xfff) === 0xfff) reading(position + 1);
    }),
    { readOnly: true },
  );
  try {
    if (copy.size !== source.size) throw new CopyMismatchError(to.name, `${copy.size} records, not ${source.size}`);
    const expected = JSON.stringify(await source.counts());
    const got = JSON.stringify(await copy.counts());
    if (got !== expected) throw new CopyMismatchError(to.name, `the counts are ${got}, not ${expected}`);
    const copied: string[] = [];
    const comparing = told('comparing');
    comparing(0);
    let read = 0;
    for await (const _ of digested(copy.records(), copied)) {
      // digested as they are read
      if (++read % BATCH === 0) {
        comparing(read);
        await checkpoint(signal);
      }
    }
    const differs = digests.findIndex((digest, n) => copied[n] !== digest);
    if (differs !== -1) {
      const first = differs * BATCH + 1;
      throw new CopyMismatchError(
        to.name,
        `a record among ${first} to ${Math.min(first + BATCH - 1, source.size)} differs from the source's`,
      );
    }
  } finally {
    await copy.close();
  }
}
