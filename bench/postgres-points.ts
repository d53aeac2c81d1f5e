/**
 * The PostgreSQL backend's point queries, a part of `bench/postgres.ts`: `isDecided`,
 * `sentIds` and `conclusion` through the public `Ledger` opened read-only on a log (the runs of
 * `bench/measure-points.ts`, in this process), each beside the bare point read of the same
 * server, a primary-key `SELECT` of one record's line at positions spread through the log.
 * Printed as µs per query, their ratio, the goal of `bench/targets.ts` and whether it is met.
 *
 * @module
 */
import pg from 'pg';
import { now } from './common.js';
import { pointQuery } from './measure-points.js';
import type { PointQuery } from './results-schema.js';
import { TARGETS } from './targets.js';

/** Queries of each kind per round, at most (a round has a time budget), and the rounds; the best is kept. */
const QUERIES = 2000;
const ROUNDS = 3;

/** `n` primary-key `SELECT`s of one line of the log at `uri` (in `table`), after as many untimed: µs each. */
async function bareSelects(uri: string, table: string, records: number, n: number): Promise<number> {
  const log = new URL(uri).searchParams.get('log');
  const client = new pg.Client({ connectionString: uri.replace(/[?&](log|schema)=[^&]*/g, '') });
  await client.connect();
  try {
    const select = { name: 'bench-point', text: `SELECT line FROM ${table} WHERE log = $1 AND position = $2` };
    const pass = async (): Promise<number> => {
      const start = now();
      for (let i = 0; i < n; i++) {
        const { rows } = await client.query({ ...select, values: [log, Math.floor((i * records) / n)] });
        if (rows.length !== 1) throw new Error(`${log}: no record at ${Math.floor((i * records) / n)}`);
      }
      return ((now() - start) * 1e6) / n;
    };
    await pass();
    return await pass();
  } finally {
    await client.end();
  }
}

/** Measures and prints the point queries on the log at `uri` (in `table`), of `records` records. */
export async function pointQueries(uri: string, table: string, records: number): Promise<void> {
  const queries: PointQuery[] = ['isDecided', 'sentIds', 'conclusion'];
  let bare = Number.POSITIVE_INFINITY;
  const best = new Map<PointQuery, number>();
  for (let round = 0; round < ROUNDS; round++) {
    bare = Math.min(bare, await bareSelects(uri, table, records, QUERIES));
    for (const query of queries) {
      const { count, seconds } = await pointQuery(uri, query, QUERIES);
      best.set(query, Math.min(best.get(query) ?? Number.POSITIVE_INFINITY, (seconds * 1e6) / count));
    }
  }
  const { timesBare, micros } = TARGETS.points;
  for (const query of queries) {
    const us = best.get(query) as number;
    const ratio = us / bare;
    console.log(
      `point query ${query}() on ${records} records: ${us.toFixed(1)} µs; bare primary-key SELECT ${bare.toFixed(1)} µs; ${ratio.toFixed(2)}x (goal ≤ ${timesBare}x and ≤ ${micros} µs: ${ratio <= timesBare && us <= micros ? 'met' : 'not met'})`,
    );
  }
}
