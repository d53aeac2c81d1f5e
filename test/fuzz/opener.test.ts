/**
 * Fuzzing the opener (issue 5): arbitrary files open as a replay of their complete lines says,
 * or are refused as damage at the right line, and nothing else; in bounded memory and time.
 *
 * - A fast-check property over files of every shape (`opener-properties.ts`), in a worker under
 *   a watchdog (`fuzz-runner.ts`), with a fixed seed that a failure prints.
 * - Files at the edges, each checked the same way.
 * - Files of 50 MB (one line without a newline; whole lines then a 50 MB tail of NULs) opened by
 *   a child process whose heap is capped at 128 MB: it must open them (empty, or with the whole
 *   lines, the tail dropped and cut), and its peak resident memory must grow by less than three
 *   times the tail (a loose bound: the opener keeps an unfinished line in a buffer that doubles,
 *   so it holds about 1.6 times the tail at its peak).
 */
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import {
  encodeRecord,
  type FileIO,
  honchoCodec,
  jsonlBackend,
  Ledger,
  nodeFileIO,
  type Record,
} from '../../lib/index.js';
import { checkInWorker, describeRun } from '../support/fuzz-runner.js';
import { withHome } from '../support/ledger.js';
import { checkOpen } from '../support/opener-properties.js';
import { expectedOpen } from '../support/reference-ledger.js';
import { SCALE } from '../support/scale.js';

const PROPERTIES = new URL('../support/opener-properties.js', import.meta.url);
const OPEN_HUGE = fileURLToPath(new URL('../support/open-huge.js', import.meta.url));

const lines = (records: Iterable<Record>): string => [...records].map((r) => `${encodeRecord(r)}\n`).join('');

test('any file opens as a replay of its complete lines, or is refused as damage at the right line; nothing else', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-fuzz-'));
  try {
    const r = await checkInWorker(PROPERTIES, 'opens', 800, dir);
    assert.not.ok(r.failed, r.message);
    console.log(describeRun('opener', r));
    for (const outcome of ['opened', 'repaired', 'damaged']) {
      assert.ok(
        Object.entries(r.stats).some(([what, n]) => what.endsWith(`: ${outcome}`) && n > 0),
        `some files were ${outcome}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('files at the edges: empty, only newlines, only NULs, no newline, a BOM, CRs, a long valid line', async () => {
  const valid = lines(workload({ records: 30, seed: 3 }));
  const one = lines(workload({ records: 1, seed: 3 }));
  const long = `${encodeRecord({ type: 'decided', time: '2026-09-28T10:00:00.000Z', item: { type: 'edit', id: 'long', part: 0 }, action: { type: 'skip', why: '\u{1f600}"'.repeat(1 << 20) } })}\n`;
  const files: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['one newline', Buffer.from('\n')],
    ['ten thousand newlines', Buffer.from('\n'.repeat(10_000))],
    ['valid lines, then empty lines', Buffer.from(`${valid}\n\n\n`)],
    ['1 MiB of NULs', Buffer.alloc(1 << 20)],
    ['NULs, then a newline', Buffer.concat([Buffer.alloc(4096), Buffer.from('\n')])],
    ['valid lines, then NULs', Buffer.concat([Buffer.from(valid), Buffer.alloc(10_000)])],
    ['a valid line without its newline', Buffer.from(one.slice(0, -1))],
    ['a byte-order mark before the first line', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid)])],
    ['CRLF line ends', Buffer.from(valid.replace(/\n/g, '\r\n'))],
    ['valid lines, then a lone CR', Buffer.from(`${valid}\r`)],
    ['only CRs', Buffer.from('\r'.repeat(100))],
    ['a 4 MiB valid line', Buffer.from(long)],
    ['a 4 MiB valid line, cut', Buffer.from(long.slice(0, -3))],
    [
      'invalid UTF-8 in a line',
      Buffer.concat([Buffer.from(one.slice(0, 60)), Buffer.from([0xff, 0xfe]), Buffer.from(one.slice(60))]),
    ],
  ];
  await withHome(async (home) => {
    for (const [what, bytes] of files) {
      writeFileSync(home.path, bytes);
      const expected = expectedOpen(bytes);
      try {
        const outcome = await checkOpen(home.path, bytes, expected, true);
        assert.is(await checkOpen(home.path, bytes, expected, true, 3), outcome, 'read 3 bytes at a time');
        assert.is(await checkOpen(home.path, bytes, expected, false), outcome);
      } catch (e) {
        throw new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
    }
  });
});

test('a file shorter than fstat said (it shrank under the open): the whole lines read are kept, the rest taken for a tail', async () => {
  await withHome(async (home) => {
    const head = lines(workload({ records: 40, seed: 5 }));
    writeFileSync(home.path, head);
    const io: FileIO = { ...nodeFileIO, size: (fd) => nodeFileIO.size(fd) + 100 };
    for (const readOnly of [true, false]) {
      const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io, chunkSize: 1000 }), {
        readOnly,
      });
      assert.is(ledger.size, 40);
      assert.equal(ledger.repaired, { at: Buffer.byteLength(head), dropped: 100, cut: !readOnly });
      await ledger.close();
      assert.is(readFileSync(home.path, 'utf8'), head, 'the lines are left whole');
    }
  });
});

/** Runs `open-huge.js` on `path` with a 128 MB heap; its report. */
async function openInSmallHeap(path: string): Promise<{ size: number; repair: unknown; peakGrowth: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=128', OPEN_HUGE, path], {
    timeout: 120_000 * SCALE, // a hang guard only
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as { size: number; repair: unknown; peakGrowth: number };
}

/** Writes `head`, then `tail` bytes of `fill`, to `path`, a MiB at a time. */
function writeLarge(path: string, head: string, tail: number, fill: number): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    const block = Buffer.alloc(1 << 20, fill);
    for (let left = tail; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(left, block.length));
  } finally {
    closeSync(fd);
  }
}

const MB50 = 50 << 20;

test('a 50 MB file of one line without a newline opens, in a 128 MB heap, as an empty ledger with the line dropped', async () => {
  await withHome(async (home) => {
    writeLarge(
      home.path,
      '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"x","part":0},"action":{"type":"skip","why":"',
      MB50,
      0x61,
    );
    const size = statSync(home.path).size;
    const got = await openInSmallHeap(home.path);
    assert.is(got.size, 0);
    assert.equal(got.repair, { at: 0, dropped: size, cut: true });
    assert.is(statSync(home.path).size, 0, 'the torn line was cut');
    assert.ok(
      got.peakGrowth < 3 * size,
      `peak memory grew ${got.peakGrowth} bytes for a ${size}-byte line: more than 3 times its size`,
    );
    console.log(
      `  opener: a ${(size / 2 ** 20).toFixed(0)} MiB line without a newline: peak memory grew ${(got.peakGrowth / 2 ** 20).toFixed(0)} MiB`,
    );
  });
});

test('whole lines, then a 50 MB tail of NULs, open in a 128 MB heap with the lines kept and the tail cut', async () => {
  await withHome(async (home) => {
    const head = lines(workload({ records: 200, seed: 11 }));
    writeLarge(home.path, head, MB50, 0);
    const got = await openInSmallHeap(home.path);
    assert.is(got.size, 200);
    assert.equal(got.repair, { at: Buffer.byteLength(head), dropped: MB50, cut: true });
    assert.is(readFileSync(home.path, 'utf8'), head, 'only the NULs were cut');
    assert.ok(
      got.peakGrowth < 3 * MB50,
      `peak memory grew ${got.peakGrowth} bytes for a ${MB50}-byte tail: more than 3 times its size`,
    );
    console.log(
      `  opener: 200 lines and a 50 MiB tail of NULs: peak memory grew ${(got.peakGrowth / 2 ** 20).toFixed(0)} MiB`,
    );
  });
});

test.run();
