/**
 * Every error ledgerstore throws on purpose is a {@link LedgerError}: it has a stable `code` that
 * programs can branch on, a message that says what failed and where, and, where an operator has
 * something to do, the runbook entry that says what (`runbook`).
 *
 * This module exports them all; they are written by family in `errors/`: the base and the codes
 * (`base.ts`), records and damage, I/O, a log's state, copies, LevelDB folders, target strings.
 * The Honcho rules' errors live with the rules (`honcho/errors.ts`), under a code of this list.
 *
 * The texts of the Honcho ledger's errors are memoryd's, word for word (spec 000, "The errors'
 * text"), so that an operator sees the same line whichever engine wrote the ledger.
 *
 * @module
 */
export * from './errors/base.js';
export * from './errors/copies.js';
export * from './errors/folders.js';
export * from './errors/io.js';
export * from './errors/records.js';
export * from './errors/state.js';
export * from './errors/targets.js';
