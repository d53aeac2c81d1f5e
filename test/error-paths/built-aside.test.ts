/**
 * The failures of a ledger built aside and given its name (backends/built-aside.ts) that `gen`
 * and `copy` do not meet in the other tests: a folder that cannot be read or a leftover that
 * cannot be removed, a path through a file, a file system without hard links, something other
 * than an empty file at the name when it is given, and each later step failing (the unlink of the
 * built file's own name, the chmod, the folder's sync). Real faults where the system makes them
 * for root too (a symbolic link loop, a file where a folder is expected, a folder where a file
 * is); the module's seam ({@link AsideIO}) where only a failing disk or another user's files
 * would. Each checks the error (its code, path and the system's word) and what is left on disk.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type AsideIO,
  discard,
  freeForFile,
  nodeAsideIO,
  publishFile,
  publishFolder,
  removeLeftovers,
} from '../../backends/built-aside.js';
import { honchoCodec, jsonlBackend, LedgerIoError } from '../../lib/index.js';
import { systemError } from '../../lib/system-errors.js';
import { InjectingIO } from '../support/injecting-io.js';
import { withHome } from '../support/ledger.js';

type FsCall = Exclude<keyof AsideIO, 'syncDirectory' | 'tryLock'>;

/** The real system, but every `call` fails with `code`, as `node:fs` reports it. */
const failing = (call: FsCall, code: string): AsideIO => ({
  ...nodeAsideIO,
  [call]: () => {
    throw systemError(code, call.replace(/Sync$/, ''));
  },
});

/** The real system, with the folder syncs and locks made through `io` (which counts them, and can fail them). */
const through = (io: InjectingIO, base: AsideIO = nodeAsideIO): AsideIO => ({
  ...base,
  syncDirectory: (path) => io.syncDirectory(path),
  tryLock: (fd) => io.tryLock(fd),
});

/** Calls `body` and gives the {@link LedgerIoError} it throws; fails the test when it throws none. */
function ioError(body: () => unknown): LedgerIoError {
  try {
    body();
  } catch (e) {
    assert.instance(e, LedgerIoError);
    return e as LedgerIoError;
  }
  return assert.unreachable('returned; expected a LedgerIoError') as never;
}

/** The id of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number;
}

// -- the leftovers of builds that did not finish ---------------------------------------------

test('leftovers: a missing folder, or a file where the folder is, has none; a folder that cannot be read is reported', async () => {
  await withHome((home) => {
    assert.equal(removeLeftovers(join(home.dir, 'missing', 'copy.jsonl')), []);
    writeFileSync(home.path, 'a file\n');
    assert.equal(removeLeftovers(join(home.path, 'copy.jsonl')), []);
    const loop = join(home.dir, 'loop');
    symlinkSync('loop', loop);
    const caught = ioError(() => removeLeftovers(join(loop, 'copy.jsonl')));
    assert.is(caught.errno, 'ELOOP');
    assert.is(caught.path, loop);
    assert.ok(caught.message.startsWith(`${loop}: `), caught.message);
    assert.equal(readdirSync(home.dir).sort(), ['honcho.jsonl', 'loop']);
  });
});

test('leftovers: one that cannot be removed (another user’s, in a sticky folder) is reported, and stays', async () => {
  await withHome((home) => {
    const leftover = `${home.path}.tmp-${deadPid()}`;
    writeFileSync(leftover, 'half a ledger');
    const caught = ioError(() => removeLeftovers(home.path, failing('rmSync', 'EPERM')));
    assert.is(caught.errno, 'EPERM');
    assert.is(caught.path, leftover);
    assert.match(caught.message, /operation not permitted \(EPERM\)/);
    assert.is(readFileSync(leftover, 'utf8'), 'half a ledger');
  });
});

// -- the look at the final name ----------------------------------------------------------------

test('a file’s name through a file (ENOTDIR) is reported as the look’s failure, not as taken', async () => {
  await withHome((home) => {
    writeFileSync(home.path, 'a file\n');
    const final = join(home.path, 'copy.jsonl');
    const caught = ioError(() => freeForFile(final));
    assert.is(caught.errno, 'ENOTDIR');
    assert.is(caught.path, final);
  });
});

// -- giving a file its name ----------------------------------------------------------------------

test('without hard links (EPERM), a file is renamed to a free name, and the folder synced', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    const io = new InjectingIO();
    publishFile(temp, home.path, through(io, failing('linkSync', 'EPERM')));
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n');
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
    assert.is(io.count('syncDirectory'), 1);
  });
});

test('without hard links, an empty file at the name is replaced, keeping its mode; a file with bytes is kept', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    writeFileSync(home.path, '');
    chmodSync(home.path, 0o640);
    publishFile(temp, home.path, failing('linkSync', 'EPERM'));
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n');
    assert.is(statSync(home.path).mode & 0o777, 0o640);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);

    writeFileSync(temp, '{"b":2}\n');
    const caught = ioError(() => publishFile(temp, home.path, failing('linkSync', 'EPERM')));
    assert.is(caught.errno, 'EEXIST');
    assert.is(caught.path, home.path);
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n');
    assert.is(readFileSync(temp, 'utf8'), '{"b":2}\n', 'the built file is left for the caller');
  });
});

test('a link that fails otherwise (the built file is gone: ENOENT) is reported, naming the final file', async () => {
  await withHome((home) => {
    const caught = ioError(() => publishFile(`${home.path}.tmp-build`, home.path));
    assert.is(caught.errno, 'ENOENT');
    assert.is(caught.path, home.path);
    assert.equal(readdirSync(home.dir), []);
  });
});

test('a folder at the file’s name when it is given (EISDIR) is reported and kept, the built file left', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    mkdirSync(home.path);
    writeFileSync(join(home.path, 'kept'), 'kept');
    const caught = ioError(() => publishFile(temp, home.path));
    assert.is(caught.errno, 'EISDIR');
    assert.is(caught.path, home.path);
    assert.equal(readdirSync(home.path), ['kept']);
    assert.is(readFileSync(temp, 'utf8'), '{"a":1}\n');
  });
});

test('a file with bytes at the name when it is given (written since the look) is kept (EEXIST), the built file left', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    writeFileSync(home.path, '{"theirs":1}\n');
    const caught = ioError(() => publishFile(temp, home.path));
    assert.is(caught.errno, 'EEXIST');
    assert.is(caught.path, home.path);
    assert.is(readFileSync(home.path, 'utf8'), '{"theirs":1}\n');
    assert.is(readFileSync(temp, 'utf8'), '{"a":1}\n');
  });
});

test('an empty file whose mode cannot be given to the built file is kept, unlocked; the built file left', async () => {
  await withHome(async (home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    writeFileSync(home.path, '');
    const caught = ioError(() => publishFile(temp, home.path, failing('chmodSync', 'EIO')));
    assert.is(caught.errno, 'EIO');
    assert.is(caught.path, temp);
    assert.is(statSync(home.path).size, 0);
    assert.is(readFileSync(temp, 'utf8'), '{"a":1}\n');
    // The lock taken on the empty file was released with its descriptor: a writer takes it.
    const log = await jsonlBackend(home.path, { codec: honchoCodec }).open();
    await log.close();
  });
});

test('a built file linked to its name whose own name cannot be removed: reported, the file at its name', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    const io = new InjectingIO();
    const caught = ioError(() => publishFile(temp, home.path, through(io, failing('unlinkSync', 'EIO'))));
    assert.is(caught.errno, 'EIO');
    assert.is(caught.path, temp);
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n');
    assert.is(
      statSync(temp).ino,
      statSync(home.path).ino,
      'the built name is a second link, for the caller to discard',
    );
    assert.is(io.count('syncDirectory'), 0, 'not synced: the failure is told first');
  });
});

test('a folder sync that fails after the name is given is reported, naming the folder, and not retried', async () => {
  await withHome((home) => {
    const temp = `${home.path}.tmp-build`;
    writeFileSync(temp, '{"a":1}\n');
    const io = new InjectingIO().fail('syncDirectory', 1, 'EIO');
    const caught = ioError(() => publishFile(temp, home.path, through(io)));
    assert.is(caught.errno, 'EIO');
    assert.is(caught.path, home.dir);
    assert.is(io.count('syncDirectory'), 1);
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n');
  });
});

// -- giving a folder its name --------------------------------------------------------------------

test('a folder given a name where a folder with files is (ENOTEMPTY) is refused; one that is gone is reported', async () => {
  await withHome((home) => {
    const final = join(home.dir, 'ledger');
    const temp = `${final}.tmp-build`;
    mkdirSync(temp);
    writeFileSync(join(temp, 'CURRENT'), 'built');
    mkdirSync(final);
    writeFileSync(join(final, 'CURRENT'), 'theirs');
    const notEmpty = ioError(() => publishFolder(temp, final));
    assert.is(notEmpty.errno, 'ENOTEMPTY');
    assert.is(notEmpty.path, final);
    assert.is(readFileSync(join(final, 'CURRENT'), 'utf8'), 'theirs');
    assert.is(readFileSync(join(temp, 'CURRENT'), 'utf8'), 'built');

    const gone = ioError(() => publishFolder(join(home.dir, 'missing.tmp-build'), join(home.dir, 'other')));
    assert.is(gone.errno, 'ENOENT');
    assert.is(gone.path, join(home.dir, 'other'));
  });
});

// -- discarding what was built -------------------------------------------------------------------

test('a build that cannot be looked at to discard (a symbolic link loop) is reported, naming it', async () => {
  await withHome((home) => {
    const loop = join(home.dir, 'loop');
    symlinkSync('loop', loop);
    const temp = join(loop, 'honcho.jsonl.tmp-build');
    const caught = ioError(() => discard(temp));
    assert.is(caught.errno, 'ELOOP');
    assert.is(caught.path, temp);
    assert.equal(readdirSync(home.dir), ['loop']);
  });
});

test.run();
