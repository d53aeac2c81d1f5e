/**
 * `index build|status|rebuild`: the read model that `--index <folder>` keeps for a ledger.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { ResumeMismatchError } from '../../errors.js';
import type { CountQueries } from '../../honcho/read-model/counts.js';
import { HONCHO_PROJECTIONS } from '../../honcho/read-model/state.js';
import type { Counts } from '../../honcho/record.js';
import { printableTarget } from '../../printable.js';
import type { ProjectionProgress } from '../../projections/definition.js';
import { earliestCheckpoint } from '../../projections/layout.js';
import { resetIndex, SCHEMA, withStanding } from '../../projections/status.js';
import { UsageError } from '../args.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, grouped, plural } from '../describe.js';
import { countsJson } from '../json.js';
import { backendAt, makeIndexFolder, openLedger, readNotices, requireLedgerThere } from '../open.js';

/**
 * `index build|status|rebuild <ledger> --index <folder>`: bring the read model up to date, say
 * where it stands, or build it again from the log's start.
 */
async function indexCommand({ args: [action = '', path = ''], values, switches, out, err }: Context): Promise<number> {
  if (switches.has('json') && action !== 'status')
    throw new UsageError(`index ${action} takes no --json (index status does)`, 'index');
  const folder = values.get('index');
  if (folder === undefined) throw new UsageError('index needs --index <folder>', 'index');
  // Before anything is opened: a refused command line must leave the index as it was, and a
  // rebuild empties it first.
  backendAt(path);
  if (action === 'status') {
    await requireLedgerThere(path, 'compare the index with');
    const standing = await standingOf(path, folder);
    if (switches.has('json')) out.line(standingJson(standing));
    else for (const line of standingLines(standing)) out.line(line);
    await out.flush();
    return 0;
  }
  await requireLedgerThere(path, 'index');
  if (action === 'rebuild') {
    makeIndexFolder(folder);
    await err.progress.around(async () => {
      err.progress.start(`emptying ${folder}`, undefined);
      await resetIndex(folder);
    });
  }
  const started = performance.now();
  const ledger = await openLedger(path, err, { readOnly: true, index: folder });
  readNotices(err, path, ledger);
  try {
    const seconds = (performance.now() - started) / 1000;
    out.line(
      `${folder}: up to date with ${printableTarget(path)} at record ${ledger.size}, in ${seconds.toFixed(2)} s`,
    );
  } finally {
    await ledger.close();
  }
  await out.flush();
  return 0;
}

/** One projection, as `index status` tells it. */
interface ProjectionLine {
  readonly name: string;
  readonly version: number | null;
  /** `ready`; `building` (by the process that has the index open); or `rebuilt at the next open`. */
  readonly state: 'ready' | 'building' | 'stale';
  readonly why: string | null;
  /** While building: how far, and what answers meanwhile. */
  readonly progress: ProjectionProgress | null;
}

/** Where a read model stands, for `index status`. */
interface Standing {
  readonly folder: string;
  /** Why there is no read model in the folder, or `null` when there is one. */
  readonly none: string | null;
  readonly schema: number | null;
  /** The record the checkpoint is at, and the log it was taken of; `null` when none, or a build did not finish. */
  readonly checkpoint: { readonly position: number; readonly log: string } | null;
  readonly building: boolean;
  /** How many records the log holds past the checkpoint; `null` when it does not hold the checkpoint. */
  readonly behind: number | null;
  /** Why the log does not hold the checkpoint any more, or `null`. */
  readonly mismatch: string | null;
  readonly counts: Counts | null;
  readonly projections: readonly ProjectionLine[];
  /** The process that has the read model open (and said where it stands), or `null` when none does. */
  readonly heldBy: { readonly pid: number | null; readonly written: string | null } | null;
}

/** Where the read model in `folder` stands against the ledger `path`: changes nothing, makes nothing. */
async function standingOf(path: string, folder: string): Promise<Standing> {
  const empty = {
    schema: null,
    checkpoint: null,
    building: false,
    behind: null,
    mismatch: null,
    counts: null,
    projections: [],
    heldBy: null,
  };
  return withStanding(folder, HONCHO_PROJECTIONS, async (found) => {
    if (found.state === 'missing' || found.state === 'empty')
      return { folder, none: found.state === 'missing' ? 'no such folder' : 'no read model in the folder', ...empty };
    if (found.state === 'held') {
      const projections = (found.status?.projections ?? []).map(
        (p): ProjectionLine => ({ name: p.name, version: p.version, state: p.state, why: p.why, progress: p }),
      );
      return {
        folder,
        none: null,
        ...empty,
        schema: found.schema,
        building: projections.some((p) => p.state !== 'ready'),
        projections,
        heldBy: { pid: found.status?.pid ?? null, written: found.status?.written ?? null },
      };
    }
    const projections = found.projections.map(
      (p): ProjectionLine => ({
        name: p.name,
        version: p.version,
        state: p.ready ? 'ready' : 'stale',
        why: p.why,
        progress: null,
      }),
    );
    const building = found.projections.some((p) => !p.ready);
    const counts = found.projections.find((p) => p.name === 'counts')?.queries as CountQueries | null | undefined;
    const opened = {
      folder,
      none: null,
      schema: found.schema,
      building,
      counts: counts === null || counts === undefined ? null : await counts.counts(),
      projections,
      heldBy: null,
    };
    // the open resumes where the ready rows' earliest checkpoint is: how far the log is past it
    const checkpoint = earliestCheckpoint(
      found.projections.flatMap((p) => (p.ready && p.checkpoint !== null ? [p.checkpoint] : [])),
    );
    if (checkpoint === undefined) return { ...opened, checkpoint: null, behind: null, mismatch: null };
    const at = { position: checkpoint.resume.position, log: checkpoint.log };
    try {
      const log = await backendAt(path).open({ readOnly: true, resume: checkpoint.resume });
      const behind = log.head - checkpoint.resume.position;
      await log.close();
      return { ...opened, checkpoint: at, behind, mismatch: null };
    } catch (e) {
      if (!(e instanceof ResumeMismatchError)) throw e;
      return { ...opened, checkpoint: at, behind: null, mismatch: e.message };
    }
  });
}

/**
 * Whether the next open with the read model builds some of it again from the log's start;
 * `null` while another process holds it (its checkpoint is that process's to move: unknown).
 */
function rebuildsAtNextOpen(s: Standing): boolean | null {
  if (s.heldBy !== null) return null;
  return s.checkpoint === null || s.mismatch !== null || s.projections.some((p) => p.state !== 'ready');
}

/** A projection in words: `items 1 ready`, `outbox 2 building (1,200 of 5,000 records, ...)`. */
function projectionWords(p: ProjectionLine): string {
  const name = `${p.name} ${p.version ?? '(none)'}`;
  if (p.state === 'ready') return `${name} ready`;
  if (p.state === 'stale') return `${name}: rebuilt at the next open${p.why === null ? '' : ` (${p.why})`}`;
  const progress = p.progress;
  if (progress === null || progress.total === 0) return `${name} building`;
  const meanwhile =
    progress.answering === 'previous version'
      ? 'answered by the previous version meanwhile'
      : 'answered from memory meanwhile';
  return `${name} building (${grouped(progress.done)} of ${grouped(progress.total)} records, ${grouped(progress.rate)} records/s; ${meanwhile})`;
}

/** What `index status` says, for people. */
function standingLines(s: Standing): string[] {
  const folder = s.folder;
  if (s.none !== null)
    return [
      `index:      ${folder}`,
      `checkpoint: none: there is no index at ${folder} (${s.none}); the next open with --index ${folder} builds it`,
    ];
  const lines = [`index:      ${folder}`, `schema:     ${s.schema ?? 'none'} (this ledgerstore: ${SCHEMA})`];
  if (s.heldBy !== null) {
    lines.push(
      `open:       in process ${s.heldBy.pid ?? 'unknown'}, which keeps it up to date${s.heldBy.written === null ? '' : ` (its last word at ${s.heldBy.written})`}`,
    );
    if (s.projections.length > 0) lines.push(`projections: ${s.projections.map(projectionWords).join(', ')}`);
    return lines;
  }
  const checkpoint = s.checkpoint;
  if (checkpoint === null) {
    lines.push(
      `checkpoint: none${s.building ? ' (a build did not finish)' : ''}: the next open builds it from the log`,
    );
    return lines;
  }
  lines.push(`checkpoint: record ${checkpoint.position} of ${checkpoint.log}`);
  const behind =
    s.behind === null
      ? `the log does not hold the checkpoint any more (${s.mismatch ?? ''}): the next open rebuilds it`
      : s.behind === 0
        ? 'up to date'
        : `${plural(s.behind, 'record')} behind (caught up at the next open)`;
  lines.push(`log:        ${behind}`);
  if (s.counts !== null) lines.push(`counts:     ${s.counts.decided} decided ${describeOutcomes(s.counts)}`);
  lines.push(`projections: ${s.projections.map(projectionWords).join(', ')}`);
  return lines;
}

/** What `index status --json` says: one object. */
function standingJson(s: Standing): string {
  const fields = [
    `"index":${JSON.stringify(s.folder)}`,
    `"exists":${s.none === null}`,
    ...(s.none === null ? [] : [`"why":${JSON.stringify(s.none)}`]),
    `"schema":${s.schema ?? 'null'}`,
    `"ledgerstoreSchema":${SCHEMA}`,
    `"checkpoint":${s.checkpoint === null ? 'null' : `{"position":${s.checkpoint.position},"log":${JSON.stringify(s.checkpoint.log)}}`}`,
    `"building":${s.building}`,
    `"behind":${s.behind ?? 'null'}`,
    `"rebuildsAtNextOpen":${rebuildsAtNextOpen(s)}`,
    `"counts":${s.counts === null ? 'null' : countsJson(s.counts)}`,
    `"projections":${JSON.stringify(
      s.projections.map((p) => ({
        name: p.name,
        version: p.version,
        state: p.state,
        why: p.why,
        ...(p.progress === null
          ? {}
          : { done: p.progress.done, total: p.progress.total, rate: p.progress.rate, answering: p.progress.answering }),
      })),
    )}`,
    `"openIn":${s.heldBy === null ? 'null' : JSON.stringify(s.heldBy)}`,
  ];
  return `{${fields.join(',')}}`;
}

export const INDEX: Command = {
  synopsis: 'build|status|rebuild <ledger> --index <folder> [--json]',
  summary: 'the read model in <folder>: bring it up to date, say where it stands, or build it again from the start',
  help: [
    'The read model (a LevelDB folder) that --index <folder> keeps of a ledger:',
    '  build    bring it up to date with the ledger (made if missing), and say at which record',
    '  status   say where it stands: its schema, its checkpoint, how far behind the ledger it is,',
    '           its counts; changes nothing, and makes nothing where there is no read model',
    "  rebuild  empty it and build it again from the ledger's first record",
    'The ledger is never changed. build and rebuild refuse a ledger that is not there.',
    'status --json writes one JSON object:',
    '  {"index":"idx","exists":true,"schema":3,"ledgerstoreSchema":3,"checkpoint":{"position":11,',
    '   "log":"honcho.jsonl"},"building":false,"behind":0,"rebuildsAtNextOpen":false,"counts":{...},',
    '   "projections":[{"name":"items","version":2,"state":"ready","why":null},...],"openIn":null}',
    '  ("exists":false comes with "why"; "behind" is null where the log does not hold the checkpoint;',
    '  while another process has it open, "openIn" says which, and what that process moves, the',
    '  checkpoint, "behind", "counts" and "rebuildsAtNextOpen", is null)',
  ],
  args: ['build|status|rebuild', '<ledger>'],
  actions: ['build', 'status', 'rebuild'],
  flags: ['index', 'json'],
  run: indexCommand,
};
