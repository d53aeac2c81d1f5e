/**
 * A simulated file system under the JSONL backend (a {@link FileIO}) that knows, after every
 * call, what is on stable storage and what is only in the page cache, and works out what a
 * power loss at that moment may leave on disk: the crash states of the power-loss harness
 * (test/crash/power-loss.test.ts).
 *
 * ## The model, and why
 *
 * What the backend's process sees (reads, sizes) is always its own writes, as the page cache
 * gives them. What is on stable storage is kept apart:
 *
 * - **A file's data and size** are stable as of its last successful `fdatasync` (`synced`): that
 *   is what it is for (POSIX: the data, and the metadata needed to read it back, the size).
 *   Every `write` and `ftruncate` since is **pending**, in order. A failed `fdatasync` changes
 *   nothing: its writes stay pending, neither known lost nor known kept, since Linux may have
 *   written some of them and dropped the rest with the error.
 * - **A directory entry** made by `create` is stable only once its directory was `fsync`'d
 *   afterwards (POSIX; ext4 and xfs often persist it with the file's own fsync, but nothing
 *   promises that, and the ALICE study found applications that lose files by relying on it).
 *   Until then a power loss may leave the file without its name: missing.
 *
 * What a power loss leaves of a file with pending operations. Let `I0` be its stable contents
 * and `I1 ... In` the contents after each pending operation, as the page cache had them:
 *
 * - **Its size** is the size of any of `I0 ... In` (the inode's size is written back on its own:
 *   ext4 `data=ordered` writes it after the data, xfs may write it before), or any byte inside an
 *   append (a torn append: the kernel grows the size a page at a time as it copies a write in,
 *   and a file system that keeps the size ahead of the data lets it land anywhere; every byte
 *   is more than any one file system does, and costs nothing but states).
 * - **Each 512-byte sector** of the part that changed holds one version of it: its bytes in
 *   `I0` (never written back since the sync) or in any `Ij` (written back when the cache held
 *   that), independently of the others: write-back goes page by page in no particular order,
 *   and a page being written at the moment of the loss may land only some of its sectors. A
 *   sector is the unit: disks write a sector whole or not at all, so no single byte in the
 *   middle of written data is lost.
 * - **Bytes of a version beyond that version's end** (below the size) read as zeros: the page
 *   cache zeroes a page past the end of the file before writing it back. The exception is
 *   version `I0` in a 4 KiB block that the file did not have at its sync: a block allocated
 *   since and never written holds **zeros** (unwritten extents, ext4 `data=ordered`) or whatever
 *   it held before, **garbage** (ext4 `data=writeback`, file systems without that care), with
 *   or without newlines in it.
 *
 * So a state is a size, a version per sector and a filler for fresh blocks; the harness
 * enumerates them ({@link crashChoices}: every torn size of an append, every combination of
 * sector versions) and materializes each ({@link materialize}) into a real file, which the real
 * backend then opens. This covers ext4 in its default mode (an append whole, gone or torn at a
 * page, pages landed out of order) and the modes and file systems that expose zeros or stale
 * blocks. What it leaves out: damage to data that was synced (a lying disk, bit rot: the
 * corruption harness's domain), a byte lost inside a written sector, and renames and unlinks
 * (the backend makes none).
 */

import * as path from 'node:path';
import type { Fd, FileIO, FileStatus } from '../../lib/file-io.js';
import type { Random } from '../../lib/random.js';
import { systemError } from '../../lib/system-errors.js';

/** The block size: a block the file did not have at its sync may hold garbage. */
export const BLOCK = 4096;
/** The sector size: the unit a disk writes whole. */
export const SECTOR = 512;

/** An operation on a file since its last successful `fdatasync`. */
export type PendingOp =
  | { readonly kind: 'write'; readonly offset: number; readonly bytes: Buffer }
  | { readonly kind: 'truncate'; readonly length: number };

/** What a block allocated since the sync and never written holds. */
export type Filler = 'zeros' | 'garbage' | 'garbage without newlines';
export const FILLERS: readonly Filler[] = ['zeros', 'garbage', 'garbage without newlines'];

/** A file at a crash point: what is stable, and what is pending. */
export interface FileState {
  readonly path: string;
  /** Whether its name is stable: its directory was synced since it was created. */
  readonly entryDurable: boolean;
  /** Its contents as of its last successful `fdatasync` (empty when it was never synced). */
  readonly synced: Buffer;
  /** What was done to it since, in program order. */
  readonly pending: readonly PendingOp[];
}

interface Inode {
  /** Which file it is (its inode number). */
  readonly id: number;
  /** What the process sees: the page cache. */
  data: Buffer;
  synced: Buffer;
  pending: PendingOp[];
  lockedBy: Fd | null;
}

interface OpenFile {
  readonly inode: Inode;
  readonly writable: boolean;
}

/** A {@link FileIO} over the simulated file system. */
export class PowerLossIO implements FileIO {
  /** Called after every call, failed ones included, with what it was: take a crash point there. */
  onCall: ((what: string) => void) | null = null;
  /** How many calls were made. */
  calls = 0;
  /** The datasync calls (counted from 1) that fail with EIO. */
  readonly failDatasyncs = new Set<number>();
  /** The write calls (counted from 1) that fail with ENOSPC, writing nothing. */
  readonly failWrites = new Set<number>();
  private writes = 0;
  /** At most this many bytes per `write` (short writes); `Infinity` for whole writes. */
  maxWrite = Infinity;
  private datasyncs = 0;
  private nextFd = 1000;
  private nextInode = 1;
  private readonly names = new Map<string, Inode>();
  private readonly durableNames = new Set<string>();
  private readonly fds = new Map<Fd, OpenFile>();

  /** A file system holding `files` (absolute paths), every byte and name of them stable. */
  constructor(files: readonly { readonly path: string; readonly bytes: Buffer }[] = []) {
    for (const file of files) {
      const absolute = path.resolve(file.path);
      this.names.set(absolute, {
        id: this.nextInode++,
        data: Buffer.from(file.bytes),
        synced: Buffer.from(file.bytes),
        pending: [],
        lockedBy: null,
      });
      this.durableNames.add(absolute);
    }
  }

  /** The descriptors open now. */
  get openFds(): number {
    return this.fds.size;
  }

  /**
   * The state of every file now: what a power loss at this moment works from. It shares the
   * buffers of the simulation, which are never changed once made (a write keeps a copy of its
   * bytes, a sync makes a new stable buffer), so that a crash point after each of thousands of
   * calls costs little.
   */
  crashPoint(): FileState[] {
    return [...this.names].map(([name, inode]) => ({
      path: name,
      entryDurable: this.durableNames.has(name),
      synced: inode.synced,
      pending: [...inode.pending],
    }));
  }

  private called(what: string): void {
    this.calls++;
    this.onCall?.(what);
  }

  /** Runs a call, then reports it (thrown or not). */
  private call<T>(what: string, body: () => T): T {
    try {
      return body();
    } finally {
      this.called(what);
    }
  }

  private file(fd: Fd, syscall: string): OpenFile {
    const open = this.fds.get(fd);
    if (open === undefined) throw systemError('EBADF', syscall);
    return open;
  }

  private openAt(file: string, writable: boolean, syscall: string): Fd {
    const inode = this.names.get(path.resolve(file));
    if (inode === undefined) throw systemError('ENOENT', syscall);
    const fd = this.nextFd++;
    this.fds.set(fd, { inode, writable });
    return fd;
  }

  openRead(file: string): Fd {
    return this.call(`openRead`, () => this.openAt(file, false, 'open'));
  }

  openReadWrite(file: string): Fd {
    return this.call(`openReadWrite`, () => this.openAt(file, true, 'open'));
  }

  create(file: string): Fd {
    return this.call('create', () => {
      const absolute = path.resolve(file);
      if (this.names.has(absolute)) throw systemError('EEXIST', 'open');
      this.names.set(absolute, {
        id: this.nextInode++,
        data: Buffer.alloc(0),
        synced: Buffer.alloc(0),
        pending: [],
        lockedBy: null,
      });
      return this.openAt(file, true, 'open');
    });
  }

  size(fd: Fd): number {
    return this.call('size', () => this.file(fd, 'fstat').inode.data.length);
  }

  // Looks that change nothing (fstat, stat, realpath) take no crash point: a power loss right
  // after one leaves what a power loss right before it does, and counting those states again
  // would only inflate the harness's figures.

  status(fd: Fd): FileStatus {
    return { kind: 'file', identity: `simulated:${this.file(fd, 'fstat').inode.id}` };
  }

  statusOf(file: string): FileStatus {
    const inode = this.names.get(path.resolve(file));
    if (inode === undefined) throw systemError('ENOENT', 'stat');
    return { kind: 'file', identity: `simulated:${inode.id}` };
  }

  realPath(file: string): string {
    const absolute = path.resolve(file);
    if (!this.names.has(absolute)) throw systemError('ENOENT', 'realpath');
    return absolute;
  }

  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return this.call('read', () => {
      const { data } = this.file(fd, 'read').inode;
      const end = Math.min(data.length, position + length);
      if (end <= position) return 0;
      data.copy(buffer, offset, position, end);
      return end - position;
    });
  }

  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return this.call(`write`, () => {
      const open = this.file(fd, 'write');
      if (!open.writable) throw systemError('EBADF', 'write');
      if (this.failWrites.has(++this.writes)) throw systemError('ENOSPC', 'write');
      const n = Math.min(length, this.maxWrite);
      const bytes = Buffer.from(buffer.subarray(offset, offset + n));
      const inode = open.inode;
      inode.data = overlayAt(inode.data, position, bytes);
      inode.pending.push({ kind: 'write', offset: position, bytes });
      return n;
    });
  }

  datasync(fd: Fd): void {
    this.call('datasync', () => {
      const { inode } = this.file(fd, 'fdatasync');
      if (this.failDatasyncs.has(++this.datasyncs)) throw systemError('EIO', 'fdatasync');
      inode.synced = Buffer.from(inode.data);
      inode.pending = [];
    });
  }

  truncate(fd: Fd, length: number): void {
    this.call('truncate', () => {
      const open = this.file(fd, 'ftruncate');
      if (!open.writable) throw systemError('EINVAL', 'ftruncate');
      const inode = open.inode;
      inode.data = resize(inode.data, length);
      inode.pending.push({ kind: 'truncate', length });
    });
  }

  close(fd: Fd): void {
    this.call('close', () => {
      const { inode } = this.file(fd, 'close');
      if (inode.lockedBy === fd) inode.lockedBy = null;
      this.fds.delete(fd);
    });
  }

  syncDirectory(directory: string): void {
    this.call('syncDirectory', () => {
      const absolute = path.resolve(directory);
      for (const name of this.names.keys()) if (path.dirname(name) === absolute) this.durableNames.add(name);
    });
  }

  tryLock(fd: Fd): boolean {
    return this.call('tryLock', () => {
      const { inode } = this.file(fd, 'fcntl');
      if (inode.lockedBy !== null && inode.lockedBy !== fd && this.fds.has(inode.lockedBy)) return false;
      inode.lockedBy = fd;
      return true;
    });
  }
}

/** `data` with `bytes` written at `position` (a hole before it reads as zeros). */
function overlayAt(data: Buffer, position: number, bytes: Buffer): Buffer {
  const out: Buffer =
    data.length >= position + bytes.length ? Buffer.from(data) : resize(data, position + bytes.length);
  bytes.copy(out, position);
  return out;
}

/** `data` cut or extended with zeros to `length`. */
function resize(data: Buffer, length: number): Buffer {
  if (length <= data.length) return Buffer.from(data.subarray(0, length));
  const out = Buffer.alloc(length);
  data.copy(out);
  return out;
}

/** The file's contents as the page cache had them: stable (`[0]`), then after each pending operation. */
export function imagesOf(file: FileState): Buffer[] {
  const images = [file.synced];
  let current = file.synced;
  for (const op of file.pending) {
    current = op.kind === 'write' ? overlayAt(current, op.offset, op.bytes) : resize(current, op.length);
    images.push(current);
  }
  return images;
}

/** A state a power loss may leave of a file: see the model at the top. */
export interface CrashChoice {
  /** The file's size. */
  readonly size: number;
  /** The version (an index into {@link imagesOf}) of each sector from `firstSector` on; the last one's for those after. */
  readonly versions: readonly number[];
  readonly filler: Filler;
  /** How it came about, for messages. */
  readonly how: string;
}

/** The bytes `[at, end)` of `image`, zeros past its end. */
function sectorOf(image: Buffer, at: number, end: number): Buffer {
  const out = Buffer.alloc(end - at);
  if (image.length > at) image.copy(out, 0, at, Math.min(end, image.length));
  return out;
}

/** The first sector that a pending operation may have changed. */
export function firstSector(file: FileState): number {
  let first = file.synced.length;
  for (const op of file.pending) first = Math.min(first, op.kind === 'write' ? op.offset : op.length);
  return Math.floor(first / SECTOR);
}

/** `n` bytes of `filler`. */
export function fill(filler: Filler, n: number, rng: Random): Buffer {
  const out = Buffer.alloc(n);
  if (filler === 'zeros') return out;
  for (let i = 0; i < n; i++) {
    let byte = rng.u32() & 0xff;
    if (byte === 10 && filler === 'garbage without newlines') byte = 0x8a;
    out[i] = byte;
  }
  return out;
}

/** The bytes a power loss leaves of `file` in state `choice` (garbage from `rng`). */
export function materialize(
  file: FileState,
  choice: CrashChoice,
  rng: Random,
  images: readonly Buffer[] = imagesOf(file),
): Buffer {
  const stable = images[0] as Buffer;
  const out = Buffer.alloc(choice.size);
  const first = firstSector(file) * SECTOR;
  stable.copy(out, 0, 0, Math.min(first, choice.size, stable.length));
  /** The first byte of a block the file did not have at its sync. */
  const fresh = Math.ceil(stable.length / BLOCK) * BLOCK;
  const last = images.length - 1;
  for (let at = first, s = 0; at < choice.size; at += SECTOR, s++) {
    const version = Math.min(choice.versions[s] ?? last, last);
    const image = images[version] as Buffer;
    const end = Math.min(at + SECTOR, choice.size);
    if (image.length > at) image.copy(out, at, at, Math.min(end, image.length));
    const from = Math.max(at, image.length);
    if (from < end && version === 0 && choice.filler !== 'zeros') {
      // never written, in a block allocated since the sync: what the block held before
      const start = Math.max(from, fresh);
      if (start < end) fill(choice.filler, end - start, rng).copy(out, start);
    }
  }
  return out;
}

/**
 * Sizes inside each append that the last images leave torn: every byte (`every`), or the cut
 * points that stand for them (the first and last byte, the middle, around each newline, sector
 * boundaries, inside the first multi-byte character).
 */
function tornSizes(file: FileState, images: readonly Buffer[], every: boolean): number[] {
  const sizes = new Set<number>();
  file.pending.forEach((op, n) => {
    const before = (images[n] as Buffer).length;
    const after = (images[n + 1] as Buffer).length;
    if (op.kind !== 'write' || after <= before) return;
    if (every) {
      for (let size = before + 1; size < after; size++) sizes.add(size);
      return;
    }
    const bytes = (images[n + 1] as Buffer).subarray(before, after);
    const cuts = new Set<number>([1, bytes.length - 1, bytes.length >> 1]);
    for (let k = bytes.indexOf(10); k !== -1; k = bytes.indexOf(10, k + 1))
      for (const c of [k, k + 1, k + 2]) cuts.add(c);
    for (let k = SECTOR - (before % SECTOR); k < bytes.length; k += SECTOR) cuts.add(k);
    const continuation = bytes.findIndex((b) => b >= 0x80 && b < 0xc0);
    if (continuation > 0) cuts.add(continuation);
    for (const k of cuts) if (k > 0 && k < bytes.length) sizes.add(before + k);
  });
  return [...sizes].sort((a, b) => a - b);
}

/**
 * The states a power loss may leave of `file`: the size of each image, and the cut points that
 * stand for the torn sizes of each append, each with every combination of sector versions that
 * differ below it (all of them up to `combinations`, else the in-order ones and a random
 * sample), with each filler where a fresh block is left unwritten; and with `every`, every other
 * torn size (each byte of each append), its sectors as that append left them.
 */
export function crashChoices(file: FileState, every: boolean, combinations: number, rng: Random): CrashChoice[] {
  const images = imagesOf(file);
  const last = images.length - 1;
  if (last === 0) return [{ size: file.synced.length, versions: [], filler: 'zeros', how: 'nothing pending' }];
  const first = firstSector(file);
  const out: CrashChoice[] = [];
  const fresh = Math.ceil(file.synced.length / BLOCK) * BLOCK;
  const representative = tornSizes(file, images, false);
  const sizes = [...new Set([...images.map((image) => image.length), ...representative])].sort((a, b) => a - b);
  for (const size of sizes) {
    // each sector's versions that differ below the size (the same bytes are the same state)
    const distinct: number[][] = [];
    for (let at = first * SECTOR; at < size; at += SECTOR) {
      const end = Math.min(at + SECTOR, size);
      const seen: Buffer[] = [];
      const versions: number[] = [];
      for (let v = 0; v <= last; v++) {
        const image = images[v] as Buffer;
        // version 0 past the stable end of a fresh block is the filler's, not zeros
        const bytes = v === 0 && Math.max(at, fresh) < end ? null : sectorOf(image, at, end);
        if (bytes !== null && seen.some((b) => b.equals(bytes))) continue;
        if (bytes !== null) seen.push(bytes);
        versions.push(v);
      }
      distinct.push(versions);
    }
    const total = distinct.reduce((n, d) => n * d.length, 1);
    const assignments: number[][] = [];
    if (total <= combinations) {
      for (let code = 0; code < total; code++) {
        let c = code;
        assignments.push(
          distinct.map((d) => {
            const v = d[c % d.length] as number;
            c = Math.floor(c / d.length);
            return v;
          }),
        );
      }
    } else {
      // in order: every sector at one version; then sectors landed up to a point; then at random
      for (let v = 0; v <= last; v++) assignments.push(distinct.map(() => v));
      for (let upTo = 1; upTo < distinct.length; upTo++)
        assignments.push(distinct.map((_, s) => (s < upTo ? last : 0)));
      while (assignments.length < combinations) assignments.push(distinct.map((d) => rng.pick(d)));
    }
    for (const versions of assignments) {
      // a filler matters only where a fresh block is left at version 0 below the size
      const unwrittenFresh = versions.some(
        (v, s) => v === 0 && Math.max((first + s) * SECTOR, fresh) < Math.min((first + s + 1) * SECTOR, size),
      );
      const how = `size ${size}, sectors from ${first} at versions ${versions.join('') || '-'} of ${last}`;
      for (const filler of unwrittenFresh ? FILLERS : (['zeros'] as const))
        out.push({ size, versions, filler, how: unwrittenFresh ? `${how}, fresh blocks ${filler}` : how });
    }
  }
  const covered = new Set(sizes);
  for (const size of every ? tornSizes(file, images, true) : []) {
    if (covered.has(size)) continue;
    // the sectors of a torn append as the append that grew the file past `size` left them
    const version = images.findIndex((image) => image.length > size);
    const sectors = Math.max(0, Math.ceil(size / SECTOR) - first);
    out.push({
      size,
      versions: Array.from({ length: sectors }, () => version),
      filler: 'zeros',
      how: `torn at ${size} (version ${version} of ${last})`,
    });
  }
  return out;
}
