/**
 * LevelDB folders (a `level:` ledger's, a read model's): damaged, foreign, in an older format, or a build of the read model that did not finish.
 *
 * @module
 */
import { LedgerError, runbookPointer } from './base.js';

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
