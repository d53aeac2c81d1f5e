/**
 * A Node.js system error in words, as `strerror` says it, with its name: what a
 * {@link LedgerIoError} reports, and what the command line prints for a failure it did not
 * expect. Even where Node.js has no name for an errno (it says `UNKNOWN`), the system's table
 * has one, and an operator over quota must be told so. And the other way: a system error made
 * as Node.js makes them, for a refusal of the library's own that must read as the system's would.
 *
 * @module
 */
import { constants as osConstants } from 'node:os';
import { getSystemErrorMap } from 'node:util';

/**
 * What `strerror` says of the errnos that libuv has no name for, so that Node.js reports them as
 * `UNKNOWN` (an operator over quota must be told so).
 */
const UNNAMED_BY_LIBUV: { readonly [name: string]: string } = {
  EDQUOT: 'disk quota exceeded',
  ENOLCK: 'no locks available',
  ESTALE: 'stale file handle',
  EREMOTEIO: 'remote i/o error',
};

/** The name of a (negative, as Node.js gives it) errno, from the system's table. */
function errnoName(errno: number): string | undefined {
  return Object.entries(osConstants.errno).find(([, value]) => value === -errno)?.[0];
}

/** A system error's name (`ENOENT`, `EDQUOT`, ...), even where Node.js says `UNKNOWN`. */
export function systemErrorName(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { errno, code } = error as NodeJS.ErrnoException;
  if ((code === undefined || code === 'UNKNOWN') && typeof errno === 'number') return errnoName(errno) ?? code;
  return code;
}

/** Describes a Node.js system error the way `strerror` does, with its name: `no such file or directory (ENOENT)`. */
export function describeSystemError(error: unknown): string {
  if (error instanceof Error) {
    const { errno, code } = error as NodeJS.ErrnoException;
    if (typeof errno === 'number') {
      const known = getSystemErrorMap().get(errno);
      if (known !== undefined) return `${known[1]} (${known[0]})`;
      const name = errnoName(errno);
      if (name !== undefined) return `${UNNAMED_BY_LIBUV[name] ?? `system error ${-errno}`} (${name})`;
    }
    if (typeof code === 'string')
      return `${error.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')} (${code})`;
    return error.message;
  }
  return String(error);
}

/**
 * The error `node:fs` throws when the system call `syscall` fails with `code` (on `path`), made
 * exactly as Node.js makes it (`uvException`): the code and libuv's words for it, and for an
 * errno that libuv has no name for (EDQUOT, ENOLCK, ... in Node 20) code `UNKNOWN` and
 * "unknown error", with the errno alone saying which.
 */
export function systemError(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const errno = -((osConstants.errno as { readonly [code: string]: number })[code] ?? 0);
  const [name, words] = getSystemErrorMap().get(errno) ?? ['UNKNOWN', 'unknown error'];
  const error: NodeJS.ErrnoException = new Error(
    `${name}: ${words}, ${syscall}${path === undefined ? '' : ` '${path}'`}`,
  );
  return Object.assign(error, { errno, code: name, syscall }, path === undefined ? {} : { path });
}
