/**
 * The codec's properties, run by `test/fuzz/codec.test.ts` in a worker (`fuzz-runner.ts`):
 *
 * - `roundTrip`: every valid record is written as `JSON.stringify` writes it (`stringifyExact`) (keys in canonical
 *   order) and reads back as itself, by the fast path, by the serde path, and from inside a
 *   larger buffer;
 * - `otherForms`: the same record written as serde also reads it (keys in any order, whitespace,
 *   escapes) reads back as itself and is written back in canonical form;
 * - `fastPathAgrees`: on valid lines changed at random, the fast path (`readCanonical`) either
 *   gives up or gives what the serde path gives, and never accepts what serde refuses;
 * - `neverCrashes`: arbitrary bytes, JSON-ish text, deep nesting and damaged lines either decode
 *   to a record that re-encodes canonically and reads back as itself, or are refused with a
 *   `DecodeError` (`LEDGER_DECODE`) with a message; no other exception, and the verdict does not
 *   depend on the bytes around the line.
 */
import { deepStrictEqual, ok, strictEqual } from 'node:assert/strict';
import * as fc from 'fast-check';
import { readCanonical } from '../../lib/honcho/canonical.js';
import { decodeRecordSerde } from '../../lib/honcho/codec.js';
import { DecodeError, decodeRecord, encodeRecord, type Record } from '../../lib/index.js';
import {
  deepNesting,
  jsonIsh,
  mutatedLine,
  nearRecord,
  record,
  recordInOtherForm,
  stringifyExact,
} from './fuzz-arbitraries.js';
import { type CheckParams, type PropertyReport, type PropertyRunner, report, Tally } from './fuzz-runner.js';

/** A verdict: the record, or the refusal's message. Anything but a proper refusal is thrown on. */
type Verdict = { readonly record: Record } | { readonly refused: string };

function verdictOf(read: () => Record): Verdict {
  try {
    return { record: read() };
  } catch (e) {
    if (!(e instanceof DecodeError))
      throw new Error(`not a DecodeError: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    strictEqual(e.code, 'LEDGER_DECODE');
    ok(typeof e.message === 'string' && e.message.length > 0, 'a refusal says why');
    strictEqual(e.message, e.why);
    return { refused: e.message };
  }
}

/** The line's bytes with its newline, as the JSONL backend hands them over. */
const withNewline = (line: string | Buffer): Buffer =>
  Buffer.concat([typeof line === 'string' ? Buffer.from(line, 'utf8') : line, Buffer.from('\n')]);

const roundTrip: PropertyRunner = async ({ seed, numRuns }: CheckParams): Promise<PropertyReport> => {
  const tally = new Tally();
  const details = await fc.check(
    fc.property(record, fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (r, before, after) => {
      const line = encodeRecord(r);
      strictEqual(line, stringifyExact(r), 'written as JSON.stringify writes it, keys in canonical order');
      const bytes = withNewline(line);
      deepStrictEqual(decodeRecord(bytes), r);
      deepStrictEqual(decodeRecordSerde(bytes), r, 'the serde path');
      deepStrictEqual(readCanonical(bytes, 0, bytes.length), r, 'the fast path takes every canonical line');
      deepStrictEqual(decodeRecord(Buffer.from(line, 'utf8')), r, 'without its newline');
      // inside a larger buffer, bytes around it (a newline included) do not matter
      const around = Buffer.concat([Buffer.from(before), Buffer.from('\n'), bytes, Buffer.from(after)]);
      const start = before.length + 1;
      deepStrictEqual(decodeRecord(around, start, start + bytes.length), r, 'read from inside a larger buffer');
      tally.add(r.type);
    }),
    { seed, numRuns },
  );
  return report(details, tally);
};

const otherForms: PropertyRunner = async ({ seed, numRuns }) => {
  const tally = new Tally();
  const details = await fc.check(
    fc.property(recordInOtherForm, ({ record: r, line }) => {
      const bytes = withNewline(line);
      const decoded = decodeRecord(bytes);
      deepStrictEqual(decoded, r, 'the same record');
      deepStrictEqual(decodeRecordSerde(bytes), r, 'the serde path');
      strictEqual(encodeRecord(decoded), stringifyExact(r), 'written back in canonical form');
      const fast = readCanonical(bytes, 0, bytes.length);
      if (fast !== null) deepStrictEqual(fast, r);
      tally.add(fast === null ? 'fast path gave up' : 'fast path read it');
    }),
    { seed, numRuns },
  );
  return report(details, tally);
};

const fastPathAgrees: PropertyRunner = async ({ seed, numRuns }) => {
  const tally = new Tally();
  const details = await fc.check(
    fc.property(mutatedLine, (line) => {
      const bytes = withNewline(line);
      const fast = readCanonical(bytes, 0, bytes.length);
      const serde = verdictOf(() => decodeRecordSerde(bytes, 0, bytes.length));
      if (fast === null) {
        tally.add('refused' in serde ? 'gave up, serde refused' : 'gave up, serde read it');
        return;
      }
      ok(
        'record' in serde,
        `the fast path read a line that serde refuses (${'refused' in serde ? serde.refused : ''})`,
      );
      deepStrictEqual(fast, serde.record, 'the fast path and the serde path read the same record');
      tally.add('both read it');
    }),
    { seed, numRuns },
  );
  return report(details, tally);
};

/** An input for the decoder and what made it. */
const anyInput: fc.Arbitrary<{ readonly kind: string; readonly bytes: Buffer }> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((b) => ({ kind: 'bytes', bytes: Buffer.from(b) })),
  jsonIsh.map((s) => ({ kind: 'json-ish', bytes: Buffer.from(s, 'utf8') })),
  mutatedLine.map((bytes) => ({ kind: 'damaged line', bytes })),
  { weight: 2, arbitrary: nearRecord.map((s) => ({ kind: 'near record', bytes: Buffer.from(s, 'utf8') })) },
  deepNesting.map((s) => ({ kind: 'deep nesting', bytes: Buffer.from(s, 'utf8') })),
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => ({ kind: 'unicode text', bytes: Buffer.from(s, 'utf8') })),
);

const neverCrashes: PropertyRunner = async ({ seed, numRuns }) => {
  const tally = new Tally();
  const details = await fc.check(
    fc.property(anyInput, fc.uint8Array({ maxLength: 6 }), ({ kind, bytes }, noise) => {
      const verdict = verdictOf(() => decodeRecord(bytes));
      // the fast path then serde, or serde alone: the same verdict, word for word
      deepStrictEqual(
        verdictOf(() => decodeRecordSerde(bytes)),
        verdict,
        'decodeRecord and the serde path agree',
      );
      // the bytes around a line do not change its verdict
      const around = Buffer.concat([Buffer.from(noise), bytes, Buffer.from(noise)]);
      deepStrictEqual(
        verdictOf(() => decodeRecord(around, noise.length, noise.length + bytes.length)),
        verdict,
        'read from inside a larger buffer',
      );
      if ('refused' in verdict) {
        tally.add(`${kind}: refused`);
        return;
      }
      const line = encodeRecord(verdict.record);
      const again = decodeRecord(withNewline(line));
      deepStrictEqual(again, verdict.record, 'the record read back from its canonical line');
      strictEqual(encodeRecord(again), line, 'the canonical line is stable');
      tally.add(`${kind}: read`);
    }),
    { seed, numRuns },
  );
  return report(details, tally);
};

export const properties: { readonly [name: string]: PropertyRunner } = {
  roundTrip,
  otherForms,
  fastPathAgrees,
  neverCrashes,
};
