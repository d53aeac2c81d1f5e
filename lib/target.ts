/**
 * Where a Honcho ledger lives, named by one string, as `Ledger.open` and every command of the CLI
 * take it:
 *
 * | target | backend |
 * |---|---|
 * | `<path>` | the JSONL file at `<path>` (memoryd's `honcho.jsonl`: the default) |
 * | `jsonl:<path>` | the same, said explicitly |
 * | `level:<folder>` | LevelDB in `<folder>` (classic-level), records in CBOR |
 * | `memory:` | a fresh log in this process's memory (for tests and trials) |
 * | `postgres://...`, `postgresql://...` | a log in a PostgreSQL database: a URI as node-postgres takes it, plus `log=<name>` (default `honcho`) |
 *
 * A string that starts as a URI does (`lvl:x`, `file:///x`, `http://x`: a letter, then letters,
 * digits, `+`, `-` or `.`, then a colon) but with none of these schemes is refused rather than
 * taken for a relative path: a mistyped scheme would otherwise read as an empty ledger. To name
 * a file called `level:x` or `lvl:x`, write `jsonl:level:x` or `./lvl:x`.
 *
 * @module
 */
import { jsonlBackend } from '../backends/jsonl.js';
import { levelBackend } from '../backends/level/index.js';
import { memoryBackend } from '../backends/memory.js';
import { isPostgresUri, postgresBackend } from '../backends/postgres/index.js';
import { TargetError } from './errors.js';
import { honchoCodec } from './honcho/codec.js';
import type { Record } from './honcho/record.js';
import type { LogBackend } from './log.js';
import { printableTarget } from './printable.js';

/** A ledger's location: a path or URI (see the table above), or a backend already made. */
export type Target = string | LogBackend<Record>;

/** The schemes a target string may start with. */
export const SCHEMES = ['jsonl', 'level', 'memory', 'postgres', 'postgresql'] as const;

export { TargetError } from './errors.js';

/** The file a target string names when it is a JSONL ledger (a path or `jsonl:<path>`), else `null`. */
export function jsonlPathOf(target: string): string | null {
  if (/^(level|memory):/.test(target) || isPostgresUri(target)) return null;
  return target.startsWith('jsonl:') ? target.slice('jsonl:'.length) : target;
}

/**
 * The backend that `target` names.
 * @throws {@link TargetError} when the string names nothing
 */
export function backendFor(target: Target): LogBackend<Record> {
  if (typeof target !== 'string') {
    if (typeof (target as Partial<LogBackend<Record>> | null)?.open === 'function') return target;
    throw new TargetError(String(target), 'neither a path or URI nor a backend (an object with open())');
  }
  if (isPostgresUri(target)) return postgresBackend(target, { codec: honchoCodec });
  const unknown = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(target)?.[1];
  // `postgres:x` is a mistyped URI (a password may follow), not a file of that name.
  if (unknown !== undefined && /^postgres(ql)?$/i.test(unknown))
    throw new TargetError(target, `a PostgreSQL target starts with ${unknown}://`);
  if (unknown !== undefined && !(SCHEMES as readonly string[]).includes(unknown.toLowerCase()))
    throw new TargetError(
      target,
      `no ledger has the scheme ${unknown}: (a file of that name is ./${printableTarget(target)})`,
    );
  const scheme = /^(jsonl|level|memory):/.exec(target)?.[1];
  const rest = scheme === undefined ? target : target.slice(scheme.length + 1);
  switch (scheme) {
    case 'memory':
      if (rest !== '') throw new TargetError(target, 'memory: takes nothing after the colon');
      return memoryBackend({ codec: honchoCodec, name: 'memory:' });
    case 'level':
      if (rest === '') throw new TargetError(target, 'level: needs a folder');
      return levelBackend(rest, { codec: honchoCodec });
    default:
      if (rest === '') throw new TargetError(target, 'a path is needed');
      return jsonlBackend(rest, { codec: honchoCodec });
  }
}
