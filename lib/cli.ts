#!/usr/bin/env node
/**
 * `ledgerstore`, the command line: look into a Honcho ledger without changing it, append record
 * lines to it, check record lines, or write a synthetic one. `ledgerstore --help` lists the
 * commands.
 *
 * Exit status: 0 on success; 1 when the ledger refuses a record or is damaged or unreadable (the
 * error's text on stderr, with its runbook pointer); 2 on a usage error.
 *
 * Output is written a chunk at a time and waits for the reader (`ledgerstore outbox big.jsonl |
 * head` reads only what it needs, and a reader that goes away ends the command quietly with 0).
 * Progress goes to stderr, and only when stderr is a terminal.
 *
 * @module
 */
import { statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { workload, writeSyntheticLedger } from '../bench/workload.js';
import { DecodeError, LedgerError, LedgerExistsError, LedgerIoError, ResumeMismatchError, TargetNotEmptyError, describeSystemError } from './errors.js';
import { copyLedger, fillLedger } from './copy.js';
import { decodeItemText, decodeRecord, encodeAction, encodeItem, encodeRecord } from './honcho/codec.js';
import { Ledger } from './honcho/ledger.js';
import { type IndexStatus, ReadModel, SCHEMA } from './honcho/read-model.js';
import { type Action, type Item, type Record, WORKSPACES, type Workspace } from './honcho/record.js';
import { levelFolder } from '../backends/level.js';
import type { LogBackend, Repair } from './log.js';
import { TargetError, backendFor, jsonlPathOf } from './target.js';
import { type AnswerDigests, answerDigests, differences } from './verify.js';

// -- arguments --------------------------------------------------------------------------------

/** Every flag any command takes: a switch, or one that takes a value (`--records 10`, `--records=10`). */
const FLAGS = { json: 'switch', help: 'switch', records: 'value', seed: 'value', index: 'value' } as const;
type Flag = keyof typeof FLAGS;

/** The command line, split into positionals and flags. */
interface Args {
  readonly positionals: readonly string[];
  readonly switches: ReadonlySet<Flag>;
  readonly values: ReadonlyMap<Flag, string>;
  /** The first mistake in the flags, reported once the command is known (for its usage). */
  readonly mistake: string | undefined;
}

/** A mistake in the command line: exit 2, with the usage of `command` (or of every command). */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command: CommandName | undefined,
    /** Whether to follow the message with the usage (not for a bad value the message explains). */
    readonly showUsage = true,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

function isFlag(name: string): name is Flag {
  return Object.hasOwn(FLAGS, name);
}

/**
 * Splits `argv` into positionals and flags. Flags may come anywhere; `--` ends them, so that a
 * text that starts with `-` can be given.
 */
function parseArgs(argv: readonly string[]): Args {
  const positionals: string[] = [];
  const switches = new Set<Flag>();
  const values = new Map<Flag, string>();
  let flagsEnded = false;
  let mistake: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (flagsEnded || arg === '-' || !arg.startsWith('-')) {
      positionals.push(arg);
    } else if (arg === '--') {
      flagsEnded = true;
    } else if (arg === '-h') {
      switches.add('help');
    } else {
      const equals = arg.indexOf('=');
      const name = arg.slice(2, equals === -1 ? undefined : equals);
      if (!arg.startsWith('--') || !isFlag(name)) {
        mistake ??= `unknown flag ${equals === -1 ? arg : arg.slice(0, equals)}`;
      } else if (FLAGS[name] === 'switch') {
        if (equals !== -1) mistake ??= `--${name} takes no value`;
        switches.add(name);
      } else {
        const value = equals === -1 ? argv[++i] : arg.slice(equals + 1);
        if (value === undefined) mistake ??= `--${name} needs a value`;
        else if (values.has(name)) mistake ??= `--${name} is given twice`;
        else values.set(name, value);
      }
    }
  }
  return { positionals, switches, values, mistake };
}

/** A flag's value as a whole number from 0 to 2^53-1. */
function wholeNumber(command: CommandName, flag: Flag, text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${flag} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not ${JSON.stringify(text)}`, command);
  }
  return n;
}

// -- output -----------------------------------------------------------------------------------

/** The reader of stdout went away or stdout failed: stop writing. */
class OutputClosed extends Error {
  constructor(readonly failure: Error | null) {
    super('stdout is closed');
    this.name = 'OutputClosed';
  }
}

/** Below this much buffered text, lines are only gathered; a write per line would be slow. */
const CHUNK = 64 * 1024;

/**
 * Lines to a stream, gathered into chunks; `flush` waits while the reader is behind, so memory
 * stays bounded however many lines a command writes.
 */
class Output {
  private parts: string[] = [];
  private size = 0;
  private failure: Error | null = null;

  constructor(private readonly stream: Writable) {
    // Without a listener, EPIPE (the reader went away) would be thrown as an uncaught error.
    stream.on('error', (e: Error) => {
      this.failure ??= e;
    });
  }

  /** Whether enough is gathered that the caller should `await flush()` before going on. */
  get full(): boolean {
    return this.size >= CHUNK;
  }

  /** Gathers one line (without its newline). */
  line(text: string): void {
    this.parts.push(text, '\n');
    this.size += text.length + 1;
  }

  /** Gathers lines, flushing as they fill a chunk. */
  async lines(lines: Iterable<string>): Promise<void> {
    for (const text of lines) {
      this.line(text);
      if (this.full) await this.flush();
    }
    await this.flush();
  }

  /**
   * Writes what is gathered and waits until the stream takes more.
   * @throws {@link OutputClosed} when the reader went away or the stream failed
   */
  async flush(): Promise<void> {
    if (this.size === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    const stream = this.stream;
    if (this.failure !== null || stream.destroyed) throw new OutputClosed(this.failure);
    if (stream.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (): void => {
        stream.off('drain', settle);
        stream.off('close', settle);
        stream.off('error', settle);
        if (this.failure !== null || stream.destroyed) reject(new OutputClosed(this.failure));
        else resolve();
      };
      stream.on('drain', settle);
      stream.on('close', settle);
      stream.on('error', settle);
    });
  }
}

/** A line on stderr, as `ledgerstore: <text>`. */
function warn(text: string): void {
  process.stderr.write(`ledgerstore: ${text}\n`);
}

/** Progress on one line of a terminal, redrawn at most ten times a second; nothing elsewhere. */
class Progress {
  private last = -Infinity;
  private shown = false;

  constructor(readonly enabled: boolean) {}

  show(text: () => string): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (now - this.last < 100) return;
    this.last = now;
    this.shown = true;
    process.stderr.write(`\r\x1b[K${text()}`);
  }

  clear(): void {
    if (this.shown) process.stderr.write('\r\x1b[K');
    this.shown = false;
  }

  /** Runs `body`, then takes its progress line off, whether `body` succeeded or not. */
  async around<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } finally {
      this.clear();
    }
  }
}

/** `f` of each of `items`, one at a time: rows are formatted as they are written, not all first. */
function* mapped<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `1,234,567`: for figures that a person reads, not for output a program parses. */
function grouped(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

// -- reading input ----------------------------------------------------------------------------

/**
 * The lines of `input`, as bytes, split on `\n` only (a `\r` is the line's, and JSON's whitespace).
 * Each keeps its `\n`, as the ledger's reader keeps it, so that serde's error positions are the
 * ones memoryd would give for the same line in the file. What follows the last newline is a line
 * too, unless it is empty.
 */
async function* inputLines(input: Readable): AsyncGenerator<Buffer> {
  let carried: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline + 1);
      yield carried.length === 0 ? piece : Buffer.concat([...carried, piece]);
      carried = [];
      start = newline + 1;
    }
    if (start < chunk.length) carried.push(chunk.subarray(start));
  }
  if (carried.length > 0) yield Buffer.concat(carried);
}

// -- opening the ledger -----------------------------------------------------------------------

/**
 * The backend a ledger argument names (a path, `jsonl:`, `level:`, `memory:`), reporting the
 * records read through on `progress`.
 */
function ledgerAt(target: string, progress: Progress): LogBackend<Record> {
  let backend: LogBackend<Record>;
  try {
    backend = backendFor(target);
  } catch (e) {
    if (e instanceof TargetError) throw new UsageError(e.message, undefined, false);
    throw e;
  }
  if (!progress.enabled) return backend;
  return {
    ...backend,
    open: (options) =>
      backend.open({
        ...options,
        replay: (record, position) => {
          // Checking the clock on every record would cost more than the record.
          if ((position & 0xfff) === 0) progress.show(() => `reading ${target}: ${grouped(position)} records`);
          return options?.replay?.(record, position);
        },
      }),
  };
}

/**
 * Why `target` read as an empty ledger when that may be a typo: a JSONL file, or a LevelDB
 * folder, that is not there (or a folder that holds no database); else `null`.
 */
function absence(target: string): string | null {
  const file = jsonlPathOf(target);
  if (file !== null) return statSync(file, { throwIfNoEntry: false }) === undefined ? 'no such file' : null;
  if (!target.startsWith('level:')) return null;
  const there = levelFolder(target.slice('level:'.length));
  return there === 'missing' ? 'no such folder' : there === 'empty' ? 'no ledger in the folder' : null;
}

/**
 * Says on stderr what an operator should know of a ledger just read through read-only: a
 * cut-off last line it ignored, or that it is not there at all (an empty ledger, or a typo).
 */
function readNotices(path: string, ledger: { readonly size: number; readonly repair: Repair | null }): void {
  const repair = ledger.repair;
  if (repair !== null) {
    warn(`${path}: a last line cut off by a crash (${plural(repair.dropped, 'byte')}) was ignored; the next writer drops it`);
    return;
  }
  const missing = ledger.size === 0 ? absence(path) : null;
  if (missing !== null) warn(`${path}: ${missing}; read as an empty ledger`);
}

/** Opens the ledger to read, changing nothing, with the notices of {@link readNotices}. */
async function openToRead(path: string, progress: Progress, index: string | undefined): Promise<Ledger> {
  const ledger = await progress.around(() => Ledger.open(ledgerAt(path, progress), { readOnly: true, ...indexed(index, progress) }));
  readNotices(path, ledger);
  return ledger;
}

/** The ledger options for a read model in `index` (the `--index` flag), its notices on stderr. */
function indexed(index: string | undefined, progress: Progress): { index?: string; onNotice?: (message: string) => void } {
  if (index === undefined) return {};
  return {
    index,
    onNotice: (message) => {
      progress.clear();
      warn(message);
    },
  };
}

/** Runs `body` on the ledger opened to read (with the read model of `--index`, if given), and closes it. */
async function reading<T>({ args: [path = ''], values, progress }: Context, body: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openToRead(path, progress, values.get('index'));
  try {
    return await body(ledger);
  } finally {
    await ledger.close();
  }
}

// -- describing items and actions for people --------------------------------------------------

/** A name or id as it is when it reads plainly, else quoted, so that a row stays one line. */
function word(text: string): string {
  return /^[\p{L}\p{N}._@:+/'-]+$/u.test(text) ? text : JSON.stringify(text);
}

/** `turn 3 of session chat-1`, `part 0 of edit 2026-09-28-0001`: as the errors name items. */
function describeItem(item: Item): string {
  return item.type === 'turn' ? `turn ${item.turn} of session ${item.session}` : `part ${item.part} of edit ${word(item.id)}`;
}

function describeAction(action: Action): string {
  switch (action.type) {
    case 'turn':
      return `turn to ${action.workspace} as ${word(action.speaker)}`;
    case 'conclude':
      return `conclude in ${action.workspace} for ${word(action.peer)} (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'unconclude':
      return `unconclude in ${action.workspace}: ${JSON.stringify(action.text)}`;
    case 'fleet':
      return `fleet message (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'retract':
      return `retract fleet message (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'skip':
      return `skip: ${JSON.stringify(action.why)}`;
  }
}

/** The widest an item's column gets: one long edit id should not push every row right. */
const ITEM_COLUMN = 40;

// -- the commands -----------------------------------------------------------------------------

/** What a command is given. */
interface Context {
  /** The positionals after the command's name, as many as it names. */
  readonly args: readonly string[];
  readonly switches: ReadonlySet<Flag>;
  readonly values: ReadonlyMap<Flag, string>;
  readonly out: Output;
  readonly progress: Progress;
}

/**
 * `verify <ledger> [--index <folder>]`: reads the whole log through and prints a one-line
 * summary; with `--index`, also brings the read model up to date and checks that it answers
 * every query as the fresh replay does.
 */
async function verify({ args: [path = ''], values, out, progress }: Context): Promise<number> {
  const started = performance.now();
  const ledger = await openToRead(path, progress, undefined);
  let replayed: AnswerDigests | null = null;
  try {
    const seconds = (performance.now() - started) / 1000;
    const c = await ledger.counts();
    const rate = ledger.size > 0 && seconds > 0 ? ` (${grouped(ledger.size / seconds)} records/s)` : '';
    out.line(
      `${path}: ok, ${plural(ledger.size, 'record')}, ${plural(c.decided, 'item')} decided ` +
        `(sent ${c.sent}, waiting ${c.waiting}, failed ${c.failed}, skipped ${c.skipped}); ` +
        `read in ${seconds.toFixed(2)} s${rate}`,
    );
    if (values.has('index')) replayed = await answerDigests(ledger);
  } finally {
    await ledger.close();
  }
  const index = values.get('index');
  if (replayed !== null && index !== undefined) {
    // one after the other: a LevelDB log admits one open at a time
    const withIndex = await Ledger.open(ledgerAt(path, progress), { readOnly: true, ...indexed(index, progress) });
    let fromIndex: AnswerDigests;
    try {
      fromIndex = await answerDigests(withIndex);
    } finally {
      await withIndex.close();
    }
    const differ = differences(replayed, fromIndex);
    if (differ.length > 0) {
      await out.flush();
      warn(`${index}: the index does not answer as a fresh replay of ${path}: ${differ.join(', ')} differ; rebuild it (ledgerstore index rebuild ${path} --index ${index})`);
      return 1;
    }
    out.line(`${index}: ok, the index answers every query as a fresh replay does`);
  }
  await out.flush();
  return 0;
}

/**
 * `index build|status|rebuild <ledger> --index <folder>`: bring the read model up to date, say
 * where it stands, or build it again from the log's start.
 */
async function indexCommand({ args: [action = '', path = ''], values, out, progress }: Context): Promise<number> {
  const folder = values.get('index');
  if (folder === undefined) throw new UsageError('index needs --index <folder>', 'index');
  if (action !== 'build' && action !== 'status' && action !== 'rebuild') {
    throw new UsageError(`index takes build, status or rebuild, not ${JSON.stringify(action)}`, 'index');
  }
  // Before anything is opened: a refused command line must leave the index as it was, and a
  // rebuild empties it first.
  const backend = ledgerAt(path, progress);
  if (action === 'status') {
    for (const line of await indexStatus(path, folder)) out.line(line);
    await out.flush();
    return 0;
  }
  if (action === 'rebuild') {
    const model = await ReadModel.open(folder);
    try {
      await model.reset();
    } finally {
      await model.close();
    }
  }
  const started = performance.now();
  const ledger = await progress.around(() => Ledger.open(backend, { readOnly: true, ...indexed(folder, progress) }));
  readNotices(path, ledger);
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
    const log = await ledgerAt(path, new Progress(false)).open({ readOnly: true, resume: checkpoint.resume });
    behind = log.head === checkpoint.resume.position ? 'up to date' : `${plural(log.head - checkpoint.resume.position, 'record')} behind (caught up at the next open)`;
    await log.close();
  } catch (e) {
    if (!(e instanceof ResumeMismatchError)) throw e;
    behind = `the log does not hold the checkpoint any more (${e.message}): the next open rebuilds it`;
  }
  lines.push(`log:        ${behind}`);
  if (checkpoint.resume.position > 0 && status.schema !== SCHEMA) lines.push('            and it is of another schema: the next open rebuilds it');
  lines.push(`counts:     ${c.decided} decided (sent ${c.sent}, waiting ${c.waiting}, failed ${c.failed}, skipped ${c.skipped})`);
  return lines;
}

/** `counts <ledger> [--json]`. */
async function counts(context: Context): Promise<number> {
  const { switches, out } = context;
  return reading(context, async (ledger) => {
    const c = await ledger.counts();
    if (switches.has('json')) {
      out.line(`{"decided":${c.decided},"sent":${c.sent},"waiting":${c.waiting},"failed":${c.failed},"skipped":${c.skipped}}`);
    } else {
      const rows = [['decided', c.decided], ['sent', c.sent], ['waiting', c.waiting], ['failed', c.failed], ['skipped', c.skipped]] as const;
      const width = Math.max(...rows.map(([, n]) => String(n).length));
      for (const [name, n] of rows) out.line(`${name.padEnd(7)}  ${String(n).padStart(width)}`);
    }
    await out.flush();
    return 0;
  });
}

/** `outbox <ledger> [--json]`: every waiting item and its action, in decision order. */
async function outbox(context: Context): Promise<number> {
  const { switches, out } = context;
  return reading(context, async (ledger) => {
    const waiting = await ledger.outbox();
    if (switches.has('json')) {
      await out.lines(mapped(waiting, ({ item, action }) => `{"item":${encodeItem(item)},"action":${encodeAction(action)}}`));
      return 0;
    }
    let width = 0;
    for (const { item } of waiting) width = Math.max(width, describeItem(item).length);
    width = Math.min(width, ITEM_COLUMN);
    await out.lines(mapped(waiting, ({ item, action }) => `${describeItem(item).padEnd(width)}  -> ${describeAction(action)}`));
    return 0;
  });
}

/** The item argument, read as serde_json reads an `Item`; bad input is exit 2, with serde's verdict. */
function itemArgument(text: string): Item {
  try {
    return decodeItemText(text);
  } catch (e) {
    if (e instanceof DecodeError) throw new UsageError(`the item ${text}: ${e.message}`, 'sent-ids', false);
    throw e;
  }
}

/** `sent-ids <ledger> <item-as-json> [--json]`: the ids of the item's `sent` record. */
async function sentIds(context: Context): Promise<number> {
  const { args: [, itemText = ''], switches, out } = context;
  const item = itemArgument(itemText);
  return reading(context, async (ledger) => {
    const ids = await ledger.sentIds(item);
    if (switches.has('json')) out.line(ids === null ? 'null' : JSON.stringify(ids));
    else if (ids === null) out.line(`${describeItem(item)} has no sent record (it is waiting, failed, skipped or unknown)`);
    else if (ids.length === 0) out.line(`${describeItem(item)} was sent, with no ids`);
    else for (const id of ids) out.line(id);
    await out.flush();
    return 0;
  });
}

/** `conclusion <ledger> <workspace> <text> [--json]`: the conclusion an undo must delete. */
async function conclusion(context: Context): Promise<number> {
  const { args: [, workspace = '', text = ''], switches, out } = context;
  if (!WORKSPACES.includes(workspace as Workspace)) {
    throw new UsageError(`the workspace must be one of ${WORKSPACES.join(', ')}, not ${JSON.stringify(workspace)}`, 'conclusion');
  }
  return reading(context, async (ledger) => {
    const found = await ledger.conclusion(workspace as Workspace, text);
    if (switches.has('json')) out.line(found === null ? 'null' : `{"item":${encodeItem(found.item)},"id":${JSON.stringify(found.id)}}`);
    else if (found === null) out.line(`none: no conclusion of ${workspace} with that text is sent and not undone`);
    else out.line(`${found.id}  (${describeItem(found.item)})`);
    await out.flush();
    return 0;
  });
}

/**
 * `append <ledger>`: the record lines on stdin, each appended and durable before the next. The
 * first that does not decode or is refused stops it; the ones before it stay.
 */
async function append({ args: [path = ''], values, progress }: Context): Promise<number> {
  const ledger = await progress.around(() => Ledger.open(ledgerAt(path, progress), indexed(values.get('index'), progress)));
  const repair = ledger.repair;
  if (repair !== null) warn(`${path}: a last line cut off by a crash (${plural(repair.dropped, 'byte')}) was dropped`);
  let line = 0;
  let appended = 0;
  try {
    for await (const bytes of inputLines(process.stdin)) {
      line++;
      let record: Record;
      try {
        record = decodeRecord(bytes);
      } catch (e) {
        if (e instanceof DecodeError) throw new DecodeError(`stdin:${line}: ${e.message}`);
        throw e;
      }
      await ledger.append(record);
      appended++;
      progress.show(() => `appending to ${path}: ${grouped(appended)} records`);
    }
  } catch (e) {
    progress.clear();
    warn(report(e));
    const before = appended === 0 ? 'nothing was appended' : `the ${plural(appended, 'record')} before it ${appended === 1 ? 'was' : 'were'} appended`;
    warn(`stopped at stdin:${line}; ${before}`);
    return 1;
  } finally {
    await ledger.close();
  }
  progress.clear();
  process.stderr.write(`appended ${plural(appended, 'record')} to ${path}\n`);
  return 0;
}

/** `check`: each record line on stdin, as `ok <canonical line>` or `err <why>`. */
async function check({ out }: Context): Promise<number> {
  let lines = 0;
  let refused = 0;
  for await (const bytes of inputLines(process.stdin)) {
    lines++;
    try {
      out.line(`ok ${encodeRecord(decodeRecord(bytes))}`);
    } catch (e) {
      if (!(e instanceof LedgerError)) throw e;
      refused++;
      out.line(`err ${e.message}`);
    }
    if (out.full) await out.flush();
  }
  await out.flush();
  if (refused === 0) return 0;
  warn(`${refused} of ${plural(lines, 'line')} refused`);
  return 1;
}

/** A command stopped by a signal (Ctrl-C, or `kill`): it exits 128 + the signal's number, as a shell reports it. */
class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
    this.name = 'Interrupted';
  }

  get status(): number {
    return 128 + osConstants.signals[this.signal];
  }
}

/** `items`, until `signal` is aborted: then it throws the signal's reason. */
function* until<T>(signal: AbortSignal, items: Iterable<T>): Generator<T> {
  for (const item of items) {
    signal.throwIfAborted();
    yield item;
  }
}

/** `gen <ledger> --records N [--seed S]`: a synthetic ledger, for demos and benchmarks. */
async function gen({ args: [path = ''], values, out, progress }: Context): Promise<number> {
  const recordsText = values.get('records');
  if (recordsText === undefined) throw new UsageError('gen needs --records N', 'gen');
  const records = wholeNumber('gen', 'records', recordsText);
  const seedText = values.get('seed');
  const seed = seedText === undefined ? undefined : wholeNumber('gen', 'seed', seedText);
  const started = performance.now();
  let done = 0;
  const onProgress = (n: number): void => {
    done = n;
    progress.show(() => `writing ${path}: ${grouped(n)} of ${grouped(records)} records`);
  };
  const file = jsonlPathOf(path);
  // Without these, a signal ends the process on the spot and leaves the temporary file behind;
  // with them, the writer stops at its next chunk and cleans up. A second signal, with no
  // listener left, still ends it at once.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => stop.abort(new Interrupted(signal));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let written: { records: number; bytes: number | null };
  try {
    // A JSONL file is written directly, much faster than through appends; other backends are filled.
    written =
      file !== null
        ? await progress.around(() => writeSyntheticLedger(file, { records, seed, onProgress, signal: stop.signal }))
        : { records: await progress.around(() => fillLedger(ledgerAt(path, new Progress(false)), until(stop.signal, workload({ records, seed })), onProgress)), bytes: null };
  } catch (e) {
    if (e instanceof Interrupted) {
      warn(`${path}: gen stopped by ${e.signal}; ${file !== null ? 'nothing was written' : `the ${plural(done, 'record')} written before it stay in the ledger`}`);
      return e.status;
    }
    // The writers' own words speak of a file system failure, or of a copy: say what gen refuses.
    if (e instanceof LedgerIoError && e.errno === 'EEXIST' && e.path === file) throw new LedgerExistsError(path, null, { cause: e });
    if (e instanceof TargetNotEmptyError) throw new LedgerExistsError(path, e.records, { cause: e });
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const seconds = (performance.now() - started) / 1000;
  const size = written.bytes === null ? '' : `, ${plural(written.bytes, 'byte')}`;
  out.line(`${path}: wrote ${plural(written.records, 'record')}${size}, in ${seconds.toFixed(2)} s`);
  await out.flush();
  return 0;
}

/**
 * `copy <from> <to>`: every record of one ledger into another, empty one (any backends), then
 * the target read through again and compared with the source.
 */
async function copy({ args: [from = '', to = ''], out, progress }: Context): Promise<number> {
  const started = performance.now();
  const copied = await progress.around(() =>
    copyLedger(ledgerAt(from, progress), ledgerAt(to, new Progress(false)), (n) => progress.show(() => `copying to ${to}: ${grouped(n)} records`)),
  );
  readNotices(from, { size: copied.records, repair: copied.sourceRepair });
  const seconds = (performance.now() - started) / 1000;
  const c = copied.counts;
  out.line(`${to}: copied ${plural(copied.records, 'record')} from ${from} in ${seconds.toFixed(2)} s, and read it back: ${c.decided} decided (sent ${c.sent}, waiting ${c.waiting}, failed ${c.failed}, skipped ${c.skipped})`);
  await out.flush();
  return 0;
}

/** `export <ledger>`: the ledger's records as canonical JSONL, on stdout. */
async function exportLedger(context: Context): Promise<number> {
  const { args: [path = ''], out, progress } = context;
  // The progress line is redrawn as lines go out; it must come off once the last one has.
  return reading(context, (ledger) => progress.around(async () => {
    let n = 0;
    for await (const record of ledger.records()) {
      out.line(encodeRecord(record));
      if (out.full) {
        await out.flush();
        progress.show(() => `exporting ${path}: ${grouped(n)} records`);
      }
      n++;
    }
    await out.flush();
    return 0;
  }));
}

interface Command {
  /** The arguments and flags, for the usage text. */
  readonly synopsis: string;
  readonly summary: string;
  /** The names of its positionals. */
  readonly args: readonly string[];
  readonly flags: readonly Flag[];
  readonly run: (context: Context) => Promise<number>;
}

const COMMANDS = {
  verify: {
    synopsis: '<ledger> [--index <folder>]',
    summary: 'read the ledger through; one line: ok and its counts, or the damage; with --index, check the read model against it',
    args: ['<ledger>'],
    flags: ['index'],
    run: verify,
  },
  counts: { synopsis: '<ledger> [--json] [--index <folder>]', summary: 'how many items are decided, sent, waiting, failed, skipped', args: ['<ledger>'], flags: ['json', 'index'], run: counts },
  outbox: { synopsis: '<ledger> [--json] [--index <folder>]', summary: 'every waiting item and its action, in decision order', args: ['<ledger>'], flags: ['json', 'index'], run: outbox },
  'sent-ids': {
    synopsis: '<ledger> <item-as-json> [--json] [--index <folder>]',
    summary: "the ids of the item's sent record",
    args: ['<ledger>', '<item-as-json>'],
    flags: ['json', 'index'],
    run: sentIds,
  },
  conclusion: {
    synopsis: '<ledger> <workspace> <text> [--json] [--index <folder>]',
    summary: 'the conclusion an undo must delete (workspace: trusted, untrusted or fleet)',
    args: ['<ledger>', '<workspace>', '<text>'],
    flags: ['json', 'index'],
    run: conclusion,
  },
  append: {
    synopsis: '<ledger> [--index <folder>]',
    summary: 'append the record lines on stdin, each durable before the next',
    args: ['<ledger>'],
    flags: ['index'],
    run: append,
  },
  check: { synopsis: '', summary: 'each record line on stdin: "ok <canonical line>" or "err <why>"', args: [], flags: [], run: check },
  copy: {
    synopsis: '<from> <to>',
    summary: 'copy a ledger into an empty one, on any backend, and check the copy',
    args: ['<from>', '<to>'],
    flags: [],
    run: copy,
  },
  export: { synopsis: '<ledger>', summary: "the ledger's records as canonical JSONL, on stdout", args: ['<ledger>'], flags: [], run: exportLedger },
  index: {
    synopsis: 'build|status|rebuild <ledger> --index <folder>',
    summary: 'the read model in <folder>: bring it up to date, say where it stands, or build it again from the start',
    args: ['build|status|rebuild', '<ledger>'],
    flags: ['index'],
    run: indexCommand,
  },
  gen: {
    synopsis: '<ledger> --records N [--seed S]',
    summary: 'write a realistic synthetic ledger (a new file, or an empty ledger elsewhere)',
    args: ['<ledger>'],
    flags: ['records', 'seed'],
    run: gen,
  },
} satisfies { readonly [name: string]: Command };

type CommandName = keyof typeof COMMANDS;

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

function synopsisOf(name: CommandName): string {
  return `ledgerstore ${name}${COMMANDS[name].synopsis === '' ? '' : ` ${COMMANDS[name].synopsis}`}`;
}

const NAMES = Object.keys(COMMANDS) as CommandName[];

/** The short usage, for a command line without a known command. */
function usage(): string {
  return ['usage:', ...NAMES.map((name) => `  ${synopsisOf(name)}`), '  ledgerstore --help', ''].join('\n');
}

/** `--help`: every command and what it does. */
function help(): string {
  return [
    'usage: ledgerstore <command> [arguments]: look into a Honcho ledger (memoryd\'s honcho.jsonl),',
    'append record lines to it, check record lines, write a synthetic one.',
    '',
    ...NAMES.flatMap((name) => [`  ${synopsisOf(name)}`, `      ${COMMANDS[name].summary}`]),
    '',
    'A <ledger> is a path to a JSONL file (memoryd\'s), jsonl:<path>, level:<folder> (LevelDB)',
    'or memory:. Only append, copy (its target) and gen write; the others never change a ledger.',
    'With --index <folder>, a ledger keeps its state in a LevelDB read model there (created if',
    'missing): an open reads only what was appended since, and the queries answer from it.',
    'Flags may come before or after the arguments; -- ends the flags.',
    'Exit status: 0 ok; 1 the ledger refused a record, or is damaged or unreadable; 2 usage.',
  ].join('\n');
}

// -- main -------------------------------------------------------------------------------------

/** An error's text for stderr: a ledger error with its runbook pointer; a bug with its stack. */
function report(error: unknown): string {
  if (error instanceof LedgerError) return error.report;
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string') return describeSystemError(error);
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Checks the command line against the command and runs it. */
async function run(argv: readonly string[], out: Output): Promise<number> {
  const { positionals, switches, values, mistake } = parseArgs(argv);
  const [name, ...args] = positionals;
  if (switches.has('help') || name === 'help') {
    out.line(help());
    await out.flush();
    return 0;
  }
  if (name === undefined) throw new UsageError(mistake ?? 'no command given', undefined);
  if (!isCommand(name)) throw new UsageError(`unknown command ${JSON.stringify(name)}`, undefined);
  if (mistake !== undefined) throw new UsageError(mistake, name);
  const command: Command = COMMANDS[name];
  for (const flag of [...switches, ...values.keys()]) {
    if (!command.flags.includes(flag)) throw new UsageError(`${name} takes no --${flag}`, name);
  }
  // An empty name would reach the file system as the path '' and fail there with ENOENT, as if
  // something were missing: it is a mistake in the command line.
  if (values.get('index') === '') throw new UsageError('--index needs a folder, not an empty name', name);
  const missing = command.args[args.length];
  if (missing !== undefined) throw new UsageError(`${name} needs ${missing}`, name);
  if (args.length > command.args.length) throw new UsageError(`${name} takes no argument ${JSON.stringify(args[command.args.length])}`, name);
  return command.run({ args, switches, values, out, progress: new Progress(process.stderr.isTTY === true) });
}

/** Runs the command line and gives the exit status; every failure is reported here. */
async function main(argv: readonly string[]): Promise<number> {
  // A stderr whose reader went away must not turn a finished command into a crash.
  process.stderr.on('error', () => {});
  const out = new Output(process.stdout);
  try {
    return await run(argv, out);
  } catch (e) {
    if (e instanceof UsageError) {
      warn(e.message);
      if (e.showUsage) process.stderr.write(e.command === undefined ? usage() : `usage: ${synopsisOf(e.command)}\n(ledgerstore --help lists every command)\n`);
      return 2;
    }
    if (e instanceof OutputClosed) {
      // The reader stopped reading (`| head`): what it read is what it wanted. Anything else
      // (a full disk under a redirect) is a failure.
      const code = (e.failure as NodeJS.ErrnoException | null)?.code;
      if (e.failure === null || code === 'EPIPE') return 0;
      warn(`stdout: ${describeSystemError(e.failure)}`);
      return 1;
    }
    warn(report(e));
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
