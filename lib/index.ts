/**
 * ledgerstore: an event-sourced storage engine for memoryd's Honcho ledger.
 *
 * - The event-log contract that every backend implements: `log.ts`.
 * - The errors, with their stable codes: `errors.ts`.
 * - The Honcho ledger: its records (`honcho/record.ts`), line format (`honcho/codec.ts`), rules
 *   (`honcho/rules.ts`), state (`honcho/projection.ts`) and the {@link Ledger} itself.
 *
 * @example
 * ```ts
 * import { Ledger } from 'ledgerstore';
 * const ledger = await Ledger.open('honcho.jsonl'); // memoryd's: <home>/memory/honcho.jsonl
 * await ledger.append({ type: 'decided', time: '2026-09-28T10:00:00.000Z',
 *   item: { type: 'turn', session: 'chat-1', turn: 3 },
 *   action: { type: 'turn', workspace: 'trusted', speaker: 'kyle' } });
 * console.log(await ledger.outbox()); // [ { item: { type: 'turn', ... }, action: { type: 'turn', ... } } ]
 * await ledger.close();
 * ```
 *
 * Every ledger and log is `AsyncDisposable`: `await using ledger = await Ledger.open(...)` closes
 * it as the scope ends. Every call on a closed one is refused with `LEDGER_CLOSED`, and an
 * argument a call cannot take with `LEDGER_BAD_ARGUMENT` (`BadArgumentError`, naming it).
 *
 * @module
 */

export {
  type AppendDelay,
  type AppendFault,
  type FaultKind,
  type FaultPlan,
  type FaultStats,
  type FaultTiming,
  type FaultyBackend,
  faultyBackend,
  InjectedFault,
  injectedFault,
  type RandomDelay,
  type RandomFaults,
} from '../backends/faults.js';
export { type JsonlOptions, jsonlBackend } from '../backends/jsonl.js';
export { type LevelOptions, levelBackend } from '../backends/level/index.js';
export { type MemoryOptions, memoryBackend } from '../backends/memory.js';
export { type Copied, copyLedger } from './copy.js';
export * from './errors.js';
export { assertExpectedHead, headMatches } from './expected-head.js';
export { type Fd, type FileIO, type FileKind, type FileStatus, nodeFileIO } from './file-io.js';
export { fingerprintOf } from './fingerprint.js';
export {
  decodeItemText,
  decodeRecord,
  decodeRecordText,
  encodeRecord,
  honchoCodec,
  normalizeItem,
  normalizeRecord,
} from './honcho/codec.js';
export * from './honcho/errors.js';
export type {
  Conclusion,
  Decision,
  HonchoLedger,
  IndexDatabase,
  LedgerOptions,
  LogEntry,
  OutboxCursor,
  OutboxPage,
} from './honcho/ledger.js';
export { type CountQueries, countsProjection } from './honcho/read-model/counts.js';
export { type ItemQueries, itemsProjection } from './honcho/read-model/items.js';
export { type OutboxQueries, outboxProjection } from './honcho/read-model/outbox.js';
export { type StackQueries, stacksProjection } from './honcho/read-model/stacks.js';
export { HONCHO_PROJECTIONS } from './honcho/read-model/state.js';
export * from './honcho/record.js';
export { type ItemState, refusal, stateAfter } from './honcho/rules.js';
export { Ledger } from './ledger.js';
export { LevelDbVersionError } from './leveldb/version.js';
export type * from './log.js';
export { CheckedRecord, checkedEncoder, lineTooLong, MAX_LINE_BYTES } from './log.js';
export { type Batches, LogBase, type LogSpec, StoredLog } from './log-base.js';
export type {
  Loadable,
  ProjectionDefinition,
  ProjectionProgress,
  RangeOptions,
  RowReader,
  Rows,
} from './projections/definition.js';
export { BACKGROUND_FROM, ProjectionSet, type ProjectionSetOptions } from './projections/set.js';
export { describeSystemError, systemErrorName } from './system-errors.js';
export { backendFor, SCHEMES, type Target, TargetError } from './target.js';
export { type AnswerDigests, answerDigests, differences } from './verify.js';
