/**
 * The ledger codec's scan (`lib/honcho/scan.ts`) as a JSONL read-through's worker thread loads it
 * (`RecordCodec.lineScan.module`), with what a test needs to see or break on the worker's side.
 * On the main thread it is the plain scan. It imports nothing but the scan, as a worker's module
 * must not.
 *
 * - On a worker thread, once loaded, it says so on the {@link LOADED} broadcast channel, after the
 *   worker has told the reading thread it is ready: a test that waits for that knows that from
 *   then on the read-through hands runs to workers.
 * - With the query `?dies` in its URL, it throws at its first run on a worker thread, as a scan
 *   that crashes does: the worker dies holding the runs it was given.
 *
 * @module
 */
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import { scanLines as ledgerScan } from '../../lib/honcho/scan.js';
import type { Scanned } from '../../lib/line-scan.js';

/** The broadcast channel a worker says `loaded` on. */
export const LOADED = 'ledgerstore-test-worker-scan-loaded';

/** The module's URL, for a codec's `lineScan.module`: with `dies`, a scan that crashes on its worker. */
export const workerScanModule = (dies: boolean): string =>
  new URL(`./worker-scan.js${dies ? '?dies' : ''}`, import.meta.url).href;

const dies = new URL(import.meta.url).search === '?dies';

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
  if (dies && !isMainThread) throw new Error('the scan crashed on its worker thread');
  return ledgerScan(bytes, from, to);
}
