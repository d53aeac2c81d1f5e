/**
 * How a Honcho ledger is opened (`ledger.ts`): its options, and their check, which refuses
 * options of the wrong shape with a {@link BadArgumentError} naming the option, before anything
 * is opened.
 *
 * @module
 */
import { BadArgumentError } from '../errors.js';
import type { Db as IndexDatabase } from '../projections/database.js';
import { checkDefinitions, type Loadable, type ProjectionDefinition } from '../projections/definition.js';
import { shown } from './arguments.js';
import { HONCHO_PROJECTIONS } from './read-model/state.js';
import type { Record } from './record.js';

/** How to open a ledger. */
export interface LedgerOptions {
  /**
   * Read without the writer's lock and change nothing of the log: a cut-off last line is
   * ignored, not cut (`repair.cut` is `false`), and `append` is refused. (A read model given
   * with `index` is still brought up to date: it is derived, and this ledgerstore's own.)
   */
  readonly readOnly?: boolean;
  /**
   * A folder for the read model (created if missing): the state is kept there in LevelDB,
   * checkpointed, so that an open reads only what was appended since and queries do not hold
   * the ledger in memory. One process at a time (LevelDB's lock). Or an abstract-level database
   * of bytes the caller made (memory-level for tests), which the ledger leaves open. Default:
   * none, the state is rebuilt in memory at every open, as memoryd's spec has it.
   */
  readonly index?: string | IndexDatabase;
  /**
   * Told, once, of what an operator should know that is not an error: that the read model was
   * built or rebuilt from the log, and why. Default: dropped (a library's output is its
   * caller's; the CLI prints them on stderr).
   */
  readonly onNotice?: (message: string) => void;
  /**
   * Projections to keep beside the ledger's own (`docs/read-model.md` says how to write one):
   * in the read model with `index`, else in memory. Their queries: {@link HonchoLedger.projection}.
   */
  readonly projections?: readonly ProjectionDefinition<Record>[];
  /**
   * With `index`: the open returns only once the read model is ready, building what it must in
   * the open, as `ledgerstore index build` does. Default `false`: a build of a long ledger runs in
   * a worker thread while the ledger serves (answering from an older version of the rows, or from
   * the ledger replayed in memory, meanwhile).
   */
  readonly waitForIndex?: boolean;
  /**
   * How a worker thread opens this ledger's log by itself, read-only, to build the read model
   * there: a module's export that gives the backend. `Ledger.open` sets it for a JSONL file.
   * Without it, builds run in the open.
   */
  readonly worker?: Loadable;
  /** The fewest records a build of the read model runs in the background for. Default 50,000. */
  readonly backgroundFrom?: number;
}

/** Whether `value` is a function. */
const isFunction = (value: unknown): boolean => typeof value === 'function';

/** What each option must be, and how a message says it: the compiler holds the table to `LedgerOptions`' keys. */
const OPTIONS = {
  readOnly: ['a boolean', (v) => typeof v === 'boolean'],
  index: [
    'a folder (a non-empty string) or an abstract-level database',
    (v) =>
      (typeof v === 'string' && v !== '') ||
      (typeof v === 'object' && v !== null && isFunction((v as { open?: unknown }).open)),
  ],
  onNotice: ['a function', isFunction],
  projections: ['an array of projection definitions', Array.isArray],
  waitForIndex: ['a boolean', (v) => typeof v === 'boolean'],
  worker: [
    'a module and an export ({ module, export, args? })',
    (v) => {
      const w = v as { module?: unknown; export?: unknown; args?: unknown } | null;
      return (
        typeof w === 'object' &&
        w !== null &&
        typeof w.module === 'string' &&
        typeof w.export === 'string' &&
        (w.args === undefined || Array.isArray(w.args))
      );
    },
  ],
  backgroundFrom: ['a whole number of at least 0', (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0],
} as const satisfies { readonly [option in keyof Required<LedgerOptions>]: readonly [string, (v: unknown) => boolean] };

/**
 * Refuses options that are not an object, a key that is no option (from JavaScript,
 * `{ readonly: true }` would otherwise open a ledger for writing, its lock taken, where a reader
 * was meant), and an option of the wrong type (`index: 5` would reach LevelDB as a database).
 * An option given as `undefined` is the default.
 * @throws {@link BadArgumentError} naming the option
 */
export function checkLedgerOptions(call: string, options: unknown): asserts options is LedgerOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new BadArgumentError(call, 'options', `options must be an object, not ${shown(options)}`);
  const names = Object.keys(OPTIONS);
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(OPTIONS, key)) {
      const meant = names.find((option) => option.toLowerCase() === key.toLowerCase());
      throw new BadArgumentError(
        call,
        `options.${key}`,
        `${JSON.stringify(key)} is no option${meant === undefined ? '' : ` (${meant}?)`}; the options are ${names.join(', ')}`,
      );
    }
    if (value === undefined) continue;
    const [what, holds] = OPTIONS[key as keyof typeof OPTIONS];
    if (!holds(value))
      throw new BadArgumentError(call, `options.${key}`, `options.${key} must be ${what}, not ${shown(value)}`);
  }
  const { projections } = options as LedgerOptions;
  if (projections === undefined) return;
  for (const [n, definition] of projections.entries()) {
    const d = definition as { name?: unknown; version?: unknown; apply?: unknown } | null;
    if (typeof d !== 'object' || d === null || typeof d.name !== 'string' || !isFunction(d.apply))
      throw new BadArgumentError(
        call,
        'options.projections',
        `options.projections[${n}] must be a projection definition (a name, a version, apply), not ${shown(definition)}`,
      );
  }
  const own = (options as LedgerOptions).index === undefined ? [] : HONCHO_PROJECTIONS.map((p) => p.name);
  const taken = projections.find((definition) => own.includes(definition.name));
  if (taken !== undefined)
    throw new BadArgumentError(
      call,
      'options.projections',
      `options.projections: ${taken.name} is the name of a projection of the read model's own (${own.join(', ')}); name yours otherwise`,
    );
  try {
    checkDefinitions(projections);
  } catch (e) {
    if (e instanceof TypeError)
      throw new BadArgumentError(call, 'options.projections', `options.projections: ${e.message}`);
    throw e;
  }
}
