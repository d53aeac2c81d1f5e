/**
 * What the PostgreSQL benchmarks (`bench/postgres.ts`, `bench/postgres-scale.ts`) share: the
 * record they append, a measured rate, the bare commit loop every append figure stands beside,
 * and the read-only open a child process times.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresBackend } from '../backends/postgres/index.js';
import { fillLedger } from '../lib/copy.js';
import { encodeRecord, honchoCodec } from '../lib/honcho/codec.js';
import type { Record } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import { progress, progressDone, syntheticLedger } from './common.js';

/** The bare loop's commits, in every run. */
export const BARE = 2000;

export const now = (): number => performance.now() / 1000;
export const record = (who: string, n: number, why = 'bench'): Record => ({
  type: 'decided',
  time: '2026-09-28T10:00:00.000Z',
  item: { type: 'turn', session: `bench-${who}`, turn: n },
  action: n % 4 === 0 ? { type: 'skip', why } : { type: 'turn', workspace: 'trusted', speaker: why },
});

export interface Rate {
  readonly count: number;
  readonly seconds: number;
  /** What the appends met on the way, when counted. */
  readonly met?: Met;
}

/**
 * What a ledger's appends met: the log's appends (batches) it made, the conflicts among them,
 * and others' records its appends went past; and, for the log, the transactions that wrote it.
 */
export interface Met {
  appends: number;
  conflicts: number;
  passed: number;
  commits?: number;
}

export const perSecond = ({ count, seconds }: Rate): number => count / seconds;

/** `n` single-row INSERTs, each its own commit, `synchronous_commit` on. */
export async function bareCommits(uri: string, table: string, n: number): Promise<Rate> {
  const client = new pg.Client({ connectionString: uri.replace(/[?&](log|schema)=[^&]*/g, '') });
  await client.connect();
  try {
    await client.query('SET synchronous_commit = on');
    const line = encodeRecord(record('bare', 1));
    const start = now();
    for (let i = 0; i < n; i++) await client.query(`INSERT INTO ${table} (line) VALUES ($1)`, [line]);
    return { count: n, seconds: now() - start };
  } finally {
    await client.end();
  }
}

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

export async function replay(uri: string): Promise<Rate> {
  const start = now();
  const ledger = await Ledger.open(uri, { readOnly: true });
  const seconds = now() - start;
  const count = ledger.size;
  await ledger.close();
  return { count, seconds };
}

/** `uri` (of log bench-bare) for another log. */
export function logUriSync(uri: string, log: string): string {
  const url = new URL(uri);
  url.searchParams.set('log', log);
  return url.href;
}

/**
 * The log `log` beside the one `base` names, filled with the synthetic ledger of `records`
 * records (generated into `bench/data/` once, as the other benchmarks' are); gives its URI.
 */
export async function filledLog(base: string, log: string, records: number): Promise<string> {
  const dataDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const { file } = await syntheticLedger(dataDir, records, 1);
  const uri = logUriSync(base, log);
  const source = await Ledger.open(file, { readOnly: true });
  const start = now();
  await fillLedger(postgresBackend(uri, { codec: honchoCodec }), source.records(), (n) =>
    progress(`filling ${log}: ${n}`),
  );
  progressDone();
  await source.close();
  console.log(`filled ${log} in ${(now() - start).toFixed(1)} s (copyLedger's path: 10,000 records per append)`);
  return uri;
}
