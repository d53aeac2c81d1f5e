/**
 * Records refused and logs damaged: a record that breaks no rule but is not one, a line that does not decode, a log that does not read through.
 *
 * @module
 */
import { LedgerError, RUNBOOK, type RunbookAnchor } from './base.js';

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
