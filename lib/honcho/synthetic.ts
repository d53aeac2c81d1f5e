/**
 * Synthetic Honcho ledgers shaped like memoryd's: for demos (`ledgerstore gen`), benchmarks and
 * tests that need a large ledger that is valid under the rules (spec 000, "The rules"). Only the
 * records are made here; writing them is a backend's (`backends/jsonl-write-whole.ts` for a file).
 *
 * What a generated ledger looks like:
 * - Many sessions, a few dozen active at a time, each deciding its turns in increasing order:
 *   mostly `turn` actions to the session's workspace (trusted or untrusted) with a speaker, some
 *   `skip` with a why.
 * - Journalled memory edits (`2026-09-28-0001`, parts 0..n), decided as `conclude`,
 *   `unconclude`, `fleet`, `retract` or `skip`. An `unconclude` undoes a conclusion that was
 *   sent earlier (same workspace and text), so that `conclusion()` has work to do; a `retract`
 *   takes back an earlier `fleet` message.
 * - Most waiting items are later `sent` (a turn with 1 to 3 message ids, a conclusion with
 *   exactly one id, a deletion with none), some `failed` (an HTTP status or none, and a kind),
 *   some records after their decision, interleaved with other decisions. A few percent are never
 *   resolved, and the latest decisions are still pending at the end: the outbox.
 * - Strings now and then hold non-ASCII text (é, 中文, emoji) and characters that JSON escapes
 *   (quotes, backslashes, newlines, tabs), so that writing and reading exercise the escapes.
 * - Times never go backwards, in milliseconds from `start`.
 *
 * The same options give the same records, byte for byte: everything random comes from a seeded
 * generator (`random.ts`), never from `Math.random` or the clock. Memory stays bounded however
 * many records are asked for: only the active sessions, the pending items and bounded windows of
 * sent conclusions and fleet messages are kept.
 *
 * Longer than most files, and earned: one concern, the one model of memoryd's traffic the
 * generator follows.
 *
 * @module
 */
import { Random } from '../random.js';
import { encodeValid } from './codec.js';
import type { Action, Item, Record, Workspace } from './record.js';
import {
  ASSISTANTS,
  conclusionText,
  EDIT_SKIPS,
  fleetText,
  honchoId,
  NETWORK_FAILURES,
  PEERS,
  TURN_SKIPS,
} from './synthetic-text.js';

/** What to generate. */
export interface WorkloadOptions {
  /** How many records: exactly this many are yielded. */
  readonly records: number;
  /** The seed: the same seed (and options) gives the same records. Default 1. */
  readonly seed?: number;
  /** The time of the first record. Default 2026-01-01T00:00:00.000Z. */
  readonly start?: Date;
}

/**
 * The workload's version: it changes whenever the records generated for given options change,
 * so that ledgers kept from an earlier version (bench/data/) are not taken for current ones.
 */
export const WORKLOAD_VERSION = 1;

/** The default time of the first record (not exported: a `Date` can be changed by whoever holds it). */
const DEFAULT_START = new Date('2026-01-01T00:00:00.000Z');

// -- what the strings say ---------------------------------------------------------------------
// Mostly plain ASCII, as memoryd's are, with enough non-ASCII text and JSON escapes mixed in
// that every line's encoding path (raw UTF-8, surrogate pairs, \" \\ \n \t) is taken often.

// -- time -------------------------------------------------------------------------------------

/**
 * The ledger's clock, in milliseconds. Formatting a `Date` for each of millions of records is
 * a measurable share of generating them, so the text up to the minute is cached.
 */
class Clock {
  private minute = Number.NaN;
  private prefix = '';
  /** The current day, `YYYY-MM-DD`. */
  day = '';

  constructor(private ms: number) {
    this.refresh();
  }

  advance(gap: number): void {
    this.ms += gap;
  }

  /** The current time as a ledger time, `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  now(): string {
    let offset = this.ms - this.minute;
    if (!(offset < 60_000)) {
      this.refresh();
      offset = this.ms - this.minute;
    }
    const seconds = Math.floor(offset / 1000);
    const millis = offset - seconds * 1000;
    return `${this.prefix}${seconds < 10 ? '0' : ''}${seconds}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  }

  private refresh(): void {
    this.minute = this.ms - (((this.ms % 60_000) + 60_000) % 60_000);
    const iso = new Date(this.minute).toISOString();
    // Outside years 0000 to 9999 toISOString writes six-digit years, which are no ledger time.
    if (iso.length !== 24) throw new RangeError(`the workload's time ${iso} is outside the years 0000 to 9999`);
    this.prefix = iso.slice(0, 17);
    this.day = iso.slice(0, 10);
  }
}

// -- the model --------------------------------------------------------------------------------

/** Active sessions at a time: their turns interleave. */
const ACTIVE_SESSIONS = 32;
/** The most pending items kept; beyond it the earliest due is resolved at once. */
const MAX_PENDING = 8192;
/** The most sent conclusions (and fleet messages) kept as candidates for an undo. */
const MAX_CONCLUSIONS = 2048;
const MAX_FLEET = 256;

interface Session {
  readonly id: string;
  readonly workspace: Workspace;
  readonly speakers: readonly string[];
  next: number;
  left: number;
}

/** A decided item waiting for its `sent` or `failed`, due at record number `due`. */
interface Pending {
  readonly due: number;
  readonly item: Item;
  readonly action: Action;
}

interface Edit {
  readonly id: string;
  readonly parts: number;
  next: number;
}

interface Said {
  readonly workspace: Workspace;
  readonly text: string;
}

interface Posted {
  readonly session: string;
  readonly text: string;
}

/** A min-heap of pending items by `due` (ties in any fixed order: the result is deterministic). */
class PendingHeap {
  private readonly heap: Pending[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): Pending | undefined {
    return this.heap[0];
  }

  push(entry: Pending): void {
    const heap = this.heap;
    let n = heap.push(entry) - 1;
    while (n > 0) {
      const parent = (n - 1) >> 1;
      const above = heap[parent] as Pending;
      if (above.due <= entry.due) break;
      heap[n] = above;
      n = parent;
    }
    heap[n] = entry;
  }

  pop(): Pending {
    const heap = this.heap;
    const top = heap[0] as Pending;
    const last = heap.pop() as Pending;
    if (heap.length === 0) return top;
    const size = heap.length;
    let n = 0;
    for (;;) {
      const left = 2 * n + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size && (heap[right] as Pending).due < (heap[left] as Pending).due) child = right;
      const below = heap[child] as Pending;
      if (below.due >= last.due) break;
      heap[n] = below;
      n = child;
    }
    heap[n] = last;
    return top;
  }
}

/** Removes and gives a random element of a bag (order is not kept). */
function takeAny<T>(random: Random, bag: T[]): T {
  const n = random.below(bag.length);
  const taken = bag[n] as T;
  bag[n] = bag[bag.length - 1] as T;
  bag.pop();
  return taken;
}

/** Adds to a bounded bag; when full, a random old element makes room (it is simply forgotten). */
function keep<T>(random: Random, bag: T[], value: T, max: number): void {
  if (bag.length < max) bag.push(value);
  else bag[random.below(max)] = value;
}

class Model {
  private readonly random: Random;
  private readonly clock: Clock;
  private readonly sessions: Session[] = [];
  private readonly pending = new PendingHeap();
  private readonly concluded: Said[] = [];
  private readonly posted: Posted[] = [];
  private sessionCount = 0;
  private editDay = '';
  private editsToday = 0;
  private edit: Edit | null = null;
  private fleetCount = 0;
  private started = false;

  constructor(seed: number, start: Date) {
    this.random = new Random(seed);
    this.clock = new Clock(start.getTime());
    for (let n = 0; n < ACTIVE_SESSIONS; n++) this.sessions.push(this.newSession());
  }

  /** The record at position `n`. */
  next(n: number): Record {
    const top = this.pending.peek();
    if (top !== undefined && (top.due <= n || this.pending.size >= MAX_PENDING))
      return this.resolve(this.pending.pop());
    return this.decide(n);
  }

  private newSession(): Session {
    const random = this.random;
    const n = this.sessionCount++;
    let id: string;
    switch (random.below(4)) {
      case 0:
        id = `chat-${n}`;
        break;
      case 1:
        id = `tg.${100_000_000 + n * 7919}`;
        break;
      case 2:
        id = `cli_${n.toString(36)}`;
        break;
      default:
        id = `web-${this.clock.day}-${n}`;
    }
    const speaker = random.pick(PEERS);
    const speakers = random.chance(0.6) ? [speaker, random.pick(ASSISTANTS)] : [speaker];
    // Most sessions are short, a few go on for thousands of turns.
    const left = random.chance(0.05) ? 200 + random.below(3000) : 1 + Math.floor(random.exponential(30));
    return { id, workspace: random.chance(0.7) ? 'trusted' : 'untrusted', speakers, next: 1, left };
  }

  /** The time of the next record, `gapMean` ms after the last on average; the first is at `start`. */
  private tick(gapMean: number): string {
    const random = this.random;
    // Quiet hours now and then; otherwise seconds apart, with bursts in the same millisecond.
    const gap = random.chance(0.0005)
      ? random.exponential(3_600_000)
      : random.chance(0.1)
        ? 0
        : random.exponential(gapMean);
    if (this.started) this.clock.advance(Math.floor(gap));
    this.started = true;
    return this.clock.now();
  }

  private decide(n: number): Record {
    const random = this.random;
    const time = this.tick(1500);
    let item: Item;
    let action: Action;
    if (this.edit === null && random.chance(0.8)) {
      const s = random.below(this.sessions.length);
      const session = this.sessions[s] as Session;
      item = { type: 'turn', session: session.id, turn: session.next++ };
      action = random.chance(0.1)
        ? { type: 'skip', why: random.pick(TURN_SKIPS) }
        : { type: 'turn', workspace: session.workspace, speaker: random.pick(session.speakers) };
      if (--session.left === 0) this.sessions[s] = this.newSession();
    } else {
      const edit = this.edit ?? this.newEdit();
      item = { type: 'edit', id: edit.id, part: edit.next++ };
      this.edit = edit.next < edit.parts ? edit : null;
      action = this.editAction();
    }
    // A few decisions are never resolved in this ledger (memoryd stopped, or it is still
    // retrying): with the latest decisions they make the outbox that remains at the end.
    if (action.type !== 'skip' && !random.chance(0.03)) {
      const delay = random.chance(0.04) ? random.exponential(3000) : random.exponential(15);
      this.pending.push({ due: n + 1 + Math.floor(delay), item, action });
    }
    return { type: 'decided', time, item, action };
  }

  private newEdit(): Edit {
    const day = this.clock.day;
    if (day !== this.editDay) {
      this.editDay = day;
      this.editsToday = 0;
    }
    const seq = String(++this.editsToday).padStart(4, '0');
    const r = this.random.next();
    return { id: `${day}-${seq}`, parts: r < 0.6 ? 1 : r < 0.9 ? 2 : 3, next: 0 };
  }

  private editAction(): Action {
    const random = this.random;
    const r = random.next();
    const session = (this.sessions[random.below(this.sessions.length)] as Session).id;
    if (r < 0.15 && this.concluded.length > 0) {
      // An undo: of a conclusion that was sent, so that it has something to delete.
      const { workspace, text } = takeAny(random, this.concluded);
      return { type: 'unconclude', workspace, text };
    }
    if (r < 0.6) {
      return {
        type: 'conclude',
        workspace: random.chance(0.75) ? 'trusted' : 'untrusted',
        peer: random.pick(PEERS),
        session,
        text: conclusionText(random, this.clock.day),
      };
    }
    if (r < 0.68 && this.posted.length > 0) {
      const { session: where, text } = takeAny(random, this.posted);
      return { type: 'retract', session: where, text };
    }
    if (r < 0.9) return { type: 'fleet', session, text: fleetText(random, this.fleetCount++) };
    return { type: 'skip', why: random.pick(EDIT_SKIPS) };
  }

  private resolve({ item, action }: Pending): Record {
    const random = this.random;
    const time = this.tick(300);
    if (random.chance(0.06)) {
      if (action.type === 'unconclude')
        keep(random, this.concluded, { workspace: action.workspace, text: action.text }, MAX_CONCLUSIONS);
      const r = random.next();
      const status = r < 0.3 ? 500 : r < 0.5 ? 502 : r < 0.75 ? 429 : r < 0.85 ? 404 : null;
      return { type: 'failed', time, item, status, kind: status === null ? random.pick(NETWORK_FAILURES) : 'http' };
    }
    let ids: string[];
    switch (action.type) {
      case 'turn': {
        const r = random.next();
        const count = r < 0.5 ? 1 : r < 0.85 ? 2 : 3;
        ids = [];
        for (let i = 0; i < count; i++) ids.push(honchoId(random, 'msg-'));
        break;
      }
      case 'conclude':
        ids = [honchoId(random, 'con-')];
        keep(random, this.concluded, { workspace: action.workspace, text: action.text }, MAX_CONCLUSIONS);
        break;
      case 'fleet':
        ids = [honchoId(random, 'msg-')];
        keep(random, this.posted, { session: action.session, text: action.text }, MAX_FLEET);
        break;
      default:
        // A deletion or a retraction: Honcho answers with no new id.
        ids = [];
    }
    return { type: 'sent', time, item, ids };
  }
}

/**
 * Checks the options of {@link workload}.
 * @throws RangeError when `records` is not a non-negative safe integer, `seed` not a safe
 *   integer, or `start` not a valid date in the years 0000 to 9999
 */
export function checkWorkloadOptions(options: WorkloadOptions): void {
  const { records, seed = 1, start = DEFAULT_START } = options;
  if (!Number.isSafeInteger(records) || records < 0)
    throw new RangeError(`records must be a non-negative integer, not ${records}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, not ${seed}`);
  const ms = start.getTime();
  if (Number.isNaN(ms) || start.getUTCFullYear() < 0 || start.getUTCFullYear() > 9999) {
    throw new RangeError('start must be a valid date in the years 0000 to 9999');
  }
}

/**
 * Generates a synthetic, valid Honcho ledger: exactly `options.records` records, deterministic
 * for a given seed and start (see the module's description for what they look like).
 * @throws RangeError for options that {@link checkWorkloadOptions} refuses
 */
export function* workload(options: WorkloadOptions): Generator<Record> {
  checkWorkloadOptions(options);
  const model = new Model(options.seed ?? 1, options.start ?? DEFAULT_START);
  for (let n = 0; n < options.records; n++) yield model.next(n);
}

/**
 * The canonical lines of {@link workload}'s records, as a JSONL ledger holds them (without their
 * newlines). The options are checked now, before a caller starts writing anything.
 * @throws RangeError for options that {@link checkWorkloadOptions} refuses
 */
export function syntheticLines(options: WorkloadOptions): Iterable<string> {
  checkWorkloadOptions(options);
  return linesOf(workload(options));
}

function* linesOf(records: Iterable<Record>): Generator<string> {
  // The generator's records are valid by construction: checking each again would double the cost.
  for (const record of records) yield encodeValid(record);
}
