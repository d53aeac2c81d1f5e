/**
 * Copies and new ledgers: a destination that is not empty, a copy that did not finish or does not read back, a resume point the log does not hold.
 *
 * @module
 */
import { LedgerError } from './base.js';

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
