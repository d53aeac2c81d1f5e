/**
 * A {@link FileIO} over the real file system that fails chosen calls: the Nth call of a kind,
 * once or from then on, with a given error code, and can make writes short.
 */
import { constants } from 'node:os';
import { type Fd, type FileIO, type FileStatus, nodeFileIO } from '../../backends/file-io.js';

export type Call = keyof FileIO;

/** A system error as Node.js makes them (`code`, negative `errno`, `syscall`). */
export function systemError(code: string, syscall: string): NodeJS.ErrnoException {
  const errno = (constants.errno as { [code: string]: number })[code];
  return Object.assign(new Error(`${code}: simulated failure, ${syscall}`), { code, errno: errno === undefined ? undefined : -errno, syscall });
}

interface Fault {
  readonly at: number;
  readonly code: string;
  readonly persistent: boolean;
}

export class FaultyIO implements FileIO {
  /** How many calls of each kind were made (failed ones included). */
  readonly calls = new Map<Call, number>();
  private readonly faults = new Map<Call, Fault>();
  private shortWrites = 0;
  /** The descriptors open now. */
  readonly open = new Set<Fd>();

  /** Fails the `at`th call (from 1) of `call` from now, with `code`; with `persistent`, every later one too. */
  fail(call: Call, at = 1, code = 'EIO', persistent = false): this {
    this.faults.set(call, { at: this.count(call) + at, code, persistent });
    return this;
  }

  /** Makes the next `n` writes write only half of what they are given. */
  shortenWrites(n: number): this {
    this.shortWrites = n;
    return this;
  }

  count(call: Call): number {
    return this.calls.get(call) ?? 0;
  }

  private enter(call: Call): void {
    const n = this.count(call) + 1;
    this.calls.set(call, n);
    const fault = this.faults.get(call);
    if (fault !== undefined && (n === fault.at || (fault.persistent && n > fault.at))) throw systemError(fault.code, call);
  }

  private opened(fd: Fd): Fd {
    this.open.add(fd);
    return fd;
  }

  openRead(path: string): Fd {
    this.enter('openRead');
    return this.opened(nodeFileIO.openRead(path));
  }
  openReadWrite(path: string): Fd {
    this.enter('openReadWrite');
    return this.opened(nodeFileIO.openReadWrite(path));
  }
  create(path: string, mode: number): Fd {
    this.enter('create');
    return this.opened(nodeFileIO.create(path, mode));
  }
  size(fd: Fd): number {
    this.enter('size');
    return nodeFileIO.size(fd);
  }
  status(fd: Fd): FileStatus {
    this.enter('status');
    return nodeFileIO.status(fd);
  }
  statusOf(path: string): FileStatus {
    this.enter('statusOf');
    return nodeFileIO.statusOf(path);
  }
  realPath(path: string): string {
    this.enter('realPath');
    return nodeFileIO.realPath(path);
  }
  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    this.enter('read');
    return nodeFileIO.read(fd, buffer, offset, length, position);
  }
  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number {
    this.enter('write');
    if (this.shortWrites > 0 && length > 1) {
      this.shortWrites--;
      return nodeFileIO.write(fd, buffer, offset, Math.floor(length / 2), position);
    }
    return nodeFileIO.write(fd, buffer, offset, length, position);
  }
  datasync(fd: Fd): void {
    this.enter('datasync');
    nodeFileIO.datasync(fd);
  }
  truncate(fd: Fd, length: number): void {
    this.enter('truncate');
    nodeFileIO.truncate(fd, length);
  }
  close(fd: Fd): void {
    this.enter('close');
    this.open.delete(fd);
    nodeFileIO.close(fd);
  }
  syncDirectory(path: string): void {
    this.enter('syncDirectory');
    nodeFileIO.syncDirectory(path);
  }
  tryLock(fd: Fd): boolean {
    this.enter('tryLock');
    return nodeFileIO.tryLock(fd);
  }
}
