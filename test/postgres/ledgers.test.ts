/**
 * Honcho ledgers in several processes on one PostgreSQL log, through `Ledger` (the catch-up on
 * conflict, the watch, the sender lease), with a follower process (`ledgerstore follow`)
 * beside them:
 *
 * - three writer processes deciding the same items as fast as they can: every item decided
 *   exactly once, every acknowledged decision there, each writer's in the order it was
 *   acknowledged, and the follower saw the log as it is, in order, with no gap and no repeat;
 * - one of them killed with SIGKILL in the middle: the others decide the rest, each item once,
 *   and every decision the killed one had acknowledged is there, its own;
 * - memoryd-style workers in three processes (decide, send to a fake Honcho while holding the
 *   sender lease, record sent or failed): nothing decided twice, nothing sent twice;
 * - a follower that sees every record, in order, with no gap and no repeat, through a restart
 *   of the server;
 * - a ledger whose session is ended (`pg_terminate_backend`) in the middle of a group-commit
 *   batch: every append of the batch refused, none of it in the log or the state, and the
 *   ledger goes on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecord, Ledger, type Record, type Turn } from '../../lib/index.js';
import { CLI } from '../support/cli.js';
import { checkRules } from '../support/guarantees.js';
import { all, decided, rejects, turn } from '../support/ledger.js';
import { LineProcess } from '../support/line-process.js';
import {
  freshLog,
  holdLogLock,
  linesOf,
  logUri,
  pgBackend,
  restartServer,
  waitingAppender,
  withAdmin,
} from '../support/pg-cluster.js';
import { CRASH_SEED } from '../support/seed.js';

const WRITER = fileURLToPath(new URL('../support/ledger-writer.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../support/honcho-worker.js', import.meta.url));

/** `ledgerstore follow <uri> --json --from 0`, in a process of its own. */
const follower = (uri: string): LineProcess =>
  new LineProcess([CLI, 'follow', uri, '--json', '--from', '0'], 'follower');

/** What a follower printed: each line's position and record, as canonical text. */
const printed = (lines: readonly string[]): { position: number; line: string }[] =>
  lines.map((text) => {
    const { position, record } = JSON.parse(text) as { position: number; record: unknown };
    return { position, line: encodeRecord(record) };
  });

/** The follower printed exactly the log's records, each once, in order, from position 0. */
function sawTheLog(follow: LineProcess, records: readonly Record[], context: string): void {
  assert.is(follow.partial, '', `${context}: the follower printed no line without its newline`);
  assert.equal(
    printed(follow.lines),
    records.map((record, position) => ({ position, line: encodeRecord(record) })),
    `${context}: the follower saw the log, in order, no gap, no repeat`,
  );
}

/** Runs `children`, once each said `ready`, together; waits for each to be done, and ends them. */
async function together(children: readonly LineProcess[]): Promise<void> {
  try {
    await Promise.all(children.map((child) => child.said('ready')));
    for (const child of children) child.send('go');
    await Promise.all(children.map((child) => child.said('done')));
  } finally {
    await Promise.all(children.map((child) => child.end()));
  }
}

test('three writer processes deciding the same items through Ledger: each decided once, every acknowledged one there, in the order acknowledged; a follower process saw it all', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const items = 300;
  const follow = follower(uri);
  const writers = [0, 1, 2].map(
    (w) => new LineProcess([WRITER, uri, String(w), 'decide', String(items), String(CRASH_SEED + w)], `writer ${w}`),
  );
  let records: Record[];
  try {
    await together(writers);
    const reader = await (await pgBackend(log)).open({ readOnly: true });
    records = await all(reader);
    await reader.close();
    await follow.waitFor((lines) => lines.length >= records.length, 'the follower to print every record');
  } finally {
    follow.process.kill('SIGINT');
    await follow.exited;
  }
  checkRules(records, 'three deciding writers'); // no item decided twice
  assert.is(records.length, items, 'every item decided');
  writers.forEach((writer, w) => heldTo(writer, w, records));
  assert.equal(follow.ended, { code: 130, signal: null }, `the follower stopped on SIGINT: ${follow.stderr}`);
  sawTheLog(follow, records, 'three deciding writers');
});

/** Writer `w`'s acknowledged items are in `records` as its own, in the order it acknowledged them; those refused are another's. */
function heldTo(writer: LineProcess, w: number, records: readonly Record[]): void {
  const place = new Map(records.map((r, position) => [r.item.type === 'turn' ? r.item.turn : -1, { r, position }]));
  let last = -1;
  for (const line of writer.lines) {
    const [word, n] = line.split(' ');
    const found = place.get(Number(n));
    if (word === 'ack') {
      assert.ok(
        found?.r.type === 'decided' && found.r.action.type === 'skip' && found.r.action.why === `by w${w}`,
        `writer ${w}'s item ${n} is its own`,
      );
      assert.ok(found.position > last, `writer ${w}'s acknowledgements are in log order (item ${n})`);
      last = found.position;
    } else if (word === 'refused') {
      assert.ok(
        found?.r.type === 'decided' && found.r.action.type === 'skip' && found.r.action.why !== `by w${w}`,
        `writer ${w}'s refused item ${n} is another's`,
      );
    }
  }
}

test('a Ledger writer process killed with SIGKILL while three decide the same items: the others decide the rest, each once; its acknowledged decisions are there', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const items = 400;
  const writers = [0, 1, 2].map(
    (w) => new LineProcess([WRITER, uri, String(w), 'decide', String(items), String(CRASH_SEED + w)], `writer ${w}`),
  );
  const [victim, ...others] = writers as [LineProcess, ...LineProcess[]];
  try {
    await Promise.all(writers.map((writer) => writer.said('ready')));
    for (const writer of writers) writer.send('go');
    // Twenty outcomes, not twenty acknowledgements: a writer that loses the race for the head
    // again and again may see the others decide every item before it lands twenty of its own.
    await victim.waitFor(
      (lines) => lines.filter((l) => l.startsWith('ack ') || l.startsWith('refused ')).length >= 20,
      'twenty outcomes from writer 0',
    );
    victim.process.kill('SIGKILL');
    assert.equal(await victim.exited, { code: null, signal: 'SIGKILL' });
    await Promise.all(others.map((writer) => writer.said('done')));
  } finally {
    await Promise.all(writers.map((writer) => writer.end()));
  }
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  const records = await all(reader);
  await reader.close();
  checkRules(records, 'a writer killed'); // no item decided twice
  assert.is(records.length, items, 'every item decided');
  writers.forEach((writer, w) => heldTo(writer, w, records));
});

test('memoryd-style workers in three processes: nothing decided twice, nothing sent twice', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const items = 120;
  const calls = new Map<Turn, string[]>();
  let answered = 0;
  const honcho: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const { item, worker } = JSON.parse(body) as { item: { turn: number }; worker: string };
      calls.set(item.turn, [...(calls.get(item.turn) ?? []), worker]);
      answered++;
      // every seventh call fails: the worker records `failed`
      if (answered % 7 === 0) response.writeHead(503).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([`h-${item.turn}`]));
    });
  });
  await new Promise<void>((resolve) => honcho.listen(0, '127.0.0.1', resolve));
  const port = (honcho.address() as AddressInfo).port;
  const workers = [0, 1, 2].map(
    (w) =>
      new LineProcess([WORKER, uri, String(w), String(items), String(port), String(CRASH_SEED + w)], `worker ${w}`),
  );
  try {
    await together(workers);
  } finally {
    await new Promise<void>((resolve) => honcho.close(() => resolve()));
  }
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  const records = await all(reader);
  await reader.close();
  const reference = checkRules(records, 'memoryd-style workers'); // no item decided, sent or failed twice
  for (const worker of workers)
    assert.not.ok(
      worker.lines.some((l) => l.startsWith('twice')),
      `${worker.lines.join(' ')}`,
    );
  const counts = reference.counts();
  assert.is(counts.decided, items, 'every item decided');
  assert.is(counts.waiting, 0, 'nothing left waiting');
  const senders = new Set([...calls.values()].flat());
  assert.ok(senders.size >= 2, `the sender lease changed hands (senders: ${[...senders].join(', ')})`);
  for (const record of records) {
    if (record.type === 'decided' || record.item.type !== 'turn') continue;
    const made = calls.get(record.item.turn) ?? [];
    assert.is(made.length, 1, `item ${record.item.turn} sent to Honcho once, not ${made.length} times`);
    if (record.type === 'sent') assert.equal(record.ids, [`h-${record.item.turn}`]);
  }
  assert.is(calls.size, counts.sent + counts.failed, 'Honcho was called for nothing else');
});

test('a follower process sees every record, in order, with no gap and no repeat, through a restart of the server', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const count = 240;
  const follow = follower(uri);
  // 10 ms apart: the restart comes while it writes
  const writer = new LineProcess([WRITER, uri, '0', 'steady', String(count), String(CRASH_SEED), '10'], 'writer');
  let records: Record[];
  try {
    await writer.said('ready');
    writer.send('go');
    await follow.waitFor((lines) => lines.length >= count / 3, 'the follower to print a third of the records');
    await restartServer();
    assert.ok(!writer.lines.includes('done'), 'the server restarted while the writer wrote');
    await writer.said('done');
    const reader = await (await pgBackend(log)).open({ readOnly: true });
    records = await all(reader);
    await reader.close();
    assert.is(records.length, count);
    await follow.waitFor((lines) => lines.length >= count, 'the follower to print every record');
  } finally {
    await writer.end();
    follow.process.kill('SIGTERM');
    await follow.exited;
  }
  assert.equal(follow.ended, { code: 143, signal: null }, `the follower stopped on SIGTERM: ${follow.stderr}`);
  sawTheLog(follow, records, 'through a restart');
});

test("a ledger's session ended in the middle of a batch: every append of it refused, none in the log or the state; the ledger goes on", async () => {
  const log = freshLog();
  const ledger = await Ledger.open(await logUri(log));
  try {
    await ledger.append(decided(turn('cut', 0)));
    await withAdmin(async (admin) => {
      const lock = await holdLogLock(admin, log);
      // queued together: one group-commit batch, waiting in the server for the log's lock
      const appends = [1, 2, 3].map((n) => ledger.append(decided(turn('cut', n))));
      for (const appending of appends) appending.catch(() => undefined); // awaited below
      const pid = await waitingAppender(admin);
      await withAdmin(async (other) => void (await other.query('SELECT pg_terminate_backend($1)', [pid])));
      for (const appending of appends) await rejects(appending, 'LEDGER_IO', /the batch was not written/);
      await lock.release();
    });
    assert.is((await linesOf(log)).length, 1, 'nothing of the batch in the log');
    assert.is(ledger.size, 1);
    for (const n of [1, 2, 3]) assert.not.ok(await ledger.isDecided(turn('cut', n)), `item ${n} is not decided`);
    // the same items decided again, on a new session: once each
    await Promise.all([1, 2, 3].map((n) => ledger.append(decided(turn('cut', n)))));
    assert.equal((await linesOf(log)).length, 4);
    assert.is((await ledger.counts()).decided, 4);
  } finally {
    await ledger.close();
  }
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  checkRules(await all(reader), 'after the session was ended');
  await reader.close();
});

test.run();
