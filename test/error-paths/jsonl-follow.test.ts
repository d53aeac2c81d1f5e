/**
 * A reader following a JSONL file (backends/jsonl-follow.ts) when the file fails it: a line longer
 * than a line may hold appended, the file replaced or removed (while followed, or between the open
 * and the watch's start), a path the system cannot look at (a symbolic link loop), and a folder
 * that is not there yet when the watch starts. All real faults, made on the file system as another
 * process or an operator would make them; and a reader's catch-up (`refresh`) before the file
 * exists and when its sync fails (injected: only a failing disk makes it; and a follower ledger
 * above it, which that failure stops). Each checks what the watch's `onFailure` and `refresh`
 * tell (code and message), that the reader's head stayed where it was, and what is left on disk.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type EventLog,
  encodeRecord,
  honchoCodec,
  jsonlBackend,
  Ledger,
  type LedgerError,
  MAX_LINE_BYTES,
  type Record,
} from '../../lib/index.js';
import { code, until } from '../conformance/common.js';
import { InjectingIO } from '../support/injecting-io.js';
import { decided, rejects, skip, turn, withHome } from '../support/ledger.js';

const line = (record: Record): string => `${encodeRecord(record)}\n`;
const A = decided(turn('chat-1', 1));
const B = decided(turn('chat-1', 2), skip('nothing new'));
const C = decided(turn('chat-1', 3));

/** A reader of the file at `path` (through `io`), looking at it every 10 ms besides what the system tells. */
const reader = (path: string, io?: InjectingIO) =>
  jsonlBackend<Record>(path, { codec: honchoCodec, heartbeatMs: 10, ...(io === undefined ? {} : { io }) }).open({
    readOnly: true,
  });

/** A watch of `log`: the heads it told of, and the failure it ended with. */
interface Watched {
  readonly heads: number[];
  failure: LedgerError | null;
  readonly unwatch: () => Promise<void>;
}

async function watched(log: EventLog<Record>): Promise<Watched> {
  const heads: number[] = [];
  const told: { failure: LedgerError | null } = { failure: null };
  const unwatch = await (log.watch as NonNullable<EventLog<Record>['watch']>)({
    onHead: (head) => heads.push(head),
    onFailure: (e) => {
      told.failure = e;
    },
  });
  return {
    heads,
    get failure() {
      return told.failure;
    },
    unwatch,
  };
}

/** Waits for the watch to fail; gives its failure, checked to be of `code` with `message`. */
async function failedWith(watch: Watched, code: string, message: string): Promise<LedgerError> {
  await until(() => watch.failure !== null, 'the watch to fail');
  const failure = watch.failure as LedgerError;
  assert.is(failure.code, code);
  assert.is(failure.message, message);
  return failure;
}

const replacedMessage = (path: string, how: 'replaced' | 'removed'): string =>
  `${path}: the file this reader follows is no longer at the path (${how === 'replaced' ? 'another file was put there: sed -i, an editor, mv' : 'it was removed, or moved away'}); nothing more is taken in until the ledger is reopened, which reads the file at the path`;

test('a line longer than a line may hold, appended while a reader follows: damage at its line, for the watch and for refresh', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A) + line(B));
    const log = await reader(home.path);
    const watch = await watched(log);
    await until(() => watch.heads.length > 0, 'the head at the start');
    const long = MAX_LINE_BYTES + 1;
    appendFileSync(home.path, Buffer.concat([Buffer.alloc(long, 0x7b), Buffer.from('\n')]));
    const message = `${home.path}:3: the line is ${long} bytes long, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold; no ledgerstore writes such a line, and none reads one; see docs/runbook.md#honcho-ledger-damaged`;
    await failedWith(watch, 'LEDGER_DAMAGED', message);
    assert.equal(watch.heads, [2], 'no head past the line was told');
    await rejects(log.refresh(), 'LEDGER_DAMAGED', message);
    assert.is(log.head, 2);
    await log.close();
    assert.is(readFileSync(home.path).length, line(A).length + line(B).length + long + 1, 'the file is left as it was');
  });
});

test('a file replaced or removed while a reader follows it: the watch ends, and refresh says so, taking nothing in', async () => {
  for (const how of ['replaced', 'removed'] as const) {
    await withHome(async (home) => {
      writeFileSync(home.path, line(A) + line(B));
      const log = await reader(home.path);
      const watch = await watched(log);
      await until(() => watch.heads.length > 0, 'the head at the start');
      const put = join(home.dir, 'edited.jsonl');
      if (how === 'replaced') {
        // as `sed -i` does: a new file, renamed over the old one
        writeFileSync(put, line(A) + line(B) + line(C));
        renameSync(put, home.path);
      } else rmSync(home.path);
      await failedWith(watch, 'LEDGER_STOPPED', replacedMessage(home.path, how));
      await rejects(log.refresh(), 'LEDGER_STOPPED', replacedMessage(home.path, how));
      assert.is(log.head, 2, 'nothing of the new file was taken in');
      assert.equal(watch.heads, [2]);
      await log.close();
      if (how === 'replaced') assert.is(readFileSync(home.path, 'utf8'), line(A) + line(B) + line(C));
    });
  }
});

test('a file replaced or removed between a reader’s open and its watch: the watch fails as it starts', async () => {
  for (const how of ['replaced', 'removed'] as const) {
    await withHome(async (home) => {
      writeFileSync(home.path, line(A));
      const log = await reader(home.path);
      const put = join(home.dir, 'edited.jsonl');
      if (how === 'replaced') {
        writeFileSync(put, line(A) + line(B));
        renameSync(put, home.path);
      } else rmSync(home.path);
      const watch = await watched(log);
      await failedWith(watch, 'LEDGER_STOPPED', replacedMessage(home.path, how));
      assert.equal(watch.heads, [], 'no head of another file was told');
      assert.is(log.head, 1);
      await log.close();
    });
  }
});

test('a path the system cannot look at any more (a symbolic link loop put there): a read error, for the watch and for refresh', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A));
    const log = await reader(home.path);
    const watch = await watched(log);
    await until(() => watch.heads.length > 0, 'the head at the start');
    const loop = join(home.dir, 'loop');
    symlinkSync(home.path, loop);
    rmSync(home.path);
    symlinkSync(loop, home.path); // the path leads to a link that leads back to it
    const failure = await failedWith(watch, 'LEDGER_IO', `${home.path}: too many symbolic links encountered (ELOOP)`);
    assert.is(failure.runbook, 'ledger-unreadable');
    const refused = await rejects(log.refresh(), 'LEDGER_IO', failure.message);
    assert.is((refused as LedgerError).runbook, 'ledger-unreadable');
    assert.is(log.head, 1);
    await log.close();
  });
});

test('a watch that starts before the ledger’s folder exists: it looks on its own, and tells of the file once it is there', async () => {
  await withHome(async (home) => {
    const folder = join(home.dir, 'memory');
    const path = join(folder, 'honcho.jsonl');
    const log = await reader(path);
    assert.is(log.head, 0);
    const watch = await watched(log); // the system cannot watch a folder that is not there
    await until(() => watch.heads.length > 0, 'the head at the start');
    mkdirSync(folder);
    writeFileSync(path, line(A) + line(B));
    await until(() => watch.heads.at(-1) === 2, 'the head of the file once it is there');
    assert.equal(watch.heads, [0, 2]);
    assert.is(watch.failure, null);
    assert.is(await log.refresh(), 2);
    await watch.unwatch();
    await log.close();
  });
});

test('a reader’s refresh before the file exists gives 0, and takes the file in once it is there', async () => {
  await withHome(async (home) => {
    const log = await reader(home.path);
    assert.is(await log.refresh(), 0);
    writeFileSync(home.path, line(A));
    assert.is(await log.refresh(), 1);
    await log.close();
  });
});

test('a reader whose sync of new lines fails stops: it takes nothing in, and is never retried into success', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, line(A));
    const io = new InjectingIO();
    const log = await reader(home.path, io);
    appendFileSync(home.path, line(B));
    io.fail('datasync', 1, 'EIO');
    const message = `${home.path}: the sync of lines another writer appended failed (${home.path}: i/o error (EIO)); nothing more is taken in until the ledger is reopened, which reads the file again`;
    const refused = await rejects(log.refresh(), 'LEDGER_STOPPED', message);
    assert.is((refused as LedgerError).runbook, 'ledger-unreadable');
    assert.is(((refused as LedgerError).cause as LedgerError).code, 'LEDGER_IO', 'the system failure is its cause');
    const syncs = io.count('datasync');
    await rejects(log.refresh(), 'LEDGER_STOPPED', message);
    assert.is(io.count('datasync'), syncs, 'the failed sync is not tried again');
    assert.is(log.head, 1, 'the line whose sync failed was not taken in');
    await log.close();
    assert.equal(io.open.size, 0, 'no descriptor leaks');
    const reopened = await reader(home.path);
    assert.is(reopened.head, 2, 'a reopen reads the file again');
    await reopened.close();
  });
});

test('a follower whose sync of another writer’s lines fails stops the ledger: follow() ends with LEDGER_STOPPED, not retried forever', async () => {
  await withHome(async (home) => {
    const writer = await Ledger.open(home.path);
    await writer.append(A);
    const io = new InjectingIO();
    const follower = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, heartbeatMs: 10, io }), {
      readOnly: true,
    });
    let seen = 0;
    let ended: string | null = null;
    // its outcome taken at once: the follower may stop before the append that stops it returns
    void code(
      (async () => {
        for await (const _ of follower.follow(0)) seen++;
      })(),
    ).then((outcome) => {
      ended = outcome;
    });
    await until(() => seen === 1, 'the follower to see the first record');
    io.fail('datasync', 1, 'EIO', true);
    await writer.append(B);
    // a follower that takes the failure for a passing one tries again forever, and never ends
    await until(() => ended !== null, 'follow() to end');
    assert.is(ended, 'LEDGER_STOPPED');
    const stopped = await rejects(
      follower.catchUp(),
      'LEDGER_STOPPED',
      /the sync of lines another writer appended failed/,
    );
    assert.is((stopped as LedgerError).runbook, 'ledger-unreadable');
    assert.is(await code(follower.waitForOutbox()), 'LEDGER_STOPPED');
    assert.is(follower.size, 1, 'the line whose sync failed was not taken in');
    await follower.close();
    await writer.close();
  });
});

test.run();
