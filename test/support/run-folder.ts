/**
 * What the test files of one run share, in the run's folder (`LEDGERSTORE_TEST_RUN_DIR`, which
 * `run.ts` makes and removes at the end): a thing made once, by the first file that asks, for
 * the others to copy (a fresh PostgreSQL cluster, an install of the packed checkout).
 *
 * The first to ask takes `<name>.lock` (a `mkdir`, which one process wins), makes the thing in
 * a folder of its own, and renames it to `<name>`; the others wait for that name, so that no one
 * sees half of it, and give up (`null`: make your own) when the maker fails (it removes the lock)
 * or takes longer than `waitMs`.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** How long a file waits, by default, for another to make what it asked for. */
const WAIT_MS = 300_000;

/**
 * The folder `name` of the run's folder, made by `make(folder)` if no file of the run has made
 * it; `null` outside the runner, or when another file's making failed or took over `waitMs`.
 * @throws what `make` throws, when this file is the one making it
 */
export function madeOncePerRun(name: string, make: (folder: string) => void, waitMs = WAIT_MS): string | null {
  const run = process.env.LEDGERSTORE_TEST_RUN_DIR;
  if (run === undefined || run === '') return null;
  const made = join(run, name);
  if (existsSync(made)) return made;
  const lock = `${made}.lock`;
  try {
    mkdirSync(lock);
  } catch {
    const until = Date.now() + waitMs;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!existsSync(made) && existsSync(lock) && Date.now() < until) Atomics.wait(pause, 0, 0, 100);
    return existsSync(made) ? made : null;
  }
  const making = mkdtempSync(`${made}-`);
  try {
    make(making);
    renameSync(making, made);
  } catch (e) {
    rmSync(making, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
    throw e;
  }
  return made;
}
