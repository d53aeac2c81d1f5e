/**
 * Where `gen` and `copy` build the new ledger they are given: beside it, as `<file>.tmp-<pid>`
 * for a JSONL file or `<folder>.tmp-<pid>` for a LevelDB folder, given the ledger's name in one
 * step once it is whole and checked (`backends/built-aside.ts`), so that nothing is ever found at
 * the name half built. A backend with no place beside it (`memory:`) is built in place.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  asidePath,
  discard,
  freeForFile,
  freeForFolder,
  publishFile,
  publishFolder,
  removeLeftovers,
} from '../../backends/built-aside.js';
import { LedgerError, LedgerIoError } from '../errors.js';
import type { Record } from '../honcho/record.js';
import type { LogBackend } from '../log.js';
import { backendFor, jsonlPathOf } from '../target.js';
import { backendAt } from './open.js';
import type { Stderr } from './output.js';

/** A new ledger's place while it is built, and the step that gives it its name. */
export interface Destination {
  /** The ledger as the command line names it. */
  readonly target: string;
  /** The backend the ledger is built in. */
  readonly backend: LogBackend<Record>;
  /** The temporary JSONL file the ledger is built in (for a writer that writes it whole), else `null`. */
  readonly file: string | null;
  /** Whether it is built aside: until {@link publish}, nothing is at the target. */
  readonly aside: boolean;
  /** Gives what was built the target's name (refused if something else appeared there meanwhile). */
  publish(): void;
  /** Removes what was built; whether there was something to remove. */
  discard(): boolean;
}

/**
 * What the command says when the target is taken, given a way to count the records there
 * (`null` when what is there is not a ledger with records).
 */
export type Refusal = (count: () => Promise<number | null>) => Promise<LedgerError>;

/** How many records the ledger at `target` holds, or `null` when it holds none or reads as no ledger. */
async function recordsAt(target: string): Promise<number | null> {
  try {
    const log = await backendFor(target).open({ readOnly: true });
    const head = log.head;
    await log.close();
    return head > 0 ? head : null;
  } catch (e) {
    if (e instanceof LedgerError) return null;
    throw e;
  }
}

/** Checks that the folder a file or folder is to be made in is there: else the target is reported, not the temporary name. */
function folderOf(final: string): void {
  try {
    fs.opendirSync(path.dirname(path.resolve(final))).closeSync();
  } catch (e) {
    throw new LedgerIoError(final, e);
  }
}

/**
 * Checks that `target` may take a new ledger (nothing there, an empty file, an empty folder, or
 * a backend built in place), removes what earlier builds for it that did not finish left beside
 * it (saying so on `err`), and gives the place to build it in.
 * @throws the error of `refused` when something else is there (nothing is changed)
 * @throws {@link UsageError} when `target` names no ledger
 */
export async function prepareDestination(target: string, err: Stderr, refused: Refusal): Promise<Destination> {
  const inPlace = backendAt(target);
  const file = jsonlPathOf(target);
  const folder = target.startsWith('level:') ? target.slice('level:'.length) : null;
  const final = file ?? folder;
  if (final === null) {
    return { target, backend: inPlace, file: null, aside: false, publish: () => undefined, discard: () => false };
  }
  folderOf(final);
  try {
    if (file !== null) freeForFile(file);
    else freeForFolder(final);
  } catch (e) {
    if (e instanceof LedgerIoError && (e.errno === 'EEXIST' || e.errno === 'ENOTEMPTY'))
      throw await refused(() => recordsAt(target));
    throw e;
  }
  for (const leftover of removeLeftovers(final))
    err.warn(`removed ${leftover}, left by a gen or copy that did not finish (its process is gone)`);
  const temp = asidePath(final);
  if (file !== null) {
    return {
      target,
      backend: backendFor(`jsonl:${temp}`),
      file: temp,
      aside: true,
      // A JSONL log makes its file at the first append: a ledger of no records has none to publish.
      publish: () => {
        if (fs.existsSync(temp)) publishFile(temp, file);
      },
      discard: () => discard(temp),
    };
  }
  return {
    target,
    backend: backendFor(`level:${temp}`),
    file: null,
    aside: true,
    publish: () => publishFolder(temp, final),
    discard: () => discard(temp),
  };
}
