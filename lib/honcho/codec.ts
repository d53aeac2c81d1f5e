/**
 * The Honcho ledger's line format: a record as `serde_json::to_string` writes it with memoryd's
 * serde attributes, and read back with serde_json's verdicts.
 *
 * Writing: compact, keys in declaration order with the `type` tag first, a missing `status` as
 * `null`, strings escaped as serde_json does (`\"`, `\\`, `\b \f \n \r \t`, other controls as
 * `\u00xx` in lower case, everything else raw UTF-8). `JSON.stringify` escapes well-formed strings
 * exactly so; strings that are not well-formed (a lone surrogate) cannot be written as UTF-8 and
 * are refused.
 *
 * Reading (`decode.ts`; `#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]` on `Record`,
 * `Item` and `Action`): keys in any order, unknown, missing and duplicate fields refused at every
 * level, integers in range (`part` u32, `status` u16, `turn` u64, exactly: a bigint above 2^53-1,
 * see {@link Turn}), times and session ids checked. Like serde, it also accepts what serde
 * accepts: an internally tagged enum written as a sequence (`["sent", time, item, ids]`), a
 * nested tag given as a variant index, a workspace written as `{"trusted": null}`.
 *
 * @module
 */
import { InvalidRecordError } from '../errors.js';
import { lineTooLong, MAX_LINE_BYTES, type RecordCodec } from '../log.js';
import { CanonicalLines, readCanonical } from './canonical.js';
import { cborValueScan } from './cbor-values.js';
import { ACTION_VARIANTS, decodeRecordSerde, ITEM_VARIANTS, RECORD_VARIANTS } from './decode.js';
import {
  type Action,
  type Item,
  isSessionId,
  isTime,
  MAX_PART,
  MAX_STATUS,
  MAX_TURN,
  type Record,
  SESSION_ID_RULE,
  TIME_RULE,
  type Turn,
  turnOf,
  WORKSPACES,
  type Workspace,
} from './record.js';
import { scanRun } from './scan.js';

export { decodeItemText, decodeRecordSerde } from './decode.js';

// -- reading ----------------------------------------------------------------------------------

/**
 * Reads one line's bytes `[start, end)` (a trailing newline is whitespace) as serde_json reads a
 * `Record` with `from_slice`: a line in canonical form the fast way (`canonical.ts`), any other
 * the serde way (`decode.ts`), which gives serde_json's verdict.
 * @throws `DecodeError` with serde_json's error text
 */
export function decodeRecord(bytes: Uint8Array, start = 0, end = bytes.length): Record {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return readCanonical(buffer, start, end) ?? decodeRecordSerde(buffer, start, end);
}

/** Reads a record from text; see {@link decodeRecord}. */
export function decodeRecordText(line: string): Record {
  return decodeRecord(Buffer.from(line, 'utf8'));
}

// -- writing ----------------------------------------------------------------------------------

const json = JSON.stringify;

/** The canonical JSON of a valid item alone, as it appears inside a record's line. */
export function encodeItem(item: Item): string {
  // a session id is of `A-Z a-z 0-9 . _ -` alone (checked): nothing in it is escaped
  return item.type === 'turn'
    ? `{"type":"turn","session":"${item.session}","turn":${item.turn}}`
    : `{"type":"edit","id":${json(item.id)},"part":${item.part}}`;
}

/** The canonical JSON of a valid action alone, as it appears inside a `decided` record's line. */
export function encodeAction(action: Action): string {
  switch (action.type) {
    case 'turn':
      return `{"type":"turn","workspace":"${action.workspace}","speaker":${json(action.speaker)}}`;
    case 'conclude':
      return `{"type":"conclude","workspace":"${action.workspace}","peer":${json(action.peer)},"session":${json(action.session)},"text":${json(action.text)}}`;
    case 'unconclude':
      return `{"type":"unconclude","workspace":"${action.workspace}","text":${json(action.text)}}`;
    case 'fleet':
    case 'retract':
      return `{"type":"${action.type}","session":${json(action.session)},"text":${json(action.text)}}`;
    case 'skip':
      return `{"type":"skip","why":${json(action.why)}}`;
  }
}

/** The canonical line of a record already checked by {@link normalizeRecord}, without its newline. */
export function encodeValid(record: Record): string {
  const head = `{"type":"${record.type}","time":"${record.time}","item":${encodeItem(record.item)}`;
  switch (record.type) {
    case 'decided':
      return `${head},"action":${encodeAction(record.action)}}`;
    case 'sent':
      return `${head},"ids":${json(record.ids)}}`;
    case 'failed':
      return `${head},"status":${record.status === null ? 'null' : record.status},"kind":${json(record.kind)}}`;
  }
}

/**
 * The canonical line of a record (without its newline): byte for byte what memoryd writes.
 * @throws {@link InvalidRecordError} when `record` is not a valid record
 */
export function encodeRecord(record: unknown): string {
  return encodeValid(normalizeRecord(record));
}

// -- checking a caller's record ---------------------------------------------------------------

function refuse(why: string): never {
  throw new InvalidRecordError(why);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return json(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}

function objectWith(value: unknown, where: string, fields: readonly string[]): { readonly [key: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    refuse(`${where} must be an object, not ${describe(value)}`);
  // `for...in` over the own keys, in `Object.keys`'s order, without the array that makes (three
  // of them a record checked); inherited keys are no field of the value's
  for (const key in value) {
    if (!fields.includes(key) && Object.hasOwn(value, key))
      refuse(`${where} has an unknown field \`${key}\` (expected ${fields.map((f) => `\`${f}\``).join(', ')})`);
  }
  return value as { readonly [key: string]: unknown };
}

// Each object's fields, made once: a literal in the call would be an array a record checked.
const TURN_ITEM_FIELDS = ['type', 'session', 'turn'];
const EDIT_ITEM_FIELDS = ['type', 'id', 'part'];
const TURN_FIELDS = ['type', 'workspace', 'speaker'];
const CONCLUDE_FIELDS = ['type', 'workspace', 'peer', 'session', 'text'];
const UNCONCLUDE_FIELDS = ['type', 'workspace', 'text'];
const SESSION_TEXT_FIELDS = ['type', 'session', 'text'];
const SKIP_FIELDS = ['type', 'why'];
const DECIDED_FIELDS = ['type', 'time', 'item', 'action'];
const SENT_FIELDS = ['type', 'time', 'item', 'ids'];
const FAILED_FIELDS = ['type', 'time', 'item', 'status', 'kind'];

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') refuse(`${where} must be a string, not ${describe(value)}`);
  if (!value.isWellFormed()) refuse(`${where} has a lone surrogate, which UTF-8 cannot hold`);
  return value;
}

function integer(value: unknown, where: string, max: number, limit: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max || Object.is(value, -0)) {
    refuse(`${where} must be an integer from 0 to ${max}${limit}, not ${describe(value)}`);
  }
  return value;
}

/** A caller's turn, in its one form ({@link Turn}): a bigint of a small turn becomes the number. */
function turnIn(value: unknown, where: string): Turn {
  if (typeof value === 'bigint' && value >= 0n && value <= MAX_TURN) return turnOf(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0)) return value;
  const inexact = typeof value === 'number' && Number.isInteger(value) && value > Number.MAX_SAFE_INTEGER;
  refuse(
    `${where} must be an integer from 0 to ${MAX_TURN} (2^64-1), not ${describe(value)}${inexact ? `: give a turn above ${Number.MAX_SAFE_INTEGER} (2^53-1) as a bigint, which holds it exactly` : ''}`,
  );
}

function session(value: unknown, where: string): string {
  const s = text(value, where);
  if (!isSessionId(s)) refuse(`${where} must be ${SESSION_ID_RULE}, not ${describe(s)}`);
  return s;
}

function workspace(value: unknown, where: string): Workspace {
  if (!WORKSPACES.includes(value as Workspace))
    refuse(`${where} must be one of ${WORKSPACES.join(', ')}, not ${describe(value)}`);
  return value as Workspace;
}

function tagOf(value: unknown, where: string, tags: readonly string[]): string {
  const tag = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof tag !== 'string' || !tags.includes(tag)) {
    refuse(`${where} must have a type of ${tags.join(', ')}, not ${describe(tag ?? value)}`);
  }
  return tag;
}

/** A caller's item, checked, as a fresh object. */
export function normalizeItem(value: unknown, where = 'the item'): Item {
  if (tagOf(value, where, ITEM_VARIANTS) === 'turn') {
    const v = objectWith(value, where, TURN_ITEM_FIELDS);
    return {
      type: 'turn',
      session: session(v.session, `${where}'s session`),
      turn: turnIn(v.turn, `${where}'s turn`),
    };
  }
  const v = objectWith(value, where, EDIT_ITEM_FIELDS);
  return { type: 'edit', id: text(v.id, `${where}'s id`), part: integer(v.part, `${where}'s part`, MAX_PART, '') };
}

function normalizeAction(value: unknown): Action {
  const where = 'the action';
  switch (tagOf(value, where, ACTION_VARIANTS)) {
    case 'turn': {
      const v = objectWith(value, where, TURN_FIELDS);
      return {
        type: 'turn',
        workspace: workspace(v.workspace, `${where}'s workspace`),
        speaker: text(v.speaker, `${where}'s speaker`),
      };
    }
    case 'conclude': {
      const v = objectWith(value, where, CONCLUDE_FIELDS);
      return {
        type: 'conclude',
        workspace: workspace(v.workspace, `${where}'s workspace`),
        peer: text(v.peer, `${where}'s peer`),
        session: session(v.session, `${where}'s session`),
        text: text(v.text, `${where}'s text`),
      };
    }
    case 'unconclude': {
      const v = objectWith(value, where, UNCONCLUDE_FIELDS);
      return {
        type: 'unconclude',
        workspace: workspace(v.workspace, `${where}'s workspace`),
        text: text(v.text, `${where}'s text`),
      };
    }
    case 'fleet':
    case 'retract': {
      const v = objectWith(value, where, SESSION_TEXT_FIELDS);
      return {
        type: v.type as 'fleet' | 'retract',
        session: session(v.session, `${where}'s session`),
        text: text(v.text, `${where}'s text`),
      };
    }
    default: {
      const v = objectWith(value, where, SKIP_FIELDS);
      return { type: 'skip', why: text(v.why, `${where}'s why`) };
    }
  }
}

/**
 * A caller's record, checked, as a fresh object that later changes to `value` do not reach.
 * @throws {@link InvalidRecordError} naming the field that is wrong, or saying that its line
 * would be longer than a ledger's line may be ({@link MAX_LINE_BYTES})
 */
export function normalizeRecord(value: unknown): Record {
  return withinLineBound(normalizeFields(value));
}

/** The strings of a record that its line quotes, each as a caller gave it. */
function textsOf(record: Record): string[] {
  const texts = [record.time, record.item.type === 'turn' ? record.item.session : record.item.id];
  if (record.type === 'sent') texts.push(...record.ids);
  else if (record.type === 'failed') texts.push(record.kind);
  else {
    const { action } = record;
    if (action.type === 'turn') texts.push(action.workspace, action.speaker);
    else if (action.type === 'conclude') texts.push(action.workspace, action.peer, action.session, action.text);
    else if (action.type === 'unconclude') texts.push(action.workspace, action.text);
    else if (action.type === 'skip') texts.push(action.why);
    else texts.push(action.session, action.text);
  }
  return texts;
}

/** The UTF-8 bytes `json(text)` takes, quotes included, worked out without making it (it may be longer than a string can be). */
function quotedLength(text: string): number {
  let n = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4; // with its low surrogate: a normalized record has no lone one
      i++;
    } else n += 3;
  }
  return n;
}

/** The most bytes a line takes besides its strings: keys, tags, numbers, and the separators between the strings. */
const FRAME_BYTES = 256;

/**
 * The most bytes the line of `record` can take: a UTF-16 unit takes at most 6 bytes (`\u001f`),
 * and a string its quotes and a comma. Summed without {@link textsOf}'s array: every append
 * asks, and nearly every one is far below the bound.
 */
function mostBytes(record: Record): number {
  let units = record.time.length + (record.item.type === 'turn' ? record.item.session : record.item.id).length;
  let strings = 2;
  if (record.type === 'sent') {
    for (const id of record.ids) units += id.length;
    strings += record.ids.length;
  } else if (record.type === 'failed') {
    units += record.kind.length;
    strings++;
  } else {
    const { action } = record;
    if (action.type === 'turn') units += action.workspace.length + action.speaker.length;
    else if (action.type === 'conclude')
      units += action.workspace.length + action.peer.length + action.session.length + action.text.length;
    else if (action.type === 'unconclude') units += action.workspace.length + action.text.length;
    else if (action.type === 'skip') units += action.why.length;
    else units += action.session.length + action.text.length;
    strings += action.type === 'conclude' ? 4 : action.type === 'skip' ? 1 : 2;
  }
  return FRAME_BYTES + 6 * units + 3 * strings;
}

/** `record`, when its line fits {@link MAX_LINE_BYTES}. */
function withinLineBound(record: Record): Record {
  // only a record whose strings are long together needs measuring
  if (mostBytes(record) <= MAX_LINE_BYTES) return record;
  const texts = textsOf(record);
  let quoted = 0;
  for (const text of texts) quoted += quotedLength(text);
  // past the bound by its strings alone, the line is not made (it could be longer than a string can be)
  if (quoted > MAX_LINE_BYTES) refuse(lineTooLong(quoted, false));
  const bytes = Buffer.byteLength(encodeValid(record));
  if (bytes > MAX_LINE_BYTES) refuse(lineTooLong(bytes));
  return record;
}

function normalizeFields(value: unknown): Record {
  const where = 'the record';
  const type = tagOf(value, where, RECORD_VARIANTS);
  const fields = type === 'decided' ? DECIDED_FIELDS : type === 'sent' ? SENT_FIELDS : FAILED_FIELDS;
  const v = objectWith(value, where, fields);
  const time = text(v.time, `${where}'s time`);
  if (!isTime(time)) refuse(`${where}'s time must be ${TIME_RULE}, not ${describe(time)}`);
  const item = normalizeItem(v.item);
  if (type === 'decided') return { type, time, item, action: normalizeAction(v.action) };
  if (type === 'sent') {
    if (!Array.isArray(v.ids)) refuse(`${where}'s ids must be an array of strings, not ${describe(v.ids)}`);
    return { type, time, item, ids: v.ids.map((id, n) => text(id, `${where}'s ids[${n}]`)) };
  }
  const status =
    v.status === undefined || v.status === null ? null : integer(v.status, `${where}'s status`, MAX_STATUS, '');
  return { type: 'failed', time, item, status, kind: text(v.kind, `${where}'s kind`) };
}

export const honchoCodec: RecordCodec<Record> = {
  normalize: normalizeRecord,
  encode: encodeRecord,
  encodeChecked: encodeValid,
  decode: decodeRecord,
  // encodeValid writes `type` first, then `time`
  lineStarts: RECORD_VARIANTS.map((type) => `{"type":"${type}","time":"`),
  // the canonical form, checked as bytes (on worker threads for a large file); any other line the serde way
  lineScan: {
    module: new URL('./scan.js', import.meta.url).href,
    scan: scanRun,
    lines: (bytes, from, to, { slots, length }) =>
      new CanonicalLines(bytes, from, to, slots, length, decodeRecordSerde),
  },
  // a LevelDB log's values: their canonical CBOR checked as bytes; any other through cbor-x and normalize
  valueScan: cborValueScan,
};
