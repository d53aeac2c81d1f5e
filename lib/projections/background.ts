/**
 * A build in a worker thread (`build-worker.ts`), as the serving thread sees it: started with
 * its order, telling how far it is, done or failed; and the records appended meanwhile, kept in
 * order from the build's limit on, for the rows to catch up with before they take over.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import { BuildFailedError, DamagedError, LedgerIoError } from '../errors.js';
import type { Position, ResumePoint } from '../log.js';
import type { BuildMessage, BuildOrder, FailureReport } from './build-worker.js';
import type { GenerationEntry } from './generation.js';

const WORKER = new URL('./build-worker.js', import.meta.url);

/** Records appended while a build runs: from `first`, in order. */
export interface Appended<R> {
  readonly first: Position;
  readonly records: readonly R[];
}

/** A build running in a worker thread. */
export class BackgroundBuild<R> {
  /** Records built so far, of `total`. */
  done = 0;
  readonly total: number;
  private readonly started = performance.now();
  /** Settles when the worker has finished: resolves when the rows are written, rejects with why they are not. */
  readonly finished: Promise<void>;
  /** Set when it failed. */
  failure: Error | null = null;
  /** What was appended since the limit, in order (taken by the catch-up before the takeover). */
  readonly appended: Appended<R>[] = [];
  private readonly worker: Worker;
  private ended = false;

  constructor(
    readonly order: BuildOrder,
    /** The database it builds in (`db-<n>`). */
    readonly database: string,
    onProgress: () => void,
  ) {
    this.total = order.limit.position;
    this.worker = new Worker(WORKER, { workerData: order });
    this.finished = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (message: BuildMessage) => {
        if (message.type === 'progress') {
          this.done = message.done;
          onProgress();
        } else if (message.type === 'done') {
          this.done = this.total;
          this.ended = true;
          resolve();
        } else {
          this.ended = true;
          reject((this.failure = errorOf(message.error, order.folder)));
        }
      });
      this.worker.on('error', (e) => {
        this.ended = true;
        reject((this.failure = e));
      });
      this.worker.on('exit', (code) => {
        if (this.ended) return;
        this.ended = true;
        reject((this.failure = new BuildFailedError(order.folder, `its thread exited with code ${code}`)));
      });
    });
    this.finished.catch(() => undefined); // the set reports it
  }

  /** The entries of the generations it builds. */
  get generations(): readonly GenerationEntry[] {
    return this.order.generations.map((g) => g.entry);
  }

  /** The point it builds to: the rows' checkpoint when it is done. */
  get limit(): ResumePoint {
    return this.order.limit;
  }

  /** Records built a second, since it started. */
  get rate(): number {
    const seconds = (performance.now() - this.started) / 1000;
    return seconds > 0 ? Math.round(this.done / seconds) : 0;
  }

  /** Stops the thread (the ledger closes): its database is left unfinished, marked, and thrown away by the next open. */
  async stop(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.worker.terminate();
  }
}

/** A failure reported by the worker, as an error of this thread: the system's failures stay the folder's I/O errors. */
function errorOf(report: FailureReport, folder: string): Error {
  if (report.damage !== null) return new DamagedError(report.damage.path, report.damage.line, report.damage.why);
  if (report.code === 'LEDGER_IO') return new LedgerIoError(folder, new Error(report.message));
  return new BuildFailedError(folder, report.message);
}
