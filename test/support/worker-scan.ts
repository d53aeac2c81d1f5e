/**
 * The ledger codec's scan (`lib/honcho/scan.ts`) as a JSONL read-through's worker thread loads it
 * (`RecordCodec.lineScan.module`), with what a test needs to see or break on the worker's side.
 * On the main thread it is the plain scan. It imports nothing but the scan, as a worker's module
 * must not.
 *
 * - On a worker thread, once loaded, it says so on the {@link LOADED} broadcast channel, after the
 *   worker has told the reading thread it is ready: a test that waits for that knows that from
 *   then on the read-through hands runs to workers.
 * - With the query `?throws` in its URL, it throws at its first run on a worker thread, as a
 *   scan that crashes does: the worker says so and takes no more runs.
 * - With `?exits`, the worker thread ends at its first run without a word (`process.exit`), as
 *   one that dies does: it holds the runs it was given.
 *
 * @module
 */
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import { scanLines as ledgerScan } from '../../lib/honcho/scan.js';
import type { Scanned } from '../../lib/line-scan.js';

/** The broadcast channel a worker says `loaded` on. */
export const LOADED = 'ledgerstore-test-worker-scan-loaded';

/** How the scan fails on its worker: not at all, by throwing, or by ending the worker's thread. */
export type WorkerFailure = 'none' | 'throws' | 'exits';

/** The module's URL, for a codec's `lineScan.module`, with the failure its worker is to meet. */
export const workerScanModule = (failure: WorkerFailure): string =>
  new URL(`./worker-scan.js${failure === 'none' ? '' : `?${failure}`}`, import.meta.url).href;

const failure = new URL(import.meta.url).search.slice(1);

if (!isMainThread) {
  // a macrotask: the worker's ready reply, posted as soon as this module is imported, goes first
  setImmediate(() => {
    const channel = new BroadcastChannel(LOADED);
    channel.postMessage('loaded');
    channel.close();
  });
}

/** The scan a worker runs. */
export function scanLines(bytes: Uint8Array, from: number, to: number): Scanned {
  if (!isMainThread && failure === 'throws') throw new Error('the scan crashed on its worker thread');
  if (!isMainThread && failure === 'exits') process.exit(1);
  return ledgerScan(bytes, from, to);
}
