/**
 * Races between real processes on one PostgreSQL log (`test/support/pg-writer.ts`):
 *
 * - three writers appending batches at once, without `expectedHead`: every acknowledged batch
 *   is in the log exactly once, whole, at the place its acknowledgement gave, and each writer's
 *   batches in the order it made them; nothing else is there;
 * - three writers deciding the same items with `expectedHead`, catching up on each conflict:
 *   every item is decided exactly once, and every acknowledged batch is there;
 * - a writer killed with SIGKILL in the middle of large batches: no half batch, no
 *   acknowledged batch lost.
 */

import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { checkRules } from '../support/guarantees.js';
import { all } from '../support/ledger.js';
import { LineProcess } from '../support/line-process.js';
import { freshLog, logUri, pgBackend } from '../support/pg-cluster.js';
import { CRASH_SEED } from '../support/seed.js';

const WRITER = fileURLToPath(new URL('../support/pg-writer.js', import.meta.url));

/** A writer process, and what it said. */
class Writer extends LineProcess {
  constructor(args: readonly string[]) {
    super([WRITER, ...args], `writer ${args[1]}`);
  }

  /** Where each acknowledged batch went, in the order they were acknowledged. */
  get acks(): { from: number; head: number }[] {
    return this.lines
      .filter((line) => line.startsWith('ack '))
      .map((line) => {
        const [, from, head] = line.split(' ');
        return { from: Number(from), head: Number(head) };
      });
  }

  go(): void {
    this.send('go');
  }
}

/** Starts `n` writers on `uri` in `mode`, lets them go together, and waits for each to be done. */
async function race(uri: string, n: number, mode: string, count: number): Promise<Writer[]> {
  const writers = Array.from(
    { length: n },
    (_, w) => new Writer([uri, String(w), mode, String(count), String(CRASH_SEED + w)]),
  );
  try {
    await Promise.all(writers.map((w) => w.said('ready')));
    for (const w of writers) w.go();
    await Promise.all(writers.map((w) => w.said('done')));
  } finally {
    await Promise.all(writers.map((w) => w.end()));
  }
  return writers;
}

/** The batch a record belongs to (its edit's id), and its size (`of <size>`). */
const tagOf = (r: Record): { tag: string; part: number; size: number } => {
  assert.ok(
    r.type === 'decided' && r.item.type === 'edit' && r.action.type === 'skip',
    `not a writer's record: ${JSON.stringify(r)}`,
  );
  return { tag: r.item.id, part: r.item.part, size: Number(r.action.why.slice('of '.length)) };
};

/** Every batch of the log, whole: the records of one tag, in part order, as many as its size says. */
function batchesOf(records: readonly Record[]): { tag: string; from: number; head: number }[] {
  const batches: { tag: string; from: number; head: number }[] = [];
  const seen = new Set<string>();
  for (let at = 0; at < records.length; ) {
    const { tag, size } = tagOf(records[at] as Record);
    assert.not.ok(seen.has(tag), `batch ${tag} is in the log twice (again at ${at})`);
    seen.add(tag);
    for (let k = 0; k < size; k++) {
      const here = records[at + k];
      assert.ok(here !== undefined, `batch ${tag} at ${at} is cut off after ${k} of its ${size} records`);
      const got = tagOf(here);
      assert.ok(
        got.tag === tag && got.part === k,
        `batch ${tag} at ${at}: its record ${k} is ${got.tag}/${got.part}: a half batch`,
      );
    }
    batches.push({ tag, from: at, head: at + size });
    at += size;
  }
  return batches;
}

test("three writer processes appending at once: every acknowledged batch is there once, whole, where its ack said, in each writer's order", async () => {
  const log = freshLog();
  const writers = await race(await logUri(log), 3, 'blind', 60);
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  const batches = batchesOf(await all(reader));
  await reader.close();
  const byPlace = new Map(batches.map((b) => [b.from, b]));
  writers.forEach((w, n) => {
    assert.is(w.acks.length, 60, `writer ${n}'s acknowledgements`);
    w.acks.forEach((ack, b) => {
      const batch = byPlace.get(ack.from);
      assert.equal(
        batch,
        { tag: `w${n}-${b}`, from: ack.from, head: ack.head },
        `writer ${n}'s batch ${b}, acknowledged at ${ack.from}`,
      );
      if (b > 0)
        assert.ok(
          ack.from >= (w.acks[b - 1] as { head: number }).head,
          `writer ${n}'s batch ${b} lands after its batch ${b - 1}`,
        );
    });
  });
  assert.is(batches.length, 180, 'nothing but the acknowledged batches');
});

test('three writer processes deciding the same items with expectedHead: every item decided exactly once', async () => {
  const log = freshLog();
  const items = 150;
  const writers = await race(await logUri(log), 3, 'decide', items);
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  const records = await all(reader);
  await reader.close();
  checkRules(records, 'three deciding writers'); // no item decided twice
  const turns = records.map((r) => (r.item.type === 'turn' ? r.item.turn : -1)).sort((a, b) => Number(a) - Number(b));
  assert.equal(
    turns,
    Array.from({ length: items }, (_, n) => n),
    'every item decided',
  );
  const acked = writers.flatMap((w) => w.acks).sort((a, b) => a.from - b.from);
  let at = 0;
  for (const ack of acked) {
    assert.is(ack.from, at, 'the acknowledged batches tile the log: each once, none missing');
    at = ack.head;
  }
  assert.is(at, records.length);
});

test('a writer killed with SIGKILL in the middle of large batches leaves no half batch and loses no acknowledged one', async () => {
  const rng = new Random(CRASH_SEED);
  const log = freshLog();
  const uri = await logUri(log);
  const acked: { from: number; head: number }[] = [];
  for (let trial = 0; trial < 4; trial++) {
    const writer = new Writer([uri, String(trial), 'big', '2000', String(CRASH_SEED + trial)]);
    await writer.said('ready');
    writer.go();
    const acks = 1 + rng.below(3);
    await writer.waitFor(() => writer.acks.length >= acks, `${acks} acknowledgements`);
    await new Promise((resolve) => setTimeout(resolve, rng.below(15)));
    writer.process.kill('SIGKILL');
    await writer.exited;
    acked.push(...writer.acks);
  }
  const reader = await (await pgBackend(log)).open({ readOnly: true });
  const batches = batchesOf(await all(reader));
  await reader.close();
  const places = new Set(batches.map((b) => `${b.from}-${b.head}`));
  for (const ack of acked)
    assert.ok(
      places.has(`${ack.from}-${ack.head}`),
      `the batch acknowledged at ${ack.from}-${ack.head} is there, whole`,
    );
});

test.run();
