/**
 * The open's read-through of a PostgreSQL log (`copy-out.ts`): every record, in order, across
 * the spans it is copied in; a missing position, a line that is no record, and a line that CSV
 * would have to quote are damage at their position, after every record before them was
 * replayed and none after; the same with a codec that has no line scan.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Connector } from '../../backends/postgres/connection.js';
import { COPY_SPAN, copyOut } from '../../backends/postgres/copy-out.js';
import { postgresBackend } from '../../backends/postgres/index.js';
import { placeOf } from '../../backends/postgres/uri.js';
import { encodeRecord, honchoCodec, type Record, type RecordCodec } from '../../lib/index.js';
import { isScannedLines } from '../../lib/line-scan.js';
import type { SizeSample } from '../../lib/log.js';
import { decided, rejects, turn } from '../support/ledger.js';
import { freshLog, logUri, pgServer, withAdmin } from '../support/pg-cluster.js';

/** Records in the log: past a span, so that the second is a part. */
const COUNT = COPY_SPAN + 1234;
const record = (n: number): Record => decided(turn('copy', n));
const [before, after] = encodeRecord(record(0)).split('"turn":0') as [string, string];

/** A log of {@link COUNT} records, written on the server (`record(n)` at n), its head at `COUNT`; its URI. */
async function filledLog(): Promise<{ log: string; uri: string }> {
  const log = freshLog('copy');
  const uri = await logUri(log);
  await (await postgresBackend(uri, { codec: honchoCodec }).open()).close();
  const { schema } = await pgServer();
  await withAdmin(async (admin) => {
    await admin.query(
      `INSERT INTO "${schema}".records (log, position, line) SELECT $1, n, $2 || n || $3 FROM generate_series(0, $4 - 1) AS n`,
      [log, `${before}"turn":`, after, COUNT],
    );
    await admin.query(`UPDATE "${schema}".logs SET head = $2 WHERE name = $1`, [log, COUNT]);
  });
  return { log, uri };
}

/** Opens `uri` read-only with `codec`, checking each record replayed against its position; how many were. */
async function replayed(uri: string, codec: RecordCodec<Record>): Promise<{ count: number; opened: Promise<void> }> {
  const seen = { count: 0 };
  const opened = postgresBackend(uri, { codec })
    .open({
      readOnly: true,
      replay: (r, position) => {
        if (position !== seen.count || r.type !== 'decided' || r.item.type !== 'turn' || r.item.turn !== position)
          throw new Error(`record ${position} is not the one written there: ${JSON.stringify(r)}`);
        seen.count++;
      },
    })
    .then((log) => log.close());
  await opened.catch(() => undefined);
  return { count: seen.count, opened };
}

const scanless: RecordCodec<Record> = { ...honchoCodec, lineScan: undefined };

test('every record, in order, across the spans; and with a codec that has no line scan', async () => {
  const { uri } = await filledLog();
  for (const codec of [honchoCodec, scanless]) {
    const { count, opened } = await replayed(uri, codec);
    await opened;
    assert.is(count, COUNT);
  }
});

test("a span's session is given back with the settings it was connected with", async () => {
  const { uri } = await filledLog();
  const place = placeOf(uri);
  const pool = await new Connector(place, true, { statementMs: 4321 }).pool(1); // one session: the spans', reused
  try {
    let count = 0;
    for await (const batch of copyOut(pool, place, honchoCodec, 0, COUNT))
      if (isScannedLines(batch)) while (batch.next()) count++;
    assert.is(count, COUNT);
    const { rows } = await pool.query<{ timeout: string; sort: string; workers: string }>(
      "SELECT current_setting('statement_timeout') AS timeout, current_setting('enable_sort') AS sort, current_setting('max_parallel_workers_per_gather') AS workers",
    );
    assert.equal(rows, [{ timeout: '4321ms', sort: 'on', workers: '2' }]);
  } finally {
    await pool.end();
  }
});

test('the open is told, once, about how many bytes the records to read make, from the first run taken', async () => {
  const { uri } = await filledLog();
  const told: { bytes: number; first: SizeSample; at: number }[] = [];
  let replayedSoFar = 0;
  const log = await postgresBackend(uri, { codec: honchoCodec }).open({
    readOnly: true,
    replay: () => {
      replayedSoFar++;
    },
    sizeHint: (bytes, first) => told.push({ bytes, first, at: replayedSoFar }),
  });
  await log.close();
  assert.is(told.length, 1);
  const [{ bytes, first, at }] = told as [(typeof told)[0]];
  assert.is(at, first.records, 'told once the first run was taken');
  const records = (bytes * first.records) / first.bytes;
  assert.ok(Math.abs(records - COUNT) < 1, `the bytes make ${records} records at the first run's size, of ${COUNT}`);
});

test("a read-through slower than the statement timeout still reads every record: a span's COPY runs at its reader's pace", async () => {
  const { uri } = await filledLog();
  let count = 0;
  const started = Date.now();
  const log = await postgresBackend(uri, { codec: honchoCodec, timeouts: { statementMs: 500 } }).open({
    readOnly: true,
    // 20 ms every 1,000 records: about 2 s over the first span, four times the timeout
    replay: (_, position) => {
      count++;
      return position % 1000 === 999 ? new Promise((resolve) => setTimeout(resolve, 20)) : undefined;
    },
  });
  assert.ok(Date.now() - started > 1000, 'the read-through took longer than the timeout, twice over');
  assert.is(count, COUNT);
  await log.close();
});

test('a missing position, in a span, at its start, or at the log end, is damage there, after every record before it', async () => {
  const { log, uri } = await filledLog();
  const { schema } = await pgServer();
  const remove = (position: number): Promise<unknown> =>
    withAdmin((admin) =>
      admin.query(`DELETE FROM "${schema}".records WHERE log = $1 AND position = $2`, [log, position]),
    );
  for (const missing of [COUNT - 1, COPY_SPAN, 777, 0]) {
    await remove(missing);
    for (const codec of [honchoCodec, scanless]) {
      const { count, opened } = await replayed(uri, codec);
      await rejects(
        opened,
        'LEDGER_DAMAGED',
        new RegExp(`:${missing + 1}: record ${missing + 1} is missing: the log's head is ${COUNT};`),
      );
      assert.is(count, missing, `the ${missing} records before it were replayed, none after`);
    }
  }
});

test('a line that is no record, or that CSV would quote (a raw newline, the quote byte, empty), is damage at its position', async () => {
  const { log, uri } = await filledLog();
  const { schema } = await pgServer();
  const at = COPY_SPAN + 5;
  for (const line of ['{"type":"decided"', `${before}"turn":\n${at}${after}`, `\u0001${before}`, '']) {
    await withAdmin((admin) =>
      admin.query(`UPDATE "${schema}".records SET line = $3 WHERE log = $1 AND position = $2`, [log, at, line]),
    );
    for (const codec of [honchoCodec, scanless]) {
      const { count, opened } = await replayed(uri, codec);
      const e = await rejects(opened, 'LEDGER_DAMAGED');
      assert.match(e.message, new RegExp(`:${at + 1}: `), `${JSON.stringify(line)}: ${e.message}`);
      assert.is(count, at, `${JSON.stringify(line)}: the records before it were replayed, none after`);
    }
  }
});

test.run();
