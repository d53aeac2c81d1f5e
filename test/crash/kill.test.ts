/**
 * Process kill (issue 5): a child process (test/support/crash-child.ts) appends realistic records
 * (`workload`) from several concurrent, un-awaited appenders, so that group commit batches them,
 * and reports each append the moment it resolves; the parent SIGKILLs it at a random moment,
 * reopens the ledger and checks promises 1-4:
 *
 * 1. every acknowledged append is there;
 * 2. what is there is exactly the first records of the workload, each whole (the file order is
 *    the call order), nothing else;
 * 3. the reopen succeeds, and a JSONL file loses at most a tail with no newline (cut from the
 *    file, and reported in `repair`), the rest byte for byte the canonical lines;
 * 4. the records keep the rules (replayed by the open, and re-checked here), and the ledger
 *    answers as a fresh replay does;
 *
 * then appends the workload's next record itself and checks that it follows, byte for byte.
 * With a read model (`index`), promise 5 too: the reopen catches the read model up (never a
 * rebuild, which would mean it was ahead of the log or half written), and it answers as a
 * fresh replay does.
 *
 * Trials run in chains on one ledger: each child reopens what the last trial left, so that a
 * reopen after a kill is itself killed now and then. The moment of each kill is chosen from the
 * seed: after a random number of acknowledgements, a random few milliseconds after the child is
 * ready, or a few milliseconds into its open. Where the kill lands is the kernel's timing, so a
 * failing trial prints its seed and plan, not a replay guarantee. Each child is started while
 * the trial before it runs, and waits for `go`: Node's start-up is most of a trial's cost.
 *
 * Counts: JSONL `scaled(60)` trials, LevelDB (`level:<folder>`) `scaled(10)`, JSONL with a read
 * model `scaled(10)`: a trial is a child process, most of `make test`'s CPU here; `make torture`
 * runs ten times as many.
 */

import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import { Ledger, type LedgerOptions, type Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { checkJsonlRepair, checkLedgerState, checkRecovered, fileOf, recordsOf } from '../support/guarantees.js';
import { type Home, withHome } from '../support/ledger.js';
import { SCALE, scaled } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

const CHILD = fileURLToPath(new URL('../support/crash-child.js', import.meta.url));
/**
 * Each child appends at most this many records, and says `done`: a kill timer that fires late
 * (a loaded machine, a run under c8) must not let one trial use up the chain's workload.
 */
const PER_CHILD = 700;
const TRIALS_PER_CHAIN = 10;
/** Records in each chain's workload: more than its trials can append, the parent's one each included. */
const RECORDS = TRIALS_PER_CHAIN * (PER_CHILD + 1) + 1000;
/** A trial that takes longer than this is stuck: a child that neither appends nor dies. */
const STUCK_MS = 30_000;

type Backend = 'jsonl' | 'level' | 'jsonl+index';

type Plan =
  | { readonly kind: 'acks'; readonly acks: number }
  | { readonly kind: 'ready'; readonly ms: number }
  | { readonly kind: 'open'; readonly ms: number };

interface TrialPlan {
  readonly plan: Plan;
  readonly appenders: number;
}

function planTrial(rng: Random): TrialPlan {
  const appenders = rng.pick([1, 2, 3, 4, 8, 16, 32, 256]);
  const r = rng.below(100);
  const plan: Plan =
    r < 45
      ? { kind: 'acks', acks: rng.below(150) }
      : r < 85
        ? { kind: 'ready', ms: rng.below(9) }
        : { kind: 'open', ms: rng.below(6) };
  return { plan, appenders };
}

/** A child, started and loading, waiting for `go`. */
class Child {
  readonly process: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Resolves once the child is gone and everything it wrote was read. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  onLine: (line: string) => void = () => undefined;
  stderr = '';
  private buffered = '';

  constructor(args: readonly string[]) {
    this.process = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.process.stdin.on('error', () => undefined); // a child killed before it read `go`
    this.process.stdout.setEncoding('utf8');
    this.process.stderr.setEncoding('utf8');
    this.process.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.process.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let newline = this.buffered.indexOf('\n'); newline !== -1; newline = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.onLine(line);
      }
    });
    this.closed = new Promise((resolve) => this.process.once('close', (code, signal) => resolve({ code, signal })));
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  kill(): void {
    this.process.kill('SIGKILL');
  }
}

interface Stats {
  trials: number;
  acknowledged: number;
  /** Records found after a kill that had not been acknowledged (written, not yet reported). */
  unacknowledgedFound: number;
  /** Reopens that cut a torn tail. */
  tornTails: number;
  /** Children killed before they were ready (during their own open). */
  killedInOpen: number;
}

/** Where a chain's ledger lives, how the child and the parent name it, and how they open it. */
interface Place {
  readonly path: string;
  readonly target: string;
  readonly options: LedgerOptions;
  readonly childArgs: (seed: number, appenders: number) => string[];
  readonly notices: string[];
}

function placeIn(home: Home, backend: Backend): Place {
  const notices: string[] = [];
  const path = backend === 'level' ? join(home.dir, 'honcho.level') : home.path;
  const target = backend === 'level' ? `level:${path}` : path;
  const index = join(home.dir, 'honcho.index');
  const options: LedgerOptions =
    backend === 'jsonl+index' ? { index, onNotice: (message) => notices.push(message) } : {};
  const childArgs = (seed: number, appenders: number): string[] => [
    target,
    String(seed),
    String(RECORDS),
    String(appenders),
    String(PER_CHILD),
    ...(backend === 'jsonl+index' ? [index] : []),
  ];
  return { path, target, options, childArgs, notices };
}

/** Runs one trial's child until it is killed; gives what it acknowledged and whether it got ready. */
async function runChild(
  child: Child,
  plan: Plan,
  size: number,
  acked: Set<number>,
  context: string,
): Promise<{ ready: boolean }> {
  let ready: number | null = null;
  let killed = false;
  const kill = (): void => {
    if (killed) return;
    killed = true;
    child.kill();
  };
  let wasStuck = false;
  const stuck = setTimeout(() => {
    wasStuck = true;
    kill();
  }, STUCK_MS);
  let acks = 0;
  const protocol: string[] = [];
  child.onLine = (line) => {
    const ack = /^ack (\d+)$/.exec(line);
    if (ack !== null) {
      const n = Number(ack[1]);
      if (n < size || n >= RECORDS || ready === null)
        protocol.push(`an ack of record ${n} (the ledger held ${size}, ready ${ready})`);
      acked.add(n);
      acks++;
      if (plan.kind === 'acks' && acks >= plan.acks) kill();
      return;
    }
    const said = /^ready (\d+)$/.exec(line);
    if (said !== null) {
      ready = Number(said[1]);
      if (plan.kind === 'acks' && plan.acks === 0) kill();
      if (plan.kind === 'ready') setTimeout(kill, plan.ms);
      return;
    }
    if (line === 'done') kill();
    else protocol.push(`an unexpected line: ${line}`);
  };
  child.process.stdin.write('go\n');
  if (plan.kind === 'open') setTimeout(kill, plan.ms);
  const { signal } = await child.closed;
  clearTimeout(stuck);
  assert.not.ok(
    wasStuck,
    `${context}: the child was stuck for ${STUCK_MS / 1000} s (ready ${ready}, ${acks} acknowledgements), neither appending nor done`,
  );
  assert.is(signal, 'SIGKILL', `${context}: the child ended by itself (${signal}), saying: ${child.stderr}`);
  assert.equal(protocol, [], `${context}: the child's reports`);
  if (ready !== null)
    assert.is(ready, size, `${context}: the child opened the ledger with ${ready} records, not the ${size} it holds`);
  return { ready: ready !== null };
}

/** One chain of trials on one ledger. */
async function chain(home: Home, backend: Backend, index: number, stats: Stats): Promise<void> {
  const seed = CRASH_SEED * 1000 + index;
  const place = placeIn(home, backend);
  const records: Record[] = [...workload({ records: RECORDS, seed })];
  const rng = new Random(seed * 7919 + ['jsonl', 'level', 'jsonl+index'].indexOf(backend));
  const plans = Array.from({ length: TRIALS_PER_CHAIN }, () => planTrial(rng));
  const acked = new Set<number>();
  let size = 0; // what the ledger holds after the parent's last append
  const children: Child[] = [];
  const start = (t: number): Child => {
    const child = new Child(place.childArgs(seed, (plans[t] as TrialPlan).appenders));
    children.push(child);
    return child;
  };
  try {
    let next = start(0);
    for (const [t, { plan, appenders }] of plans.entries()) {
      const context = `kill harness (${backend}, chain ${index}, trial ${t}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED}, seed ${seed}, plan ${JSON.stringify(plan)}, ${appenders} appenders)`;
      const child = next;
      // the next child loads while this one runs and is checked
      const running = runChild(child, plan, size, acked, context);
      if (t + 1 < plans.length) next = start(t + 1);
      const { ready } = await running;
      if (!ready) stats.killedInOpen++;

      const before = backend !== 'level' && existsSync(place.path) ? readFileSync(place.path) : null;
      let ledger: Ledger;
      try {
        ledger = await Ledger.open(place.target, place.options);
      } catch (e) {
        assert.unreachable(`${context}: promise 3 broken: the reopen after the kill failed: ${String(e)}`);
        throw e;
      }
      try {
        const found = await recordsOf(ledger);
        checkRecovered(found, { attempted: records, acked }, context, true);
        if (backend !== 'level') {
          checkJsonlRepair(
            before,
            existsSync(place.path) ? readFileSync(place.path) : null,
            found,
            ledger.repaired,
            context,
          );
        } else {
          assert.is(ledger.repaired, null, `${context}: a LevelDB log has nothing to repair`);
        }
        if (ledger.repaired !== null) stats.tornTails++;
        // promise 4, and with a read model promise 5: the state is a fresh replay's
        await checkLedgerState(ledger, found, context);
        assert.equal(
          place.notices.filter((n) => n.includes('rebuilding')),
          [],
          `${context}: promise 5 broken: the read model was rebuilt after a kill (it was ahead of the log, or half written)`,
        );
        stats.unacknowledgedFound += found.filter((_, n) => n >= size && !acked.has(n)).length;

        // ... and appends again: the workload's next record follows
        assert.ok(found.length < RECORDS, `${context}: the workload ran out`);
        await ledger.append(records[found.length] as Record);
        acked.add(found.length);
        size = found.length + 1;
        assert.is(ledger.size, size, `${context}: the append after the reopen`);
      } finally {
        await ledger.close();
      }
      if (backend !== 'level') {
        assert.ok(
          readFileSync(place.path).equals(fileOf(records.slice(0, size))),
          `${context}: the append after the reopen does not follow the old lines byte for byte`,
        );
      }
      stats.trials++;
    }
  } finally {
    // a failed check leaves children behind: they must not outlive the test
    for (const child of children) if (child.alive) child.kill();
    await Promise.all(children.map((child) => child.closed));
  }
  stats.acknowledged += acked.size;

  // the chain's end: read back once more, by a reader
  const reader = await Ledger.open(place.target, { ...place.options, readOnly: true });
  try {
    const found = await recordsOf(reader);
    checkRecovered(
      found,
      { attempted: records, acked },
      `kill harness (${backend}, chain ${index}; seed ${seed}), read back at the end`,
      true,
    );
    assert.is(found.length, size);
    await checkLedgerState(
      reader,
      found,
      `kill harness (${backend}, chain ${index}; seed ${seed}), read back at the end`,
    );
  } finally {
    await reader.close();
  }
}

/** Runs `trials` trials in chains, two chains at a time (two cores: each trial is mostly its child). */
async function run(backend: Backend, trials: number): Promise<Stats> {
  const stats: Stats = { trials: 0, acknowledged: 0, unacknowledgedFound: 0, tornTails: 0, killedInOpen: 0 };
  const chains = Math.ceil(trials / TRIALS_PER_CHAIN);
  let nextChain = 0;
  const worker = async (): Promise<void> => {
    for (let c = nextChain++; c < chains; c = nextChain++) await withHome((home) => chain(home, backend, c, stats));
  };
  await Promise.all([worker(), worker()]);
  console.log(
    `  kill harness, ${backend} (SCALE ${SCALE}): ${stats.trials} trials, ${stats.acknowledged} acknowledged appends kept, ` +
      `${stats.unacknowledgedFound} unacknowledged found whole, ${stats.tornTails} torn tails cut, ${stats.killedInOpen} kills during the child's open`,
  );
  return stats;
}

test(`JSONL: ${scaled(60)} children killed while appending; every acknowledged append survives, the rest is whole or gone`, async () => {
  const stats = await run('jsonl', scaled(60));
  assert.is(stats.trials, scaled(60));
});

test(`LevelDB: ${scaled(10)} children killed while appending; every acknowledged append survives, nothing to repair`, async () => {
  const stats = await run('level', scaled(10));
  assert.is(stats.trials, scaled(10));
});

test(`JSONL with a read model: ${scaled(10)} children killed; the read model catches up and answers as a replay`, async () => {
  const stats = await run('jsonl+index', scaled(10));
  assert.is(stats.trials, scaled(10));
});

test.run();
