/**
 * I/O errors (issue 5): a workload of a ledger (open a missing file, 10 appends of single
 * records and small group-commit batches, close; a torn tail left as a crash would; reopen,
 * which cuts it, 10 more appends, close; a read-only open) runs over a file-system layer
 * (test/support/injecting-io.ts) that fails the Nth call of one kind (the look at the path,
 * open to read, open to write, create, the look at the open file, size, read, write, a short
 * write followed by a failed one, fdatasync, ftruncate, realpath, the directory's fsync, close,
 * the lock), with EIO, ENOSPC and EDQUOT (a lock: EIO and ENOLCK), once and from then on, for
 * every N the workload reaches; and for every N, a short write or a failed fdatasync whose cut
 * back fails too. In every run:
 *
 * - every append either resolves or rejects with a clear error: `LEDGER_IO` carrying the
 *   injected code (its message the path and the system's words for it), `LEDGER_STOPPED` once
 *   the log stopped, or the rules' refusal of a record that needed one that failed; an open
 *   fails only with `LEDGER_IO`, and only when a call failed;
 * - nothing that failed is believed: after each batch the ledger answers exactly as a replay of
 *   the appends that resolved, and the file holds exactly their lines (whatever failed was cut
 *   back), unless the cut itself failed;
 * - a failed fdatasync (or directory fsync, or a cut back that failed) is never retried into
 *   success: after it, until the ledger is reopened, no append resolves and the log makes no
 *   write and no sync (but the failing append's own cut back of its lines, and the cut's sync);
 * - no descriptor leaks: none is open after a failed open or a close;
 * - after the faults stop, a reopen with the real file system succeeds and holds every
 *   acknowledged record, in call order, and nothing that failed (or, when a cut back failed,
 *   what failed either whole or cut off).
 *
 * LevelDB: the same workload on a classic-level folder through a wrapper that fails the Nth
 * batch write, before writing or after (the batch in LevelDB's log, the caller told it failed).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../../backends/level/index.js';
import { workload } from '../../lib/honcho/synthetic.js';
import {
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  Ledger,
  type LedgerError,
  type LogBackend,
  nodeFileIO,
  type Record,
} from '../../lib/index.js';
import { withFastHome } from '../support/fast-home.js';
import { FaultyLevel } from '../support/faulty-level.js';
import { checkLedgerState, checkRecovered, checkRules, fileOf, lineOf, recordsOf } from '../support/guarantees.js';
import { CALLS, type Call, type Fault, InjectingIO, libuvKnows } from '../support/injecting-io.js';
import type { Home } from '../support/ledger.js';
import { VIEW } from '../support/level-db.js';
import { ReferenceLedger } from '../support/reference-ledger.js';
import { SCALE } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

const CODES = ['EIO', 'ENOSPC', 'EDQUOT'] as const;
/** The codes a call is failed with: the three, but a lock fails with EIO or ENOLCK (no locks: NFS). */
const codesFor = (call: Call): readonly string[] => (call === 'tryLock' ? ['EIO', 'ENOLCK'] : CODES);
/** The system's words for each code, as `LedgerIoError` gives them. */
const WORDS: { readonly [code: string]: string } = {
  EIO: 'i/o error',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
};
/** The appends of each phase: how many records each carries (concurrent, one batch). */
const PHASE_A = [1, 2, 1, 3, 1, 1, 2, 1, 2, 1];
const PHASE_B = [1, 1, 2, 1, 3, 1, 2, 1, 1, 2];
const RECORDS = [...PHASE_A, ...PHASE_B].reduce((a, b) => a + b, 0);

/** What one run did, for the checks and the figures. */
interface RunStats {
  runs: number;
  injected: number;
  appendsFailed: number;
  appendsAcknowledged: number;
  opensFailed: number;
}

/** Something the engine gets wrong: a failure, with an example. (Each one found was fixed.) */
function finding(kind: string, example: string): void {
  assert.unreachable(`${kind}: ${example}`);
}

/**
 * A LEDGER_IO error for an injected `code` names one of `paths` and the system's words for the
 * code, and carries the code. For an errno that libuv has no name for (EDQUOT in Node 20), Node
 * itself says only "unknown error" (code `UNKNOWN`); the error must still name it.
 */
function checkIoError(e: LedgerError, code: string | null, paths: readonly string[], why: string): void {
  const errno = (e as LedgerError & { errno?: string }).errno;
  assert.ok(code !== null, `${why}: LEDGER_IO with no fault injected: ${e.message}`);
  const named = paths.find((p) => e.message.startsWith(`${p}: `));
  assert.ok(named !== undefined, `${why}: the error does not name the ledger or its directory: ${e.message}`);
  if (libuvKnows(code as string)) {
    assert.is(errno, code, `${why}: LEDGER_IO with ${errno}: ${e.message}`);
    assert.is(e.message, `${named}: ${WORDS[code as string]} (${code})`, `${why}: an unclear message`);
  } else if (!e.message.includes(code as string) || errno !== code) {
    finding(
      `an ${code} failure is reported without naming it (Node 20 gives it as UNKNOWN)`,
      `"${e.message}" (errno ${errno})`,
    );
  }
}

/**
 * A failure that stops a JSONL log until it is reopened: a sync, the directory's sync (or finding
 * the directory, through links, that holds the file), a cut back, and the look at the path that
 * tells a writer its file is still the one there (an open's look only fails the open).
 */
const STOPS: readonly Call[] = ['datasync', 'statusOf', 'realPath', 'syncDirectory', 'truncate'];

function describeFault(fault: Fault | null): string {
  if (fault === null) return 'no fault';
  const mode = fault.persistent ? 'from then on' : 'once';
  const then = fault.thenTruncate === undefined ? '' : `, and the cut back fails with ${fault.thenTruncate}`;
  return fault.kind === 'fail'
    ? `${fault.call} #${fault.at} fails with ${fault.code} ${mode}${then}`
    : `write #${fault.at} is short${fault.code === null ? '' : `, then writes fail with ${fault.code} ${mode}`}${then}`;
}

/** The code a fault injects. */
const codeOf = (fault: Fault | null): string | null => (fault === null ? null : fault.code);

/**
 * One run of the JSONL workload under `fault`, checking as it goes (see the top of the file).
 * Gives the layer, for the call counts and the figures.
 */
async function runJsonl(
  home: Home,
  fault: Fault | null,
  stats: RunStats,
  records: readonly Record[],
  seed: number,
): Promise<InjectingIO> {
  const context = `I/O errors, JSONL (${describeFault(fault)}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${seed})`;
  const io = new InjectingIO(fault);
  const backend = jsonlBackend(home.path, { codec: honchoCodec, io });
  const attempted: Record[] = [];
  const acked = new Set<number>();
  /**
   * Whether a cut back (a truncate while appending) failed: failed lines may then be left in the
   * file. (A failed cut of a torn tail at an open fails the open, and the next open cuts it.)
   */
  let cutBackFailed = false;
  const cutFailed = (): boolean => cutBackFailed;
  /**
   * The ledger answers as a replay of `believed` does; or, when a read of the log failed by the
   * fault (the decisions are read back from the log), says so with the fault's words.
   */
  const checkState = async (ledger: Ledger, believed: readonly Record[], why: string): Promise<void> => {
    const before = io.trace.length;
    try {
      await checkLedgerState(ledger, believed, why);
    } catch (e) {
      if (!isLedgerError(e, 'LEDGER_IO')) throw e;
      assert.ok(
        io.trace.slice(before).some((t) => t.call === 'read' && t.failed !== null),
        `${why}: the ledger's answers failed with no read failing: ${String(e)}`,
      );
      checkIoError(e, codeOf(fault), [home.path, home.dir], why);
    }
  };
  /** The real file's bytes, `null` when missing. */
  const file = (): Buffer | null => (existsSync(home.path) ? readFileSync(home.path) : null);

  /** Opens through the layer, twice at most: a failed open must be LEDGER_IO, caused by a fault, and leak nothing. */
  const open = async (readOnly: boolean, phase: string): Promise<Ledger | null> => {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const before = io.trace.length;
      try {
        return await Ledger.open(backend, { readOnly });
      } catch (e) {
        stats.opensFailed++;
        const why = `${context}, ${phase}, open ${attempt}`;
        if (!isLedgerError(e) && lockFailed(before)) {
          finding(
            'a lock that fails (fcntl, EIO or ENOLCK) fails the open with a raw system error, not a LedgerError',
            `${phase}: ${String(e)}`,
          );
        } else {
          assert.ok(isLedgerError(e, 'LEDGER_IO'), `${why}: the open failed with ${String(e)}, not a LEDGER_IO error`);
          checkIoError(e, codeOf(fault), [home.path, home.dir], why);
        }
        assert.ok(
          io.trace.slice(before).some((t) => t.failed !== null),
          `${why}: the open failed with no call failing: ${String(e)}`,
        );
        assert.is(io.open.size, 0, `${why}: a failed open left descriptors open`);
        if (fault !== null && !fault.persistent)
          assert.is(attempt, 1, `${why}: a fault injected once failed two opens`);
      }
    }
    return null;
  };

  /** Runs `groups` appends on `ledger`, which believes `believed`; gives what it believes after. */
  const appends = async (
    ledger: Ledger,
    groups: readonly number[],
    believed: readonly Record[],
    phase: string,
  ): Promise<Record[]> => {
    const phaseStart = io.trace.length;
    const now = [...believed];
    for (const [g, size] of groups.entries()) {
      const why = `${context}, ${phase}, append ${g + 1}`;
      const group = records.slice(attempted.length, attempted.length + size);
      const first = attempted.length;
      attempted.push(...group);
      const resolvedAt: number[] = [];
      const groupStart = io.trace.length;
      const results = await Promise.allSettled(
        group.map((record, n) =>
          ledger.append(record).then(() => {
            resolvedAt[n] = io.trace.length;
          }),
        ),
      );
      // the first failure since the reopen that stops the log, as an index into the trace
      const stop = io.trace.findIndex((t, i) => i >= phaseStart && t.failed !== null && STOPS.includes(t.call));
      const model = new ReferenceLedger();
      for (const record of now) model.offer(record);
      results.forEach((result, n) => {
        const record = group[n] as Record;
        if (result.status === 'fulfilled') {
          const at = resolvedAt[n] as number;
          assert.ok(
            stop === -1 || at <= stop,
            `${why}: an append resolved after ${io.trace[stop]?.call} failed: a failed sync retried into success`,
          );
          assert.is(model.offer(record), null, `${why}: an append that breaks the rules resolved`);
          now.push(record);
          acked.add(first + n);
          stats.appendsAcknowledged++;
          return;
        }
        stats.appendsFailed++;
        const e: unknown = result.reason;
        if (isLedgerError(e, 'LEDGER_IO')) {
          checkIoError(e, codeOf(fault), [home.path, home.dir], why);
        } else if (isLedgerError(e, 'LEDGER_STOPPED')) {
          assert.ok(stop !== -1, `${why}: LEDGER_STOPPED with no failure that stops the log: ${String(e)}`);
        } else if (isLedgerError(e, 'LEDGER_NOT_WAITING') || isLedgerError(e, 'LEDGER_ALREADY_DECIDED')) {
          assert.ok(model.refusal(record) !== null, `${why}: a record the rules allow was refused: ${String(e)}`);
        } else if (!isLedgerError(e) && lockFailed(phaseStart)) {
          finding(
            'a lock that fails (fcntl, EIO or ENOLCK) on the file the first append creates rejects the append with a raw system error, not a LedgerError',
            String(e),
          );
        } else {
          assert.unreachable(`${why}: an append failed with ${String(e)}`);
        }
      });
      if (io.trace.slice(groupStart).some((t) => t.call === 'truncate' && t.failed !== null)) cutBackFailed = true;
      // a failure of the append's own calls is never swallowed: an append of the group says so
      const failedHere = io.trace
        .slice(groupStart)
        .filter(
          (t) =>
            t.failed !== null &&
            t.failed !== 'real' &&
            ['write', 'datasync', 'statusOf', 'create', 'realPath', 'syncDirectory'].includes(t.call),
        );
      if (failedHere.length > 0) {
        assert.ok(
          results.some((r) => r.status === 'rejected' && isLedgerError(r.reason, 'LEDGER_IO')) ||
            lockFailed(groupStart),
          `${why}: ${failedHere[0]?.call} failed and no append said so`,
        );
      }
      if (stop !== -1) {
        // what the failing append itself does next: cut its lines back and sync the cut (not a
        // retry: the append is rejected all the same); nothing after that
        let next = stop + 1;
        if (io.trace[next]?.call === 'truncate') next += io.trace[next + 1]?.call === 'datasync' ? 2 : 1;
        const after = io.trace
          .slice(next)
          .filter((t) => t.call === 'write' || t.call === 'datasync' || t.call === 'create');
        assert.equal(after, [], `${why}: the log wrote or synced after ${io.trace[stop]?.call} failed`);
      }
      await checkState(ledger, now, why);
      if (!cutFailed()) {
        const bytes = file();
        assert.ok(
          (bytes ?? Buffer.alloc(0)).equals(fileOf(now)),
          `${why}: the file does not hold exactly the appends that resolved (what failed was not cut back)`,
        );
      }
    }
    return now;
  };

  /** Whether a lock failed by injection since the trace's `from`th call. */
  const lockFailed = (from: number): boolean =>
    io.trace.slice(from).some((t) => t.call === 'tryLock' && t.failed !== null);
  /** No descriptor is open (a leak after a failed lock is a finding; the harness closes it). */
  const noLeak = (phase: string): void => {
    if (io.open.size > 0 && lockFailed(0)) {
      finding(
        "a lock that fails on the file the first append creates leaks that file's descriptor",
        `${io.open.size} descriptor open after ${phase} closed`,
      );
      for (const fd of io.open) nodeFileIO.close(fd);
      io.open.clear();
    }
    assert.is(io.open.size, 0, `${context}: ${phase} left descriptors open`);
  };

  let believed: Record[] = [];
  // phase A: a missing file, created by the first append
  const a = await open(false, 'phase A');
  if (a !== null) {
    await checkLedgerState(a, [], `${context}, phase A open`);
    believed = await appends(a, PHASE_A, [], 'phase A');
    await a.close();
  } else {
    attempted.push(
      ...records.slice(
        0,
        PHASE_A.reduce((x, y) => x + y, 0),
      ),
    );
  }
  noLeak('phase A');

  // a crash cut the next line short: the reopen must drop it
  const torn = Buffer.from(lineOf(records[RECORDS] as Record)).subarray(0, 37);
  appendFileSync(home.path, torn);

  // phase B: reopen, repair, append
  const b = await open(false, 'phase B');
  if (b !== null) {
    if (!cutFailed()) {
      assert.is(b.size, believed.length, `${context}, phase B: the reopen does not hold what phase A acknowledged`);
      // cut by this open, or by one that failed after its cut (its sync failing)
      assert.ok(
        (file() ?? Buffer.alloc(0)).equals(fileOf(believed)),
        `${context}, phase B: the torn tail was not cut (${JSON.stringify(b.repaired)})`,
      );
    }
    // what it holds, read apart from the layer (whose reads are the workload's, and may fail)
    const reader = await Ledger.open(home.path, { readOnly: true });
    const found = await recordsOf(reader);
    await reader.close();
    assert.is(found.length, b.size, `${context}, phase B: a reader and the writer disagree`);
    believed = await appends(b, PHASE_B, found, 'phase B');
    await b.close();
  }
  noLeak('phase B');

  // phase C: a reader
  const c = await open(true, 'phase C');
  if (c !== null) {
    // what the writer believed; after a cut back that failed, whatever of the failed batch is
    // whole in the file too (the log stopped: a reopen trusts what is whole)
    if (b !== null && !cutFailed()) await checkState(c, believed, `${context}, phase C`);
    else if (b !== null) checkRecovered(await recordsOf(c), { attempted, acked }, `${context}, phase C`);
    await c.close();
  }
  noLeak('phase C');

  // the faults stop: the real file system
  const final = await Ledger.open(home.path);
  const found = await recordsOf(final);
  checkRecovered(found, { attempted, acked }, `${context}, after the faults stopped`);
  if (!cutFailed()) {
    const kept = [...acked].sort((x, y) => x - y).map((n) => lineOf(attempted[n] as Record));
    assert.equal(
      found.map(lineOf),
      kept,
      `${context}, after the faults stopped: something that failed is in the ledger`,
    );
  }
  checkRules(found, `${context}, after the faults stopped`);
  await checkLedgerState(final, found, `${context}, after the faults stopped`);
  await final.close();
  stats.runs++;
  stats.injected += io.injected;
  return io;
}

test('JSONL: every call of a workload failed in turn, with EIO, ENOSPC and EDQUOT, once and from then on', async () => {
  const stats: RunStats = { runs: 0, injected: 0, appendsFailed: 0, appendsAcknowledged: 0, opensFailed: 0 };
  const counts: string[] = [];
  // one workload at SCALE 1, one more (another seed: other records, other lengths) per step of it
  for (let w = 0; w < SCALE; w++) {
    const seed = CRASH_SEED * 1000 + 7 + 100 * w;
    const records = [...workload({ records: RECORDS + 1, seed })];
    // a run without faults counts the calls of each kind
    const failedBefore = stats.appendsFailed;
    const baseline = await withFastHome((home) => runJsonl(home, null, stats, records, seed));
    assert.is(stats.appendsFailed, failedBefore, `appends failed with no fault (seed ${seed})`);
    const faults: Fault[] = [];
    for (const call of CALLS) {
      for (let at = 1; at <= baseline.count(call); at++) {
        for (const code of codesFor(call))
          for (const persistent of [false, true]) faults.push({ kind: 'fail', call, at, code, persistent });
      }
    }
    for (let at = 1; at <= baseline.count('write'); at++) {
      faults.push({ kind: 'short', at, code: null, persistent: false });
      for (const code of CODES)
        for (const persistent of [false, true]) faults.push({ kind: 'short', at, code, persistent });
      // half a line written, the rest refused, and the cut back refused too: the log stops
      faults.push({ kind: 'short', at, code: 'ENOSPC', persistent: false, thenTruncate: 'EIO' });
    }
    // a sync that fails and a cut back that fails: the lines stay, whole, in a stopped log
    for (let at = 1; at <= baseline.count('datasync'); at++)
      faults.push({ kind: 'fail', call: 'datasync', at, code: 'EIO', persistent: false, thenTruncate: 'EIO' });
    for (const fault of faults) {
      const io = await withFastHome((home) => runJsonl(home, fault, stats, records, seed));
      // every call faulted is one the workload makes: a fault that never struck tested nothing
      if (fault.code !== null)
        assert.ok(io.injected > 0, `the fault ${JSON.stringify(fault)} never struck (seed ${seed})`);
    }
    if (w === 0) counts.push(...CALLS.map((call) => `${call} ${baseline.count(call)}`));
  }
  console.log(
    `  I/O errors, JSONL (SCALE ${SCALE}): ${stats.runs} runs (the workload's calls: ${counts.join(', ')}), ${stats.injected} faults injected, ` +
      `${stats.appendsFailed} appends failed, ${stats.appendsAcknowledged} acknowledged and kept, ${stats.opensFailed} opens failed`,
  );
});

/** strerror's words, as LevelDB puts them in its errors. */
const STRERROR: { readonly [code: string]: string } = {
  EIO: 'Input/output error',
  ENOSPC: 'No space left on device',
  EDQUOT: 'Disk quota exceeded',
};

/** The Nth batch write (from 1) of a LevelDB run that fails, before or after writing, once or from then on. */
type LevelFault = {
  readonly at: number;
  readonly code: string;
  readonly persistent: boolean;
  readonly when: 'before' | 'after';
} | null;

/** A classic-level database in `folder` whose batch writes fail as `fault` says, as LevelDB's do. */
function failingLevel(folder: string, fault: LevelFault): FaultyLevel {
  const db = new FaultyLevel(new ClassicLevel<Uint8Array, Uint8Array>(folder, VIEW));
  if (fault === null) return db;
  db.failBatch = (n) =>
    n === fault.at || (fault.persistent && n > fault.at)
      ? {
          when: fault.when,
          // what classic-level rejects with when LevelDB's write fails
          error: Object.assign(new Error(`IO error: ${folder}/000003.log: ${STRERROR[fault.code] ?? fault.code}`), {
            code: 'LEVEL_IO_ERROR',
          }),
        }
      : null;
  return db;
}

test(`LevelDB: every batch write of a workload failed in turn, before and after writing, once and from then on`, async () => {
  const stats: RunStats = { runs: 0, injected: 0, appendsFailed: 0, appendsAcknowledged: 0, opensFailed: 0 };
  let writes = 0;
  for (let w = 0; w < SCALE; w++) writes = await levelWorkload(CRASH_SEED * 1000 + 8 + 100 * w, stats);
  console.log(
    `  I/O errors, LevelDB (SCALE ${SCALE}): ${stats.runs} runs (${writes} batch writes each), ${stats.injected} faults injected, ` +
      `${stats.appendsFailed} appends failed, ${stats.appendsAcknowledged} acknowledged and kept`,
  );
  assert.ok(
    writes > 0 && stats.injected >= writes * CODES.length * 4,
    `${stats.injected} faults struck in ${writes} batch writes`,
  );
});

/** The LevelDB workload of `seed`, without faults and then with each; gives its number of batch writes. */
async function levelWorkload(seed: number, stats: RunStats): Promise<number> {
  const records = [...workload({ records: RECORDS, seed })];
  const runLevel = async (home: Home, fault: LevelFault): Promise<number> => {
    const context = `I/O errors, LevelDB (${fault === null ? 'no fault' : `batch write #${fault.at} fails ${fault.when} writing with ${fault.code}${fault.persistent ? ' from then on' : ' once'}`}; seed ${seed})`;
    const folder = join(home.dir, 'honcho.level');
    const db = failingLevel(folder, fault);
    const backend: LogBackend<Record> = levelBackend(db, { codec: honchoCodec, name: folder });
    const attempted: Record[] = [];
    const acked = new Set<number>();
    /** The attempted indexes of the batches whose write failed after writing: they may be there, whole. */
    const failedAfter: number[][] = [];
    let believed: Record[] = [];
    for (const [phase, groups] of [
      ['phase A', PHASE_A],
      ['phase B', PHASE_B],
    ] as const) {
      const ledger = await Ledger.open(backend);
      const found = await recordsOf(ledger);
      checkRecovered(found, { attempted, acked }, `${context}, ${phase} open`);
      believed = found;
      await checkLedgerState(ledger, believed, `${context}, ${phase} open`);
      const phaseStart = db.writes.length;
      /** The first batch write of this phase that failed: the log stops there until a reopen. */
      const stop = (): number | undefined => db.failedBatches.find((n) => n > phaseStart);
      for (const [g, size] of groups.entries()) {
        const why = `${context}, ${phase}, append ${g + 1}`;
        const group = records.slice(attempted.length, attempted.length + size);
        const first = attempted.length;
        attempted.push(...group);
        const resolvedAfter: number[] = [];
        const results = await Promise.allSettled(
          group.map((record, n) =>
            ledger.append(record).then(() => {
              resolvedAfter[n] = db.writes.length;
            }),
          ),
        );
        const model = new ReferenceLedger();
        for (const record of believed) model.offer(record);
        const failedHere: number[] = [];
        results.forEach((result, n) => {
          const record = group[n] as Record;
          if (result.status === 'fulfilled') {
            const stopped = stop();
            assert.ok(
              stopped === undefined || (resolvedAfter[n] as number) < stopped,
              `${why}: an append resolved after a batch write failed`,
            );
            assert.is(model.offer(record), null, `${why}: an append that breaks the rules resolved`);
            believed.push(record);
            acked.add(first + n);
            stats.appendsAcknowledged++;
            return;
          }
          stats.appendsFailed++;
          const e: unknown = result.reason;
          if (isLedgerError(e, 'LEDGER_IO')) {
            assert.ok(fault !== null, `${why}: LEDGER_IO with no fault: ${e.message}`);
            assert.is(
              e.message,
              `${folder}: IO error: ${folder}/000003.log: ${STRERROR[fault?.code ?? '']} (LEVEL_IO_ERROR)`,
              `${why}: an unclear message`,
            );
            failedHere.push(first + n);
          } else if (isLedgerError(e, 'LEDGER_STOPPED')) {
            assert.ok(stop() !== undefined, `${why}: LEDGER_STOPPED with no failed write: ${String(e)}`);
          } else if (isLedgerError(e, 'LEDGER_NOT_WAITING') || isLedgerError(e, 'LEDGER_ALREADY_DECIDED')) {
            assert.ok(model.refusal(record) !== null, `${why}: a record the rules allow was refused: ${String(e)}`);
          } else {
            assert.unreachable(`${why}: an append failed with ${String(e)}`);
          }
        });
        if (failedHere.length > 0 && fault?.when === 'after') failedAfter.push(failedHere);
        const stopped = stop();
        if (stopped !== undefined)
          assert.is(db.writes.length, stopped, `${why}: the log wrote again after a failed batch write`);
        await checkLedgerState(ledger, believed, why);
      }
      await ledger.close();
    }
    stats.injected += db.failedBatches.length;
    if (fault !== null) assert.ok(db.failedBatches.length > 0, `${context}: the fault never struck`);
    db.failBatch = null;
    await db.close();
    // the faults stop: the folder, opened as any writer would
    const final = await Ledger.open(`level:${folder}`);
    const found = await recordsOf(final);
    const matched = checkRecovered(found, { attempted, acked }, `${context}, after the faults stopped`);
    // whatever failed is absent, or (failed after the write) there whole: its whole batch
    const present = new Set(matched);
    for (const n of matched) {
      if (acked.has(n)) continue;
      const batch = failedAfter.find((b) => b.includes(n));
      assert.ok(
        batch !== undefined,
        `${context}: record ${n + 1}, which failed before it was written, is in the ledger`,
      );
      for (const m of batch) assert.ok(present.has(m), `${context}: half of a failed batch is in the ledger`);
    }
    await checkLedgerState(final, found, `${context}, after the faults stopped`);
    await final.close();
    stats.runs++;
    return db.writes.length;
  };
  const writes = await withFastHome((home) => runLevel(home, null));
  for (let at = 1; at <= writes; at++) {
    for (const code of CODES) {
      for (const persistent of [false, true]) {
        for (const when of ['before', 'after'] as const) {
          await withFastHome((home) => runLevel(home, { at, code, persistent, when }));
        }
      }
    }
  }
  return writes;
}

test.run();
