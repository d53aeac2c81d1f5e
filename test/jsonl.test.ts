/**
 * The JSONL file: reading through, torn tails, damage, durability and failures, one writer.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CheckedRecord,
  DamagedError,
  type EventLog,
  encodeRecord,
  type FileIO,
  type FileStatus,
  honchoCodec,
  InvalidRecordError,
  isLedgerError,
  jsonlBackend,
  Ledger,
  MAX_LINE_BYTES,
  nodeFileIO,
  normalizeRecord,
  type Record,
  type RecordCodec,
} from '../lib/index.js';
import { withFastHome } from './support/fast-home.js';
import { InjectingIO } from './support/injecting-io.js';
import {
  collect,
  conclude,
  decided,
  edit,
  failed,
  fleet as fleetAction,
  type Home,
  rejects,
  retract,
  sent,
  skip,
  turn,
  turnTo,
  unconclude,
  withHome,
} from './support/ledger.js';

const line = (record: Record): string => `${encodeRecord(record)}\n`;
const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = sent(turn('chat-1', 1), ['msg-a1']);
const WIDE = decided(edit('2026-09-28-0001', 0), skip('café 中文 😀'));

const openLog = (path: string, io?: FileIO): Promise<EventLog<Record>> =>
  jsonlBackend(path, io === undefined ? { codec: honchoCodec } : { codec: honchoCodec, io }).open();

/** The runbook the errors point into. */
const RUNBOOK_TEXT = readFileSync(fileURLToPath(new URL('../../docs/runbook.md', import.meta.url)), 'utf8');

test('a missing file is an empty ledger, and opening creates nothing', async () => {
  await withHome(async (home) => {
    for (const readOnly of [true, false]) {
      const ledger = await Ledger.open(home.path, { readOnly });
      assert.is(ledger.size, 0);
      assert.not.ok(ledger.repaired);
      assert.equal(await ledger.counts(), { decided: 0, sent: 0, waiting: 0, failed: 0, skipped: 0 });
      await ledger.close();
      assert.equal(readdirSync(home.dir), []);
    }
  });
});

test('an empty file is an empty ledger', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, '');
    const ledger = await Ledger.open(home.path);
    assert.is(ledger.size, 0);
    assert.not.ok(ledger.repaired);
    await ledger.append(A);
    await ledger.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

test('a cut-off last line is dropped and cut, wherever the cut fell, and the next append follows', async () => {
  const whole = line(A) + line(B);
  const last = Buffer.from(line(WIDE));
  const cuts: [string, Buffer][] = [
    ['in the middle', last.subarray(0, 40)],
    ['one byte short', last.subarray(0, last.length - 1)],
    ['inside a character', last.subarray(0, last.indexOf('中') + 1)],
    ['after a single byte', last.subarray(0, 1)],
  ];
  for (const [where, tail] of cuts) {
    await withHome(async (home) => {
      writeFileSync(home.path, Buffer.concat([Buffer.from(whole), tail]));
      const ledger = await Ledger.open(home.path);
      assert.ok(ledger.repaired, where);
      assert.equal(ledger.repaired, { at: whole.length, dropped: tail.length, cut: true }, where);
      assert.is(readFileSync(home.path, 'utf8'), whole, `${where}: cut from the file`);
      assert.is(ledger.size, 2);
      assert.not.ok(await ledger.isDecided(WIDE.item));
      await ledger.append(WIDE);
      await ledger.close();
      assert.is(readFileSync(home.path, 'utf8'), whole + line(WIDE), where);
      const again = await Ledger.open(home.path);
      assert.not.ok(again.repaired, `${where}: nothing to repair the second time`);
      await again.close();
    });
  }
});

test('the only line, cut off, leaves an empty ledger', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A).slice(0, -5));
    const ledger = await Ledger.open(home.path);
    assert.ok(ledger.repaired);
    assert.is(ledger.size, 0);
    assert.is(statSync(home.path).size, 0);
    await ledger.close();
  });
});

test('a tail of NUL bytes, as a power loss leaves it, is cut off too', async () => {
  const tails = [
    Buffer.alloc(4096),
    Buffer.concat([Buffer.from(line(B).slice(0, 30)), Buffer.alloc(100)]),
    Buffer.alloc(1),
  ];
  for (const tail of tails) {
    await withHome(async (home) => {
      writeFileSync(home.path, Buffer.concat([Buffer.from(line(A)), tail]));
      const ledger = await Ledger.open(home.path);
      assert.equal(ledger.repaired, { at: line(A).length, dropped: tail.length, cut: true });
      assert.is(readFileSync(home.path, 'utf8'), line(A));
      await ledger.close();
    });
  }
  await withHome(async (home) => {
    writeFileSync(home.path, Buffer.alloc(8192));
    const ledger = await Ledger.open(home.path);
    assert.is(ledger.size, 0);
    assert.is(statSync(home.path).size, 0);
    await ledger.close();
  });
});

test('a read-only open ignores a cut-off tail and changes nothing', async () => {
  await withHome(async (home) => {
    const bytes = Buffer.from(line(A) + line(B).slice(0, 20));
    writeFileSync(home.path, bytes);
    const ledger = await Ledger.open(home.path, { readOnly: true });
    assert.equal(ledger.repaired, { at: line(A).length, dropped: 20, cut: false });
    assert.is(ledger.size, 1);
    await ledger.close();
    assert.equal(readFileSync(home.path), bytes);
  });
});

/** Writes `content`, expects the open to fail as damage at `lineNumber` with `why`, and the file unchanged. */
async function damaged(home: Home, content: string | Buffer, lineNumber: number, why: string): Promise<void> {
  writeFileSync(home.path, content);
  for (const readOnly of [false, true]) {
    const e = (await rejects(
      Ledger.open(home.path, { readOnly }),
      'LEDGER_DAMAGED',
      `${home.path}:${lineNumber}: ${why}; see docs/runbook.md#honcho-ledger-damaged`,
    )) as unknown as { line: number; why: string; path: string };
    assert.is(e.line, lineNumber);
    assert.is(e.why, why);
    assert.is(e.path, home.path);
    assert.equal(readFileSync(home.path), Buffer.from(content), 'the file is left as it was');
  }
  // the lock was released: a writer can open once the line is mended
  writeFileSync(home.path, '');
  const ledger = await Ledger.open(home.path);
  await ledger.close();
}

/** The words of a file that is no ledger, with `why` its first line is not a record. */
const notALedgerWords = (path: string, why: string): string =>
  `${path}: not a ledger: no line of its first 64 KiB is a record (line 1: ${why}); a JSONL ledger holds one record a line, as memoryd writes them: name the ledger's file, or move this away`;

/** Writes `content`, expects the open to refuse it as no ledger (damage at line 1 with `why`), and the file unchanged. */
async function notALedger(home: Home, content: string | Buffer, why: string): Promise<void> {
  writeFileSync(home.path, content);
  for (const readOnly of [false, true]) {
    const e = await rejects(
      Ledger.open(home.path, { readOnly }),
      'LEDGER_NOT_A_LEDGER',
      notALedgerWords(home.path, why),
    );
    assert.instance(e, DamagedError, 'damage too, for code that catches damage');
    assert.is((e as DamagedError).line, 1);
    assert.is((e as DamagedError).why, why);
    assert.equal(readFileSync(home.path), Buffer.from(content), 'the file is left as it was');
  }
}

test('a file with no newline that no writer could have left is no ledger (damage at line 1), read-only or not, and is not cut', async () => {
  const settings = '{"theme":"dark","size":1234}';
  assert.is(settings.length, 28);
  const notCutOff = (size: number): string =>
    `${size} bytes with no newline, which do not begin as a record's line does: not a line cut off by a crash`;
  await withHome(async (home) => {
    await notALedger(home, settings, notCutOff(28));
    await notALedger(home, 'hello', notCutOff(5));
    await notALedger(home, '{"type":"nope"', notCutOff(14));
    await notALedger(home, `${'\u0000'.repeat(20)}{"type":"decided"`, notCutOff(37)); // zeros, then not what follows zeros in a record's line
    await notALedger(home, '\r', notCutOff(1));
    // through a symbolic link: the file it leads to is left as it is
    const settingsFile = join(home.dir, 'settings.json');
    writeFileSync(settingsFile, settings);
    const link = join(home.dir, 'link.jsonl');
    symlinkSync(settingsFile, link);
    await rejects(Ledger.open(link), 'LEDGER_NOT_A_LEDGER', notALedgerWords(link, notCutOff(28)));
    assert.is(readFileSync(settingsFile, 'utf8'), settings);
  });
});

test("a file with no newline that begins as a record's line does, NULs counting for any byte, is a line a crash cut off", async () => {
  const whole = Buffer.from(line(WIDE));
  const tails: [string, Buffer][] = [
    ["a record's first bytes", whole.subarray(0, 12)],
    ['the first byte', whole.subarray(0, 1)],
    [
      'a first sector never written, the next one written',
      Buffer.concat([Buffer.alloc(512), whole.subarray(512 % whole.length, whole.length - 1)]),
    ],
    ['the start written, then bytes never written', Buffer.concat([whole.subarray(0, 5), Buffer.alloc(600)])],
    ['NULs only', Buffer.alloc(3)],
  ];
  for (const [what, tail] of tails) {
    await withHome(async (home) => {
      writeFileSync(home.path, tail);
      const reader = await Ledger.open(home.path, { readOnly: true });
      assert.equal(reader.repaired, { at: 0, dropped: tail.length, cut: false }, what);
      await reader.close();
      const ledger = await Ledger.open(home.path);
      assert.equal(ledger.repaired, { at: 0, dropped: tail.length, cut: true }, what);
      await ledger.close();
      assert.is(statSync(home.path).size, 0, what);
    });
  }
});

test('a codec that says nothing of how its lines begin: any bytes with no newline are taken for a cut-off line', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, 'hello');
    const codec: RecordCodec<string> = {
      normalize: (v) => String(v),
      encode: (v) => v,
      decode: (bytes, start, end) => Buffer.from(bytes.subarray(start, end - 1)).toString(),
    };
    const log = await jsonlBackend(home.path, { codec }).open();
    assert.equal(log.repaired, { at: 0, dropped: 5, cut: true });
    await log.close();
  });
});

test("a line that does not parse stops the open with its number and serde's text; the file is left as it was", async () => {
  await withHome(async (home) => {
    // memoryd hands serde the line with its newline: an error at its end is on "line 2"
    await damaged(home, line(A) + '{"type":"sent"\n' + line(B), 2, 'EOF while parsing an object at line 2 column 0');
    await damaged(
      home,
      '{"type":"nope"}\n' + line(A),
      1,
      'unknown variant `nope`, expected one of `decided`, `sent`, `failed` at line 1 column 14',
    );
    await damaged(home, line(A) + '\n' + line(B), 2, 'EOF while parsing a value at line 2 column 0');
    await damaged(home, line(A) + line(B).replace('"why"', '"why":"x","why"'), 2, 'duplicate field `why`');
  });
});

test('damage is reported before a cut-off tail is cut: the file is left exactly as it was', async () => {
  await withHome(async (home) => {
    await damaged(home, line(A) + 'garbage\n' + line(B) + line(C).slice(0, 10), 2, 'expected value at line 1 column 1');
  });
});

test("a line that breaks a rule stops the open with its number and the rule's text", async () => {
  await withHome(async (home) => {
    await damaged(home, line(A) + line(B) + line(A), 3, 'turn 1 of session chat-1: decided already');
    await damaged(home, line(C) + line(A), 1, 'turn 1 of session chat-1: not waiting to be sent');
    await damaged(
      home,
      line(A) + line(C) + line(failed(turn('chat-1', 1))),
      3,
      'turn 1 of session chat-1: not waiting to be sent',
    );
    await damaged(home, line(B) + line(sent(turn('chat-1', 2))), 2, 'turn 2 of session chat-1: not waiting to be sent');
  });
});

test('lines ending in CRLF are read as serde reads them (the CR is whitespace)', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, `${encodeRecord(A)}\r\n${encodeRecord(B)}\r\n`);
    const ledger = await Ledger.open(home.path, { readOnly: true });
    assert.is(ledger.size, 2);
    await ledger.close();
  });
});

test('the file is created by the first append, with mode 0600, whatever the umask', async () => {
  for (const mask of [0o022, 0o000]) {
    await withHome(async (home) => {
      const old = process.umask(mask);
      try {
        const ledger = await Ledger.open(home.path);
        assert.equal(readdirSync(home.dir), []);
        await ledger.append(A);
        assert.is(statSync(home.path).mode & 0o777, 0o600);
        await ledger.close();
      } finally {
        process.umask(old);
      }
    });
  }
});

test('the first append syncs the directory once, after creating the file', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    await log.append([A]);
    await log.append([B]);
    assert.is(io.count('create'), 1);
    assert.is(io.count('syncDirectory'), 1);
    assert.is(io.count('datasync'), 2);
    assert.is(io.count('write'), 2, 'one write per append');
    await log.close();
  });
});

test('a writable open of a file that exists syncs its directory, in case its creator died before it did', async () => {
  await withHome(async (home) => {
    for (const content of ['', line(A)]) {
      writeFileSync(home.path, content);
      const io = new InjectingIO();
      const log = await openLog(home.path, io);
      assert.is(io.count('syncDirectory'), 1, 'synced at open');
      await log.append([B]);
      assert.is(io.count('syncDirectory'), 1, 'once');
      await log.close();
      const reader = await jsonlBackend(home.path, { codec: honchoCodec, io }).open({ readOnly: true });
      assert.is(io.count('syncDirectory'), 1, 'a reader syncs nothing');
      await reader.close();
    }
    const failing = new InjectingIO().fail('syncDirectory', 1, 'EIO');
    await rejects(openLog(home.path, failing), 'LEDGER_IO', `${home.dir}: i/o error (EIO)`);
    assert.equal(failing.open.size, 0, 'nothing held after a failed open');
  });
});

test('a file created by another writer after the open is adopted only with its directory synced', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    writeFileSync(home.path, ''); // made, empty, by someone else
    await log.append([A]);
    assert.is(io.count('syncDirectory'), 1);
    await log.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

/** Why a line of `length` bytes (without its newline) is damage: longer than a line may hold. */
const overlong = (length: number): string =>
  `the line is ${length} bytes long, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold; no ledgerstore writes such a line, and none reads one`;

/** Why a record is refused whose line would be `bytes` long (or at least that, not `exact`). */
const lineTooLong = (bytes: number, exact = true): string =>
  `its line would be ${exact ? '' : 'at least '}${bytes} bytes, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold`;

/** A `decided` record of `item` whose line is exactly `bytes` long (ASCII, so bytes are characters). */
function recordOfLength(item: ReturnType<typeof turn>, bytes: number): Record {
  const frame = encodeRecord(decided(item, skip(''))).length;
  return decided(item, skip('y'.repeat(bytes - frame)));
}

test('a line as long as a line may hold is appended and read back; one byte more is refused, alone, and written nothing', async () => {
  await withHome(async (home) => {
    const longest = recordOfLength(turn('long', 1), MAX_LINE_BYTES);
    assert.is(Buffer.byteLength(encodeRecord(longest)), MAX_LINE_BYTES);
    const ledger = await Ledger.open(home.path);
    await ledger.append(longest);
    // appended in the same batch as two others: only the one that is too long is refused
    const tooLong = recordOfLength(turn('long', 2), MAX_LINE_BYTES + 1);
    const [a, long, b] = await Promise.allSettled([ledger.append(A), ledger.append(tooLong), ledger.append(B)]);
    assert.is(a?.status, 'fulfilled');
    assert.is(b?.status, 'fulfilled');
    assert.is(long?.status, 'rejected');
    const refusal = (long as PromiseRejectedResult).reason as Error;
    assert.ok(isLedgerError(refusal, 'LEDGER_INVALID_RECORD'), String(refusal));
    assert.is(refusal.message, `a ledger record could not be encoded: ${lineTooLong(MAX_LINE_BYTES + 1)}`);
    await ledger.close();
    const again = await Ledger.open(home.path, { readOnly: true });
    assert.is(again.size, 3);
    assert.ok(await again.isDecided(turn('long', 1)));
    assert.not.ok(await again.isDecided(turn('long', 2)));
    await again.close();
  });
});

test('a record whose texts alone are longer than a line may hold is refused without making its line', async () => {
  await withHome(async (home) => {
    const ledger = await Ledger.open(home.path);
    // each control character is 6 bytes in the line: 12 million of them would make 72 MB
    const controls = decided(turn('long', 3), skip('\u0001'.repeat(12_000_000)));
    await rejects(
      ledger.append(controls),
      'LEDGER_INVALID_RECORD',
      `a ledger record could not be encoded: ${lineTooLong(72_000_034, false)}`,
    );
    assert.is(ledger.size, 0);
    await ledger.close();
    assert.equal(readdirSync(home.dir), [], 'nothing was written');
  });
});

test("the bound is measured exactly, whatever a line's texts hold: escapes, quotes, ASCII, two-, three- and four-byte characters", () => {
  // 8 UTF-16 units, 20 bytes in a line: \u0001 (6), \b (2), \" (2), a (1), é (2), 中 (3), 😀 (4)
  const piece = '\u0001\b"aé中😀';
  const frame = Buffer.byteLength(encodeRecord(decided(turn('long', 1), skip(''))));
  const pieces = Math.floor((MAX_LINE_BYTES - frame) / 20);
  const exactly = (extra: number): Record =>
    decided(turn('long', 1), skip(piece.repeat(pieces) + 'a'.repeat(MAX_LINE_BYTES - frame - 20 * pieces + extra)));
  assert.is(Buffer.byteLength(encodeRecord(exactly(0))), MAX_LINE_BYTES, 'as long as a line may be: taken');
  assert.throws(
    () => normalizeRecord(exactly(1)),
    (e: Error) => e.message === `a ledger record could not be encoded: ${lineTooLong(MAX_LINE_BYTES + 1)}`,
  );
  // past the bound by its texts alone: their exact length is said (the time's 26 bytes, the session's 6, the why's)
  const texts = (n: number): Record => decided(turn('long', 1), skip(piece.repeat(n)));
  assert.throws(
    () => normalizeRecord(texts(pieces + 1000)),
    (e: Error) =>
      e.message === `a ledger record could not be encoded: ${lineTooLong(26 + 6 + 2 + 20 * (pieces + 1000), false)}`,
  );
  // every kind of record and action, with a text long enough to be measured, and well within the bound
  const text = 'a'.repeat(12 << 20);
  for (const record of [
    decided(turn(text.slice(0, 128), 1), turnTo('trusted', text)),
    decided(edit(text, 0), conclude('trusted', text)),
    decided(edit('e', 1), unconclude('fleet', text)),
    decided(edit('e', 2), fleetAction(text)),
    decided(edit('e', 3), retract(text)),
    decided(edit('e', 4), skip(text)),
    sent(edit('e', 5), [text, 'm2']),
    failed(edit('e', 6), 500, text),
  ]) {
    assert.is(Buffer.byteLength(encodeRecord(normalizeRecord(record))), Buffer.byteLength(encodeRecord(record)));
  }
});

test('a codec that does not refuse long records: the log refuses the batch with the line too long, and writes nothing', async () => {
  await withHome(async (home) => {
    const codec: RecordCodec<string> = {
      normalize: (v) => String(v),
      encode: (v) => v,
      decode: (bytes, start, end) => Buffer.from(bytes.subarray(start, end - 1)).toString(),
    };
    const log = await jsonlBackend(home.path, { codec }).open();
    await rejects(
      log.append(['short', 'é'.repeat(MAX_LINE_BYTES / 2 + 1)]),
      'LEDGER_INVALID_RECORD',
      `a ledger record could not be encoded: ${lineTooLong(MAX_LINE_BYTES + 2)}`,
    );
    assert.is(log.head, 0);
    await log.append(['short']);
    await log.close();
    assert.is(readFileSync(home.path, 'utf8'), 'short\n');
  });
});

test('a codec whose encode does not check: its normalize refuses an invalid record, and the line is never written', async () => {
  await withHome(async (home) => {
    const encoded: string[] = [];
    const codec: RecordCodec<string> = {
      normalize: (v) => {
        if (typeof v !== 'string' || v.includes('\n'))
          throw new InvalidRecordError(`${JSON.stringify(v)} is not one line`);
        return v;
      },
      encode: (v) => (encoded.push(v), v),
      decode: (bytes, start, end) => Buffer.from(bytes.subarray(start, end - 1)).toString(),
    };
    const log = await jsonlBackend(home.path, { codec }).open();
    await rejects(
      log.append(['fine', 'two\nlines']),
      'LEDGER_INVALID_RECORD',
      'a ledger record could not be encoded: "two\\nlines" is not one line',
    );
    assert.equal(encoded, [], 'nothing was encoded');
    await log.append(['fine']);
    await log.close();
    assert.is(readFileSync(home.path, 'utf8'), 'fine\n');
  });
});

test("the records the log checked are encoded without a second check, by the codec's encodeChecked", async () => {
  await withHome(async (home) => {
    const calls: string[] = [];
    const codec: RecordCodec<Record> = {
      ...honchoCodec,
      normalize: (v) => (calls.push('normalize'), honchoCodec.normalize(v)),
      encode: (r) => (calls.push('encode'), honchoCodec.encode(r)),
      encodeChecked: (r) => (calls.push('encodeChecked'), honchoCodec.encode(r)),
    };
    const log = await jsonlBackend(home.path, { codec }).open();
    await log.append([A, B]);
    assert.equal(calls, ['normalize', 'normalize', 'encodeChecked', 'encodeChecked']);
    await log.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B));
  });
});

test("records checked by the log's own codec are neither checked nor encoded again; any other codec's are checked", async () => {
  await withHome(async (home) => {
    const calls: string[] = [];
    const codec: RecordCodec<Record> = {
      ...honchoCodec,
      normalize: (v) => (calls.push('normalize'), honchoCodec.normalize(v)),
      encodeChecked: (r) => (calls.push('encodeChecked'), honchoCodec.encode(r)),
    };
    const log = await jsonlBackend(home.path, { codec }).open();
    const checked = CheckedRecord.check(codec, A);
    const written = checked.line;
    calls.length = 0;
    await log.append([checked]);
    assert.equal(calls, [], 'checked and encoded once, before the append: the log takes the line as it is');
    await log.append([CheckedRecord.check(honchoCodec, B)]);
    assert.equal(
      calls,
      ['normalize', 'encodeChecked'],
      "another codec's check, even of the same records, is no promise",
    );
    const invalid = { ...B, time: 'yesterday' };
    const lax: RecordCodec<Record> = { ...honchoCodec, normalize: (v) => v as Record };
    assert.is((await log.append([CheckedRecord.check(lax, invalid)]).catch((e) => e)).code, 'LEDGER_INVALID_RECORD');
    calls.length = 0;
    await log.append([A]);
    assert.equal(calls, ['normalize', 'encodeChecked'], 'a plain record: checked as always');
    await log.close();
    assert.is(readFileSync(home.path, 'utf8'), `${written}\n${line(B)}${line(A)}`);
  });
});

test('a line one byte longer than a line may hold, valid but for its length, is damage at its line; the file is left as it was', async () => {
  await withHome(async (home) => {
    // made by hand: the codec refuses to write it
    const tooLong = `${encodeRecord(recordOfLength(turn('long', 1), MAX_LINE_BYTES)).replace('"why":"', '"why":"y')}\n`;
    await damaged(home, line(A) + tooLong + line(B), 2, overlong(MAX_LINE_BYTES + 1));
  });
});

test('a torn tail longer than a line may hold is dropped, and cut by a writer', async () => {
  await withHome(async (home) => {
    const huge = 70 << 20;
    writeFileSync(home.path, Buffer.concat([Buffer.from(line(A)), Buffer.alloc(huge, 0x61)]));
    const reader = await Ledger.open(home.path, { readOnly: true });
    assert.equal(reader.repaired, { at: line(A).length, dropped: huge, cut: false });
    await reader.close();
    const writer = await Ledger.open(home.path);
    assert.equal(writer.repaired, { at: line(A).length, dropped: huge, cut: true });
    await writer.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

const OPENER = fileURLToPath(new URL('./support/open-huge.js', import.meta.url));

/** Opens `path` in a child process (`support/open-huge.ts`) and gives what it says. */
function openInChild(
  path: string,
  mode: 'read-only' | 'writable',
): { refused?: { code: string; message: string }; size?: number; repair?: unknown; peakGrowth: number } {
  const out = execFileSync(process.execPath, [OPENER, path, mode], { encoding: 'utf8' });
  return JSON.parse(out) as {
    refused?: { code: string; message: string };
    size?: number;
    repair?: unknown;
    peakGrowth: number;
  };
}

/** A file of `head`, then a hole (zeros that take no space) up to `size`, then `after`. */
function sparse(path: string, head: string, size: number, after = ''): void {
  writeFileSync(path, head);
  truncateSync(path, size);
  if (after !== '') appendFileSync(path, after);
}

/** Bounded memory: an open holds one line of the longest a line may be, and a chunk; never the line it refuses. */
const BOUNDED = 256 << 20;

test('lines of 2 GiB and more (a sparse file): damage at their line, found in bounded memory, the file left as it was', async () => {
  await withFastHome(async (home) => {
    const size = 2 ** 31 + (1 << 20);
    sparse(home.path, line(A), size, '\n');
    for (const mode of ['read-only', 'writable'] as const) {
      const said = openInChild(home.path, mode);
      assert.equal(
        said.refused,
        {
          code: 'LEDGER_DAMAGED',
          message: `${home.path}:2: ${overlong(size - line(A).length)}; see docs/runbook.md#honcho-ledger-damaged`,
        },
        mode,
      );
      assert.ok(said.peakGrowth < BOUNDED, `${mode}: the open's peak memory grew ${said.peakGrowth} bytes`);
    }
    assert.is(statSync(home.path).size, size + 1);
    const start = Buffer.alloc(line(A).length + 1);
    const fd = openSync(home.path, 'r');
    readSync(fd, start, 0, start.length, 0);
    closeSync(fd);
    assert.equal(start, Buffer.concat([Buffer.from(line(A)), Buffer.alloc(1)]), 'the file is as it was');
  });
});

test('a tail of 2 GiB and more (a sparse file) is dropped and cut, in bounded memory', async () => {
  await withFastHome(async (home) => {
    const size = 2 ** 31 + (1 << 20);
    sparse(home.path, line(A), size);
    const said = openInChild(home.path, 'writable');
    assert.is(said.size, 1);
    assert.equal(said.repair, { at: line(A).length, dropped: size - line(A).length, cut: true });
    assert.ok(said.peakGrowth < BOUNDED, `the open's peak memory grew ${said.peakGrowth} bytes`);
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

test('a valid 600 MB line, too long for a JavaScript string, is damage at its line with the file named, not a bare RangeError', async () => {
  await withHome(async (home) => {
    const record = encodeRecord(decided(turn('long', 1), skip('')));
    const [before, after] = [record.slice(0, -3), record.slice(-3)]; // split inside the empty why: `"`, then `"}}`
    const fd = openSync(home.path, 'w');
    const block = Buffer.alloc(1 << 20, 0x79);
    writeSync(fd, line(A) + before);
    for (let n = 0; n < 600; n++) writeSync(fd, block);
    writeSync(fd, `${after}\n`);
    closeSync(fd);
    const length = before.length + 600 * block.length + after.length;
    const said = openInChild(home.path, 'read-only');
    assert.equal(said.refused, {
      code: 'LEDGER_DAMAGED',
      message: `${home.path}:2: ${overlong(length)}; see docs/runbook.md#honcho-ledger-damaged`,
    });
    assert.ok(said.peakGrowth < BOUNDED, `the open's peak memory grew ${said.peakGrowth} bytes`);
  });
});

test('a missing directory is an I/O error naming the path, and it is never created', async () => {
  await withHome(async (home) => {
    const path = join(home.dir, 'memory', 'honcho.jsonl');
    const ledger = await Ledger.open(path);
    await rejects(ledger.append(A), 'LEDGER_IO', `${path}: no such file or directory (ENOENT)`);
    assert.not.ok(await ledger.isDecided(A.item));
    assert.equal(readdirSync(home.dir), []);
    await ledger.close();
  });
});

test("a failed write changes nothing: the ledger's path turned into a directory", async () => {
  await withHome(async (home) => {
    const ledger = await Ledger.open(home.path);
    mkdirSync(home.path);
    await rejects(ledger.append(A), 'LEDGER_NOT_A_FILE', notAFile(home.path, 'a directory'));
    assert.not.ok(await ledger.isDecided(A.item));
    assert.equal(await ledger.counts(), { decided: 0, sent: 0, waiting: 0, failed: 0, skipped: 0 });
    await ledger.close();
  });
});

/** The refusal of an open of `path`, where `what` is. */
const notAFile = (path: string, what: string): string =>
  `${path}: is ${what}, not a regular file; a JSONL ledger is a regular file: name the ledger's file, or move this away`;

test("a folder at the ledger's path is refused, not read as an empty ledger; nothing in it is touched", async () => {
  await withHome(async (home) => {
    mkdirSync(home.path);
    writeFileSync(join(home.path, 'honcho.jsonl'), line(A));
    for (const readOnly of [true, false]) {
      const e = await rejects(
        Ledger.open(home.path, { readOnly }),
        'LEDGER_NOT_A_FILE',
        notAFile(home.path, 'a directory'),
      );
      assert.is(
        (e as Error & { report: string }).report,
        `${notAFile(home.path, 'a directory')}; see docs/runbook.md#ledger-not-a-file`,
      );
      assert.ok(RUNBOOK_TEXT.includes('\n## ledger-not-a-file\n'));
    }
    assert.equal(readdirSync(home.path), ['honcho.jsonl']);
    assert.is(readFileSync(join(home.path, 'honcho.jsonl'), 'utf8'), line(A));
  });
});

test('a character device or a socket at the path is refused before it is opened', async () => {
  await withHome(async (home) => {
    const socket = join(home.dir, 'socket');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      for (const [path, what] of [
        ['/dev/zero', 'a character device'],
        ['/dev/null', 'a character device'],
        [socket, 'a socket'],
      ] as const) {
        for (const readOnly of [true, false]) {
          const io = new InjectingIO();
          await rejects(
            Ledger.open(jsonlBackend(path, { codec: honchoCodec, io }), { readOnly }),
            'LEDGER_NOT_A_FILE',
            notAFile(path, what),
          );
          assert.is(io.count('openRead') + io.count('openReadWrite'), 0, `${path}: opened`);
        }
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

/** A {@link InjectingIO} whose look at a path says a regular file is there, whatever is: as if it were swapped in after the look. */
class SwappedIO extends InjectingIO {
  override statusOf(path: string): FileStatus {
    super.statusOf(path);
    return { kind: 'file', identity: 'the file that was there' };
  }
}

test('a special file put at the path after the look is refused from the open descriptor, which is closed', async () => {
  await withHome(async (home) => {
    const fifo = join(home.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // an open to write never waits for a FIFO's other end (an open to read is tested in a child:
    // test/crash/special-files.test.ts)
    for (const [path, what, readOnly] of [
      [fifo, 'a named pipe (FIFO)', false],
      ['/dev/zero', 'a character device', true],
      ['/dev/null', 'a character device', false],
    ] as const) {
      const io = new SwappedIO();
      await rejects(
        Ledger.open(jsonlBackend(path, { codec: honchoCodec, io }), { readOnly }),
        'LEDGER_NOT_A_FILE',
        notAFile(path, what),
      );
      assert.is(io.count(readOnly ? 'openRead' : 'openReadWrite'), 1);
      assert.equal(io.open.size, 0, 'the descriptor was closed');
    }
    assert.ok(lstatSync(fifo).isFIFO());
  });
});

test('a symbolic link to a regular file is that file: read, locked, appended to, and its own directory synced', async () => {
  await withHome(async (home) => {
    const elsewhere = join(home.dir, 'elsewhere');
    mkdirSync(elsewhere);
    const real = join(elsewhere, 'honcho.jsonl');
    writeFileSync(real, line(A));
    symlinkSync(real, home.path);
    const synced: string[] = [];
    const io: FileIO = { ...nodeFileIO, syncDirectory: (path) => void synced.push(path) };
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    assert.is(ledger.size, 1);
    assert.equal(synced, [elsewhere], "the directory that holds the file, not the link's");
    await rejects(Ledger.open(real), 'LEDGER_LOCKED', /open for writing elsewhere/);
    await ledger.append(B);
    await ledger.close();
    assert.is(readFileSync(real, 'utf8'), line(A) + line(B));
    assert.ok(lstatSync(home.path).isSymbolicLink(), 'the link is still a link');
  });
});

test('a symbolic link to nothing reads as an empty ledger; the first append is refused, and nothing is created', async () => {
  await withHome(async (home) => {
    const missing = join(home.dir, 'missing.jsonl');
    symlinkSync(missing, home.path);
    const ledger = await Ledger.open(home.path);
    assert.is(ledger.size, 0);
    await rejects(
      ledger.append(A),
      'LEDGER_IO',
      `${home.path}: the path is taken, but by no file to open (a symbolic link to a missing file?); remove it, or create the file it leads to`,
    );
    await ledger.close();
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

/** `e` is a LEDGER_IO error that points at the runbook's `anchor`, an entry the runbook has. */
function pointsAt(e: Error, anchor: string): void {
  const error = e as Error & { runbook?: string; report?: string };
  assert.is(error.runbook, anchor, e.message);
  assert.ok(error.report?.endsWith(`; see docs/runbook.md#${anchor}`), error.report);
  assert.ok(RUNBOOK_TEXT.includes(`\n## ${anchor}\n`), `the runbook has no entry ${anchor}`);
}

test("a read that fails points at the runbook's ledger-unreadable entry; a write that fails, at ledger-unwritable", async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A));
    const reading: [string, InjectingIO][] = [
      ['open to read', new InjectingIO().fail('openRead', 1, 'EACCES')],
      ['read', new InjectingIO().fail('read', 1, 'EIO')],
      ['fstat', new InjectingIO().fail('size', 1, 'EIO')],
    ];
    for (const [what, io] of reading) {
      const e = await rejects(
        Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }), { readOnly: true }),
        'LEDGER_IO',
        new RegExp(`^${home.path}: `),
      );
      pointsAt(e, 'ledger-unreadable');
      assert.equal(io.open.size, 0, what);
    }
    const opening = new InjectingIO().fail('openReadWrite', 1, 'EACCES');
    pointsAt(
      await rejects(Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io: opening })), 'LEDGER_IO'),
      'ledger-unwritable',
    );
    const writing = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io: writing }));
    writing.fail('write', 1, 'ENOSPC');
    pointsAt(
      await rejects(ledger.append(B), 'LEDGER_IO', `${home.path}: no space left on device (ENOSPC)`),
      'ledger-unwritable',
    );
    await ledger.close();
  });
});

test('a failed write is cut back and the log goes on; nothing of it is believed', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    await ledger.append(A);
    io.shortenWrites(1).fail('write', 2, 'ENOSPC');
    await rejects(ledger.append(B), 'LEDGER_IO', `${home.path}: no space left on device (ENOSPC)`);
    assert.is(readFileSync(home.path, 'utf8'), line(A), 'the half-written line was cut');
    assert.not.ok(await ledger.isDecided(B.item));
    await ledger.append(B);
    assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B));
    await ledger.close();
    assert.equal(io.open.size, 0, 'no descriptor leaks');
  });
});

test('a failed write is cut back and the cut synced before the append is rejected', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    await log.append([A]);
    const syncs = io.count('datasync');
    io.shortenWrites(1).fail('write', 2, 'ENOSPC'); // half the batch written, then the write fails
    await rejects(log.append([B, C]), 'LEDGER_IO', `${home.path}: no space left on device (ENOSPC)`);
    assert.is(io.count('truncate'), 1);
    assert.is(io.count('datasync'), syncs + 1, 'the cut was synced: a power loss cannot bring the half batch back');
    assert.is(readFileSync(home.path, 'utf8'), line(A));
    assert.equal(await log.append([B]), { from: 1, head: 2 }, 'the log goes on');
    await log.close();
  });
});

test('a cut back that cannot be synced is a cut that failed: the log stops', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    await log.append([A]);
    io.shortenWrites(1).fail('write', 2, 'ENOSPC').fail('datasync', 1, 'EIO');
    await rejects(log.append([B, C]), 'LEDGER_IO', `${home.path}: no space left on device (ENOSPC)`);
    await rejects(log.append([B]), 'LEDGER_STOPPED');
    await log.close();
  });
});

test("an append whose write fails leaves the last line as it was, though its lines were encoded into the last batch's buffer", async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    await log.append([A]);
    const before = await log.resumePoint();
    io.fail('write', 1, 'ENOSPC');
    await rejects(log.append([B]), 'LEDGER_IO', `${home.path}: no space left on device (ENOSPC)`);
    assert.equal(await log.resumePoint(), before, "the resume point is still A's");
    await log.append([C]);
    assert.equal(await collect(log.read()), [A, C]);
    await log.close();
  });
});

test('a reader whose file was cut or changed under it is told so, where it would read nothing forever', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A) + line(B) + line(C));
    // a guard, so that a regression fails here instead of hanging the run
    let reads = 0;
    const io: FileIO = {
      ...nodeFileIO,
      read: (fd, buffer, offset, length, position) => {
        if (++reads > 10_000) throw new Error('read() was called 10,000 times: the reader spins');
        return nodeFileIO.read(fd, buffer, offset, length, position);
      },
    };
    const log = await jsonlBackend(home.path, { codec: honchoCodec, io }).open({ readOnly: true });
    const held = line(A).length + line(B).length + line(C).length;
    truncateSync(home.path, line(A).length); // cut by hand, or by a writer cutting back lines whose sync failed
    const changed = (size: number): string =>
      `${home.path}: the file changed while open: it no longer holds the ${held} bytes of whole lines this log read (it is ${size} bytes long now); reopen the ledger`;
    await rejects(collect(log.read()), 'LEDGER_IO', changed(line(A).length));
    await rejects(collect(log.read(2)), 'LEDGER_IO', changed(line(A).length));
    await rejects(log.resumePoint(), 'LEDGER_IO', changed(line(A).length));
    // overwritten, as long as it was, but with no newline where the log's last line ended
    writeFileSync(home.path, 'x'.repeat(held));
    await rejects(collect(log.read()), 'LEDGER_IO', changed(held));
    await log.close();
    writeFileSync(home.path, line(A));
    const again = await openLog(home.path);
    assert.equal(await collect(again.read()), [A], 'a reopen reads what the file holds now');
    await again.close();
  });
});

test('a failed write that cannot be cut back stops the log until it is reopened', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    await ledger.append(A);
    io.shortenWrites(1).fail('write', 2, 'EIO').fail('truncate', 1, 'EIO');
    await rejects(ledger.append(B), 'LEDGER_IO');
    await rejects(
      ledger.append(C),
      'LEDGER_STOPPED',
      new RegExp(
        `^${home.path}: an earlier write failed \\(${home.path}: i/o error \\(EIO\\)\\); every append is refused until the ledger is reopened$`,
      ),
    );
    await ledger.close();
    const again = await Ledger.open(home.path);
    assert.ok(again.repaired, 'the half line is a torn tail for the next open');
    assert.ok(await again.isDecided(A.item));
    assert.not.ok(await again.isDecided(B.item));
    await again.append(B);
    await again.close();
  });
});

test('a failed fdatasync is never retried into success: the log stops, and the lines are cut', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    await ledger.append(A);
    io.fail('datasync', 1, 'EIO');
    await rejects(ledger.append(B), 'LEDGER_IO', `${home.path}: i/o error (EIO)`);
    assert.not.ok(await ledger.isDecided(B.item));
    assert.is(readFileSync(home.path, 'utf8'), line(A));
    const syncs = io.count('datasync');
    await rejects(ledger.append(C), 'LEDGER_STOPPED');
    assert.is(io.count('datasync'), syncs, 'no sync was tried again');
    assert.is(io.count('write'), 2, 'nothing more was written');
    await ledger.close();
    const again = await Ledger.open(home.path);
    assert.is(again.size, 1);
    await again.close();
  });
});

test('a failed sync of the directory after creating the file stops the log', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO().fail('syncDirectory', 1, 'EIO');
    const log = await openLog(home.path, io);
    await rejects(log.append([A]), 'LEDGER_IO', `${home.dir}: i/o error (EIO)`);
    await rejects(log.append([A]), 'LEDGER_STOPPED');
    await log.close();
    assert.is(statSync(home.path).size, 0);
  });
});

test('a torn tail that cannot be cut is an I/O error, and the open holds nothing', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A) + 'torn');
    const io = new InjectingIO().fail('truncate', 1, 'EROFS');
    await rejects(openLog(home.path, io), 'LEDGER_IO', `${home.path}: read-only file system (EROFS)`);
    assert.equal(io.open.size, 0);
    assert.is(readFileSync(home.path, 'utf8'), `${line(A)}torn`);
    const log = await openLog(home.path);
    await log.close();
  });
});

test('a batch is written whole, with one write and one sync, or not at all', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    const batch = Array.from({ length: 50 }, (_, n) => decided(turn('batch', n)));
    assert.equal(await log.append(batch), { from: 0, head: 50 });
    assert.is(io.count('write'), 1);
    assert.is(io.count('datasync'), 1);
    const refused = [decided(turn('batch', 50)), { ...decided(turn('batch', 51)), time: 'yesterday' } as Record];
    await rejects(log.append(refused), 'LEDGER_INVALID_RECORD');
    assert.is(log.head, 50);
    assert.is(readFileSync(home.path, 'utf8'), batch.map(line).join(''));
    assert.equal(await log.append([]), { from: 50, head: 50 });
    await log.close();
  });
});

test('an append that expects another head is refused with a conflict, and writes nothing', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    await log.append([A], { expectedHead: 0 });
    await rejects(
      log.append([B], { expectedHead: 0 }),
      'LEDGER_CONFLICT',
      `${home.path}: expected the log's head at 0, but it is at 1; read what was appended and try again`,
    );
    assert.is(log.head, 1);
    assert.equal(await log.append([B], { expectedHead: 1 }), { from: 1, head: 2 });
    await log.close();
  });
});

test('reading from a position gives the records from there, in order, across seek points', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    const records = Array.from({ length: 9000 }, (_, n) =>
      decided(turn(`s${n % 13}`, n), n % 2 === 0 ? skip(`w${n}`) : undefined),
    );
    for (let at = 0; at < records.length; at += 1000) await log.append(records.slice(at, at + 1000));
    await log.close();
    for (const chunkSize of [1 << 20, 300]) {
      const reopened = await jsonlBackend(home.path, { codec: honchoCodec, chunkSize }).open({ readOnly: true });
      assert.is(reopened.head, 9000);
      for (const from of [0, 1, 4095, 4096, 4097, 8191, 8192, 8999, 9000, 12000]) {
        const got: Record[] = [];
        for await (const record of reopened.read(from)) got.push(record);
        assert.is(got.length, Math.max(0, 9000 - from), `from ${from}`);
        if (got.length > 0) assert.equal(got[0], records[from], `first record from ${from}`);
        if (from === 0) assert.equal(got, records);
      }
      await reopened.close();
    }
  });
});

test('reading a log that was appended to since it was opened', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    const records = Array.from({ length: 5000 }, (_, n) => decided(turn('r', n)));
    for (const record of records) await log.append([record]);
    let n = 0;
    for await (const record of log.read(4000)) assert.equal(record, records[4000 + n++]);
    assert.is(n, 1000);
    await log.close();
    await rejects(
      (async () => {
        for await (const _ of log.read()) void _;
      })(),
      'LEDGER_CLOSED',
    );
  });
});

test('a resumed open reads only the lines after its point: damage before it is not even seen', async () => {
  await withHome(async (home) => {
    const records = Array.from({ length: 50 }, (_, n) => decided(turn('r', n)));
    const log = await openLog(home.path);
    await log.append(records.slice(0, 40));
    const point = await log.resumePoint();
    await log.append(records.slice(40));
    await log.close();
    // same length, so the offsets hold: a full open would refuse line 3
    const bytes = readFileSync(home.path);
    const third = bytes.indexOf('{', bytes.indexOf('\n', bytes.indexOf('\n') + 1));
    bytes.write('[', third);
    writeFileSync(home.path, bytes);
    await rejects(openLog(home.path), 'LEDGER_DAMAGED', /:3: /);
    const seen: number[] = [];
    const resumed = await jsonlBackend(home.path, { codec: honchoCodec }).open({
      resume: point,
      replay: (_, p) => void seen.push(p),
    });
    assert.equal(
      seen,
      Array.from({ length: 10 }, (_, n) => 40 + n),
    );
    assert.is(resumed.head, 50);
    await resumed.close();
  });
});

test('a resumed open without a cursor finds its point by counting lines', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    await log.append(Array.from({ length: 30 }, (_, n) => decided(turn('c', n))));
    const point = await log.resumePoint();
    await log.append([decided(turn('c', 30))]);
    await log.close();
    const seen: number[] = [];
    const resumed = await jsonlBackend(home.path, { codec: honchoCodec }).open({
      resume: { ...point, cursor: null },
      replay: (_, p) => void seen.push(p),
    });
    assert.equal(seen, [30]);
    await resumed.close();
  });
});

test('a resumed open still drops a torn tail, and reports damage after its point with the line number', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    await log.append([A, B]);
    const point = await log.resumePoint();
    await log.close();
    appendFileSync(home.path, line(C).slice(0, 12));
    const resumed = await jsonlBackend(home.path, { codec: honchoCodec }).open({ resume: point });
    assert.equal(resumed.repaired, { at: line(A).length + line(B).length, dropped: 12, cut: true });
    await resumed.close();
    appendFileSync(home.path, 'nonsense\n');
    const before = readFileSync(home.path);
    await rejects(
      jsonlBackend(home.path, { codec: honchoCodec }).open({ resume: point }),
      'LEDGER_DAMAGED',
      new RegExp(`^${home.path}:3: expected ident at line 1 column 2`),
    );
    assert.equal(readFileSync(home.path), before);
  });
});

test('a resumed open of a file cut shorter than its point fails and changes nothing', async () => {
  await withHome(async (home) => {
    const log = await openLog(home.path);
    await log.append([A, B, C]);
    const point = await log.resumePoint();
    await log.close();
    writeFileSync(home.path, line(A) + line(B));
    await rejects(
      jsonlBackend(home.path, { codec: honchoCodec }).open({ resume: point }),
      'LEDGER_RESUME_MISMATCH',
      /cannot resume at record 3/,
    );
    writeFileSync(home.path, line(A) + line(B) + line(failed(turn('chat-1', 1))));
    await rejects(
      jsonlBackend(home.path, { codec: honchoCodec }).open({ resume: point }),
      'LEDGER_RESUME_MISMATCH',
      /cannot resume at record 3: (no record ends there|the record before it is not the one it was)/,
    );
    const sameLength = line(C).replace('msg-a1', 'msg-b2');
    writeFileSync(home.path, line(A) + line(B) + sameLength);
    await rejects(
      jsonlBackend(home.path, { codec: honchoCodec }).open({ resume: point }),
      'LEDGER_RESUME_MISMATCH',
      /the record before it is not the one it was/,
    );
    assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B) + sameLength);
  });
});

test('a second writer in the same process is refused at once, naming the ledger; a reader is not', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A));
    const first = await Ledger.open(home.path);
    await rejects(
      Ledger.open(home.path),
      'LEDGER_LOCKED',
      `${home.path}: the ledger is open for writing elsewhere (another process, or another open in this one); only one writer at a time`,
    );
    const reader = await Ledger.open(home.path, { readOnly: true });
    await reader.close();
    await first.close();
    const second = await Ledger.open(home.path);
    await second.close();
  });
});

test('two writers of a missing file: the second to create it is refused', async () => {
  await withHome(async (home) => {
    const other = join(home.dir, 'same-dir');
    symlinkSync(home.dir, other);
    const first = await Ledger.open(home.path);
    const second = await Ledger.open(join(other, 'honcho.jsonl')); // another name: the same file
    await first.append(A);
    await rejects(second.append(B), 'LEDGER_LOCKED');
    await first.close();
    await rejects(second.append(B), 'LEDGER_LOCKED', /open for writing elsewhere/);
    await second.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A));
  });
});

const HOLDER = fileURLToPath(new URL('./support/hold-ledger.js', import.meta.url));

test('a writer in another process holds the ledger; once it is killed the next open succeeds at once', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A));
    const child = spawn(process.execPath, [HOLDER, home.path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const said = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (data: Buffer) => resolve(data.toString()));
        child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
      });
      assert.is(said, 'ready 1\n');
      await rejects(Ledger.open(home.path), 'LEDGER_LOCKED');
      const reader = await Ledger.open(home.path, { readOnly: true });
      await reader.close();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const ledger = await Ledger.open(home.path);
    await ledger.append(B);
    await ledger.close();
    assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B));
  });
});

/** What a writer says once its file is no longer the one at its path. */
const noLongerAtPath = (path: string, how: 'replaced' | 'removed'): string =>
  `${path}: the file this writer holds is no longer at the path (${how === 'replaced' ? 'another file was put there: sed -i, an editor, mv' : 'it was removed, or moved away'}); ` +
  'every append is refused until the ledger is reopened, which reads the file at the path; stop every writer before editing a ledger';

test('a writer whose file is replaced, removed or moved away stops before it acknowledges: the append is cut from the old file, and every later one refused', async () => {
  const edits: [string, 'replaced' | 'removed', (home: Home) => void][] = [
    [
      'replaced, as sed -i does (a new file renamed over it)',
      'replaced',
      (home) => {
        writeFileSync(`${home.path}.sed`, line(B));
        renameSync(`${home.path}.sed`, home.path);
      },
    ],
    ['removed', 'removed', (home) => rmSync(home.path)],
    ['moved away', 'removed', (home) => renameSync(home.path, `${home.path}.moved`)],
  ];
  for (const [what, how, edit] of edits) {
    await withHome(async (home) => {
      const ledger = await Ledger.open(home.path);
      await ledger.append(A);
      const held = `${home.path}.held`;
      linkSync(home.path, held); // the file the writer holds, whatever the edit does with its name
      edit(home);
      const after = existsSync(home.path) ? readFileSync(home.path) : null;
      const e = await rejects(ledger.append(C), 'LEDGER_STOPPED', noLongerAtPath(home.path, how));
      assert.is((e as Error & { runbook?: string }).runbook, 'ledger-replaced', what);
      assert.ok(RUNBOOK_TEXT.includes('\n## ledger-replaced\n'));
      assert.is(
        readFileSync(held, 'utf8'),
        line(A),
        `${what}: the refused append was cut back from the file the writer holds`,
      );
      assert.not.ok(await ledger.isDecided(turn('chat-9', 9)));
      await rejects(ledger.append(decided(turn('chat-9', 9))), 'LEDGER_STOPPED', noLongerAtPath(home.path, how));
      assert.is(ledger.size, 1);
      await ledger.close();
      assert.equal(
        existsSync(home.path) ? readFileSync(home.path) : null,
        after,
        `${what}: the file at the path was not touched`,
      );
      if (how === 'replaced') {
        const reopened = await Ledger.open(home.path);
        assert.is(reopened.size, 1, 'a reopen reads the file at the path');
        assert.ok(await reopened.isDecided(B.item));
        await reopened.close();
      }
    });
  }
});

test('a writer whose file was re-linked under it: through a symbolic link pointed elsewhere, it stops; a new hard link changes nothing', async () => {
  await withHome(async (home) => {
    const first = join(home.dir, 'first.jsonl');
    const second = join(home.dir, 'second.jsonl');
    writeFileSync(first, line(A));
    writeFileSync(second, line(A));
    const link = join(home.dir, 'link.jsonl');
    symlinkSync(first, link);
    const ledger = await Ledger.open(link);
    linkSync(first, join(home.dir, 'another-name.jsonl'));
    await ledger.append(B);
    rmSync(link);
    symlinkSync(second, link);
    await rejects(ledger.append(C), 'LEDGER_STOPPED', noLongerAtPath(link, 'replaced'));
    await ledger.close();
    assert.is(readFileSync(first, 'utf8'), line(A) + line(B));
    assert.is(readFileSync(second, 'utf8'), line(A));
  });
});

test('a look at the path that fails after an append is written: the append is cut back and the log stops, as after a failed sync', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const log = await openLog(home.path, io);
    await log.append([A]);
    io.fail('statusOf', 1, 'EIO');
    const e = await rejects(log.append([B]), 'LEDGER_IO', `${home.path}: i/o error (EIO)`);
    assert.is((e as Error & { runbook?: string }).runbook, 'ledger-unreadable');
    assert.is(readFileSync(home.path, 'utf8'), line(A));
    await rejects(log.append([B]), 'LEDGER_STOPPED');
    await log.close();
  });
});

test('a file that grew with garbage after the last good line is damage, not a tail, when it ends in a newline', async () => {
  await withHome(async (home) => {
    appendFileSync(home.path, line(A));
    await damaged(home, line(A) + '\u0000\u0000\n', 2, 'expected value at line 1 column 1');
  });
});

test.run();
