/**
 * Reading the Honcho ledger's lines (`codec.ts` writes them) the serde way: with serde_json's
 * verdicts, as memoryd's `#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]`
 * reads them. The codec reads a line in canonical form the fast way (`canonical.ts`) and hands
 * this one any other: neither decoder imports the other.
 *
 * @module
 */
import { DecodeError } from '../errors.js';
import {
  type Content,
  ContentMap,
  JsonNumber,
  SerdeJsonReader,
  type Tagged,
  unexpected,
  unknownField,
  unknownVariant,
} from '../serde-json.js';
import {
  type Action,
  type Item,
  isSessionId,
  isTime,
  MAX_PART,
  MAX_STATUS,
  type Record,
  SESSION_ID_RULE,
  TIME_RULE,
  type Turn,
  turnOf,
  WORKSPACES,
  type Workspace,
} from './record.js';

/** The tags of records, items and actions, in serde's variant order. */
export const RECORD_VARIANTS = ['decided', 'sent', 'failed'] as const;
export const ITEM_VARIANTS = ['turn', 'edit'] as const;
export const ACTION_VARIANTS = ['turn', 'conclude', 'unconclude', 'fleet', 'retract', 'skip'] as const;

/** An error of serde's that has no position (raised while mapping buffered content). */
function invalid(why: string): never {
  throw new DecodeError(why);
}

type Reader<T> = (content: Content) => T;

function invalidType(content: Content, expected: string): never {
  invalid(`invalid type: ${unexpected(content)}, expected ${expected}`);
}

const readString: Reader<string> = (c) => (typeof c === 'string' ? c : invalidType(c, 'a string'));

const readTime: Reader<string> = (c) => {
  if (typeof c !== 'string') invalidType(c, TIME_RULE);
  return isTime(c) ? c : invalid(`invalid value: ${unexpected(c)}, expected ${TIME_RULE}`);
};

const readSession: Reader<string> = (c) => {
  if (typeof c !== 'string') invalidType(c, SESSION_ID_RULE);
  return isSessionId(c) ? c : invalid(`invalid value: ${unexpected(c)}, expected ${SESSION_ID_RULE}`);
};

/** A non-negative integer (serde's primitive visitors, from content): `name` in the errors. */
function nonNegative(c: Content, name: string): JsonNumber {
  if (!(c instanceof JsonNumber) || c.kind === 'f') invalidType(c, name);
  if (c.kind === 'i') invalid(`invalid value: ${unexpected(c)}, expected ${name}`);
  return c;
}

/** An unsigned integer up to `max` (2^53-1 at most). */
function unsigned(name: string, max: number): Reader<number> {
  return (c) => {
    const n = nonNegative(c, name);
    if (n.value > max) invalid(`invalid value: ${unexpected(c)}, expected ${name}`);
    return n.value;
  };
}

/** A u64: any integer of kind `u` is one (the reader gives a larger one as a float). */
const readTurn: Reader<Turn> = (c) => {
  const n = nonNegative(c, 'u64');
  return Number.isSafeInteger(n.value) ? n.value : turnOf(BigInt(n.digits));
};
const readPart = unsigned('u32', MAX_PART);
const readU16 = unsigned('u16', MAX_STATUS);
const readStatus: Reader<number | null> = (c) => (c === null ? null : readU16(c));

const readIds: Reader<string[]> = (c) => {
  if (!Array.isArray(c)) invalidType(c, 'a sequence');
  return c.map(readString);
};

/** A unit-variant enum from content (serde's `ContentDeserializer::deserialize_enum`). */
const readWorkspace: Reader<Workspace> = (c) => {
  let name: string;
  if (typeof c === 'string') {
    name = c;
  } else if (c instanceof ContentMap) {
    if (c.keys.length !== 1) invalid('invalid value: map, expected map with a single key');
    name = c.keys[0] as string;
  } else {
    invalidType(c, 'string or map');
  }
  const index = WORKSPACES.indexOf(name as Workspace);
  if (index === -1) invalid(unknownVariant(name, WORKSPACES));
  if (c instanceof ContentMap) {
    const value = c.values[0] as Content;
    const isUnit = value === null || (value instanceof ContentMap && value.keys.length === 0);
    if (!isUnit) invalidType(value, 'unit');
  }
  return name as Workspace;
};

/** A struct variant's fields: name, reader, and whether it is an `Option` (missing is `null`). */
type Fields = readonly (readonly [name: string, read: Reader<unknown>, optional?: boolean])[];

/**
 * A struct variant from buffered content, as serde's derived visitor reads it: from a map (each
 * entry in order: unknown, duplicate, then its value; then missing fields in declaration order)
 * or from a sequence (fields by position).
 */
function readStruct(content: Content, expecting: string, fields: Fields): unknown[] {
  const names = fields.map(([name]) => name);
  const values: unknown[] = new Array(fields.length);
  if (content instanceof ContentMap) {
    const seen: boolean[] = new Array(fields.length).fill(false);
    for (let e = 0; e < content.keys.length; e++) {
      const key = content.keys[e] as string;
      const f = names.indexOf(key);
      if (f === -1) invalid(unknownField(key, names));
      if (seen[f]) invalid(`duplicate field \`${key}\``);
      seen[f] = true;
      values[f] = (fields[f] as Fields[number])[1](content.values[e] as Content);
    }
    fields.forEach(([name, , optional], f) => {
      if (!seen[f]) {
        if (optional === true) values[f] = null;
        else invalid(`missing field \`${name}\``);
      }
    });
    return values;
  }
  if (Array.isArray(content)) {
    const n = fields.length;
    for (let f = 0; f < n; f++) {
      if (f >= content.length)
        invalid(`invalid length ${f}, expected ${expecting} with ${n} element${n === 1 ? '' : 's'}`);
      values[f] = (fields[f] as Fields[number])[1](content[f] as Content);
    }
    if (content.length > n)
      invalid(`invalid length ${content.length}, expected ${n} element${n === 1 ? '' : 's'} in sequence`);
    return values;
  }
  invalidType(content, expecting);
}

/** An internally tagged enum from buffered content (serde's `TaggedContentVisitor`). */
function readTaggedContent(content: Content, variants: readonly string[], expecting: string): Tagged {
  if (content instanceof ContentMap) {
    const rest = new ContentMap();
    let variant = -1;
    for (let e = 0; e < content.keys.length; e++) {
      const key = content.keys[e] as string;
      const value = content.values[e] as Content;
      if (key === 'type') {
        if (variant !== -1) invalid('duplicate field `type`');
        variant = variantIdentifier(value, variants);
      } else {
        rest.keys.push(key);
        rest.values.push(value);
      }
    }
    if (variant === -1) invalid('missing field `type`');
    return { variant, content: rest };
  }
  if (Array.isArray(content)) {
    if (content.length === 0) invalid('missing field `type`');
    return { variant: variantIdentifier(content[0] as Content, variants), content: content.slice(1) };
  }
  invalidType(content, expecting);
}

/** A variant named by its name or, from content, by its index. */
function variantIdentifier(c: Content, variants: readonly string[]): number {
  if (typeof c === 'string') {
    const index = variants.indexOf(c);
    return index === -1 ? invalid(unknownVariant(c, variants)) : index;
  }
  if (c instanceof JsonNumber && c.kind === 'u') {
    if (c.value < variants.length) return c.value;
    invalid(`invalid value: ${unexpected(c)}, expected variant index 0 <= i < ${variants.length}`);
  }
  invalidType(c, 'variant identifier');
}

function itemFrom({ variant, content }: Tagged): Item {
  if (variant === 0) {
    const [session, turn] = readStruct(content, 'struct variant Item::Turn', [
      ['session', readSession],
      ['turn', readTurn],
    ]) as [string, Turn];
    return { type: 'turn', session, turn };
  }
  const [id, part] = readStruct(content, 'struct variant Item::Edit', [
    ['id', readString],
    ['part', readPart],
  ]) as [string, number];
  return { type: 'edit', id, part };
}

const readItem: Reader<Item> = (c) => itemFrom(readTaggedContent(c, ITEM_VARIANTS, 'internally tagged enum Item'));

const readAction: Reader<Action> = (c) => {
  const { variant, content } = readTaggedContent(c, ACTION_VARIANTS, 'internally tagged enum Action');
  switch (variant) {
    case 0: {
      const [workspace, speaker] = readStruct(content, 'struct variant Action::Turn', [
        ['workspace', readWorkspace],
        ['speaker', readString],
      ]) as [Workspace, string];
      return { type: 'turn', workspace, speaker };
    }
    case 1: {
      const [workspace, peer, session, text] = readStruct(content, 'struct variant Action::Conclude', [
        ['workspace', readWorkspace],
        ['peer', readString],
        ['session', readSession],
        ['text', readString],
      ]) as [Workspace, string, string, string];
      return { type: 'conclude', workspace, peer, session, text };
    }
    case 2: {
      const [workspace, text] = readStruct(content, 'struct variant Action::Unconclude', [
        ['workspace', readWorkspace],
        ['text', readString],
      ]) as [Workspace, string];
      return { type: 'unconclude', workspace, text };
    }
    case 3:
    case 4: {
      const name = variant === 3 ? 'Fleet' : 'Retract';
      const [session, text] = readStruct(content, `struct variant Action::${name}`, [
        ['session', readSession],
        ['text', readString],
      ]) as [string, string];
      return { type: variant === 3 ? 'fleet' : 'retract', session, text };
    }
    default: {
      const [why] = readStruct(content, 'struct variant Action::Skip', [['why', readString]]) as [string];
      return { type: 'skip', why };
    }
  }
};

function recordFrom({ variant, content }: Tagged): Record {
  switch (variant) {
    case 0: {
      const [time, item, action] = readStruct(content, 'struct variant Record::Decided', [
        ['time', readTime],
        ['item', readItem],
        ['action', readAction],
      ]) as [string, Item, Action];
      return { type: 'decided', time, item, action };
    }
    case 1: {
      const [time, item, ids] = readStruct(content, 'struct variant Record::Sent', [
        ['time', readTime],
        ['item', readItem],
        ['ids', readIds],
      ]) as [string, Item, string[]];
      return { type: 'sent', time, item, ids };
    }
    default: {
      const [time, item, status, kind] = readStruct(content, 'struct variant Record::Failed', [
        ['time', readTime],
        ['item', readItem],
        ['status', readStatus, true],
        ['kind', readString],
      ]) as [string, Item, number | null, string];
      return { type: 'failed', time, item, status, kind };
    }
  }
}

/**
 * Reads a line's bytes `[start, end)` (a trailing newline is whitespace) the serde way only, as
 * serde_json reads a `Record` with `from_slice`: what the codec's `decodeRecord` falls back to
 * for a line not in canonical form, and what the tests hold the fast path to.
 * @throws {@link DecodeError} with serde_json's error text
 */
export function decodeRecordSerde(bytes: Uint8Array, start = 0, end = bytes.length): Record {
  const reader = new SerdeJsonReader(bytes, start, end);
  const record = recordFrom(reader.readTagged('type', RECORD_VARIANTS, 'internally tagged enum Record'));
  reader.end();
  return record;
}

/**
 * Reads an item from JSON text (as the CLI takes it), as serde_json reads an `Item`.
 * @throws {@link DecodeError} with serde_json's error text
 */
export function decodeItemText(text: string): Item {
  const reader = new SerdeJsonReader(Buffer.from(text, 'utf8'));
  const item = itemFrom(reader.readTagged('type', ITEM_VARIANTS, 'internally tagged enum Item'));
  reader.end();
  return item;
}

/** The Honcho ledger's codec, for backends. */
