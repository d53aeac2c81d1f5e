/**
 * The soak of issue 14, shared by its two sizes: `test/soak.test.ts` (short, `make test`) and
 * `bench/rebuild.ts --soak` (a 10M-record ledger). It runs memoryd's three consumers
 * (`soak-child.ts`) in real processes, killed at the given moments and restarted, with the turns
 * projection's version of each run, and then checks what the runs left: the outbox drained, no
 * item decided twice, Honcho never sent an item again once its outcome was acknowledged, and
 * every undo deleting an id Honcho gave for its fact. The answers themselves are checked by each
 * run, against a replay in memory at the same position.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { itemKey, Ledger } from '../../lib/index.js';

const CHILD = fileURLToPath(new URL('./soak-child.js', import.meta.url));

/** The calls of memoryd's consumers that a run times. */
export const SOAK_CALLS = ['append', 'isDecided', 'outboxPage', 'conclusion'] as const;
export type SoakCall = (typeof SOAK_CALLS)[number];

/** The latencies, in ms, of each call: while every projection was ready, and while one was built. */
export interface SoakLatencies {
  readonly idle: { [call in SoakCall]: number[] };
  readonly rebuilding: { [call in SoakCall]: number[] };
}

/** One run of the consumers. */
export interface SoakRun {
  /** The turns projection's version it opens with. */
  readonly version: 1 | 2;
  /** Killed (SIGKILL) this many ms after it started (or after its open, see `killClock`); `null`: to the end. */
  readonly killAfter: number | null;
}

export interface SoakOptions {
  /** The ledger (a JSONL file) and its read model, built already. */
  readonly path: string;
  readonly index: string;
  /** Honcho's journal (a file the runs append to). */
  readonly journal: string;
  readonly runs: readonly SoakRun[];
  /** When a kill's clock starts: at the spawn (kills fall in the open too), or once the run has opened. */
  readonly killClock: 'spawn' | 'open';
  /**
   * `every round`: each round compares every answer, the whole outbox and every decision
   * included. `bounded`: each round compares the soak's items, the counts and the outbox's first
   * page, and the whole comparison is made at the end of a run (a 10M ledger's decisions are too
   * many to compare each round).
   */
  readonly checks: 'every round' | 'bounded';
  /** The items of a page of the outbox that the worker sends at a time. */
  readonly page: number;
  /** Flags for the runs' Node.js (a larger heap for a large ledger). */
  readonly nodeFlags?: readonly string[];
}

/** What a soak found. */
export interface SoakReport {
  /** What went wrong, each with its run; empty when every check passed. */
  readonly failures: readonly string[];
  /** How many comparisons with the replay passed, over every run. */
  readonly comparisons: number;
  /** The checks made of what the runs left, by name, and whether each passed. */
  readonly checks: readonly { readonly name: string; readonly passed: boolean }[];
  readonly latencies: SoakLatencies;
  /** The ms from the last run's open to the rebuilt projection's takeover, when that run rebuilt one. */
  readonly rebuildMs: number | null;
  /** Each run: how it ended, and how many of its calls were made while a projection was being built. */
  readonly runs: readonly { readonly version: number; readonly ended: string; readonly rebuildingCalls: number }[];
  /** How many items Honcho acknowledged. */
  readonly acked: number;
}

const noLatencies = (): { [call in SoakCall]: number[] } => ({
  append: [],
  isDecided: [],
  outboxPage: [],
  conclusion: [],
});

interface Ended {
  readonly out: string;
  readonly code: number | null;
  readonly signal: string | null;
}

function runOnce(options: SoakOptions, run: SoakRun): Promise<Ended> {
  const args = [
    options.path,
    options.index,
    String(run.version),
    options.journal,
    options.checks,
    String(options.page),
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), CHILD, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let timer: NodeJS.Timeout | null = null;
    const arm = (): void => {
      if (run.killAfter !== null && timer === null) timer = setTimeout(() => child.kill('SIGKILL'), run.killAfter);
    };
    if (options.killClock === 'spawn') arm();
    child.stdout.on('data', (data: Buffer) => {
      out += data.toString();
      if (options.killClock === 'open' && /^open$/m.test(out)) arm();
    });
    child.once('exit', (code, signal) => {
      if (timer !== null) clearTimeout(timer);
      resolve({ out, code, signal });
    });
  });
}

/** Runs the soak; see the module's doc. Throws only when the ledger cannot be opened at the end. */
export async function soak(options: SoakOptions): Promise<SoakReport> {
  const failures: string[] = [];
  const latencies: SoakLatencies = { idle: noLatencies(), rebuilding: noLatencies() };
  let comparisons = 0;
  let rebuildMs: number | null = null;
  const runs: { version: number; ended: string; rebuildingCalls: number }[] = [];
  for (const [n, run] of options.runs.entries()) {
    const { out, code, signal } = await runOnce(options, run);
    const context = `run ${n} (turns version ${run.version})`;
    const lines = out.split('\n').filter((l) => l !== '');
    let rebuildingCalls = 0;
    let readyMs: number | null = null;
    for (const line of lines) {
      const [word, state, call, value] = line.split(' ');
      if (word === 'took' && (state === 'idle' || state === 'rebuilding')) {
        latencies[state][call as SoakCall].push(Number(value));
        if (state === 'rebuilding') rebuildingCalls++;
      } else if (word === 'compared') comparisons++;
      else if (word === 'ready') readyMs = Number(state);
      else if (word === 'mismatch' || word === 'mismatch:') failures.push(`${context}: ${line}`);
    }
    runs.push({ version: run.version, ended: signal ?? `exit ${String(code)}`, rebuildingCalls });
    if (n === options.runs.length - 1 && rebuildingCalls > 0) rebuildMs = readyMs;
    if (run.killAfter === null && (code !== 0 || lines.at(-1) !== 'done'))
      failures.push(`${context}: ended with ${String(code ?? signal)}, not done: ${lines.slice(-3).join(' / ')}`);
    if (run.killAfter !== null && signal !== 'SIGKILL' && code !== 0)
      failures.push(`${context}: ended with ${String(code ?? signal)}: ${lines.slice(-3).join(' / ')}`);
  }
  const checks: { name: string; passed: boolean }[] = [];
  const checked = (name: string, passed: boolean): void => {
    checks.push({ name, passed });
    if (!passed) failures.push(`after the runs: ${name} does not hold`);
  };
  const ledger = await Ledger.open(options.path, { index: options.index, onNotice: () => undefined });
  try {
    checked('the outbox drained', (await ledger.outboxPage(1)).decisions.length === 0);
    const decided = new Set<string>();
    let twice = 0;
    for await (const record of ledger.records()) {
      if (record.type !== 'decided') continue;
      const key = itemKey(record.item);
      if (decided.has(key)) twice++;
      decided.add(key);
    }
    checked('no item decided twice', twice === 0);
  } finally {
    await ledger.close();
  }
  const acked = new Set<string>();
  const given = new Map<string, string>();
  let resent = 0;
  let wrongDeletes = 0;
  for (const line of readFileSync(options.journal, 'utf8').split('\n')) {
    if (line === '') continue;
    const [verb, rest] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    if (verb === 'received' && acked.has(rest)) resent++;
    if (verb === 'acked') acked.add(rest);
    if (verb === 'gave') given.set(rest.slice(0, rest.indexOf(' ')), rest.slice(rest.indexOf(' ') + 1));
    if (verb === 'delete') {
      const [id, text] = [rest.slice(0, rest.indexOf(' ')), rest.slice(rest.indexOf(' ') + 1)];
      if (id !== '-' && given.get(id) !== text) wrongDeletes++;
    }
  }
  checked('Honcho never received an item after its outcome was acknowledged', resent === 0);
  checked('every undo deleted an id Honcho gave for its fact', wrongDeletes === 0);
  checked('Honcho was sent items', acked.size > 0);
  return { failures, comparisons, checks, latencies, rebuildMs, runs, acked: acked.size };
}
