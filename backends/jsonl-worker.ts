/**
 * A worker thread of a JSONL log's read-through (`jsonl-scan.ts`): it imports the codec's scan
 * (`RecordCodec.lineScan.module`), then scans each run of lines it is sent on its port, in a
 * buffer it shares with the thread that reads the file, and sends back what the scan gave; after
 * each reply it counts up `signal[0]` and wakes the reading thread, which waits for replies
 * without turning its event loop (`Atomics.wait`, `receiveMessageOnPort`).
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

/** What the scan of a request gave (a copy of its slots, handed over), or `ready` once the scan is loaded. */
export type ScanReply = { readonly id: number; readonly slots: Int32Array } | { readonly ready: true };

const { module, port, signal } = workerData as ScanWorkerData;

function reply(message: ScanReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

const { scanLines } = (await import(module)) as { readonly scanLines: ScanLines };
port.on('message', ({ id, buffer, length }: ScanRequest) => {
  const { slots, length: used } = scanLines(new Uint8Array(buffer), 0, length);
  const copy = slots.slice(0, used);
  reply({ id, slots: copy }, [copy.buffer]);
});
reply({ ready: true });
