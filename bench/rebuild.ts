/**
 * The rebuild benchmark, the third part of `make bench` (issue 14): what a rebuild of one
 * projection after a version bump costs memoryd while it runs.
 *
 * For synthetic ledgers of 1M and 10M records (`bench/workload.ts`), each copied first (the run
 * appends to it): the read model built with the turns projection of `test/support/turns-
 * projection.ts`; then memoryd's load (an append of a decided turn, then `isDecided`, a page of
 * the outbox and a `conclusion`, one after another) run with nothing rebuilding (idle), and run
 * again from an open with the projection's version bumped until its build in the background has
 * taken over. Reported: the rebuild's duration, and the p50/p99 of each kind of call, idle and
 * during the rebuild, side by side.
 *
 * `node dist/bench/rebuild.js` runs both sizes and writes the figures to
 * `bench/rebuild-results.json` and to `docs/read-model.md`'s generated section `rebuild`;
 * `--quick` runs only 1M and writes nothing to the docs (their figures come from a full run).
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Item } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import { turnsPerSession, turnsVersion2 } from '../test/support/turns-projection.js';
import { progress, progressDone, syntheticLedger, writeGeneratedSection } from './common.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const DATA = path.join(ROOT, 'bench', 'data');
const SEED = 1;
/** Rounds of the load with nothing rebuilding. */
const IDLE_ROUNDS = 2000;

type Call = 'append' | 'isDecided' | 'outboxPage' | 'conclusion';
const CALLS: readonly Call[] = ['append', 'isDecided', 'outboxPage', 'conclusion'];

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

async function measureSize(records: number): Promise<SizeResult> {
  const { file } = await syntheticLedger(DATA, records, SEED);
  const scratch = fs.mkdtempSync(path.join(DATA, `rebuild-${records}-`));
  try {
    const copy = path.join(scratch, 'honcho.jsonl');
    const index = path.join(scratch, 'index');
    progress(`${records}: copying the ledger`);
    fs.copyFileSync(file, copy);
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
    await ledger.close();
    progressDone();
    return {
      records,
      rebuildMs,
      rounds: { idle: IDLE_ROUNDS, rebuilding: rounds },
      idle: summed(idle),
      rebuilding: summed(rebuilding),
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
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

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const sizes = quick ? [1_000_000] : [1_000_000, 10_000_000];
  fs.mkdirSync(DATA, { recursive: true });
  const results: SizeResult[] = [];
  for (const size of sizes) results.push(await measureSize(size));
  const text = table(results);
  console.log(text);
  fs.writeFileSync(path.join(ROOT, 'bench', 'rebuild-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  if (quick) return;
  writeGeneratedSection(
    path.join(ROOT, 'docs', 'read-model.md'),
    'rebuild',
    `Measured by \`make bench\` on ${new Date().toISOString().slice(0, 10)} (\`bench/rebuild.ts\`): memoryd's load (an append, then \`isDecided\`, a page of the outbox, a \`conclusion\`), idle and while one projection's version bump is rebuilt in the background.\n\n${text}`,
  );
}

await main();
