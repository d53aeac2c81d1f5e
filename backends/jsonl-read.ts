/**
 * How a JSONL log (`jsonl.ts`) reads its records back by position: from the nearest remembered
 * record start before `from`, a chunk at a time; a read with an end stops at the first
 * remembered start past it, so that a point read (`read(p, p + 1)`, as memoryd's `sentIds` and
 * `conclusion` make) reads one stride ({@link SEEK_STRIDE}) of lines at most.
 *
 * @module
 */
import type { Fd, FileIO } from '../lib/file-io.js';
import type { Position, RecordCodec } from '../lib/log.js';
import { growingTo, lineChunks, SEEK_STRIDE } from './jsonl-lines.js';

/** The bytes of a read's first chunk (they grow to the chunk size): see {@link readRecords}. */
const FIRST_READ = 64 << 10;
/** The most records a read decodes before it hands them over (from one, twice as many each time). */
const READ_BATCH = 256;

/**
 * The records from `from` up to `to` (or up to `length`, the log's whole lines now: later
 * appends are not read), in batches, given `starts`, where every `SEEK_STRIDE`th record starts.
 * A record that does not decode fails the read in its place, after the records before it.
 */
export function* readRecords<R>(
  io: FileIO,
  fd: Fd,
  name: string,
  codec: RecordCodec<R>,
  chunkSize: number,
  starts: readonly number[],
  length: number,
  from: Position,
  to: Position | undefined,
): Generator<R[]> {
  const stride = Math.floor(from / SEEK_STRIDE);
  let position = stride * SEEK_STRIDE;
  const offset = starts[stride] as number;
  // the records up to the head now (later appends are not read), or up to the start noted past `to`
  const end = to === undefined ? length : (starts[Math.ceil(to / SEEK_STRIDE)] ?? length);
  // A read from a position is often after one record (a sent item's ids): the first reads are
  // small and the records are decoded a few at a time, so that it costs what it takes.
  const chunks = lineChunks(io, fd, name, offset, end, Math.min(FIRST_READ, chunkSize), true, growingTo(chunkSize));
  let batch = 1;
  for (const chunk of chunks) {
    let records: R[] = [];
    let start = 0;
    for (const lineEnd of chunk.ends) {
      if (position >= from) {
        try {
          records.push(codec.decode(chunk.buffer, start, lineEnd + 1));
        } catch (e) {
          yield records; // the records before it, then it fails in its place
          throw e;
        }
        if (records.length >= batch) {
          yield records;
          records = [];
          batch = Math.min(2 * batch, READ_BATCH);
        }
      }
      position++;
      start = lineEnd + 1;
    }
    yield records;
  }
}
