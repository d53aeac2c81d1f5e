/**
 * Random damage to a 10,000-record ledger (issue 5, "Corruption"): single bit flips, a zeroed
 * 4 KiB block, a line duplicated, removed, or swapped with another. For each damaged file the
 * verdict is computed from its bytes alone (`expectedOpen`: the first complete line that does
 * not decode or breaks a rule, replayed with the reference rules), and the open must agree:
 *
 * - damage that leaves a line that does not parse or breaks a rule: the open refuses with that
 *   line's number and reason, and the file's bytes are unchanged;
 * - damage that leaves valid, rule-keeping lines: the open succeeds, with exactly the records the
 *   lines say (the damage is undetected: the line format has no checksum);
 * - damage that removes the last newline: the rest is a torn tail, dropped and cut.
 *
 * It counts, for each kind of damage, how often it is caught, and for bit flips where in a line
 * they fell; the figures go into docs/reliability.md.
 */
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../../backends/jsonl-write-whole.js';
import { syntheticLines } from '../../lib/honcho/synthetic.js';
import { DamagedError, decodeRecord, Ledger, LedgerError, type Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { seedFor } from '../support/fuzz-runner.js';
import { Home } from '../support/ledger.js';
import { type Expected, expectedOpen, type LineDecoder } from '../support/reference-ledger.js';
import { SCALE, scaled } from '../support/scale.js';

const RECORDS = 10_000;
const SEED = seedFor('corruption');

/** The generated ledger, once: its bytes, where each line starts and ends, and its records. */
interface Original {
  readonly bytes: Buffer;
  /** Line k (from 0) is `bytes[starts[k], ends[k])`, `ends[k]` its newline. */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** The line starting at an offset. */
  readonly lineAt: ReadonlyMap<number, number>;
  readonly records: readonly Record[];
}

const home = new Home();
let original: Original | null = null;

async function theOriginal(): Promise<Original> {
  if (original !== null) return original;
  const source = `${home.path}.original`;
  await writeJsonlWhole(source, syntheticLines({ records: RECORDS, seed: 17 }));
  const bytes = readFileSync(source);
  const starts: number[] = [];
  const ends: number[] = [];
  const records: Record[] = [];
  const lineAt = new Map<number, number>();
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(10, start);
    lineAt.set(start, starts.length);
    starts.push(start);
    ends.push(end);
    records.push(decodeRecord(bytes, start, end + 1));
    start = end + 1;
  }
  assert.is(records.length, RECORDS);
  original = { bytes, starts, ends, lineAt, records };
  return original;
}

/** A damaged copy of the original and how to read its lines cheaply: lines known unchanged come from the original's records. */
interface Damaged {
  readonly bytes: Buffer;
  readonly decode: LineDecoder;
  /** The first line (from 1) whose bytes differ from the original's line of the same number; `Infinity` when none. */
  readonly firstChanged: number;
  /** For the statistics: where the damage fell. */
  readonly where?: string;
}

/** The bytes `[from, to)` damaged in place (their length kept): lines outside it are the original's. */
function damagedInPlace(o: Original, bytes: Buffer, from: number, to: number, where?: string): Damaged {
  const decode: LineDecoder = (b, start, end) => {
    const k = o.lineAt.get(start);
    if (k !== undefined && o.ends[k] === end - 1 && (end <= from || start >= to)) return o.records[k] as Record;
    return decodeRecord(b, start, end);
  };
  // the line holding the first damaged byte: every line before it is whole and the same
  let lo = 0;
  let hi = o.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((o.starts[mid] as number) <= from) lo = mid;
    else hi = mid - 1;
  }
  return { bytes, decode, firstChanged: lo + 1, where };
}

/** The original's lines in a new order (some dropped or repeated): every line is an original line. */
function reordered(o: Original, order: readonly number[]): Damaged {
  const bytes = Buffer.concat(order.map((k) => o.bytes.subarray(o.starts[k], (o.ends[k] as number) + 1)));
  const decode: LineDecoder = (_b, _start, _end, line) => o.records[order[line - 1] as number] as Record;
  const firstChanged = order.findIndex((k, n) => k !== n) + 1;
  return { bytes, decode, firstChanged: firstChanged === 0 ? Infinity : firstChanged };
}

/** Where in its line an offset of the original falls: which part of the JSON. */
function partAt(o: Original, offset: number): string {
  let lo = 0;
  let hi = o.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((o.starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  const start = o.starts[lo] as number;
  const end = o.ends[lo] as number;
  if (offset === end) return 'the newline';
  const b = o.bytes;
  let key = '';
  let inArray = false;
  for (let i = start; i < end; i++) {
    const c = b[i] as number;
    if (c === 0x22) {
      // a string: find its end
      let j = i + 1;
      while (b[j] !== 0x22) j += b[j] === 0x5c ? 2 : 1;
      let next = j + 1;
      while (b[next] === 0x20) next++;
      const isKey = b[next] === 0x3a;
      const text = b.toString('utf8', i + 1, j);
      if (offset >= i && offset <= j) {
        if (isKey || offset === i || offset === j) return isKey ? 'a key' : 'punctuation';
        if (inArray || key === 'ids') return 'free text (an id)';
        if (key === 'type') return 'a type tag';
        if (key === 'time') return 'a time';
        if (key === 'session') return 'a session id';
        if (key === 'workspace') return 'a workspace';
        return `free text (${key === 'id' ? 'an edit id' : key})`;
      }
      if (isKey) key = text;
      i = j;
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      let j = i;
      while ((b[j] as number) >= 0x30 && (b[j] as number) <= 0x39) j++;
      if (offset >= i && offset < j) return `a number (${key})`;
      i = j - 1;
      continue;
    }
    if (c === 0x5b) inArray = true;
    if (c === 0x5d) inArray = false;
    if (c === 0x6e) {
      // null
      if (offset >= i && offset < i + 4) return 'null';
      i += 3;
      continue;
    }
    if (offset === i) return 'punctuation';
  }
  return 'punctuation';
}

/** What the open did, as the figures count it. */
type Outcome = 'caught' | 'undetected' | 'taken for a torn tail';

/** Writes the damaged file, opens it for writing, and checks the open against the verdict. */
async function openDamaged(damaged: Damaged, what: string): Promise<Outcome> {
  const expected: Expected = expectedOpen(damaged.bytes, damaged.decode);
  writeFileSync(home.path, damaged.bytes);
  let ledger: Ledger;
  try {
    ledger = await Ledger.open(home.path);
  } catch (e) {
    if (!(e instanceof LedgerError))
      throw new Error(`${what}: the open threw something other than a LedgerError: ${String(e)}`, { cause: e });
    assert.instance(e, DamagedError, `${what}: refused with ${e.code}, not as damage: ${e.message}`);
    const d = e as DamagedError;
    assert.is(
      expected.kind,
      'damaged',
      `${what}: refused (${d.message}) a file whose lines all read and keep the rules`,
    );
    if (expected.kind !== 'damaged') throw new Error('unreachable');
    assert.is(d.line, expected.line, `${what}: the line number (${d.message})`);
    assert.is(d.why, expected.why, `${what}: the reason`);
    assert.ok(
      d.line >= damaged.firstChanged,
      `${what}: line ${d.line} is before the first changed line, ${damaged.firstChanged}`,
    );
    assert.ok(readFileSync(home.path).equals(damaged.bytes), `${what}: a refused open changed the file`);
    return 'caught';
  }
  try {
    assert.is(
      expected.kind,
      'open',
      `${what}: opened a file whose line ${expected.kind === 'damaged' ? `${expected.line} is damaged: ${expected.why}` : ''}`,
    );
    if (expected.kind !== 'open') throw new Error('unreachable');
    const { reference } = expected;
    assert.is(ledger.size, reference.records.length, `${what}: the number of records`);
    assert.equal(await ledger.counts(), reference.counts(), `${what}: the counts`);
    assert.equal(await ledger.outbox(), reference.outbox(), `${what}: the outbox`);
    const read: Record[] = [];
    for await (const r of ledger.records()) read.push(r);
    assert.ok(
      read.length === reference.records.length &&
        read.every((r, n) => JSON.stringify(r) === JSON.stringify(reference.records[n])),
      `${what}: the records read back`,
    );
    assert.equal(
      ledger.repaired,
      expected.dropped === 0 ? null : { at: expected.complete, dropped: expected.dropped, cut: true },
      `${what}: the repair`,
    );
    assert.ok(
      readFileSync(home.path).equals(damaged.bytes.subarray(0, expected.complete)),
      `${what}: only a torn tail may be cut`,
    );
    return expected.dropped === 0 ? 'undetected' : 'taken for a torn tail';
  } finally {
    await ledger.close();
  }
}

/** The figures of this run: for each kind of damage, how many trials had each outcome. */
const figures = new Map<string, Map<Outcome, number>>();
const flipsByPart = new Map<string, { caught: number; trials: number }>();

function count(kind: string, outcome: Outcome): void {
  const row = figures.get(kind) ?? new Map<Outcome, number>();
  row.set(outcome, (row.get(outcome) ?? 0) + 1);
  figures.set(kind, row);
}

const percent = (n: number, of: number): string => `${((100 * n) / of).toFixed(1)}%`;

function summary(kind: string): string {
  const row = figures.get(kind) ?? new Map<Outcome, number>();
  const trials = [...row.values()].reduce((a, b) => a + b, 0);
  const caught = row.get('caught') ?? 0;
  const undetected = row.get('undetected') ?? 0;
  const torn = row.get('taken for a torn tail') ?? 0;
  return `  corruption: ${kind}: ${trials} trials, caught ${caught} (${percent(caught, trials)}), undetected ${undetected} (${percent(undetected, trials)}), taken for a torn tail ${torn} (${percent(torn, trials)})`;
}

/** Runs `trials` trials of one kind of damage, each made by `make` from the seeded generator. */
async function trialsOf(
  kind: string,
  trials: number,
  make: (o: Original, random: (n: number) => number) => Damaged,
): Promise<void> {
  const o = await theOriginal();
  const rng = new Random(SEED ^ seedFor(kind));
  const random = (n: number): number => rng.below(n);
  for (let trial = 0; trial < trials; trial++) {
    const damaged = make(o, random);
    const outcome = await openDamaged(damaged, `${kind}, trial ${trial} (seed ${SEED}, LEDGERSTORE_TORTURE=${SCALE})`);
    count(kind, outcome);
    if (damaged.where !== undefined) {
      const part = flipsByPart.get(damaged.where) ?? { caught: 0, trials: 0 };
      part.trials++;
      if (outcome === 'caught') part.caught++;
      flipsByPart.set(damaged.where, part);
    }
  }
  console.log(summary(kind));
}

test.after(() => {
  home.remove();
  const rows = [...flipsByPart.entries()].sort(([, a], [, b]) => b.trials - a.trials);
  console.log('  corruption: bit flips by where they fell (caught / trials):');
  for (const [part, { caught, trials }] of rows)
    console.log(`    ${part}: ${caught} / ${trials} (${percent(caught, trials)})`);
});

test('a single bit flipped anywhere: refused at the right line, or valid lines read as they say', async () => {
  await trialsOf('bit flip', scaled(300), (o, random) => {
    const at = random(o.bytes.length);
    const bytes = Buffer.from(o.bytes);
    bytes[at] = (bytes[at] as number) ^ (1 << random(8));
    return damagedInPlace(o, bytes, at, at + 1, partAt(o, at));
  });
});

test('a 4 KiB block zeroed at a random offset: refused at the right line, or taken for a torn tail at the end', async () => {
  await trialsOf('zeroed 4 KiB block', scaled(60), (o, random) => {
    const at = random(o.bytes.length);
    const bytes = Buffer.from(o.bytes);
    // a block near the end stops at it (Buffer.fill refuses an end past the buffer)
    const end = Math.min(at + 4096, bytes.length);
    bytes.fill(0, at, end);
    return damagedInPlace(o, bytes, at, end);
  });
});

test('a line duplicated somewhere in the middle: always a rule broken, refused at the right line', async () => {
  await trialsOf('duplicated line', scaled(60), (o, random) => {
    const order = o.records.map((_, k) => k);
    const line = 1 + random(RECORDS - 2);
    order.splice(1 + random(RECORDS - 1), 0, line);
    return reordered(o, order);
  });
  const row = figures.get('duplicated line');
  assert.is(
    row?.get('caught'),
    scaled(60),
    'a duplicated line always breaks a rule: decided twice, or an outcome recorded twice',
  );
});

test('a line removed from the middle: caught only when a later line of its item then breaks a rule', async () => {
  await trialsOf('removed line', scaled(60), (o, random) => {
    const order = o.records.map((_, k) => k);
    order.splice(1 + random(RECORDS - 2), 1);
    return reordered(o, order);
  });
});

test('two adjacent lines swapped: caught when they are a decision and its outcome', async () => {
  await trialsOf('swapped adjacent lines', scaled(60), (o, random) => {
    const order = o.records.map((_, k) => k);
    const at = random(RECORDS - 1);
    [order[at], order[at + 1]] = [order[at + 1] as number, order[at] as number];
    return reordered(o, order);
  });
});

test('two lines anywhere swapped: caught when a decision ends up after an outcome of its item', async () => {
  await trialsOf('swapped lines', scaled(60), (o, random) => {
    const order = o.records.map((_, k) => k);
    const a = random(RECORDS);
    let b = random(RECORDS - 1);
    if (b >= a) b++;
    [order[a], order[b]] = [order[b] as number, order[a] as number];
    return reordered(o, order);
  });
});

test('a line damaged under an open log: reading it is damage at its line, not a different record', async () => {
  const o = await theOriginal();
  writeFileSync(home.path, o.bytes);
  const ledger = await Ledger.open(home.path, { readOnly: true });
  try {
    const line = 7001;
    const fd = openSync(home.path, 'r+');
    try {
      writeSync(fd, Buffer.from('}'), 0, 1, o.starts[line - 1] as number); // its first byte: `{` becomes `}`
    } finally {
      closeSync(fd);
    }
    let read = 0;
    const e = await (async () => {
      try {
        for await (const _ of ledger.records()) read++;
      } catch (error) {
        return error;
      }
      return null;
    })();
    assert.instance(e, DamagedError, `not damage: ${String(e)}`);
    assert.is((e as DamagedError).line, line);
    assert.is((e as DamagedError).why, 'expected value at line 1 column 1');
    assert.ok(read < line, 'no record was read for the damaged line');
  } finally {
    await ledger.close();
  }
});

const META_KEY = Uint8Array.of(0x00, ...Buffer.from('format', 'ascii'));

test('LevelDB: a format marker that is not CBOR, or not a map, stops the open as damage at record 0 and is left as it was', async () => {
  const folder = join(home.dir, 'honcho.level');
  const setup = await Ledger.open(`level:${folder}`);
  await setup.append({
    type: 'decided',
    time: '2026-09-28T10:00:00.000Z',
    item: { type: 'turn', session: 's', turn: 1 },
    action: { type: 'skip', why: 'x' },
  });
  await setup.close();
  for (const [what, marker] of [
    ['not CBOR', Uint8Array.of(0xff, 0x00)],
    ['CBOR null', Uint8Array.of(0xf6)],
    ['a CBOR text', Uint8Array.of(0x63, 0x61, 0x62, 0x63)],
  ] as const) {
    const db = new ClassicLevel<Uint8Array, Uint8Array>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.put(META_KEY, marker);
    await db.close();
    for (const readOnly of [true, false]) {
      const e = await Ledger.open(`level:${folder}`, { readOnly }).then(
        async (l) => {
          await l.close();
          return null;
        },
        (error: unknown) => error,
      );
      assert.instance(e, DamagedError, `${what}: ${String(e)}`);
      assert.is((e as DamagedError).line, 0, what);
      assert.is(
        (e as DamagedError).why,
        `the format marker is not ledgerstore's (${Buffer.from(marker).toString('hex')})`,
        what,
      );
    }
    const check = new ClassicLevel<Uint8Array, Uint8Array>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
    const left = await check.get(META_KEY);
    assert.is(
      left === undefined ? 'missing' : Buffer.from(left).toString('hex'),
      Buffer.from(marker).toString('hex'),
      `${what}: left as it was`,
    );
    await check.close();
  }
});

test.run();
