/**
 * The rebuild benchmark, the third part of `make bench` (issue 14): what a rebuild of one
 * projection after a version bump costs memoryd while it runs.
 *
 * For synthetic ledgers of 1M and 10M records (`bench/workload.ts`), each copied first (the run
 * appends to it): the read model built with the turns projection of `test/support/turns-
 * projection.ts`; then memoryd's load (an append of a decided turn, then `isDecided`, a page of
 * the outbox and a `conclusion`, one after another) run with nothing rebuilding (idle), and run
 * again from an open with the projection's version bumped until its build in the background has
 * taken over, and idle again after the takeover (as many rounds as the rebuild took, at least
 * half the first idle ones: the idle figures are from both sides of it). Reported: the rebuild's
 * duration, and the p50/p99 of each kind of call, idle and during the rebuild, side by side.
 *
 * Then the soak of issue 14 on the 10M ledger (`test/support/soak.ts`, the same code as
 * `test/soak.test.ts`): memoryd's three consumers in real processes, a run with the read model
 * ready, a run killed while the turns projection's version bump is being built, and a run that
 * rebuilds it again and works until the outbox is drained, every round's answers compared with a
 * replay in memory at the same position. Reported: the rebuild's duration, the p50/p99 of the
 * consumers' calls idle and rebuilding, and each check.
 *
 * `node dist/bench/rebuild.js` runs both sizes and the soak, and writes the figures to
 * `bench/rebuild-results.json` and to `docs/read-model.md`'s generated sections `rebuild` and
 * `soak`; `--quick` runs only the load on 1M and writes nothing to the docs (their figures come
 * from a full run); `--soak` runs only the soak, and writes its section; `--load` runs only the
 * load on 1M and 10M, and writes its section.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Item } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import { SOAK_CALLS, type SoakCall, type SoakReport, soak } from '../test/support/soak.js';
import { turnsPerSession, turnsVersion2 } from '../test/support/turns-projection.js';
import { benchData, progress, progressDone, syntheticLedger, writeGeneratedSection } from './common.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const DATA = benchData(ROOT);
const SEED = 1;
/** Rounds of the load with nothing rebuilding. */
const IDLE_ROUNDS = 2000;
/** The ledger the soak runs on. */
const SOAK_RECORDS = 10_000_000;

type Call = SoakCall;
const CALLS = SOAK_CALLS;

/** The latencies of each kind of call, in ms. */
type Latencies = { [call in Call]: number[] };

interface Percentiles {
  readonly p50: number;
  readonly p99: number;
}

interface SizeResult {
  readonly records: number;
  readonly rebuildMs: number;
  readonly rounds: { readonly idle: number; readonly rebuilding: number };
  readonly idle: { readonly [call in Call]: Percentiles };
  readonly rebuilding: { readonly [call in Call]: Percentiles };
}

function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: Math.round(at(0.5) * 1000) / 1000, p99: Math.round(at(0.99) * 1000) / 1000 };
}

async function timed(latencies: number[], call: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await call();
  latencies.push(performance.now() - start);
}

/** One round of memoryd's load: a turn decided, then the queries its walk and its worker make. */
async function round(ledger: Ledger, n: number, latencies: Latencies, known: readonly Item[]): Promise<void> {
  await timed(latencies.append, () =>
    ledger.append({
      type: 'decided',
      time: '2026-12-01T12:00:00.000Z',
      item: { type: 'turn', session: `bench-${process.pid}`, turn: n },
      action: { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
    }),
  );
  await timed(latencies.isDecided, () => ledger.isDecided(known[n % known.length] as Item));
  await timed(latencies.outboxPage, () => ledger.outboxPage(100));
  await timed(latencies.conclusion, () => ledger.conclusion('trusted', `a fact ${n % 1000}`));
}

const noLatencies = (): Latencies => ({ append: [], isDecided: [], outboxPage: [], conclusion: [] });
const summed = (l: Latencies): { [call in Call]: Percentiles } =>
  Object.fromEntries(CALLS.map((c) => [c, percentiles(l[c])])) as { [call in Call]: Percentiles };

/**
 * Runs `body` on a copy of the synthetic ledger of `records` (the runs append to it) with the
 * read model's folder beside it, both in a scratch folder that is removed afterwards.
 */
async function withLedgerCopy<T>(
  records: number,
  what: string,
  body: (copy: string, index: string) => Promise<T>,
): Promise<T> {
  const { file } = await syntheticLedger(DATA, records, SEED);
  const scratch = fs.mkdtempSync(path.join(DATA, `${what}-${records}-`));
  try {
    const copy = path.join(scratch, 'honcho.jsonl');
    progress(`${what} on ${records}: copying the ledger`);
    fs.copyFileSync(file, copy);
    return await body(copy, path.join(scratch, 'index'));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function measureSize(records: number): Promise<SizeResult> {
  return withLedgerCopy(records, 'rebuild', async (copy, index) => {
    progress(`${records}: building the read model`);
    const options = { index, onNotice: () => undefined };
    let ledger = await Ledger.open(copy, { ...options, projections: [turnsPerSession], waitForIndex: true });
    const known: Item[] = [];
    for await (const { item } of ledger.decisions()) {
      known.push(item);
      if (known.length === 10_000) break;
    }
    progress(`${records}: the load, idle`);
    const idle = noLatencies();
    let n = 1;
    for (; n <= IDLE_ROUNDS; n++) await round(ledger, n, idle, known);
    await ledger.close();
    progress(`${records}: the load, while the turns projection is rebuilt`);
    const rebuilding = noLatencies();
    const start = performance.now();
    ledger = await Ledger.open(copy, { ...options, projections: [turnsVersion2] });
    let ready = false;
    const built = ledger.whenReady('turns').then(() => {
      ready = true;
    });
    let rounds = 0;
    while (!ready) {
      await round(ledger, n++, rebuilding, known);
      rounds++;
    }
    await built;
    const rebuildMs = Math.round(performance.now() - start);
    // idle again, right after the takeover: the machine's other load drifts over the minutes a
    // size takes, and idle rounds on both sides of the rebuild compare it with the same drift
    progress(`${records}: the load, idle again`);
    const idleAgain = Math.max(IDLE_ROUNDS / 2, rounds);
    for (let r = 0; r < idleAgain; r++) await round(ledger, n++, idle, known);
    await ledger.close();
    progressDone();
    return {
      records,
      rebuildMs,
      rounds: { idle: IDLE_ROUNDS + idleAgain, rebuilding: rounds },
      idle: summed(idle),
      rebuilding: summed(rebuilding),
    };
  });
}

const ms = (v: number): string => `${v.toFixed(3)} ms`;

function table(results: readonly SizeResult[]): string {
  const lines = [
    '| records | rebuild of one projection | call | p50 idle | p50 rebuilding | p99 idle | p99 rebuilding |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results)
    for (const call of CALLS)
      lines.push(
        `| ${r.records.toLocaleString('en-US')} | ${(r.rebuildMs / 1000).toFixed(1)} s (${r.rounds.rebuilding} rounds of load) | \`${call}\` | ${ms(r.idle[call].p50)} | ${ms(r.rebuilding[call].p50)} | ${ms(r.idle[call].p99)} | ${ms(r.rebuilding[call].p99)} |`,
      );
  return lines.join('\n');
}

/** The soak on a copy of the synthetic ledger of `records`: see the module's doc. */
function measureSoak(records: number): Promise<SoakReport> {
  return withLedgerCopy(records, 'soak', async (copy, index) => {
    progress(`soak on ${records}: building the read model`);
    await (await Ledger.open(copy, { index, projections: [turnsPerSession], waitForIndex: true })).close();
    progress(`soak on ${records}: memoryd's consumers, killed and restarted, while the turns projection is rebuilt`);
    const report = await soak({
      path: copy,
      index,
      journal: path.join(path.dirname(copy), 'honcho-journal'),
      // idle; killed during the build of version 2 (which the next open throws away); built
      // again, to the end
      runs: [
        { version: 1, killAfter: 20_000 },
        { version: 2, killAfter: 5000 },
        { version: 2, killAfter: null },
      ],
      killClock: 'open',
      checks: 'bounded',
      page: 500,
      // the run's ledger and its replay in memory, each of the whole 10M records
      nodeFlags: ['--max-old-space-size=12288'],
    });
    progressDone();
    return report;
  });
}

function soakText(records: number, report: SoakReport): string {
  const idle = summed(report.latencies.idle);
  const rebuilding = summed(report.latencies.rebuilding);
  const counted = (state: keyof SoakReport['latencies']): number =>
    SOAK_CALLS.reduce((n, call) => n + report.latencies[state][call].length, 0);
  // a call none of the runs made in that state (the soak's undos, all sent before a rebuild) has no figure
  const cell = (state: keyof SoakReport['latencies'], call: SoakCall, value: number): string =>
    report.latencies[state][call].length === 0 ? 'no calls' : ms(value);
  const rebuild =
    report.rebuildMs === null ? 'no rebuild in the last run' : `${(report.rebuildMs / 1000).toFixed(1)} s`;
  const lines = [
    `Measured by \`make bench\` on ${new Date().toISOString().slice(0, 10)} (\`bench/rebuild.ts\`, the soak of \`test/support/soak.ts\`) on ${records.toLocaleString('en-US')} records: the turns projection's version bump rebuilt in ${rebuild} (from the last run's open to its takeover), ${report.comparisons} comparisons of the answers with a replay in memory at the same position passed, ${report.acked.toLocaleString('en-US')} items acknowledged by the fake Honcho.`,
    '',
    '| run | turns version | ended | calls while a projection was being built |',
    '|---|---|---|---|',
    ...report.runs.map(
      (r, n) =>
        `| ${n} | ${r.version} | ${r.ended === 'SIGKILL' ? 'killed (SIGKILL)' : r.ended} | ${r.rebuildingCalls} |`,
    ),
    '',
    '| check | passed |',
    '|---|---|',
    ...report.checks.map((c) => `| ${c.name} | ${c.passed ? 'yes' : '**no**'} |`),
    `| every run's answers equal the replay's | ${report.failures.length === 0 ? 'yes' : `**no**: ${report.failures.join('; ')}`} |`,
    '',
    `| call | p50 idle | p50 rebuilding | p99 idle | p99 rebuilding |`,
    '|---|---|---|---|---|',
    ...SOAK_CALLS.map(
      (call) =>
        `| \`${call}\` | ${cell('idle', call, idle[call].p50)} | ${cell('rebuilding', call, rebuilding[call].p50)} | ${cell('idle', call, idle[call].p99)} | ${cell('rebuilding', call, rebuilding[call].p99)} |`,
    ),
    '',
    `(${counted('idle')} calls idle, ${counted('rebuilding')} while a projection was being built.)`,
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  fs.mkdirSync(DATA, { recursive: true });
  if (!quick && !process.argv.includes('--load')) {
    const report = await measureSoak(SOAK_RECORDS);
    const text = soakText(SOAK_RECORDS, report);
    console.log(text);
    writeGeneratedSection(path.join(ROOT, 'docs', 'read-model.md'), 'soak', text);
    if (report.failures.length > 0) process.exitCode = 1;
    if (process.argv.includes('--soak')) return;
  }
  const sizes = quick ? [1_000_000] : [1_000_000, 10_000_000];
  const results: SizeResult[] = [];
  for (const size of sizes) results.push(await measureSize(size));
  const text = table(results);
  console.log(text);
  fs.writeFileSync(path.join(ROOT, 'bench', 'rebuild-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  if (quick) return;
  writeGeneratedSection(
    path.join(ROOT, 'docs', 'read-model.md'),
    'rebuild',
    `Measured by \`make bench\` on ${new Date().toISOString().slice(0, 10)} (\`bench/rebuild.ts\`): memoryd's load (an append, then \`isDecided\`, a page of the outbox, a \`conclusion\`), idle (before the rebuild and after its takeover) and while one projection's version bump is rebuilt in the background.\n\n${text}`,
  );
}

await main();
