/**
 * The ledger's state in memory, rebuilt by replaying its records in order: what the rules check
 * against and what memoryd queries (spec 000, "What each public function gives"), kept compact
 * so that a ledger of millions of records holds tens of bytes an item, not hundreds.
 *
 * - Each decided item by its place in decision order (`item-index.ts`): its kind, name and
 *   number, its state, and where in the log its `sent` record is (the ids are found there again
 *   when asked for: `state.ts`).
 * - The actions only where a query needs them: of the waiting items (the outbox), in decision
 *   order. Of the sent conclusions not undone, only their items by their texts
 *   (`conclusion-stacks.ts`): the id Honcho gave each is found in its `sent` record (`state.ts`).
 * - No decided record is kept: `decisions()` reads them again from the log (`state.ts`).
 *
 * Only records the rules allow are applied; the caller ({@link Ledger}) checks them first. A
 * projection is given every record of its log, from the first, in order: the n-th it applies is
 * at position n - 1.
 *
 * The read model (`read-model/stage.ts`) derives the same answers as rows; the read-model run of
 * the conformance suite holds the two to the same answers.
 *
 * @module
 */
import type { ScannedLines } from '../line-scan.js';
import { CanonicalLines } from './canonical.js';
import { ConclusionStacks } from './conclusion-stacks.js';
import { ItemIndex, withRoom } from './item-index.js';
import type { Action, Counts, Item, Record, Workspace } from './record.js';
import { allows, type ItemState, refusal } from './rules.js';
import { DECIDED, FAILED as FAILED_LINE, SENT as SENT_LINE, SERDE } from './scan-slots.js';
import { Waiting } from './waiting.js';

/** An item and what was decided for it. */
export interface Decision {
  readonly item: Item;
  readonly action: Action;
}

/** The conclusion to delete for an undo: the `Conclude` item and the id Honcho gave it. */
export interface Conclusion {
  readonly item: Item;
  readonly id: string;
}

/** The item states, as kept: a byte each. */
const WAITING = 1;
const SKIPPED = 2;
const SENT = 3;
const FAILED = 4;
const STATES: readonly (ItemState | undefined)[] = [undefined, 'waiting', 'skipped', 'sent', 'failed'];

/** Actions by their place in `ACTION_VARIANTS` (a scanned line's), for the two whose sending moves a stack. */
const CONCLUDE = 1;
const UNCONCLUDE = 2;
const SKIP = 5;
const ACTION_INDEX: { readonly [T in Action['type']]: number } = {
  turn: 0,
  conclude: CONCLUDE,
  unconclude: UNCONCLUDE,
  fleet: 3,
  retract: 4,
  skip: SKIP,
};

/** How many records apart the actions of waiting items that came with records are made strings of their own. */
const DETACH_EVERY = 4096;

/**
 * The most items {@link Projection.reserve} makes room for: the room is taken before a record is
 * read, so a size that overstates the log (or a log of hundreds of millions) does not take
 * gigabytes up front; past it, the arrays grow as they fill.
 */
const MAX_RESERVED = 1 << 24;

/** The state of every item, indexed for the queries. */
export class Projection {
  private readonly items = new ItemIndex();
  /** Per seq: the item's state (WAITING, ...). */
  private states = new Uint8Array(1 << 10);
  /** Per seq: the position of the item's `sent` record in the log; -1 for none. */
  private sentAt = new Float64Array(1 << 10);
  private readonly waiting = new Waiting();
  private readonly stacks = new ConclusionStacks();
  /** The UTF-8 of a conclusion's text written with escapes, made here to be found by. */
  private textBytes = new Uint8Array(256);
  private sent = 0;
  private failed = 0;
  private skipped = 0;
  /** How many records were applied: the position of the next. */
  private applied = 0;
  /** The run of scanned lines at hand, whose end settles the actions of the items it decided. */
  private run: CanonicalLines | null = null;
  /** The item last looked up, and its seq: `apply` after `stateOf` of the same item finds it at once. */
  private lastItem: Item | null = null;
  private lastSeq = -1;

  /** How many records this projection has applied: the log's position after the last. */
  get records(): number {
    return this.applied;
  }

  /**
   * Makes room for the items of about `records` records (no more items than records: each has
   * its `decided`), so that a replay of a log of about that many neither grows its arrays nor
   * rehashes its index ({@link ItemIndex.reserve}); beyond it, they grow as they would have.
   * Call it before the replay or between two records of it; what the projection answers is the
   * same either way.
   */
  reserve(records: number): void {
    const items = Math.min(Math.ceil(records), MAX_RESERVED);
    this.items.reserve(items);
    this.states = withRoom(this.states, items);
    this.sentAt = withRoom(this.sentAt, items);
  }

  private seqOf(item: Item): number {
    if (item === this.lastItem) return this.lastSeq;
    const seq = this.items.find(item);
    this.lastItem = item;
    this.lastSeq = seq;
    return seq;
  }

  /** The item's state; `undefined` when it is not decided. */
  stateOf(item: Item): ItemState | undefined {
    const seq = this.seqOf(item);
    return seq < 0 ? undefined : STATES[this.states[seq] as number];
  }

  /**
   * Takes in the next record of the log when the rules allow it.
   * @throws the rule's `RecordRefusedError` when they do not (and takes in nothing)
   */
  replay(record: Record): void {
    const refused = refusal(record, this.stateOf(record.item));
    if (refused !== null) throw refused;
    this.apply(record);
  }

  /**
   * {@link Projection.replay} of a line as its codec's scan found it: a canonical line is taken in
   * from what the scan found, without its record being made; any other through its record.
   * @throws the rule's `RecordRefusedError`, or the line's `DecodeError`
   */
  replayLine(line: ScannedLines<Record>): void {
    const kind = line instanceof CanonicalLines ? line.kind : SERDE;
    if (kind === SERDE) {
      this.replay(line.record());
      return;
    }
    const lines = line as CanonicalLines;
    if (lines !== this.run) this.startRun(lines);
    const edit = lines.isEdit;
    const { names } = this.items;
    const { bytes, nameStart, nameLength, number } = lines;
    let name = names.findBytes(bytes, nameStart, nameLength);
    let seq = name < 0 ? -1 : this.items.findKey(edit, name, number);
    const type = kind === DECIDED ? 'decided' : kind === SENT_LINE ? 'sent' : 'failed';
    if (!allows(type, seq < 0 ? undefined : STATES[this.states[seq] as number])) {
      this.replay(lines.record()); // refused with the rule's words, for the record
      return;
    }
    this.lastItem = null;
    const position = this.nextPosition();
    if (kind === DECIDED) {
      if (name < 0) {
        name = names.addBytes(bytes, nameStart, nameLength);
        this.items.findKey(edit, name, number);
      }
      seq = this.decided(this.items.addKey(edit, name, number), lines.actionIndex === SKIP);
      if (lines.actionIndex !== SKIP) this.waiting.addPending(seq, lines.slot);
      return;
    }
    const taken = this.waiting.take(seq);
    this.ended(seq, kind === FAILED_LINE, position);
    if (kind === FAILED_LINE) return;
    const action = typeof taken === 'number' ? lines.actionIndexAt(taken) : ACTION_INDEX[taken.type];
    // only a conclusion's sending changes more than the item's state
    if (action !== CONCLUDE && action !== UNCONCLUDE) return;
    if (typeof taken !== 'number') this.conclusionSent(seq, taken, lines.idCount > 0);
    else if (action === UNCONCLUDE || lines.idCount > 0)
      this.conclusionLineSent(lines, taken, seq, action === CONCLUDE);
  }

  /** {@link Projection.conclusionSent} of the `decided` line whose slots are at `slot` in the run at hand: its text found by its bytes. */
  private conclusionLineSent(lines: CanonicalLines, slot: number, seq: number, concluded: boolean): void {
    const workspace = lines.workspaceAt(slot);
    const text = lines.conclusionTextAt(slot);
    let bytes: Uint8Array = lines.bytes;
    let start = lines.stringStart(text);
    let length = lines.stringLength(text);
    if (!lines.isUnescaped(text)) {
      // the same text may be written with other escapes: found by its UTF-8
      if (this.textBytes.length < length) this.textBytes = new Uint8Array(2 * length);
      bytes = this.textBytes;
      start = 0;
      length = lines.utf8Into(text, bytes);
    }
    if (concluded) this.stacks.pushBytes(workspace, bytes, start, length, seq);
    else this.stacks.popBytes(workspace, bytes, start, length);
  }

  private startRun(lines: CanonicalLines): void {
    this.run = lines;
    lines.whenDone(() => {
      this.waiting.settle(lines);
      this.run = null;
    });
  }

  /** The position of the record being taken in, and the applied count moved past it. */
  private nextPosition(): number {
    const position = this.applied++;
    if (position % DETACH_EVERY === 0) this.waiting.detach();
    return position;
  }

  /** Notes the item at `seq` (taken out of the waiting ones) failed, or sent by the record at `position`. */
  private ended(seq: number, failed: boolean, position: number): void {
    if (failed) {
      this.states[seq] = FAILED;
      this.failed++;
      return;
    }
    this.states[seq] = SENT;
    this.sentAt[seq] = position;
    this.sent++;
  }

  /** Notes the item at `seq` (just added) decided, skipped or waiting. */
  private decided(seq: number, skipped: boolean): number {
    this.states = withRoom(this.states, seq + 1);
    this.sentAt = withRoom(this.sentAt, seq + 1);
    this.sentAt[seq] = -1;
    if (skipped) {
      this.states[seq] = SKIPPED;
      this.skipped++;
    } else this.states[seq] = WAITING;
    return seq;
  }

  /** Takes in a record that the rules allow (the next of the log). */
  apply(record: Record): void {
    const position = this.nextPosition();
    if (record.type === 'decided') {
      const seq = this.decided(this.items.add(record.item), record.action.type === 'skip');
      this.lastItem = record.item;
      this.lastSeq = seq;
      if (record.action.type !== 'skip') this.waiting.add(seq, record.action);
      return;
    }
    const seq = this.seqOf(record.item);
    // a record's state leaves nothing pending: only a run of lines does, and it settles as it ends
    const action = this.waiting.take(seq) as Action;
    this.ended(seq, record.type === 'failed', position);
    if (record.type === 'failed') return;
    if (action.type === 'conclude' || action.type === 'unconclude')
      this.conclusionSent(seq, action, record.ids.length > 0);
  }

  /** A sent `Conclude` goes on its stack (when it has an id: Honcho's for it); a sent `Unconclude` takes the top one off. */
  private conclusionSent(seq: number, action: Action, hasId: boolean): void {
    if (action.type === 'conclude') {
      if (hasId) this.stacks.push(action.workspace, action.text, seq);
    } else if (action.type === 'unconclude') {
      this.stacks.pop(action.workspace, action.text);
    }
  }

  /** Whether the item has its `decided` record (a `skip` counts). */
  isDecided(item: Item): boolean {
    return this.seqOf(item) >= 0;
  }

  /** Every waiting item with its action, in the order of the `decided` records. */
  outbox(): Decision[] {
    const out: Decision[] = [];
    for (const [seq, action] of this.waiting.after(-1)) out.push({ item: this.items.item(seq), action });
    return out;
  }

  /** Up to `limit` waiting items, in decision order, after the one at `after` in decision order. */
  outboxPage(limit: number, after = -1): { decisions: Decision[]; next: number | null } {
    const decisions: Decision[] = [];
    let last = -1;
    for (const [seq, action] of this.waiting.after(after)) {
      if (decisions.length === limit) return { decisions, next: last };
      decisions.push({ item: this.items.item(seq), action });
      last = seq;
    }
    return { decisions, next: null };
  }

  /**
   * Where the item's `sent` record is in the log (the n-th record applied is at n - 1); `null`
   * when it has none (waiting, failed, skipped, unknown).
   */
  sentPosition(item: Item): number | null {
    const seq = this.seqOf(item);
    if (seq < 0 || this.states[seq] !== SENT) return null;
    return this.sentAt[seq] as number;
  }

  /**
   * The item of the latest sent conclusion of this workspace and text that is not undone, or
   * `null`. The id Honcho gave it is the first of its `sent` record's ({@link Projection.sentPosition}).
   */
  concluded(workspace: Workspace, text: string): Item | null {
    const seq = this.stacks.top(workspace, text);
    return seq < 0 ? null : this.items.item(seq);
  }

  counts(): Counts {
    return {
      decided: this.items.size,
      sent: this.sent,
      waiting: this.waiting.size,
      failed: this.failed,
      skipped: this.skipped,
    };
  }
}
