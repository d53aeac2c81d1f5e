/**
 * Where a PostgreSQL log lives: a connection URI as node-postgres takes it
 * (`postgres://user:password@host:port/database?...` or `postgresql://...`), with two more query
 * parameters that name the log inside the database, or the same as an object.
 *
 * - `log=<name>` (default `honcho`): several ledgers share one database, one log each. A name is
 *   1 to 48 of `A-Z a-z 0-9 . _ -`, so that `<schema>.<log>`, the log's notification channel,
 *   fits PostgreSQL's 63 bytes.
 * - `schema=<name>` (default `ledgerstore`): the schema that holds ledgerstore's tables and
 *   function, 1 to 14 of `a-z 0-9 _`, not starting with a digit.
 * - `timeout=<n>ms` or `<n>s` (a bare number is milliseconds): the client's deadline, the longest
 *   any one wait on the server lasts (`Timeouts.deadlineMs`, which it takes the place of). Not
 *   part of the log's name.
 *
 * Everything else in the URI is node-postgres's (`host=/run/postgresql` for a Unix socket,
 * `sslmode`, `application_name`, `options`, ...), and so are the `PG*` environment variables it
 * falls back on. A target that names nothing is refused with {@link TargetError} before any
 * connection is made.
 *
 * @module
 */

import { TargetError } from '../../lib/errors.js';
import { printableTarget } from '../../lib/printable.js';

/** The log a URI names when it has no `log=`. */
export const DEFAULT_LOG = 'honcho';
/** The schema that holds ledgerstore's tables when the URI has no `schema=`. */
export const DEFAULT_SCHEMA = 'ledgerstore';

const LOG_NAME = /^[A-Za-z0-9._-]{1,48}$/;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,13}$/;
const SCHEME = /^postgres(?:ql)?:\/\//i;

/** A PostgreSQL log named by its parts rather than by a URI. */
export interface PostgresServer {
  /** A host name, an address, or a Unix socket's folder (`/run/postgresql`). Default: node-postgres's (`PGHOST`, else localhost). */
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  /** Never shown: the log's name in messages leaves it out. */
  readonly password?: string;
  readonly database?: string;
  /** Default `honcho`. */
  readonly log?: string;
  /** Default `ledgerstore`. */
  readonly schema?: string;
}

/** A log's place, checked: how to connect, which log, and its name for messages. */
export interface PostgresPlace {
  /** What node-postgres connects with: a URI without ledgerstore's parameters, or the parts. */
  readonly connection:
    | { readonly connectionString: string }
    | (Omit<PostgresServer, 'log' | 'schema'> & { readonly options?: string });
  readonly log: string;
  readonly schema: string;
  /** The URI's `timeout=`, in milliseconds, if it has one. */
  readonly deadlineMs?: number;
  /** The URI without its password, for messages. */
  readonly name: string;
}

/** Whether a target string is a PostgreSQL URI (`postgres://` or `postgresql://`). */
export function isPostgresUri(target: string): boolean {
  return SCHEME.test(target);
}

/**
 * The place `target` names.
 * @throws {@link TargetError} when it names no log: not a URI, a log or schema name that is not allowed
 */
export function placeOf(target: string | PostgresServer): PostgresPlace {
  return typeof target === 'string' ? placeOfUri(target) : placeOfParts(target);
}

function placeOfUri(uri: string): PostgresPlace {
  if (!isPostgresUri(uri)) throw new TargetError(uri, 'a PostgreSQL target starts with postgres:// or postgresql://');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // A password can be in it: the message must not repeat the URI.
    throw new TargetError(
      printableTarget(uri),
      /^postgres(ql)?:\/\/[^/?#]*@\//i.test(uri)
        ? 'a user or password needs a host in the URI (for a Unix socket, give them as query parameters: postgresql:///<db>?host=/run/postgresql&user=<user>, and the password in PGPASSWORD or ~/.pgpass, where no listing of processes shows it)'
        : 'not a URI that node-postgres can read (percent-encode @, :, / and ? in a user or password)',
    );
  }
  const log = single(uri, url, 'log', DEFAULT_LOG);
  const schema = single(uri, url, 'schema', DEFAULT_SCHEMA);
  const timeout = url.searchParams.has('timeout') ? single(uri, url, 'timeout', '') : null;
  const name = printableTarget(typedName(uri, url));
  url.searchParams.delete('log');
  url.searchParams.delete('schema');
  url.searchParams.delete('timeout');
  const connectionString = url.href;
  checkNames(name, log, schema);
  if (timeout === null) return { connection: { connectionString }, log, schema, name };
  return { connection: { connectionString }, log, schema, name, deadlineMs: deadlineOf(name, timeout) };
}

/** The longest deadline a timer can hold (about 24.8 days). */
const MAX_DEADLINE_MS = 2 ** 31 - 1;

/** `timeout=`'s milliseconds: `<n>`, `<n>ms` or `<n>s`, at least 1 ms. */
function deadlineOf(name: string, timeout: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(timeout);
  const ms = match === null ? NaN : Math.round(Number(match[1]) * (match[2] === 's' ? 1000 : 1));
  if (!(ms >= 1 && ms <= MAX_DEADLINE_MS))
    throw new TargetError(
      name,
      `timeout=${timeout} is not a deadline: give milliseconds (timeout=5000 or timeout=5000ms) or seconds (timeout=5s), at least 1 ms`,
    );
  return ms;
}

function placeOfParts({ log = DEFAULT_LOG, schema = DEFAULT_SCHEMA, ...connection }: PostgresServer): PostgresPlace {
  const host = connection.host ?? '';
  const at = host.startsWith('/') ? `?host=${readable(host)}` : '';
  const authority = `${connection.user === undefined ? '' : `${encodeURIComponent(connection.user)}@`}${host.startsWith('/') ? '' : host}${connection.port === undefined ? '' : `:${connection.port}`}`;
  const query = `${at === '' ? '?' : `${at}&`}log=${encodeURIComponent(log)}${schema === DEFAULT_SCHEMA ? '' : `&schema=${encodeURIComponent(schema)}`}`;
  const name = `postgres://${authority}/${encodeURIComponent(connection.database ?? '')}${query}`;
  checkNames(name, log, schema);
  return { connection, log, schema, name };
}

/**
 * The log's name: the URI as it was typed, without `timeout=` (not part of the name) and with
 * the default `log=` where none is given, so that it reads as the CLI prints the target typed
 * (a socket folder stays `host=/run/pg` or `host=%2Frun%2Fpg`, whichever was typed).
 */
function typedName(uri: string, url: URL): string {
  const hash = uri.indexOf('#');
  const beforeHash = hash < 0 ? uri : uri.slice(0, hash);
  const q = beforeHash.indexOf('?');
  const pairs = q < 0 ? [] : beforeHash.slice(q + 1).split('&');
  const kept = pairs.filter((pair) => pair !== '' && new URLSearchParams(pair).keys().next().value !== 'timeout');
  if (!url.searchParams.has('log')) kept.push(`log=${DEFAULT_LOG}`);
  return `${q < 0 ? beforeHash : beforeHash.slice(0, q)}?${kept.join('&')}${hash < 0 ? '' : uri.slice(hash)}`;
}

/** A query key or value percent-encoded but for `/` and `:`, which a query may hold as they are (RFC 3986, 3.4). */
function readable(text: string): string {
  return encodeURIComponent(text).replace(/%2F/g, '/').replace(/%3A/g, ':');
}

/** The one value of parameter `key` of `uri` (read as `url`), or `fallback`; a parameter given twice is refused. */
function single(uri: string, url: URL, key: string, fallback: string): string {
  const values = url.searchParams.getAll(key);
  if (values.length > 1) throw new TargetError(printableTarget(uri), `${key}= is given ${values.length} times`);
  return values[0] ?? fallback;
}

function checkNames(name: string, log: string, schema: string): void {
  if (!LOG_NAME.test(log))
    throw new TargetError(name, `the log name ${JSON.stringify(log)} is not 1 to 48 of A-Z a-z 0-9 . _ -`);
  if (!SCHEMA_NAME.test(schema))
    throw new TargetError(
      name,
      `the schema name ${JSON.stringify(schema)} is not 1 to 14 of a-z 0-9 _, not starting with a digit`,
    );
}
