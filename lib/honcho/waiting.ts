/**
 * The waiting items of a projection (`projection.ts`) in decision order, with their actions: the
 * outbox, kept as items are decided and taken out as they are sent or failed.
 *
 * @module
 */
import { type CanonicalLines, detached } from './canonical.js';
import { withRoom } from './item-index.js';
import type { Action } from './record.js';

/** The action with each string a string of its own (see {@link detached}). */
function detachedAction(action: Action): Action {
  switch (action.type) {
    case 'turn':
      return { type: 'turn', workspace: action.workspace, speaker: detached(action.speaker) };
    case 'conclude':
      return {
        type: 'conclude',
        workspace: action.workspace,
        peer: detached(action.peer),
        session: detached(action.session),
        text: detached(action.text),
      };
    case 'unconclude':
      return { type: 'unconclude', workspace: action.workspace, text: detached(action.text) };
    case 'fleet':
    case 'retract':
      return { type: action.type, session: detached(action.session), text: detached(action.text) };
    case 'skip':
      return { type: 'skip', why: detached(action.why) };
  }
}

/**
 * The waiting items in decision order, each with its action: appended as items are decided, and
 * taken out (in place, compacted now and then) as they are sent or failed. An item decided in the
 * run of scanned lines at hand may have no action made yet: only where its line's slots are,
 * made when the run ends if it still waits ({@link Waiting.settle}).
 */
export class Waiting {
  private seqs = new Int32Array(1 << 10);
  private actions: (Action | null)[] = [];
  /** Per entry, where the slots of its `decided` line are in the run at hand; -1 when its action is made (or it was taken out). */
  private pending = new Int32Array(1 << 10);
  /** The entries in use are `[first, end)`; some of them taken out (`null`, not pending). */
  private first = 0;
  private end = 0;
  private live = 0;
  /** The entries added from the run at hand start here. */
  private runFrom = 0;
  /** Entries whose action came with a record, whose strings may be slices (see {@link detached}). */
  private undetached: number[] = [];

  get size(): number {
    return this.live;
  }

  /** Adds an item with its action, from a record. */
  add(seq: number, action: Action): void {
    this.undetached.push(this.append(seq, action, -1));
  }

  /** Adds an item decided on a line of the run at hand, whose slots are at `slot`. */
  addPending(seq: number, slot: number): void {
    this.append(seq, null, slot);
  }

  private append(seq: number, action: Action | null, slot: number): number {
    // full: compacted when half of it or more was taken out, else grown
    if (this.end === this.seqs.length && 2 * this.live <= this.end) this.compact();
    this.seqs = withRoom(this.seqs, this.end + 1);
    this.pending = withRoom(this.pending, this.end + 1);
    const at = this.end++;
    this.seqs[at] = seq;
    this.actions[at] = action;
    this.pending[at] = slot;
    this.live++;
    return at;
  }

  /** Takes out the waiting item at `seq`: its action, or where its line's slots are in the run at hand. */
  take(seq: number): Action | number {
    const at = this.indexOf(seq);
    const action = this.actions[at] ?? (this.pending[at] as number);
    this.actions[at] = null;
    this.pending[at] = -1;
    this.live--;
    while (this.first < this.end && this.actions[this.first] === null && this.pending[this.first] === -1) this.first++;
    return action;
  }

  /** The run at hand has ended: the actions of its items that still wait are made from it, while its bytes are there. */
  settle(lines: CanonicalLines): void {
    const { actions, pending } = this;
    for (let at = Math.max(this.runFrom, this.first); at < this.end; at++) {
      const slot = pending[at] as number;
      if (slot < 0) continue;
      actions[at] = lines.actionAt(slot);
      pending[at] = -1;
    }
    this.runFrom = this.end;
  }

  /** Makes the strings of the actions that came with records strings of their own (see {@link detached}). */
  detach(): void {
    const { actions } = this;
    for (const at of this.undetached) {
      const action = actions[at];
      if (action !== null && action !== undefined) actions[at] = detachedAction(action);
    }
    this.undetached = [];
  }

  /** The waiting items with a seq after `after`, in decision order, with their actions. */
  *after(after: number): Generator<[seq: number, action: Action]> {
    for (let at = this.firstAfter(after); at < this.end; at++) {
      const action = this.actions[at];
      if (action !== null && action !== undefined) yield [this.seqs[at] as number, action];
    }
  }

  /** The first entry with a seq after `after`. */
  private firstAfter(after: number): number {
    let low = this.first;
    let high = this.end;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.seqs[middle] as number) <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The entry of `seq`, which waits: most often among the last few (an item is sent soon after it is decided). */
  private indexOf(seq: number): number {
    const { seqs } = this;
    const near = Math.max(this.first, this.end - 16);
    for (let at = this.end - 1; at >= near; at--) if (seqs[at] === seq) return at;
    return this.firstAfter(seq - 1);
  }

  /** Moves the entries in use to the front, leaving out those taken out. */
  private compact(): void {
    this.detach();
    const { seqs, actions, pending } = this;
    let to = 0;
    let runFrom = -1;
    for (let at = this.first; at < this.end; at++) {
      if (actions[at] === null && pending[at] === -1) continue;
      if (at >= this.runFrom && runFrom < 0) runFrom = to;
      seqs[to] = seqs[at] as number;
      pending[to] = pending[at] as number;
      actions[to++] = actions[at] ?? null;
    }
    actions.length = to;
    this.runFrom = runFrom < 0 ? to : runFrom;
    this.first = 0;
    this.end = to;
  }
}
