/**
 * The open's read-through: a log's lines streamed out of the server with `COPY ... TO STDOUT`
 * and read as a JSONL file's bytes are, in the same pass.
 *
 * Why a `COPY`: node-postgres's cost is per message, and a query's rows are a message each; a
 * `COPY` read off the connection ({@link CopyOut}, `copy-stream.ts`) comes as the socket's
 * chunks, many lines each, which are never made into rows. In CSV with a delimiter and a quote
 * that no canonical line holds (`\x02`, `\x01`: JSON escapes every control character), each row
 * is its line and a newline, byte for byte: the stream *is* the log's JSONL text, and the codec's line scan
 * (`RecordCodec.lineScan`, the byte scan of `lib/honcho/scan.ts`) reads it in runs, the lines
 * handed to the read-through one by one, in order, so that the first line that is no record is
 * refused at its position, after every line before it was taken. A codec without a scan decodes
 * each line as it is reached.
 *
 * The log is copied a span of {@link COPY_SPAN} positions at a time, each its own statement (and
 * positions below the head are committed and never change, so the spans read what one statement
 * would), so that a snapshot is held for a span's time, not the whole read's. A span's `COPY`
 * runs as long as its reader takes (the server waits for the socket while the lines are taken
 * in, and the next span's is begun while one is read), which is the reader's pace, not the
 * server's: it runs without the session's `statement_timeout`, which would fail a read-through
 * slower than a span a timeout (an async replay, a read model's catch-up on a slow disk, a
 * process paused), and the session has it back before it is reused. The client's deadline holds
 * still: the server may send nothing for that long while more is wanted (`copy-stream.ts`). A
 * session the server ends meanwhile fails the read with `LEDGER_IO`, never the process (the
 * pool's clients all have an `error` listener, `connection.ts`). A hole is found by the server: a row whose position
 * is not the span's start plus its rank is sent as `NULL`, which CSV writes as an empty line (a
 * stored empty line is written quoted); the first empty line is the first missing position, and
 * a span with fewer lines than positions ends with missing ones.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import type * as pg from 'pg';
import type { ScannedLines } from '../../lib/line-scan.js';
import type { OpenOptions, Position, RecordCodec, SizeSample } from '../../lib/log.js';
import { type ReadPool, serverFailure } from './connection.js';
import { CopyOut } from './copy-stream.js';
import { missingRecord } from './read.js';
import { identifier, literal } from './schema.js';
import type { PostgresPlace } from './uri.js';

/** Positions a `COPY` reads: large enough that starting one is a small part of its cost, small enough that its snapshot is short. */
export const COPY_SPAN = 100_000;
/** Bytes of lines gathered before they are scanned, as a JSONL file is read a run at a time. */
const RUN_BYTES = 256 << 10;
/**
 * Bytes the stream takes off the socket ahead of the runs being read: the server goes on
 * sending while a run is taken in, instead of stopping once the socket's buffer (a few hundred
 * KiB) is full and waiting for this thread, which then waits for it in turn.
 */
const AHEAD_BYTES = 8 << 20;
/**
 * A span's session while its `COPY` runs: no `statement_timeout` (see the module's comment), and
 * the plan that walks the key in order, whatever the planner estimates. A span near the log's
 * end (or any, before the table's statistics are gathered) is estimated to hold fewer rows than
 * its `LIMIT`, and then planned as a parallel bitmap scan and a sort: two more server processes,
 * a sort that spills to disk, and the first row only once every row was read (measured on the
 * last span of 1M: 590-620 ms in the executor, against 475 ms for the walk of the key).
 */
const SPAN_SETTINGS = 'SET statement_timeout = 0; SET enable_sort = off; SET max_parallel_workers_per_gather = 0';
const SPAN_RESET = 'RESET statement_timeout; RESET enable_sort; RESET max_parallel_workers_per_gather';
const NEWLINE = 0x0a;
const EMPTY_LINE = Buffer.from('\n\n');

/**
 * The records at `[from, end)`, in runs of scanned lines (or, for a codec without a scan, of
 * records decoded as they are reached), in order.
 * @throws `DamagedError` at the first missing position
 * @throws `LedgerIoError` when the server fails
 */
export async function* copyOut<R>(
  pool: ReadPool,
  place: PostgresPlace,
  codec: RecordCodec<R>,
  from: Position,
  end: Position,
  sizeHint?: OpenOptions<R>['sizeHint'],
): AsyncGenerator<Iterable<R> | ScannedLines<R>> {
  // Each span's COPY starts while the one before is read (the pool has a session for each), so
  // that the server is already sending when the reading gets to it, instead of starting anew.
  const begin = (start: Position): Promise<Span> => {
    const last = Math.min(start + COPY_SPAN, end);
    const failed = (e: unknown): Promise<never> =>
      Promise.reject(serverFailure(place.name, `reading records ${start + 1} to ${last}`, e));
    return pool.connect().then(async (client) => {
      try {
        await client.query(withDeadline(SPAN_SETTINGS, pool.deadlineMs));
      } catch (e) {
        client.release(true);
        return failed(e);
      }
      const stream = client.query(
        new CopyOut(spanText(place, start, last), { highWaterMark: AHEAD_BYTES, deadlineMs: pool.deadlineMs }),
      );
      // its failure is read where the span is, if it is; one dropped unread fails unheard
      stream.on('error', () => undefined);
      return { client, last, stream };
    }, failed);
  };
  // The records to read are known, their bytes are not (the server would have to read every
  // line to say): told once the first run is taken, as the bytes the records of that run make.
  let toTell = sizeHint;
  const hint = (first: SizeSample): void => {
    const told = toTell;
    toTell = undefined;
    told?.(Math.round(((end - from) * first.bytes) / first.records), first);
  };
  let next: Promise<Span> | null = from < end ? begin(from) : null;
  try {
    for (let start = from; next !== null; start += COPY_SPAN) {
      const span = await next;
      next = span.last < end ? begin(span.last) : null;
      next?.catch(() => undefined); // awaited on the next turn, or dropped below
      yield* readSpan(span, place, codec, start, end, pool.deadlineMs, hint);
    }
  } finally {
    // a span begun and never read: its COPY is stopped and its session dropped
    if (next !== null)
      void next.then(
        ({ client, stream }) => {
          stream.destroy();
          client.release(true);
        },
        () => undefined,
      );
  }
}

/** A span's `COPY`, begun: its session, the position it ends before, and its stream. */
interface Span {
  readonly client: pg.PoolClient;
  readonly last: Position;
  readonly stream: CopyOut;
}

/** The records of one span (see {@link copyOut}), its session given back once it is read. */
async function* readSpan<R>(
  { client, last, stream }: Span,
  place: PostgresPlace,
  codec: RecordCodec<R>,
  start: Position,
  end: Position,
  deadlineMs: number,
  taken?: (first: SizeSample) => void,
): AsyncGenerator<Iterable<R> | ScannedLines<R>> {
  let done = false;
  try {
    let position = start;
    for await (const run of runsOf(stream, place, start, last)) {
      const hole = holeIn(run);
      const lines = hole === -1 ? run : run.subarray(0, hole);
      if (lines.length > 0) {
        const batch = codec.lineScan === undefined ? new Decoded(codec, lines) : scanned(codec, lines);
        yield batch; // gone through whole before this goes on
        const count = batch instanceof Decoded ? batch.count : batch.lineEnds().length;
        position += count;
        if (count > 0) taken?.({ bytes: lines.length, records: count });
        // a turn of the event loop, for the socket to be read into the stream meanwhile
        await setImmediate();
      }
      if (hole !== -1) throw missingRecord(place, position, end);
    }
    done = true;
    if (position < last) throw missingRecord(place, position, end);
  } finally {
    // a COPY left half read would go on sending: its session cannot be reused
    if (!done) stream.destroy();
    // one that is reused has its settings back (those it was connected with) first
    const reusable =
      done &&
      (await client.query(withDeadline(SPAN_RESET, deadlineMs)).then(
        () => true,
        () => false,
      ));
    client.release(!reusable);
  }
}

/** `text` as a statement that node-postgres gives up at the deadline (the client is then dropped, not reused). */
function withDeadline(text: string, deadlineMs: number): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = { text, query_timeout: deadlineMs };
  return config;
}

/**
 * The `COPY` of the lines at `[start, last)`, with `NULL` from the first missing position on.
 * The rows are the first `last - start` from `start` by key, not those below `last`: with a
 * `LIMIT` the planner walks the key in order, where a range makes it collect the rows and sort
 * them (1.5-2x the server's time, through psql). Past a hole, rows beyond `last` may come; they are `NULL` too.
 */
function spanText(place: PostgresPlace, start: Position, last: Position): string {
  const table = `${identifier(place.schema)}.records`;
  const rows = `SELECT position, line FROM ${table} WHERE log = ${literal(place.log)} AND position >= ${start} ORDER BY position LIMIT ${last - start}`;
  return `COPY (SELECT CASE WHEN position = ${start - 1} + row_number() OVER (ORDER BY position) THEN line END FROM (${rows}) AS span) TO STDOUT (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`;
}

/** The stream's bytes in runs of whole lines, each at least {@link RUN_BYTES} but the last. */
async function* runsOf(
  stream: Readable,
  place: PostgresPlace,
  start: Position,
  last: Position,
): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < RUN_BYTES) continue;
      const bytes = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, heldBytes);
      const cut = bytes.lastIndexOf(NEWLINE) + 1;
      const rest = bytes.subarray(cut);
      held = rest.length === 0 ? [] : [rest];
      heldBytes = rest.length;
      if (cut > 0) yield bytes.subarray(0, cut);
    }
  } catch (e) {
    throw serverFailure(place.name, `reading records ${start + 1} to ${last}`, e);
  }
  if (heldBytes === 0) return;
  const bytes = Buffer.concat(held, heldBytes);
  // every row of a COPY ends with its newline: bytes after the last are not a row
  if (bytes[bytes.length - 1] !== NEWLINE)
    throw serverFailure(
      place.name,
      `reading records ${start + 1} to ${last}`,
      new Error('the COPY ended inside a row'),
    );
  yield bytes;
}

/** Where the first empty line of `run` (whose bytes before it are whole lines) starts, or -1. */
function holeIn(run: Buffer): number {
  if (run[0] === NEWLINE) return 0;
  const at = run.indexOf(EMPTY_LINE);
  return at === -1 ? -1 : at + 1;
}

/** The lines of `bytes` as the codec's scan reads them. */
function scanned<R>(codec: RecordCodec<R>, bytes: Buffer): ScannedLines<R> {
  const scan = codec.lineScan as NonNullable<RecordCodec<R>['lineScan']>;
  return scan.lines(bytes, 0, bytes.length, scan.scan(bytes, 0, bytes.length));
}

/** The records of `bytes`' lines, each decoded as it is reached (so a line that is no record fails in its place). */
class Decoded<R> implements Iterable<R> {
  /** The lines decoded so far. */
  count = 0;

  constructor(
    private readonly codec: RecordCodec<R>,
    private readonly bytes: Buffer,
  ) {}

  *[Symbol.iterator](): Iterator<R> {
    const { bytes, codec } = this;
    for (let at = 0; at < bytes.length; this.count++) {
      const newline = bytes.indexOf(NEWLINE, at);
      yield codec.decode(bytes, at, newline);
      at = newline + 1;
    }
  }
}
