/**
 * The file system failed, or what is at a ledger's path is not what it must be.
 *
 * @module
 */

import { describeSystemError, systemErrorName } from '../system-errors.js';
import { LedgerError, type RunbookAnchor } from './base.js';

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
