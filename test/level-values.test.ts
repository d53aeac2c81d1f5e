/**
 * The LevelDB log's fast read of its values (`cbor-scan.ts`, `cbor-values.ts`), held to the
 * general decoding (cbor-x, then `codec.normalize`): on every value it vouches for it gives the
 * record the general decoding gives, it leaves to the general decoding every value that is not
 * of the canonical shape (which accepts or refuses it in its own words), and a ledger read
 * through it holds the state the general decoding gives.
 */
import { encode as cborEncode, Encoder } from 'cbor-x';
import * as fc from 'fast-check';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../backends/level/index.js';
import { decodeValue, encodeRecord, sealed } from '../backends/level/values.js';
import { workload } from '../lib/honcho/synthetic.js';
import { DamagedError, honchoCodec, Ledger, type Record } from '../lib/index.js';
import type { RecordCodec } from '../lib/log.js';
import { mutate, mutation, record, ruleKeepingRecords } from './support/fuzz-arbitraries.js';
import { answers } from './support/ledger-answers.js';
import { FUZZ_SEED } from './support/seed.js';

const scan = honchoCodec.valueScan;
if (scan === undefined) throw new Error('the Honcho codec has a value scan');

/** The codec without its value scan: every value through the general decoding. */
const generalCodec: RecordCodec<Record> = { ...honchoCodec, valueScan: undefined };

const KEY = Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 0);

/** What reading a record's CBOR gives: the record, or the damage's text. */
type Verdict = { readonly record: Record } | { readonly refused: string };

function verdictOf(read: () => Record): Verdict {
  try {
    return { record: read() };
  } catch (e) {
    if (!(e instanceof DamagedError)) throw e;
    return { refused: e.message };
  }
}

/** The general decoding of `body`, sealed as the log stores it at position 0. */
const general = (body: Uint8Array): Record => decodeValue('t', honchoCodec, KEY, sealed(KEY, body), 0, true);

/**
 * The fast read of `body` among others (so that nothing before or after it is read): its verdict,
 * and whether the scan vouched for it (else the general decoding was asked).
 */
function fast(body: Uint8Array): { verdict: Verdict; vouched: boolean } {
  const filler = Buffer.from('\xff\x00\xf6', 'latin1');
  const bytes = Buffer.concat([filler, body, filler]);
  let vouched = true;
  const lines = scan?.values(bytes, Int32Array.of(3), Int32Array.of(3 + body.length), 1, () => {
    vouched = false;
    return general(body);
  });
  assert.ok(lines?.next());
  const verdict = verdictOf(() => (lines as { record(): Record }).record());
  assert.not.ok(lines?.next());
  return { verdict, vouched };
}

/** The fast read of `body` agrees with the general decoding; gives whether the scan vouched for it. */
function agrees(body: Uint8Array, what: string): boolean {
  const { verdict, vouched } = fast(body);
  assert.equal(
    verdict,
    verdictOf(() => general(body)),
    what,
  );
  return vouched;
}

/** A text string's CBOR with a head of `size` argument bytes (0: in the initial byte): valid CBOR, not in its shortest form. */
function wideText(text: string, size: 0 | 1 | 2 | 4 | 8): Buffer {
  const utf8 = Buffer.from(text, 'utf8');
  if (size === 0) return Buffer.concat([Uint8Array.of(0x60 | utf8.length), utf8]);
  const head = Buffer.alloc(1 + size);
  head[0] = 0x60 | { 1: 24, 2: 25, 4: 26, 8: 27 }[size];
  head.writeUIntBE(utf8.length, 1 + size - Math.min(size, 6), Math.min(size, 6));
  return Buffer.concat([head, utf8]);
}

/** `bytes` with the first run of the bytes `from` (hex) replaced by `to` (hex). */
function replaced(bytes: Uint8Array, from: string, to: string): Buffer {
  const b = Buffer.from(bytes);
  const at = b.indexOf(Buffer.from(from, 'hex'));
  if (at < 0) throw new Error(`no ${from} in ${b.toString('hex')}`);
  return Buffer.concat([b.subarray(0, at), Buffer.from(to, 'hex'), b.subarray(at + from.length / 2)]);
}

test('every canonical value of a generated ledger is read by the scan, as the general decoding reads it', () => {
  let vouched = 0;
  let records = 0;
  for (const r of workload({ records: 5000, seed: 3 })) {
    records++;
    if (agrees(encodeRecord(r), JSON.stringify(r))) vouched++;
  }
  assert.is(vouched, records, 'the scan vouches for every value the backend writes');
});

test('every record, of every kind, is read by the scan as the general decoding reads it; a turn past 2^53-1 by the general decoding', () => {
  fc.assert(
    fc.property(record, (r) => {
      const vouched = agrees(
        encodeRecord(r),
        JSON.stringify(r, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
      );
      const bigTurn = r.item.type === 'turn' && typeof r.item.turn === 'bigint';
      assert.is(vouched, !bigTurn, 'a turn only a bigint holds is the general decoding’s, exactly');
      if (bigTurn) assert.equal(fast(encodeRecord(r)).verdict, { record: r });
    }),
    { seed: FUZZ_SEED, numRuns: 3000 },
  );
});

test('valid CBOR not of the canonical shape is the general decoding’s: accepted or refused in its words', () => {
  const r: Record = {
    type: 'decided',
    time: '2026-09-28T10:00:00.000Z',
    item: { type: 'turn', session: 's-1', turn: 7 },
    action: { type: 'conclude', workspace: 'trusted', peer: 'p', session: 's-2', text: 'né' },
  };
  const canonical = Buffer.from(encodeRecord(r));
  assert.ok(agrees(canonical, 'canonical'));
  const plainCbor = new Encoder({ useRecords: false, variableMapSize: true });
  const others: [string, Uint8Array][] = [
    ['keys in another order', plainCbor.encode({ time: r.time, type: r.type, action: r.action, item: r.item })],
    ['a fixed-size map head', cborEncode(r)],
    ['the turn as a float', plainCbor.encode({ ...r, item: { ...r.item, turn: 7.5 } })],
    ['the turn a float of an integer', replaced(canonical, '647475726e07', '647475726efb401c000000000000')],
    ['a negative turn', replaced(canonical, '647475726e07', '647475726e26')],
    ['an unknown field', plainCbor.encode({ ...r, extra: 1 })],
    ['a missing field', plainCbor.encode({ type: r.type, time: r.time, item: r.item })],
    ['an indefinite-length map', Buffer.concat([Uint8Array.of(0xbf), canonical.subarray(1), Uint8Array.of(0xff)])],
    ['bytes after the record', Buffer.concat([canonical, Uint8Array.of(0)])],
    ['an invalid time', plainCbor.encode({ ...r, time: '2026-02-30T10:00:00.000Z' })],
    ['an invalid session', plainCbor.encode({ ...r, item: { ...r.item, session: '..' } })],
    ['a text that is not UTF-8', replaced(canonical, '6ec3a9', '6ec3c3')],
    ['an unknown workspace', plainCbor.encode({ ...r, action: { ...r.action, workspace: 'other' } })],
    ['a record that is an array', plainCbor.encode(['decided', r.time, r.item, r.action])],
  ];
  // cbor-x refuses a text with an 8-byte head
  others.push([
    'a text head of 8 bytes',
    replaced(canonical, wideText('né', 0).toString('hex'), wideText('né', 8).toString('hex')),
  ]);
  for (const [what, body] of others) assert.not.ok(agrees(body, what), `${what}: the general decoding's`);
  // a non-shortest head on a text is still the canonical shape's: the same record
  for (const size of [1, 2, 4] as const) {
    const wide = replaced(canonical, wideText('né', 0).toString('hex'), wideText('né', size).toString('hex'));
    assert.ok(agrees(wide, `a text head of ${size} bytes`), `a text head of ${size} bytes`);
  }
  const failed: Record = {
    type: 'failed',
    time: r.time,
    item: { type: 'edit', id: 'e', part: 4294967295 },
    status: 65535,
    kind: 'k',
  };
  assert.ok(agrees(encodeRecord(failed), 'the largest part and status'));
  const status = encodeRecord({ ...failed, status: null });
  assert.ok(agrees(status, 'status null'));
  assert.not.ok(agrees(replaced(status, '66737461747573f6', '66737461747573f7'), 'status undefined'));
  const one = encodeRecord({ ...failed, status: 1 });
  assert.not.ok(agrees(replaced(one, '6673746174757301', '667374617475731a00010000'), 'a status past a u16'));
  assert.ok(agrees(replaced(one, '6673746174757301', '667374617475731a00000001'), 'a status in a wide head'));
});

test('values changed at random: the scan vouches only for what the general decoding accepts as the same record', () => {
  const bodies = [...workload({ records: 300, seed: 11 })].map((r) => encodeRecord(r));
  let vouched = 0;
  let left = 0;
  fc.assert(
    fc.property(fc.nat(bodies.length - 1), fc.array(mutation, { minLength: 1, maxLength: 3 }), (n, changes) => {
      const body = mutate(bodies[n] as Uint8Array, changes);
      if (body.length === 0) return;
      if (agrees(body, body.toString('hex'))) vouched++;
      else left++;
    }),
    { seed: FUZZ_SEED, numRuns: 20_000 },
  );
  assert.ok(vouched > 200 && left > 1000, `both ways taken (${vouched} vouched, ${left} left)`);
});

test('a ledger read through the scan holds the state the general decoding gives', async () => {
  const ledgers = [
    [...workload({ records: 12_000, seed: 4 })],
    ...fc.sample(ruleKeepingRecords(30), { seed: FUZZ_SEED, numRuns: 40 }),
  ];
  for (const records of ledgers) {
    const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
    const log = await levelBackend(db, { codec: honchoCodec }).open();
    if (records.length > 0) await log.append(records);
    await log.close();
    const items = records.map((r) => r.item);
    const viaScan = await Ledger.open(levelBackend(db, { codec: honchoCodec }), { readOnly: true });
    const viaGeneral = await Ledger.open(levelBackend(db, { codec: generalCodec }), { readOnly: true });
    assert.equal(await answers(viaScan, items), await answers(viaGeneral, items));
    assert.is(viaScan.size, records.length);
    await viaScan.close();
    await viaGeneral.close();
    await db.close();
  }
});

test('damage read through the scan is reported at its position, in the general decoding’s words', async () => {
  const records = [...workload({ records: 12_000, seed: 6 })];
  const damages: [string, (value: Uint8Array, key: Uint8Array) => Uint8Array][] = [
    ['a value that is not a record, with its checksum', (_, key) => sealed(key, cborEncode({ type: 'decided' }))],
    ['a changed byte', (value) => Uint8Array.from(value, (b, n) => (n === 3 ? b ^ 1 : b))],
    ['a value without its checksum', (value) => value.subarray(0, value.length - 5)],
  ];
  // the read-through asks for 1,000 values at a time (backends/level/database.ts): damage at
  // the first of a call, at the last of one, and past the first call
  const cases = [0, 1_000].flatMap((at) => damages.map((damage) => [at, damage] as const));
  cases.push([999, damages[0] as (typeof damages)[number]], [11_999, damages[1] as (typeof damages)[number]]);
  for (const [at, [what, damage]] of cases) {
    {
      const messages: string[] = [];
      for (const codec of [honchoCodec, generalCodec]) {
        const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
        const log = await levelBackend(db, { codec }).open();
        await log.append(records);
        await log.close();
        const key = Uint8Array.of(1, 0, 0, 0, 0, (at >>> 24) & 0xff, (at >>> 16) & 0xff, (at >>> 8) & 0xff, at & 0xff);
        const value = (await db.get(key)) as Uint8Array;
        await db.put(key, damage(value, key));
        const refused = await Ledger.open(levelBackend(db, { codec, name: 'mem' }), { readOnly: true }).then(
          () => 'opened',
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
        messages.push(refused);
        await db.close();
      }
      assert.ok((messages[0] as string).startsWith(`mem:${at + 1}: `), `${what} at ${at}: ${messages[0]}`);
      assert.is(messages[0], messages[1], `${what} at ${at}`);
    }
  }
  // a position missing: the values alone cannot say so, the keys do
  const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
  const log = await levelBackend(db, { codec: honchoCodec }).open();
  await log.append(records.slice(0, 300));
  await log.close();
  await db.del(Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 200));
  const missing = await Ledger.open(levelBackend(db, { codec: honchoCodec, name: 'mem' }), { readOnly: true }).then(
    () => 'opened',
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  assert.is(
    missing,
    'mem:201: record 201 is missing: the next record is 202; see docs/runbook.md#honcho-ledger-damaged',
  );
  await db.close();
});

test.run();
