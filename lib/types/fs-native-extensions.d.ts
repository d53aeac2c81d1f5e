// The part of fs-native-extensions that ledgerstore uses (the package ships no types).
declare module 'fs-native-extensions' {
  /**
   * Takes an open file description lock (Linux: `F_OFD_SETLK`) on `fd`: `true` when granted,
   * `false` when another open file description holds it. The kernel releases it on close or exit.
   */
  export function tryLock(fd: number, offset?: number, length?: number, options?: { shared?: boolean }): boolean;
  /** Releases a lock taken with {@link tryLock}. */
  export function unlock(fd: number, offset?: number, length?: number): void;
}
