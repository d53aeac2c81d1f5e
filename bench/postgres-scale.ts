/**
 * `node dist/bench/postgres.js --scale`: what `docs/scaling.md` projects from (the lock's hold
 * time by batch size, 1 to 64 writers on one log, the storage a record takes and the read-only
 * open of that log), on the server `bench/postgres.ts` names. Figures go to stdout.
 *
 * @module
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresBackend } from '../backends/postgres/index.js';
import { fillLedger } from '../lib/copy.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import { workload } from '../lib/honcho/synthetic.js';
import { Ledger } from '../lib/ledger.js';
import { logUri, pgServer } from '../test/support/pg-cluster.js';
import { childSays } from './common.js';
import { BARE, bareCommits, logUriSync, now, percentile, perSecond, type Rate, record } from './postgres-common.js';

/** The PostgreSQL benchmark, whose `--child replay` times the read-only open. */
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'postgres.js');

/** Mean seconds of `n` calls of `call`, one after another. */
async function meanSeconds(n: number, call: (k: number) => Promise<unknown>): Promise<number> {
  const start = now();
  for (let k = 0; k < n; k++) await call(k);
  return (now() - start) / n;
}

/** `writers` callers, each with a session (a `Ledger`, or a raw log appending blind) of its own, `each` records apiece. */
async function writersAppend(
  uri: string,
  writers: number,
  each: number,
  through: 'ledger' | 'raw',
  admin: pg.Client,
): Promise<{ rate: number; p50: number; p99: number; sessions: number }> {
  const opened = await Promise.all(
    Array.from({ length: writers }, async () =>
      through === 'ledger' ? await Ledger.open(uri) : await postgresBackend(uri, { codec: honchoCodec }).open(),
    ),
  );
  const latencies: number[] = [];
  try {
    const start = now();
    await Promise.all(
      opened.map(async (writer, w) => {
        for (let n = 0; n < each; n++) {
          const r = record(`w${w}`, n);
          const at = now();
          if (writer instanceof Ledger) await writer.append(r);
          else await writer.append([r]);
          latencies.push((now() - at) * 1000);
        }
      }),
    );
    const seconds = now() - start;
    latencies.sort((a, b) => a - b);
    const { rows } = await admin.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'ledgerstore-%'",
    );
    return {
      rate: (writers * each) / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      sessions: Number(rows[0]?.n) / writers,
    };
  } finally {
    await Promise.all(opened.map((writer) => writer.close()));
  }
}

/** Measures and prints the figures of `--scale`. */
export async function scale(): Promise<void> {
  const { schema } = await pgServer();
  const base = await logUri('scale-bare');
  const plain = base.replace(/[?&](log|schema)=[^&]*/g, '');
  const admin = new pg.Client({ connectionString: plain });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await admin.query(`CREATE TABLE IF NOT EXISTS "${schema}".bench_bare (line text NOT NULL)`);
    const bare = perSecond(await bareCommits(base, `"${schema}".bench_bare`, BARE));
    const roundTrip = await meanSeconds(500, () => admin.query('SELECT 1'));
    console.log(
      `bare commit loop ${Math.round(bare)}/s (${(1000 / bare).toFixed(2)} ms a commit); a SELECT 1 round trip ${(roundTrip * 1000).toFixed(3)} ms`,
    );

    const records = [...workload({ records: 20_000, seed: 5 })];
    const log = await postgresBackend(logUriSync(base, `scale-batches-${process.pid}`), { codec: honchoCodec }).open();
    try {
      let at = 0;
      for (const [size, calls] of [
        [1, 400],
        [16, 200],
        [128, 60],
        [1024, 12],
      ] as const) {
        const seconds = await meanSeconds(calls, async () => {
          await log.append(records.slice(at % 10_000, (at % 10_000) + size));
          at += size;
        });
        console.log(
          `batches of ${size}: an append ${(seconds * 1000).toFixed(2)} ms, the lock held about ${((seconds - roundTrip) * 1000).toFixed(2)} ms; one session ${Math.round(size / seconds)} records/s`,
        );
      }
    } finally {
      await log.close();
    }

    // 100 Ledgers would need more sessions than the test cluster's max_connections (200)
    for (const writers of [1, 4, 16, 64]) {
      const each = Math.max(20, Math.round(2000 / writers));
      const ledger = await writersAppend(
        logUriSync(base, `scale-ledgers-${writers}-${process.pid}`),
        writers,
        each,
        'ledger',
        admin,
      );
      const raw = await writersAppend(
        logUriSync(base, `scale-raw-${writers}-${process.pid}`),
        writers,
        each,
        'raw',
        admin,
      );
      console.log(
        `${writers} writers, ${each} records each: Ledger ${Math.round(ledger.rate)} records/s (p50 ${ledger.p50.toFixed(1)} ms, p99 ${ledger.p99.toFixed(1)} ms, ${ledger.sessions.toFixed(1)} sessions a writer); raw sessions without expectedHead ${Math.round(raw.rate)}/s (p50 ${raw.p50.toFixed(1)} ms, p99 ${raw.p99.toFixed(1)} ms)`,
      );
    }

    const filled = `scale-size-${process.pid}`;
    const sized = [...workload({ records: 100_000, seed: 7 })];
    await fillLedger(postgresBackend(logUriSync(base, filled), { codec: honchoCodec }), sized);
    const { rows } = await admin.query<{ bytes: string; lines: string }>(
      `SELECT pg_total_relation_size('"${schema}".records')::text AS bytes,
              (SELECT sum(octet_length(line)) FROM "${schema}".records WHERE log = $1)::text AS lines`,
      [filled],
    );
    const { rows: counted } = await admin.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}".records`);
    const total = Number(counted[0]?.n);
    const bytes = Number(rows[0]?.bytes);
    console.log(
      `storage: ${Math.round(bytes / total)} bytes a record, tables and indexes (${total} records in the schema; this log's lines average ${Math.round(Number(rows[0]?.lines) / sized.length)} bytes)`,
    );
    const opened = await childSays<Rate>([SCRIPT, '--child', 'replay', logUriSync(base, filled)], 'replay');
    console.log(`read-only open of 100k records: ${Math.round(perSecond(opened))} records/s`);
  } finally {
    await admin.end();
  }
}
