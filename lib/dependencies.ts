/**
 * The dependencies that only some opens need, each loaded on its first use rather than when
 * `ledgerstore` is imported: LevelDB (classic-level, its abstract-level base), memory-level,
 * cbor-x, and fs-native-extensions (the lock of a writer). A read of a JSONL ledger needs none
 * of them, and loading them costs a command of the CLI about a third of its start (0.09 of
 * 0.3 s of CPU, measured with `node -e` on this machine).
 *
 * Each is taken by `require` of its package's entry (all four are CommonJS, or ship a CommonJS
 * build: cbor-x's `require` export), which is what makes a load on first use synchronous: the
 * calls that need them (a lock, a database's constructor, an encoder) are.
 *
 * @module
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `load()`, called once, on the first call of the function it gives. */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/** classic-level: `ClassicLevel`, LevelDB in a folder. */
export const classicLevel = onFirstUse(() => require('classic-level') as typeof import('classic-level'));

/** memory-level: `MemoryLevel`, a database in memory. */
export const memoryLevel = onFirstUse(() => require('memory-level') as typeof import('memory-level'));

/** abstract-level: the base classes of both. */
export const abstractLevel = onFirstUse(() => require('abstract-level') as typeof import('abstract-level'));

/** cbor-x: `Encoder`, `Decoder`. */
export const cborX = onFirstUse(() => require('cbor-x') as typeof import('cbor-x'));

/** fs-native-extensions: `tryLock`, an open file description's lock. */
export const nativeExtensions = onFirstUse(
  () => require('fs-native-extensions') as typeof import('fs-native-extensions'),
);
