/**
 * The failures and edges of a JSONL file written whole (backends/jsonl-write-whole.ts) that the
 * other tests do not reach: a write, sync or close that the disk fails (through the module's
 * `open` seam: a child process under a file size limit makes EFBIG for real, test/cli.test.ts,
 * but cannot write its coverage under that limit), a file left at the temporary name by an
 * earlier build of the same process id, a folder that is missing when no final name is given, a
 * line longer than a write buffer, and a stop signal that is never raised. Each checks what the
 * caller is told and what is left on disk.
 */
import { promises as fsp, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asidePath } from '../../backends/built-aside.js';
import { type OpenFile, writeJsonlFile, writeJsonlWhole } from '../../backends/jsonl-write-whole.js';
import { LedgerIoError } from '../../lib/index.js';
import { systemError } from '../../lib/system-errors.js';
import { failure, withHome } from '../support/ledger.js';

type HandleCall = 'write' | 'datasync' | 'close';
const SYSCALLS: { readonly [call in HandleCall]: string } = { write: 'write', datasync: 'fdatasync', close: 'close' };

/**
 * Opens the file for real, then every `call` on its handle fails with EIO (counted in `calls`);
 * a failed close still closes it, as Linux's does.
 */
function failingOn(call: HandleCall, calls: HandleCall[]): OpenFile {
  return async (path, flags, mode) => {
    const handle = await fsp.open(path, flags, mode);
    const close = handle.close.bind(handle);
    const fail = async (): Promise<never> => {
      calls.push(call);
      if (call === 'close') await close();
      throw systemError('EIO', SYSCALLS[call]);
    };
    if (call === 'write') handle.write = fail;
    else if (call === 'datasync') handle.datasync = fail;
    else handle.close = fail;
    return handle;
  };
}

const LINES = ['{"a":1}', '{"b":2}'];

async function ioFailure(promise: Promise<unknown>): Promise<LedgerIoError> {
  const caught = await failure(promise);
  assert.instance(caught, LedgerIoError);
  return caught as LedgerIoError;
}

test('a write, a sync or a close that fails (EIO) is reported once, naming the file, which is removed', async () => {
  for (const call of ['write', 'datasync', 'close'] as const) {
    await withHome(async (home) => {
      const calls: HandleCall[] = [];
      const caught = await ioFailure(writeJsonlFile(home.path, LINES, { open: failingOn(call, calls) }));
      assert.is(caught.errno, 'EIO', call);
      assert.is(caught.path, home.path, call);
      assert.is(caught.message, `${home.path}: i/o error (EIO)`, call);
      assert.equal(calls, [call], `${call} is not retried`);
      assert.equal(readdirSync(home.dir), [], `${call}: the file is removed`);
    });
  }
});

test('a file at the temporary name (an earlier build by the same process id) is reported and kept; nothing is published', async () => {
  await withHome(async (home) => {
    const temp = asidePath(home.path);
    writeFileSync(temp, 'an earlier build');
    const caught = await ioFailure(writeJsonlWhole(home.path, LINES));
    assert.is(caught.errno, 'EEXIST');
    assert.is(caught.path, temp);
    assert.is(readFileSync(temp, 'utf8'), 'an earlier build');
    assert.equal(readdirSync(home.dir), [`honcho.jsonl.tmp-${process.pid}`]);
  });
});

test('a file written for itself (no final name) in a missing folder is reported as its own', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'missing', 'honcho.jsonl');
    const caught = await ioFailure(writeJsonlFile(file, LINES));
    assert.is(caught.errno, 'ENOENT');
    assert.is(caught.path, file);
    assert.equal(readdirSync(home.dir), []);
  });
});

test('a line longer than a write buffer, after lines already buffered, is written whole and in order', async () => {
  await withHome(async (home) => {
    // More UTF-16 code units than a 4 MiB buffer holds at 3 bytes each; the multi-byte text checks the byte count.
    const long = `{"text":"${'é'.repeat(1_500_000)}"}`;
    const lines = [`{"text":"${'x'.repeat(40_000)}"}`, long, '{"c":3}'];
    const written = await writeJsonlWhole(home.path, lines);
    const expected = `${lines.join('\n')}\n`;
    assert.equal(written, { records: 3, bytes: Buffer.byteLength(expected) });
    assert.ok(readFileSync(home.path, 'utf8') === expected, 'the file holds the lines exactly');
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('a stop signal that is never raised changes nothing: the file is published', async () => {
  await withHome(async (home) => {
    const written = await writeJsonlWhole(home.path, LINES, { signal: new AbortController().signal });
    assert.equal(written, { records: 2, bytes: 16 });
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n{"b":2}\n');
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test.run();
