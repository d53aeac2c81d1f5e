/**
 * Simulated power loss (issue 5): the JSONL backend runs over a simulated file system
 * (test/support/power-loss-io.ts, whose top comment is the model) that keeps what is stable apart
 * from what is only cached. After every system call of a workload the harness takes a crash
 * point; at each it enumerates what a power loss may leave of what was not synced (the file's
 * size at any size it had since its last sync, or torn at any byte of an append; each 512-byte
 * sector that changed at any version it had, or never written; blocks allocated since the sync
 * and never written as zeros or garbage; a name not yet synced into its directory kept or lost),
 * writes each such state to a real file, and opens it with the real backend, checking:
 *
 * 1. every acknowledged append is whole on disk in every state (the engine synced what it
 *    acknowledged, and the file's name), and the reopen has it;
 * 2. what the reopen has is exactly the first records appended, each whole;
 * 3. the reopen succeeds and drops only a tail with no newline, cut from the file, byte for byte
 *    the rest, unless zeros or garbage followed by a newline were left inside the last,
 *    unacknowledged write, or garbage where the first line of a file with no whole line begins:
 *    then, as docs/reliability.md says, it is damage at that line (it cannot be told from damage
 *    elsewhere, or from a file that is no ledger), the open refuses and the file is left as it
 *    was. Those states are counted apart, by filler, and never touch an acknowledged record;
 * 4. the records keep the rules and the ledger answers as a replay does; an append after the
 *    reopen follows the whole lines byte for byte.
 *
 * Workloads: a ledger created by its first append, then 20 appends (group-commit batches of 1-3
 * records from `workload`); one with whole writes, crash states enumerated at every byte; one
 * with short writes (several pending writes per append, their outcomes combined); crashes during
 * the recovery of a torn tail (the reopen's truncate, its sync, the next append); an fdatasync
 * that fails and the power loss that follows; and random states of random workloads.
 */

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import {
  DamagedError,
  encodeRecord,
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  Ledger,
  type LedgerErrorCode,
  type Record,
} from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { withFastHome } from '../support/fast-home.js';
import {
  checkJsonlRepair,
  checkLedgerState,
  checkRecovered,
  fileOf,
  lineOf,
  recordsOf,
} from '../support/guarantees.js';
import { decided, type Home, turn } from '../support/ledger.js';
import {
  crashChoices,
  type FileState,
  firstSector,
  imagesOf,
  materialize,
  PowerLossIO,
  SECTOR,
} from '../support/power-loss-io.js';
import { attemptedLines, expectedOpen } from '../support/reference-ledger.js';
import { SCALE, scaled } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

/** Where the simulated ledger lives (in the simulation only). */
const SIM_PATH = '/simulated/memory/honcho.jsonl';
/**
 * The most combinations of sector versions tried for one size at one crash point (more when
 * every state of a workload is enumerated, fewer when many writes are pending).
 */
const COMBINATIONS = 120;
const FEW_COMBINATIONS = 6;

/** What a crash point knew: the files, and which appends had resolved. */
interface Point {
  readonly call: number;
  readonly what: string;
  readonly files: readonly FileState[];
  readonly acked: ReadonlySet<number>;
  /** The appends rejected with LEDGER_IO so far: their callers were told they failed. */
  readonly rejected: ReadonlySet<number>;
}

interface Run {
  /** Every record appended, in call order (the file's order). */
  readonly attempted: readonly Record[];
  readonly points: readonly Point[];
}

interface WorkloadPlan {
  readonly seed: number;
  /** The records of each append (one group-commit batch each). */
  readonly groups: readonly number[];
  /** Short writes of at most this many bytes. */
  readonly maxWrite?: number;
  /** The datasync call (from 1) that fails. */
  readonly failDatasync?: number;
  /** The write call (from 1) that fails; the workload stops after the append it fails. */
  readonly failWrite?: number;
  /** The file's stable contents before the workload (a ledger reopened after a crash). */
  readonly initial?: Buffer;
  /** Records appended before (in `initial`): they are the first of `attempted`. */
  readonly before?: readonly Record[];
  /** The records to append, instead of `workload`'s. */
  readonly records?: readonly Record[];
}

const groupsOf = (rng: Random, appends: number, sizes: readonly number[]): number[] =>
  Array.from({ length: appends }, () => rng.pick(sizes));

/**
 * Runs a workload over the simulated file system, taking a crash point before the first call
 * and after every call.
 */
async function runWorkload(plan: WorkloadPlan): Promise<Run> {
  const io = new PowerLossIO(plan.initial === undefined ? [] : [{ path: SIM_PATH, bytes: plan.initial }]);
  io.maxWrite = plan.maxWrite ?? Infinity;
  if (plan.failDatasync !== undefined) io.failDatasyncs.add(plan.failDatasync);
  if (plan.failWrite !== undefined) io.failWrites.add(plan.failWrite);
  const faultPlanned = plan.failDatasync !== undefined || plan.failWrite !== undefined;
  const total = plan.groups.reduce((a, b) => a + b, 0);
  const records = plan.records ?? [...workload({ records: total, seed: plan.seed })];
  const before = plan.before ?? [];
  const attempted = [...before, ...records];
  const acked = new Set<number>(before.map((_, n) => n));
  const rejected = new Set<number>();
  const points: Point[] = [];
  const take = (what: string): void => {
    points.push({ call: io.calls, what, files: io.crashPoint(), acked: new Set(acked), rejected: new Set(rejected) });
  };
  take('nothing yet');
  io.onCall = take;
  const ledger = await Ledger.open(jsonlBackend(SIM_PATH, { codec: honchoCodec, io }));
  try {
    let next = 0;
    let failed = false;
    for (const size of plan.groups) {
      const group = records.slice(next, next + size).map((record, n) => ({ record, index: before.length + next + n }));
      next += size;
      const results = await Promise.allSettled(
        group.map(({ record, index }) =>
          ledger.append(record).then(
            () => {
              acked.add(index);
            },
            (e: unknown) => {
              if (isLedgerError(e, 'LEDGER_IO')) rejected.add(index);
              throw e;
            },
          ),
        ),
      );
      if (rejected.size > 0) take('the failed append rejected');
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        // only the failed sync's batch fails with it; after it, every append is refused: the log
        // stopped, or the record needs one that failed
        const reason: unknown = result.reason;
        assert.ok(faultPlanned, `an append failed with no fault planned: ${String(reason)}`);
        const expected: LedgerErrorCode[] = failed ? ['LEDGER_STOPPED', 'LEDGER_NOT_WAITING'] : ['LEDGER_IO'];
        assert.ok(
          expected.some((code) => isLedgerError(reason, code)),
          `an append failed with ${String(reason)}; expected ${expected.join(' or ')}`,
        );
      }
      if (results.some((r) => r.status === 'rejected')) failed = true;
      // a log that cut a failed write back goes on; its file is then no longer the first
      // records attempted, which is what the checks read it against: stop there
      if (failed && plan.failWrite !== undefined) break;
    }
  } finally {
    await ledger.close();
  }
  io.onCall = null;
  assert.is(io.openFds, 0, 'the simulated file system has descriptors left open');
  return { attempted, points };
}

/** One state a power loss may leave: the ledger file's bytes (`null`: missing), and how it came about. */
interface CrashState {
  readonly bytes: Buffer | null;
  readonly how: string;
  /** What fills bytes that were not written, from byte `from` on: zeros, garbage (worked out when asked). */
  readonly fillers: (from?: number) => ReadonlySet<string>;
}

/**
 * The distinct states a power loss at `point` may leave of the ledger file ({@link crashChoices}:
 * `every` torn size of an append, each combination of sector versions up to
 * `combinations`), and, when its directory was not synced since it was created, the file
 * missing.
 */
function* crashStates(point: Point, every: boolean, rng: Random, combinations = COMBINATIONS): Generator<CrashState> {
  const file = point.files.find((f) => f.path === SIM_PATH);
  if (file === undefined) {
    yield { bytes: null, how: 'no file yet', fillers: () => new Set() };
    return;
  }
  if (!file.entryDurable)
    yield { bytes: null, how: 'the name was lost (its directory not synced)', fillers: () => new Set() };
  const images = imagesOf(file);
  const seen = new Set<string>();
  for (const choice of crashChoices(file, every, combinations, rng)) {
    const bytes = materialize(file, choice, rng, images);
    const key = createHash('sha1').update(bytes).digest('base64');
    if (seen.has(key)) continue;
    seen.add(key);
    yield { bytes, how: choice.how, fillers: (from = 0) => fillersIn(bytes, file, images, from) };
  }
}

/** One of the states {@link crashStates} gives, at random, made alone. */
function randomState(point: Point, rng: Random): CrashState {
  const file = point.files.find((f) => f.path === SIM_PATH);
  if (file === undefined) return { bytes: null, how: 'no file yet', fillers: () => new Set() };
  if (!file.entryDurable && rng.chance(0.3))
    return { bytes: null, how: 'the name was lost (its directory not synced)', fillers: () => new Set() };
  const images = imagesOf(file);
  const choice = rng.pick(crashChoices(file, false, FEW_COMBINATIONS, rng));
  const bytes = materialize(file, choice, rng, images);
  return { bytes, how: choice.how, fillers: (from = 0) => fillersIn(bytes, file, images, from) };
}

/**
 * What in `bytes` was not written by the backend: zeros or garbage where the last image has
 * data, for the damage statistics.
 */
function fillersIn(bytes: Buffer, file: FileState, images: readonly Buffer[], from: number): Set<string> {
  const latest = images[images.length - 1] as Buffer;
  const out = new Set<string>();
  for (let at = Math.max(from, firstSector(file) * SECTOR); at < bytes.length; at++) {
    const byte = bytes[at] as number;
    if (at < latest.length && byte === latest[at]) continue;
    if (byte === 0) out.add('zeros');
    else if (!images.some((image) => image[at] === byte)) out.add('garbage');
  }
  return out;
}

interface Stats {
  states: number;
  /** States whose file ends in a whole line. */
  clean: number;
  /** States with a torn tail the reopen cut. */
  tails: number;
  /** States where the file's name was lost (only ever before anything was acknowledged). */
  missing: number;
  /** States the reopen refused as damage, by the filler that made the damaged line. */
  damage: Map<string, number>;
  /** Torn tails with zeros or garbage in them, dropped like any other, by filler. */
  filledTails: Map<string, number>;
}

const newStats = (): Stats => ({
  states: 0,
  clean: 0,
  tails: 0,
  missing: 0,
  damage: new Map(),
  filledTails: new Map(),
});

const count = (map: Map<string, number>, key: string): void => {
  map.set(key, (map.get(key) ?? 0) + 1);
};

/** A record no workload has: what the harness appends after each reopen. */
const AFTER = decided(turn('after-power-loss', 1));

/**
 * Writes `state` to the real file, opens it with the real backend and checks promises 1-4 (see
 * the top of this file). Gives the records the reopen found (`null` when it was damage).
 */
async function checkState(
  home: Home,
  state: CrashState,
  attempted: readonly Record[],
  acked: ReadonlySet<number>,
  context: string,
  stats: Stats,
  appendAfter = true,
  rejected: ReadonlySet<number> = new Set(),
): Promise<Record[] | null> {
  stats.states++;
  const { bytes } = state;
  if (bytes === null) rmSync(home.path, { force: true });
  else writeFileSync(home.path, bytes);
  // what the open must give, from the bytes alone: the attempted records' lines, in order (a missing file: none)
  const expected = bytes === null ? null : expectedOpen(bytes, attemptedLines(attempted));
  const whole = expected === null ? 0 : expected.kind === 'open' ? expected.lines : expected.line - 1;
  const expectation =
    expected === null ? 'no file' : expected.kind === 'open' ? `${whole} records` : `damage at line ${expected.line}`;
  for (const index of acked) {
    assert.ok(
      index < whole,
      `${context}: promise 1 broken: the acknowledged record ${index + 1} is not whole on disk in this crash state (${whole} whole lines)`,
    );
  }
  let ledger: Ledger;
  try {
    ledger = await Ledger.open(home.path);
  } catch (e) {
    if (expected?.kind === 'damaged' && e instanceof DamagedError && e.line === expected.line) {
      // the documented exception to promise 3: zeros or garbage, then a newline, in the last
      // write; or garbage at the start of a file with no whole line, which no writer's line begins with
      assert.ok(bytes !== null && readFileSync(home.path).equals(bytes), `${context}: a refused open changed the file`);
      const fillers = state.fillers();
      const where = bytes.indexOf(10) === -1 ? 'at the start of a file with no whole line: ' : '';
      count(stats.damage, `${where}${[...fillers].sort().join(' + ') || 'none'}`);
      assert.ok(fillers.size > 0, `${context}: damage in a state with no zeros or garbage in it`);
      return null;
    }
    assert.unreachable(`${context}: promise 3 broken: the reopen failed (${String(e)}); expected ${expectation}`);
    throw e;
  }
  try {
    assert.is(
      expected?.kind ?? 'open',
      'open',
      `${context}: the reopen took a damaged line for a record; expected ${expectation}`,
    );
    const found = await recordsOf(ledger);
    checkRecovered(found, { attempted, acked }, context, true);
    assert.is(found.length, whole, `${context}: records found`);
    // promise 2: an append rejected before the power loss (its failed lines cut, and the cut
    // synced) is not brought back by it
    for (const index of rejected) {
      assert.ok(
        index >= found.length,
        `${context}: promise 2 broken: record ${index + 1}, whose append was rejected before the power loss, is back`,
      );
    }
    checkJsonlRepair(bytes, existsSync(home.path) ? readFileSync(home.path) : null, found, ledger.repaired, context);
    await checkLedgerState(ledger, found, context);
    if (bytes === null) stats.missing++;
    else if (ledger.repaired === null) stats.clean++;
    else {
      stats.tails++;
      const fillers = state.fillers(ledger.repaired.at);
      if (fillers.size > 0) count(stats.filledTails, [...fillers].sort().join(' + '));
    }
    if (appendAfter) {
      await ledger.append(AFTER);
      await ledger.close();
      assert.ok(
        readFileSync(home.path).equals(Buffer.concat([fileOf(found), Buffer.from(lineOf(AFTER))])),
        `${context}: the append after the reopen does not follow the whole lines byte for byte`,
      );
    }
    return found;
  } finally {
    await ledger.close();
  }
}

function summary(name: string, stats: Stats): string {
  const list = (map: Map<string, number>): string =>
    [...map]
      .sort()
      .map(([why, n]) => `${n} ${why}`)
      .join(', ') || 'none';
  return (
    `  power loss, ${name} (SCALE ${SCALE}): ${stats.states} crash states: ${stats.clean} ending in a whole line, ${stats.tails} torn tails cut ` +
    `(with ${list(stats.filledTails)} in them), ${stats.missing} files missing; refused as damage (zeros or garbage then a newline in the unacknowledged write, ` +
    `or garbage where a file's first line begins): ${list(stats.damage)}`
  );
}

const totals = newStats();
function addTo(stats: Stats): void {
  totals.states += stats.states;
  totals.clean += stats.clean;
  totals.tails += stats.tails;
  totals.missing += stats.missing;
  for (const [why, n] of stats.damage) totals.damage.set(why, (totals.damage.get(why) ?? 0) + n);
  for (const [why, n] of stats.filledTails) totals.filledTails.set(why, (totals.filledTails.get(why) ?? 0) + n);
}

/** Every crash state of a workload's run: at every crash point, every outcome. Gives the torn states' records for the recovery test. */
async function enumerate(
  home: Home,
  name: string,
  plan: WorkloadPlan,
  every: boolean,
  combinations: number,
  stats: Stats,
  torn?: { state: CrashState; acked: ReadonlySet<number>; found: Record[] }[],
): Promise<{ readonly bytes: number }> {
  const run = await runWorkload(plan);
  const rng = new Random(plan.seed ^ 0x5eed);
  for (const point of run.points) {
    let n = 0;
    for (const state of crashStates(point, every, rng, combinations)) {
      const context = `power loss (${name}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${plan.seed}; crash after call ${point.call}, ${point.what}; state ${n++}: ${state.how})`;
      const found = await checkState(home, state, run.attempted, point.acked, context, stats, true, point.rejected);
      if (
        torn !== null &&
        torn !== undefined &&
        found !== null &&
        state.bytes !== null &&
        state.bytes.length > fileOf(found).length
      ) {
        torn.push({ state, acked: point.acked, found });
      }
    }
  }
  // the bytes of every line attempted: a run cut at every byte has at least one state for each
  return { bytes: run.attempted.reduce((sum, record) => sum + Buffer.byteLength(`${encodeRecord(record)}\n`), 0) };
}

test('every crash state of a ledger created, then 20 appends (cut at every byte)', async () => {
  await withFastHome(async (home) => {
    for (let w = 0; w < SCALE; w++) {
      const stats = newStats();
      const seed = CRASH_SEED * 100 + w;
      const rng = new Random(seed);
      const { bytes } = await enumerate(
        home,
        `20 appends, workload ${w}`,
        { seed, groups: groupsOf(rng, 20, [1, 1, 1, 2, 3]) },
        true,
        COMBINATIONS,
        stats,
      );
      console.log(summary(`20 appends, workload ${w}`, stats));
      addTo(stats);
      assert.ok(stats.states >= bytes, `only ${stats.states} states for ${bytes} bytes cut at every byte`);
    }
  });
});

test('crash states of 20 appends made in short writes: several writes pending, their sectors at any of their versions', async () => {
  await withFastHome(async (home) => {
    for (let w = 0; w < SCALE; w++) {
      const stats = newStats();
      const seed = CRASH_SEED * 100 + 50 + w;
      const rng = new Random(seed);
      await enumerate(
        home,
        `short writes, workload ${w}`,
        { seed, groups: groupsOf(rng, 20, [1, 1, 2, 3]), maxWrite: 201 + 61 * w },
        false,
        FEW_COMBINATIONS,
        stats,
      );
      console.log(summary(`short writes, workload ${w}`, stats));
      addTo(stats);
    }
  });
});

test('a power loss while a reopen repairs a torn tail, and while it appends after it', async () => {
  await withFastHome(async (home) => {
    const stats = newStats();
    let recovered = 0;
    for (let w = 0; w < SCALE; w++) {
      const seed = CRASH_SEED * 100 + 70 + w;
      const rng = new Random(seed);
      // torn states of a small workload, each reopened over the simulation and crashed again
      const torn: { state: CrashState; acked: ReadonlySet<number>; found: Record[] }[] = [];
      const first = newStats();
      await enumerate(
        home,
        `the first crash, workload ${w}`,
        { seed, groups: groupsOf(rng, 6, [1, 2, 3]) },
        false,
        COMBINATIONS,
        first,
        torn,
      );
      addTo(first);
      const chosen = torn.filter((_, n) => n % Math.max(1, Math.floor(torn.length / 40)) === 0);
      assert.ok(chosen.length >= 20, `only ${chosen.length} torn states to recover from (seed ${seed})`);
      for (const [t, { state, acked, found }] of chosen.entries()) {
        const plan: WorkloadPlan = {
          seed: seed * 1000 + t,
          groups: [1, 2],
          initial: state.bytes as Buffer,
          before: found,
          records: [decided(turn('recovery', 1)), decided(turn('recovery', 2)), decided(turn('recovery', 3))],
        };
        const run = await runWorkload(plan);
        const crashRng = new Random(plan.seed);
        for (const point of run.points) {
          let n = 0;
          for (const second of crashStates(point, false, crashRng)) {
            const context = `power loss during recovery (workload ${w}, torn state ${t}: ${state.how}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${plan.seed}; crash after call ${point.call}, ${point.what}; state ${n++}: ${second.how})`;
            await checkState(home, second, run.attempted, new Set([...acked, ...point.acked]), context, stats);
          }
        }
      }
      recovered += chosen.length;
    }
    console.log(summary(`recovery of ${recovered} torn tails, crashed again`, stats));
    addTo(stats);
  });
});

test('a failed fdatasync, then a power loss: the failed batch is whole or gone, nothing acknowledged is lost', async () => {
  await withFastHome(async (home) => {
    const stats = newStats();
    for (let w = 0; w < SCALE; w++) {
      const seed = CRASH_SEED * 100 + 80 + w;
      const groups = groupsOf(new Random(seed), 20, [1, 1, 2, 3]);
      for (let k = 1; k <= 20; k++) {
        const run = await runWorkload({ seed, groups, failDatasync: k });
        const rng = new Random(seed * 100 + k);
        // the points from the failed sync on (datasync k is the kth append's: the directory is synced apart)
        const failedAt = run.points.filter((p) => p.what === 'datasync')[k - 1];
        assert.ok(failedAt !== undefined, `no datasync ${k}`);
        const from = run.points.indexOf(failedAt);
        for (const point of run.points.slice(from)) {
          let n = 0;
          for (const state of crashStates(point, false, rng)) {
            const context = `power loss after a failed fdatasync (datasync ${k}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${seed}; crash after call ${point.call}, ${point.what}; state ${n++}: ${state.how})`;
            await checkState(home, state, run.attempted, point.acked, context, stats, true, point.rejected);
          }
        }
      }
    }
    console.log(
      summary(
        `a failed fdatasync then a power loss, at each of 20 appends (${SCALE} workload${SCALE === 1 ? '' : 's'})`,
        stats,
      ),
    );
    addTo(stats);
  });
});

test('a write that fails after whole lines of its batch landed, then a power loss: once rejected, the append never comes back', async () => {
  await withFastHome(async (home) => {
    const stats = newStats();
    for (let w = 0; w < SCALE; w++) {
      const seed = CRASH_SEED * 100 + 30 + w;
      // batches of 2-4 records written 100 bytes at a time: several writes per append, and a
      // failure at any of them, after whole lines of the batch were written, or before
      const groups = groupsOf(new Random(seed), 8, [2, 3, 4]);
      let writes = 0;
      for (let k = 1; ; k++) {
        const run = await runWorkload({ seed, groups, maxWrite: 100, failWrite: k });
        const failedAt = run.points.findIndex((p) => p.rejected.size > 0);
        if (failedAt === -1) break; // the workload made fewer than k writes
        writes = k;
        const rng = new Random(seed * 100 + k);
        for (const point of run.points.slice(failedAt)) {
          let n = 0;
          for (const state of crashStates(point, true, rng, FEW_COMBINATIONS)) {
            const context = `power loss after a failed write (write ${k}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${seed}; crash after call ${point.call}, ${point.what}; state ${n++}: ${state.how})`;
            await checkState(home, state, run.attempted, point.acked, context, stats, true, point.rejected);
          }
        }
      }
      assert.ok(writes > 8, `the workload made ${writes} writes: too few to fail inside its batches`);
    }
    console.log(
      summary(
        `a failed write then a power loss, at each write of 8 appends (${SCALE} workload${SCALE === 1 ? '' : 's'})`,
        stats,
      ),
    );
    addTo(stats);
  });
});

test('random crash states of random workloads', async () => {
  await withFastHome(async (home) => {
    const stats = newStats();
    const target = scaled(2500);
    for (let w = 0; stats.states < target; w++) {
      const seed = CRASH_SEED * 100_000 + 1000 + w;
      const rng = new Random(seed);
      const plan: WorkloadPlan = {
        seed,
        groups: groupsOf(rng, 5 + rng.below(30), [1, 1, 2, 3, 4, 8, 16]),
        // short writes of 41 to 600 bytes (no more than a hundred writes to an append)
        ...(rng.chance(0.3) ? { maxWrite: 41 + rng.below(560) } : {}),
      };
      const run = await runWorkload(plan);
      for (let s = 0; s < 50 && stats.states < target; s++) {
        const point = rng.pick(run.points);
        const state = randomState(point, rng);
        const context = `power loss, random (workload ${w}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${seed}; crash after call ${point.call}, ${point.what}; ${state.how})`;
        await checkState(home, state, run.attempted, point.acked, context, stats, rng.chance(0.5), point.rejected);
      }
    }
    console.log(summary('random states of random workloads', stats));
    addTo(stats);
  });
});

test('a batch of several records appended to the log itself: after a power loss, whole records of it in order', async () => {
  // The ledger's appends are one record each (a group-commit batch is many appends), so a
  // prefix of a batch is a prefix of the appends. The log's contract (lib/log.ts, "Atomic
  // batches") says more, for a batch given to `EventLog.append`: whole or not at all. Across a
  // power loss a JSONL batch torn at a newline keeps its first records: counted and reported.
  await withFastHome(async (home) => {
    const stats = newStats();
    const seed = CRASH_SEED * 100 + 90;
    const batch = [...workload({ records: 6, seed })];
    const io = new PowerLossIO();
    const points: Point[] = [];
    io.onCall = (what) =>
      points.push({ call: io.calls, what, files: io.crashPoint(), acked: new Set(), rejected: new Set() });
    const log = await jsonlBackend(SIM_PATH, { codec: honchoCodec, io }).open();
    await log.append(batch);
    await log.close();
    io.onCall = null;
    let partial = 0;
    let example = '';
    const rng = new Random(seed);
    for (const point of points) {
      // after the append's sync, the whole batch is acknowledged
      const synced = point.files.some((f) => f.pending.length === 0 && f.synced.length > 0);
      const acked = new Set(synced ? batch.map((_, n) => n) : []);
      let n = 0;
      for (const state of crashStates(point, true, rng)) {
        const context = `power loss, one log batch of ${batch.length} (seed ${seed}; crash after call ${point.call}, ${point.what}; state ${n++}: ${state.how})`;
        const found = await checkState(home, state, batch, acked, context, stats);
        if (found !== null && found.length > 0 && found.length < batch.length) {
          partial++;
          example ||= `${found.length} of ${batch.length} records kept (${state.how})`;
        }
      }
    }
    console.log(summary(`one log batch of ${batch.length} records`, stats));
    if (partial > 0) {
      // allowed, and said so: a JSONL batch is one write that a crash can cut at any line
      assert.not.ok(
        jsonlBackend(home.path, { codec: honchoCodec }).capabilities.atomicBatches,
        `a prefix of a batch was kept, e.g. ${example}`,
      );
      console.log(
        `  a batch cut at a line by the crash, its first records kept whole (atomicBatches: false): ${partial} of ${stats.states} states, e.g. ${example}`,
      );
    }
    addTo(stats);
  });
});

test('the count of crash states checked', () => {
  console.log(summary('all', totals));
  assert.ok(totals.states >= scaled(10_000), `${totals.states} crash states, fewer than ${scaled(10_000)}`);
});

test.run();
