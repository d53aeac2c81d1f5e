/**
 * A decision as the items projection's decision rows hold it (version 2): an array of its
 * fields in a fixed order, its item's and action's kinds in one number first, rather than the
 * item and the action as maps. A build writes every decision once, and the maps' keys, written
 * again for every decision, were most of the CBOR a build and a catch-up encode.
 *
 * | kind | fields after the kind number |
 * |---|---|
 * | item `turn` | `session`, `turn` |
 * | item `edit` | `id`, `part` |
 * | action `turn` | `workspace`, `speaker` |
 * | action `conclude` | `workspace`, `peer`, `session`, `text` |
 * | action `unconclude` | `workspace`, `text` |
 * | action `fleet`, `retract` | `session`, `text` |
 * | action `skip` | `why` |
 *
 * The kind number is the item's kind (0 `turn`, 1 `edit`) times 8, plus the action's kind (0
 * `turn`, 1 `conclude`, 2 `unconclude`, 3 `fleet`, 4 `retract`, 5 `skip`); a workspace is its
 * number (0 `trusted`, 1 `untrusted`, 2 `fleet`). The item's fields come first, then the
 * action's: `[kind, item field, item field, action fields...]`.
 *
 * @module
 */
import type { Decision } from '../projection.js';
import { type Action, type Item, WORKSPACES, type Workspace } from '../record.js';

/** A decision's fields, as a decision row holds it. */
export type DecisionTuple = readonly (string | number | bigint)[];

const ACTION_KINDS = ['turn', 'conclude', 'unconclude', 'fleet', 'retract', 'skip'] as const;
const ACTION_KIND: { readonly [kind in Action['type']]: number } = {
  turn: 0,
  conclude: 1,
  unconclude: 2,
  fleet: 3,
  retract: 4,
  skip: 5,
};
const WORKSPACE: { readonly [workspace in Workspace]: number } = { trusted: 0, untrusted: 1, fleet: 2 };

/** The tuple of a decision of `item` with `action`. */
export function decisionTuple(item: Item, action: Action): DecisionTuple {
  const kind = (item.type === 'turn' ? 0 : 8) + ACTION_KIND[action.type];
  const a = item.type === 'turn' ? item.session : item.id;
  const b = item.type === 'turn' ? item.turn : item.part;
  switch (action.type) {
    case 'turn':
      return [kind, a, b, WORKSPACE[action.workspace], action.speaker];
    case 'conclude':
      return [kind, a, b, WORKSPACE[action.workspace], action.peer, action.session, action.text];
    case 'unconclude':
      return [kind, a, b, WORKSPACE[action.workspace], action.text];
    case 'fleet':
    case 'retract':
      return [kind, a, b, action.session, action.text];
    case 'skip':
      return [kind, a, b, action.why];
  }
}

/**
 * The decision a tuple holds, its objects' keys in the order a record's have them. The tuple is
 * one {@link decisionTuple} wrote: a row's checksum and its projection's version say so.
 */
export function decisionOf(tuple: DecisionTuple): Decision {
  const kind = tuple[0] as number;
  const a = tuple[1] as string;
  const item: Item =
    kind < 8
      ? { type: 'turn', session: a, turn: tuple[2] as number | bigint }
      : { type: 'edit', id: a, part: tuple[2] as number };
  const text = (n: number): string => tuple[n] as string;
  const workspace = (n: number): Workspace => WORKSPACES[tuple[n] as number] as Workspace;
  let action: Action;
  switch (ACTION_KINDS[kind & 7] as Action['type']) {
    case 'turn':
      action = { type: 'turn', workspace: workspace(3), speaker: text(4) };
      break;
    case 'conclude':
      action = { type: 'conclude', workspace: workspace(3), peer: text(4), session: text(5), text: text(6) };
      break;
    case 'unconclude':
      action = { type: 'unconclude', workspace: workspace(3), text: text(4) };
      break;
    case 'fleet':
      action = { type: 'fleet', session: text(3), text: text(4) };
      break;
    case 'retract':
      action = { type: 'retract', session: text(3), text: text(4) };
      break;
    case 'skip':
      action = { type: 'skip', why: text(3) };
      break;
  }
  return { item, action };
}
