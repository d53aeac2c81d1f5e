/**
 * The synthetic ledgers the benchmarks measure: the library's generator
 * (`lib/honcho/synthetic.ts`), and a ledger file of it written whole
 * (`backends/jsonl-write-whole.ts`).
 *
 * @module
 */
import { type WriteOptions, writeJsonlWhole } from '../backends/jsonl-write-whole.js';
import { syntheticLines, type WorkloadOptions } from '../lib/honcho/synthetic.js';

export { WORKLOAD_VERSION, type WorkloadOptions, workload } from '../lib/honcho/synthetic.js';

/**
 * Writes the synthetic ledger of `options` to the new file `file`, whole or not at all.
 * @throws LedgerIoError when `file` exists already or the file system fails
 */
export function writeSyntheticLedger(
  file: string,
  options: WorkloadOptions & WriteOptions,
): Promise<{ records: number; bytes: number }> {
  return writeJsonlWhole(file, syntheticLines(options), options);
}
