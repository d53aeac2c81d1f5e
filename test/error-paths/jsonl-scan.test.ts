/**
 * The read-through on worker threads (backends/jsonl-scan.ts) when the file or a worker fails it:
 * damage in a run a worker scanned, a line longer than a line may hold after such runs, a line
 * longer than a run, and a worker that fails holding runs (its scan throws, or it dies). The
 * files are large enough for workers (two, with three threads), read in small runs so that there
 * are many; each test waits, at the first record, until a worker has loaded its scan
 * (test/support/worker-scan.ts), so that the runs after go to workers. Each checks what the
 * caller is told against the read-through without a scan (line by line, on this thread), which
 * records reached `replay`, and that the file is left exactly as it was.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  encodeRecord,
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  MAX_LINE_BYTES,
  type Record,
  type RecordCodec,
} from '../../lib/index.js';
import type { Scanned } from '../../lib/line-scan.js';
import { decided, skip, turn, withHome } from '../support/ledger.js';
import { LOADED, type WorkerFailure, workerScanModule } from '../support/worker-scan.js';

const line = (record: Record): string => `${encodeRecord(record)}\n`;
/** Record `n` of a large file: about 1 KiB. */
const record = (n: number): Record => decided(turn('chat-1', n + 1), skip(`${n} ${'x'.repeat(1000)}`));
/** Enough records for two workers (a worker for each 4 MiB, from any size: `workersFrom: 0`). */
const RECORDS = 9000;
/** Small runs: many of them, so that the workers are busy long before the damage. */
const CHUNK = 64 << 10;

/** The lines of records `[from, to)`. */
const lines = (from: number, to: number): string =>
  Array.from({ length: to - from }, (_, n) => line(record(from + n))).join('');

/** Which runs were scanned on a worker: the text of each, and whether a worker scanned it. */
interface Run {
  readonly text: string;
  readonly onWorker: boolean;
}

/** The ledger codec whose workers load test/support/worker-scan.ts; `runs` gets each run the read-through took. */
function workerCodec(failure: WorkerFailure, runs: Run[]): RecordCodec<Record> {
  const { lineScan } = honchoCodec;
  if (lineScan === undefined) throw new Error('the ledger codec has no line scan');
  const here = new WeakSet<Scanned>();
  return {
    ...honchoCodec,
    lineScan: {
      module: workerScanModule(failure),
      scan: (bytes, from, to) => {
        const scanned = lineScan.scan(bytes, from, to);
        here.add(scanned);
        return scanned;
      },
      lines: (bytes, from, to, scanned) => {
        runs.push({ text: bytes.toString('utf8', from, to), onWorker: !here.has(scanned) });
        return lineScan.lines(bytes, from, to, scanned);
      },
    },
  };
}

/** The same codec without a scan: the read-through line by line, on this thread. */
const { lineScan: _scan, ...lineByLine } = honchoCodec;

/** What an open of the file at `path` gives: the records replayed, and the head or the error. */
interface Opened {
  readonly replayed: Record[];
  readonly head: number | null;
  readonly error: unknown;
}

/**
 * Opens `path` with `codec` (a writer unless `readOnly`) on `threads` threads, collecting the
 * records replayed; the replay of the first record waits until a worker has loaded its scan.
 */
async function open(path: string, codec: RecordCodec<Record>, readOnly: boolean, threads = 3): Promise<Opened> {
  const replayed: Record[] = [];
  const channel = new BroadcastChannel(LOADED);
  const loaded = new Promise<void>((resolve) => {
    channel.onmessage = () => resolve();
  });
  try {
    const log = await jsonlBackend(path, { codec, chunkSize: CHUNK, scan: { threads, workersFrom: 0 } }).open({
      readOnly,
      replay: async (r, position) => {
        if (position === 0 && codec.lineScan !== undefined) await loaded;
        replayed.push(r);
      },
    });
    const head = log.head;
    await log.close();
    return { replayed, head, error: null };
  } catch (error) {
    return { replayed, head: null, error };
  } finally {
    channel.close();
  }
}

/** The run that holds `text`. */
function runHolding(runs: readonly Run[], text: string): Run {
  const run = runs.find((r) => r.text.includes(text));
  assert.ok(run !== undefined, `a run holds ${text.slice(0, 40)}`);
  return run;
}

test('damage in runs the workers scanned: the first line that is no record is refused at its line, after every line before it and none after', async () => {
  await withHome(async (home) => {
    const first = 6001; // lines, counted from 1
    const broken = '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn"}}\n';
    const notJson = 'this is no record\n';
    writeFileSync(home.path, lines(0, first - 1) + broken + lines(first, 7000) + notJson + lines(7001, RECORDS));
    const before = readFileSync(home.path);
    const plain = await open(home.path, lineByLine, true);
    assert.ok(isLedgerError(plain.error, 'LEDGER_DAMAGED'), String(plain.error));
    const message = (plain.error as Error).message;
    assert.ok(message.startsWith(`${home.path}:${first}: `), message);
    for (const readOnly of [true, false]) {
      const runs: Run[] = [];
      const scanned = await open(home.path, workerCodec('none', runs), readOnly);
      assert.ok(isLedgerError(scanned.error, 'LEDGER_DAMAGED'), String(scanned.error));
      assert.is((scanned.error as Error).message, message, 'the same error as line by line');
      assert.is(scanned.replayed.length, first - 1, 'every record before the damage, and none after');
      assert.equal(scanned.replayed[first - 2], record(first - 2));
      assert.ok(runHolding(runs, broken).onWorker, 'a worker scanned the damaged run');
      assert.ok(!runs.some((r) => r.text.includes(notJson)), 'no run past the damage was taken');
      assert.equal(readFileSync(home.path), before, 'the file is left as it was');
    }
  });
});

test('a line longer than a line may hold, after runs the workers scanned: damage at its line, after every record before it', async () => {
  await withHome(async (home) => {
    const long = MAX_LINE_BYTES + 10;
    const overlong = Buffer.alloc(long + 1, 0x61);
    overlong[long] = 10;
    writeFileSync(home.path, Buffer.concat([Buffer.from(lines(0, RECORDS)), overlong, Buffer.from(lines(0, 10))]));
    const size = readFileSync(home.path).length;
    const expected = `${home.path}:${RECORDS + 1}: the line is ${long} bytes long, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold`;
    const plain = await open(home.path, lineByLine, true);
    assert.ok(isLedgerError(plain.error, 'LEDGER_DAMAGED'), String(plain.error));
    assert.ok((plain.error as Error).message.startsWith(expected), (plain.error as Error).message);
    assert.is(plain.replayed.length, RECORDS, 'line by line: every record before it');
    for (const readOnly of [true, false]) {
      const runs: Run[] = [];
      const scanned = await open(home.path, workerCodec('none', runs), readOnly);
      assert.ok(isLedgerError(scanned.error, 'LEDGER_DAMAGED'), String(scanned.error));
      assert.is((scanned.error as Error).message, (plain.error as Error).message, 'the same error as line by line');
      assert.is(scanned.replayed.length, RECORDS, 'every record before it');
      assert.equal(scanned.replayed[RECORDS - 1], record(RECORDS - 1));
      assert.ok(
        runs.some((r) => r.onWorker),
        'workers scanned runs before it',
      );
      assert.is(readFileSync(home.path).length, size, 'the file is left as it was');
    }
  });
});

test('a line longer than a run, among runs the workers scanned: read on this thread, every record in order', async () => {
  await withHome(async (home) => {
    const big = decided(turn('chat-2', 1), skip('y'.repeat(3 << 20))); // longer than a run (2 MiB)
    const text = lines(0, 5000) + line(big) + lines(5000, RECORDS);
    writeFileSync(home.path, text);
    const expected = [...Array.from({ length: 5000 }, (_, n) => record(n)), big];
    for (let n = 5000; n < RECORDS; n++) expected.push(record(n));
    const runs: Run[] = [];
    const scanned = await open(home.path, workerCodec('none', runs), false);
    assert.is(scanned.error, null);
    assert.is(scanned.head, RECORDS + 1);
    assert.equal(scanned.replayed, expected);
    assert.ok(!runHolding(runs, 'yyyyyyyy').onWorker, 'the long line was scanned here');
    assert.ok(
      runs.some((r) => r.onWorker),
      'workers scanned the others',
    );
    assert.is(readFileSync(home.path, 'utf8'), text);
  });
});

for (const failure of ['throws', 'exits'] as const) {
  const how = failure === 'throws' ? 'whose scan crashes (and says so)' : 'that dies without a word';
  test(`a worker ${how} while it holds runs: they are scanned here, every record in order`, async () => {
    await withHome(async (home) => {
      const text = lines(0, RECORDS);
      writeFileSync(home.path, text);
      const runs: Run[] = [];
      // a scan that throws is replied at once; a worker that dies, given up once the reading
      // thread has waited for its reply as long as it waits for any
      const scanned = await open(home.path, workerCodec(failure, runs), true, 2);
      assert.is(scanned.error, null);
      assert.is(scanned.head, RECORDS);
      assert.equal(
        scanned.replayed,
        Array.from({ length: RECORDS }, (_, n) => record(n)),
      );
      assert.ok(
        runs.every((r) => !r.onWorker),
        'no run came from the failed worker',
      );
      assert.is(readFileSync(home.path, 'utf8'), text);
    });
  });
}

test.run();
