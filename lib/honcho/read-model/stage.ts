/**
 * What a batch of records changes in the read model's rows, staged in memory in log order until
 * it is written as one batch. The projection over rows, as `projection.ts` is the projection in
 * memory: two representations of the same state, which the conformance suite's read-model run
 * holds to the same answers.
 *
 * @module
 */
import { type Action, type Item, itemKey, type Record } from '../record.js';
import { type ItemState, stateAfter } from '../rules.js';
import { type Bytes, CODE_OF, type Row, STATE_OF, seqKey, stackOpOf, stackPrefix, type Totals } from './layout.js';

/** Where a stage reads the rows it does not hold: the read model (a stage never needs more of it). */
export interface RowSource {
  /** The item's row: staged in `stage`, or the source's; `absent` says for most items never decided that there is none. */
  rowOf(item: Item, stage?: Stage, absent?: (key: string) => boolean): Promise<Row | undefined>;
  /** The key of the conclusion `depth` below the top of a stack (0: the top). */
  stackEntry(prefix: Buffer, depth: number): Promise<Bytes | undefined>;
}

/**
 * Changes to the rows, in memory, for records in log order, until they are written as one batch:
 * what a later record of the same batch reads sees what an earlier one changed.
 */
export class Stage {
  readonly rows = new Map<string, Row>();
  readonly decided = new Map<number, [Item, Action]>();
  /** Outbox rows to put (`[item, action]`) or delete (`null`), by seq. */
  readonly waiting = new Map<number, [Item, Action] | null>();
  /** Conclusions pushed in this stage and still on their stack, by key. */
  readonly stacked = new Map<Bytes, [Item, string]>();
  /** Conclusions held by LevelDB and taken off their stack in this stage. */
  readonly unstacked: Bytes[] = [];
  /** Per stack (prefix, as hex): the keys pushed in this stage, in order, and how many of LevelDB's were taken off. */
  private readonly stackState = new Map<string, { pushed: Bytes[]; removed: number }>();
  /** How many records are staged. */
  size = 0;

  constructor(
    private readonly model: RowSource,
    readonly totals: Totals,
    /**
     * In a build from empty, every stack's keys as LevelDB holds them (the build wrote them
     * all), so that an undo need not ask LevelDB; `null` otherwise.
     */
    private readonly held: Map<string, Bytes[]> | null = null,
  ) {}

  /** The item's state as the staged records leave it. */
  async stateOf(item: Item, absent?: (key: string) => boolean): Promise<ItemState | undefined> {
    const row = await this.model.rowOf(item, this, absent);
    return row === undefined ? undefined : STATE_OF[row[1]];
  }

  /** Stages a record that the rules allow (the caller checked it). */
  async add(record: Record): Promise<void> {
    const t = this.totals;
    const key = itemKey(record.item);
    this.size++;
    if (record.type === 'decided') {
      const seq = t.decided++;
      const state = stateAfter(record);
      this.rows.set(key, [seq, CODE_OF[state], null, stackOpOf(record.action)]);
      this.decided.set(seq, [record.item, record.action]);
      if (state === 'waiting') {
        t.waiting++;
        this.waiting.set(seq, [record.item, record.action]);
      } else {
        t.skipped++;
      }
      return;
    }
    const row = (await this.model.rowOf(record.item, this)) as Row;
    const [seq, , , stack] = row;
    t.waiting--;
    this.waiting.set(seq, null);
    if (record.type === 'failed') {
      t.failed++;
      this.rows.set(key, [seq, 'f', null, stack]);
      return;
    }
    t.sent++;
    this.rows.set(key, [seq, 's', record.ids, stack]);
    if (stack === null) return;
    const [op, workspace, text] = stack;
    if (op === 'c') {
      const id = record.ids[0];
      if (id !== undefined) this.push(stackPrefix(workspace, text), [record.item, id]);
    } else {
      await this.pop(stackPrefix(workspace, text));
    }
  }

  private stackOf(prefix: Buffer): { pushed: Bytes[]; removed: number } {
    const id = prefix.toString('hex');
    let state = this.stackState.get(id);
    if (state === undefined) this.stackState.set(id, (state = { pushed: [], removed: 0 }));
    return state;
  }

  private push(prefix: Buffer, conclusion: [Item, string]): void {
    const key = Buffer.concat([prefix, seqKey(this.totals.pushes++)]);
    this.stackOf(prefix).pushed.push(key);
    this.stacked.set(key, conclusion);
  }

  private async pop(prefix: Buffer): Promise<void> {
    const state = this.stackOf(prefix);
    const staged = state.pushed.pop();
    if (staged !== undefined) {
      this.stacked.delete(staged);
      return;
    }
    const keys = this.held?.get(prefix.toString('hex'));
    const held =
      this.held === null ? await this.model.stackEntry(prefix, state.removed) : keys?.[keys.length - 1 - state.removed];
    if (held === undefined) return; // an undo of an empty stack takes nothing off
    state.removed++;
    this.unstacked.push(held);
  }

  /** Brings `held` (see the constructor) up to date once this stage is written. */
  written(): void {
    if (this.held === null) return;
    for (const [id, { pushed, removed }] of this.stackState) {
      const keys = this.held.get(id) ?? [];
      keys.length -= removed;
      keys.push(...pushed);
      if (keys.length === 0) this.held.delete(id);
      else this.held.set(id, keys);
    }
  }
}
