/**
 * SQL text made in TypeScript: literals and identifiers, the keys of the advisory locks, and the
 * schema's `.sql` files filled in for a schema (their variables are psql's, so that a file can
 * be read, and run by hand, with `psql -v schema=... -f`).
 *
 * @module
 */

/**
 * The most records a keyed append goes past (`append()`): a writer further behind meets a
 * conflict, and catches up a page at a time.
 */
export const MAX_PASSED = 1024;

/**
 * The SQLSTATE of an append that failed after its batch was put in the waiting table: the batch
 * may still be written by another writer's commit, so the writer finds out as after a lost
 * connection.
 */
export const WAITED_STATE = 'LSWTD';

/** `text` as an SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A checked schema name as an SQL identifier. */
export function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** What the key of a log's append lock hashes, before the log's name. */
function appendLockPrefix(schema: string): string {
  return `ledgerstore append ${schema}.`;
}

/** What the key of a waiting batch's lock hashes, before the batch's uuid. */
const BATCH_LOCK_PREFIX = 'ledgerstore batch ';

/**
 * The key of the advisory lock that a log's appends take, through their commit, as SQL of
 * `log` (an SQL expression of the log's name).
 */
export function appendLockKey(schema: string, log: string): string {
  return `hashtextextended(${literal(appendLockPrefix(schema))} || ${log}, 0)`;
}

/**
 * The key of the lock a waiting batch's writer holds while it waits, as SQL of `batch` (an SQL
 * expression of the batch's uuid).
 */
export function batchLockKey(batch: string): string {
  return `hashtextextended(${literal(BATCH_LOCK_PREFIX)} || ${batch}::text, 0)`;
}

/** The variables of the schema's `.sql` files, for the schema `schema` whose format is `format`. */
export function schemaVariables(schema: string, format: string): Readonly<Record<string, string>> {
  return {
    schema,
    format,
    channel_prefix: `${schema}.`,
    append_lock_prefix: appendLockPrefix(schema),
    batch_lock_prefix: BATCH_LOCK_PREFIX,
    max_passed: String(MAX_PASSED),
    waited_state: WAITED_STATE,
  };
}

/**
 * `sql` with psql's variables filled in: `:"name"` as an identifier, `:'name'` as a literal,
 * `:name` as it is. A quoted name that `variables` lacks is a mistake in the file, refused; a
 * bare one is left (`::text` and `:=` are SQL's, not variables).
 * @throws Error naming the variable, for a quoted one that `variables` lacks
 */
export function fillIn(sql: string, variables: Readonly<Record<string, string>>): string {
  return sql.replace(
    /(?<![:\w]):(?:"(\w+)"|'(\w+)'|([a-z_]+)\b)/g,
    (whole, quoted?: string, text?: string, bare?: string) => {
      const name = quoted ?? text ?? (bare as string);
      const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
      if (value === undefined) {
        if (bare !== undefined) return whole;
        throw new Error(`the SQL names a variable :${whole.slice(1)} that is not given`);
      }
      return quoted !== undefined ? identifier(value) : text !== undefined ? literal(value) : value;
    },
  );
}
