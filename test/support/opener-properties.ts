/**
 * The opener's property, run by `test/fuzz/opener.test.ts` in a worker (`fuzz-runner.ts`): a
 * file of any shape (`ledgerFile`: random bytes, rule-keeping lines with random damage, long
 * lines, runs of empty lines or NULs, no newline at all), opened read-only (also with the file
 * read in chunks of 1 to 300 bytes, so that lines straddle them) and then for writing, either opens as a replay of its complete lines says it must, or is refused as
 * damage at the line the replay stops at, with that line's reason; nothing else is thrown.
 *
 * `expectedOpen` (`reference-ledger.ts`) computes the verdict from the bytes alone. A successful
 * open must hold exactly the records of the complete lines (read back in order), answer the
 * counts and the outbox as the reference does, and report the torn tail it dropped; a read-only
 * open and every refused open leave the file as it was, and a writable open cuts only the tail.
 */
import { deepStrictEqual, ok, strictEqual } from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as fc from 'fast-check';
import { DamagedError, honchoCodec, jsonlBackend, Ledger, LedgerError, type Record } from '../../lib/index.js';
import { ledgerFile } from './fuzz-arbitraries.js';
import { type PropertyRunner, report, Tally } from './fuzz-runner.js';
import { type Expected, expectedOpen } from './reference-ledger.js';

/** Opens `path` (holding `bytes`) and checks the outcome against `expected`; says which it was. */
export async function checkOpen(
  path: string,
  bytes: Buffer,
  expected: Expected,
  readOnly: boolean,
  chunkSize?: number,
): Promise<'opened' | 'repaired' | 'damaged'> {
  const mode = `${readOnly ? 'read-only' : 'writable'}${chunkSize === undefined ? '' : `, in chunks of ${chunkSize} bytes`}`;
  let ledger: Ledger;
  try {
    ledger = await Ledger.open(chunkSize === undefined ? path : jsonlBackend(path, { codec: honchoCodec, chunkSize }), {
      readOnly,
    });
  } catch (e) {
    if (!(e instanceof LedgerError))
      throw new Error(
        `${mode} open threw something other than a LedgerError: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
      );
    ok(e instanceof DamagedError, `${mode} open refused with ${e.code}, not as damage: ${e.message}`);
    ok(expected.kind === 'damaged', `${mode} open refused a file a replay reads through: ${e.message}`);
    strictEqual(e.line, expected.line, `${mode} open: the damaged line (${e.message})`);
    ok(e.line >= 1 && e.line <= expected.lines, 'a line of the file');
    strictEqual(e.why, expected.why, `${mode} open: why line ${e.line} is damaged`);
    strictEqual(e.path, path);
    deepStrictEqual(readFileSync(path), bytes, `${mode} open refused and left the file as it was`);
    return 'damaged';
  }
  try {
    ok(
      expected.kind === 'open',
      `${mode} open succeeded where line ${expected.kind === 'damaged' ? `${expected.line} is damaged: ${expected.why}` : ''}`,
    );
    const { reference } = expected;
    strictEqual(ledger.size, reference.records.length, `${mode} open: the records of the complete lines`);
    deepStrictEqual(await ledger.counts(), reference.counts(), `${mode} open: the counts`);
    deepStrictEqual(await ledger.outbox(), reference.outbox(), `${mode} open: the outbox`);
    const read: Record[] = [];
    for await (const r of ledger.records()) read.push(r);
    deepStrictEqual(read, reference.records, `${mode} open: the records read back in order`);
    deepStrictEqual(
      ledger.repaired,
      expected.dropped === 0 ? null : { at: expected.complete, dropped: expected.dropped, cut: !readOnly },
      `${mode} open: what was dropped`,
    );
    const left = readOnly ? bytes : bytes.subarray(0, expected.complete);
    deepStrictEqual(
      readFileSync(path),
      left,
      readOnly ? 'a read-only open changes nothing' : 'a writable open cuts the torn tail and nothing else',
    );
    return expected.dropped === 0 ? 'opened' : 'repaired';
  } finally {
    await ledger.close();
  }
}

const opens: PropertyRunner = async ({ seed, numRuns, dir }) => {
  const tally = new Tally();
  let n = 0;
  const details = await fc.check(
    fc.asyncProperty(ledgerFile, fc.integer({ min: 1, max: 300 }), async ({ kind, bytes }, chunkSize) => {
      const path = join(dir, `fuzz-${n++}.jsonl`);
      try {
        writeFileSync(path, bytes);
        const expected = expectedOpen(bytes);
        const outcome = await checkOpen(path, bytes, expected, true);
        // the file read in small chunks: lines that straddle them, for the open and for the reads after it
        strictEqual(await checkOpen(path, bytes, expected, true, chunkSize), outcome, 'read in small chunks, the same');
        strictEqual(
          await checkOpen(path, bytes, expected, false),
          outcome,
          'a writable open gives what a read-only one gives',
        );
        tally.add(`${kind}: ${outcome}`);
      } finally {
        rmSync(path, { force: true });
      }
    }),
    { seed, numRuns },
  );
  return report(details, tally);
};

export const properties: { readonly [name: string]: PropertyRunner } = { opens };
