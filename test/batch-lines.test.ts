/**
 * The lines of an append as one buffer (`BatchLines`, backends/jsonl-file.ts): the bytes of the
 * lines, each with its newline, whatever they hold; a small batch in the buffer kept between
 * appends, a large one in a buffer of its exact size; a line longer than a line may hold refused
 * before anything is allocated for it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BatchLines } from '../backends/jsonl-file.js';
import { CheckedRecord, InvalidRecordError, MAX_LINE_BYTES, type RecordCodec } from '../lib/index.js';

/** A codec whose records are their own lines: no bound of its own, as the class's doc allows. */
const plain: RecordCodec<string> = {
  normalize: (value) => String(value),
  encode: (line) => line,
  decode: (bytes, start, end) => Buffer.from(bytes.subarray(start, end)).toString('utf8'),
};
const checked = (lines: readonly string[]): CheckedRecord<string>[] =>
  lines.map((line) => CheckedRecord.check(plain, line));
const joined = (lines: readonly string[]): Buffer => Buffer.from(lines.map((line) => `${line}\n`).join(''));

test('the lines, each with its newline, ASCII or not; a small batch in the kept buffer', () => {
  const batch = new BatchLines();
  const lines = ['{"a":1}', 'café 中文 😀', '', 'x'.repeat(1000)];
  const first = batch.write(checked(lines));
  assert.equal(Buffer.from(first), joined(lines));
  const second = batch.write(checked(['b']));
  assert.equal(Buffer.from(second), joined(['b']));
  assert.is(second.buffer, first.buffer, 'the kept buffer, reused');
});

test('a large batch takes a buffer of its own bytes, not three times them, and is all there', () => {
  const batch = new BatchLines();
  for (const unit of ['y', 'é', '😀']) {
    const lines = Array.from({ length: 40 }, (_, n) => `${n}:${unit.repeat(30_000)}`);
    const bytes = batch.write(checked(lines));
    assert.equal(Buffer.from(bytes), joined(lines), unit);
    assert.is(bytes.buffer.byteLength, bytes.length, `${unit}: a buffer of exactly its bytes`);
  }
});

test('a line longer than a line may hold is refused, in a large batch, and the next batch is written as usual', () => {
  const batch = new BatchLines();
  const long = 'z'.repeat(MAX_LINE_BYTES + 1);
  assert.throws(
    () => batch.write(checked(['fine', long])),
    (e: unknown) => e instanceof InvalidRecordError && /67108865 bytes/.test((e as Error).message),
  );
  assert.equal(Buffer.from(batch.write(checked(['after']))), joined(['after']));
});

test.run();
