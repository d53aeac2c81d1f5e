/**
 * The conclusion stacks of a state in memory: per workspace and text, the sent `Conclude` items
 * not undone yet, the latest on top (spec 000, `conclusion`). Kept in typed arrays, with no
 * string or object per conclusion: a text is a number of a {@link Names} table (found by its
 * UTF-8 bytes, so that a line read through is taken in without its text being made), and an
 * entry of a stack is its item's seq. The id Honcho gave a conclusion is not kept: it is the
 * first id of its item's `sent` record, found again in the log when asked for (`state.ts`).
 *
 * A text keeps its number (and its bytes) once its stack is empty: a conclusion undone and made
 * again is common, and the bytes of a text are fewer than a map's entry for it.
 *
 * @module
 */
import { Names, withRoom } from './item-index.js';
import type { Workspace } from './record.js';

const WORKSPACES = 3;
const WORKSPACE_INDEX: { readonly [W in Workspace]: number } = { trusted: 0, untrusted: 1, fleet: 2 };

/** Per workspace, per text, the seqs of the sent conclusions not undone, the latest on top. */
export class ConclusionStacks {
  private readonly texts = new Names();
  /** Per text number and workspace (`number * 3 + workspace`): its top entry + 1; 0 for an empty stack. */
  private tops = new Int32Array(1 << 10);
  /** Per entry: the seq it holds. */
  private seqs = new Int32Array(1 << 8);
  /** Per entry: the entry below it + 1 (0: none); of a free entry, the next free one + 1. */
  private below = new Int32Array(1 << 8);
  /** Entries ever taken; those freed are reused first, from `freed`. */
  private used = 0;
  private freed = 0;

  /** Puts `seq` on the stack of the text whose UTF-8 is `bytes[start, start + length)`. */
  pushBytes(workspace: Workspace, bytes: Uint8Array, start: number, length: number, seq: number): void {
    let text = this.texts.findBytes(bytes, start, length);
    if (text < 0) text = this.texts.addBytes(bytes, start, length);
    this.pushOn(this.stackOf(text, workspace), seq);
  }

  /** Puts `seq` on the stack of `text` (well-formed: a record's). */
  push(workspace: Workspace, text: string, seq: number): void {
    this.pushOn(this.stackOf(this.texts.add(text), workspace), seq);
  }

  /** Takes the top off the stack of the text whose UTF-8 is `bytes[start, start + length)`, if it has one. */
  popBytes(workspace: Workspace, bytes: Uint8Array, start: number, length: number): void {
    const text = this.texts.findBytes(bytes, start, length);
    if (text >= 0) this.popOff(this.stackOf(text, workspace));
  }

  /** Takes the top off the stack of `text`, if it has one. */
  pop(workspace: Workspace, text: string): void {
    const number = this.texts.find(text);
    if (number >= 0) this.popOff(this.stackOf(number, workspace));
  }

  /** The seq on top of the stack of `text`; -1 when it is empty. */
  top(workspace: Workspace, text: string): number {
    const number = this.texts.find(text);
    if (number < 0) return -1;
    const stack = this.stackOf(number, workspace);
    const top = stack < this.tops.length ? (this.tops[stack] as number) : 0;
    return top === 0 ? -1 : (this.seqs[top - 1] as number);
  }

  private stackOf(text: number, workspace: Workspace): number {
    return text * WORKSPACES + WORKSPACE_INDEX[workspace];
  }

  private pushOn(stack: number, seq: number): void {
    this.tops = withRoom(this.tops, stack + 1);
    let entry: number;
    if (this.freed !== 0) {
      entry = this.freed - 1;
      this.freed = this.below[entry] as number;
    } else {
      entry = this.used++;
      this.seqs = withRoom(this.seqs, entry + 1);
      this.below = withRoom(this.below, entry + 1);
    }
    this.seqs[entry] = seq;
    this.below[entry] = this.tops[stack] as number;
    this.tops[stack] = entry + 1;
  }

  private popOff(stack: number): void {
    const top = stack < this.tops.length ? (this.tops[stack] as number) : 0;
    if (top === 0) return;
    const entry = top - 1;
    this.tops[stack] = this.below[entry] as number;
    this.below[entry] = this.freed;
    this.freed = top;
  }
}
