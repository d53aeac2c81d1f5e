/**
 * The line format: byte-identical to serde_json's writing, and serde_json's verdicts on reading.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readCanonical } from '../lib/honcho/canonical.js';
import { decodeRecordSerde } from '../lib/honcho/codec.js';
import { workload } from '../lib/honcho/synthetic.js';
import {
  CheckedRecord,
  decodeItemText,
  decodeRecord,
  decodeRecordText,
  encodeRecord,
  honchoCodec,
  isLedgerError,
  isSessionId,
  isTime,
  type Record,
} from '../lib/index.js';
import { vectorBytes } from './conformance/records.js';
import { conclude, decided, edit, failed, sent, skip, turn, turnTo } from './support/ledger.js';

/** The decoder's verdict on a line: the record, or the error's text. */
function verdict(line: string | Uint8Array): Record | string {
  try {
    return typeof line === 'string' ? decodeRecordText(line) : decodeRecord(line);
  } catch (e) {
    assert.ok(isLedgerError(e, 'LEDGER_DECODE'), `not a decode error: ${String(e)}`);
    return (e as Error).message;
  }
}

function refused(line: string | Uint8Array, why: string): void {
  assert.is(verdict(line), why, typeof line === 'string' ? line : Buffer.from(line).toString('latin1'));
}

function accepted(line: string, canonical: string): void {
  const record = verdict(line);
  assert.type(record, 'object', `refused: ${String(record)}`);
  assert.is(encodeRecord(record), canonical);
}

const S =
  '{"type":"sent","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-1","turn":3},"ids":["msg-a1","msg-a2"]}';
const D =
  '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"2026-09-28-0001","part":0},"action":{"type":"conclude","workspace":"trusted","peer":"kyle","session":"chat-1","text":"Kyle takes his coffee black."}}';
const F =
  '{"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-2","turn":1},"status":null,"kind":"refused"}';
/** A `sent` line with `X` standing for the item. */
const withItem = (item: string): string => `{"type":"sent","time":"2026-09-28T10:00:00.000Z","item":${item},"ids":[]}`;
/** A `decided` line with `X` standing for the action. */
const withAction = (action: string): string =>
  `{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"s","turn":1},"action":${action}}`;

test('every canonical vector made by serde_json decodes and re-encodes to itself', () => {
  const bytes = vectorBytes();
  let start = 0;
  let lines = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(10, start);
    const record = decodeRecord(bytes, start, end);
    assert.is(encodeRecord(record), bytes.toString('utf8', start, end), `line ${lines + 1}`);
    // the line a checked record carries, which a log writes as it is, is the same
    assert.is(CheckedRecord.check(honchoCodec, record).line, bytes.toString('utf8', start, end), `line ${lines + 1}`);
    start = end + 1;
    lines++;
  }
  assert.is(lines, 400);
});

test('each kind of record is written exactly as memoryd writes it', () => {
  assert.is(
    encodeRecord(decided(turn('chat-1', 3), turnTo('trusted', 'kyle'))),
    '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-1","turn":3},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}',
  );
  assert.is(encodeRecord(decided(edit('2026-09-28-0001', 0), conclude('trusted', 'Kyle takes his coffee black.'))), D);
  assert.is(encodeRecord(sent(turn('chat-1', 3), ['msg-a1', 'msg-a2'])), S);
  assert.is(encodeRecord(failed(turn('chat-2', 1))), F);
  assert.is(
    encodeRecord(decided(edit('e', 1), skip('no peer'))),
    '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"e","part":1},"action":{"type":"skip","why":"no peer"}}',
  );
  assert.is(
    encodeRecord(failed(edit('e', 1), 503, 'http')),
    '{"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"e","part":1},"status":503,"kind":"http"}',
  );
});

test('strings are escaped as serde_json escapes them, and nothing else is', () => {
  const why = 'q" b\\ \b\f\n\r\t \u0000\u0001\u001f \u007f é中文😀 \u2028\u2029 / </script>';
  const line = encodeRecord(decided(edit('e', 0), skip(why)));
  assert.ok(
    line.includes('"why":"q\\" b\\\\ \\b\\f\\n\\r\\t \\u0000\\u0001\\u001f \u007f é中文😀 \u2028\u2029 / </script>"'),
    line,
  );
  assert.equal(decodeRecordText(line), decided(edit('e', 0), skip(why)));
});

test('a string that UTF-8 cannot hold (a lone surrogate) is refused when writing', () => {
  for (const bad of ['\ud800', 'a\udc00b', '\udbff']) {
    try {
      encodeRecord(decided(edit('e', 0), skip(bad)));
      assert.unreachable('accepted a lone surrogate');
    } catch (e) {
      assert.ok(isLedgerError(e, 'LEDGER_INVALID_RECORD'));
      assert.match(
        (e as Error).message,
        /^a ledger record could not be encoded: the action's why has a lone surrogate/,
      );
    }
  }
});

test('invalid records handed to the encoder are refused with the field that is wrong', () => {
  const cases: [unknown, RegExp][] = [
    [{ ...sent(turn('s', 1)), extra: 1 }, /the record has an unknown field `extra`/],
    [
      { ...sent(turn('s', 1)), item: { type: 'turn', session: 's', turn: 1, x: 2 } },
      /the item has an unknown field `x`/,
    ],
    [sent(turn('s', 1.5)), /the item's turn must be an integer from 0 to 18446744073709551615 \(2\^64-1\), not 1\.5$/],
    [sent(turn('s', 2 ** 53)), /not 9007199254740992: give a turn above 9007199254740991 \(2\^53-1\) as a bigint/],
    [
      sent(turn('s', 2n ** 64n)),
      /the item's turn must be an integer from 0 to 18446744073709551615 \(2\^64-1\), not 18446744073709551616n$/,
    ],
    [sent(turn('s', -1n)), /the item's turn must be an integer from 0 to 18446744073709551615 \(2\^64-1\), not -1n$/],
    [sent(turn('s', -1)), /the item's turn/],
    [sent(turn('..', 1)), /the item's session must be a session id/],
    [sent(edit('e', 2 ** 32)), /the item's part must be an integer from 0 to 4294967295/],
    [failed(edit('e', 1), 65536), /the record's status must be an integer from 0 to 65535/],
    [sent(turn('s', 1), ['a', 3 as unknown as string]), /the record's ids\[1\] must be a string/],
    [{ ...sent(turn('s', 1)), time: '2026-09-28T10:00:00Z' }, /the record's time must be a time like/],
    [{ ...sent(turn('s', 1)), type: 'sent_' }, /the record must have a type of decided, sent, failed/],
    [
      decided(turn('s', 1), { type: 'turn', workspace: 'public', speaker: 'k' } as never),
      /the action's workspace must be one of trusted, untrusted, fleet/,
    ],
    [null, /the record must have a type/],
  ];
  for (const [record, why] of cases) {
    try {
      encodeRecord(record);
      assert.unreachable(`accepted ${JSON.stringify(record)}`);
    } catch (e) {
      assert.ok(isLedgerError(e, 'LEDGER_INVALID_RECORD'), String(e));
      assert.match((e as Error).message, why);
    }
  }
});

test('keys in any order, the tag anywhere, and whitespace between tokens are accepted', () => {
  accepted(
    ' {\t"ids" : [ "msg-a1" ,"msg-a2" ] ,\r\n"item":{"turn":3,"session":"chat-1","type":"turn"}, "time":"2026-09-28T10:00:00.000Z","type":"sent"}\n',
    S,
  );
  accepted(
    '{"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-2","turn":1},"kind":"refused"}',
    F,
  );
  accepted(
    '{"type":"failed","status":null,"time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-2","turn":1},"kind":"refused"}',
    F,
  );
  accepted(S.replace('"msg-a1"', '"\\u006dsg-a1"').replace('chat-1', 'chat\\u002d1'), S);
});

test('what serde also accepts is accepted: a tagged enum as a sequence, a nested tag by index, a workspace as a map', () => {
  accepted('["sent","2026-09-28T10:00:00.000Z",["turn","chat-1",3],["msg-a1","msg-a2"]]', S);
  accepted(withItem('{"type":0,"session":"chat-1","turn":3}'), withItem('{"type":"turn","session":"chat-1","turn":3}'));
  accepted(withItem('[1,"x",2]'), withItem('{"type":"edit","id":"x","part":2}'));
  accepted(
    withAction('{"type":"turn","workspace":{"fleet":null},"speaker":"k"}'),
    withAction('{"type":"turn","workspace":"fleet","speaker":"k"}'),
  );
  accepted(
    withAction('{"type":"turn","workspace":{"fleet":{}},"speaker":"k"}'),
    withAction('{"type":"turn","workspace":"fleet","speaker":"k"}'),
  );
  refused(
    '[0,"2026-09-28T10:00:00.000Z",["turn","chat-1",3],[]]',
    'invalid type: integer `0`, expected variant identifier at line 1 column 2',
  );
  refused(
    '["sent","2026-09-28T10:00:00.000Z",["turn","chat-1",3]]',
    'invalid length 2, expected struct variant Record::Sent with 3 elements',
  );
  refused(
    '["sent","2026-09-28T10:00:00.000Z",["turn","chat-1",3],[],1]',
    'invalid length 4, expected 3 elements in sequence',
  );
  refused('[]', 'missing field `type` at line 1 column 2');
  refused(withItem('{"type":2,"id":"x","part":2}'), 'invalid value: integer `2`, expected variant index 0 <= i < 2');
  refused(
    withAction('{"type":"turn","workspace":{"fleet":1},"speaker":"k"}'),
    'invalid type: integer `1`, expected unit',
  );
  refused(
    withAction('{"type":"turn","workspace":{},"speaker":"k"}'),
    'invalid value: map, expected map with a single key',
  );
  refused(
    withAction('{"type":"turn","workspace":3,"speaker":"k"}'),
    'invalid type: integer `3`, expected string or map',
  );
});

test('unknown fields are refused at every level', () => {
  refused(
    S.replace('{"type":"sent",', '{"type":"sent","extra":1,'),
    'unknown field `extra`, expected one of `time`, `item`, `ids`',
  );
  refused(withItem('{"type":"turn","session":"s","turn":1,"x":0}'), 'unknown field `x`, expected `session` or `turn`');
  refused(withAction('{"type":"skip","why":"w","x":0}'), 'unknown field `x`, expected `why`');
  refused(
    withAction('{"type":"conclude","workspace":"trusted","peer":"p","session":"s","text":"t","x":0}'),
    'unknown field `x`, expected one of `workspace`, `peer`, `session`, `text`',
  );
});

test('unknown variants are refused at every level', () => {
  refused(
    S.replace('"type":"sent"', '"type":"Sent"'),
    'unknown variant `Sent`, expected one of `decided`, `sent`, `failed` at line 1 column 14',
  );
  refused(withItem('{"type":"chat","session":"s","turn":1}'), 'unknown variant `chat`, expected `turn` or `edit`');
  refused(
    withAction('{"type":"send","why":"w"}'),
    'unknown variant `send`, expected one of `turn`, `conclude`, `unconclude`, `fleet`, `retract`, `skip`',
  );
  refused(
    withAction('{"type":"turn","workspace":"public","speaker":"k"}'),
    'unknown variant `public`, expected one of `trusted`, `untrusted`, `fleet`',
  );
  refused(
    withAction('{"type":"turn","workspace":"Trusted","speaker":"k"}'),
    'unknown variant `Trusted`, expected one of `trusted`, `untrusted`, `fleet`',
  );
});

test('missing fields are refused, except a missing status, which is null', () => {
  refused(
    '{"type":"sent","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"s","turn":1}}',
    'missing field `ids`',
  );
  refused(withItem('{"type":"turn","session":"s"}'), 'missing field `turn`');
  refused(withItem('{"session":"s","turn":1}'), 'missing field `type`');
  refused(withAction('{"type":"turn","speaker":"k"}'), 'missing field `workspace`');
  refused('{"time":"2026-09-28T10:00:00.000Z"}', 'missing field `type` at line 1 column 35');
  refused(
    '{"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"s","turn":1},"status":null}',
    'missing field `kind`',
  );
});

test('duplicate keys are refused at every level, the tag too', () => {
  refused(S.replace('"ids":', '"time":"2026-09-28T10:00:00.000Z","ids":'), 'duplicate field `time`');
  refused(S.replace('{"type":"sent",', '{"type":"sent","type":"sent",'), 'duplicate field `type` at line 1 column 21');
  refused(withItem('{"type":"turn","session":"s","turn":1,"turn":1}'), 'duplicate field `turn`');
  refused(withItem('{"type":"turn","type":"turn","session":"s","turn":1}'), 'duplicate field `type`');
  refused(withAction('{"type":"skip","why":"a","why":"a"}'), 'duplicate field `why`');
});

test('wrong types are refused', () => {
  refused(withItem('{"type":"turn","session":"s","turn":"1"}'), 'invalid type: string "1", expected u64');
  refused(withItem('{"type":"edit","id":7,"part":1}'), 'invalid type: integer `7`, expected a string');
  refused(withItem('"turn"'), 'invalid type: string "turn", expected internally tagged enum Item');
  refused(S.replace('["msg-a1","msg-a2"]', '"msg-a1"'), 'invalid type: string "msg-a1", expected a sequence');
  refused(S.replace('"msg-a2"', 'null'), 'invalid type: null, expected a string');
  refused(F.replace('"status":null', '"status":true'), 'invalid type: boolean `true`, expected u16');
  refused('null', 'invalid type: null, expected internally tagged enum Record at line 1 column 4');
  refused('"sent"', 'invalid type: string "sent", expected internally tagged enum Record at line 1 column 6');
  refused('{"type":["sent"]}', 'invalid type: sequence, expected variant identifier at line 1 column 8');
});

test('integers only where integers go, and in range', () => {
  const turnIs = (n: string): string => withItem(`{"type":"turn","session":"s","turn":${n}}`);
  const partIs = (n: string): string => withItem(`{"type":"edit","id":"e","part":${n}}`);
  refused(turnIs('3.0'), 'invalid type: floating point `3.0`, expected u64');
  refused(turnIs('3e0'), 'invalid type: floating point `3.0`, expected u64');
  refused(turnIs('-0'), 'invalid type: floating point `-0.0`, expected u64');
  refused(turnIs('-1'), 'invalid value: integer `-1`, expected u64');
  refused(turnIs('01'), 'invalid number at line 1 column 94'); // serde peeks at the second digit
  refused(turnIs('1.'), 'invalid number at line 1 column 95');
  refused(turnIs('+1'), 'expected value at line 1 column 93');
  refused(turnIs('1e999'), 'number out of range at line 1 column 97');
  refused(turnIs('18446744073709551616'), 'invalid type: floating point `1.8446744073709552e19`, expected u64');
  refused(partIs('4294967296'), 'invalid value: integer `4294967296`, expected u32');
  accepted(partIs('4294967295'), partIs('4294967295'));
  refused(F.replace('null', '65536'), 'invalid value: integer `65536`, expected u16');
  accepted(F.replace('null', '65535'), F.replace('null', '65535'));
});

test('every u64 turn is kept exactly: a number up to 2^53-1, a bigint above it, each line re-encoded byte for byte', () => {
  const at = (n: string): string => withItem(`{"type":"turn","session":"s","turn":${n}}`);
  const turns: [string, number | bigint][] = [
    ['9007199254740991', 9007199254740991],
    ['9007199254740992', 9007199254740992n],
    ['9007199254740993', 9007199254740993n],
    ['18446744073709551614', 18446744073709551614n],
    ['18446744073709551615', 18446744073709551615n],
  ];
  for (const [digits, exact] of turns) {
    for (const read of [decodeRecordText, (line: string) => decodeRecordSerde(Buffer.from(line, 'utf8'))]) {
      const record = read(at(digits));
      assert.is(record.item.type === 'turn' && record.item.turn, exact, digits);
      assert.is(encodeRecord(record), at(digits), `${digits} re-encoded byte for byte`);
    }
    // the serde way's other forms give the same bigint
    accepted(withItem(`{ "turn" : ${digits} , "session":"s","type":"turn"}`), at(digits));
    accepted(withItem(`["turn","s",${digits}]`), at(digits));
  }
  // a small turn given as a bigint is the number, in its one form
  assert.equal(decodeRecordText(encodeRecord(sent(turn('s', 7n)))).item, { type: 'turn', session: 's', turn: 7 });
});

test('a turn past a u64 or not a u64 is refused with serde_json words, by both ways', () => {
  const at = (n: string): string => withItem(`{"type":"turn","session":"s","turn":${n}}`);
  const cases: [string, string][] = [
    ['18446744073709551616', 'invalid type: floating point `1.8446744073709552e19`, expected u64'],
    ['99999999999999999999', 'invalid type: floating point `1e20`, expected u64'],
    ['184467440737095516150', 'invalid type: floating point `1.844674407370955e20`, expected u64'],
    ['-9007199254740993', 'invalid value: integer `-9007199254740993`, expected u64'],
    ['-18446744073709551615', 'invalid type: floating point `-1.8446744073709552e19`, expected u64'],
    ['9007199254740993.0', 'invalid type: floating point `9007199254740992.0`, expected u64'],
    ['18446744073709551615e0', 'invalid type: floating point `1.8446744073709552e19`, expected u64'],
  ];
  for (const [digits, why] of cases) {
    refused(at(digits), why);
    assert.is(readCanonical(Buffer.from(`${at(digits)}\n`), 0, at(digits).length + 1), null, digits);
  }
});

test('strings: escapes checked, surrogate escapes paired, control characters and invalid UTF-8 refused', () => {
  const whyIs = (s: string): string => withAction(`{"type":"skip","why":"${s}"}`);
  accepted(whyIs('\\ud83d\\ude00'), whyIs('😀'));
  accepted(whyIs('\\/'), whyIs('/'));
  refused(whyIs('\\ud800'), 'unexpected end of hex escape at line 1 column 136'); // after the quote it took for the pair's backslash
  refused(whyIs('\\ud800\\u0041'), 'lone leading surrogate in hex escape at line 1 column 141');
  refused(whyIs('\\udc00'), 'lone leading surrogate in hex escape at line 1 column 135');
  refused(whyIs('\\x'), 'invalid escape at line 1 column 131');
  refused(whyIs('\\u00g0'), 'invalid escape at line 1 column 135');
  refused(whyIs('a\tb'), 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 131');
  refused(whyIs('\u0000'), 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 130');
  const latin1 = Buffer.from(whyIs('caf\u00e9'), 'latin1'); // é as one byte 0xE9: not UTF-8
  refused(latin1, 'invalid unicode code point at line 1 column 134');
  const overlong = Buffer.concat([Buffer.from(whyIs('').slice(0, -3)), Buffer.from([0xc0, 0xaf]), Buffer.from('"}}')]);
  refused(overlong, 'invalid unicode code point at line 1 column 132');
  const surrogateBytes = Buffer.concat([
    Buffer.from(whyIs('').slice(0, -3)),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from('"}}'),
  ]);
  refused(surrogateBytes, 'invalid unicode code point at line 1 column 133');
});

test("not JSON, or more than one value, is refused with serde_json's text and position", () => {
  refused('', 'EOF while parsing a value at line 1 column 0');
  refused('\n', 'EOF while parsing a value at line 2 column 0');
  refused('\ufeff' + S, 'expected value at line 1 column 1');
  refused(S + ' {}', 'trailing characters at line 1 column 128');
  refused(S.replace('"msg-a2"]', '"msg-a2",]'), 'trailing comma at line 1 column 126');
  refused(withItem('{"type":"turn","session":"s","turn":1,}'), 'trailing comma at line 1 column 95');
  refused(S.slice(0, 60), 'EOF while parsing a string at line 1 column 60');
  refused(S.slice(0, 57), 'EOF while parsing an object at line 1 column 57');
  refused('{"type" "sent"}', 'expected `:` at line 1 column 9');
  refused('{"type":"sent" "time":1}', 'expected `,` or `}` at line 1 column 16');
  refused('{"type":"sent",}', 'trailing comma at line 1 column 16');
  refused('{"type":"sent",1:2}', 'key must be a string at line 1 column 16');
  refused(withItem('[1 2]'), 'expected `,` or `]` at line 1 column 60');
  refused(withItem('{"a":1 "b":2}'), 'expected `,` or `}` at line 1 column 64');
  refused('nul', 'EOF while parsing a value at line 1 column 3');
  refused(withItem('nul'), 'expected ident at line 1 column 60');
  refused(withItem('nulL'), 'expected ident at line 1 column 60');
  // the record's `{` and 126 `[` use the 127 levels serde_json allows; the 127th `[` is refused
  refused(withItem('['.repeat(200)), 'recursion limit exceeded at line 1 column 183');
  const nested = (depth: number): string =>
    withItem(`{"type":"turn","session":"s","turn":1,"x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
  refused(nested(125), 'unknown field `x`, expected `session` or `turn`');
  refused(nested(126), 'recursion limit exceeded at line 1 column 224');
  refused("{'type':'sent'}", 'key must be a string at line 1 column 2');
});

test('times have exactly the shape YYYY-MM-DDTHH:MM:SS.mmmZ, on days that exist', () => {
  for (const good of [
    '2026-09-28T10:00:00.000Z',
    '2024-02-29T23:59:59.999Z',
    '2000-02-29T00:00:00.000Z',
    '0000-02-29T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
  ]) {
    assert.ok(isTime(good), good);
    accepted(S.replace('2026-09-28T10:00:00.000Z', good), S.replace('2026-09-28T10:00:00.000Z', good));
  }
  for (const bad of [
    '2026-09-28t10:00:00.000Z',
    '2026-09-28T10:00:00.000z',
    '2026-09-28 10:00:00.000Z',
    '2026-09-28T10:00:00Z',
    '2026-09-28T10:00:00.00Z',
    '2026-09-28T10:00:00.0000Z',
    '2026-09-28T10:00:00.000+00:00',
    '2025-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-00-01T00:00:00.000Z',
    '2026-01-00T00:00:00.000Z',
    '2026-01-01T24:00:00.000Z',
    '2026-01-01T00:60:00.000Z',
    '2026-01-01T00:00:60.000Z',
    '+02026-01-01T00:00:00.000Z',
    '٢٠٢٦-01-01T00:00:00.000Z',
  ]) {
    assert.not.ok(isTime(bad), bad);
    refused(
      S.replace('2026-09-28T10:00:00.000Z', bad),
      `invalid value: string "${bad}", expected a time like 2026-09-28T10:00:00.000Z (RFC 3339 in UTC, with milliseconds)`,
    );
  }
});

test('session ids are 1 to 128 of A-Z a-z 0-9 . _ -, and not . or ..', () => {
  for (const good of ['chat-1', 'a', '...', '.a', 'A_b.c-9', 'x'.repeat(128)]) assert.ok(isSessionId(good), good);
  for (const bad of ['', '.', '..', 'x'.repeat(129), 'a/b', 'a b', 'é', 'a\nb']) {
    assert.not.ok(isSessionId(bad), bad);
    assert.match(
      verdict(withItem(`{"type":"turn","session":${JSON.stringify(bad)},"turn":1}`)) as string,
      /expected a session id/,
    );
  }
  refused(
    withAction('{"type":"fleet","session":"..","text":"t"}'),
    'invalid value: string "..", expected a session id: 1 to 128 of A-Z a-z 0-9 . _ -, not . or ..',
  );
});

test('an item is read as serde_json reads one, for the command line', () => {
  assert.equal(decodeItemText('{"type":"turn","session":"chat-1","turn":3}'), turn('chat-1', 3));
  assert.equal(decodeItemText(' {"part":0,"id":"2026-09-28-0001","type":"edit"} '), edit('2026-09-28-0001', 0));
  for (const [bad, why] of [
    ['{"type":"turn","session":"chat-1"}', 'missing field `turn`'],
    ['{"type":"turn","session":"chat-1","turn":3} 1', 'trailing characters at line 1 column 45'],
    ['{"type":"chat"}', 'unknown variant `chat`, expected `turn` or `edit` at line 1 column 14'],
  ] as const) {
    try {
      decodeItemText(bad);
      assert.unreachable(bad);
    } catch (e) {
      assert.is((e as Error).message, why);
    }
  }
});

/** The fast path's verdict must be the serde path's: the same record, or a give-up. */
function sameVerdict(line: Buffer, what: string): 'fast' | 'slow' | 'refused' {
  const fast = readCanonical(line, 0, line.length);
  let slow: Record | string;
  try {
    slow = decodeRecordSerde(line);
  } catch (e) {
    slow = (e as Error).message;
  }
  if (fast === null) return typeof slow === 'string' ? 'refused' : 'slow';
  assert.equal(fast, slow, what);
  return 'fast';
}

test('the fast path for canonical lines reads every canonical line as the serde path does', () => {
  const bytes = vectorBytes();
  const seen = { fast: 0, slow: 0, refused: 0 };
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(10, start) + 1;
    seen[sameVerdict(bytes.subarray(start, end), bytes.toString('utf8', start, end))]++;
    start = end;
  }
  for (const record of workload({ records: 3000, seed: 5 })) {
    const line = Buffer.from(`${encodeRecord(record)}\n`);
    seen[sameVerdict(line, line.toString())]++;
  }
  assert.is(seen.refused, 0);
  assert.ok(seen.fast > 3000, `most canonical lines take the fast path (${JSON.stringify(seen)})`);
});

test('the fast path gives up, never disagrees, on lines changed a byte at a time', () => {
  let state = 0x9e3779b9;
  const random = (n: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  const alphabet = Buffer.from('{}[]":,.-+0123456789eEtrufalsn \\\t\r\nabcdiy\u00e9\u0000\u00ff');
  const seen = { fast: 0, slow: 0, refused: 0 };
  const lines = [...workload({ records: 400, seed: 9 })].map((r) => Buffer.from(`${encodeRecord(r)}\n`));
  for (let trial = 0; trial < 20_000; trial++) {
    const original = lines[random(lines.length)] as Buffer;
    const line = Buffer.from(original);
    const at = random(line.length);
    const kind = random(3);
    let changed: Buffer;
    if (kind === 0) {
      line[at] = alphabet[random(alphabet.length)] as number;
      changed = line;
    } else if (kind === 1) {
      changed = Buffer.concat([line.subarray(0, at), line.subarray(at + 1)]);
    } else {
      changed = Buffer.concat([
        line.subarray(0, at),
        alphabet.subarray(random(alphabet.length)).subarray(0, 1),
        line.subarray(at),
      ]);
    }
    seen[sameVerdict(changed, `${changed.toString('latin1')} (trial ${trial})`)]++;
  }
  assert.ok(seen.refused > 1000 && seen.fast > 100, JSON.stringify(seen));
});

test.run();
