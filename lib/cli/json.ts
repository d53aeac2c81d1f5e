/**
 * The pieces of the `--json` forms that more than one command writes: JSON for programs, with
 * keys in a fixed order, where the words for people are `describe.ts`'s.
 *
 * @module
 */
import type { LedgerError } from '../errors.js';
import type { Counts } from '../honcho/record.js';

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
