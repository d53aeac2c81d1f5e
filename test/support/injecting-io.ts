/**
 * A {@link FileIO} over the real file system that injects faults, for the tests of what the JSONL
 * backend does when the system fails it: the one fault-injecting file layer.
 *
 * - A fault given when it is made (the I/O-error harness, test/crash/io-errors.test.ts): the Nth
 *   call of a kind fails, once or from then on, with a given error code; or the Nth write is made
 *   short (and, if asked, the writes after it fail, as a disk that fills up mid-write does).
 * - Faults armed as a test goes ({@link InjectingIO.fail}, {@link InjectingIO.shortenWrites}):
 *   the Nth call of a kind from now fails, or the next writes are short.
 *
 * It keeps a trace of every call (which failed, on which kind), counts the calls of each kind,
 * and tracks the descriptors open, so that a leak shows. A failed `close` still closes the
 * descriptor, as Linux's does (the descriptor is released whatever `close` reports). The errors
 * are Node's own, as `node:fs` would throw them (`systemError`).
 */

import { constants } from 'node:os';
import { getSystemErrorMap } from 'node:util';
import { type Fd, type FileIO, type FileStatus, nodeFileIO } from '../../lib/file-io.js';
import { systemError } from '../../lib/system-errors.js';

/** Whether libuv has a name for `code` (else Node reports it as `UNKNOWN`). */
export const libuvKnows = (code: string): boolean =>
  getSystemErrorMap().has(-((constants.errno as { [code: string]: number })[code] ?? 0));

export type Call = keyof FileIO;

/** The system call behind each call, as Node names it in its errors. */
const SYSCALLS: { readonly [call in Call]: string } = {
  openRead: 'open',
  openReadWrite: 'open',
  create: 'open',
  size: 'fstat',
  status: 'fstat',
  statusOf: 'stat',
  realPath: 'realpath',
  read: 'read',
  write: 'write',
  datasync: 'fdatasync',
  truncate: 'ftruncate',
  close: 'close',
  syncDirectory: 'fsync',
  tryLock: 'fcntl',
};

/** Every call of the interface, in the order the harness reports them. */
export const CALLS: readonly Call[] = [
  'statusOf',
  'openRead',
  'openReadWrite',
  'create',
  'status',
  'size',
  'read',
  'write',
  'datasync',
  'truncate',
  'realPath',
  'syncDirectory',
  'close',
  'tryLock',
];

/**
 * What to inject. With `thenTruncate`, once the fault has struck, the next `ftruncate` (the cut
 * back of what failed) fails with that code too.
 */
export type Fault =
  /** The `at`th call of `call` (from 1) fails with `code`; with `persistent`, every later one too. */
  | {
      readonly kind: 'fail';
      readonly call: Call;
      readonly at: number;
      readonly code: string;
      readonly persistent: boolean;
      readonly thenTruncate?: string;
    }
  /**
   * The `at`th write writes only half of what it is given (at least a byte) and says so; with a
   * `code`, the write after it fails with that code (every later one with `persistent`).
   */
  | {
      readonly kind: 'short';
      readonly at: number;
      readonly code: string | null;
      readonly persistent: boolean;
      readonly thenTruncate?: string;
    };

/** One call, as the trace keeps it. */
export interface Traced {
  readonly call: Call;
  /** Its number among the calls of its kind, from 1. */
  readonly n: number;
  /** The injected error's code, when it failed by injection; `real` when the system failed it. */
  readonly failed: string | null;
  /** Whether the write was made short. */
  readonly short: boolean;
}

/** A fault armed by {@link InjectingIO.fail}: the call (of its kind) that fails, counted from 1 since it was made. */
interface Armed {
  readonly at: number;
  readonly code: string;
  readonly persistent: boolean;
}

export class InjectingIO implements FileIO {
  readonly trace: Traced[] = [];
  /** The descriptors open now. */
  readonly open = new Set<Fd>();
  /** Whether faults are injected (the harness turns them off to check what is left). */
  active = true;
  private readonly counts = new Map<Call, number>();
  private readonly armed = new Map<Call, Armed>();
  /** How many of the next writes are made short. */
  private shortWrites = 0;
  /** Writes from this one (by number) on fail, after a short write with a code. */
  private writesFailFrom: { readonly at: number; readonly code: string; readonly persistent: boolean } | null = null;
  /** The code the next truncate fails with, once the fault struck (`thenTruncate`). */
  private truncateFails: string | null = null;

  constructor(readonly fault: Fault | null = null) {}

  count(call: Call): number {
    return this.counts.get(call) ?? 0;
  }

  /** Fails the `at`th call (from 1) of `call` from now, with `code`; with `persistent`, every later one too. */
  fail(call: Call, at = 1, code = 'EIO', persistent = false): this {
    this.armed.set(call, { at: this.count(call) + at, code, persistent });
    return this;
  }

  /** Makes the next `n` writes write only half of what they are given (at least a byte). */
  shortenWrites(n: number): this {
    this.shortWrites = n;
    return this;
  }

  /** How many calls failed by injection. */
  get injected(): number {
    return this.trace.filter((t) => t.failed !== null && t.failed !== 'real').length;
  }

  /** Runs one call: counts it, injects its fault, traces it. */
  private run<T>(call: Call, body: (short: boolean) => T): T {
    const n = this.count(call) + 1;
    this.counts.set(call, n);
    const fault = this.active ? this.fault : null;
    let failWith: string | null = null;
    let short = false;
    if (
      fault !== null &&
      fault.kind === 'fail' &&
      fault.call === call &&
      (n === fault.at || (fault.persistent && n > fault.at))
    )
      failWith = fault.code;
    const armed = this.active ? this.armed.get(call) : undefined;
    if (armed !== undefined && (n === armed.at || (armed.persistent && n > armed.at))) failWith = armed.code;
    if (call === 'write' && this.active && this.shortWrites > 0 && failWith === null) {
      this.shortWrites--;
      short = true;
    }
    if (fault !== null && fault.kind === 'short' && call === 'write') {
      if (n === fault.at) {
        short = true;
        if (fault.code !== null) this.writesFailFrom = { at: n + 1, code: fault.code, persistent: fault.persistent };
      }
      const from = this.writesFailFrom;
      if (from !== null && (n === from.at || (from.persistent && n > from.at))) failWith = from.code;
    }
    if (call === 'truncate' && this.truncateFails !== null) {
      failWith = this.truncateFails;
      this.truncateFails = null;
    } else if (failWith !== null && fault?.thenTruncate !== undefined) {
      this.truncateFails = fault.thenTruncate;
    }
    if (failWith !== null) {
      this.trace.push({ call, n, failed: failWith, short: false });
      throw systemError(failWith, SYSCALLS[call]);
    }
    try {
      const result = body(short);
      this.trace.push({ call, n, failed: null, short });
      return result;
    } catch (e) {
      this.trace.push({ call, n, failed: 'real', short });
      throw e;
    }
  }

  private opened(fd: Fd): Fd {
    this.open.add(fd);
    return fd;
  }

  openRead(path: string): Fd {
    return this.run('openRead', () => this.opened(nodeFileIO.openRead(path)));
  }
  openReadWrite(path: string): Fd {
    return this.run('openReadWrite', () => this.opened(nodeFileIO.openReadWrite(path)));
  }
  create(path: string, mode: number): Fd {
    return this.run('create', () => this.opened(nodeFileIO.create(path, mode)));
  }
  size(fd: Fd): number {
    return this.run('size', () => nodeFileIO.size(fd));
  }
  status(fd: Fd): FileStatus {
    return this.run('status', () => nodeFileIO.status(fd));
  }
  statusOf(path: string): FileStatus {
    return this.run('statusOf', () => nodeFileIO.statusOf(path));
  }
  realPath(path: string): string {
    return this.run('realPath', () => nodeFileIO.realPath(path));
  }
  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return this.run('read', () => nodeFileIO.read(fd, buffer, offset, length, position));
  }
  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return this.run('write', (short) =>
      nodeFileIO.write(fd, buffer, offset, short ? Math.max(1, length >> 1) : length, position),
    );
  }
  datasync(fd: Fd): void {
    this.run('datasync', () => nodeFileIO.datasync(fd));
  }
  truncate(fd: Fd, length: number): void {
    this.run('truncate', () => nodeFileIO.truncate(fd, length));
  }
  close(fd: Fd): void {
    try {
      this.run('close', () => undefined);
    } finally {
      // released whatever close says
      this.open.delete(fd);
      nodeFileIO.close(fd);
    }
  }
  syncDirectory(path: string): void {
    this.run('syncDirectory', () => nodeFileIO.syncDirectory(path));
  }
  tryLock(fd: Fd): boolean {
    return this.run('tryLock', () => nodeFileIO.tryLock(fd));
  }
}
