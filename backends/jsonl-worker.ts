/**
 * A worker thread of a JSONL log's read-through (`jsonl-scan.ts`): it imports the codec's scan
 * (`RecordCodec.lineScan.module`), then scans each run of lines it is sent on its port, in a
 * buffer it shares with the thread that reads the file, and sends back what the scan gave; after
 * each reply it counts up `signal[0]` and wakes the reading thread, which waits for replies
 * without turning its event loop (`Atomics.wait`, `receiveMessageOnPort`). A scan that fails to
 * load or throws is replied too (`failed`): the reading thread, which hears of a worker's
 * events only once its event loop turns, would otherwise wait out its timeout for each run.
 *
 * @module
 */
import { type MessagePort, workerData } from 'node:worker_threads';
import type { ScanLines } from '../lib/line-scan.js';

/** What a worker is started with. */
export interface ScanWorkerData {
  readonly module: string;
  readonly port: MessagePort;
  readonly signal: Int32Array;
}

/** A run of lines to scan: `[0, length)` of a buffer shared with the reading thread. */
export interface ScanRequest {
  readonly id: number;
  readonly buffer: SharedArrayBuffer;
  readonly length: number;
}

/**
 * What the scan of a request gave (a copy of its slots, handed over); `ready` once the scan is
 * loaded; `failed` when it could not be loaded or threw (the worker takes no more runs).
 */
export type ScanReply =
  | { readonly id: number; readonly slots: Int32Array }
  | { readonly ready: true }
  | { readonly failed: string };

const { module, port, signal } = workerData as ScanWorkerData;

function reply(message: ScanReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

/** Says why the scan cannot go on, and takes no more runs. */
function fail(e: unknown): void {
  reply({ failed: e instanceof Error ? e.message : String(e) });
  port.close();
}

try {
  const { scanLines } = (await import(module)) as { readonly scanLines: ScanLines };
  port.on('message', ({ id, buffer, length }: ScanRequest) => {
    try {
      const { slots, length: used } = scanLines(new Uint8Array(buffer), 0, length);
      const copy = slots.slice(0, used);
      reply({ id, slots: copy }, [copy.buffer]);
    } catch (e) {
      fail(e);
    }
  });
  reply({ ready: true });
} catch (e) {
  fail(e);
}
