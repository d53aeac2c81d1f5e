/**
 * Torn tails (issue 5): a ledger whose last line a crash cut off, anywhere. For every cut point
 * of the last line (inside multi-byte characters too: é, 中文, 😀), trailing NUL runs of many
 * lengths (the zeros a power loss leaves where the size got ahead of the data), a partial line
 * followed by NULs, NULs followed by a partial line, and bytes that are not UTF-8: a writer
 * opens the file, and
 *
 * - drops exactly the torn bytes (`repair` says where and how many, and that they were cut),
 *   leaving the whole lines byte for byte;
 * - appends a record, which follows the old lines byte for byte;
 * - a reopen finds the old records and the new one, with nothing to repair.
 *
 * A read-only open ignores the same tails and changes nothing. Each case is opened with the
 * default chunk size and with small ones, so that the tail straddles the reader's chunks.
 *
 * A file with no whole line is a tail only if it begins as a record's line does: every cut of a
 * line alone is one, and the same bytes with any one of their first 26 changed (where a line's
 * start says what must be) are damage at line 1, refused by every open and left as they are.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DamagedError, honchoCodec, jsonlBackend, Ledger, type Record } from '../../lib/index.js';
import { withFastHome } from '../support/fast-home.js';
import { checkLedgerState, fileOf, lineOf, recordsOf } from '../support/guarantees.js';
import { conclude, decided, edit, fleet, type Home, sent, skip, turn } from '../support/ledger.js';
import { SCALE } from '../support/scale.js';

/** The lines before the torn one. */
const BASE: readonly Record[] = [
  decided(turn('chat-1', 1)),
  decided(edit('2026-09-28-0001', 0), conclude('trusted', 'Zoë lives in 東京 😀, says "ça va"')),
  sent(edit('2026-09-28-0001', 0), ['con-é']),
];

/** Last lines a crash may tear: multi-byte characters at the start, the middle and the end, escapes, a long one. */
const LAST: readonly Record[] = [
  decided(edit('2026-09-28-0002', 0), skip('café 中文 😀')),
  decided(turn('chat-1', 2), skip('😀😀 at the start of the text, then ascii')),
  decided(edit('2026-09-28-0003', 1), fleet('build "main" failed:\n\terror — 中文\\path 🎉')),
  decided(edit('2026-09-28-0004', 2), conclude('untrusted', `${'Amélie prefers 饺子 over tacos 🌮. '.repeat(12)}`)),
];

/** What the harness appends after the reopen. */
const NEXT = decided(turn('after-the-tear', 1), skip('ok'));

/** The chunk sizes each case is read with: the default, and ones that cut the tail into pieces. */
const CHUNKS: readonly (number | undefined)[] = [undefined, 7, 64];

interface Stats {
  cases: number;
  opens: number;
}

/**
 * Writes `base`'s lines then `tail` (no newline in it), opens the ledger with `chunkSize`, checks
 * the tail was dropped and cut, appends {@link NEXT}, and reopens.
 */
async function torn(
  home: Home,
  base: readonly Record[],
  tail: Buffer,
  chunkSize: number | undefined,
  context: string,
  stats: Stats,
): Promise<void> {
  assert.is(tail.indexOf(10), -1, `${context}: the harness made a tail with a newline`);
  const whole = fileOf(base);
  writeFileSync(home.path, Buffer.concat([whole, tail]));
  const backend = jsonlBackend(
    home.path,
    chunkSize === undefined ? { codec: honchoCodec } : { codec: honchoCodec, chunkSize },
  );
  const ledger = await Ledger.open(backend);
  stats.opens++;
  try {
    if (tail.length === 0) assert.is(ledger.repaired, null, `${context}: a repair with no tail`);
    else assert.equal(ledger.repaired, { at: whole.length, dropped: tail.length, cut: true }, `${context}: the repair`);
    assert.ok(readFileSync(home.path).equals(whole), `${context}: the file is not its whole lines after the open`);
    const found = await recordsOf(ledger);
    assert.equal(found.map(lineOf), base.map(lineOf), `${context}: the records`);
    await checkLedgerState(ledger, base, context);
    await ledger.append(NEXT);
  } finally {
    await ledger.close();
  }
  const after = Buffer.concat([whole, Buffer.from(lineOf(NEXT))]);
  assert.ok(
    readFileSync(home.path).equals(after),
    `${context}: the append does not follow the old lines byte for byte`,
  );
  const again = await Ledger.open(backend, { readOnly: true });
  stats.opens++;
  try {
    assert.is(again.repaired, null, `${context}: something to repair after the append`);
    assert.equal(
      (await recordsOf(again)).map(lineOf),
      [...base, NEXT].map(lineOf),
      `${context}: the records after the append`,
    );
  } finally {
    await again.close();
  }
  stats.cases++;
}

/** A read-only open of the whole lines and `tail` drops the tail without cutting it, and changes nothing. */
async function tornReadOnly(
  home: Home,
  base: readonly Record[],
  tail: Buffer,
  context: string,
  stats: Stats,
): Promise<void> {
  const bytes = Buffer.concat([fileOf(base), tail]);
  writeFileSync(home.path, bytes);
  const ledger = await Ledger.open(home.path, { readOnly: true });
  stats.opens++;
  try {
    assert.equal(
      ledger.repaired,
      tail.length === 0 ? null : { at: bytes.length - tail.length, dropped: tail.length, cut: false },
      `${context}: the repair`,
    );
    assert.equal((await recordsOf(ledger)).map(lineOf), base.map(lineOf), `${context}: the records`);
  } finally {
    await ledger.close();
  }
  assert.ok(readFileSync(home.path).equals(bytes), `${context}: a read-only open changed the file`);
  stats.cases++;
}

/** Where a cut falls in `line`, for messages: the byte, and whether it is inside a character. */
function where(line: Buffer, cut: number): string {
  const inside = cut < line.length && ((line[cut] as number) & 0xc0) === 0x80;
  return `cut at byte ${cut} of ${line.length}${inside ? ', inside a character' : ''}`;
}

test('every cut point of the last line, inside multi-byte characters too: only the torn bytes go, the next append follows', async () => {
  const stats: Stats = { cases: 0, opens: 0 };
  let insideCharacters = 0;
  await withFastHome(async (home) => {
    for (const [l, last] of LAST.entries()) {
      const line = Buffer.from(lineOf(last));
      for (let cut = 1; cut < line.length; cut++) {
        if (((line[cut] as number) & 0xc0) === 0x80) insideCharacters++;
        // every cut with the default chunk; the small chunks at every third cut
        for (const chunk of cut % 3 === 0 ? CHUNKS : CHUNKS.slice(0, 1)) {
          await torn(
            home,
            BASE,
            line.subarray(0, cut),
            chunk,
            `last line ${l}, ${where(line, cut)}, chunk ${chunk ?? 'default'}`,
            stats,
          );
        }
      }
    }
  });
  assert.ok(insideCharacters > 50, `only ${insideCharacters} cuts inside a character`);
  console.log(
    `  torn tails: every cut of ${LAST.length} last lines (${insideCharacters} inside a character): ${stats.cases} cases, ${stats.opens} opens`,
  );
});

test('the only line torn: the ledger is empty, the file cut to nothing, the next append is its first line', async () => {
  const stats: Stats = { cases: 0, opens: 0 };
  await withFastHome(async (home) => {
    const line = Buffer.from(lineOf(LAST[0] as Record));
    for (let cut = 1; cut < line.length; cut++)
      await torn(home, [], line.subarray(0, cut), undefined, `the only line, ${where(line, cut)}`, stats);
    writeFileSync(home.path, line.subarray(0, 10));
    const ledger = await Ledger.open(home.path);
    assert.is(statSync(home.path).size, 0);
    await ledger.close();
  });
  console.log(`  torn tails: the only line torn: ${stats.cases} cases`);
});

test("a file with no whole line: a record's line cut anywhere is a tail; the same bytes with one of their first changed are damage at line 1, left as they are", async () => {
  const stats: Stats = { cases: 0, opens: 0 };
  let refused = 0;
  await withFastHome(async (home) => {
    for (const last of LAST.slice(0, 2)) {
      const line = Buffer.from(lineOf(last));
      for (let cut = 1; cut <= 40; cut++) {
        const tail = line.subarray(0, cut);
        await torn(home, [], tail, undefined, `the only line, cut at byte ${cut}`, stats);
        // one of the bytes a record's line begins with, changed: no writer began a line so
        for (let at = 0; at < cut && at < 26; at++) {
          const changed = Buffer.from(tail);
          changed[at] = 0x78; // 'x', in no line start
          const context = `the only line, cut at byte ${cut}, byte ${at} changed`;
          writeFileSync(home.path, changed);
          for (const readOnly of [true, false]) {
            const e = await Ledger.open(home.path, { readOnly }).then(
              async (ledger) => {
                await ledger.close();
                return null;
              },
              (error: unknown) => error,
            );
            stats.opens++;
            assert.ok(
              e instanceof DamagedError && e.line === 1,
              `${context}: ${readOnly ? 'a read-only' : 'a writable'} open gave ${String(e)}, not damage at line 1`,
            );
            assert.ok(readFileSync(home.path).equals(changed), `${context}: the file was changed`);
          }
          refused++;
        }
      }
    }
  });
  console.log(
    `  torn tails: a file of one cut-off line: ${stats.cases} cases cut as tails, ${refused} with a changed first byte refused as damage at line 1`,
  );
});

test('trailing NUL runs, a partial line then NULs, NULs then a partial line, bytes that are not UTF-8', async () => {
  const stats: Stats = { cases: 0, opens: 0 };
  const runs = [1, 2, 3, 7, 64, 511, 512, 513, 4095, 4096, 4097, 65536, 1 << 20, ...(SCALE > 1 ? [9 << 20] : [])];
  await withFastHome(async (home) => {
    const line = Buffer.from(lineOf(LAST[0] as Record));
    const cuts = [
      1,
      line.indexOf(Buffer.from('中')) + 1,
      line.indexOf(Buffer.from('😀')) + 2,
      line.length >> 1,
      line.length - 1,
    ];
    for (const n of runs) {
      for (const chunk of CHUNKS)
        await torn(home, BASE, Buffer.alloc(n), chunk, `${n} NULs, chunk ${chunk ?? 'default'}`, stats);
      await torn(home, [], Buffer.alloc(n), undefined, `${n} NULs and nothing else`, stats);
      await tornReadOnly(home, BASE, Buffer.alloc(n), `${n} NULs, read-only`, stats);
      if (n > 4097) continue;
      for (const cut of cuts) {
        const partial = line.subarray(0, cut);
        await torn(
          home,
          BASE,
          Buffer.concat([partial, Buffer.alloc(n)]),
          undefined,
          `${where(line, cut)}, then ${n} NULs`,
          stats,
        );
        await torn(
          home,
          BASE,
          Buffer.concat([Buffer.alloc(n), partial]),
          undefined,
          `${n} NULs, then a line ${where(line, cut)}`,
          stats,
        );
      }
    }
    const notUtf8 = [
      Buffer.from([0xff]),
      Buffer.from([0xc3]),
      Buffer.from([0xe4, 0xb8]),
      Buffer.from([0xf0, 0x9f, 0x98]),
      Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80]),
    ];
    for (const [n, bytes] of notUtf8.entries()) {
      for (const chunk of CHUNKS)
        await torn(home, BASE, bytes, chunk, `bytes that are not UTF-8 (${n}), chunk ${chunk ?? 'default'}`, stats);
      await tornReadOnly(home, BASE, bytes, `bytes that are not UTF-8 (${n}), read-only`, stats);
    }
    for (const [l, last] of LAST.entries()) {
      const whole = Buffer.from(lineOf(last));
      for (const cut of [1, whole.length >> 1, whole.length - 1])
        await tornReadOnly(
          home,
          BASE,
          whole.subarray(0, cut),
          `last line ${l}, ${where(whole, cut)}, read-only`,
          stats,
        );
    }
  });
  console.log(
    `  torn tails: NUL runs of ${runs.length} lengths, partial lines with NULs, bytes not UTF-8: ${stats.cases} cases`,
  );
});

test.run();
