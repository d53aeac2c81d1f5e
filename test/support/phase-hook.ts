/**
 * A preload for the LevelDB signal harness (`node --import phase-hook.js dist/lib/cli.js ...`):
 * numbers every step the process takes that changes what is on disk — LevelDB's opens, closes,
 * batch writes, puts, deletes and clears, and the file-system calls that create, write, sync,
 * link, rename or delete — and says each on file descriptor 3 before taking it (`step <n>
 * <what>`). With `LEDGERSTORE_STOP_AT=<n>` it says `stop <n> <what>` instead and stops there, for
 * the parent to send its signal at exactly that point: before a LevelDB step by waiting (the
 * event loop runs, so a signal handler would run too), before a file-system call by blocking until
 * the parent says on file descriptor 4 that it has sent the signal (the kernel's default action
 * for the signal ends the process meanwhile; a signal the process listens for is heard after).
 *
 * The process under test is the real one (the CLI's bin, the real LevelDB, the real file
 * system): the hook only counts and holds.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { ClassicLevel } from 'classic-level';

const require = createRequire(import.meta.url);
// the CommonJS object behind `node:fs`, whose functions the ES module namespaces follow once synced
const fs = require('node:fs') as { [name: string]: unknown } & typeof import('node:fs');
const report = fs.writeSync.bind(fs);
const stopAt = Number(process.env.LEDGERSTORE_STOP_AT ?? '0');
const HOLD_MS = 60_000;
let steps = 0;

/** Numbers a step and says it; whether to stop before it. */
function step(what: string): boolean {
  const n = ++steps;
  const stop = n === stopAt;
  report(3, `${stop ? 'stop' : 'step'} ${n} ${what}\n`);
  return stop;
}

const pathOf = (value: unknown): string =>
  typeof value === 'string' ? value.split('/').slice(-2).join('/') : typeof value === 'number' ? `fd ${value}` : '?';

for (const name of [
  'writeFileSync',
  'renameSync',
  'rmSync',
  'unlinkSync',
  'mkdirSync',
  'fsyncSync',
  'fdatasyncSync',
  'linkSync',
  'copyFileSync',
  'ftruncateSync',
]) {
  const original = fs[name] as (...args: unknown[]) => unknown;
  fs[name] = (...args: unknown[]): unknown => {
    if (step(`${name} ${pathOf(args[0])}`)) holdSync();
    return original.apply(fs, args);
  };
}
syncBuiltinESMExports();

type Method = (this: unknown, ...args: unknown[]) => Promise<unknown>;
const prototype = ClassicLevel.prototype as unknown as { [name: string]: Method };
/** The folder of a database, or of a chained batch's database. */
const where = (of: unknown): string =>
  pathOf((of as { location?: unknown }).location ?? (of as { db?: { location?: unknown } }).db?.location);

/**
 * Holds a file-system step, blocking, until the parent has sent its signal and says so on file
 * descriptor 4 (or goes away). A signal whose default action ends the process ends it during the
 * hold; one the process listens for (the CLI's copy cleans up on SIGINT and SIGTERM) is handled at
 * the next turn of the event loop after the step, which is as soon as a real process could.
 */
function holdSync(): void {
  const got = Buffer.alloc(16);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const deadline = Date.now() + HOLD_MS; Date.now() < deadline; ) {
    try {
      fs.readSync(4, got, 0, got.length, null);
      return; // the parent's word, or the end of the pipe
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

/**
 * Holds a LevelDB step until the parent's signal comes. Where the process listens for it (the
 * CLI's copy stops at its next batch and cleans up), the hold ends then and the step goes on, as a
 * real one would end; elsewhere the signal's default action ends the process during the hold. No
 * listener is added where the process has none, which would take that default action away.
 */
function held(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(release, HOLD_MS);
    const heard = (['SIGINT', 'SIGTERM'] as const).filter((signal) => process.listenerCount(signal) > 0);
    function release(): void {
      clearTimeout(timer);
      for (const signal of heard) process.off(signal, release);
      resolve();
    }
    for (const signal of heard) process.on(signal, release);
  });
}

/** Wraps an async method of LevelDB's so that it is a step. */
function stepped(name: string, method: Method): Method {
  return async function (this: unknown, ...args: unknown[]): Promise<unknown> {
    if (step(`leveldb ${name} ${where(this)}`)) await held();
    return method.apply(this, args);
  };
}

for (const name of ['_open', '_close', '_put', '_del', '_batch', '_clear']) {
  prototype[name] = stepped(name.slice(1), prototype[name] as Method);
}
const chained = prototype['_chainedBatch'] as unknown as (this: unknown) => { _write: Method };
(prototype as unknown as { _chainedBatch: (this: unknown) => unknown })._chainedBatch = function (this: unknown) {
  const batch = chained.call(this);
  batch._write = stepped('batch write', batch._write as Method);
  return batch;
};
