/**
 * The base of a log: the promises of `log.ts` that no backend's I/O decides, kept once, so that
 * every backend refuses alike (as abstract-level's public methods check and its `_methods` do
 * the I/O). A backend extends {@link StoredLog} and writes only its I/O; a log that wraps
 * another (the fault wrapper) extends {@link LogBase}.
 *
 * What the base keeps:
 * - **The guards, in one order.** An append is refused, first to last: closed
 *   ({@link ClosedError}), read-only ({@link ReadOnlyError}), stopped ({@link StoppedError}, or
 *   the stopping error itself when it has that code), a record that `codec.normalize` refuses
 *   (the codec's `InvalidRecordError`; a {@link CheckedRecord} the log's own codec made is
 *   taken as it is), the expected head ({@link ConflictError}), and only then
 *   does an empty batch resolve, writing nothing. Closed, read-only and stopped are looked at
 *   when `append` is called, and stopped again when its turn comes (an earlier append may have
 *   stopped the log meanwhile); the records are checked when it is called, into fresh values a
 *   caller's later changes do not reach.
 * - **Call order.** Appends run one at a time, each after every earlier one settled. When none
 *   is running, an append's turn starts within the call: a synchronous backend's append (the
 *   JSONL file's `write` and `fdatasync`) then runs whole before `append` returns, at no cost.
 * - **One writer per process**, by the key a backend names (a file's absolute path, a database
 *   object); a backend whose storage locks itself (a LevelDB folder) or that has several writers
 *   names none.
 * - **The read-through at open**: the records from the resume point on, each handed to
 *   `replay`; a record refused (by `replay`, or by the codec as it is read) is damage at its
 *   position, counted from 1 ({@link asDamage}); a failed open leaves the log as it was and
 *   holds nothing.
 * - **The resume check**: the stored record before the point must have the point's fingerprint.
 * - **Closed reads, resume points and closes**: every operation on a closed log fails with
 *   {@link ClosedError} (a read in progress ends after the record in hand); a resume point and
 *   a close wait for the appends called before them.
 * - **A read's end**: `read(from, to)` stops at `to` whatever the backend hands over.
 * - **Refresh in turn, and a log that went back**: `refresh` takes its turn among the appends
 *   (an append landing while the store's head is looked at would look like a step back); a
 *   store found shorter than `head` stops the log ({@link LogWentBackError}).
 * - **Watches and leases end with the log**: a close stops every watch and gives up every
 *   lease first; with one writer, the writer holds every lease, one holder each.
 * - **Disposal**: `[Symbol.asyncDispose]` is `close`, for `await using`.
 *
 * The two classes are written in `log-base/`: `base.ts` ({@link LogBase}) and `stored.ts`
 * ({@link StoredLog}); this module exports both.
 *
 * @module
 */
export * from './log-base/base.js';
export * from './log-base/stored.js';
