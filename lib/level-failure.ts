/**
 * A failure of classic-level's, as a ledger error.
 *
 * @module
 */
import { type LedgerError, LedgerIoError, LevelFolderDamagedError, LockedError, type LockHolder } from './errors.js';

/** The error inside abstract-level's `LEVEL_DATABASE_NOT_OPEN`, which says why. */
export function causeOf(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'LEVEL_DATABASE_NOT_OPEN' && e instanceof Error && e.cause !== undefined ? e.cause : e;
}

/**
 * A failure of a LevelDB database (`name`'s: a ledger's log, or a read model), as a ledger
 * error: another holder's lock, a corruption LevelDB found (damage, with its words), or I/O.
 */
export function levelFailure(name: string, e: unknown, holder: LockHolder): LedgerError {
  const cause = causeOf(e);
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'LEVEL_LOCKED') return new LockedError(name, { cause, holder });
  if (code === 'LEVEL_CORRUPTION')
    return new LevelFolderDamagedError(name, null, `LevelDB finds it damaged: ${(cause as Error).message}`, { cause });
  return new LedgerIoError(name, cause);
}
