/**
 * One measurement of `bench/run.ts`, in the fresh Node.js process this script is: no run inherits
 * another's heap, garbage or optimized code. It prints what it measured as JSON on stdout.
 *
 * - `node dist/bench/measure.js <kind> <file> <n> [<appenders>]`: one run of a replay, an append
 *   loop or a point query ({@link KINDS});
 * - `--paired <dir> <n>`: the pairs of the bare append loop and one appender in one process;
 * - `--group-paired <dir> <appenders>`: the rounds of a group, the bare loop and group commit's
 *   limit in one process.
 *
 * @module
 */
import * as fs from 'node:fs';
import { peakRssMiB, type Timing } from './common.js';
import {
  appendBare,
  appendBareAsync,
  appendEngine,
  appendLevelBare,
  appendPaired,
  appendUser,
  groupPaired,
  WARMUP,
} from './measure-append.js';
import { pointBare, pointQuery } from './measure-points.js';
import { replayBare, replayBareChunked, replayEngine, replayLevelBare, replayUser } from './measure-replay.js';

/** What can be measured in one process. */
export const KINDS = [
  'replay-bare',
  'replay-bare-chunked',
  'replay-engine',
  'replay-level',
  'replay-level-bare',
  'replay-memory',
  'replay-threads',
  'replay-user',
  'append-bare',
  'append-bare-batched',
  'append-level-bare',
  'append-user',
  'append-bare-async',
  'append-engine',
  'append-engine-concurrent',
  'append-level',
  'append-level-concurrent',
  'append-memory',
  'point-bare',
  'point-is-decided',
  'point-sent-ids',
  'point-conclusion',
] as const;

export type Kind = (typeof KINDS)[number];

/**
 * `n`: the records of an append loop, the threads of `replay-threads`, the queries of a point
 * kind. `appenders`: the callers at once of a `-concurrent` kind, the lines per sync of
 * `append-bare-batched`, the writers of `append-level-bare`.
 */
async function measureOnce(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  switch (kind) {
    case 'replay-bare':
      return replayBare(file);
    case 'replay-bare-chunked':
      return replayBareChunked(file);
    case 'replay-engine':
      return replayEngine(file, 'jsonl');
    case 'replay-level':
      return replayEngine(file, 'level');
    case 'replay-level-bare':
      return replayLevelBare(file);
    case 'replay-memory':
      return replayEngine(file, 'memory');
    case 'replay-threads':
      return replayEngine(file, 'jsonl', n);
    case 'replay-user':
      return replayUser(file);
    case 'append-user':
      return appendUser(file, n);
    case 'append-bare':
      return appendBare(file, n);
    case 'append-bare-batched':
      return appendBare(file, n, appenders);
    case 'append-level-bare':
      return appendLevelBare(file, n, appenders);
    case 'append-bare-async':
      return appendBareAsync(file, n);
    case 'append-engine':
      return appendEngine(file, n, 1, 'jsonl');
    case 'append-engine-concurrent':
      return appendEngine(file, n, appenders, 'jsonl');
    case 'append-level':
      return appendEngine(file, n, 1, 'level');
    case 'append-level-concurrent':
      return appendEngine(file, n, appenders, 'level');
    case 'append-memory':
      return appendEngine(file, n, 1, 'memory');
    case 'point-bare':
      return pointBare(file, n);
    case 'point-is-decided':
      return pointQuery(file, 'isDecided', n);
    case 'point-sent-ids':
      return pointQuery(file, 'sentIds', n);
    case 'point-conclusion':
      return pointQuery(file, 'conclusion', n);
  }
}

/**
 * One measurement. A replay runs cold, as memoryd's open at start does; appends come from a
 * long-running daemon, so each append loop first runs {@link WARMUP} appends to a file of its
 * own, untimed, and its figure is not that of code the JIT has not compiled yet.
 */
async function measure(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  if (kind.startsWith('append-')) {
    const warm = `${file}.warmup`;
    await measureOnce(kind, warm, Math.min(n, WARMUP * appenders), appenders);
    fs.rmSync(warm, { recursive: true, force: true }); // a LevelDB log is a folder; an in-memory one is nothing
  }
  const timing = await measureOnce(kind, file, n, appenders);
  // An in-memory replay's peak holds the untimed open of the file its records come from.
  return kind.startsWith('replay-') && kind !== 'replay-memory' ? { ...timing, peakMiB: peakRssMiB() } : timing;
}

const [flag, ...rest] = process.argv.slice(2);
if (flag === '--group-paired') {
  const [dir, appenders] = rest;
  if (dir === undefined || appenders === undefined)
    throw new Error('usage: measure.js --group-paired <dir> <appenders>');
  process.stdout.write(JSON.stringify(await groupPaired(dir, Number(appenders))));
} else if (flag === '--paired') {
  const [dir, n] = rest;
  if (dir === undefined || n === undefined) throw new Error('usage: measure.js --paired <dir> <n>');
  process.stdout.write(JSON.stringify(await appendPaired(dir, Number(n))));
} else {
  const [file, n, appenders = '1'] = rest;
  if (!KINDS.includes(flag as Kind) || file === undefined)
    throw new Error(`usage: measure.js <${KINDS.join('|')}> <file> <n> [<appenders>]`);
  process.stdout.write(JSON.stringify(await measure(flag as Kind, file, Number(n), Number(appenders))));
}
