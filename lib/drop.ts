/**
 * Removing a ledger (`ledgerstore drop`): a JSONL file, a `level:` folder or a PostgreSQL log,
 * after a look that says what is there, so that an operator sees what a drop would remove, and
 * a drop removes only what looks like a ledger:
 *
 * - **JSONL**: a regular file (not a link: a drop does not follow a path to remove what it leads
 *   to) that is empty or whose first line is a record, removed holding the writer's lock (a
 *   writer elsewhere keeps it: refused).
 * - **`level:`**: a folder (not a link) that holds a LevelDB ledger and nothing else (its files
 *   are LevelDB's and the marker's, as the backend's own look reads them), removed file by file
 *   by name, `CURRENT` first (a drop cut short leaves a folder that no open takes for a
 *   ledger, and that a drop again removes), holding LevelDB's lock; the folder then goes only
 *   if it is empty. Never a recursive removal.
 * - **PostgreSQL**: the log's records and row, in one transaction, refused while a writer has
 *   it open (`lifecycle.ts`).
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isPostgresUri, postgresBackend } from '../backends/postgres/index.js';
import { LedgerError, LedgerIoError, LockedError, NotAFileError } from './errors.js';
import { nodeFileIO } from './file-io.js';
import { assertNotInUse, withFolderLocked } from './folder-lock.js';
import { honchoCodec } from './honcho/codec.js';
import { inspectFolder, isLevelDbName } from './leveldb/folder.js';
import { isMarkerTemporary, MARKER } from './leveldb/marker.js';
import { jsonlPathOf } from './target.js';

/** What a look at a target found. */
export type Droppable =
  /** Nothing to drop: no file, folder or log there; `why` says so (`no such file`). */
  | { readonly state: 'missing'; readonly why: string }
  /** Something that does not look like a ledger: a drop leaves it alone. */
  | { readonly state: 'foreign'; readonly why: string }
  | {
      readonly state: 'ledger';
      /** What a drop removes, as a phrase: `the JSONL file honcho.jsonl (1,234 bytes)`. */
      readonly what: string;
      /** Removes it; gives what it removed, as a phrase. @throws {@link LockedError} when it is held */
      remove(): Promise<string>;
    };

const grouped = (n: number): string => n.toLocaleString('en-US');
const plural = (n: number, what: string): string => `${grouped(n)} ${what}${n === 1 ? '' : 's'}`;

/**
 * Looks at the ledger `target` names (a path, `jsonl:`, `level:`, a PostgreSQL URI), changing
 * nothing. `memory:` holds nothing past its process, and is refused as missing.
 * @throws {@link LedgerError} when the look fails (the file system, the server)
 */
export async function lookToDrop(target: string): Promise<Droppable> {
  if (isPostgresUri(target)) return postgresLog(target);
  if (target === 'memory:') return { state: 'missing', why: 'a memory: ledger lives only in its process' };
  if (target.startsWith('level:')) return levelFolder(target.slice('level:'.length));
  const file = jsonlPathOf(target);
  if (file === null) return { state: 'missing', why: 'not a ledger a drop can remove' };
  return jsonlFile(file);
}

async function postgresLog(target: string): Promise<Droppable> {
  const backend = postgresBackend(target, { codec: honchoCodec });
  const found = await backend.look();
  if (found === null) return { state: 'missing', why: 'no such log' };
  const describe = (state: { head: number; unfinished: string | null }): string =>
    `the PostgreSQL log ${backend.name} and its ${plural(state.head, 'record')}${state.unfinished === null ? '' : ` (an unfinished ${state.unfinished})`}`;
  return {
    state: 'ledger',
    what: describe(found),
    remove: async () => {
      const removed = await backend.drop();
      if (removed === null)
        throw new LedgerIoError(backend.name, new Error('the log is gone already (dropped meanwhile)'));
      return describe(removed);
    },
  };
}

/** What a directory entry is, for a message. */
function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isSocket()) return 'a socket';
  return 'a device';
}

/** Whether the file open as `fd` is empty or starts with a line that is a ledger record. */
function startsAsLedger(fd: number, size: number): boolean {
  if (size === 0) return true;
  const head = Buffer.alloc(Math.min(size, 1 << 20));
  const read = fs.readSync(fd, head, 0, head.length, 0);
  const newline = head.subarray(0, read).indexOf(10);
  // a first line longer than what was read (or cut off by a crash) fails as far as it goes
  try {
    honchoCodec.decode(head, 0, newline === -1 ? read : newline);
    return true;
  } catch {
    return false;
  }
}

function jsonlFile(file: string): Droppable {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    throw new LedgerIoError(file, e, 'read');
  }
  if (stat === undefined) return { state: 'missing', why: 'no such file' };
  if (stat.isSymbolicLink())
    return {
      state: 'foreign',
      why: 'is a symbolic link; drop removes a ledger file itself, not through a link: name the file it leads to',
    };
  if (!stat.isFile()) throw new NotAFileError(file, kindOf(stat));
  const opened = openChecked(file, stat, fs.constants.O_RDONLY);
  try {
    if (!startsAsLedger(opened, stat.size))
      return { state: 'foreign', why: 'its first line is not a ledger record; drop removes only a ledger' };
  } finally {
    fs.closeSync(opened);
  }
  const size = stat.size;
  const what = `the JSONL file ${file} (${plural(size, 'byte')})`;
  return {
    state: 'ledger',
    what,
    remove: async () => {
      const now = fs.lstatSync(file, { throwIfNoEntry: false });
      if (now === undefined || !now.isFile() || now.ino !== stat.ino || now.dev !== stat.dev)
        throw new LedgerIoError(
          file,
          new Error('the file changed since it was looked at (replaced or removed); look again'),
        );
      const fd = openChecked(file, now, fs.constants.O_RDWR);
      try {
        let locked: boolean;
        try {
          locked = nodeFileIO.tryLock(fd);
        } catch (e) {
          throw new LedgerIoError(file, e);
        }
        if (!locked) throw new LockedError(file);
        // under the lock, so that no writer appends to the file as it goes
        fs.unlinkSync(file);
      } catch (e) {
        if (e instanceof LedgerError) throw e;
        throw new LedgerIoError(file, e);
      } finally {
        fs.closeSync(fd);
      }
      syncParent(file);
      return `the JSONL file ${file} (${plural(now.size, 'byte')})`;
    },
  };
}

/** Opens `file` without following a link, and checks it is the file `stat` found. */
function openChecked(file: string, stat: fs.Stats, flags: number): number {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new LedgerIoError(file, e, 'read');
  }
  const opened = fs.fstatSync(fd);
  if (opened.ino !== stat.ino || opened.dev !== stat.dev || !opened.isFile()) {
    fs.closeSync(fd);
    throw new LedgerIoError(
      file,
      new Error('the file changed since it was looked at (replaced or removed); look again'),
    );
  }
  return fd;
}

function syncParent(entry: string): void {
  const parent = path.dirname(path.resolve(entry));
  try {
    nodeFileIO.syncDirectory(parent);
  } catch (e) {
    throw new LedgerIoError(parent, e);
  }
}

/** Whether a name in a LevelDB ledger's folder is one a drop removes: LevelDB's, or the marker's. */
const ofLedger = (name: string): boolean => isLevelDbName(name) || name === MARKER || isMarkerTemporary(name);

function levelFolder(folder: string): Droppable {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(folder, { throwIfNoEntry: false });
  } catch (e) {
    throw new LedgerIoError(folder, e, 'read');
  }
  if (stat === undefined) return { state: 'missing', why: 'no such folder' };
  if (stat.isSymbolicLink())
    return {
      state: 'foreign',
      why: 'is a symbolic link; drop removes a ledger folder itself, not through a link: name the folder it leads to',
    };
  const found = inspectFolder(folder, 'ledgerstore/level');
  if (found.state === 'missing') return { state: 'missing', why: 'no such folder' };
  if (found.state === 'foreign')
    return { state: 'foreign', why: `${found.why}; drop removes only a LevelDB ledger's folder` };
  if (found.state === 'empty' && found.marker === null) return { state: 'missing', why: 'no ledger in the folder' };
  const files = (): string[] => fs.readdirSync(folder).filter(ofLedger);
  const what = (count: number): string =>
    `the LevelDB ledger folder ${folder} (${plural(count, 'file')}${found.state === 'damaged' ? ', damaged' : ''})`;
  return {
    state: 'ledger',
    what: what(files().length),
    remove: async () => {
      assertNotInUse(folder, 'level');
      const removed = await withFolderLocked(folder, 'level', false, () => {
        const names = files();
        // CURRENT first: from then on, no open takes what is left for a ledger
        const ordered = [
          ...names.filter((name) => name === 'CURRENT'),
          ...names.filter((name) => name !== 'CURRENT' && name !== MARKER),
          ...names.filter((name) => name === MARKER),
        ];
        for (const name of ordered) {
          const entry = path.join(folder, name);
          try {
            fs.unlinkSync(entry); // never recursive: a folder of that name is refused, not emptied
          } catch (e) {
            throw new LedgerIoError(entry, e);
          }
        }
        return names.length;
      });
      try {
        fs.rmdirSync(folder); // only if empty: anything put there meanwhile stays, and is said
      } catch (e) {
        throw new LedgerIoError(folder, e);
      }
      syncParent(folder);
      return what(removed);
    },
  };
}
