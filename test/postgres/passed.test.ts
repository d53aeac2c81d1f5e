/**
 * A keyed append that went past other writers' records which this ledger cannot take in (a
 * line that does not decode, a record that breaks the rules): the append is committed, so it
 * resolves as appended, and then the ledger stops at that record until it is reopened.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { honchoCodec } from '../../lib/honcho/codec.js';
import { itemKey } from '../../lib/honcho/record.js';
import { Ledger, type Record } from '../../lib/index.js';
import { decided, edit, rejects, skip } from '../support/ledger.js';
import { freshLog, linesOf, pgBackend, pgServer, withAdmin } from '../support/pg-cluster.js';

const record = (who: string, n: number): Record => decided(edit(who, n), skip(who));
const keysOf = (records: readonly Record[]): string[] => records.map((r) => itemKey(r.item));

/** Another writer's batch of `records`, appended straight to the log (no ledger checks them), the line at `bad.at` then made `bad.line`. */
async function othersWrite(log: string, records: readonly Record[], bad?: { at: number; line: string }): Promise<void> {
  const other = await (await pgBackend(log)).open();
  try {
    await other.append(records, { expectedHead: other.head, keys: keysOf(records) });
  } finally {
    await other.close();
  }
  if (bad === undefined) return;
  const { schema } = await pgServer();
  await withAdmin((admin) =>
    admin.query(`UPDATE "${schema}".records SET line = $3 WHERE log = $1 AND position = $2`, [log, bad.at, bad.line]),
  );
}

test("an append that went past another writer's line that does not decode resolves (it is committed), then the ledger stops there", async () => {
  const log = freshLog();
  const backend = await pgBackend(log);
  const ledger = await Ledger.open(backend);
  try {
    await othersWrite(log, [record('theirs', 0)], { at: 0, line: '{"not":"a record"}' });
    const mine = record('mine', 0);
    await ledger.append(mine); // resolves: the batch is on stable storage
    const lines = await linesOf(log);
    assert.is(lines.length, 2, 'the append is in the log, after the line it went past');
    assert.equal(honchoCodec.decode(Buffer.from(lines[1] as string), 0, (lines[1] as string).length), mine);
    await rejects(
      ledger.append(record('mine', 1)),
      'LEDGER_DAMAGED',
      /:1: record 1, another writer's.*could not be read/,
    );
    await rejects(ledger.catchUp(), 'LEDGER_DAMAGED');
    assert.is((await linesOf(log)).length, 2, 'nothing appended once stopped');
  } finally {
    await ledger.close();
  }
  await rejects(Ledger.open(backend), 'LEDGER_DAMAGED', /:1: /);
});

test('the log itself resolves such an append with the records before the bad line, and stops', async () => {
  const log = freshLog();
  const backend = await pgBackend(log);
  const writer = await backend.open();
  try {
    const theirs = [record('theirs', 0), record('theirs', 1)];
    await othersWrite(log, theirs, { at: 1, line: 'garbage' });
    const mine = [record('mine', 0)];
    const appended = await writer.append(mine, { expectedHead: 0, keys: keysOf(mine) });
    assert.equal(appended, { from: 2, head: 3, passed: [theirs[0]] }, 'appended; passed ends before the bad line');
    await rejects(writer.append([record('mine', 1)]), 'LEDGER_STOPPED', /:2: /);
  } finally {
    await writer.close();
  }
});

test("an append that went past another writer's record that breaks the rules resolves, then the ledger stops there", async () => {
  const log = freshLog();
  const backend = await pgBackend(log);
  const ledger = await Ledger.open(backend);
  try {
    await othersWrite(log, [record('theirs', 0), record('theirs', 0)]); // decided twice
    await ledger.append(record('mine', 0));
    assert.is((await linesOf(log)).length, 3, 'the append is in the log');
    await rejects(ledger.append(record('mine', 1)), 'LEDGER_DAMAGED', /:2: /);
  } finally {
    await ledger.close();
  }
});

test.run();
