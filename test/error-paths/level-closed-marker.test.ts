/**
 * What a LevelDB folder's marker file says of the log when its writer last closed it, checked at
 * the next open, in the cases the other tests do not reach: a folder whose database is gone, one
 * whose records are gone or whose last record was replaced, a marker that says the log was closed
 * empty, a database that holds another program's keys after the records; and the marker that a
 * close cannot write. Beside them, what the open of a folder without a marker, of a version 1 log
 * in a database the caller made, or of no database at all from a resume point says. Each checks
 * what the caller is told and that the folder is left as it was (or, after a failed close, that
 * the records are kept).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode as cborEncode } from 'cbor-x';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../../backends/level/index.js';
import { encodeRecord } from '../../backends/level/values.js';
import { writeMarker } from '../../lib/database-folder.js';
import { honchoCodec, LedgerIoError } from '../../lib/index.js';
import { MARKER } from '../../lib/leveldb/marker.js';
import { all, decided, rejects, sent, skip, turn, withHome } from '../support/ledger.js';
import {
  backendAt,
  dump,
  filesOf,
  folderOf,
  metaKey,
  putRecord,
  recordKey,
  tamper,
  VIEW,
  write,
} from '../support/level-db.js';

const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = sent(turn('chat-1', 1), ['msg-a1']);

/** Removes the database from a folder, keeping its marker file. */
function removeDatabase(folder: string): void {
  for (const name of readdirSync(folder)) if (name !== MARKER) rmSync(join(folder, name));
}

/** Both opens, the writer's and a reader's, refuse the folder with `message`, and change nothing in it. */
async function refusedAsDamaged(folder: string, message: RegExp): Promise<void> {
  const before = filesOf(folder);
  await rejects(backendAt(folder).open(), 'LEDGER_DAMAGED', message);
  await rejects(backendAt(folder).open({ readOnly: true }), 'LEDGER_DAMAGED', message);
  assert.equal(filesOf(folder), before);
}

test('a marker closed at 2 records over a folder whose database is gone: damaged, not a new log', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    removeDatabase(folder);
    await refusedAsDamaged(
      folder,
      /^.*honcho\.level: the log held 2 records when a writer last closed it, and the folder holds no database now; the folder was left as it is/,
    );
  });
});

test('a marker closed at 2 records over a database with none (an empty one put in its place): acknowledged records are missing', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    removeDatabase(folder);
    await tamper(folder, async () => undefined, true);
    await refusedAsDamaged(
      folder,
      /: acknowledged records are missing: the log held 2 records when a writer last closed it, and it holds 0;/,
    );
  });
});

test('a last record replaced by another writer of the format: damaged when the records are read through', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    await putRecord(folder, 1, encodeRecord(C));
    const replaced =
      /: record 2 is not the one the log held when a writer last closed it: the records were changed or replaced;/;
    const before = filesOf(folder);
    await rejects(backendAt(folder).open({ readOnly: true }), 'LEDGER_DAMAGED', replaced);
    assert.equal(filesOf(folder), before, 'a reader reads a copy');
    // Found only once LevelDB has the database open (the value must be read), so the writer's
    // open leaves LevelDB's own housekeeping behind; the records stay as they are.
    await rejects(backendAt(folder).open(), 'LEDGER_DAMAGED', replaced);
    assert.equal((await dump(folder)).length, 3, 'the marker and both records');
  });
});

test('a database that also holds another program’s keys after the records opens, and its records are checked as read', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A, B]);
    // A sublevel's key sorts after the records'; opened twice, the write-ahead log becomes a table
    // whose largest key then says nothing of the records.
    await tamper(folder, (db) => db.put(Uint8Array.from(Buffer.from('!other!key')), Uint8Array.of(1), VIEW));
    await tamper(folder, async () => undefined);
    const log = await backendAt(folder).open();
    assert.equal(await all(log), [A, B]);
    await log.append([C]);
    await log.close();
    const reader = await backendAt(folder).open({ readOnly: true });
    assert.equal(await all(reader), [A, B, C]);
    await reader.close();
  });
});

test('a marker that says the log was closed empty holds nothing to check: the records after it are read', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A]);
    writeMarker(folder, { format: 'ledgerstore/level', version: 2, head: 0, fingerprint: '' });
    const log = await backendAt(folder).open();
    assert.equal(await all(log), [A]);
    await log.close();
  });
});

test('a close that cannot write the marker (a folder in the way of its temporary file) says so; the records are kept', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const log = await backendAt(folder).open();
    await log.append([A, B]);
    const obstacle = join(folder, `${MARKER}.tmp-${process.pid}`);
    mkdirSync(obstacle);
    writeFileSync(join(obstacle, 'kept'), '');
    const caught = await rejects(log.close(), 'LEDGER_IO');
    assert.instance(caught, LedgerIoError);
    assert.is((caught as LedgerIoError).path, join(folder, MARKER));
    assert.is((caught as LedgerIoError).errno, 'EISDIR');
    rmSync(obstacle, { recursive: true });
    const again = await backendAt(folder).open();
    assert.equal(await all(again), [A, B], 'the records were durable before the marker');
    await again.close();
  });
});

test('a folder without a marker whose database holds keys that are not a ledger’s is refused as not one, unchanged', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await tamper(folder, (db) => db.put(Uint8Array.from(Buffer.from('user:1')), Uint8Array.of(1), VIEW), true);
    const before = filesOf(folder);
    await rejects(backendAt(folder).open(), 'LEDGER_BAD_TARGET', /whose keys are not a ledger's/);
    assert.equal(filesOf(folder), before);
  });
});

test('a version 1 log in a database the caller made is read, and refused for appends', async () => {
  const db = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  await db.put(metaKey(), cborEncode({ format: 'ledgerstore/level', version: 1 }), VIEW);
  await db.put(recordKey(0), encodeRecord(A), VIEW);
  const backend = levelBackend(db, { codec: honchoCodec, name: 'store' });
  const reader = await backend.open({ readOnly: true });
  assert.equal(await all(reader), [A]);
  await reader.close();
  const refused = await rejects(backend.open(), 'LEDGER_OLD_FORMAT');
  assert.match(refused.message, /^store: the LevelDB ledger is in version 1 of the format/);
  await db.close();
});

test('a reader of a folder with no database, asked to resume after a record: it holds none', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    const caught = await rejects(
      backendAt(folder).open({ readOnly: true, resume: { position: 1, cursor: null, fingerprint: 'f' } }),
      'LEDGER_RESUME_MISMATCH',
    );
    assert.is(caught.message, `${folder}: cannot resume at record 1: the log holds no record 1`);
    assert.equal(readdirSync(home.dir), [], 'nothing is made');
  });
});

test('a version 2 value without its checksum is damage at its record', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, [A]);
    await tamper(folder, (db) => db.put(recordKey(1), encodeRecord(B), VIEW));
    await rejects(
      backendAt(folder).open({ readOnly: true }),
      'LEDGER_DAMAGED',
      /honcho\.level:2: the value does not end with its checksum: /,
    );
  });
});

test.run();
