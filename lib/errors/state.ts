/**
 * A log or ledger in a state that refuses the call: locked, closed, read-only, stopped, behind, gone back, moved on; or a call given an argument it cannot take.
 *
 * @module
 */
import { LedgerError, type RunbookAnchor } from './base.js';

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
