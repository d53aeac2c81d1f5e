/**
 * Every error ledgerstore throws on purpose is a {@link LedgerError}: it has a stable `code` that
 * programs can branch on, a message that says what failed and where, and, where an operator has
 * something to do, the runbook entry that says what (`runbook`).
 *
 * Here: the base and the one list of codes. The errors themselves are in the files beside this
 * one, by family, and `../errors.ts` exports them all; the Honcho rules' errors live with the
 * rules (`honcho/errors.ts`), under a code of this list. How a system error is put in words is
 * `system-errors.ts`.
 *
 * The texts of the Honcho ledger's errors are memoryd's, word for word (spec 000, "The errors'
 * text"), so that an operator sees the same line whichever engine wrote the ledger.
 *
 * @module
 */

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
