/**
 * `index build|status|rebuild`: the read model that `--index <folder>` keeps for a ledger.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { levelFolder } from '../../../backends/level.js';
import { ResumeMismatchError } from '../../errors.js';
import { type IndexStatus, ReadModel, SCHEMA } from '../../honcho/read-model.js';
import { UsageError } from '../args.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, plural } from '../describe.js';
import { backendAt, makeIndexFolder, openLedger, readNotices, requireLedger } from '../open.js';

/**
 * `index build|status|rebuild <ledger> --index <folder>`: bring the read model up to date, say
 * where it stands, or build it again from the log's start.
 */
async function indexCommand({ args: [action = '', path = ''], values, out, err }: Context): Promise<number> {
  const folder = values.get('index');
  if (folder === undefined) throw new UsageError('index needs --index <folder>', 'index');
  // Before anything is opened: a refused command line must leave the index as it was, and a
  // rebuild empties it first.
  backendAt(path);
  if (action === 'status') {
    for (const line of await indexStatus(path, folder)) out.line(line);
    await out.flush();
    return 0;
  }
  requireLedger(path, 'index');
  if (action === 'rebuild') {
    makeIndexFolder(folder);
    const model = await ReadModel.open(folder);
    try {
      await model.reset();
    } finally {
      await model.close();
    }
  }
  const started = performance.now();
  const ledger = await openLedger(path, err, { readOnly: true, index: folder });
  readNotices(err, path, ledger);
  try {
    const seconds = (performance.now() - started) / 1000;
    out.line(`${folder}: up to date with ${path} at record ${ledger.size}, in ${seconds.toFixed(2)} s`);
  } finally {
    await ledger.close();
  }
  await out.flush();
  return 0;
}

/** What `index status` says: the checkpoint, the schema, how far behind the log the read model is. */
async function indexStatus(path: string, folder: string): Promise<string[]> {
  // Opening the read model would create one: a question about it must change nothing.
  const there = levelFolder(folder);
  if (there !== 'database') {
    const why = there === 'missing' ? 'no such folder' : 'no read model in the folder';
    return [`index:      ${folder}`, `checkpoint: none: there is no index at ${folder} (${why}); the next open with --index ${folder} builds it`];
  }
  const model = await ReadModel.open(folder);
  let status: IndexStatus;
  try {
    status = model.status();
  } finally {
    await model.close();
  }
  const c = status.counts;
  const lines = [`index:      ${folder}`, `schema:     ${status.schema ?? 'none'} (this ledgerstore: ${SCHEMA})`];
  const checkpoint = status.checkpoint;
  if (checkpoint === null || status.building) {
    lines.push(`checkpoint: none${status.building ? ' (a build did not finish)' : ''}: the next open builds it from the log`);
    return lines;
  }
  lines.push(`checkpoint: record ${checkpoint.resume.position} of ${checkpoint.log}`);
  let behind: string;
  try {
    const log = await backendAt(path).open({ readOnly: true, resume: checkpoint.resume });
    behind = log.head === checkpoint.resume.position ? 'up to date' : `${plural(log.head - checkpoint.resume.position, 'record')} behind (caught up at the next open)`;
    await log.close();
  } catch (e) {
    if (!(e instanceof ResumeMismatchError)) throw e;
    behind = `the log does not hold the checkpoint any more (${e.message}): the next open rebuilds it`;
  }
  lines.push(`log:        ${behind}`);
  if (checkpoint.resume.position > 0 && status.schema !== SCHEMA) lines.push('            and it is of another schema: the next open rebuilds it');
  lines.push(`counts:     ${c.decided} decided ${describeOutcomes(c)}`);
  return lines;
}

export const INDEX: Command = {
  synopsis: 'build|status|rebuild <ledger> --index <folder>',
  summary: 'the read model in <folder>: bring it up to date, say where it stands, or build it again from the start',
  args: ['build|status|rebuild', '<ledger>'],
  actions: ['build', 'status', 'rebuild'],
  flags: ['index'],
  run: indexCommand,
};
