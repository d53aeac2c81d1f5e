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
 * @module
 */
export * from './errors.js';
export * from './honcho/errors.js';
export { describeSystemError, systemErrorName } from './system-errors.js';
export type * from './log.js';
export { MAX_LINE_BYTES, checkedEncoder, lineTooLong } from './log.js';
export { assertExpectedHead, headMatches } from './expected-head.js';
export { type Batches, LogBase, type LogSpec, StoredLog } from './log-base.js';
export { fingerprintOf } from './fingerprint.js';
export * from './honcho/record.js';
export { decodeItemText, decodeRecord, decodeRecordText, encodeRecord, honchoCodec, normalizeItem, normalizeRecord } from './honcho/codec.js';
export { type ItemState, refusal, stateAfter } from './honcho/rules.js';
export { Ledger } from './ledger.js';
export type { IndexDatabase } from './honcho/read-model/read-model.js';
export type { HonchoLedger, LedgerOptions, Conclusion, Decision, LogEntry, OutboxCursor, OutboxPage } from './honcho/ledger.js';
export { type AnswerDigests, answerDigests, differences } from './verify.js';
export { SCHEMES, type Target, TargetError, backendFor } from './target.js';
export { type Copied, copyLedger } from './copy.js';
export { jsonlBackend, type JsonlOptions } from '../backends/jsonl.js';
export { type FileIO, type Fd, type FileKind, type FileStatus, nodeFileIO } from '../backends/file-io.js';
export { levelBackend, type LevelOptions } from '../backends/level.js';
export { memoryBackend, type MemoryOptions } from '../backends/memory.js';
export {
  type AppendDelay,
  type AppendFault,
  type FaultKind,
  type FaultPlan,
  type FaultStats,
  type FaultTiming,
  type FaultyBackend,
  InjectedFault,
  type RandomDelay,
  type RandomFaults,
  faultyBackend,
  injectedFault,
} from '../backends/faults.js';
