/**
 * The LevelDB backend: its format on disk, atomic batches and failed writes, one writer across
 * processes, damage, the folder, databases the caller made, and the Honcho ledger on top.
 */
import { type ChildProcessByStdio, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { encode as cborEncode } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../backends/level/index.js';
import {
  copyLedger,
  DamagedError,
  decodeRecord,
  encodeRecord,
  ForeignFolderError,
  honchoCodec,
  jsonlBackend,
  Ledger,
  LevelFolderDamagedError,
  OldFormatError,
  type Record,
} from '../lib/index.js';
import { crc32c } from '../lib/leveldb/crc32c.js';
import { vectorBytes } from './conformance/records.js';
import { FaultyLevel } from './support/faulty-level.js';
import {
  all,
  collect,
  conclude,
  decided,
  edit,
  failed,
  rejects,
  sent,
  skip,
  turn,
  unconclude,
  withHome,
} from './support/ledger.js';
import {
  backendAt,
  bodyOf,
  cbor,
  dump,
  filesOf,
  flipBits,
  folderOf,
  hex,
  metaKey,
  putRecord,
  recordKey,
  tamper,
  VIEW,
  write,
} from './support/level-db.js';

const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = sent(turn('chat-1', 1), ['msg-a1']);
const WIDE = decided(edit('2026-09-28-0001', 0), skip('café 中文 😀'));
/** The largest turn kept exactly: more than 32 bits, so a CBOR uint64. */
const BIG = decided(turn('chat-2', 2 ** 53 - 1));

const HOLDER = fileURLToPath(new URL('./support/hold-level.js', import.meta.url));

/** A memory-level database behind a wrapper that records every batch written and fails writes on demand. */
function recorded(): { readonly db: FaultyLevel; readonly keys: () => Promise<string[]> } {
  const inner = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  return { db: new FaultyLevel(inner), keys: async () => (await inner.keys().all()).map(hex) };
}

// -- the format -------------------------------------------------------------------------------

test('records are CBOR under keys in log order, after the format marker, and read back to their canonical lines', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const records = [A, B, C, WIDE, BIG];
    await write(folder, records.slice(0, 2));
    await write(folder, records.slice(2));
    const entries = await dump(folder);
    assert.equal(
      entries.map(([key]) => key),
      [hex(metaKey()), ...records.map((_, n) => hex(recordKey(n)))],
    );
    assert.equal(cbor.decode(Buffer.from((entries[0] as [string, string])[1], 'hex')), {
      format: 'ledgerstore/level',
      version: 2,
    });
    entries.slice(1).forEach(([, value], n) => {
      const decoded: unknown = cbor.decode(bodyOf(value, n));
      assert.equal(decoded, records[n], `record ${n}`);
      assert.is(encodeRecord(decoded), encodeRecord(records[n] as Record));
    });
    // the big turn is a CBOR unsigned integer (major type 0, 8 bytes), not a float
    assert.ok((entries[5] as [string, string])[1].includes('1b001fffffffffffff'), 'turn 2^53-1 as a uint64');
    assert.not.ok((entries[5] as [string, string])[1].includes('fb'), 'no float64');
  });
});

test('a turn only a bigint holds is a CBOR uint64, read back exactly beside a 64-bit integer a number holds', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const records = [
      decided(turn('chat-3', 2n ** 53n)),
      decided(turn('chat-3', 2n ** 53n + 1n)),
      sent(turn('chat-3', 2n ** 53n + 1n), ['msg-b1']),
      decided(turn('chat-3', 2n ** 64n - 1n)),
      BIG,
    ];
    await write(folder, records);
    const values = (await dump(folder)).slice(1).map(([, value], n) => bodyOf(value, n).toString('hex'));
    assert.ok(values[0]?.includes('1b0020000000000000'), '2^53 as a uint64');
    assert.ok(values[1]?.includes('1b0020000000000001'), '2^53+1 as a uint64');
    assert.ok(values[3]?.includes('1bffffffffffffffff'), '2^64-1 as a uint64');
    const log = await backendAt(folder).open({ readOnly: true });
    const read = await all(log);
    await log.close();
    assert.equal(read, records, 'each turn in its one form: a bigint above 2^53-1, the number up to it');
    assert.equal(
      read.map((r) => encodeRecord(r)),
      records.map((r) => encodeRecord(r)),
    );
    assert.ok(encodeRecord(read[3]).includes('"turn":18446744073709551615}'));
  });
});

test('the canonical vectors round-trip through CBOR to their exact lines', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const bytes = vectorBytes();
    const lines = bytes.toString('utf8').split('\n').slice(0, -1);
    await write(
      folder,
      lines.map((line) => decodeRecord(Buffer.from(line, 'utf8'))),
    );
    const values = (await dump(folder)).slice(1).map(([, value], n) => bodyOf(value, n));
    assert.is(values.length, lines.length);
    values.forEach((value, n) =>
      assert.is(encodeRecord(honchoCodec.normalize(cbor.decode(value))), lines[n], `vector ${n + 1}`),
    );
    const log = await backendAt(folder).open({ readOnly: true });
    assert.is((await all(log)).map((record) => `${encodeRecord(record)}\n`).join(''), bytes.toString('utf8'));
    await log.close();
  });
});

// -- writing ----------------------------------------------------------------------------------

test('an append is one batch written with sync, the marker going with the first', async () => {
  const { db } = recorded();
  const log = await levelBackend(db, { codec: honchoCodec }).open();
  await log.append([A, B]);
  await log.append([C]);
  await log.append([]);
  assert.equal(db.writes, [
    { puts: 3, sync: true },
    { puts: 1, sync: true },
  ]);
  await log.close();
});

test('a batch that fails to write leaves nothing, and the log refuses appends until it is reopened', async () => {
  const { db, keys } = recorded();
  const backend = levelBackend(db, { codec: honchoCodec, name: 'recorded' });
  const log = await backend.open();
  await log.append([A, B]);
  const before = await keys();
  db.failBatch = () => ({ when: 'before', error: new Error('EIO: i/o error, write') });
  await rejects(log.append([C, WIDE, BIG]), 'LEDGER_IO', 'recorded: EIO: i/o error, write');
  assert.is(log.head, 2);
  assert.equal(await all(log), [A, B]);
  assert.equal(await keys(), before);
  db.failBatch = null;
  // Whether a failed LevelDB write reached the disk is not known: no more appends on this open.
  await rejects(
    log.append([C]),
    'LEDGER_STOPPED',
    /^recorded: an earlier write failed \(recorded: EIO: i\/o error, write\)/,
  );
  await log.close();
  const again = await backend.open();
  assert.is(again.head, 2);
  assert.equal(await again.append([C]), { from: 2, head: 3 });
  assert.equal(await all(again), [A, B, C]);
  await again.close();
});

test('appends run in call order: each expectedHead sees the appends called before it', async () => {
  const log = await levelBackend(new MemoryLevel(), { codec: honchoCodec }).open();
  const first = log.append([A], { expectedHead: 0 });
  const second = log.append([B], { expectedHead: 1 });
  const stale = log.append([C], { expectedHead: 1 });
  const invalid = log.append([{ ...C, time: 'now' }]);
  assert.equal(await first, { from: 0, head: 1 });
  assert.equal(await second, { from: 1, head: 2 });
  await rejects(stale, 'LEDGER_CONFLICT');
  await rejects(invalid, 'LEDGER_INVALID_RECORD');
  assert.equal(await all(log), [A, B]);
  await log.close();
});

test('appends called before close are written; close waits for them', async () => {
  const db = new MemoryLevel();
  const backend = levelBackend(db, { codec: honchoCodec });
  const log = await backend.open();
  const pending = [log.append([A]), log.append([B])];
  await log.close();
  await rejects(log.append([C]), 'LEDGER_CLOSED');
  assert.equal(await Promise.all(pending), [
    { from: 0, head: 1 },
    { from: 1, head: 2 },
  ]);
  const again = await backend.open({ readOnly: true });
  assert.equal(await all(again), [A, B]);
  await again.close();
});

// -- one writer -------------------------------------------------------------------------------

/** Starts the holder in `mode` and gives it with its first line on stdout. */
async function startHolder(
  args: string[],
): Promise<{ child: ChildProcessByStdio<null, Readable, null>; exited: Promise<void>; lines: AsyncIterator<string> }> {
  const child = spawn(process.execPath, [HOLDER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout.setEncoding('utf8');
  async function* lines(): AsyncGenerator<string> {
    let buffered = '';
    for await (const chunk of child.stdout as AsyncIterable<string>) {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        yield buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
      }
    }
  }
  return { child, exited, lines: lines() };
}

test('another process holding the folder refuses every open at once; once it is killed the next open succeeds at once', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A]);
    const { child, exited, lines } = await startHolder(['hold', folder]);
    try {
      assert.equal(await lines.next(), { value: 'ready 1', done: false });
      const locked = await rejects(Ledger.open(backendAt(folder)), 'LEDGER_LOCKED');
      assert.ok(locked.message.startsWith(`${folder}: the LevelDB ledger is open elsewhere`), locked.message);
      // LevelDB locks the folder for readers too
      await rejects(Ledger.open(backendAt(folder), { readOnly: true }), 'LEDGER_LOCKED');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const ledger = await Ledger.open(backendAt(folder));
    await ledger.append(B);
    await ledger.close();
    const log = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(log), [A, B]);
    await log.close();
  });
});

test('a process killed while appending leaves whole batches', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const size = 700;
    const { child, exited, lines } = await startHolder(['append', folder, String(size)]);
    let acknowledged = 0;
    try {
      for (let n = 0; n < 5; n++) {
        const { value, done } = await lines.next();
        assert.not.ok(done, 'the appender stopped');
        acknowledged = Number(/^appended (\d+)$/.exec(value as string)?.[1]);
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const log = await backendAt(folder).open();
    assert.ok(log.head >= acknowledged, `head ${log.head}, acknowledged ${acknowledged}`);
    assert.is(log.head % size, 0, `head ${log.head} is not a whole number of batches`);
    const records = await all(log);
    assert.is(records.length, log.head);
    assert.equal(
      records.at(-1),
      decided(edit(`batch-${log.head / size - 1}`, size - 1), skip('x'.repeat((size - 1) % 200))),
    );
    await log.close();
  });
});

test('records another process appends between the look at the folder and LevelDB’s lock are read through, never overwritten', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    // The window widened: the open reads the folder's files under its own lock, lets it go, then
    // LevelDB takes its lock; here another process opens, appends 3 records and closes in between.
    const original = ClassicLevel.prototype.open;
    let overtaken = false;
    ClassicLevel.prototype.open = function (this: ClassicLevel<Uint8Array, Uint8Array>, ...args: unknown[]) {
      if (!overtaken) {
        overtaken = true;
        assert.is(execFileSync(process.execPath, [HOLDER, 'once', folder, '3'], { encoding: 'utf8' }), 'appended 5\n');
      }
      return Reflect.apply(original, this, args);
    } as typeof original;
    let log: Awaited<ReturnType<ReturnType<typeof backendAt>['open']>>;
    try {
      log = await backendAt(folder).open();
    } finally {
      ClassicLevel.prototype.open = original;
    }
    assert.ok(overtaken, 'the other process did not run');
    assert.is(log.head, 5, 'the records the other process acknowledged are part of the log');
    await log.append([C]);
    await log.close();
    const reread = await backendAt(folder).open({ readOnly: true });
    const once = (n: number): Record => decided(edit('once', n));
    assert.equal(await all(reread), [A, B, once(2), once(3), once(4), C]);
    await reread.close();
  });
});

// -- damage -----------------------------------------------------------------------------------

/** Opens the log at `folder` every way, each refused as damage at `line`; the folder is unchanged. */
async function damaged(folder: string, line: number, why: string | RegExp): Promise<void> {
  const before = await dump(folder);
  for (const readOnly of [false, true]) {
    const e = await rejects(Ledger.open(backendAt(folder), { readOnly }), 'LEDGER_DAMAGED');
    assert.instance(e, DamagedError);
    assert.is((e as DamagedError).line, line);
    assert.ok(e.message.startsWith(`${folder}:${line}: `), e.message);
    assert.ok(e.message.endsWith('; see docs/runbook.md#honcho-ledger-damaged'), e.message);
    if (typeof why === 'string') assert.is((e as DamagedError).why, why);
    else assert.match((e as DamagedError).why, why);
  }
  assert.equal(await dump(folder), before);
}

test('a value that is not CBOR is damage at its record', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B, C]);
    await putRecord(folder, 1, Uint8Array.of(0xa4, 0x64, 0x74));
    await damaged(folder, 2, /^the value is not CBOR \(.+\): a46474$/);
    // an open with no replay (one that only wants the head) reads every record through too
    await rejects(backendAt(folder).open({ readOnly: true }), 'LEDGER_DAMAGED', /:2: the value is not CBOR/);
  });
});

test('a value that is CBOR but not a record is damage at its record', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B, C]);
    await putRecord(folder, 2, cborEncode({ ...C, ids: 'msg-a1' }));
    await damaged(folder, 3, 'not a valid record: the record\'s ids must be an array of strings, not "msg-a1"');
  });
});

test('a value whose text is not UTF-8 is damage, not a record with U+FFFD in it', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    // B's `why`, "nothing new", with its "w" made a lone continuation byte (0x80)
    const value = Buffer.from(cborEncode(B));
    const at = value.indexOf('nothing new') + 'nothing ne'.length;
    value[at] = 0x80;
    await putRecord(folder, 1, value);
    await damaged(folder, 2, `the value has text that is not UTF-8: ${hex(value.subarray(0, 32))}`);
  });
});

test('a record in any standard CBOR form another writer might use reads as the same record', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, WIDE, B]);
    // WIDE as an indefinite-length map (text in indefinite-length chunks would be CBOR too, but
    // cbor-x does not read it), and the turn of A as a 64-bit integer: CBOR, if not the shortest
    const text = (s: string): string => {
      const bytes = Buffer.from(s, 'utf8');
      return (
        (bytes.length < 24 ? (0x60 + bytes.length).toString(16) : `78${bytes.length.toString(16).padStart(2, '0')}`) +
        bytes.toString('hex')
      );
    };
    const wide =
      'bf' +
      text('type') +
      text('decided') +
      text('time') +
      text(WIDE.time) +
      text('item') +
      'a3' +
      text('type') +
      text('edit') +
      text('id') +
      text('2026-09-28-0001') +
      text('part') +
      '00' +
      text('action') +
      'a2' +
      text('type') +
      text('skip') +
      text('why') +
      text('café 中文 😀') +
      'ff';
    await putRecord(folder, 1, Buffer.from(wide, 'hex'));
    const longTurn = Buffer.from(cborEncode(A))
      .toString('hex')
      .replace(text('turn') + '01', text('turn') + '1b0000000000000001');
    await putRecord(folder, 0, Buffer.from(longTurn, 'hex'));
    const log = await backendAt(folder).open({ readOnly: true });
    assert.equal((await all(log)).map(encodeRecord), [A, WIDE, B].map(encodeRecord));
    await log.close();
  });
});

test('a record that breaks the rules is damage at its record, where the ledger replays it', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B, C]);
    await putRecord(folder, 1, cborEncode(A));
    await damaged(folder, 2, 'turn 1 of session chat-1: decided already');
    // the log alone reads it: the rules are the ledger's
    const log = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(log), [A, A, C]);
    await log.close();
  });
});

test('a missing record is damage', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B, C, WIDE]);
    await tamper(folder, (db) => db.del(recordKey(1), VIEW));
    await damaged(folder, 2, 'record 2 is missing: the next record is 3');
  });
});

test('a record deleted under an open log is damage when read', async () => {
  const db = new MemoryLevel();
  const log = await levelBackend(db, { codec: honchoCodec, name: 'mem' }).open();
  await log.append([A, B, C]);
  await db.del(recordKey(2), VIEW);
  await rejects(
    all(log),
    'LEDGER_DAMAGED',
    'mem:3: record 3 is missing: the records end before the head, 3; see docs/runbook.md#honcho-ledger-damaged',
  );
  await db.del(recordKey(0), VIEW);
  await rejects(
    all(log),
    'LEDGER_DAMAGED',
    'mem:1: record 1 is missing: the next record is 2; see docs/runbook.md#honcho-ledger-damaged',
  );
  await log.close();
});

test("a key in the records' space that is not a record's is damage", async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    const stray = Buffer.concat([recordKey(0), Buffer.from('x')]);
    await tamper(folder, (db) => db.put(stray, cborEncode(B), VIEW));
    await damaged(folder, 2, `where record 2 should be is the key ${hex(stray)}, which is not a record's`);
  });
});

test('a log of another format version, or records without the marker, is refused as damage at record 0', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A]);
    await tamper(folder, (db) => db.put(metaKey(), cborEncode({ format: 'ledgerstore/level', version: 3 }), VIEW));
    await damaged(
      folder,
      0,
      'the log is in version 3 of the format, which this ledgerstore does not read (it reads versions 1 and 2)',
    );
    await tamper(folder, (db) => db.del(metaKey(), VIEW));
    await damaged(folder, 0, 'there are records but no format marker: not a log that ledgerstore wrote');
  });
});

test("keys outside the log's spaces are left alone", async () => {
  const db = new MemoryLevel();
  await db.put('!other!key', 'value');
  await db.sublevel('read-model').put('x', 'y');
  const backend = levelBackend(db, { codec: honchoCodec });
  const log = await backend.open();
  await log.append([A, B]);
  await log.close();
  const again = await backend.open();
  assert.equal(await all(again), [A, B]);
  await again.close();
  assert.is(await db.get('!other!key'), 'value');
  assert.is(await db.sublevel('read-model').get('x'), 'y');
});

// -- the folder -------------------------------------------------------------------------------

test('a read-only open of a missing folder is an empty log and creates nothing', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const log = await backendAt(folder).open({ readOnly: true });
    assert.is(log.head, 0);
    assert.equal(await all(log), []);
    await rejects(log.append([A]), 'LEDGER_READ_ONLY');
    await log.close();
    assert.not.ok(existsSync(folder));
  });
});

test('a writable open creates the folder, but not its parent; a file in its place is refused', async () => {
  await withHome(async (home) => {
    const nested = join(home.dir, 'missing', 'honcho.level');
    await rejects(backendAt(nested).open(), 'LEDGER_IO', `${nested}: no such file or directory (ENOENT)`);
    assert.not.ok(existsSync(join(home.dir, 'missing')));
    const file = join(home.dir, 'a-file');
    writeFileSync(file, 'not a folder');
    for (const readOnly of [false, true])
      await rejects(backendAt(file).open({ readOnly }), 'LEDGER_IO', `${file}: not a directory (ENOTDIR)`);
    const folder = folderOf(home);
    const log = await backendAt(folder).open();
    assert.is(log.head, 0);
    await log.close();
    assert.ok(existsSync(join(folder, 'CURRENT')));
  });
});

test('a read in progress when the log is closed ends with LEDGER_CLOSED', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const many = Array.from({ length: 5000 }, (_, n) => decided(edit(`e${n >> 4}`, n & 15), skip()));
    const log = await backendAt(folder).open();
    await log.append(many);
    let seen = 0;
    const reading = (async () => {
      for await (const record of log.read()) {
        assert.equal(record, many[seen]);
        if (++seen === 1) await log.close();
      }
    })();
    await rejects(reading, 'LEDGER_CLOSED');
    assert.ok(seen < many.length);
  });
});

// -- a folder: looked at before LevelDB opens it ----------------------------------------------

/** `n` appends of `size` records each, in one open: so many synced batches in the write-ahead log. */
async function appendBatches(folder: string, n: number, size: number, first = 0): Promise<Record[]> {
  const log = await backendAt(folder).open();
  const records: Record[] = [];
  for (let b = first; b < first + n; b++) {
    const batch = Array.from({ length: size }, (_, part) =>
      decided(edit(`batch-${b}`, part), skip(`why ${b}.${part}`)),
    );
    await log.append(batch);
    records.push(...batch);
  }
  await log.close();
  return records;
}

/** Opens the log at `folder` for writing and to read: each refused with LEDGER_DAMAGED saying `message`; nothing in the folder changed. */
async function refusedAsDamaged(folder: string, message: string | RegExp): Promise<void> {
  const before = filesOf(folder);
  for (const readOnly of [false, true]) {
    const e = await rejects(Ledger.open(backendAt(folder), { readOnly }), 'LEDGER_DAMAGED', message);
    assert.instance(e, LevelFolderDamagedError);
    assert.ok(
      e.message.endsWith('; the folder was left as it is; see docs/runbook.md#level-folder-damaged'),
      e.message,
    );
  }
  assert.equal(filesOf(folder), before, 'the folder was changed');
}

test('a folder that lost its CURRENT is refused as damage and left exactly as it is; CURRENT put back, every record is there', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const records = [...(await appendBatches(folder, 3, 500)), ...(await appendBatches(folder, 3, 500, 3))];
    const current = readFileSync(join(folder, 'CURRENT'));
    rmSync(join(folder, 'CURRENT'));
    await refusedAsDamaged(
      folder,
      new RegExp(
        `^${folder}/CURRENT: the folder holds LevelDB files \\(.+\\) but no CURRENT, which names the database's manifest: it was deleted or never written;`,
      ),
    );
    writeFileSync(join(folder, 'CURRENT'), current);
    const log = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(log), records);
    await log.close();
  });
});

test("a folder with files that are not LevelDB's is refused, not taken over: nothing renamed, nothing deleted", async () => {
  await withHome(async (home) => {
    // memoryd's memory/ folder, with files that happen to have LevelDB's names among its own
    writeFileSync(home.path, `${encodeRecord(A)}\n`);
    writeFileSync(join(home.dir, 'LOG'), 'a log of something else\n');
    writeFileSync(join(home.dir, '000005.log'), 'not a write-ahead log');
    const before = filesOf(home.dir);
    for (const readOnly of [false, true]) {
      const e = await rejects(backendAt(home.dir).open({ readOnly }), 'LEDGER_BAD_TARGET');
      assert.instance(e, ForeignFolderError);
      assert.match(
        e.message,
        new RegExp(
          `^${home.dir}: it holds files that are not a LevelDB database's \\(honcho\\.jsonl\\); .*nothing was changed; see docs/runbook.md#level-folder-damaged$`,
        ),
      );
    }
    assert.equal(filesOf(home.dir), before);
  });
});

test('a folder an open that died while creating the database left is created in; read, it is an empty log and stays as it is', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    mkdirSync(folder);
    // what LevelDB writes before CURRENT when it creates a database
    writeFileSync(join(folder, 'LOCK'), '');
    writeFileSync(join(folder, 'LOG'), '');
    writeFileSync(join(folder, 'MANIFEST-000001'), Buffer.alloc(20));
    const before = filesOf(folder);
    const reader = await backendAt(folder).open({ readOnly: true });
    assert.is(reader.head, 0);
    await reader.close();
    assert.equal(filesOf(folder), before);
    const log = await backendAt(folder).open();
    await log.append([A]);
    await log.close();
    const again = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(again), [A]);
    await again.close();
  });
});

test('one changed byte in a value is damage at its record, not a different record', async () => {
  const db = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  const backend = levelBackend(db, { codec: honchoCodec, name: 'mem' });
  const log = await backend.open();
  await log.append([A, B, C]);
  await log.close();
  const value = Buffer.from((await db.get(recordKey(1), VIEW)) as Uint8Array);
  // "nothing new" becomes "nothing nex": still CBOR, still a record
  value[value.indexOf('nothing new') + 10] = 0x78;
  await db.put(recordKey(1), value, VIEW);
  await rejects(
    backend.open({ readOnly: true }),
    'LEDGER_DAMAGED',
    /^mem:2: the value does not match its checksum: its bytes were changed/,
  );
  // a value moved under another key is damage too: its checksum covers its key
  await db.put(recordKey(1), (await db.get(recordKey(0), VIEW)) as Uint8Array, VIEW);
  await rejects(backend.open({ readOnly: true }), 'LEDGER_DAMAGED', /^mem:2: the value does not match its checksum/);
});

test('a byte changed in a table is refused as damage naming the table, before LevelDB reads it', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await appendBatches(folder, 1, 2000);
    await appendBatches(folder, 1, 10, 1); // the reopen folds the first open's log into a table
    const table = readdirSync(folder).find((name) => name.endsWith('.ldb')) as string;
    assert.ok(table !== undefined, 'a table');
    const bytes = readFileSync(join(folder, table));
    flipBits(bytes, Math.floor(bytes.length / 3), 0x01);
    writeFileSync(join(folder, table), bytes);
    await refusedAsDamaged(
      folder,
      new RegExp(
        `^${folder}/${table}: the table ${table} is damaged: the block at byte \\d+ does not match its checksum;`,
      ),
    );
  });
});

test('a byte flipped in the write-ahead log, which would drop the acknowledged batches after it, is refused', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await appendBatches(folder, 20, 10); // 20 synced batches, all in the first block of the log
    const wal = readdirSync(folder).find((name) => name.endsWith('.log')) as string;
    const bytes = readFileSync(join(folder, wal));
    flipBits(bytes, bytes.indexOf('why 4.3'), 0x01);
    writeFileSync(join(folder, wal), bytes);
    await refusedAsDamaged(
      folder,
      new RegExp(
        `^${folder}/${wal}: the write-ahead log ${wal} has bytes that do not read at byte \\d+ \\(a record whose checksum does not match\\) with writes after them, which LevelDB would drop;`,
      ),
    );
  });
});

test('acknowledged records lost at the end are refused once a writer closed the log: the last batch changed, or the write-ahead log deleted', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await appendBatches(folder, 20, 10);
    const wal = readdirSync(folder).find((name) => name.endsWith('.log')) as string;
    const bytes = readFileSync(join(folder, wal));
    // the last batch reads as one a crash cut short: only the marker's head says it was acknowledged
    flipBits(bytes, bytes.lastIndexOf('why 19.3'), 0x01);
    writeFileSync(join(folder, wal), bytes);
    await rejects(
      Ledger.open(backendAt(folder), { readOnly: true }),
      'LEDGER_DAMAGED',
      `${folder}: acknowledged records are missing: the log held 200 records when a writer last closed it, and it holds 190; the folder was left as it is; see docs/runbook.md#level-folder-damaged`,
    );
    rmSync(join(folder, wal));
    await refusedAsDamaged(
      folder,
      `${folder}/${wal}: the write-ahead log ${wal} that the manifest names is missing: the writes in it since the last table are lost; the folder was left as it is; see docs/runbook.md#level-folder-damaged`,
    );
  });
});

test('a read-only open changes nothing in the folder: no file written, renamed or deleted, and its copy is removed at close', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await appendBatches(folder, 2, 1000);
    await appendBatches(folder, 1, 2000, 2);
    await appendBatches(folder, 5, 10, 10); // in the write-ahead log, which LevelDB's open would fold into a table
    const before = filesOf(folder);
    const snapshots = (): string[] =>
      readdirSync(tmpdir()).filter((name) => name.startsWith(`ledgerstore-snapshot-${process.pid}-`));
    const ledger = await Ledger.open(backendAt(folder), { readOnly: true });
    assert.is(ledger.size, 4050);
    assert.is(snapshots().length, 1, 'the copy it reads');
    assert.is((await collect(ledger.records())).length, 4050);
    await ledger.close();
    assert.equal(snapshots(), [], 'the copy is removed');
    assert.equal(filesOf(folder), before);
  });
});

test('a log of version 1 (no checksums) is read, refused for appends with the way to migrate, and copied into version 2', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    // as ledgerstore 0.1 wrote it: no marker file, a version 1 marker, values without checksums
    await tamper(
      folder,
      async (db) => {
        await db.put(metaKey(), cborEncode({ format: 'ledgerstore/level', version: 1 }), VIEW);
        for (const [n, record] of [A, B, C].entries()) await db.put(recordKey(n), cborEncode(record), VIEW);
      },
      true,
    );
    const reader = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(reader), [A, B, C]);
    await reader.close();
    const before = filesOf(folder);
    const e = await rejects(backendAt(folder).open(), 'LEDGER_OLD_FORMAT');
    assert.instance(e, OldFormatError);
    assert.match(
      e.message,
      new RegExp(
        `^${folder}: the LevelDB ledger is in version 1 of the format, which this ledgerstore reads but does not append to \\(it writes version 2\\); copy it to a new folder \\(ledgerstore copy level:${folder} level:<new folder>\\)`,
      ),
    );
    assert.equal(filesOf(folder), before);
    const copy = join(home.dir, 'copy.level');
    await copyLedger(backendAt(folder), backendAt(copy));
    const entries = await dump(copy);
    assert.equal(cbor.decode(Buffer.from((entries[0] as [string, string])[1], 'hex')), {
      format: 'ledgerstore/level',
      version: 2,
    });
    assert.equal(
      entries.slice(1).map(([, value], n) => cbor.decode(bodyOf(value, n))),
      [A, B, C],
    );
  });
});

// -- LevelDB's own files ------------------------------------------------------------------------

test("CRC-32C gives LevelDB's own test vectors", () => {
  assert.is(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.is(crc32c(Buffer.alloc(32)), 0x8a9136aa);
  assert.is(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
  assert.is(crc32c(Buffer.from(Array.from({ length: 32 }, (_, n) => n))), 0x46dd794e);
  assert.is(crc32c(Buffer.from(Array.from({ length: 32 }, (_, n) => 31 - n))), 0x113fdb5c);
  assert.is(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234'))), 0xe3069283, 'continued');
});

// -- a database the caller made ---------------------------------------------------------------

test('a memory-level database: one writer per database, readers beside it, reopened as the same log, never closed by the log', async () => {
  const db = new MemoryLevel();
  const backend = levelBackend(db, { codec: honchoCodec, name: 'mem' });
  assert.equal(backend.capabilities, {
    durable: false,
    files: false,
    severalWriters: false,
    readsWhileWriting: true,
    atomicBatches: true,
    watches: false,
  });
  const writer = await backend.open();
  await writer.append([A]);
  await rejects(backend.open(), 'LEDGER_LOCKED', /^mem: the ledger is open for writing elsewhere/);
  // another backend object on the same database is the same log, and the same lock
  await rejects(levelBackend(db, { codec: honchoCodec }).open(), 'LEDGER_LOCKED');
  const reader = await backend.open({ readOnly: true });
  await writer.append([B]);
  assert.is(reader.head, 1);
  assert.equal(await all(reader), [A]);
  await reader.close();
  await writer.close();
  assert.is(db.status, 'open');
  const again = await backend.open();
  assert.equal(await all(again), [A, B]);
  await again.close();
  // closed by its owner, the database is opened again by the next open
  await db.close();
  const reopened = await backend.open({ readOnly: true });
  assert.is(reopened.head, 2);
  await reopened.close();
});

test('a database its owner closes under an open log refuses appends and reads; they go on once it is open again', async () => {
  const db = new MemoryLevel();
  const log = await levelBackend(db, { codec: honchoCodec, name: 'mem' }).open();
  await log.append([A]);
  await db.close();
  // refused before anything was written: not a failed write, so the log does not stop
  await rejects(log.append([B]), 'LEDGER_IO', /^mem: Database is not open \(LEVEL_DATABASE_NOT_OPEN\)$/);
  await rejects(all(log), 'LEDGER_IO');
  await db.open();
  assert.equal(await log.append([B]), { from: 1, head: 2 });
  assert.equal(await all(log), [A, B]);
  await log.close();
});

test('a database that stores text only is refused when the backend is made', () => {
  assert.throws(
    () => levelBackend(new MemoryLevel({ storeEncoding: 'utf8' }), { codec: honchoCodec }),
    /stores text only/,
  );
});

test('the capabilities say what the backend can do', () => {
  assert.equal(backendAt('x').capabilities, {
    durable: true,
    files: true,
    severalWriters: false,
    readsWhileWriting: false,
    atomicBatches: true,
    watches: false,
  });
  assert.is(backendAt('x').name, 'x');
  assert.is(levelBackend('x', { codec: honchoCodec, name: 'named' }).name, 'named');
});

// -- the Honcho ledger ------------------------------------------------------------------------

test('the Honcho ledger on LevelDB: rules, queries and a reopen, answering as on JSONL', async () => {
  await withHome(async (home) => {
    const records = [
      decided(turn('chat-1', 1)),
      decided(turn('chat-1', 2), conclude('trusted', 'likes tea')),
      decided(edit('2026-09-28-0001', 0), skip('nothing to send')),
      sent(turn('chat-1', 1), ['msg-1']),
      sent(turn('chat-1', 2), ['c-1']),
      decided(turn('chat-1', 3), unconclude('trusted', 'likes tea')),
      failed(turn('chat-1', 3), 503, 'unavailable'),
      decided(turn('chat-1', 4), conclude('trusted', 'likes tea')),
    ];
    const level = await Ledger.open(backendAt(folderOf(home)));
    const jsonl = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec }));
    for (const record of records) {
      await level.append(record);
      await jsonl.append(record);
    }
    await rejects(level.append(decided(turn('chat-1', 1))), 'LEDGER_ALREADY_DECIDED');
    await rejects(level.append(sent(turn('chat-1', 9))), 'LEDGER_NOT_WAITING');
    const answers = async (ledger: Ledger): Promise<unknown> => ({
      size: ledger.size,
      counts: await ledger.counts(),
      outbox: await ledger.outbox(),
      decisions: await collect(ledger.decisions()),
      sentIds: await Promise.all(records.map((r) => ledger.sentIds(r.item))),
      conclusion: await ledger.conclusion('trusted', 'likes tea'),
    });
    const expected = await answers(jsonl);
    assert.equal(await answers(level), expected);
    await level.close();
    await jsonl.close();
    const again = await Ledger.open(backendAt(folderOf(home)), { readOnly: true });
    assert.equal(await answers(again), expected);
    const read: string[] = [];
    for await (const record of again.records()) read.push(`${encodeRecord(record)}\n`);
    assert.is(read.join(''), readFileSync(home.path, 'utf8'));
    await again.close();
  });
});

test.run();
