/**
 * Special files at a JSONL ledger's path: a named pipe (FIFO), a socket, character devices, a
 * block device, an empty and a non-empty folder, and symbolic links to them. Each is opened by
 * real processes, under a hang guard (a synchronous open of a FIFO with no writer never returns,
 * and takes the event loop with it): a child that opens it read-only, one that opens it for
 * writing (`test/support/open-huge.ts`), and the command line's `verify` and `append` (with
 * nothing on stdin). Every one must be refused at once with `LEDGER_NOT_A_FILE`, naming the path
 * and what is there, and leave it as it was. A writable open that (wrongly) succeeded is closed
 * without appending, so that no run of this harness writes to a device.
 *
 * And the file layer's promise those refusals rest on: an open of a FIFO with no writer returns
 * at once (`O_NONBLOCK`), in a child process.
 */
import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, type Stats, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Home, withHome } from '../support/ledger.js';
import type { Refused } from '../support/open-huge.js';
import { SCALE } from '../support/scale.js';

const OPEN = fileURLToPath(new URL('../support/open-huge.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../lib/cli.js', import.meta.url));
const FILE_IO = pathToFileURL(fileURLToPath(new URL('../../lib/file-io.js', import.meta.url))).href;
/** A child that has not answered by then is taken for blocked: a hang guard only. */
const HANG_GUARD_MS = 30_000 * SCALE;

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs node with `args` and nothing on stdin; fails the test if it has not ended by the guard. */
function node(args: readonly string[], what: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      args,
      { timeout: HANG_GUARD_MS, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error !== null && error.killed === true)
          reject(new Error(`${what}: no answer after ${HANG_GUARD_MS} ms: it blocked (${stderr})`));
        else resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/** The refusal every open of `path` must give when `what` is there. */
const refusal = (path: string, what: string): string =>
  `${path}: is ${what}, not a regular file; a JSONL ledger is a regular file: name the ledger's file, or move this away`;

/** What is at a path, as `lstat` and `stat` say, and a folder's entries: what must not change. */
function shape(path: string): string {
  const link = lstatSync(path);
  const target = statSync(path);
  const kind = (s: Stats): string =>
    s.isFIFO()
      ? 'fifo'
      : s.isSocket()
        ? 'socket'
        : s.isBlockDevice()
          ? 'block'
          : s.isCharacterDevice()
            ? 'char'
            : s.isDirectory()
              ? 'dir'
              : s.isFile()
                ? 'file'
                : '?';
  const entries = target.isDirectory() ? readdirSync(path).join(',') : '';
  return `${link.isSymbolicLink() ? 'link to ' : ''}${kind(target)} ${target.ino} ${target.rdev} [${entries}]`;
}

/** A block device to point at: one in /dev, or one made here (root only) if /dev has none. */
function blockDevice(home: Home): string {
  for (const name of readdirSync('/dev')) {
    const path = join('/dev', name);
    try {
      if (lstatSync(path).isBlockDevice()) return path;
    } catch {
      // gone while listed
    }
  }
  const made = join(home.dir, 'block-device');
  execFileSync('mknod', [made, 'b', '7', '0']); // a loop device's numbers; only looked at, never opened
  return made;
}

interface Case {
  readonly path: string;
  readonly what: string;
}

/** Makes each special file (and links to some) in `home`; gives the cases and what to clean up. */
async function specialFiles(home: Home): Promise<{ cases: Case[]; close: () => Promise<void> }> {
  const fifo = join(home.dir, 'fifo.jsonl');
  execFileSync('mkfifo', [fifo]);
  const socket = join(home.dir, 'socket.jsonl');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const empty = join(home.dir, 'empty-folder.jsonl');
  mkdirSync(empty);
  const full = join(home.dir, 'folder.jsonl');
  mkdirSync(full);
  writeFileSync(join(full, 'honcho.jsonl'), '');
  const link = (name: string, to: string): string => {
    const path = join(home.dir, name);
    symlinkSync(to, path);
    return path;
  };
  const block = blockDevice(home);
  const cases: Case[] = [
    { path: fifo, what: 'a named pipe (FIFO)' },
    { path: link('link-to-fifo.jsonl', fifo), what: 'a named pipe (FIFO)' },
    { path: socket, what: 'a socket' },
    { path: '/dev/null', what: 'a character device' },
    { path: link('link-to-zero.jsonl', '/dev/zero'), what: 'a character device' },
    { path: block, what: 'a block device' },
    { path: link('link-to-block.jsonl', block), what: 'a block device' },
    { path: empty, what: 'a directory' },
    { path: full, what: 'a directory' },
    { path: link('link-to-folder.jsonl', full), what: 'a directory' },
  ];
  return { cases, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test("anything at the ledger's path but a regular file is refused at once by every open, and left as it was", async () => {
  await withHome(async (home) => {
    const { cases, close } = await specialFiles(home);
    let refused = 0;
    try {
      for (const { path, what } of cases) {
        const before = shape(path);
        const expected = refusal(path, what);
        for (const mode of ['read-only', 'writable']) {
          const ran = await node([OPEN, path, mode], `a ${mode} open of ${what} (${path})`);
          assert.is(ran.code, 0, `${path}, ${mode}: ${ran.stderr}`);
          const said = JSON.parse(ran.stdout) as Partial<Refused>;
          assert.equal(
            said.refused,
            { code: 'LEDGER_NOT_A_FILE', message: expected },
            `${path}, a ${mode} open: ${ran.stdout}`,
          );
          refused++;
        }
        for (const command of ['verify', 'append']) {
          const ran = await node([CLI, command, path], `ledgerstore ${command} ${path}`);
          assert.is(ran.code, 1, `ledgerstore ${command} ${path}: ${ran.stderr}`);
          assert.is(ran.stdout, '');
          assert.ok(
            ran.stderr.startsWith(`ledgerstore: ${expected}; see docs/runbook.md#ledger-not-a-file\n`),
            `ledgerstore ${command} ${path}: ${ran.stderr}`,
          );
          refused++;
        }
        assert.is(shape(path), before, `${path} changed`);
      }
    } finally {
      await close();
    }
    console.log(
      `  special files: ${cases.length} kinds and links at the ledger's path, ${refused} opens and commands, each refused at once`,
    );
  });
});

test('the file layer opens a FIFO that has no writer at once, without waiting for one', async () => {
  await withHome(async (home) => {
    const fifo = join(home.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const script = `const { nodeFileIO } = await import(${JSON.stringify(FILE_IO)});
for (const open of ['openRead', 'openReadWrite']) {
  const fd = nodeFileIO[open](process.argv[1]);
  console.log(open, nodeFileIO.status(fd).kind);
  nodeFileIO.close(fd);
}`;
    const ran = await node(['--input-type=module', '-e', script, fifo], 'an open of a FIFO with no writer');
    assert.is(ran.stderr, '');
    assert.is(ran.stdout, 'openRead fifo\nopenReadWrite fifo\n');
  });
});

test.run();
