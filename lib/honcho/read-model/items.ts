/**
 * The projection of every item's state and of decision order: what the rules check an append
 * against, what `isDecided`, `sentIds` and `decisions()` read. It keeps the rules too: a record
 * that breaks them is refused, so that a log read through into it (at open, in a build) is damage
 * at that record's line.
 *
 * Its rows (`lib/projections/layout.ts` says where they are):
 *
 * | key | value |
 * |---|---|
 * | `i<item key>` | the item's state: `"w"` waiting, `"k"` skipped, `"f"` failed, or, sent, the ids of its `sent` record (an array) |
 * | `d<seq>` | the decisions of a batch, from decision `seq` (12 hex digits) on: an array of each one's fields (`decision-rows.ts`) |
 * | `n` | the next decision's number |
 *
 * An append writes one `d` row for its batch; a build, one for each chunk it applies (4,096
 * records), so that decision order costs a build a few thousand rows rather than one a decision.
 * Version 2 writes a decision as an array of its fields; version 1 wrote its item and action as
 * maps, and its rows are built again.
 *
 * @module
 */
import type { ProjectionDefinition } from '../../projections/definition.js';
import type { Decision } from '../projection.js';
import { type Item, itemKey, type Record } from '../record.js';
import { type ItemState, refusal } from '../rules.js';
import { type DecisionTuple, decisionOf, decisionTuple } from './decision-rows.js';

/** What the items projection answers. */
export interface ItemQueries {
  /** The items' states (`undefined`: not decided), in the items' order. */
  statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]>;
  isDecided(item: Item): Promise<boolean>;
  /** The ids of the item's `sent` record, or `null`. */
  sentIds(item: Item): Promise<readonly string[] | null>;
  /** Every decided item with its action, in decision order. */
  decisions(): AsyncIterable<Decision>;
}

/** An item's row: its state, or a sent item's ids. */
type StateRow = 'w' | 'k' | 'f' | readonly string[];

const STATE_OF: { readonly [code in 'w' | 'k' | 'f']: ItemState } = { w: 'waiting', k: 'skipped', f: 'failed' };

const stateOf = (row: StateRow | undefined): ItemState | undefined =>
  row === undefined ? undefined : typeof row === 'string' ? STATE_OF[row] : 'sent';

/** A decision number as a key's 12 hex digits, which sort as the numbers do. */
export const seqText = (seq: number): string => seq.toString(16).padStart(12, '0');

/** The item keys of a batch (see {@link keysOf}). */
export interface BatchKeys {
  /** Each record's item key, in the batch's order. */
  readonly all: readonly string[];
  /** The keys of the items sent or failed in the batch and not decided earlier in it: whose states before the batch its `apply` reads. */
  readonly awaited: readonly string[];
}

/** The keys found of a batch, and the records they were found of. */
interface Found {
  readonly keys: BatchKeys;
  readonly records: readonly Record[];
}

/** The keys found of each batch: the projections are given the same batch, one after another. */
const found = new WeakMap<readonly Record[], Found>();

/** Whether `records` holds the very records of `before`, in its order. */
function holds(records: readonly Record[], before: readonly Record[]): boolean {
  if (records.length !== before.length) return false;
  for (let n = 0; n < records.length; n++) if (records[n] !== before[n]) return false;
  return true;
}

/**
 * The item keys of a batch, found once for every projection that applies it (three of them do;
 * building a key a projection was a tenth of a build). Kept by the array's identity, and given
 * again only while it holds the same records (compared one by one, which costs far less than
 * their keys): an array changed in place since, as a caller of `ProjectionSet.apply` may, is
 * looked at anew. A record itself never changes once checked (`CheckedRecord`).
 */
export function keysOf(records: readonly Record[]): BatchKeys {
  const known = found.get(records);
  if (known !== undefined && holds(records, known.records)) return known.keys;
  const all: string[] = new Array(records.length);
  const awaited: string[] = [];
  const decidedHere = new Set<string>();
  for (let n = 0; n < records.length; n++) {
    const record = records[n] as Record;
    const key = itemKey(record.item);
    all[n] = key;
    if (record.type === 'decided') decidedHere.add(key);
    else if (!decidedHere.has(key)) awaited.push(key);
  }
  const keys = { all, awaited };
  found.set(records, { keys, records: records.slice() });
  return keys;
}

/**
 * The items projection: every item's state and the decision order (`isDecided`, `sentIds`,
 * `decisions()`), and the rules an append is checked against. Part of the Honcho read model.
 */
export const itemsProjection: ProjectionDefinition<Record, ItemQueries> = {
  name: 'items',
  version: 2,
  worker: { module: import.meta.url, export: 'itemsProjection' },

  reads: (records) => ['n', ...keysOf(records).all.map((key) => `i${key}`)],

  apply(records, rows) {
    let next = rows.get<number>('n') ?? 0;
    const from = next;
    const decided: DecisionTuple[] = [];
    // the states this batch leaves, by item key: an item decided and sent within it (most, in a
    // build) is read and written once, not once a record
    const states = new Map<string, StateRow>();
    const keys = keysOf(records).all;
    for (let n = 0; n < records.length; n++) {
      const record = records[n] as Record;
      const key = keys[n] as string;
      const row = states.get(key) ?? rows.get<StateRow>(`i${key}`);
      const refused = refusal(record, stateOf(row));
      if (refused !== null) rows.refuse(n, refused);
      if (record.type === 'decided') {
        states.set(key, record.action.type === 'skip' ? 'k' : 'w');
        decided.push(decisionTuple(record.item, record.action));
        next++;
      } else {
        states.set(key, record.type === 'sent' ? record.ids : 'f');
      }
    }
    for (const [key, row] of states) rows.put(`i${key}`, row);
    if (decided.length === 0) return;
    rows.insert(`d${seqText(from)}`, decided);
    rows.put('n', next);
  },

  queries: (rows) => ({
    async statesOf(items) {
      return Promise.all(items.map(async (item) => stateOf(await rows.get<StateRow>(`i${itemKey(item)}`))));
    },
    async isDecided(item) {
      return (await rows.get(`i${itemKey(item)}`)) !== undefined;
    },
    async sentIds(item) {
      const row = await rows.get<StateRow>(`i${itemKey(item)}`);
      return row === undefined || typeof row === 'string' ? null : row;
    },
    async *decisions() {
      for await (const [, batch] of rows.range<DecisionTuple[]>({ prefix: 'd' }))
        for (const tuple of batch) yield decisionOf(tuple);
    },
  }),
};
