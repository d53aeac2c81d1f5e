/**
 * The error and recovery paths of the JSONL backend that the other tests do not reach: a file
 * that shrinks or changes under a reader, a file removed between the look at the path and the
 * open, resume points that do not hold (no file, a damaged cursor, a line too long before the
 * point, a read that fails), a replay that fails with an error of its own, a read or
 * `resumePoint` that fails or meets a closed log. Each checks what the caller is told, that nothing changed on disk, that no
 * descriptor leaked, and that the log is usable (or stopped) as documented.
 */
import { readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Fd } from '../../lib/file-io.js';
import {
  encodeRecord,
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  MAX_LINE_BYTES,
  type Record,
  type ResumePoint,
} from '../../lib/index.js';
import { InjectingIO } from '../support/injecting-io.js';
import { all, decided, rejects, sent, skip, turn, withHome } from '../support/ledger.js';

const line = (record: Record): string => `${encodeRecord(record)}\n`;
const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = sent(turn('chat-1', 1), ['msg-a1']);

const backend = (path: string, io?: InjectingIO, chunkSize?: number) =>
  jsonlBackend<Record>(path, {
    codec: honchoCodec,
    ...(io === undefined ? {} : { io }),
    ...(chunkSize === undefined ? {} : { chunkSize }),
  });

/** Appends `records` to the log at `path` (made if missing) and gives the resume point after them. */
async function pointAfter(path: string, records: readonly Record[]): Promise<ResumePoint> {
  const log = await backend(path).open();
  await log.append(records);
  const point = await log.resumePoint();
  await log.close();
  return point;
}

/** A writer can take the file: the open that failed released the lock it had taken. */
async function writable(path: string): Promise<void> {
  const log = await backend(path).open();
  await log.close();
}

/**
 * A {@link InjectingIO} on which something else shrinks the file while it is read: before the read
 * that `when` picks, the file is cut to `to` bytes (once), as another process would cut it.
 */
class ShrinkingIO extends InjectingIO {
  shrunk = false;
  constructor(
    private readonly path: string,
    private readonly to: number,
    private readonly when: (position: number, length: number) => boolean,
  ) {
    super();
  }
  override read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    if (!this.shrunk && this.when(position, length)) {
      truncateSync(this.path, this.to);
      this.shrunk = true;
    }
    return super.read(fd, buffer, offset, length, position);
  }
}

// -- a file that shrinks under the reader -------------------------------------------------------

test('a torn tail too long to hold, cut by a writer while a reader scans it for its end: the reader keeps the whole lines', async () => {
  await withHome(async (home) => {
    const whole = Buffer.from(line(A));
    const tail = MAX_LINE_BYTES + (2 << 20);
    writeFileSync(home.path, Buffer.concat([whole, Buffer.alloc(tail, 0x61)])); // no newline: a torn tail
    // the writer that opens cuts the tail back to the last whole line, just as the reader,
    // having held the longest a line may be of it, starts to look further for its end
    const io = new ShrinkingIO(home.path, whole.length, (position) => position === whole.length + MAX_LINE_BYTES + 1);
    const reader = await backend(home.path, io, 1 << 20).open({ readOnly: true });
    assert.ok(io.shrunk, 'the file was cut during the scan');
    assert.is(reader.head, 1);
    assert.equal(reader.repaired, { at: whole.length, dropped: tail, cut: false });
    assert.equal(await all(reader), [A]);
    await reader.close();
    assert.equal(io.open.size, 0, 'no descriptor leaks');
    assert.equal(readFileSync(home.path), whole, 'the reader changed nothing');
  });
});

test('lines the reader held, changed under it into more bytes than a line may hold with no newline: the read says the file changed', async () => {
  await withHome(async (home) => {
    // three lines of 30 MiB: each fits a line, together they do not
    const long = (n: number): Record => decided(turn('long', n), skip(`x${'y'.repeat(30 << 20)}`));
    writeFileSync(home.path, line(long(1)) + line(long(2)) + line(long(3)));
    const size = statSync(home.path).size;
    const reader = await backend(home.path, undefined, 1 << 20).open({ readOnly: true });
    assert.is(reader.head, 3);
    writeFileSync(home.path, Buffer.alloc(size, 0x61)); // as long as it was, with no line in it
    const changed = `${home.path}: the file changed while open: it no longer holds the ${size} bytes of whole lines this log read (it is ${size} bytes long now); reopen the ledger`;
    await rejects(all(reader), 'LEDGER_IO', changed);
    await reader.close();
  });
});

test('a file removed between the look at the path and the open is a missing file: an empty log', async () => {
  for (const readOnly of [true, false]) {
    await withHome(async (home) => {
      writeFileSync(home.path, line(A));
      // another process removes it right after the look, before the open
      class RemovingIO extends InjectingIO {
        override openRead(path: string): Fd {
          rmSync(path);
          return super.openRead(path);
        }
        override openReadWrite(path: string): Fd {
          rmSync(path);
          return super.openReadWrite(path);
        }
      }
      const io = new RemovingIO();
      const log = await backend(home.path, io).open({ readOnly });
      assert.is(log.head, 0);
      assert.is(log.repaired, null);
      if (!readOnly) assert.equal(await log.append([B]), { from: 0, head: 1 });
      await log.close();
      assert.equal(io.open.size, 0);
      assert.equal(readdirSync(home.dir), readOnly ? [] : ['honcho.jsonl']);
    });
  }
});

// -- resume points that do not hold -------------------------------------------------------------

test('a resume point at 0 reads a file through from its first line', async () => {
  await withHome(async (home) => {
    const log = await backend(home.path).open();
    const start = await log.resumePoint(); // an empty log: no file yet
    assert.equal(start, { position: 0, cursor: null, fingerprint: '' });
    await log.append([A, B]);
    await log.close();
    const seen: [number, Record][] = [];
    const resumed = await backend(home.path).open({
      resume: start,
      replay: (record, position) => void seen.push([position, record]),
    });
    assert.equal(seen, [
      [0, A],
      [1, B],
    ]);
    assert.is(resumed.head, 2);
    assert.equal(await all(resumed, 1), [B], 'read(from) finds its records after an open from 0');
    assert.equal(await resumed.append([C]), { from: 2, head: 3 });
    await resumed.close();
  });
});

test('a resume point on a missing file: at 0 it is an empty log; further on it is a mismatch, and nothing is created', async () => {
  await withHome(async (home) => {
    const point = await pointAfter(home.path, [A, B]);
    rmSync(home.path);
    await rejects(
      backend(home.path).open({ resume: point }),
      'LEDGER_RESUME_MISMATCH',
      `${home.path}: cannot resume at record 2: the log holds no records`,
    );
    await rejects(
      backend(home.path).open({ resume: point, readOnly: true }),
      'LEDGER_RESUME_MISMATCH',
      `${home.path}: cannot resume at record 2: the log holds no records`,
    );
    assert.equal(readdirSync(home.dir), [], 'nothing was created');
    const empty = await backend(home.path).open({ resume: { position: 0, cursor: null, fingerprint: '' } });
    assert.is(empty.head, 0);
    await empty.append([A]);
    await empty.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

test('a resume point whose cursor says no line ends there is a mismatch, and the file is left as it was', async () => {
  await withHome(async (home) => {
    const point = await pointAfter(home.path, [A, B]);
    const cursor = point.cursor as { position: number; offset: number; lastLineStart: number };
    assert.equal(cursor, { position: 2, offset: line(A).length + line(B).length, lastLineStart: line(A).length });
    const before = readFileSync(home.path);
    const damaged: ResumePoint[] = [
      { ...point, cursor: { ...cursor, lastLineStart: -1 } }, // no line starts there
      { ...point, cursor: { ...cursor, lastLineStart: cursor.offset } }, // a line of no bytes
      { ...point, cursor: { ...cursor, lastLineStart: cursor.offset + 5 } }, // a line that ends before it starts
    ];
    for (const resume of damaged) {
      for (const readOnly of [false, true]) {
        await rejects(
          backend(home.path).open({ resume, readOnly }),
          'LEDGER_RESUME_MISMATCH',
          `${home.path}: cannot resume at record 2: no record ends there`,
        );
      }
    }
    assert.equal(readFileSync(home.path), before);
    await writable(home.path);
  });
});

test('a resume point whose cursor spans more than a line may hold is a mismatch, and that much is never read', async () => {
  await withHome(async (home) => {
    const point = await pointAfter(home.path, [A, B]);
    const cursor = point.cursor as { position: number; offset: number; lastLineStart: number };
    const io = new InjectingIO();
    const resume = { ...point, cursor: { ...cursor, offset: MAX_LINE_BYTES + 2, lastLineStart: 0 } };
    // the file as long as the cursor says: only the span it gives the line is wrong
    truncateSync(home.path, MAX_LINE_BYTES + 2);
    await rejects(
      backend(home.path, io).open({ resume, readOnly: true }),
      'LEDGER_RESUME_MISMATCH',
      `${home.path}: cannot resume at record 2: no record ends there`,
    );
    assert.is(io.count('read'), 0, 'nothing was read');
    assert.equal(io.open.size, 0);
  });
});

test('a resume point without a cursor, before which a line is longer than a line may hold: a mismatch at that line', async () => {
  await withHome(async (home) => {
    const point = await pointAfter(home.path, [A, B]);
    const long = MAX_LINE_BYTES + 1;
    writeFileSync(home.path, Buffer.concat([Buffer.alloc(long, 0x61), Buffer.from('\n'), Buffer.from(line(B))]));
    const before = readFileSync(home.path);
    await rejects(
      backend(home.path).open({ resume: { ...point, cursor: null }, readOnly: true }),
      'LEDGER_RESUME_MISMATCH',
      `${home.path}: cannot resume at record 2: line 1 is ${long} bytes long, more than a ledger's line may hold`,
    );
    assert.equal(readFileSync(home.path), before);
  });
});

test('a read that fails while checking a resume point is an I/O error: nothing held, nothing changed, and the next open reads', async () => {
  await withHome(async (home) => {
    const point = await pointAfter(home.path, [A, B]);
    const before = readFileSync(home.path);
    for (const readOnly of [false, true]) {
      const io = new InjectingIO().fail('read', 1, 'EIO');
      await rejects(
        backend(home.path, io).open({ resume: point, readOnly }),
        'LEDGER_IO',
        `${home.path}: i/o error (EIO)`,
      );
      assert.is(io.count('read'), 1, "the point's line was the only read");
      assert.equal(io.open.size, 0, 'no descriptor leaks');
    }
    assert.equal(readFileSync(home.path), before);
    const resumed = await backend(home.path).open({ resume: point });
    assert.is(resumed.head, 2);
    await resumed.close();
  });
});

// -- a replay that fails with an error of its own -------------------------------------------------

test('a replay that throws an error that is not a refusal: the open fails with that very error, not as damage, and changes nothing', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A) + line(B) + line(C).slice(0, 10)); // with a torn tail, not cut
    const before = readFileSync(home.path);
    const bug = new TypeError("the caller's replay has a bug");
    for (const readOnly of [false, true]) {
      const io = new InjectingIO();
      let seen = 0;
      try {
        await backend(home.path, io).open({
          readOnly,
          replay: () => {
            if (++seen === 2) throw bug;
          },
        });
        assert.unreachable('the open succeeded');
      } catch (e) {
        assert.is(e, bug, "the replay's own error, as it was thrown");
      }
      assert.is(seen, 2);
      assert.equal(io.open.size, 0, 'no descriptor leaks');
      assert.is(io.count('truncate'), 0, 'the tail was not cut');
    }
    // a promise rejected with one is the same
    await backend(home.path)
      .open({
        replay: async () => {
          throw bug;
        },
      })
      .then(
        () => assert.unreachable('the open succeeded'),
        (e: unknown) => assert.is(e, bug),
      );
    assert.equal(readFileSync(home.path), before);
    await writable(home.path);
  });
});

// -- reads and resume points on an open log -------------------------------------------------------

test('a read in progress when the log is closed ends with LEDGER_CLOSED between chunks', async () => {
  await withHome(async (home) => {
    const records = Array.from({ length: 40 }, (_, n) => decided(turn('r', n)));
    const writer = await backend(home.path).open();
    await writer.append(records);
    await writer.close();
    const io = new InjectingIO();
    const log = await backend(home.path, io, 256).open({ readOnly: true }); // a few lines a chunk
    const read: Record[] = [];
    let error: unknown = null;
    try {
      for await (const record of log.read()) {
        read.push(record);
        if (read.length === 1) await log.close();
      }
    } catch (e) {
      error = e;
    }
    assert.ok(isLedgerError(error, 'LEDGER_CLOSED'), String(error));
    assert.is((error as Error).message, `${home.path}: the ledger is closed`);
    assert.ok(read.length >= 1 && read.length < records.length, `read ${read.length}`);
    assert.equal(read, records.slice(0, read.length), 'what was read is the log, in order');
    assert.equal(io.open.size, 0, 'the descriptor was closed by the close');
  });
});

test('resumePoint on a closed log is refused with LEDGER_CLOSED', async () => {
  await withHome(async (home) => {
    const log = await backend(home.path).open();
    await log.append([A]);
    await log.close();
    await rejects(log.resumePoint(), 'LEDGER_CLOSED', `${home.path}: the ledger is closed`);
  });
});

test('a read that fails in resumePoint is an I/O error; the log is not stopped, and the next point is right', async () => {
  await withHome(async (home) => {
    const first = await backend(home.path).open();
    await first.append([A, B]);
    await first.close();
    // a point before any append of this open reads the last line from the file
    const io = new InjectingIO();
    const log = await backend(home.path, io).open();
    io.fail('read', 1, 'EIO');
    await rejects(log.resumePoint(), 'LEDGER_IO', `${home.path}: i/o error (EIO)`);
    assert.is(log.head, 2);
    assert.equal(await log.append([C]), { from: 2, head: 3 });
    const reads = io.count('read');
    const point = await log.resumePoint();
    assert.is(point.position, 3);
    assert.is(io.count('read'), reads, 'after an append, the point is made from the line in hand, not read again');
    await log.close();
    assert.equal(io.open.size, 0);
    assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B) + line(C));
    const seen: number[] = [];
    const resumed = await backend(home.path).open({ resume: point, replay: (_, position) => void seen.push(position) });
    assert.equal(seen, []);
    assert.is(resumed.head, 3);
    await resumed.close();
  });
});

test.run();
