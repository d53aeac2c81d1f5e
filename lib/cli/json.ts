/**
 * The pieces of the `--json` forms that more than one command writes: JSON for programs, with
 * keys in a fixed order, where the words for people are `describe.ts`'s.
 *
 * @module
 */
import { LedgerError } from '../errors.js';
import type { Counts } from '../honcho/record.js';
import { printableTarget } from '../printable.js';
import { describeSystemError } from '../system-errors.js';
import type { Output } from './output.js';

/** `{"decided":7,"sent":2,"waiting":3,"failed":1,"skipped":1}`, in that order. */
export function countsJson(c: Counts): string {
  return `{"decided":${c.decided},"sent":${c.sent},"waiting":${c.waiting},"failed":${c.failed},"skipped":${c.skipped}}`;
}

/** `{"code":"LEDGER_DAMAGED","message":"..."}`: an error's stable code and its words. */
export function errorJson(error: LedgerError): string {
  return `{"code":${JSON.stringify(error.code)},"message":${JSON.stringify(error.message)}}`;
}

/** Seconds as JSON, to the millisecond. */
export function secondsJson(seconds: number): string {
  return String(Math.round(seconds * 1000) / 1000);
}

/**
 * What every command given `--json` writes on stdout when it fails (exit 1), after what it wrote
 * before: one object, `{"ledger":"honcho.jsonl","ok":false,"error":{"code":"LEDGER_DAMAGED",
 * "message":"..."}}`, with "ledger" when the command names one, and a `code` of `null` for a
 * failure that is not a ledger error (a system call's, a bug's). stderr says it too.
 */
export function failureJson(error: unknown, ledger: string | undefined): string {
  const body =
    error instanceof LedgerError
      ? errorJson(error)
      : `{"code":null,"message":${JSON.stringify(
          error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string'
            ? describeSystemError(error)
            : error instanceof Error
              ? error.message
              : String(error),
        )}}`;
  return `{${ledger === undefined ? '' : `"ledger":${JSON.stringify(printableTarget(ledger))},`}"ok":false,"error":${body}}`;
}

/**
 * Writes {@link failureJson} on `out` and flushes it; a stdout that is closed is let be (the
 * failure is the one to report, on stderr).
 */
export async function writeFailureJson(out: Output, error: unknown, ledger: string | undefined): Promise<void> {
  out.line(failureJson(error, ledger));
  await out.flush().catch(() => undefined);
}
