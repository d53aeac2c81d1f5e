/**
 * Every error ledgerstore throws on purpose is a {@link LedgerError}: it has a stable `code` that
 * programs can branch on, a message that says what failed and where, and, where an operator has
 * something to do, the runbook entry that says what (`runbook`).
 *
 * Here: the base, the one list of codes, and the errors of logs and ledgers. The errors of a
 * layer above live with it, under a code of this list: the Honcho rules' in `honcho/errors.ts`,
 * a target string's in `target.ts`. How a system error is put in words is `system-errors.ts`.
 *
 * The texts of the Honcho ledger's errors are memoryd's, word for word (spec 000, "The errors'
 * text"), so that an operator sees the same line whichever engine wrote the ledger.
 *
 * @module
 */
import { describeSystemError, systemErrorName } from './system-errors.js';

/** The stable codes, one per kind of failure. */
export type LedgerErrorCode =
  | 'LEDGER_IO'
  | 'LEDGER_DAMAGED'
  | 'LEDGER_INVALID_RECORD'
  | 'LEDGER_DECODE'
  | 'LEDGER_ALREADY_DECIDED'
  | 'LEDGER_NOT_WAITING'
  | 'LEDGER_LOCKED'
  | 'LEDGER_CLOSED'
  | 'LEDGER_READ_ONLY'
  | 'LEDGER_STOPPED'
  | 'LEDGER_CONFLICT'
  | 'LEDGER_NOT_EMPTY'
  | 'LEDGER_UNFINISHED_COPY'
  | 'LEDGER_COPY_MISMATCH'
  | 'LEDGER_RESUME_MISMATCH'
  | 'LEDGER_BAD_TARGET'
  | 'LEDGER_BAD_ARGUMENT'
  | 'LEDGER_NOT_A_FILE'
  | 'LEDGER_NOT_A_LEDGER'
  | 'LEDGER_OLD_FORMAT'
  | 'LEDGER_BUILD_FAILED';

/** The runbook's anchors that errors point to (`docs/runbook.md#<anchor>`). */
export type RunbookAnchor =
  | 'honcho-ledger-damaged'
  | 'ledger-unwritable'
  | 'ledger-unreadable'
  | 'ledger-not-a-file'
  | 'ledger-not-a-ledger'
  | 'ledger-replaced'
  | 'ledger-locked'
  | 'ledger-index-behind'
  | 'ledger-went-back'
  | 'ledger-unfinished-copy'
  | 'level-folder-damaged'
  | 'level-format-upgrade'
  | 'index-build-failed'
  | 'postgres-server'
  | 'postgres-pre-release-schema';

/** memoryd's pointer for a damaged ledger, as its errors print it. */
export const RUNBOOK = 'see docs/runbook.md#honcho-ledger-damaged';

/** `see docs/runbook.md#<anchor>`. */
export function runbookPointer(anchor: RunbookAnchor): string {
  return `see docs/runbook.md#${anchor}`;
}

/** The base of every error ledgerstore throws on purpose. */
export abstract class LedgerError extends Error {
  abstract readonly code: LedgerErrorCode;
  /** The runbook entry for an operator, when there is something to do by hand. */
  readonly runbook: RunbookAnchor | undefined = undefined;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // once, for every class: a stack trace and `String(e)` name the class that was thrown
    this.name = new.target.name;
  }

  /** The message with its runbook pointer, once: what a command-line tool prints. */
  get report(): string {
    if (this.runbook === undefined) return this.message;
    const pointer = runbookPointer(this.runbook);
    return this.message.includes(pointer) ? this.message : `${this.message}; ${pointer}`;
  }
}

/** Every code of {@link LedgerErrorCode}, at run time: the compiler holds it to the union. */
const CODES: ReadonlySet<string> = new Set(
  Object.keys({
    LEDGER_IO: true,
    LEDGER_DAMAGED: true,
    LEDGER_INVALID_RECORD: true,
    LEDGER_DECODE: true,
    LEDGER_ALREADY_DECIDED: true,
    LEDGER_NOT_WAITING: true,
    LEDGER_LOCKED: true,
    LEDGER_CLOSED: true,
    LEDGER_READ_ONLY: true,
    LEDGER_STOPPED: true,
    LEDGER_CONFLICT: true,
    LEDGER_NOT_EMPTY: true,
    LEDGER_COPY_MISMATCH: true,
    LEDGER_RESUME_MISMATCH: true,
    LEDGER_BAD_TARGET: true,
    LEDGER_BAD_ARGUMENT: true,
    LEDGER_NOT_A_FILE: true,
    LEDGER_NOT_A_LEDGER: true,
    LEDGER_UNFINISHED_COPY: true,
    LEDGER_OLD_FORMAT: true,
    LEDGER_BUILD_FAILED: true,
  } satisfies { readonly [code in LedgerErrorCode]: true }),
);

/**
 * Whether `error` is a ledgerstore error, optionally of the given code: a {@link LedgerError},
 * or an `Error` whose `code` is one of {@link LedgerErrorCode}'s, so that an error of another
 * copy of ledgerstore (a backend in another package that brought its own) is one too, as
 * `instanceof` alone would not say.
 */
export function isLedgerError(error: unknown, code?: LedgerErrorCode): error is LedgerError {
  if (!(error instanceof Error)) return false;
  const its = (error as { code?: unknown }).code;
  if (typeof its !== 'string' || !CODES.has(its)) return false;
  return code === undefined || its === code;
}

/**
 * A record refused for what it says: it breaks a rule, or it is not a valid record. On `append`
 * the record is refused and nothing is written; met while reading a log through, it is damage.
 */
export abstract class RecordRefusedError extends LedgerError {}

/**
 * A record refused while a log is read through is damage at its line (a JSONL line, a LevelDB
 * record, counted from 1); any other error passes through as it is.
 */
export function asDamage(name: string, line: number, error: unknown): unknown {
  return error instanceof RecordRefusedError ? new DamagedError(name, line, error.message, { cause: error }) : error;
}

/**
 * What a failed system call was for: reading the ledger (opening it to read, `read`, `fstat`), or
 * writing it (opening it to write, creating, writing, syncing, cutting, locking). The two have
 * different fixes, so different runbook entries.
 */
export type IoDirection = 'read' | 'write';

/** The file system failed: `<path>: <what the system said>`. Nothing was appended. */
export class LedgerIoError extends LedgerError {
  readonly code = 'LEDGER_IO';
  override readonly runbook: RunbookAnchor;
  /** The system's error code (`ENOENT`, `ENOSPC`, ...), when there is one. */
  readonly errno: string | undefined;
  /** @param during what the failed call was for (`write` unless said) */
  constructor(
    readonly path: string,
    cause: unknown,
    readonly during: IoDirection = 'write',
  ) {
    super(`${path}: ${describeSystemError(cause)}`, { cause });
    this.errno = systemErrorName(cause);
    this.runbook = during === 'read' ? 'ledger-unreadable' : 'ledger-unwritable';
  }
}

/**
 * Something other than a regular file at a JSONL ledger's path (a directory, a FIFO, a socket, a
 * device): refused before anything is read from it or written to it.
 */
export class NotAFileError extends LedgerError {
  readonly code = 'LEDGER_NOT_A_FILE';
  override readonly runbook = 'ledger-not-a-file';
  /** @param what what is there, as a message says it (`a named pipe (FIFO)`) */
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(
      `${path}: is ${what}, not a regular file; a JSONL ledger is a regular file: name the ledger's file, or move this away`,
    );
  }
}

/**
 * A log that does not read through: a line that does not parse, or that breaks a rule when
 * replayed in order. The log is left exactly as it was.
 */
export class DamagedError extends LedgerError {
  // typed wide for NotALedgerError, the damage that says the file is no ledger at all
  readonly code: 'LEDGER_DAMAGED' | 'LEDGER_NOT_A_LEDGER' = 'LEDGER_DAMAGED';
  override readonly runbook: RunbookAnchor = 'honcho-ledger-damaged';
  /**
   * @param path the log's path (or name)
   * @param line the damaged line (or record), counted from 1
   * @param why what is wrong with it
   */
  constructor(
    readonly path: string,
    readonly line: number,
    readonly why: string,
    options?: ErrorOptions,
  ) {
    super(`${path}:${line}: ${why}; ${RUNBOOK}`, options);
  }
}

/** How much of a JSONL file's start is looked at to tell a file that is no ledger from a damaged one. */
export const NOT_A_LEDGER_SAMPLE = 64 * 1024;

/**
 * A file at a JSONL ledger's path that is no ledger at all (a README, a settings file, a binary
 * file): its first line is not a record, it does not begin as a record's line does, and no line
 * of its first {@link NOT_A_LEDGER_SAMPLE} bytes is a record. It is damage at line 1 too (an
 * instance of {@link DamagedError}, with its `line` and `why`), under a code and a runbook entry
 * of its own: the fix is another path, not a restore. Nothing was changed.
 */
export class NotALedgerError extends DamagedError {
  override readonly code = 'LEDGER_NOT_A_LEDGER';
  override readonly runbook = 'ledger-not-a-ledger';
  /** @param why why its first line is not a record */
  constructor(path: string, why: string, options?: ErrorOptions) {
    super(path, 1, why, options);
    // DamagedError's message is memoryd's damage line; this one says what the file is, and so
    // does the stack, which V8 began with the message given to the base
    this.message = `${path}: not a ledger: no line of its first ${NOT_A_LEDGER_SAMPLE / 1024} KiB is a record (line 1: ${why}); a JSONL ledger holds one record a line, as memoryd writes them: name the ledger's file, or move this away`;
    Error.captureStackTrace(this, new.target);
  }
}

/** A record that is not valid (a bad value, a string that cannot be written as UTF-8, ...). */
export class InvalidRecordError extends RecordRefusedError {
  readonly code = 'LEDGER_INVALID_RECORD';
  constructor(readonly why: string) {
    super(`a ledger record could not be encoded: ${why}`);
  }
}

/** A line that does not decode to a record; `why` is serde_json's verdict in serde_json's words. */
export class DecodeError extends RecordRefusedError {
  readonly code = 'LEDGER_DECODE';
  constructor(readonly why: string) {
    super(why);
  }
}

/**
 * What holds a lock: a log's writer (`writer`: a JSONL file, a database the caller made; readers
 * go beside it), or LevelDB, which locks its folder for any open, readers too (`level` for a
 * LevelDB ledger, `index` for a read model).
 */
export type LockHolder = 'writer' | 'level' | 'index';

/** Another writer holds the log (or another open holds a LevelDB folder): another process, or another open in this one. */
export class LockedError extends LedgerError {
  readonly code = 'LEDGER_LOCKED';
  override readonly runbook = 'ledger-locked';
  constructor(
    readonly path: string,
    options?: ErrorOptions & { readonly holder?: LockHolder },
  ) {
    const holder = options?.holder ?? 'writer';
    // A LevelDB folder cannot be read beside its holder: the message must not say that only
    // writers are kept out, or an operator tries a read-only command and is refused again.
    super(
      holder === 'writer'
        ? `${path}: the ledger is open for writing elsewhere (another process, or another open in this one); only one writer at a time`
        : `${path}: the ${holder === 'index' ? 'index' : 'LevelDB ledger'} is open elsewhere (another process, or another open in this one); LevelDB allows one open at a time, even to read`,
      options,
    );
  }
}

/** The log was closed. */
export class ClosedError extends LedgerError {
  readonly code = 'LEDGER_CLOSED';
  constructor(readonly path: string) {
    super(`${path}: the ledger is closed`);
  }
}

/** An append to a log opened read-only. */
export class ReadOnlyError extends LedgerError {
  readonly code = 'LEDGER_READ_ONLY';
  constructor(readonly path: string) {
    super(`${path}: the ledger was opened read-only; open it for writing to append`);
  }
}

/**
 * An earlier write failed in a way that leaves the log's end uncertain (a failed `fdatasync`, or a
 * failed write that could not be cut back): every later append is refused until the log is
 * reopened, which reads the file again and keeps only what is whole. A reader stops the same way
 * when its sync of the lines another writer appended fails: what it would take in next may not
 * be on the disk, and a sync tried again could report success for bytes that are gone.
 */
export class StoppedError extends LedgerError {
  readonly code = 'LEDGER_STOPPED';
  override readonly runbook: RunbookAnchor;
  /** @param holder a `writer` (its write or sync failed) or a `reader` following the file (its sync of others' lines failed) */
  constructor(
    readonly path: string,
    readonly failure: Error,
    holder: 'writer' | 'reader' = 'writer',
  ) {
    super(
      holder === 'writer'
        ? `${path}: an earlier write failed (${failure.message}); every append is refused until the ledger is reopened`
        : `${path}: the sync of lines another writer appended failed (${failure.message}); nothing more is taken in until the ledger is reopened, which reads the file again`,
      { cause: failure },
    );
    this.runbook = holder === 'writer' ? 'ledger-unwritable' : 'ledger-unreadable';
  }
}

/**
 * The file a JSONL writer holds is no longer the one at the ledger's path: another file was put
 * there (`sed -i`, an editor and `mv` write a new file and rename it over the old), or it was
 * removed or moved away. The writer's lock is the file's, not the name's, so it would go on
 * appending to a file no reader opens, beside another writer let in on the new one. It noticed
 * before acknowledging an append: that append is refused (its lines cut back from the old file;
 * an edit that read the file after they were written has copied them, as a crash may leave an
 * unacknowledged append whole) and so is every later one, until the ledger is reopened, which
 * reads the file at the path.
 * Same code as {@link StoppedError}: to a caller, the ledger has stopped.
 */
export class FileReplacedError extends LedgerError {
  readonly code = 'LEDGER_STOPPED';
  override readonly runbook = 'ledger-replaced';
  /**
   * @param how `replaced`: another file is at the path; `removed`: nothing is (removed, or moved away)
   * @param holder a `writer` (it stopped appending) or a `reader` following the file (it stopped taking in lines)
   */
  constructor(
    readonly path: string,
    readonly how: 'replaced' | 'removed',
    holder: 'writer' | 'reader' = 'writer',
  ) {
    super(
      `${path}: the file this ${holder === 'writer' ? 'writer holds' : 'reader follows'} is no longer at the path (${how === 'replaced' ? 'another file was put there: sed -i, an editor, mv' : 'it was removed, or moved away'}); ` +
        (holder === 'writer'
          ? 'every append is refused until the ledger is reopened, which reads the file at the path; stop every writer before editing a ledger'
          : 'nothing more is taken in until the ledger is reopened, which reads the file at the path'),
    );
  }
}

/**
 * The read model could not take in records the log made durable (its LevelDB write failed): the
 * records are appended, but the state that checks the rules is behind the log, so every later
 * append is refused until a reopen catches the read model up. Same code as {@link StoppedError}:
 * to a caller, the ledger has stopped.
 */
export class IndexBehindError extends LedgerError {
  readonly code = 'LEDGER_STOPPED';
  override readonly runbook = 'ledger-index-behind';
  constructor(
    readonly path: string,
    readonly failure: Error,
  ) {
    super(
      `${path}: the read model could not take in records the log holds (${failure.message}); they are appended, but every later append is refused until the ledger is reopened, which catches the read model up`,
      { cause: failure },
    );
  }
}

/**
 * The store holds fewer records than a log object had read or appended: records it held are
 * gone (a failover to a standby that had not received them; a file cut short, or put back from
 * a backup). Whatever was built on them (a ledger's state, a follower's output) is ahead of the
 * log, so the log stops: every later append is refused until it is reopened, and an operator
 * finds out what was lost first. Same code as {@link StoppedError}: to a caller, the log has
 * stopped.
 */
export class LogWentBackError extends LedgerError {
  readonly code = 'LEDGER_STOPPED';
  override readonly runbook = 'ledger-went-back';
  /**
   * @param known the head this log had reached
   * @param found what the store holds now (`it holds 5 records`)
   */
  constructor(
    readonly path: string,
    readonly known: number,
    found: string,
  ) {
    super(
      `${path}: the log went back: ${found}, while this log had read or appended ${known}; records it held are gone (a failover to a standby that had not received them, a file cut short or put back from a backup), and every append is refused until the ledger is reopened`,
    );
  }
}

/** An append that expected the log's head at one position found it at another. */
export class ConflictError extends LedgerError {
  readonly code = 'LEDGER_CONFLICT';
  constructor(
    readonly path: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(
      `${path}: expected the log's head at ${expected}, but it is at ${actual}; read what was appended and try again`,
    );
  }
}

/**
 * A copy's destination that already holds records, or something else: a copy never writes over
 * a ledger. (A destination, not a target: a target is where a ledger is, `target.ts`.)
 */
export class DestinationNotEmptyError extends LedgerError {
  readonly code = 'LEDGER_NOT_EMPTY';
  /** @param records how many it holds, or `null` for something there that is not an empty ledger */
  constructor(
    readonly destination: string,
    readonly records: number | null,
  ) {
    const what =
      records === null
        ? 'exists already and is not an empty ledger'
        : `holds ${records} record${records === 1 ? '' : 's'} already`;
    super(`${destination}: ${what}; a copy goes only to an empty ledger`);
  }
}

/** @deprecated the name {@link DestinationNotEmptyError} had before 0.2: a copy's destination is not a target */
export const TargetNotEmptyError = DestinationNotEmptyError;
/** @deprecated see the value of the same name */
export type TargetNotEmptyError = DestinationNotEmptyError;

/**
 * A target for a new ledger (`ledgerstore gen`) that is there already: a file that exists, or a
 * ledger that holds records. Nothing was written to it.
 */
export class LedgerExistsError extends LedgerError {
  readonly code = 'LEDGER_NOT_EMPTY';
  /** @param records how many it holds, or `null` for a file that exists (whatever it holds) */
  constructor(
    readonly target: string,
    readonly records: number | null,
    options?: ErrorOptions,
  ) {
    const what = records === null ? 'exists already' : `holds ${records} record${records === 1 ? '' : 's'} already`;
    super(`${target}: ${what}; gen writes only a new file or an empty ledger, never over an existing one`, options);
  }
}

/**
 * A log that a copy or gen into it did not finish (stopped, killed, its server lost): it is
 * marked unfinished from before its first record is written until its last is (and, for a copy,
 * checked), so it holds part of a ledger at most. Every open refuses it: it is never read as a
 * ledger. `ledgerstore drop <target> --yes` removes it; then the copy can run again.
 */
export class UnfinishedCopyError extends LedgerError {
  readonly code = 'LEDGER_UNFINISHED_COPY';
  override readonly runbook = 'ledger-unfinished-copy';
  /**
   * @param path the log's name (a target with no password in it)
   * @param by what was filling it: `copy` or `gen`
   * @param records how many records it holds
   */
  constructor(
    readonly path: string,
    readonly by: string,
    readonly records: number,
  ) {
    super(
      `${path}: an unfinished copy: a ledgerstore ${by} into this log did not finish (stopped, killed, or its server lost), ` +
        `and the ${records} record${records === 1 ? '' : 's'} it holds are not a whole ledger, so it is not read as one; ` +
        `remove it with ledgerstore drop ${path} --yes, then run the ${by} again`,
    );
  }
}

/** A copy whose destination does not read back as its source: what differs, and where. */
export class CopyMismatchError extends LedgerError {
  readonly code = 'LEDGER_COPY_MISMATCH';
  constructor(
    readonly destination: string,
    why: string,
  ) {
    super(`${destination}: the copy does not read back as its source: ${why}; remove the target before copying again`);
  }
}

/**
 * An open asked to resume at a point the log does not hold any more: the log is shorter, or holds
 * another record before the point. Nothing was changed; read the log through from the start.
 */
export class ResumeMismatchError extends LedgerError {
  readonly code = 'LEDGER_RESUME_MISMATCH';
  constructor(
    readonly path: string,
    readonly position: number,
    why: string,
  ) {
    super(`${path}: cannot resume at record ${position}: ${why}`);
  }
}

/**
 * A LevelDB folder (a `level:` ledger's, or a read model's) whose files are damaged: a file
 * missing, cut or changed, a write-ahead log with a hole. Seen before LevelDB opens the folder,
 * so that nothing in it is changed; `file` is the file where, `null` when it is the folder.
 */
export class LevelFolderDamagedError extends LedgerError {
  readonly code = 'LEDGER_DAMAGED';
  override readonly runbook = 'level-folder-damaged';
  constructor(
    readonly folder: string,
    readonly file: string | null,
    readonly why: string,
    options?: ErrorOptions,
  ) {
    super(
      `${file === null ? folder : `${folder}/${file}`}: ${why}; the folder was left as it is; ${runbookPointer('level-folder-damaged')}`,
      options,
    );
  }
}

/**
 * A folder given for a LevelDB ledger or a read model that holds something else: files that are
 * not a LevelDB database's (the folder of a JSONL ledger, say), or a database of the other kind
 * (a read model given as a ledger, a ledger given as a read model). Nothing in it was changed.
 */
export class ForeignFolderError extends LedgerError {
  readonly code = 'LEDGER_BAD_TARGET';
  override readonly runbook = 'level-folder-damaged';
  constructor(
    readonly folder: string,
    readonly why: string,
  ) {
    super(
      `${folder}: ${why}; a LevelDB ledger and a read model each need a folder of their own (a missing or empty one to start in); nothing was changed; ${runbookPointer('level-folder-damaged')}`,
    );
  }
}

/**
 * A call given an argument it cannot take: an item that is not one (`{ type: 'turn' }` with no
 * session, `null`), a workspace that is none, an option of the wrong type (`index: 5`,
 * `readOnly: 'yes'`). Refused before anything is read or changed: a bug in the caller, told
 * with a stable code rather than as whatever a deeper call would have thrown.
 */
export class BadArgumentError extends LedgerError {
  readonly code = 'LEDGER_BAD_ARGUMENT';
  /**
   * @param call the call refused (`isDecided`, `Ledger.open`)
   * @param argument the argument, by name (`item`, `options.index`)
   * @param why what is wrong with it, a sentence that starts with the argument's name
   */
  constructor(
    readonly call: string,
    readonly argument: string,
    readonly why: string,
  ) {
    super(`${call}: ${why}`);
  }
}

/**
 * A LevelDB ledger written in an earlier version of the format: this ledgerstore reads it, but
 * appends only in its own version. Copying the ledger to a new folder writes it in that version.
 */
export class OldFormatError extends LedgerError {
  readonly code = 'LEDGER_OLD_FORMAT';
  override readonly runbook = 'level-format-upgrade';
  constructor(
    readonly path: string,
    readonly version: number,
    readonly current: number,
  ) {
    super(
      `${path}: the LevelDB ledger is in version ${version} of the format, which this ledgerstore reads but does not append to (it writes version ${current}); ` +
        `copy it to a new folder (ledgerstore copy level:${path} level:<new folder>) and use the copy; ${runbookPointer('level-format-upgrade')}`,
    );
  }
}

/**
 * The read model turned out damaged while in use (a row that does not match its checksum, a
 * LevelDB corruption): nothing more is checked against it. The append or query that found it,
 * and every later one, is refused until the ledger is reopened, which rebuilds the read model
 * from the log. Same code as {@link StoppedError}: to a caller, the ledger has stopped.
 */
export class IndexDamagedError extends LedgerError {
  readonly code = 'LEDGER_STOPPED';
  override readonly runbook = 'level-folder-damaged';
  constructor(
    readonly folder: string,
    readonly why: string,
    options?: ErrorOptions,
  ) {
    super(
      `${folder}: the read model is damaged (${why}); every append and query through it is refused until the ledger is reopened, which rebuilds it from the log`,
      options,
    );
  }
}

/**
 * A build of the read model in the background did not finish, for a reason of the build's own:
 * its thread ended without a word (out of memory, a projection's module that ends it), or the
 * log it read held fewer records than it was started to build (the log went back meanwhile).
 * Nothing it built is used: the queries are answered as before, and the next open builds it
 * again. (A build that fails to write its rows is a {@link LedgerIoError}; one that finds the
 * log damaged, a {@link DamagedError}.)
 */
export class BuildFailedError extends LedgerError {
  readonly code = 'LEDGER_BUILD_FAILED';
  override readonly runbook = 'index-build-failed';
  constructor(
    readonly folder: string,
    readonly why: string,
  ) {
    super(
      `${folder}: the read model's build in the background did not finish (${why}); nothing it built is used, and the next open builds it again`,
    );
  }
}
