/**
 * Signals at every step of the LevelDB commands (issue 10): `index build` of a new read model,
 * `index rebuild` of one that is up to date, `index build` that catches one up (two batches, the
 * first marking it unfinished), and `copy` into a new `level:` folder. Each command is the CLI's
 * real process (`dist/lib/cli.js`) under a preload that numbers its steps (every LevelDB open,
 * close and batch write, every file created, written, synced, renamed or deleted:
 * `test/support/phase-hook.ts`); a trial stops it before step n and sends SIGKILL, SIGINT or
 * SIGTERM there, or sends one at a moment of its run taken at random (inside LevelDB's own
 * calls). Then the promise:
 *
 * - a read model: the ledger, opened with it, answers as a fresh replay does (every digest of
 *   `verify --index`, each item's state included) and refuses every rule-breaking record
 *   offered (`test/support/index-promises.ts`): never trusted while wrong, rebuilt with a notice
 *   when it cannot be caught up;
 * - a copy: the target is missing, empty, or a ledger holding the source's first records,
 *   whole, in whole batches of the copy; never refused as damaged, and writable.
 *
 * Counts: `scaled(5)` stops per command, spread evenly over its steps, the first and last
 * included (every step with each signal once the count reaches three times its steps), and
 * `scaled(1)` signal at a random moment of its run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../../backends/jsonl-write-whole.js';
import { syntheticLines } from '../../lib/honcho/synthetic.js';
import { type AnswerDigests, encodeRecord, Ledger, type Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { recordsOf } from '../support/guarantees.js';
import { checkIndexPromise, type IndexOutcome, replayDigests, ruleBreakers } from '../support/index-promises.js';
import { reportFigures } from '../support/level-figures.js';
import { scaled } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

const CLI = fileURLToPath(new URL('../../lib/cli.js', import.meta.url));
const HOOK = fileURLToPath(new URL('../support/phase-hook.js', import.meta.url));
/** Records in the ledger: more than one batch of a build (10,000), so that a build marks itself unfinished. */
const RECORDS = 14_000;
/** A copy appends in batches of this many records (lib/copy.ts). */
const COPY_BATCH = 10_000;
const SIGNALS: readonly NodeJS.Signals[] = ['SIGKILL', 'SIGINT', 'SIGTERM'];
/** A run that takes longer than this is stuck. */
const STUCK_MS = 60_000;

interface Ran {
  readonly steps: string[];
  /** The step it was stopped at, when a signal was sent there. */
  readonly stopped: string | null;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Runs the CLI under the hook in `cwd`; stops it before step `stopAt` (or `afterMs` into its run) with `signal`. */
function runCli(args: readonly string[], kill: Kill | null): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', HOOK, CLI, ...args], {
      // fd 3: the hook's steps; fd 4: the word that the signal was sent (test/support/phase-hook.ts)
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, LEDGERSTORE_STOP_AT: String(kill !== null && 'stopAt' in kill ? kill.stopAt : 0) },
    });
    const steps: string[] = [];
    let stopped: string | null = null;
    let stderr = '';
    let buffered = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const go = child.stdio[4] as NodeJS.WritableStream & Readable;
    go.on('error', () => undefined); // the child may die with it open: that is the point
    const phases = child.stdio[3] as Readable;
    phases.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const [word, , ...what] = line.split(' ');
        steps.push(what.join(' '));
        if (word === 'stop' && kill !== null) {
          stopped = what.join(' ');
          child.kill(kill.signal);
          go.write('sent\n', () => undefined);
        }
      }
    });
    const timer = kill !== null && 'afterMs' in kill ? setTimeout(() => child.kill(kill.signal), kill.afterMs) : null;
    const stuck = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the command was stuck for ${STUCK_MS / 1000} s: ${args.join(' ')}`));
    }, STUCK_MS);
    child.once('close', (code, signal) => {
      clearTimeout(stuck);
      if (timer !== null) clearTimeout(timer);
      resolve({ steps, stopped, code, signal, stderr });
    });
  });
}

/** A command of the harness: the state it starts from (a folder, made once), its arguments there, and the check after a kill. */
interface Scenario {
  readonly name: string;
  /** Makes the starting state in `dir` (the ledger is there already). */
  prepare(dir: string): Promise<void>;
  args(dir: string): string[];
  /** Checks the promise in `dir` after the run; gives the outcome's name. */
  check(dir: string, context: string): Promise<string>;
}

/** What every scenario shares: the ledger's records and what a replay answers. */
interface Base {
  readonly records: readonly Record[];
  readonly digests: AnswerDigests;
  readonly breakers: readonly Record[];
}

const log = (dir: string): string => join(dir, 'honcho.jsonl');
const index = (dir: string): string => join(dir, 'index');
const target = (dir: string): string => join(dir, 'copy.level');

async function buildIndex(dir: string, upTo?: number): Promise<void> {
  if (upTo !== undefined) {
    // a read model of the first records only: made on a log cut short, then the log put back
    const whole = readFileSync(log(dir));
    const lines = whole.toString('utf8').split('\n').slice(0, upTo);
    const shortLog = join(dir, 'short.jsonl');
    writeFileSync(shortLog, `${lines.join('\n')}\n`);
    const ledger = await Ledger.open(shortLog, { index: index(dir), onNotice: () => undefined });
    await ledger.close();
    rmSync(shortLog);
    return;
  }
  const ledger = await Ledger.open(log(dir), { index: index(dir), onNotice: () => undefined });
  await ledger.close();
}

function scenarios(base: Base): Scenario[] {
  const indexCheck = async (dir: string, context: string): Promise<string> =>
    checkIndexPromise(log(dir), index(dir), base.breakers, base.digests, context);
  return [
    {
      name: 'index build',
      prepare: async () => undefined,
      args: (dir) => ['index', 'build', log(dir), '--index', index(dir)],
      check: indexCheck,
    },
    {
      name: 'index rebuild',
      prepare: (dir) => buildIndex(dir),
      args: (dir) => ['index', 'rebuild', log(dir), '--index', index(dir)],
      check: indexCheck,
    },
    {
      name: 'catch-up',
      prepare: (dir) => buildIndex(dir, 2_000),
      args: (dir) => ['index', 'build', log(dir), '--index', index(dir)],
      check: indexCheck,
    },
    {
      name: 'copy into a level: folder',
      prepare: async () => undefined,
      args: (dir) => ['copy', log(dir), `level:${target(dir)}`],
      check: async (dir, context) => {
        if (!existsSync(target(dir))) return 'nothing';
        let reader: Ledger;
        try {
          reader = await Ledger.open(`level:${target(dir)}`, { readOnly: true });
        } catch (e) {
          return assert.unreachable(`${context}: the copy's target does not open: ${String(e)}`) as never;
        }
        const found = await recordsOf(reader).finally(() => reader.close());
        assert.ok(
          found.length % COPY_BATCH === 0 || found.length === base.records.length,
          `${context}: the target holds ${found.length} records, not whole batches of the copy`,
        );
        found.forEach((record, n) =>
          assert.is(
            encodeRecord(record),
            encodeRecord(base.records[n] as Record),
            `${context}: record ${n + 1} of the target`,
          ),
        );
        const writer = await Ledger.open(`level:${target(dir)}`);
        await writer.close();
        return found.length === 0 ? 'empty' : found.length === base.records.length ? 'whole' : 'whole batches';
      },
    },
  ];
}

/** Where a trial sends its signal: before a step, or some milliseconds into the run. */
type Kill =
  | { readonly stopAt: number; readonly signal: NodeJS.Signals }
  | { readonly afterMs: number; readonly signal: NodeJS.Signals };

/** The trials of a scenario whose dry run took `steps`: stops before steps spread over them, and timed kills. */
function trialsOf(steps: number, durationMs: number, rng: Random): Kill[] {
  const stops = scaled(5);
  const chosen: number[] = [];
  if (stops >= steps * SIGNALS.length) {
    for (let n = 1; n <= steps; n++) for (let s = 0; s < SIGNALS.length; s++) chosen.push(n);
  } else {
    for (let k = 0; k < stops; k++) chosen.push(1 + Math.round((k * (steps - 1)) / Math.max(1, stops - 1)));
  }
  const trials: Kill[] = chosen.map((stopAt, k) => ({ stopAt, signal: SIGNALS[k % SIGNALS.length] as NodeJS.Signals }));
  for (let k = 0; k < scaled(1); k++)
    trials.push({ afterMs: 40 + rng.below(Math.max(1, Math.round(durationMs))), signal: rng.pick(SIGNALS) });
  return trials;
}

test(`signals at every step of index build, rebuild, a catch-up and copy to level: leave nothing trusted while wrong (${scaled(5)} steps and ${scaled(1)} random moments each)`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-signals-'));
  const figures: string[] = [];
  try {
    const baseDir = join(home, 'base');
    mkdirSync(baseDir);
    await writeJsonlWhole(log(baseDir), syntheticLines({ records: RECORDS, seed: CRASH_SEED }));
    const reader = await Ledger.open(log(baseDir), { readOnly: true });
    const records = await recordsOf(reader);
    await reader.close();
    const base: Base = { records, digests: await replayDigests(log(baseDir)), breakers: ruleBreakers(records) };
    const rng = new Random(CRASH_SEED * 31 + 7);
    for (const scenario of scenarios(base)) {
      const start = join(home, scenario.name.replace(/\W+/g, '-'));
      cpSync(baseDir, start, { recursive: true });
      await scenario.prepare(start);
      // the dry run: how many steps the command takes, and how long
      const dry = join(home, 'dry');
      cpSync(start, dry, { recursive: true });
      const began = performance.now();
      const ran = await runCli(scenario.args(dry), null);
      const durationMs = performance.now() - began;
      assert.is(ran.code, 0, `${scenario.name}: the dry run failed: ${ran.stderr}`);
      await scenario.check(dry, `${scenario.name}, its dry run`);
      rmSync(dry, { recursive: true, force: true });
      const outcomes = new Map<string, number>();
      const bySignal = new Map<string, number>();
      let stoppedAtSteps = 0;
      for (const [t, trial] of trialsOf(ran.steps.length, durationMs, rng).entries()) {
        const dir = join(home, `trial-${t}`);
        cpSync(start, dir, { recursive: true });
        const when =
          'stopAt' in trial
            ? `before step ${trial.stopAt} of ${ran.steps.length} (${ran.steps[trial.stopAt - 1]})`
            : `${trial.afterMs} ms in`;
        const context = `signal harness (${scenario.name}, trial ${t}: ${trial.signal} ${when}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
        const run = await runCli(scenario.args(dir), trial);
        if (run.stopped !== null) stoppedAtSteps++;
        const outcome: IndexOutcome | string = await scenario.check(dir, context);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        bySignal.set(trial.signal, (bySignal.get(trial.signal) ?? 0) + 1);
        rmSync(dir, { recursive: true, force: true });
      }
      const trials = [...bySignal.values()].reduce((a, b) => a + b, 0);
      figures.push(
        `${scenario.name}: ${trials} trials over its ${ran.steps.length} steps (${stoppedAtSteps} stopped at a step; ${SIGNALS.map((s) => `${bySignal.get(s) ?? 0} ${s}`).join(', ')}), ` +
          [...outcomes].map(([name, n]) => `${n} ${name}`).join(', '),
      );
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures('signals', `${figures.join('; ')}; no failure`);
});

test.run();
