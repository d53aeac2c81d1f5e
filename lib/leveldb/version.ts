/**
 * The versions the folder check (`folder.ts` and the formats it reads) was written for, and the
 * refusal under any other: classic-level 3.0.0, which bundles LevelDB 1.20. The check reads
 * LevelDB's own files (write-ahead logs, manifest, tables) below classic-level's API, for what
 * classic-level has no option for (a folder checked before LevelDB changes it, tables checked
 * against their checksums); a LevelDB whose files moved on would be misread, so another version
 * is refused ({@link LevelDbVersionError}) before a byte is read, with what to do. `package.json`
 * pins classic-level exactly, and `test/leveldb-version.test.ts` fails when the installed one,
 * or the LevelDB under it, moves.
 *
 * The installed versions are read once a process: classic-level's from its `package.json`, its
 * LevelDB's from the `include/leveldb/db.h` of the sources it ships (`deps/leveldb/*`), whose
 * `kMajorVersion` and `kMinorVersion` the bundled build was made from. Without those sources
 * (a build that strips them), the LevelDB version is classic-level's to vouch for. Reads files,
 * changes nothing.
 *
 * @module
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { LedgerError, runbookPointer } from '../errors.js';

/** Versions of classic-level and of the LevelDB it bundles. */
export interface LevelDbVersions {
  /** classic-level's `version` (`3.0.0`). */
  readonly classicLevel: string;
  /** LevelDB's `major.minor` (`1.20`); `null` when it cannot be told (no bundled sources). */
  readonly levelDb: string | null;
}

/** What the folder check was written for, and reads files as. */
export const WRITTEN_FOR: LevelDbVersions = { classicLevel: '3.0.0', levelDb: '1.20' };

/**
 * The installed classic-level (or its LevelDB) is not the version ledgerstore's check of a
 * LevelDB folder was written for: the folder is refused, unread and unchanged, rather than
 * misread. Install the classic-level that ledgerstore's `package.json` pins.
 */
export class LevelDbVersionError extends LedgerError {
  readonly code = 'LEDGER_BAD_TARGET';
  override readonly runbook = 'level-folder-damaged';
  constructor(
    readonly folder: string,
    readonly installed: LevelDbVersions,
    readonly writtenFor: LevelDbVersions,
  ) {
    super(
      `${folder}: the installed classic-level ${installed.classicLevel} (LevelDB ${installed.levelDb ?? 'of unknown version'}) is not the one this ledgerstore reads LevelDB folders for (classic-level ${writtenFor.classicLevel}, LevelDB ${writtenFor.levelDb}); ` +
        `nothing was read or changed; install classic-level ${writtenFor.classicLevel} (npm ci), as ledgerstore's package.json pins it; ${runbookPointer('level-folder-damaged')}`,
    );
  }
}

/**
 * The refusal for a folder under `installed` versions, `null` when they are the ones the check
 * was written for (`writtenFor`). A LevelDB version not known is taken as classic-level's.
 */
export function versionRefusal(
  folder: string,
  installed: LevelDbVersions,
  writtenFor: LevelDbVersions = WRITTEN_FOR,
): LevelDbVersionError | null {
  const same =
    installed.classicLevel === writtenFor.classicLevel &&
    (installed.levelDb === null || installed.levelDb === writtenFor.levelDb);
  return same ? null : new LevelDbVersionError(folder, installed, writtenFor);
}

/** The LevelDB version (`major.minor`) a `db.h` declares; `null` when it declares none. */
export function levelDbVersionOf(header: string): string | null {
  const major = /kMajorVersion\s*=\s*(\d+)/.exec(header)?.[1];
  const minor = /kMinorVersion\s*=\s*(\d+)/.exec(header)?.[1];
  return major === undefined || minor === undefined ? null : `${major}.${minor}`;
}

/**
 * The `include/leveldb/db.h` of the LevelDB sources that classic-level (installed at `root`)
 * ships, `null` when there are none. Several would be a classic-level unlike any this knows:
 * the first, sorted, is read, and a version it does not match is refused all the same.
 */
export function bundledHeader(root: string): string | null {
  const deps = path.join(root, 'deps', 'leveldb');
  let names: string[];
  try {
    names = fs.readdirSync(deps).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const header = path.join(deps, name, 'include', 'leveldb', 'db.h');
    if (fs.existsSync(header)) return header;
  }
  return null;
}

let installed: LevelDbVersions | undefined;

/** The installed classic-level's version and its LevelDB's, read once. */
export function installedVersions(): LevelDbVersions {
  if (installed !== undefined) return installed;
  const manifest = createRequire(import.meta.url).resolve('classic-level/package.json');
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version?: unknown };
  const header = bundledHeader(path.dirname(manifest));
  installed = {
    classicLevel: String(version),
    levelDb: header === null ? null : levelDbVersionOf(fs.readFileSync(header, 'utf8')),
  };
  return installed;
}

/**
 * @param installed the versions installed (by default, read from classic-level's files)
 * @throws {@link LevelDbVersionError} when they are not the ones the check was written for
 */
export function assertSupportedVersions(folder: string, installed: LevelDbVersions = installedVersions()): void {
  const refusal = versionRefusal(folder, installed);
  if (refusal !== null) throw refusal;
}
