/**
 * A `COPY ... TO STDOUT` read off node-postgres's connection as one byte stream: the rows' data,
 * back to back, without the protocol's message headers, as `pg-copy-streams`' `to` gives it,
 * and taken from the connection the same way (it takes the socket's reading over from
 * node-postgres while the copy runs, and hands back what follows it, an error included).
 *
 * Why not `pg-copy-streams` itself: the server sends each row as a message of its own, and
 * `to` reads each one's header and body through a buffer list, a few calls a row, then joins the
 * bodies into a new buffer: a million rows cost 0.3-0.5 s of this thread's time that a read-through
 * spends on nothing else. Here a socket chunk's rows are moved down over their headers in the
 * chunk itself (one `copyWithin` a row), and the chunk is handed on: nothing is allocated but
 * for the few bytes of a header that a chunk cuts in two.
 *
 * That is a reach below node-postgres's public API (its connection's `stream`, its one `data`
 * listener, `query`), written for {@link PG_VERSION}, which package.json pins; a test fails when
 * the installed pg is another. A connection of another shape is refused before anything is
 * sent, in words (`submit` gives node-postgres the error, which fails the copy's stream, and the
 * read's `LEDGER_IO` says what to install), never read wrongly.
 *
 * @module
 */
import { Readable, type ReadableOptions } from 'node:stream';
import type * as pg from 'pg';
import { NoAnswer } from './connection.js';

const ERROR_RESPONSE = 0x45;
const COPY_OUT_RESPONSE = 0x48;
const COPY_DATA = 0x64;
const NOTICE_RESPONSE = 0x4e;
const NOTIFICATION_RESPONSE = 0x41;
const PARAMETER_STATUS = 0x53;
/** A message's code and length. */
const HEADER = 5;

/** The node-postgres whose connection this reads below its API. */
export const PG_VERSION = '8.23.1';

/** The part of node-postgres's connection the copy reads: its socket's stream. */
interface Connection {
  readonly stream: Readable;
  query(text: string): void;
}

/** A `COPY ... TO STDOUT` to submit to a node-postgres client; its data comes as a byte stream. */
export class CopyOut extends Readable implements pg.Submittable {
  private connection: Connection | null = null;
  /** node-postgres's own reader of the socket, set aside while the copy reads it. */
  private pgData: ((chunk: Buffer) => void) | null = null;
  /** The bytes of a header that the last chunk ended inside. */
  private partial: Buffer | null = null;
  /** Bytes left of the message being read, and whether they are row data (else skipped). */
  private left = 0;
  private leftIsData = false;
  /** Whether the reader wants more. */
  private wanted = false;
  private forwarding = false;
  private finished = false;
  private readonly onReadable = (): void => this.forward();
  /**
   * Set while the reader wants more and the server has sent nothing since: at the client's
   * deadline, the copy fails and its connection is destroyed (a server that stopped answering
   * would otherwise be waited for as long as TCP keeps the connection). A reader that takes its
   * time is not timed: the copy runs at its pace.
   */
  private stall: NodeJS.Timeout | null = null;
  private readonly deadlineMs: number;

  /** @param options `deadlineMs`: how long the server may send nothing while more is wanted (default: forever) */
  constructor(
    private readonly text: string,
    { deadlineMs = 0, ...options }: ReadableOptions & { readonly deadlineMs?: number } = {},
  ) {
    super(options);
    this.deadlineMs = deadlineMs;
  }

  /**
   * Called by node-postgres when the copy's turn comes on the connection. A connection of
   * another shape than {@link PG_VERSION}'s is not read: the error is returned, which
   * node-postgres hands to {@link handleError} with nothing sent.
   */
  submit(connection: pg.Connection): Error | undefined {
    const why = unreadable(connection);
    if (why !== null)
      return new Error(
        `node-postgres's connection is not the one this ledgerstore reads a COPY from (${why}; it was written for pg ${PG_VERSION}): install pg ${PG_VERSION}, as ledgerstore's package.json pins it`,
      );
    const c = connection as unknown as Connection;
    this.connection = c;
    this.pgData = c.stream.listeners('data')[0] as (chunk: Buffer) => void;
    c.stream.removeListener('data', this.pgData);
    c.stream.pause();
    c.stream.on('readable', this.onReadable);
    c.query(this.text);
    this.watchStall(false);
    return undefined;
  }

  override _read(): void {
    this.wanted = true;
    this.forward();
  }

  /** Reads the socket while the reader wants more. */
  private forward(): void {
    const connection = this.connection;
    if (this.forwarding || !this.wanted || connection === null || this.finished) return;
    this.forwarding = true;
    let chunk: Buffer | null;
    let got = false;
    while (this.wanted && !this.finished && (chunk = connection.stream.read() as Buffer | null) !== null) {
      this.parse(chunk);
      got = true;
    }
    this.forwarding = false;
    this.watchStall(got);
  }

  /** Starts the stall's timer while more is wanted and nothing came (again, when something did), else stops it. */
  private watchStall(got: boolean): void {
    const waiting = this.deadlineMs > 0 && this.wanted && !this.finished && !this.destroyed;
    if (this.stall !== null && (got || !waiting)) {
      clearTimeout(this.stall);
      this.stall = null;
    }
    if (!waiting || this.stall !== null) return;
    this.stall = setTimeout(() => {
      this.stall = null;
      const connection = this.connection;
      this.destroy(new NoAnswer(this.deadlineMs));
      // node-postgres's client then fails its copy and ends: it is never reused
      connection?.stream.destroy();
    }, this.deadlineMs);
    this.stall.unref();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.stall !== null) clearTimeout(this.stall);
    this.stall = null;
    callback(error);
  }

  /** Takes the rows' data out of `chunk`, in place, and hands it on. */
  private parse(incoming: Buffer): void {
    let chunk = incoming;
    if (this.partial !== null) {
      chunk = Buffer.concat([this.partial, chunk]);
      this.partial = null;
    }
    const length = chunk.length;
    let at = 0; // where the next unread byte is
    let out = 0; // where the data taken so far ends, moved down to the chunk's start
    let done = false;
    while (at < length) {
      if (this.left > 0) {
        const n = Math.min(this.left, length - at);
        if (this.leftIsData) {
          if (out !== at) chunk.copyWithin(out, at, at + n);
          out += n;
        }
        at += n;
        this.left -= n;
        continue;
      }
      if (length - at < HEADER) {
        if (chunk[at] === ERROR_RESPONSE) break; // node-postgres reads the error, whole or not
        this.partial = Buffer.from(chunk.subarray(at));
        at = length;
        break;
      }
      const code = chunk[at] as number;
      if (code === ERROR_RESPONSE) break;
      this.left = chunk.readUInt32BE(at + 1) - 4;
      this.leftIsData = code === COPY_DATA;
      at += HEADER;
      if (
        code !== COPY_DATA &&
        code !== COPY_OUT_RESPONSE &&
        code !== NOTICE_RESPONSE &&
        code !== NOTIFICATION_RESPONSE &&
        code !== PARAMETER_STATUS
      ) {
        // CopyDone, or any other message, ends the copy (the protocol's rule); skipped, as `to` does
        at = Math.min(length, at + this.left);
        this.left = 0;
        done = true;
        break;
      }
    }
    if (out > 0) this.wanted = this.push(chunk.subarray(0, out));
    if (at < length || done) this.detach(chunk.subarray(at), done);
  }

  /** Gives the connection back to node-postgres, with `rest`, what follows the copy (or its error). */
  private detach(rest: Buffer, done: boolean): void {
    const connection = this.connection as Connection;
    const pgData = this.pgData as (chunk: Buffer) => void;
    this.finished = true;
    connection.stream.removeListener('readable', this.onReadable);
    connection.stream.on('data', pgData);
    pgData(rest);
    // node-postgres's reader may pause the stream as it takes `rest`: resumed once it is done
    process.nextTick(() => connection.stream.resume());
    if (done) this.push(null);
  }

  /** Called by node-postgres with the server's error (the copy failed). */
  handleError(e: Error): void {
    this.destroy(e);
  }

  /** Called by node-postgres once the copy's command completed. */
  handleCommandComplete(): void {}

  /** Called by node-postgres once the connection is ready for the next query. */
  handleReadyForQuery(): void {}
}

/** What the copy needs of `connection` and it lacks, or `null` when it has all. */
function unreadable(connection: unknown): string | null {
  const c = connection as { stream?: unknown; query?: unknown } | null;
  if (typeof c?.query !== 'function') return 'it has no query()';
  const stream = c.stream as Partial<Readable> | null | undefined;
  for (const method of ['read', 'listeners', 'removeListener', 'on', 'pause', 'resume', 'destroy'] as const)
    if (typeof stream?.[method] !== 'function') return `its stream has no ${method}()`;
  const readers = (stream as Readable).listeners('data').length;
  return readers === 1 ? null : `its stream has ${readers} readers of its data, not node-postgres's one`;
}
