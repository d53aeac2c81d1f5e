/**
 * The conformance suite: the promises of `lib/log.ts`, and the Honcho ledger's answers, that
 * every backend must keep, for any test runner, shipped as `ledgerstore/conformance` so that a
 * backend in another package runs it with one call (as abstract-level's suite is run by
 * classic-level and memory-level):
 *
 * ```ts
 * import { test } from 'node:test';
 * import { suite } from 'ledgerstore/conformance';
 * suite({ test, name: 'mine', factory: () => ({ backend: myBackend(fresh()), cleanup: () => {} }) });
 * ```
 *
 * One file per promise, each registering its tests; the groups that hold only where a
 * capability says so (`backend.capabilities`) are registered only there, never skipped inside a
 * test. Every backend reopens: a backend object opened again gives the same log.
 *
 * @module
 */
import { batchTests, failedBatchTests } from './batches.js';
import { callOrderTests } from './call-order.js';
import { checkedTests } from './checked.js';
import { common, type LedgerSuiteOptions, run, type Subject, type SuiteOptions } from './common.js';
import { durableTests } from './durable.js';
import { guardTests } from './guards.js';
import { ledgerTests } from './ledger.js';
import { ledgerEdgeTests } from './ledger-edges.js';
import { ledgerWriterTests } from './ledger-writers.js';
import { othersTests } from './others.js';
import { readThroughTests } from './read-through.js';
import { resumeTests } from './resume.js';
import { closedTrait } from './traits/closed.js';
import { writerTests } from './writers.js';

export type { LedgerSuiteOptions, Subject, SuiteOptions, Test } from './common.js';

/** Registers the whole suite for one backend: the log's promises, then the ledger's. */
export function suite<S extends Subject>(options: SuiteOptions<S>): void {
  const backend = common(options);
  readThroughTests(backend);
  batchTests(backend);
  failedBatchTests(backend);
  callOrderTests(backend);
  guardTests(backend);
  checkedTests(backend);
  resumeTests(backend);
  writerTests(backend);
  othersTests(backend);
  durableTests(backend);
  closedTrait(backend);
  ledgerTests(backend);
  ledgerEdgeTests(backend);
  ledgerWriterTests(backend, backend.capabilities);
}

/**
 * Registers the suite's part about the Honcho ledger alone, with ledger options (a read model,
 * say), on a backend that passes the whole suite; given the backend's capabilities, its tests of
 * several writers and watches too.
 */
export function ledgerSuite<S extends Subject>({ options, capabilities, ...rest }: LedgerSuiteOptions<S>): void {
  const backend = run(rest);
  ledgerTests(backend, options); // they hold on any backend: no capability is read
  ledgerEdgeTests(backend, options);
  if (capabilities !== undefined) ledgerWriterTests(backend, capabilities, options);
}
