/**
 * The Honcho ledger's records, as memoryd defines them (spec 000, "Interfaces"). Each type's
 * shape is its JSON shape: a `type` tag in snake case, snake-case field names, a `status` of
 * `null` for "none". How they are written as lines is `codec.ts`; the rules are `rules.ts`.
 *
 * @module
 */

/** A Honcho workspace. Written as a plain string. */
export type Workspace = 'trusted' | 'untrusted' | 'fleet';

/** Every workspace, in declaration order. */
export const WORKSPACES: readonly Workspace[] = ['trusted', 'untrusted', 'fleet'];

/**
 * A turn: a u64 in memoryd, 0 to 2^64-1, kept exactly. A number up to 2^53-1
 * (`Number.MAX_SAFE_INTEGER`, the common case), a bigint above it, which a number cannot hold.
 * Each turn has that one form in every record and state this engine makes, so two turns are the
 * same turn exactly when they are `===` (a caller's item may give a small turn as a bigint:
 * {@link sameItem} and the queries take it as the number).
 */
export type Turn = number | bigint;

/** What is decided, sent or failed: a turn of a session, or one part of a journalled memory edit. */
export type Item =
  | { readonly type: 'turn'; readonly session: string; readonly turn: Turn }
  | { readonly type: 'edit'; readonly id: string; readonly part: number };

/** What a `decided` record says to do with its item. */
export type Action =
  | { readonly type: 'turn'; readonly workspace: Workspace; readonly speaker: string }
  | {
      readonly type: 'conclude';
      readonly workspace: Workspace;
      readonly peer: string;
      readonly session: string;
      readonly text: string;
    }
  | { readonly type: 'unconclude'; readonly workspace: Workspace; readonly text: string }
  | { readonly type: 'fleet'; readonly session: string; readonly text: string }
  | { readonly type: 'retract'; readonly session: string; readonly text: string }
  | { readonly type: 'skip'; readonly why: string };

/** One line of the ledger. */
export type Record =
  | { readonly type: 'decided'; readonly time: string; readonly item: Item; readonly action: Action }
  | { readonly type: 'sent'; readonly time: string; readonly item: Item; readonly ids: readonly string[] }
  | {
      readonly type: 'failed';
      readonly time: string;
      readonly item: Item;
      readonly status: number | null;
      readonly kind: string;
    };

/** How many items are in each state. `decided` is always the sum of the other four. */
export interface Counts {
  readonly decided: number;
  readonly sent: number;
  readonly waiting: number;
  readonly failed: number;
  readonly skipped: number;
}

/** The largest `turn`: a u64's, 2^64-1. */
export const MAX_TURN = 0xffff_ffff_ffff_ffffn;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The turn `value` (0 to {@link MAX_TURN}) in its one form: a number up to 2^53-1, else the bigint. */
export function turnOf(value: bigint): Turn {
  return value <= MAX_SAFE ? Number(value) : value;
}
/** The largest `part`: a u32. */
export const MAX_PART = 0xffff_ffff;
/** The largest `status`: a u16. */
export const MAX_STATUS = 0xffff;

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Whether `id` is a session id: 1 to 128 characters of `A-Z a-z 0-9 . _ -`, and not `.` or `..`
 * (it names a folder under `sessions/`).
 */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id) && id !== '.' && id !== '..';
}

/** What a session id must be, for error messages. */
export const SESSION_ID_RULE = 'a session id: 1 to 128 of A-Z a-z 0-9 . _ -, not . or ..';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The number written by the ASCII digits at `time[from, from + count)`, or -1. */
function digitsAt(time: string, from: number, count: number): number {
  let n = 0;
  for (let k = from; k < from + count; k++) {
    const d = time.charCodeAt(k) - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Whether `time` is a ledger time: exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`, RFC 3339 in UTC with
 * milliseconds, years 0000 to 9999 (proleptic Gregorian), a day that exists in its month, seconds
 * 00 to 59. (Every record has one, so this is written out rather than a regular expression.)
 */
export function isTime(time: string): boolean {
  if (
    time.length !== 24 ||
    time.charCodeAt(4) !== 0x2d || // -
    time.charCodeAt(7) !== 0x2d ||
    time.charCodeAt(10) !== 0x54 || // T
    time.charCodeAt(13) !== 0x3a || // :
    time.charCodeAt(16) !== 0x3a ||
    time.charCodeAt(19) !== 0x2e || // .
    time.charCodeAt(23) !== 0x5a || // Z
    digitsAt(time, 20, 3) < 0
  ) {
    return false;
  }
  const year = digitsAt(time, 0, 4);
  const month = digitsAt(time, 5, 2);
  const day = digitsAt(time, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  const hour = digitsAt(time, 11, 2);
  const minute = digitsAt(time, 14, 2);
  const second = digitsAt(time, 17, 2);
  return day <= days && hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
}

/** What a time must be, for error messages. */
export const TIME_RULE = 'a time like 2026-09-28T10:00:00.000Z (RFC 3339 in UTC, with milliseconds)';

/** The ledger time of a `Date`: `2026-09-28T10:00:00.000Z`. */
export function timeOf(date: Date): string {
  return date.toISOString();
}

/**
 * A string that identifies an item, for maps: two items have the same key exactly when they are
 * the same item. A session id has no newline and a part is digits, so neither form is ambiguous.
 */
export function itemKey(item: Item): string {
  return item.type === 'turn' ? `t${item.session}\n${item.turn}` : `e${item.part}:${item.id}`;
}

/** Whether two items are the same item. */
export function sameItem(a: Item, b: Item): boolean {
  return a.type === 'turn'
    ? b.type === 'turn' && a.session === b.session && sameTurn(a.turn, b.turn)
    : b.type === 'edit' && a.id === b.id && a.part === b.part;
}

/** Whether two turns are the same, also when one is a small turn given as a bigint. */
function sameTurn(a: Turn, b: Turn): boolean {
  if (a === b) return true;
  if (typeof a === typeof b) return false;
  const number = typeof a === 'number' ? a : (b as number);
  return Number.isSafeInteger(number) && BigInt(number) === (typeof a === 'bigint' ? a : b);
}
