/**
 * A target string that names no ledger. It lives with the other errors, not with the parser of
 * targets (`../target.ts`), so that every backend's own parser (PostgreSQL's URIs) can throw it
 * without importing the module that picks the backends.
 *
 * @module
 */
import { printableTarget } from '../printable.js';
import { LedgerError } from './base.js';

/**
 * A target string that names no ledger: an empty path, or a scheme with nothing after it. Its
 * message and its `target` hold the target's printable name (`printable.ts`): no password.
 */
export class TargetError extends LedgerError {
  readonly code = 'LEDGER_BAD_TARGET';
  /** The target, its password left out. */
  readonly target: string;
  constructor(target: string, why: string) {
    const shown = printableTarget(target);
    super(
      `${JSON.stringify(shown)}: ${why}; a ledger is a path, jsonl:<path>, level:<folder>, memory: or postgres://<user>@<host>/<db>?log=<name>`,
    );
    this.target = shown;
  }
}
