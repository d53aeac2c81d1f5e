/**
 * The projection of the conclusion stacks: per workspace and text, the `Conclude`s sent (with an
 * id) and not taken off by a sent `Unconclude`, latest on top, so that `conclusion()` finds the id
 * an undo must delete. A `sent` record names only its item, so the action of each waiting
 * `conclude` or `unconclude` is kept until its item is sent or failed.
 *
 * | key | value |
 * |---|---|
 * | `p<item key>` | a waiting `conclude` or `unconclude`: `["c" or "u", workspace, text]` |
 * | `t<workspace>\n<text>` | how many conclusions the stack holds |
 * | `s<workspace>\n<depth>\n<text>` | the conclusion at that depth from the bottom (0): `[item, id]` |
 *
 * @module
 */
import type { ProjectionDefinition } from '../../projections/definition.js';
import type { Conclusion } from '../projection.js';
import type { Item, Record, Workspace } from '../record.js';
import { keysOf } from './items.js';

/** What the stacks projection answers. */
export interface StackQueries {
  /** The latest sent conclusion of this workspace and text that is not undone, or `null`. */
  conclusion(workspace: Workspace, text: string): Promise<Conclusion | null>;
}

type Pending = [op: 'c' | 'u', workspace: Workspace, text: string];

const top = (workspace: Workspace, text: string): string => `t${workspace}\n${text}`;
const entry = (workspace: Workspace, depth: number, text: string): string => `s${workspace}\n${depth}\n${text}`;

/**
 * The conclusion-stacks projection (`conclusion()`): per workspace and text, the sent `Conclude`s
 * not yet taken off, latest on top. Part of the Honcho read model.
 */
export const stacksProjection: ProjectionDefinition<Record, StackQueries> = {
  name: 'stacks',
  version: 1,
  worker: { module: import.meta.url, export: 'stacksProjection' },

  reads(records) {
    const keys = keysOf(records).awaited.map((key) => `p${key}`);
    for (const record of records) {
      if (record.type !== 'decided') continue;
      const { action } = record;
      if (action.type === 'conclude' || action.type === 'unconclude') keys.push(top(action.workspace, action.text));
    }
    return keys;
  },

  apply(records, rows) {
    // the items decided in this batch, with what a conclusion or undo waits to do (`null` for any
    // other item): one sent or failed within it never becomes a row, nor is looked for
    const decided = new Map<string, Pending | null>();
    const keys = keysOf(records).all;
    for (let n = 0; n < records.length; n++) {
      const record = records[n] as Record;
      const key = keys[n] as string;
      if (record.type === 'decided') {
        const { action } = record;
        const concludes = action.type === 'conclude' || action.type === 'unconclude';
        decided.set(key, concludes ? [action.type === 'conclude' ? 'c' : 'u', action.workspace, action.text] : null);
        continue;
      }
      let pending = decided.get(key);
      if (pending !== undefined) decided.delete(key);
      else {
        pending = rows.get<Pending>(`p${key}`) ?? null;
        if (pending !== null) rows.del(`p${key}`);
      }
      if (pending === null) continue;
      if (record.type === 'failed') continue;
      const [op, workspace, text] = pending;
      const depth = rows.get<number>(top(workspace, text)) ?? 0;
      if (op === 'c') {
        const id = record.ids[0];
        if (id === undefined) continue;
        rows.insert(entry(workspace, depth, text), [record.item, id]);
        rows.put(top(workspace, text), depth + 1);
      } else if (depth > 0) {
        // an undo of an empty stack takes nothing off
        rows.del(entry(workspace, depth - 1, text));
        if (depth === 1) rows.del(top(workspace, text));
        else rows.put(top(workspace, text), depth - 1);
      }
    }
    for (const [key, pending] of decided) if (pending !== null) rows.insert(`p${key}`, pending);
  },

  queries: (rows) => ({
    async conclusion(workspace, text) {
      const depth = (await rows.get<number>(top(workspace, text))) ?? 0;
      if (depth === 0) return null;
      const found = await rows.get<[Item, string]>(entry(workspace, depth - 1, text));
      return found === undefined ? null : { item: found[0], id: found[1] };
    },
  }),
};
