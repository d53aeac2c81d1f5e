/**
 * The error and recovery paths of the LevelDB backend that the other tests do not reach: a
 * database whose open, reads or iterators fail, or that its owner closes or changes under an open
 * log; a folder LevelDB cannot open, or whose parent cannot be synced; damage that only raw
 * bytes written with classic-level make; records of other codecs (arrays of wide integers, byte
 * strings, dates); and a log closed under a read. Each checks what the caller is told, that
 * nothing changed, and that the log (or the next open) is usable as documented.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode as cborEncode } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../../backends/level/index.js';
import { DecodeError, honchoCodec, InvalidRecordError, isLedgerError, type RecordCodec } from '../../lib/index.js';
import { FaultyLevel, storeError } from '../support/faulty-level.js';
import { all, decided, rejects, sent, skip, turn, withHome } from '../support/ledger.js';
import {
  backendAt,
  bodyOf,
  cbor,
  dump,
  folderOf,
  hex,
  putRecord,
  recordKey,
  tamper,
  VIEW,
  write,
} from '../support/level-db.js';

const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = sent(turn('chat-1', 1), ['msg-a1']);

const memory = (): MemoryLevel<Uint8Array, Uint8Array> => new MemoryLevel<Uint8Array, Uint8Array>(VIEW);

// -- a database the caller made, failing ----------------------------------------------------------

test("a database that fails to open: LEDGER_IO with its words, and the writer's place is free for the next open", async () => {
  const db = new FaultyLevel(memory());
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  db.openFails = storeError('EIO', 'EIO: i/o error, open');
  for (const readOnly of [false, true])
    await rejects(backend.open({ readOnly }), 'LEDGER_IO', 'store: i/o error, open (EIO)');
  db.openFails = null;
  const log = await backend.open(); // not refused as a second writer
  assert.equal(await log.append([A]), { from: 0, head: 1 });
  await log.close();
});

test('a read of the format marker that fails at open: LEDGER_IO, nothing held, and the next open reads the log', async () => {
  const db = new FaultyLevel(memory());
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const first = await backend.open();
  await first.append([A, B]);
  await first.close();
  db.failGet(1, storeError('EIO', 'EIO: i/o error, read'));
  await rejects(backend.open(), 'LEDGER_IO', 'store: i/o error, read (EIO)');
  assert.is(db.iterators, 1, 'no iterator was made after the failed read');
  const again = await backend.open();
  assert.equal(await all(again), [A, B]);
  await again.close();
});

test('a read that fails while checking a resume point: LEDGER_IO, not a mismatch, and the point still holds', async () => {
  const db = new FaultyLevel(memory());
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const log = await backend.open();
  await log.append([A, B]);
  const point = await log.resumePoint();
  await log.append([C]);
  await log.close();
  db.failGet(2, storeError('EIO', 'EIO: i/o error, read')); // the marker reads; the record before the point does not
  await rejects(backend.open({ resume: point }), 'LEDGER_IO', 'store: i/o error, read (EIO)');
  const seen: number[] = [];
  const resumed = await backend.open({ resume: point, replay: (_, position) => void seen.push(position) });
  assert.equal(seen, [2]);
  await resumed.close();
});

test('a resume point at 0 reads the log through from its first record', async () => {
  const backend = levelBackend(memory(), { codec: honchoCodec, name: 'store' });
  const log = await backend.open();
  const start = await log.resumePoint();
  assert.equal(start, { position: 0, cursor: null, fingerprint: '' });
  await log.append([A, B]);
  await log.close();
  const seen: number[] = [];
  const resumed = await backend.open({ resume: start, replay: (_, position) => void seen.push(position) });
  assert.equal(seen, [0, 1]);
  assert.is(resumed.head, 2);
  await resumed.close();
});

test("an iterator that fails at open: LEDGER_IO, the iterator closed, the writer's place free", async () => {
  const db = new FaultyLevel(memory());
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const first = await backend.open();
  await first.append([A]);
  await first.close();
  db.nextvFails = storeError('EIO', 'EIO: i/o error, read');
  const before = { made: db.iterators, closed: db.iteratorsClosed };
  await rejects(backend.open(), 'LEDGER_IO', 'store: i/o error, read (EIO)');
  assert.is(db.iterators - before.made, 1);
  assert.is(db.iteratorsClosed - before.closed, 1, 'the iterator was closed');
  db.nextvFails = null;
  const again = await backend.open();
  assert.is(again.head, 1);
  await again.close();
});

test('an iterator that fails under a read: LEDGER_IO for that read; the log goes on', async () => {
  const db = new FaultyLevel(memory());
  const log = await levelBackend(db, { codec: honchoCodec, name: 'store' }).open();
  await log.append([A, B]);
  db.nextvFails = storeError('EIO', 'EIO: i/o error, read');
  await rejects(all(log), 'LEDGER_IO', 'store: i/o error, read (EIO)');
  assert.is(db.iteratorsClosed, db.iterators, 'every iterator was closed');
  db.nextvFails = null;
  assert.equal(await all(log), [A, B]);
  assert.equal(await log.append([C]), { from: 2, head: 3 });
  await log.close();
});

test("a database whose owner refuses the log's writes in a prewrite hook: the append is refused alone, nothing written, the log goes on", async () => {
  const db = memory();
  const log = await levelBackend(db, { codec: honchoCodec, name: 'store' }).open();
  await log.append([A]);
  const before = (await db.keys().all()).map(hex);
  let refuse = true;
  db.hooks.prewrite.add(() => {
    if (refuse) throw new Error('writes are frozen for a backup');
  });
  const e = await rejects(
    log.append([B, C]),
    'LEDGER_IO',
    'store: The prewrite hook failed on batch.put() (LEVEL_HOOK_ERROR)',
  );
  assert.is(((e.cause as Error).cause as Error).message, 'writes are frozen for a backup');
  assert.equal((await db.keys().all()).map(hex), before, 'nothing was written');
  assert.is(log.head, 1);
  refuse = false;
  // refused before anything was written: not a failed write, so the log does not stop
  assert.equal(await log.append([B, C]), { from: 1, head: 3 });
  assert.equal(await all(log), [A, B, C]);
  await log.close();
});

test('a database its owner closed: resumePoint is LEDGER_IO, and works once it is open again', async () => {
  const db = memory();
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const first = await backend.open();
  await first.append([A, B]);
  const expected = await first.resumePoint();
  await first.close();
  // a point before any append of this open reads the last record from the database
  const log = await backend.open();
  await db.close();
  await rejects(log.resumePoint(), 'LEDGER_IO', 'store: Database is not open (LEVEL_DATABASE_NOT_OPEN)');
  await db.open();
  assert.equal(await log.resumePoint(), expected);
  await log.close();
});

test('the last record deleted under an open log: resumePoint says it is missing, as damage', async () => {
  const db = memory();
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const first = await backend.open();
  await first.append([A, B, C]);
  await first.close();
  const log = await backend.open();
  await db.del(recordKey(2), VIEW);
  const e = await rejects(
    log.resumePoint(),
    'LEDGER_DAMAGED',
    'store:3: record 3 is missing; see docs/runbook.md#honcho-ledger-damaged',
  );
  assert.is((e as unknown as { line: number }).line, 3);
  await log.close();
});

test('a classic-level database the caller made is named by its folder, and left open by the log', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const db = new ClassicLevel<Uint8Array, Uint8Array>(folder, VIEW);
    const backend = levelBackend(db, { codec: honchoCodec });
    assert.is(backend.name, folder);
    assert.equal(backend.capabilities, {
      durable: true,
      files: false,
      severalWriters: false,
      readsWhileWriting: true,
      atomicBatches: true,
      watches: false,
    });
    const log = await backend.open();
    assert.is(log.name, folder);
    await log.append([A]);
    await log.close();
    assert.is(db.status, 'open');
    await db.close();
    const reader = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(reader), [A]);
    await reader.close();
  });
});

// -- closed under a read ----------------------------------------------------------------------------

test("a folder's log closed while a read waits for its first records: the read ends with LEDGER_CLOSED", async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B, C]);
    const log = await backendAt(folder).open({ readOnly: true });
    const reading = log.read()[Symbol.asyncIterator]();
    const first = reading.next(); // asks LevelDB for the first records
    const closing = log.close(); // closes the folder's database once the iterator is done
    await rejects(first, 'LEDGER_CLOSED', `${folder}: the ledger is closed`);
    await closing;
    assert.equal(await reading.next(), { value: undefined, done: true });
    // the folder is free again: the close went through
    const again = await backendAt(folder).open();
    assert.is(again.head, 3);
    await again.close();
  });
});

test('a log closed while a read waits, on a database that fails pending reads when its owner closes it: LEDGER_CLOSED, not an I/O error', async () => {
  const db = new FaultyLevel(memory());
  db.abortReadsOnClose = true;
  const log = await levelBackend(db, { codec: honchoCodec, name: 'store' }).open();
  await log.append([A, B]);
  db.hold();
  const reading = log.read()[Symbol.asyncIterator]();
  const first = reading.next();
  assert.is(db.waiting, 1, 'the read waits for the database');
  await log.close();
  await db.close(); // its owner shuts it down: the read it holds fails
  await rejects(first, 'LEDGER_CLOSED', 'store: the ledger is closed');
  assert.is(db.iteratorsClosed, db.iterators, 'the iterator was closed');
});

test('resumePoint on a closed log is refused with LEDGER_CLOSED', async () => {
  const log = await levelBackend(memory(), { codec: honchoCodec, name: 'store' }).open();
  await log.append([A]);
  await log.close();
  await rejects(log.resumePoint(), 'LEDGER_CLOSED', 'store: the ledger is closed');
});

// -- a folder ----------------------------------------------------------------------------------------

test('a folder whose CURRENT names no manifest: LEDGER_DAMAGED naming the file, before LevelDB touches the folder; mended, it opens', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    const current = join(folder, 'CURRENT');
    const good = readFileSync(current);
    writeFileSync(current, 'MANIFEST-999999'); // no newline, and no such manifest
    const files = readdirSync(folder).sort();
    for (const readOnly of [false, true]) {
      await rejects(
        backendAt(folder).open({ readOnly }),
        'LEDGER_DAMAGED',
        `${folder}/CURRENT: CURRENT does not name a manifest ("MANIFEST-999999"); the folder was left as it is; see docs/runbook.md#level-folder-damaged`,
      );
    }
    assert.is(readFileSync(current, 'utf8'), 'MANIFEST-999999');
    assert.equal(readdirSync(folder).sort(), files, 'LevelDB did not so much as rotate its info log');
    writeFileSync(current, good);
    const log = await backendAt(folder).open(); // no lock left behind
    assert.is(log.head, 2);
    await log.close();
  });
});

test('a folder whose parent cannot be synced (procfs refuses fsync): LEDGER_IO naming the parent, and nothing is opened', async () => {
  // Linux: /proc/fs/nfsd is an empty folder of procfs (when nfsd is not loaded), so a writable
  // open would create a database there after syncing its parent, /proc/fs, which refuses fsync
  // with EINVAL (as some network and FUSE file systems do)
  const empty = ['/proc/fs/nfsd', '/proc/fs/jbd2'].find(
    (folder) => existsSync(folder) && readdirSync(folder).length === 0,
  );
  if (empty === undefined) return assert.unreachable('no empty folder in /proc/fs on this machine');
  await rejects(backendAt(empty).open(), 'LEDGER_IO', '/proc/fs: invalid argument (EINVAL)');
  assert.equal(readdirSync(empty), []);
});

// -- damage that only raw bytes make ---------------------------------------------------------------

test("a key in the records' space naming a position beyond 2^53 is damage where the next record should be", async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    const beyond = Uint8Array.of(0x01, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00);
    await tamper(folder, (db) => db.put(beyond, cborEncode(C), VIEW));
    const before = await dump(folder);
    for (const readOnly of [false, true]) {
      await rejects(
        backendAt(folder).open({ readOnly }),
        'LEDGER_DAMAGED',
        `${folder}:3: where record 3 should be is the key ${hex(beyond)}, which is not a record's; see docs/runbook.md#honcho-ledger-damaged`,
      );
    }
    assert.equal(await dump(folder), before);
  });
});

// -- records of other codecs ---------------------------------------------------------------------------

/** A record of another log: samples (integers of any size), a payload of bytes, and when it was taken. */
interface Reading {
  readonly id: string;
  readonly at: Date;
  readonly samples: readonly number[];
  readonly payload: Uint8Array;
}

/** The readings' codec. Reading back, a value without samples is refused (`refuse`) or trips a bug (`buggy`). */
function readingCodec(missingSamples: 'refuse' | 'buggy' = 'refuse'): RecordCodec<Reading> {
  const normalize = (value: unknown): Reading => {
    const v = value as { id?: unknown; at?: unknown; samples?: unknown; payload?: unknown };
    if (typeof v !== 'object' || v === null || typeof v.id !== 'string')
      throw new InvalidRecordError('a reading has an id');
    if (!(v.at instanceof Date)) throw new InvalidRecordError('a reading has a date');
    if (!(v.payload instanceof Uint8Array)) throw new InvalidRecordError('a reading has a payload of bytes');
    if (v.samples === undefined && missingSamples === 'refuse') throw new DecodeError('missing field `samples`');
    const samples = (v.samples as unknown[]).map((n) => {
      if (!Number.isSafeInteger(n)) throw new InvalidRecordError(`a sample is an integer, not ${String(n)}`);
      return n as number;
    });
    return { id: v.id, at: new Date(v.at.getTime()), samples, payload: Uint8Array.from(v.payload) };
  };
  const encode = (r: Reading): string =>
    JSON.stringify({
      id: r.id,
      at: r.at.toISOString(),
      samples: r.samples,
      payload: Buffer.from(r.payload).toString('base64'),
    });
  return {
    normalize,
    encode,
    decode: (bytes, start, end) => {
      const v = JSON.parse(Buffer.from(bytes.subarray(start, end)).toString('utf8')) as {
        id: string;
        at: string;
        samples: number[];
        payload: string;
      };
      return normalize({ ...v, at: new Date(v.at), payload: Buffer.from(v.payload, 'base64') });
    },
  };
}

const plain = (r: Reading) => ({ id: r.id, at: r.at.toISOString(), samples: [...r.samples], payload: hex(r.payload) });

test('records of another codec: arrays of wide integers stay CBOR integers, bytes a byte string, dates a tag; all read back as written', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const codec = readingCodec();
    const readings: Reading[] = [
      {
        id: 'r1',
        at: new Date('2026-09-28T10:00:00.000Z'),
        samples: [1, 2 ** 40, -(2 ** 35), 2 ** 53 - 1],
        payload: Uint8Array.of(0xff, 0x00, 0x80),
      },
      { id: 'r2', at: new Date('2026-09-28T10:00:01.500Z'), samples: [7], payload: Buffer.from('caf\u00e9', 'utf8') },
    ];
    const log = await levelBackend(folder, { codec }).open();
    await log.append(readings);
    await log.close();
    // as another CBOR reader sees them: integers, not floats; bytes; a date
    const values = (await dump(folder)).slice(1).map(([, value], n) => bodyOf(value, n).toString('hex'));
    const first = values[0] as string;
    assert.ok(first.includes('1b0000010000000000'), '2^40 as a uint64');
    assert.ok(first.includes('3b00000007ffffffff'), '-2^35 as a 64-bit negative integer');
    assert.ok(first.includes('1b001fffffffffffff'), '2^53-1 as a uint64');
    assert.ok(first.includes('43ff0080'), 'the payload as a byte string');
    const decoded = cbor.decode(Buffer.from(first, 'hex')) as { at: unknown; samples: unknown; payload: unknown };
    assert.instance(decoded.at, Date, 'the date as a tagged date');
    assert.is((decoded.at as Date).toISOString(), '2026-09-28T10:00:00.000Z');
    assert.equal(decoded.samples, readings[0]?.samples);
    assert.is(hex(decoded.payload as Uint8Array), 'ff0080');
    const again = await levelBackend(folder, { codec }).open({ readOnly: true });
    assert.equal((await all(again)).map(plain), readings.map(plain));
    await again.close();
  });
});

test('a value whose text is not UTF-8 is damage also when it follows a tag and a byte string', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const codec = readingCodec();
    const log = await levelBackend(folder, { codec }).open();
    await log.append([
      { id: 'r1', at: new Date(0), samples: [1], payload: Uint8Array.of(1) },
      { id: 'r2', at: new Date(0), samples: [2], payload: Uint8Array.of(2) },
    ]);
    await log.close();
    // written by another program, its fields in another order: a date (a tag), bytes that are
    // not UTF-8 (a byte string: not text, so not checked as text), then an id whose "é" (c3 a9)
    // lost its second byte
    const value = Buffer.from(
      cborEncode({ at: new Date(0), payload: Buffer.of(0xc3, 0x28), samples: [1], id: 'caf\u00e9' }),
    );
    const at = value.lastIndexOf(Buffer.from('\u00e9', 'utf8')) + 1;
    value[at] = 0x28;
    await putRecord(folder, 0, value);
    await rejects(
      levelBackend(folder, { codec }).open({ readOnly: true, replay: () => undefined }),
      'LEDGER_DAMAGED',
      `${folder}:1: the value has text that is not UTF-8: ${hex(value.subarray(0, 32))}; see docs/runbook.md#honcho-ledger-damaged`,
    );
    // the same bytes with the id mended read as the record
    value[at] = 0xa9;
    await putRecord(folder, 0, value);
    const reader = await levelBackend(folder, { codec }).open({ readOnly: true });
    assert.equal((await all(reader)).map(plain), [
      { id: 'caf\u00e9', at: new Date(0).toISOString(), samples: [1], payload: 'c328' },
      { id: 'r2', at: new Date(0).toISOString(), samples: [2], payload: '02' },
    ]);
    await reader.close();
  });
});

test('a stored value the codec refuses with an error of its own kind is damage; a codec that fails otherwise fails the open as it threw', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const log = await levelBackend(folder, { codec: readingCodec() }).open();
    await log.append([{ id: 'r1', at: new Date(0), samples: [1], payload: Uint8Array.of(1) }]);
    await log.close();
    // written by another program, without its samples
    await putRecord(folder, 1, cborEncode({ id: 'r2', at: new Date(0), payload: Uint8Array.of(2) }));
    const before = await dump(folder);
    const replay = (): void => undefined; // a LevelDB open decodes the values it hands to a replay
    await rejects(
      levelBackend(folder, { codec: readingCodec('refuse') }).open({ replay }),
      'LEDGER_DAMAGED',
      `${folder}:2: missing field \`samples\`; see docs/runbook.md#honcho-ledger-damaged`,
    );
    try {
      await levelBackend(folder, { codec: readingCodec('buggy') }).open({ replay });
      assert.unreachable('the open succeeded');
    } catch (e) {
      assert.instance(e, TypeError);
      assert.not.ok(isLedgerError(e), 'not taken for damage');
    }
    assert.equal(await dump(folder), before, 'nothing changed');
    // the folder was closed after each failed open: the next is not refused as locked
    await rejects(
      levelBackend(folder, { codec: readingCodec('refuse') }).open({ readOnly: true, replay }),
      'LEDGER_DAMAGED',
    );
  });
});

test('a record the codec accepts but CBOR cannot hold is refused as invalid; nothing is written and the log goes on', async () => {
  type Note = { readonly text: string; readonly mark?: unknown };
  const codec: RecordCodec<Note> = {
    normalize: (value) => ({ ...(value as Note) }),
    encode: (note) => JSON.stringify(note),
    decode: (bytes, start, end) => JSON.parse(Buffer.from(bytes.subarray(start, end)).toString('utf8')) as Note,
  };
  const db = memory();
  const log = await levelBackend(db, { codec, name: 'notes' }).open();
  await log.append([{ text: 'one' }]);
  const before = (await db.keys().all()).map(hex);
  await rejects(
    log.append([{ text: 'two' }, { text: 'three', mark: Symbol('not data') }]),
    'LEDGER_INVALID_RECORD',
    'a ledger record could not be encoded: it cannot be written as CBOR: Unknown type: symbol',
  );
  assert.equal((await db.keys().all()).map(hex), before);
  assert.is(log.head, 1);
  assert.equal(await log.append([{ text: 'two' }]), { from: 1, head: 2 });
  assert.equal(await all(log), [{ text: 'one' }, { text: 'two' }]);
  await log.close();
});

test.run();
