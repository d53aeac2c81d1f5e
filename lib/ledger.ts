/**
 * The public `Ledger`: the Honcho ledger (`honcho/ledger.ts`), opened at a target string as well
 * as on a backend. The domain takes a backend and knows none; resolving a string to one is
 * `target.ts`'s, the one file that knows every backend, and this class, above both, joins them
 * so that `Ledger.open('honcho.jsonl')` stays what the README shows. A subclass rather than a
 * second function, so that there is one class to open and to type a ledger with.
 *
 * @module
 */
import * as path from 'node:path';
import { HonchoLedger, type LedgerOptions } from './honcho/ledger.js';
import { checkLedgerOptions } from './honcho/options.js';
import type { Loadable } from './projections/definition.js';
import { backendFor, jsonlPathOf, type Target } from './target.js';

/** An open Honcho ledger. */
export class Ledger extends HonchoLedger {
  /**
   * Opens the ledger at `target` and reads it through: a JSONL file's path (memoryd's default),
   * a URI (`jsonl:<path>`, `level:<folder>`, `memory:`, `postgres://...`; see `target.ts`), or a
   * backend.
   * @throws `TargetError` when the string names no ledger
   * @throws `DamagedError` when a line does not parse or breaks a rule (the log is unchanged)
   * @throws `LedgerIoError` when the file cannot be read
   * @throws `LockedError` when another writer has it open (or another process the read model)
   * @throws `BadArgumentError` (LEDGER_BAD_ARGUMENT) when `options` is no object, holds a key that is no option (`readonly` for `readOnly`), or an option of the wrong type (`index: 5`)
   */
  static override async open(target: Target, options: LedgerOptions = {}): Promise<Ledger> {
    checkLedgerOptions('Ledger.open', options);
    const worker = options.worker ?? workerFor(target);
    return super.open(backendFor(target), worker === undefined ? options : { ...options, worker });
  }
}

/**
 * How a worker thread opens the ledger at `target` by itself, to build a read model there: for a
 * JSONL file, which a reader may read beside its writer; `undefined` for others (a LevelDB folder
 * admits one open, a log in memory is this thread's).
 */
function workerFor(target: Target): Loadable | undefined {
  if (typeof target !== 'string') return undefined;
  const file = jsonlPathOf(target);
  if (file === null) return undefined;
  return {
    module: new URL('./target.js', import.meta.url).href,
    export: 'backendFor',
    args: [`jsonl:${path.resolve(file)}`],
  };
}
