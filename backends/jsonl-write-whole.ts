/**
 * A JSONL file written whole from its lines, much faster than through appends (`ledgerstore gen`
 * writes its synthetic ledgers so): large writes into a temporary file beside it, synced, then
 * given its name in one step, so that the file appears whole or not at all.
 *
 * The file's format is the JSONL backend's (`jsonl.ts`): each line followed by `\n`, mode 0600,
 * the directory synced so that the name survives a crash. The lines are taken as they are: the
 * caller gives canonical lines.
 *
 * @module
 */
import { constants as fsConstants, promises as fsp } from 'node:fs';
import { constants as osConstants } from 'node:os';
import * as path from 'node:path';
import { LedgerIoError } from '../lib/errors.js';
import { nodeFileIO } from './file-io.js';

/** How to write, and whom to tell how far it got. */
export interface WriteWholeOptions {
  /** Called with the number of lines written so far, every 100,000 lines and at the end. */
  readonly onProgress?: (written: number) => void;
  /**
   * Stops the write when aborted (the CLI's Ctrl-C): it fails with the signal's reason, and the
   * temporary file is removed as on any failure.
   */
  readonly signal?: AbortSignal;
}

/** The size of each write: large writes keep system calls a negligible share of the time. */
const CHUNK = 4 << 20;
/**
 * How many UTF-16 code units of lines are gathered before they are copied into the buffer. Small
 * enough that the string stays cheap to flatten (a megabyte is measurably slower), large enough
 * that the copies are few.
 */
const TEXT_CHUNK = 32 << 10;
const PROGRESS_EVERY = 100_000;

/** A Node.js-shaped EEXIST error, so that {@link LedgerIoError} describes it as the system would. */
function existsError(file: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`EEXIST: file already exists, open '${file}'`);
  error.code = 'EEXIST';
  error.errno = -osConstants.errno.EEXIST;
  error.syscall = 'open';
  error.path = file;
  return error;
}

async function refuseExisting(file: string): Promise<void> {
  try {
    await fsp.lstat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new LedgerIoError(file, e);
  }
  throw new LedgerIoError(file, existsError(file));
}

async function writeAll(handle: fsp.FileHandle, buffer: Buffer, length: number, position: number, name: string): Promise<void> {
  try {
    for (let done = 0; done < length; ) {
      const { bytesWritten } = await handle.write(buffer, done, length - done, position + done);
      done += bytesWritten;
    }
  } catch (e) {
    throw new LedgerIoError(name, e);
  }
}

/**
 * Gives the finished temporary file its name, refusing to replace a file that appeared
 * meanwhile: a hard link fails with EEXIST where `rename` would overwrite. Where the file system
 * has no hard links, a rename after a last check is the best there is.
 */
async function publish(temp: string, file: string): Promise<void> {
  try {
    await fsp.link(temp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw new LedgerIoError(file, e);
    await refuseExisting(file);
    try {
      await fsp.rename(temp, file);
    } catch (e2) {
      throw new LedgerIoError(file, e2);
    }
    return;
  }
  try {
    await fsp.unlink(temp);
  } catch (e) {
    throw new LedgerIoError(temp, e);
  }
}

function syncDirectory(directory: string): void {
  try {
    nodeFileIO.syncDirectory(directory);
  } catch (e) {
    throw new LedgerIoError(directory, e);
  }
}

/**
 * Writes `lines` to a new file, mode 0600, each followed by a newline.
 *
 * The file appears whole or not at all: the lines go to `<file>.tmp-<pid>` in large writes,
 * which is synced and then given its name, and the directory is synced so that the name
 * survives a crash. On any failure, and when `options.signal` is aborted before the file is
 * given its name, the temporary file is removed.
 *
 * @returns how many lines (records) and bytes were written
 * @throws {@link LedgerIoError} when `file` exists already (EEXIST; it is left as it was) or the
 *   file system fails
 */
export async function writeJsonlWhole(file: string, lines: Iterable<string>, options: WriteWholeOptions = {}): Promise<{ records: number; bytes: number }> {
  await refuseExisting(file);
  const temp = `${file}.tmp-${process.pid}`;
  let handle: fsp.FileHandle | undefined;
  // Only a temporary file this call created is removed on failure: one left by another run
  // (the same pid after a reboot, say) is not this call's to delete.
  let created = false;
  // Two buffers: one is filled while the other is being written.
  const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)] as const;
  let writing: Promise<void> = Promise.resolve();
  try {
    try {
      handle = await fsp.open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
    } catch (e) {
      // The caller knows the file, not the temporary name: a missing or unwritable directory is
      // the file's. Only EEXIST is the temporary file's own (one a crashed run left).
      throw new LedgerIoError((e as NodeJS.ErrnoException).code === 'EEXIST' ? temp : file, e);
    }
    created = true;
    const out = handle;
    let current = 0;
    let buffer: Buffer = buffers[0];
    let used = 0;
    let position = 0;
    let count = 0;
    const flush = async (): Promise<void> => {
      await writing;
      writing = writeAll(out, buffer, used, position, temp);
      // Awaited at the next flush; until then a rejection must not count as unhandled.
      writing.catch(() => undefined);
      position += used;
      current ^= 1;
      buffer = buffers[current as 0 | 1];
      used = 0;
    };
    // Lines are joined into a string of TEXT_CHUNK code units before they are copied into the
    // buffer: one `buffer.write` per line costs more than making the lines.
    let text = '';
    const take = async (): Promise<void> => {
      options.signal?.throwIfAborted();
      // A UTF-16 code unit takes at most 3 bytes of UTF-8.
      const most = text.length * 3;
      if (used > 0 && used + most > CHUNK) await flush();
      if (most > CHUNK) {
        // Not reached with the lines generated here; `buffer.write` would silently cut it short.
        const bytes = Buffer.from(text, 'utf8');
        await writing;
        await writeAll(out, bytes, bytes.length, position, temp);
        position += bytes.length;
      } else {
        used += buffer.write(text, used);
      }
      text = '';
    };
    for (const line of lines) {
      text += `${line}\n`;
      if (text.length >= TEXT_CHUNK) await take();
      if (++count % PROGRESS_EVERY === 0) options.onProgress?.(count);
    }
    if (text.length > 0) await take();
    if (used > 0) await flush();
    await writing;
    if (count % PROGRESS_EVERY !== 0 || count === 0) options.onProgress?.(count);
    try {
      await out.datasync();
    } catch (e) {
      throw new LedgerIoError(temp, e);
    }
    handle = undefined;
    try {
      await out.close();
    } catch (e) {
      throw new LedgerIoError(temp, e);
    }
    // The last point at which stopping leaves nothing behind: once published, the file is whole.
    options.signal?.throwIfAborted();
    await publish(temp, file);
    syncDirectory(path.dirname(path.resolve(file)));
    return { records: count, bytes: position };
  } catch (e) {
    await writing.catch(() => undefined);
    await handle?.close().catch(() => undefined);
    if (created) await fsp.rm(temp, { force: true }).catch(() => undefined);
    throw e;
  }
}
