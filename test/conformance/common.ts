/**
 * What the suite's files share: the options a backend's run gives, the subject of one test, and
 * the few helpers every promise's tests use. `node:assert` only, so that any runner can run it.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import {
  type EventLog,
  isLedgerError,
  type LedgerOptions,
  type LogBackend,
  type LogCapabilities,
  type Record,
} from '../../lib/index.js';

/**
 * How the suite registers a test: uvu's `test` (or one of its suites), node:test's `test`, or
 * anything that takes a name and an async body and runs it later. The suite only registers; the
 * caller runs (`test.run()` for uvu).
 */
export type Test = (name: string, body: () => Promise<void>) => unknown;

/** A backend to test, and how to remove what it made. */
export interface Subject {
  /** Opens the same log every time it is opened (for reopen tests). */
  readonly backend: LogBackend<Record>;
  readonly cleanup: () => Promise<void> | void;
  /**
   * A new backend object for the same storage, as another process (or this one, restarted)
   * would make it: needed where the backend is `durable`, whose records must outlive the object.
   */
  readonly fresh?: () => LogBackend<Record>;
}

/** A backend's run of the suite. */
export interface SuiteOptions<S extends Subject = Subject> {
  /** Registers a test (see {@link Test}). */
  readonly test: Test;
  /** The backend's name, at the head of every test's name. */
  readonly name: string;
  /** A fresh, empty log for each test. */
  readonly factory: () => Promise<S> | S;
  /**
   * What the backend can do, which decides the groups of tests registered. Read from a subject
   * the factory makes at once when not given: a factory that makes its subjects asynchronously
   * must give it.
   */
  readonly capabilities?: LogCapabilities;
  /**
   * Makes the next append to a log of `subject` fail so that the log stops (a failed sync),
   * where the backend can be made to: the guards' order is then pinned on a stopped log too, and
   * what a failed batch leaves.
   */
  readonly stop?: (subject: S) => void;
  /**
   * Cuts the store of `subject` back to its first `head` records behind its logs' backs (as a
   * failover to a standby that had not received the rest does, or a file cut short), where the
   * backend can be made to: how a log that went back is told is then tested (with `watches`).
   */
  readonly rewind?: (subject: S, head: number) => Promise<void> | void;
}

/** The ledger part's options: a run with a read model, say. */
export interface LedgerSuiteOptions<S extends Subject = Subject>
  extends Omit<SuiteOptions<S>, 'capabilities' | 'stop' | 'rewind'> {
  /**
   * The ledger's options for each open (made fresh for each subject). Where a test opens two
   * ledgers on one log, one takes them and the other none (a read model has one holder).
   */
  readonly options?: () => LedgerOptions;
  /** What the backend can do: given, the tests of several writers and watches are registered as they apply. */
  readonly capabilities?: LogCapabilities;
}

/** What a promise's file registers its tests with. */
export interface Run<S extends Subject> {
  /** Registers a test, its name after the backend's. */
  readonly test: (name: string, body: () => Promise<void>) => void;
  /** Runs `body` with a fresh subject, cleaned up afterwards whatever happens. */
  readonly withSubject: (body: (subject: S) => Promise<void>) => () => Promise<void>;
}

/** A run of the log's promises: also what the backend can do, which decides what is registered. */
export interface Common<S extends Subject> extends Run<S> {
  readonly capabilities: LogCapabilities;
  readonly stop: ((subject: S) => void) | undefined;
  readonly rewind: ((subject: S, head: number) => Promise<void> | void) | undefined;
}

/** A run: its tests' names, and its subjects, each made after `before` settles. */
export function run<S extends Subject>(
  { test, name, factory }: Omit<SuiteOptions<S>, 'capabilities' | 'stop'>,
  before: Promise<void> = Promise.resolve(),
): Run<S> {
  return {
    test: (title, body) => {
      test(`${name}: ${title}`, body);
    },
    withSubject: (body) => async () => {
      await before;
      const subject = await factory();
      try {
        await body(subject);
      } finally {
        await subject.cleanup();
      }
    },
  };
}

/** A run of the log's promises, with the backend's capabilities: given, or read from a subject the factory makes at once. */
export function common<S extends Subject>(options: SuiteOptions<S>): Common<S> {
  const { name, factory, capabilities, stop, rewind } = options;
  if (capabilities !== undefined) return { ...run(options), capabilities, stop, rewind };
  const probe = factory();
  if (probe instanceof Promise) {
    void probe.then((subject) => subject.cleanup()).catch(() => undefined);
    throw new TypeError(
      `conformance suite ${name}: the factory makes its subjects asynchronously, so the backend's capabilities must be given`,
    );
  }
  // cleaned up before the first test makes its subject: a failure shows in that test
  const probed = Promise.resolve().then(() => probe.cleanup());
  return { ...run(options, probed), capabilities: probe.backend.capabilities, stop, rewind };
}

/** Every record of `log`, from `from` (up to `to`). */
export async function all<R>(log: EventLog<R>, from?: number, to?: number): Promise<R[]> {
  const out: R[] = [];
  for await (const record of log.read(from, to)) out.push(record);
  return out;
}

/**
 * Waits until `check` holds, looking every 10 ms: for what another writer, process or watch
 * does in its own time. Fails after 30 s, so that a test that would hang fails instead.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const start = Date.now(); !(await check()); ) {
    if (Date.now() - start > 30_000) throw new Error(`waited 30 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `'ok'` when `promise` resolves, else the code of the ledger error it rejects with (anything else fails). */
export async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    assert.ok(isLedgerError(e), `not a ledger error: ${String(e)}`);
    return e.code;
  }
}
