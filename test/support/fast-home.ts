/**
 * A {@link Home} in a tmpfs (`/dev/shm`) where there is one, for the crash harnesses that open
 * thousands of crash states or fault runs with the real backend: their system calls are real,
 * but thousands of `fdatasync`s on a disk would measure the disk, not the engine. Elsewhere, the
 * usual temporary folder.
 */
import { accessSync, constants } from 'node:fs';
import { Home } from './ledger.js';

/** A fresh {@link Home}, in `/dev/shm` when it is writable. */
export function fastHome(): Home {
  const old = process.env.TMPDIR;
  try {
    try {
      accessSync('/dev/shm', constants.W_OK);
      process.env.TMPDIR = '/dev/shm';
    } catch {
      // no tmpfs: the usual temporary folder
    }
    return new Home();
  } finally {
    if (old === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = old;
  }
}

/** Runs `body` with a {@link fastHome}, removed afterwards whatever happens. */
export async function withFastHome<T>(body: (home: Home) => Promise<T> | T): Promise<T> {
  const home = fastHome();
  try {
    return await body(home);
  } finally {
    home.remove();
  }
}
