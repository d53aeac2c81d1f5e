/**
 * fast-check arbitraries for the fuzz harnesses (`test/fuzz/`): valid Honcho records, with every
 * kind of string the format must carry; the same records written in the other forms serde
 * accepts (keys in any order, whitespace, escapes); lines damaged at random; JSON-ish text; and
 * whole files made of all of these.
 *
 * Every record object is built with its keys in canonical order, so that `JSON.stringify(record)`
 * ({@link stringifyExact}, for a turn that is a bigint) is the canonical line that `encodeRecord`
 * must write (format.md: serde_json escapes a well-formed string exactly as `JSON.stringify` does).
 */
import * as fc from 'fast-check';
import {
  type Action,
  encodeRecord,
  type Item,
  isSessionId,
  itemKey,
  MAX_PART,
  MAX_STATUS,
  MAX_TURN,
  type Record,
  type Turn,
  type Workspace,
} from '../../lib/index.js';

// -- strings ------------------------------------------------------------------------------------

/** Characters that need care: JSON's escapes, control characters, non-ASCII, non-BMP, odd code points. */
const TRICKY = [
  '"',
  '\\',
  '/',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u00e9',
  '\u00ff',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\u4e2d',
  '\u{1f600}',
  '\u{10ffff}',
  '\u{1d11e}',
  '\u0301',
  ' ',
  '{',
  '}',
  ':',
  ',',
] as const;

/** One code point of any kind (never a lone surrogate): the format must carry them all. */
const codePoint: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
);

/** A well-formed string of any code points: control characters, quotes, backslashes, non-BMP. */
export const text = (maxLength = 24): fc.Arbitrary<string> => fc.string({ unit: codePoint, maxLength });

const SESSION_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-'];

/** A session id: 1 to 128 of `A-Z a-z 0-9 . _ -`, not `.` or `..`. */
export const sessionId: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...SESSION_CHARS), minLength: 1, maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...SESSION_CHARS), minLength: 120, maxLength: 128 }) },
    { weight: 1, arbitrary: fc.constantFrom('chat-1', '...', '.a', 'a.', '_', '-', '0'.repeat(128)) },
  )
  .filter(isSessionId);

export const workspace: fc.Arbitrary<Workspace> = fc.constantFrom('trusted', 'untrusted', 'fleet');

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** A ledger time: `YYYY-MM-DDTHH:MM:SS.mmmZ`, years 0000-9999, on a day that exists (29 February of leap years too). */
export const time: fc.Arbitrary<string> = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1900, 2000, 2024, 2026, 9999)),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    ms: fc.integer({ min: 0, max: 999 }),
  })
  .map(({ year, month, day, hour, minute, second, ms }) => {
    const last = month === 2 && leap(year) ? 29 : (DAYS[month - 1] as number);
    return `${pad(year, 4)}-${pad(month, 2)}-${pad(Math.min(day, last), 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(ms, 3)}Z`;
  });

const inRange = (max: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: Math.min(max, 1000) }) },
    {
      weight: 2,
      arbitrary: max > 0x7fff_ffff ? fc.maxSafeNat().map((n) => n % (max + 1)) : fc.integer({ min: 0, max }),
    },
    { weight: 1, arbitrary: fc.constantFrom(0, 1, max, max - 1) },
  );

// -- records ------------------------------------------------------------------------------------

/** What stands for a bigint in {@link stringifyExact}'s first pass (a whole string of two noncharacters, a word and digits: no arbitrary here makes one in practice). */
const BIGINT_MARK = '\uffff\ufffebigint:';
const MARKED = new RegExp(`"${BIGINT_MARK}(\\d+)"`, 'g');

/** `JSON.stringify(value)`, with a bigint written as its digits (as serde_json writes a u64) rather than refused. */
export function stringifyExact(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v)).replace(
    MARKED,
    '$1',
  );
}

/** A turn: mostly a number, sometimes a u64 only a bigint holds, its edges among them. */
const turnValue: fc.Arbitrary<Turn> = fc.oneof(
  { weight: 6, arbitrary: inRange(Number.MAX_SAFE_INTEGER) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.bigInt({ min: 2n ** 53n, max: MAX_TURN }),
      fc.constantFrom(2n ** 53n, 2n ** 53n + 1n, MAX_TURN - 1n, MAX_TURN),
    ),
  },
);

export const item: fc.Arbitrary<Item> = fc.oneof(
  fc.tuple(sessionId, turnValue).map(([session, turn]): Item => ({ type: 'turn', session, turn })),
  fc.tuple(text(), inRange(MAX_PART)).map(([id, part]): Item => ({ type: 'edit', id, part })),
);

export const action: fc.Arbitrary<Action> = fc.oneof(
  fc.tuple(workspace, text()).map(([w, speaker]): Action => ({ type: 'turn', workspace: w, speaker })),
  fc
    .tuple(workspace, text(), sessionId, text(60))
    .map(([w, peer, session, t]): Action => ({ type: 'conclude', workspace: w, peer, session, text: t })),
  fc.tuple(workspace, text(60)).map(([w, t]): Action => ({ type: 'unconclude', workspace: w, text: t })),
  fc.tuple(sessionId, text(60)).map(([session, t]): Action => ({ type: 'fleet', session, text: t })),
  fc.tuple(sessionId, text(60)).map(([session, t]): Action => ({ type: 'retract', session, text: t })),
  text().map((why): Action => ({ type: 'skip', why })),
);

const status: fc.Arbitrary<number | null> = fc.oneof(fc.constant(null), inRange(MAX_STATUS));

/** A valid record of any kind, its keys in canonical order. */
export const record: fc.Arbitrary<Record> = fc.oneof(
  fc.tuple(time, item, action).map(([t, i, a]): Record => ({ type: 'decided', time: t, item: i, action: a })),
  fc
    .tuple(time, item, fc.array(text(), { maxLength: 4 }))
    .map(([t, i, ids]): Record => ({ type: 'sent', time: t, item: i, ids })),
  fc
    .tuple(time, item, status, text())
    .map(([t, i, s, kind]): Record => ({ type: 'failed', time: t, item: i, status: s, kind })),
);

/**
 * A sequence of records that keeps the rules: distinct items, each decided once, and some of the
 * waiting ones (not `skip`) sent or failed once, somewhere after their decision.
 */
export const ruleKeepingRecords = (maxItems = 12): fc.Arbitrary<Record[]> =>
  fc
    .tuple(
      fc.uniqueArray(fc.tuple(item, action, time), { selector: ([i]) => itemKey(i), maxLength: maxItems }),
      fc.array(fc.tuple(fc.nat(), fc.boolean(), time, fc.array(text(8), { maxLength: 2 }), status, text(8)), {
        maxLength: maxItems,
      }),
    )
    .map(([decisions, outcomes]) => {
      const out: Record[] = decisions.map(([i, a, t]) => ({ type: 'decided', time: t, item: i, action: a }));
      const waiting = decisions.filter(([, a]) => a.type !== 'skip').map(([i]) => i);
      const done = new Set<number>();
      for (const [pick, isSent, t, ids, s, kind] of outcomes) {
        if (waiting.length === 0) break;
        const which = pick % waiting.length;
        if (done.has(which)) continue;
        done.add(which);
        const target = waiting[which] as Item;
        const after = out.findIndex((r) => r.type === 'decided' && r.item === target) + 1;
        const at = after + (pick % (out.length - after + 1));
        out.splice(
          at,
          0,
          isSent
            ? { type: 'sent', time: t, item: target, ids }
            : { type: 'failed', time: t, item: target, status: s, kind },
        );
      }
      return out;
    });

// -- the other forms serde reads ------------------------------------------------------------------

/** JSON whitespace, between tokens. */
const whitespace: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(' ', '\t', '\r', '\n'), maxLength: 3 }) },
);

/** How to write a string: which code points to escape (`\uXXXX`, surrogate pairs for non-BMP, `\/`). */
function writeString(s: string, escapeMask: number): string {
  let out = '"';
  let n = 0;
  for (const ch of s) {
    const escaped = ((escapeMask >>> (n % 31)) & 1) === 1;
    n++;
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\' || cp < 0x20) {
      out += JSON.stringify(ch).slice(1, -1);
    } else if (escaped) {
      if (ch === '/') out += '\\/';
      else if (cp > 0xffff)
        out += [...ch.split('')].map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
      else out += `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    } else {
      out += ch;
    }
  }
  return `${out}"`;
}

/** JSON as a tree that keeps duplicate keys and can hold raw text: what the writers below write. */
type Node =
  | { readonly kind: 'raw'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'array'; readonly items: Node[] }
  | { readonly kind: 'object'; readonly entries: [string, Node][] };

const raw = (text: string): Node => ({ kind: 'raw', text });
const str = (value: string): Node => ({ kind: 'string', value });
const obj = (...entries: [string, Node][]): Node => ({ kind: 'object', entries });
const arr = (...items: Node[]): Node => ({ kind: 'array', items });

/** How to shape a record, within what serde accepts: bit 0 the record as a sequence, 1 the item, 2 the action, 3 nested tags as indices, 4 the workspace as a map. */
type Shape = number;

const ITEM_TAGS = ['turn', 'edit'];
const ACTION_TAGS = ['turn', 'conclude', 'unconclude', 'fleet', 'retract', 'skip'];

/** A struct variant, as a map with its tag or a sequence with the tag first. */
function variant(tag: Node, fields: [string, Node][], asSequence: boolean): Node {
  return asSequence ? arr(tag, ...fields.map(([, v]) => v)) : obj(['type', tag], ...fields);
}

/** `r` as a tree, in one of the shapes serde reads (`shape`). */
function treeOf(r: Record, shape: Shape): Node {
  const bit = (n: number): boolean => ((shape >>> n) & 1) === 1;
  const nestedTag = (tags: readonly string[], tag: string): Node =>
    bit(3) ? raw(String(tags.indexOf(tag))) : str(tag);
  const ws = (w: Workspace): Node => (bit(4) ? obj([w, raw('null')]) : str(w));
  const i = r.item;
  const itemNode =
    i.type === 'turn'
      ? variant(
          nestedTag(ITEM_TAGS, 'turn'),
          [
            ['session', str(i.session)],
            ['turn', raw(String(i.turn))],
          ],
          bit(1),
        )
      : variant(
          nestedTag(ITEM_TAGS, 'edit'),
          [
            ['id', str(i.id)],
            ['part', raw(String(i.part))],
          ],
          bit(1),
        );
  let fields: [string, Node][];
  if (r.type === 'decided') {
    const a = r.action;
    const tag = nestedTag(ACTION_TAGS, a.type);
    const af: [string, Node][] =
      a.type === 'turn'
        ? [
            ['workspace', ws(a.workspace)],
            ['speaker', str(a.speaker)],
          ]
        : a.type === 'conclude'
          ? [
              ['workspace', ws(a.workspace)],
              ['peer', str(a.peer)],
              ['session', str(a.session)],
              ['text', str(a.text)],
            ]
          : a.type === 'unconclude'
            ? [
                ['workspace', ws(a.workspace)],
                ['text', str(a.text)],
              ]
            : a.type === 'skip'
              ? [['why', str(a.why)]]
              : [
                  ['session', str(a.session)],
                  ['text', str(a.text)],
                ];
    fields = [['action', variant(tag, af, bit(2))]];
  } else if (r.type === 'sent') {
    fields = [['ids', arr(...r.ids.map(str))]];
  } else {
    fields = [
      ['status', raw(r.status === null ? 'null' : String(r.status))],
      ['kind', str(r.kind)],
    ];
  }
  return variant(str(r.type), [['time', str(r.time)], ['item', itemNode], ...fields], bit(0));
}

/**
 * `node` written as JSON: keys in the order `order` gives (a permutation seed; the tag too),
 * whitespace from `spaces`, strings escaped by `escapes`.
 */
function writeTree(node: Node, order: number, spaces: readonly string[], escapes: number): string {
  let k = 0;
  const ws = (): string => spaces[k++ % spaces.length] ?? '';
  const write = (v: Node): string => {
    switch (v.kind) {
      case 'raw':
        return v.text;
      case 'string':
        return writeString(v.value, escapes);
      case 'array':
        return `[${ws()}${v.items.map((e) => write(e)).join(`${ws()},${ws()}`)}${ws()}]`;
      case 'object': {
        const ranked = v.entries.map((entry, n) => ({
          entry,
          rank: (Math.imul(order ^ (n + 1), 0x9e3779b1) >>> 7) % 1009,
          n,
        }));
        ranked.sort((a, b) => a.rank - b.rank || a.n - b.n);
        return `{${ws()}${ranked.map(({ entry: [key, value] }) => `${writeString(key, escapes)}${ws()}:${ws()}${write(value)}`).join(`${ws()},${ws()}`)}${ws()}}`;
      }
    }
  };
  return `${ws()}${write(node)}${ws()}`;
}

const forms = fc.record({
  shape: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 31 }) }),
  order: fc.nat(),
  spaces: fc.array(whitespace, { minLength: 1, maxLength: 8 }),
  escapes: fc.oneof(fc.constant(0), fc.nat()),
});

/**
 * A valid record written in one of the other forms serde accepts: keys in any order, whitespace
 * between tokens, characters escaped, records, items and actions as sequences with their tag
 * first, nested tags as variant indices, workspaces as one-key maps.
 */
export const recordInOtherForm: fc.Arbitrary<{ readonly record: Record; readonly line: string }> = fc
  .tuple(record, forms)
  .map(([r, { shape, order, spaces, escapes }]) => ({
    record: r,
    line: writeTree(treeOf(r, shape), order, spaces, escapes),
  }));

// -- damage ---------------------------------------------------------------------------------------

/** Bytes a mutation likes to put in: JSON's punctuation, digits, letters of keywords, NUL, invalid UTF-8, a newline. */
const MUTATION_BYTES = [
  ...Buffer.from('{}[]":,.-+0123456789eEtrufalsn \\\t\r\nabcdiyxz/u'),
  0x00,
  0x7f,
  0x80,
  0xbf,
  0xc0,
  0xc3,
  0xe2,
  0xed,
  0xf0,
  0xf4,
  0xf5,
  0xff,
];

/** One change to a line's bytes. Positions are taken modulo the length when applied. */
export type Mutation =
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'set'; readonly at: number; readonly byte: number }
  | { readonly kind: 'delete'; readonly at: number; readonly length: number }
  | { readonly kind: 'insert'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly kind: 'repeat'; readonly at: number; readonly length: number }
  | { readonly kind: 'cut'; readonly at: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    byte: fc.oneof(fc.constantFrom(...MUTATION_BYTES), fc.integer({ min: 0, max: 255 })),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.array(fc.constantFrom(...MUTATION_BYTES), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
);

/** `bytes` with `mutations` applied in turn (a new buffer). */
export function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Buffer {
  let b = Buffer.from(bytes);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % b.length;
    switch (m.kind) {
      case 'flip':
        if (b.length > 0) b[at] = (b[at] as number) ^ (1 << m.bit);
        break;
      case 'set':
        if (b.length > 0) b[at] = m.byte;
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.length)]);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
        break;
      case 'repeat':
        b = Buffer.concat([b.subarray(0, at + m.length), b.subarray(at)]);
        break;
      case 'cut':
        b = b.subarray(0, at);
        break;
    }
  }
  return b;
}

/** A valid record's canonical line (no newline), with 1 to 4 random changes. */
export const mutatedLine: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.oneof(
      record.map((r) => encodeRecord(r)),
      recordInOtherForm.map(({ line }) => line),
    ),
    fc.array(mutation, { minLength: 1, maxLength: 4 }),
  )
  .map(([line, mutations]) => mutate(Buffer.from(line, 'utf8'), mutations));

// -- JSON-ish text ---------------------------------------------------------------------------------

const KEYS = [
  'type',
  'time',
  'item',
  'action',
  'ids',
  'status',
  'kind',
  'session',
  'turn',
  'id',
  'part',
  'workspace',
  'speaker',
  'peer',
  'text',
  'why',
  'x',
  '',
];
const TAGS = [
  'decided',
  'sent',
  'failed',
  'turn',
  'edit',
  'conclude',
  'unconclude',
  'fleet',
  'retract',
  'skip',
  'trusted',
  'untrusted',
  'Decided',
  'nope',
];
const NUMBERS = [
  '0',
  '1',
  '2',
  '3',
  '5',
  '-0',
  '-1',
  '3.0',
  '1e3',
  '1E-2',
  '0.5',
  '01',
  '65535',
  '65536',
  '4294967295',
  '4294967296',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '18446744073709551615',
  '18446744073709551616',
  '-9223372036854775808',
  '1e400',
  '-',
  '1.',
  '.5',
  '+1',
  'NaN',
  'Infinity',
];
const SCALARS = [
  'null',
  'true',
  'false',
  'nul',
  'tru',
  '"2026-09-28T10:00:00.000Z"',
  '"2026-02-29T10:00:00.000Z"',
  '"chat-1"',
  '".."',
  '"\\ud800"',
  '"\\ud83d\\ude00"',
  '"\\u00e9"',
  '"\\x"',
  '"\u0001"',
  '"é"',
];

/**
 * Text shaped like a ledger line: objects and arrays of the format's keys and tags, numbers in
 * and out of range, duplicated keys, odd literals; nested to any depth up to past serde's limit.
 */
export const jsonIsh: fc.Arbitrary<string> = fc.letrec<{ value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...NUMBERS, ...SCALARS),
    fc.constantFrom(...TAGS).map((t) => `"${t}"`),
    text(12).map((s) => JSON.stringify(s)),
    tie('object'),
    tie('array'),
  ),
  object: fc
    .array(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 6 })
    .map((entries) => `{${entries.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
  array: fc.array(tie('value'), { maxLength: 5 }).map((values) => `[${values.join(',')}]`),
})).value;

/** One edit of a record's tree: a value replaced by JSON-ish text, a field dropped, added or doubled, a string changed. */
type TreeEdit = {
  readonly op: 'replace' | 'drop' | 'add' | 'double' | 'retag';
  readonly at: number;
  readonly key: string;
  readonly value: string;
};

/** Every node of `root` (pre-order) with a way to replace it, and every object. */
function nodesOf(root: Node): {
  slots: ((n: Node) => void)[];
  objects: [string, Node][][];
  strings: ((n: Node) => void)[];
} {
  const slots: ((n: Node) => void)[] = [];
  const objects: [string, Node][][] = [];
  const strings: ((n: Node) => void)[] = [];
  const visit = (node: Node, set: (n: Node) => void): void => {
    slots.push(set);
    if (node.kind === 'string') strings.push(set);
    if (node.kind === 'array') node.items.forEach((child, n) => visit(child, (x) => (node.items[n] = x)));
    if (node.kind === 'object') {
      objects.push(node.entries);
      node.entries.forEach((entry) => visit(entry[1], (x) => (entry[1] = x)));
    }
  };
  visit(root, () => undefined);
  return { slots, objects, strings };
}

/**
 * A valid record with one or two edits to its JSON: mostly refused, in every way serde refuses
 * (unknown, missing and duplicate fields, wrong types, unknown variants, numbers out of range),
 * sometimes still a record.
 */
export const nearRecord: fc.Arbitrary<string> = fc
  .tuple(
    record,
    forms,
    fc.array(
      fc.record({
        op: fc.constantFrom('replace' as const, 'drop' as const, 'add' as const, 'double' as const, 'retag' as const),
        at: fc.nat(),
        key: fc.constantFrom(...KEYS),
        value: fc.oneof(
          fc.constantFrom(...NUMBERS, ...SCALARS),
          fc.constantFrom(...TAGS).map((t) => `"${t}"`),
          jsonIsh,
        ),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  )
  .map(([r, { shape, order, spaces, escapes }, edits]) => {
    const root = treeOf(r, shape);
    for (const { op, at, key, value } of edits as readonly TreeEdit[]) {
      const { slots, objects, strings } = nodesOf(root);
      const entries = objects[at % Math.max(1, objects.length)];
      if (op === 'replace') (slots[at % slots.length] as (n: Node) => void)(raw(value));
      else if (op === 'retag' && strings.length > 0)
        (strings[at % strings.length] as (n: Node) => void)(raw(value.startsWith('"') ? value : `"${key}"`));
      else if (entries !== undefined && entries.length > 0) {
        const e = at % entries.length;
        if (op === 'drop') entries.splice(e, 1);
        else if (op === 'add') entries.splice(e, 0, [key, raw(value)]);
        else if (op === 'double') entries.splice(e, 0, [(entries[e] as [string, Node])[0], raw(value)]);
      }
    }
    return writeTree(root, order, spaces, escapes);
  });

/** Brackets nested `depth` deep, closed or not: serde's recursion limit is 128. */
export const deepNesting: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 100, max: 3000 }), fc.constantFrom('[', '{"type":', '{"item":', '["sent",'), fc.boolean())
  .map(([depth, open, closed]) => {
    const close = open === '[' || open === '["sent",' ? ']' : '}';
    return open.repeat(depth) + (closed ? `1${close.repeat(depth)}` : '');
  });

// -- files ----------------------------------------------------------------------------------------

/** What a fuzzed file is made of, for the statistics. */
export type FileKind =
  | 'random bytes'
  | 'valid lines'
  | 'damaged lines'
  | 'empty lines'
  | 'NUL lines'
  | 'no newline'
  | 'long lines';

const line = (r: Record): string => `${encodeRecord(r)}\n`;

/** Random bytes, with newlines now and then. */
const randomBytes: fc.Arbitrary<Buffer> = fc
  .array(
    fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 255 }) }, { weight: 1, arbitrary: fc.constant(10) }),
    { maxLength: 600 },
  )
  .map((bytes) => Buffer.from(bytes));

/** A change to the lines of a file: one duplicated, dropped, swapped with another, a blank line put in, a CRLF ending. */
type LineDamage = {
  readonly op: 'duplicate' | 'drop' | 'swap' | 'blank' | 'crlf';
  readonly at: number;
  readonly to: number;
};

const lineDamage: fc.Arbitrary<LineDamage> = fc.record({
  op: fc.constantFrom('duplicate' as const, 'drop' as const, 'swap' as const, 'blank' as const, 'crlf' as const),
  at: fc.nat(),
  to: fc.nat(),
});

/** Lines that keep the rules, then damaged: lines duplicated, dropped, swapped; then bytes changed. */
const damagedLines: fc.Arbitrary<Buffer> = fc
  .tuple(ruleKeepingRecords(), fc.array(lineDamage, { maxLength: 3 }), fc.array(mutation, { maxLength: 3 }))
  .filter(([, lines, bytes]) => lines.length + bytes.length > 0)
  .map(([records, lineDamages, mutations]) => {
    const lines = records.map(line);
    for (const { op, at: a, to: t } of lineDamages) {
      if (lines.length === 0) break;
      const at = a % lines.length;
      const to = t % lines.length;
      if (op === 'duplicate') lines.splice(to, 0, lines[at] as string);
      else if (op === 'drop') lines.splice(at, 1);
      else if (op === 'swap') [lines[at], lines[to]] = [lines[to] as string, lines[at] as string];
      else if (op === 'blank') lines.splice(at, 0, '\n');
      else lines[at] = (lines[at] as string).replace(/\n$/, '\r\n');
    }
    return mutate(Buffer.from(lines.join(''), 'utf8'), mutations);
  });

/** A file in one of the shapes a ledger can be found in, damaged or not. */
export const ledgerFile: fc.Arbitrary<{ readonly kind: FileKind; readonly bytes: Buffer }> = fc.oneof(
  randomBytes.map((bytes) => ({ kind: 'random bytes' as const, bytes })),
  ruleKeepingRecords().map((records) => ({
    kind: 'valid lines' as const,
    bytes: Buffer.from(records.map(line).join(''), 'utf8'),
  })),
  { weight: 3, arbitrary: damagedLines.map((bytes) => ({ kind: 'damaged lines' as const, bytes })) },
  fc.tuple(ruleKeepingRecords(4), fc.integer({ min: 1, max: 2000 }), fc.nat()).map(([records, n, at]) => {
    const lines = records.map(line);
    lines.splice(at % (lines.length + 1), 0, '\n'.repeat(n));
    return { kind: 'empty lines' as const, bytes: Buffer.from(lines.join(''), 'utf8') };
  }),
  fc
    .tuple(ruleKeepingRecords(4), fc.integer({ min: 0, max: 5000 }), fc.nat(), fc.boolean())
    .map(([records, n, at, newline]) => {
      const parts = records.map((r) => Buffer.from(line(r), 'utf8'));
      parts.splice(at % (parts.length + 1), 0, Buffer.concat([Buffer.alloc(n), Buffer.from(newline ? '\n' : '')]));
      return { kind: 'NUL lines' as const, bytes: Buffer.concat(parts) };
    }),
  fc.tuple(fc.uint8Array({ maxLength: 3000 }), ruleKeepingRecords(3)).map(([random, records]) => ({
    kind: 'no newline' as const,
    // whole lines without their newlines, then random bytes: one unfinished line
    bytes: Buffer.concat([
      Buffer.from(records.map((r) => encodeRecord(r)).join(''), 'utf8'),
      Buffer.from(random.filter((b) => b !== 10)),
    ]),
  })),
  fc
    .tuple(
      ruleKeepingRecords(3),
      fc.integer({ min: 10_000, max: 300_000 }),
      fc.constantFrom('valid', 'garbage', 'torn'),
    )
    .map(([records, size, how]) => {
      const lines = records.map(line);
      const long: Record = {
        type: 'decided',
        time: '2026-09-28T10:00:00.000Z',
        item: { type: 'edit', id: 'long', part: 0 },
        action: { type: 'skip', why: 'é"\\\u0001x'.repeat(Math.floor(size / 5)) },
      };
      const tail = how === 'valid' ? line(long) : how === 'garbage' ? `${'x'.repeat(size)}\n` : line(long).slice(0, -2);
      return { kind: 'long lines' as const, bytes: Buffer.from(lines.join('') + tail, 'utf8') };
    }),
);
