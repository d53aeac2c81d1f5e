/**
 * The PostgreSQL backend's benchmark (`make bench-postgres`): each figure beside its limit on
 * this machine and server, measured in the same run, and the ratio of the two.
 *
 * - Appends, against a bare loop of single-row `INSERT`s in autocommit with
 *   `synchronous_commit` on (one WAL flush per commit, the least a durable append costs),
 *   and the WAL bytes a commit writes, for each (`pg_current_wal_lsn` before and after):
 *   one appender awaiting each `Ledger.append`; 16 appenders at once in one process (which the
 *   ledger group-commits: its appends to the log and their records each are counted); 4 processes at once, 16 appenders each, through `Ledger` (with
 *   `expectedHead` and their items as keys: going past each other's records, catching up on a
 *   conflict), with what their appends met (the log's appends, the conflicts among them, the
 *   others' records they went past, the transactions that wrote the log: fewer than its appends
 *   where batches shared a commit), after which the log is checked: every record there, no
 *   item decided twice. Each append round also counts the server's WAL flushes (`pg_stat_wal`).
 * - Replay: `Ledger.open(uri, { readOnly: true })` of a 1M-record ledger (copied from the
 *   synthetic JSONL ledger once, untimed), against a bare `COPY (SELECT line ...) TO STDOUT`
 *   of the same rows through `psql`.
 * - Point queries (`bench/postgres-points.ts`): `isDecided`, `sentIds` and `conclusion` on a
 *   200,000-record log, each beside a primary-key `SELECT` of one record's line.
 * - Follow latency: from `append` resolving to a follower in another process (a read-only log's
 *   `watch`, then `read`) having the record, p50 and p99.
 *
 * With `--scale`, instead, what `docs/scaling.md` projects from (`bench/postgres-scale.ts`):
 *
 * - the lock's hold time by batch size: one session appending batches of 1, 16, 128, 1024
 *   records one after another; the log's row lock is held from the statement's start to its
 *   commit's WAL flush, so the hold is the append's round trip less a `SELECT 1`'s;
 * - writers: 1 to 64 `Ledger`s (a session each) deciding items of their own on one log, each
 *   awaiting its appends: records/s, the append latency's p50 and p99, and beside it the same
 *   number of raw sessions appending without `expectedHead` (what the ledger's check-again on
 *   conflict costs);
 * - the storage a record takes (table and indexes, from a log of 100k synthetic records) and
 *   the read-only open of that log.
 *
 * The server is the one `LEDGERSTORE_PG_URL` names, else a throwaway cluster
 * (`test/support/pg-cluster.ts`, fsync on). Figures go to stdout; nothing here judges them.
 *
 *     node dist/bench/postgres.js [--replay <records>] [--points <records>] [--only <parts>]
 *     (default 1,000,000 replayed, 200,000 queried; every part)
 *     node dist/bench/postgres.js --scale
 *
 * `--only` runs some of the parts, comma-separated: `single`, `wal`, `many`, `processes`,
 * `follow`, `replay`, `points`. (`--child ...` is how it runs a measuring process.)
 *
 * @module
 */
import { execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresBackend } from '../backends/postgres/index.js';
import { ConflictError } from '../lib/errors.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import type { Record } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import type { AppendOptions, EventLog, LogBackend } from '../lib/log.js';
import { checkRules } from '../test/support/guarantees.js';
import { logUri, pgServer } from '../test/support/pg-cluster.js';
import { childSays, progress, progressDone } from './common.js';
import {
  BARE,
  bareCommits,
  filledLog,
  logUriSync,
  type Met,
  now,
  percentile,
  perSecond,
  type Rate,
  record,
  replay,
} from './postgres-common.js';
import { pointQueries } from './postgres-points.js';
import { scale } from './postgres-scale.js';

const SCRIPT = fileURLToPath(import.meta.url);
const SINGLE = 2000;
const CONCURRENT = 8000;
const APPENDERS = 16;
const PROCESSES = 4;
const PER_PROCESS = 4000;
const FOLLOWED = 400;
/** Commits whose WAL is measured, for the bare loop and for `Ledger.append`. */
const WAL_COMMITS = 500;
/** Rounds of each append measurement, taking turns with the bare loop; the median ratio is reported. */
const ROUNDS = 3;
/** The parts of a run, for `--only`. */
const PARTS = ['single', 'wal', 'many', 'processes', 'follow', 'replay', 'points'];

/** How many transactions wrote the records of the log at `uri` (their distinct `xmin`): one flush each. */
async function commitsOf(uri: string): Promise<number> {
  const url = new URL(uri);
  const client = new pg.Client({ connectionString: uri.replace(/[?&](log|schema)=[^&]*/g, '') });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM "${url.searchParams.get('schema') ?? 'ledgerstore'}".records WHERE log = $1`,
      [url.searchParams.get('log')],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** `backend`, whose logs count in `met` what their appends meet. */
function counting(backend: LogBackend<Record>, met: Met): LogBackend<Record> {
  const countAppend = async (log: EventLog<Record>, records: readonly Record[], options?: AppendOptions) => {
    met.appends++;
    try {
      const appended = await log.append(records, options);
      met.passed += appended.passed?.length ?? 0;
      return appended;
    } catch (e) {
      if (e instanceof ConflictError) met.conflicts++;
      throw e;
    }
  };
  return {
    ...backend,
    open: async (options) => {
      const log = await backend.open(options);
      return new Proxy(log, {
        get(target, property) {
          if (property === 'append')
            return (records: readonly Record[], options?: AppendOptions) => countAppend(target, records, options);
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}
/** `n` records appended to a fresh log by `appenders` callers at once (1: each awaited). */
async function ledgerAppends(uri: string, who: string, n: number, appenders: number, met?: Met): Promise<Rate> {
  const ledger = await Ledger.open(
    met === undefined ? uri : counting(postgresBackend(uri, { codec: honchoCodec }), met),
  );
  try {
    let next = 0;
    const start = now();
    await Promise.all(
      Array.from({ length: appenders }, async () => {
        while (next < n) await ledger.append(record(who, next++));
      }),
    );
    return { count: n, seconds: now() - start, ...(met === undefined ? {} : { met }) };
  } finally {
    await ledger.close();
  }
}

/** A child: appends when told to go, says its rate and what its appends met. */
async function appendChild(uri: string, who: string, n: number, appenders: number): Promise<void> {
  const ledger = await Ledger.open(uri);
  await ledger.close(); // the log's row made, before the parent's clock starts
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const rate = await ledgerAppends(uri, who, n, appenders, { appends: 0, conflicts: 0, passed: 0 });
  process.stdout.write(`${JSON.stringify(rate)}\n`);
}

/** `PROCESSES` children appending to one log at once: the records of all over the time from go to the last done. */
async function processAppends(uri: string, round: number): Promise<Rate> {
  const children = Array.from({ length: PROCESSES }, (_, p) =>
    spawn(
      process.execPath,
      [SCRIPT, '--child', 'append', uri, `p${round}-${p}`, String(PER_PROCESS), String(APPENDERS)],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const lines = children.map((child) => {
    child.stdout.setEncoding('utf8');
    const said: string[] = [];
    let buffered = '';
    const waiters: (() => void)[] = [];
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        said.push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        waiters.splice(0).forEach((w) => w());
      }
    });
    return async (n: number): Promise<string> => {
      while (said.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return said[n - 1] as string;
    };
  });
  await Promise.all(lines.map((line) => line(1)));
  const start = now();
  for (const child of children) child.stdin.write('go\n');
  const said = await Promise.all(lines.map((line) => line(2)));
  const seconds = now() - start;
  for (const child of children) child.stdin.end();
  await noneDecidedTwice(uri, PROCESSES * PER_PROCESS);
  const met: Met = { appends: 0, conflicts: 0, passed: 0, commits: await commitsOf(uri) };
  for (const line of said) {
    const child = (JSON.parse(line) as Rate).met;
    met.appends += child?.appends ?? 0;
    met.conflicts += child?.conflicts ?? 0;
    met.passed += child?.passed ?? 0;
  }
  return { count: PROCESSES * PER_PROCESS, seconds, met };
}

/** Throws unless the log at `uri` holds exactly `count` records, which keep the rules: no item decided twice. */
async function noneDecidedTwice(uri: string, count: number): Promise<void> {
  const ledger = await Ledger.open(uri, { readOnly: true }); // its open checks every record against the rules
  try {
    const records: Record[] = [];
    for await (const r of ledger.records()) records.push(r);
    checkRules(records, uri);
    if (records.length !== count) throw new Error(`${uri}: ${records.length} records, not the ${count} appended`);
  } finally {
    await ledger.close();
  }
}

/** A follower child: watches, reads each new record, and says how long after its append it had it. */
async function followChild(uri: string, count: number): Promise<void> {
  const log = await postgresBackend(uri, { codec: honchoCodec }).open({ readOnly: true });
  let next = log.head;
  const latencies: number[] = [];
  let reading = Promise.resolve();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  await log.watch({
    onHead: () => {
      reading = reading.then(async () => {
        for await (const r of log.read(next)) {
          const seen = performance.timeOrigin + performance.now();
          next++;
          if (r.type === 'decided' && r.action.type === 'skip') latencies.push(seen - Number(r.action.why));
          else if (r.type === 'decided' && r.action.type === 'turn') latencies.push(seen - Number(r.action.speaker));
        }
        if (latencies.length >= count) done();
      });
    },
  });
  process.stdout.write('ready\n');
  await finished;
  await log.close();
  process.stdout.write(`${JSON.stringify(latencies)}\n`);
}

async function followLatency(uri: string): Promise<number[]> {
  const child = spawn(process.execPath, [SCRIPT, '--child', 'follow', uri, String(FOLLOWED)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  let out = '';
  const ready = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('ready\n')) resolve();
    }),
  );
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const log = await postgresBackend(uri, { codec: honchoCodec }).open();
  await ready;
  for (let n = 0; n < FOLLOWED; n++) {
    // the time of the append's call, in the record: the follower's clock is the same machine's
    await log.append([record('follow', n, String(performance.timeOrigin + performance.now()))]);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await log.close();
  await closed;
  return (JSON.parse(out.slice(out.indexOf('ready\n') + 6)) as number[]).sort((a, b) => a - b);
}

/** The psql next to the server's binaries (or on PATH). */
function psql(): string {
  try {
    return path.join(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim(), 'psql');
  } catch {
    return 'psql';
  }
}

/** `COPY` of the log's lines to stdout, in CSV with delimiters no canonical line has (text format would double backslashes), read by psql into /dev/null. */
function bareCopyOut(uri: string, schema: string, log: string): Rate {
  const plain = uri.replace(/[?&](log|schema)=[^&]*/g, '');
  const start = now();
  const out = execFileSync(
    psql(),
    [
      plain,
      '-X',
      '-q',
      '-c',
      `COPY (SELECT line FROM "${schema}".records WHERE log = '${log}' ORDER BY position) TO STDOUT (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`,
    ],
    {
      maxBuffer: 1 << 30,
    },
  );
  const seconds = now() - start;
  let count = 0;
  for (let at = out.indexOf(10); at !== -1; at = out.indexOf(10, at + 1)) count++;
  return { count, seconds };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const replayAt = process.argv.indexOf('--replay');
  const replayRecords = replayAt === -1 ? 1_000_000 : Number(process.argv[replayAt + 1]);
  const onlyAt = process.argv.indexOf('--only');
  const parts = new Set(onlyAt === -1 ? PARTS : (process.argv[onlyAt + 1] ?? '').split(','));
  const { schema } = await pgServer();
  const base = await logUri('bench-bare');
  const admin = new pg.Client({ connectionString: base.replace(/[?&](log|schema)=[^&]*/g, '') });
  await admin.connect();
  const settings = (
    await admin.query<{ v: string }>(
      "SELECT current_setting('server_version') || ', fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit') AS v",
    )
  ).rows[0]?.v;
  await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await admin.query(`CREATE TABLE IF NOT EXISTS "${schema}".bench_bare (line text NOT NULL)`);
  console.log(`PostgreSQL ${settings}; Node ${process.version}`);

  /** The server's WAL flushes so far (`pg_stat_wal`, this session's counts sent first; ended sessions have sent theirs); NaN before PostgreSQL 15. */
  const walFlushes = async (): Promise<number> => {
    try {
      await admin.query('SELECT pg_stat_force_next_flush()');
      await admin.query('SELECT 1');
      return Number((await admin.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal')).rows[0]?.n);
    } catch {
      return Number.NaN; // a server before 15 does not count them so
    }
  };
  const rows: [string, number, number][] = [];
  const measure = async (what: string, engine: (round: number) => Promise<Rate>, bareCount: number): Promise<void> => {
    const ratios: number[] = [];
    const rates: number[] = [];
    const bares: number[] = [];
    const mets: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      progress(`${what}: round ${round + 1} of ${ROUNDS}`);
      const bare = perSecond(await bareCommits(base, `"${schema}".bench_bare`, bareCount));
      const flushedBefore = await walFlushes();
      const measured = await engine(round);
      const flushes = (await walFlushes()) - flushedBefore;
      const rate = perSecond(measured);
      bares.push(bare);
      rates.push(rate);
      ratios.push(rate / bare);
      const { met } = measured;
      if (met !== undefined)
        mets.push(
          `${met.appends} appends to the log (${(measured.count / met.appends).toFixed(1)} records each) in ${met.commits ?? '?'} commits, ${met.conflicts} conflicts, ${met.passed} records gone past, ${flushes} WAL flushes`,
        );
    }
    progressDone();
    rows.push([what, median(rates), median(bares)]);
    console.log(
      `${what}: ${Math.round(median(rates))} records/s; bare commit loop ${Math.round(median(bares))}/s; ratio ${median(ratios).toFixed(2)}x (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
    );
    if (mets.length > 0) console.log(`  rounds: ${mets.join('; ')}`);
  };
  if (parts.has('single'))
    await measure(
      'appends, 1 writer',
      (round) => ledgerAppends(logUriSync(base, `single-${round}`), `single-${round}`, SINGLE, 1),
      BARE,
    );
  const walOf = async (commits: number, body: () => Promise<unknown>): Promise<number> => {
    const lsn = async (): Promise<string> =>
      (await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn ?? '0/0';
    const before = await lsn();
    await body();
    const { rows } = await admin.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1, $2)::text AS bytes', [
      await lsn(),
      before,
    ]);
    return Number(rows[0]?.bytes) / commits;
  };
  if (parts.has('wal')) {
    const walBare = await walOf(WAL_COMMITS, () => bareCommits(base, `"${schema}".bench_bare`, WAL_COMMITS));
    const walAppend = await walOf(WAL_COMMITS, () => ledgerAppends(logUriSync(base, 'wal'), 'wal', WAL_COMMITS, 1));
    console.log(
      `WAL a commit, 1 writer: Ledger.append ${Math.round(walAppend)} bytes; bare INSERT ${Math.round(walBare)} bytes (${WAL_COMMITS} commits each, the server's only writer)`,
    );
  }
  if (parts.has('many'))
    await measure(
      `appends, ${APPENDERS} at once in one process`,
      async (round) => {
        // counted, for the batches the ledger's queue makes while one append is in flight
        const met: Met = { appends: 0, conflicts: 0, passed: 0 };
        const uri = logUriSync(base, `many-${round}`);
        const rate = await ledgerAppends(uri, `many-${round}`, CONCURRENT, APPENDERS, met);
        met.commits = await commitsOf(uri);
        return rate;
      },
      BARE,
    );
  if (parts.has('processes'))
    await measure(
      `appends, ${PROCESSES} processes x ${APPENDERS} at once`,
      (round) => processAppends(logUriSync(base, `procs-${round}`), round),
      BARE,
    );

  if (parts.has('follow')) {
    const latencies = await followLatency(logUriSync(base, 'follow'));
    console.log(
      `follow latency (append resolved -> a follower process has it), ${latencies.length} records: p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, max ${(latencies.at(-1) ?? 0).toFixed(2)} ms`,
    );
  }
  if (parts.has('replay')) {
    const replayLog = `replay-${replayRecords}`;
    const replayUri = await filledLog(base, replayLog, replayRecords);
    const copies: number[] = [];
    const replays: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      copies.push(perSecond(bareCopyOut(base, schema, replayLog)));
      replays.push(perSecond(await childSays<Rate>([SCRIPT, '--child', 'replay', replayUri], 'replay')));
    }
    const ratio = median(replays) / median(copies);
    console.log(
      `replay of ${replayRecords} records: ${Math.round(median(replays))} records/s; bare COPY out ${Math.round(median(copies))} rows/s; ratio ${ratio.toFixed(2)}x`,
    );
  }
  if (parts.has('points')) {
    const pointsAt = process.argv.indexOf('--points');
    const records = pointsAt === -1 ? 200_000 : Number(process.argv[pointsAt + 1]);
    await pointQueries(await filledLog(base, `points-${records}`, records), `"${schema}".records`, records);
  }
  await admin.end();
}

const [flag, kind, ...rest] = process.argv.slice(2);
if (flag === '--scale') {
  await scale();
} else if (flag === '--child') {
  const [uri = '', a = '', b = '', c = ''] = rest;
  if (kind === 'append') await appendChild(uri, a, Number(b), Number(c));
  else if (kind === 'follow') await followChild(uri, Number(a));
  else if (kind === 'replay') process.stdout.write(JSON.stringify(await replay(uri)));
  else throw new Error(`bench/postgres: no child ${kind}`);
} else {
  await main();
}
