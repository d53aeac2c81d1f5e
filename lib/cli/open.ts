/**
 * Opening the ledger a command names, and the notices an operator should see about it: a cut-off
 * last line that was ignored or dropped, a ledger that is not there, the read model's notices.
 *
 * @module
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { jsonlBackend } from '../../backends/jsonl.js';
import { levelFolder } from '../../backends/level/index.js';
import { isPostgresUri, postgresLogPresence } from '../../backends/postgres/index.js';
import { LedgerError, LedgerIoError } from '../errors.js';
import { honchoCodec } from '../honcho/codec.js';
import type { Record } from '../honcho/record.js';
import { Ledger } from '../ledger.js';
import type { LogBackend, Repair } from '../log.js';
import { printableTarget } from '../printable.js';
import { withReplayHook } from '../replay-hook.js';
import { backendFor, jsonlPathOf, TargetError } from '../target.js';
import { UsageError } from './args.js';
import type { Context } from './context.js';
import { grouped, plural } from './describe.js';
import type { Stderr } from './output.js';
import type { Progress } from './progress.js';

/**
 * The backend a ledger argument names (a path, `jsonl:`, `level:`, `memory:`), showing on
 * `progress`, if given, how far each open has read it through: in bytes of a JSONL file read from
 * its start (its size is the total), else in records.
 * @throws {@link UsageError} when the argument names no ledger
 */
export function backendAt(target: string, progress?: Progress): LogBackend<Record> {
  let backend: LogBackend<Record>;
  try {
    backend = backendFor(target);
  } catch (e) {
    if (e instanceof TargetError) throw new UsageError(e.message, undefined, false);
    throw e;
  }
  if (progress === undefined || !progress.enabled) return backend;
  const file = jsonlPathOf(target);
  let bytes = 0;
  if (file !== null) {
    // The codec is handed each line's bytes: what the file's size is a total of.
    const decode = honchoCodec.decode;
    const counting = (line: Uint8Array, start: number, end: number): Record => {
      bytes += end - start;
      return decode(line, start, end);
    };
    // A scanned run's bytes are counted as it is handed over (its lines are not decoded one by one).
    const { lineScan } = honchoCodec;
    const scanned: typeof lineScan = lineScan && {
      ...lineScan,
      lines: (run, start, end, found) => {
        bytes += end - start;
        return lineScan.lines(run, start, end, found);
      },
    };
    backend = jsonlBackend(file, { codec: { ...honchoCodec, decode: counting, lineScan: scanned } });
  }
  let inBytes = false;
  let from = 0;
  const hooked = withReplayHook(backend, (position) => {
    // Looking at the clock for every record would cost more than the record.
    if ((position & 0xfff) === 0) progress.update(inBytes ? bytes : position - from);
  });
  return {
    ...hooked,
    open: (options) => {
      from = options?.resume?.position ?? 0;
      const size = file === null || from > 0 ? undefined : statSync(file, { throwIfNoEntry: false })?.size;
      bytes = 0;
      inBytes = size !== undefined;
      const name = printableTarget(target);
      progress.start(
        from === 0 ? `reading ${name}` : `reading ${name} from record ${grouped(from)}`,
        size,
        inBytes ? 'bytes' : 'records',
      );
      return hooked.open(options);
    },
  };
}

/**
 * Why `target` read as an empty ledger when that may be a typo: a JSONL file, or a LevelDB
 * folder, that is not there (or a folder that holds no database); else `null`.
 */
function absence(target: string): string | null {
  return localAbsence(target)?.why ?? null;
}

/** Why a ledger argument names nothing there, and whether it may yet appear where it names (for `follow`). */
export interface Absence {
  readonly why: string;
  /** A JSONL file whose folder is there, a PostgreSQL log a writer's first open makes: a follower may wait for it. */
  readonly mayAppear: boolean;
}

/** {@link Absence} of a JSONL file or a LevelDB folder, from the file system; `null` for any other target, or one that is there. */
function localAbsence(target: string): Absence | null {
  const file = jsonlPathOf(target);
  if (file !== null) {
    if (statSync(file, { throwIfNoEntry: false }) !== undefined) return null;
    const folder = dirname(file);
    return statSync(folder, { throwIfNoEntry: false }) === undefined
      ? { why: `no such file, nor its folder ${folder}`, mayAppear: false }
      : { why: 'no such file', mayAppear: true };
  }
  if (!target.startsWith('level:')) return null;
  const there = levelFolder(target.slice('level:'.length));
  if (there === 'database') return null;
  return { why: there === 'missing' ? 'no such folder' : 'no ledger in the folder', mayAppear: false };
}

/**
 * Why `target` names no ledger, `null` when it names one: a JSONL file or a LevelDB folder that
 * is not there, or a PostgreSQL log that has no row in its schema's `logs` table (looked at on a
 * read-only session, which makes neither schema nor log). `memory:` is always there.
 * @throws `LedgerIoError` when the PostgreSQL server cannot be reached
 */
export async function ledgerAbsence(target: string): Promise<Absence | null> {
  if (!isPostgresUri(target)) return localAbsence(target);
  const { found, log, schema } = await postgresLogPresence(target);
  if (found === 'there') return null;
  return {
    why:
      found === 'no log' ? `no log ${log} in the schema ${schema}` : `no ledgerstore schema ${schema} in the database`,
    mayAppear: true,
  };
}

/**
 * Says on stderr what an operator should know of a ledger just read through read-only: a
 * cut-off last line it ignored, or that it is not there at all (an empty ledger, or a typo).
 */
export function readNotices(
  err: Stderr,
  path: string,
  ledger: { readonly size: number; readonly repaired: Repair | null },
): void {
  const repair = ledger.repaired;
  const name = printableTarget(path);
  if (repair !== null) {
    err.warn(
      `${name}: a last line cut off by a crash (${plural(repair.dropped, 'byte')}) was ignored; the next writer drops it`,
    );
    return;
  }
  const missing = ledger.size === 0 ? absence(path) : null;
  if (missing !== null) err.warn(`${name}: ${missing}; read as an empty ledger`);
}

/** A ledger argument that names no ledger where a command needs one: a file or folder that is not there. */
export class NoLedgerError extends LedgerError {
  readonly code = 'LEDGER_BAD_TARGET';
  /** The ledger argument, its password (if any) left out. */
  readonly target: string;
  constructor(target: string, why: string, verb: string) {
    const name = printableTarget(target);
    super(`${name}: ${why}; there is no ledger to ${verb}`);
    this.target = name;
  }
}

/**
 * Refuses a ledger argument that names nothing there, for a command that would otherwise take
 * the typo for an empty ledger and say ok, or build something for it: a file, a folder, or a
 * PostgreSQL log with no row (a typo in `log=`), after a look that changes nothing.
 * @param verb what the command does with the ledger: `read`, `verify`, `check against`, ...
 * @throws {@link NoLedgerError}
 */
export async function requireLedgerThere(target: string, verb: string): Promise<void> {
  const missing = await ledgerAbsence(target);
  if (missing !== null) throw new NoLedgerError(target, missing.why, verb);
}

/**
 * Makes the read model's folder when it is missing, mode 0700, and not its parents: a missing
 * parent is a typo to report, not a path to make up. A recursive `mkdir` would also say ENOENT
 * where the file system is read-only; `mkdir` of the folder itself says EROFS.
 * @throws {@link LedgerIoError} when the folder cannot be made
 */
export function makeIndexFolder(folder: string): void {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (e) {
    // Something is there already: the read model's open says what, if it is not a folder.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LedgerIoError(folder, e);
  }
}

/**
 * Opens the ledger that `path` names, with its read model in `index` if given (its notices on
 * stderr), and the progress of the read-through. A read-only open with a read model refuses a
 * ledger that is not there: it would make a read model of a typo. A command's open builds what
 * the read model lacks before it returns (`waitForIndex`): a command ends soon after, and would
 * stop a build left to run in the background.
 */
export async function openLedger(
  path: string,
  err: Stderr,
  { readOnly, index }: { readonly readOnly: boolean; readonly index: string | undefined },
): Promise<Ledger> {
  const backend = backendAt(path, err.progress);
  if (index === undefined) return err.progress.around(() => Ledger.open(backend, { readOnly }));
  if (readOnly) await requireLedgerThere(path, 'index');
  makeIndexFolder(index);
  return err.progress.around(() =>
    Ledger.open(backend, { readOnly, index, waitForIndex: true, onNotice: (message) => err.warn(message) }),
  );
}

/** Opens the ledger to read, changing nothing, with the notices of {@link readNotices}. */
export async function openToRead(path: string, err: Stderr, index: string | undefined): Promise<Ledger> {
  const ledger = await openLedger(path, err, { readOnly: true, index });
  readNotices(err, path, ledger);
  return ledger;
}

/**
 * Runs `body` on the ledger opened to read (with the read model of `--index`, if given), and
 * closes it. A ledger that is not there is refused (exit 1): a query's answer of a typo would be
 * an empty ledger's.
 */
export async function reading<T>(
  { args: [path = ''], values, err }: Context,
  body: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  backendAt(path); // a target that names nothing is a usage error, before anything is looked at
  await requireLedgerThere(path, 'read');
  const ledger = await openToRead(path, err, values.get('index'));
  try {
    return await body(ledger);
  } finally {
    await ledger.close();
  }
}
