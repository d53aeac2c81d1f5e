/**
 * A JSONL file written from its lines, much faster than through appends (`ledgerstore gen`
 * writes its synthetic ledgers so): large writes into a new file, synced; {@link writeJsonlWhole}
 * writes it beside its name and then gives it the name in one step (`built-aside.ts`), so that the
 * file appears whole or not at all.
 *
 * The file's format is the JSONL backend's (`jsonl.ts`): each line followed by `\n`, mode 0600,
 * the directory synced so that the name survives a crash. The lines are taken as they are: the
 * caller gives canonical lines.
 *
 * @module
 */
import { constants as fsConstants, promises as fsp } from 'node:fs';
import { LedgerIoError } from '../lib/errors.js';
import { asidePath, discard, freeForFile, publishFile } from './built-aside.js';

/** How to write, and whom to tell how far it got. */
export interface WriteOptions {
  /** Called with the number of lines written so far, every 100,000 lines and at the end. */
  readonly onProgress?: (written: number) => void;
  /**
   * Stops the write when aborted (the CLI's Ctrl-C): it fails with the signal's reason, and the
   * file is removed as on any failure.
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

/**
 * How {@link writeJsonlFile} opens the new file: `fs.promises.open`, or a test's layer over it
 * that fails a call on the handle (a disk's EIO, which no test can make for real).
 */
export type OpenFile = (path: string, flags: number, mode: number) => Promise<fsp.FileHandle>;

async function writeAll(
  handle: fsp.FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
  name: string,
): Promise<void> {
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
 * Writes `lines` to the new file `file`, mode 0600, each followed by a newline, in large writes,
 * and syncs it. On any failure, and when `options.signal` is aborted, the file is removed.
 *
 * @param options.builtFor the file this one is built for (see {@link writeJsonlWhole}): a failure
 *   to create `file` (a missing or unwritable folder) is reported as that file's, which the caller
 *   knows
 * @param options.open how to open it (`fs.promises.open` unless a test says)
 * @returns how many lines (records) and bytes were written
 * @throws {@link LedgerIoError} when `file` exists (EEXIST) or the file system fails
 */
export async function writeJsonlFile(
  file: string,
  lines: Iterable<string>,
  options: WriteOptions & { readonly builtFor?: string; readonly open?: OpenFile } = {},
): Promise<{ records: number; bytes: number }> {
  let handle: fsp.FileHandle | undefined;
  // Only a file this call created is removed on failure: one that was there is not its to delete.
  let created = false;
  // Two buffers: one is filled while the other is being written.
  const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)] as const;
  let writing: Promise<void> = Promise.resolve();
  try {
    try {
      handle = await (options.open ?? fsp.open)(
        file,
        fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
        0o600,
      );
    } catch (e) {
      // Only EEXIST is this file's own (one that a crashed build left): the folder is the other's.
      throw new LedgerIoError((e as NodeJS.ErrnoException).code === 'EEXIST' ? file : (options.builtFor ?? file), e);
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
      writing = writeAll(out, buffer, used, position, file);
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
        await writeAll(out, bytes, bytes.length, position, file);
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
      throw new LedgerIoError(file, e);
    }
    handle = undefined;
    try {
      await out.close();
    } catch (e) {
      throw new LedgerIoError(file, e);
    }
    options.signal?.throwIfAborted();
    return { records: count, bytes: position };
  } catch (e) {
    await writing.catch(() => undefined);
    await handle?.close().catch(() => undefined);
    if (created) await fsp.rm(file, { force: true }).catch(() => undefined);
    throw e;
  }
}

/**
 * Writes `lines` as the JSONL file `file`, which must be new or empty, whole or not at all: they
 * go to `<file>.tmp-<pid>` ({@link writeJsonlFile}), which is then given the name `file` and its
 * folder synced (`built-aside.ts`). On any failure, and when `options.signal` is aborted before
 * the file is given its name, the temporary file is removed.
 *
 * @returns how many lines (records) and bytes were written
 * @throws {@link LedgerIoError} when `file` is there and not empty (EEXIST; it is left as it was)
 *   or the file system fails
 */
export async function writeJsonlWhole(
  file: string,
  lines: Iterable<string>,
  options: WriteOptions = {},
): Promise<{ records: number; bytes: number }> {
  freeForFile(file);
  const temp = asidePath(file);
  const written = await writeJsonlFile(temp, lines, { ...options, builtFor: file });
  try {
    // The last point at which stopping leaves nothing behind: once published, the file is whole.
    options.signal?.throwIfAborted();
    publishFile(temp, file);
  } catch (e) {
    discard(temp);
    throw e;
  }
  return written;
}
