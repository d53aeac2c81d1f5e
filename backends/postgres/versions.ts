/**
 * The schema's versions: which one a database holds, the migrations that bring an older one to
 * this ledgerstore's, and the refusals of those it does not read.
 *
 * `meta` has one row: `format` and `version`. This ledgerstore writes {@link FORMAT} version
 * {@link SCHEMA_VERSION}. Each version is a `.sql` file of `sql/`, read at run time (the build
 * copies them into `dist/`): `v1.sql` makes the schema, and each later one would migrate from the
 * version before it. The pre-release builds wrote {@link PRE_RELEASE_FORMAT}, versions 1 to 5,
 * never published: such a schema is refused ({@link PreReleaseSchemaError}), for the runbook's
 * copy, not migrated.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { DamagedError, LedgerError } from '../../lib/errors.js';
import { type Queryable, serverFailure } from './connection.js';
import { fillIn, identifier, schemaVariables } from './sql-text.js';
import type { PostgresPlace } from './uri.js';

/** What `meta.format` says of a ledgerstore schema. */
export const FORMAT = 'ledgerstore/postgres';
/** What `meta.format` said of the schemas of ledgerstore's pre-release builds (versions 1 to 5). */
export const PRE_RELEASE_FORMAT = 'ledgerstore/pg';

/** A step from the version before it (or from no schema) to `version`. */
export interface Migration {
  readonly version: number;
  readonly what: string;
  /** Its SQL, one or more statements, with the variables of `schemaVariables`. */
  readonly file: URL;
}

/**
 * Every version's step, oldest first. A new version adds one at the end (its file
 * `sql/v<version>.sql`) and never changes an earlier one: a database at that version has run it
 * already. (The schema itself is created before the first step, if it is missing.)
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    what: 'the schema: meta, logs, records, waiting, place(), settle() and append()',
    file: new URL('./sql/v1.sql', import.meta.url),
  },
];

/** The version of the schema that this ledgerstore writes and reads: its last migration's. */
export const SCHEMA_VERSION = (MIGRATIONS[MIGRATIONS.length - 1] as Migration).version;

/**
 * A schema made by a pre-release build of ledgerstore ({@link PRE_RELEASE_FORMAT}): refused for
 * any open, read-only too, and nothing is changed. Its ledger is copied out with the build that
 * made it and back in with this one (the runbook's `postgres-pre-release-schema`).
 */
export class PreReleaseSchemaError extends LedgerError {
  readonly code = 'LEDGER_OLD_FORMAT';
  override readonly runbook = 'postgres-pre-release-schema';
  /**
   * @param ledger the log's URI, without its password
   * @param schema the schema's name
   * @param version the pre-release version it holds
   */
  constructor(
    readonly ledger: string,
    readonly schema: string,
    readonly version: number,
  ) {
    super(
      `${ledger}: the schema ${schema} was made by a pre-release build of ledgerstore (format ${PRE_RELEASE_FORMAT}, version ${version}), which this ledgerstore neither reads nor migrates (it reads ${FORMAT} version ${SCHEMA_VERSION}); ` +
        'copy each log out with the build that made it (ledgerstore copy <uri> <file>.jsonl), drop the schema or use another, and copy the logs back with this one; see docs/runbook.md#postgres-pre-release-schema',
    );
  }
}

/**
 * The schema's version, or `null` when it has no `meta` table (no ledgerstore schema yet).
 * @throws {@link PreReleaseSchemaError} for a pre-release schema; {@link DamagedError} for a `meta` that is not ledgerstore's
 */
export async function versionOf(db: Queryable, place: PostgresPlace): Promise<number | null> {
  const s = identifier(place.schema);
  const {
    rows: [present],
  } = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [`${s}.meta`]);
  if (present?.present !== true) return null;
  const { rows } = await db.query<{ format: string; version: number }>(`SELECT format, version FROM ${s}.meta`);
  const ours = rows.find((row) => row.format === FORMAT);
  if (ours !== undefined) return ours.version;
  const early = rows.find((row) => row.format === PRE_RELEASE_FORMAT);
  if (early !== undefined) throw new PreReleaseSchemaError(place.name, place.schema, early.version);
  throw new DamagedError(
    place.name,
    0,
    `the schema ${place.schema} has a meta table that is not ledgerstore's (no ${FORMAT} row): not a schema that ledgerstore made`,
  );
}

/** Damage: a schema of a version that this ledgerstore cannot read as it is. */
export function otherVersion(place: PostgresPlace, version: number, writable: boolean): DamagedError {
  const what =
    version > SCHEMA_VERSION
      ? 'a later ledgerstore made it; use that version, or a later one'
      : writable
        ? 'it has no migration to this version'
        : 'open it for writing once, which migrates it';
  return new DamagedError(
    place.name,
    0,
    `the schema ${place.schema} is in version ${version} of ledgerstore's PostgreSQL format, which this ledgerstore does not read (it reads version ${SCHEMA_VERSION}): ${what}`,
  );
}

/** The files' texts, read once each. */
const texts = new Map<string, Promise<string>>();

/**
 * Runs the migrations after `from` (`null`: no schema, which is created), in order, each
 * setting `meta.version`, in the caller's transaction: on a failure the caller rolls back and
 * nothing is changed. `migrations` is {@link MIGRATIONS} but in a test of the runner.
 * @throws `LedgerIoError` naming the step that failed
 */
export async function migrate(
  db: Queryable,
  place: PostgresPlace,
  from: number | null,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  const s = identifier(place.schema);
  const variables = schemaVariables(place.schema, FORMAT);
  let doing = `looking at the schema ${place.schema}`;
  try {
    if (from === null) {
      const {
        rows: [there],
      } = await db.query<{ there: boolean }>('SELECT to_regnamespace($1) IS NOT NULL AS there', [s]);
      doing = `creating the schema ${place.schema}`;
      if (there?.there !== true) await db.query(`CREATE SCHEMA ${s}`);
    }
    for (const migration of migrations) {
      if (migration.version <= (from ?? 0)) continue;
      doing = `${from === null ? 'creating' : 'migrating'} the schema ${place.schema} (version ${migration.version}: ${migration.what})`;
      const key = migration.file.href;
      let text = texts.get(key);
      if (text === undefined) {
        text = readFile(migration.file, 'utf8');
        texts.set(key, text);
        text.catch(() => texts.delete(key));
      }
      // one simple query of the file's statements, in the caller's transaction
      await db.query(fillIn(await text, variables));
      await db.query(`UPDATE ${s}.meta SET version = $1 WHERE format = $2`, [migration.version, FORMAT]);
    }
  } catch (e) {
    throw serverFailure(place.name, doing, e);
  }
}
