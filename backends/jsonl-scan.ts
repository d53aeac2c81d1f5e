/**
 * A JSONL log's read-through with its codec's scan (`lib/line-scan.ts`), on several cores when
 * the file is large: this thread reads the file a run of whole lines at a time, each run into a
 * buffer of its own that worker threads share; a worker scans a run while this thread makes the
 * records of the runs before it and hands them to `replay`, in order. A run that no worker is
 * free to take when its turn comes is scanned here. So the records reach `replay` in file order,
 * one at a time, exactly as without workers: the first line that is no record is refused when
 * it is reached, after every line before it was taken and before any after it, at its line.
 *
 * - **How many threads**: all the machine gives (`os.availableParallelism()`), at most one
 *   worker for every two runs the file holds; none for a file smaller than {@link WORKERS_FROM}
 *   (starting one costs more than it saves). Each worker keeps two runs in hand, so that it has
 *   the next to scan while this thread takes in what it gave.
 * - **Memory**: the buffers of the runs in hand, reused as their records are taken: at most
 *   two runs a worker and two more, a few MiB each, and none longer than the bytes to read (an
 *   open of a small file costs what the file does).
 * - **A worker that fails** (its scan did not load or threw, it could not start, it died) gives
 *   its runs back: they are scanned here. A failing scan says so at once; a worker that dies
 *   without a word is given up after {@link GIVE_UP_MS}. A worker is no judge of a line: whatever it gives, a line it does not vouch for is
 *   decoded here, the ordinary way.
 *
 * @module
 */
import * as os from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { Fd, FileIO } from '../lib/file-io.js';
import type { LineScan, Scanned, ScannedLines } from '../lib/line-scan.js';
import { isOverlong, type LineRun, lineRuns, type OverlongLine } from './jsonl-lines.js';
import type { ScanReply, ScanRequest, ScanWorkerData } from './jsonl-worker.js';

/**
 * Below this many bytes to read, no worker is started: a worker's start (a thread, its modules
 * loaded and compiled) costs tens of milliseconds, which a file of 100k records (16 MiB) does not
 * win back (measured: 0.16 s on one thread, 0.21-0.26 s with a worker), and about what one of
 * 200k records wins back on an idle second core.
 */
export const WORKERS_FROM = 32 << 20;
/** The runs a file is read in when it is scanned: small enough that the workers start early and share the work evenly. */
const RUN_BYTES = 2 << 20;
/** Runs a worker keeps in hand. */
const IN_HAND = 2;
/** How long this thread waits for a worker's reply before it takes the worker for lost and scans the run itself. */
const GIVE_UP_MS = 5000;

/** How a read-through spreads its work. */
export interface ScanOptions {
  /** Threads in all, this one included: 1 for no worker. Default: all the machine gives. */
  readonly threads?: number;
  /** Below this many bytes to read, no worker is started. Default {@link WORKERS_FROM}. */
  readonly workersFrom?: number;
}

/** A run of whole lines and its lines, scanned: `buffer[0]` is at the file offset `position`. */
export interface ScannedRun<R> {
  readonly buffer: Buffer;
  readonly position: number;
  readonly lines: ScannedLines<R>;
}

/** A run read and waiting its turn, and the worker scanning it (`null`: it is scanned here). */
interface Pending {
  readonly run: LineRun;
  worker: ScanWorker | null;
  id: number;
}

/**
 * A worker thread with the scan loaded, and the runs it has in hand. Its replies are taken from
 * its port synchronously (`receiveMessageOnPort`): this thread never needs its event loop to
 * turn for them, and waits for one, when it must, on the worker's signal.
 */
class ScanWorker {
  private readonly thread: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly replies = new Map<number, Scanned>();
  private inHand = 0;
  private ready = false;
  private lost = false;
  private next = 0;

  constructor(module: string) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.thread = new Worker(new URL('./jsonl-worker.js', import.meta.url), {
      workerData: { module, port: port2, signal: this.signal } satisfies ScanWorkerData,
      transferList: [port2],
    });
    this.thread.unref();
    // a worker that cannot start or dies gives its runs back (they are scanned here)
    this.thread.on('error', () => {
      this.lost = true;
    });
  }

  /** Whether it can take another run now. */
  get free(): boolean {
    this.receive();
    return this.ready && !this.lost && this.inHand < IN_HAND;
  }

  /** Sends it a run to scan; the id to ask for its scan by. */
  scan(buffer: SharedArrayBuffer, length: number): number {
    const id = this.next++;
    this.inHand++;
    this.port.postMessage({ id, buffer, length } satisfies ScanRequest);
    return id;
  }

  /** The scan of run `id`, waited for; `null` when the worker is lost (scan it here). */
  scanned(id: number): Scanned | null {
    const waitedFrom = performance.now();
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      this.receive();
      const scanned = this.replies.get(id);
      if (scanned !== undefined) {
        this.replies.delete(id);
        this.inHand--;
        return scanned;
      }
      if (this.lost || performance.now() - waitedFrom > GIVE_UP_MS) {
        this.lost = true;
        return null;
      }
      Atomics.wait(this.signal, 0, seen, 100);
    }
  }

  /** Takes every reply that has come. */
  private receive(): void {
    for (let got = receiveMessageOnPort(this.port); got !== undefined; got = receiveMessageOnPort(this.port)) {
      const reply = got.message as ScanReply;
      if ('ready' in reply) this.ready = true;
      else if ('failed' in reply) this.lost = true;
      else this.replies.set(reply.id, { slots: reply.slots, length: reply.slots.length });
    }
  }

  stop(): void {
    this.lost = true;
    this.port.close();
    void this.thread.terminate();
  }
}

/** Buffers over shared memory for runs, each reused once the records of its run were taken. */
class RunBuffers {
  private readonly spare: Buffer[] = [];

  constructor(private readonly size: number) {}

  take(least: number): Buffer {
    const spare = this.spare.pop();
    if (spare !== undefined && spare.length >= least) return spare;
    return Buffer.from(new SharedArrayBuffer(Math.max(least, this.size)));
  }

  give(buffer: Buffer): void {
    if (buffer.length === this.size && buffer.buffer instanceof SharedArrayBuffer) this.spare.push(buffer);
  }
}

/** How many workers a read-through of `bytes` starts. */
function workersFor(bytes: number, { threads, workersFrom = WORKERS_FROM }: ScanOptions): number {
  if (bytes < workersFrom) return 0;
  const all = threads ?? os.availableParallelism();
  return Math.max(0, Math.min(all - 1, Math.floor(bytes / (2 * RUN_BYTES))));
}

/**
 * The whole lines of the file's bytes `[from, to)`, a run at a time, each scanned (by a worker, or
 * here when none is free) and given with its lines in file order; a line longer than a line may
 * be as an {@link OverlongLine}, after which nothing more is given. A run is valid until the next
 * is asked for. Workers are stopped when the read-through ends, however it ends.
 */
export function* scannedRuns<R>(
  io: FileIO,
  fd: Fd,
  name: string,
  from: number,
  to: number,
  chunkSize: number,
  lineScan: LineScan<R>,
  options: ScanOptions,
): Generator<ScannedRun<R> | OverlongLine> {
  const count = workersFor(to - from, options);
  const runBytes = count === 0 ? chunkSize : Math.min(chunkSize, RUN_BYTES);
  // no longer than what there is to read: a chunk of shared memory (8 MiB) an open, whatever the
  // file's size, piled up over many opens of small files (300 took 1.3 GiB)
  const buffers = new RunBuffers(Math.max(1, Math.min(runBytes, to - from)));
  const workers = Array.from({ length: count }, () => new ScanWorker(lineScan.module));
  const runs = lineRuns(io, fd, name, from, to, runBytes, false, (_done, least) => buffers.take(least));
  const pending: Pending[] = [];
  let overlong: OverlongLine | null = null;
  let ended = false;
  /** Reads runs ahead, so that every worker has as many in hand as it takes, and hands them out. */
  const readAhead = (): void => {
    while (!ended && pending.length < count * IN_HAND + 1) {
      const next = runs.next();
      if (next.done === true) ended = true;
      else if (isOverlong(next.value)) {
        overlong = next.value;
        ended = true;
      } else pending.push({ run: next.value, worker: null, id: -1 });
    }
    // the first run waits for no worker: it is this thread's next work either way
    for (let n = 1; n < pending.length; n++) {
      const waiting = pending[n] as Pending;
      if (waiting.worker !== null) continue;
      const { buffer, length } = waiting.run;
      const worker = workers.find((w) => w.free);
      if (worker === undefined || !(buffer.buffer instanceof SharedArrayBuffer)) break;
      waiting.worker = worker;
      waiting.id = worker.scan(buffer.buffer, length);
    }
  };
  try {
    for (;;) {
      readAhead();
      const head = pending.shift();
      if (head === undefined) break;
      const { run } = head;
      const scanned = head.worker?.scanned(head.id) ?? lineScan.scan(run.buffer, 0, run.length);
      readAhead();
      yield { buffer: run.buffer, position: run.position, lines: lineScan.lines(run.buffer, 0, run.length, scanned) };
      buffers.give(run.buffer);
    }
    if (overlong !== null) yield overlong;
  } finally {
    for (const worker of workers) worker.stop();
  }
}
