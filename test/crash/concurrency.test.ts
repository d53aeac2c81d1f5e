/**
 * Concurrency (issue 5): 1,000 un-awaited appends from 50 callers that interleave (each waits
 * now and then: a microtask, a timer, `setImmediate`, or its own last append), on every backend:
 * the JSONL file, LevelDB (`level:<folder>`), the in-memory log, and the JSONL file behind the
 * fault wrapper's random delays (larger group-commit batches). A fifth of the records are
 * invalid or break a rule given what was called before them.
 *
 * - Each append's outcome is what a sequential reference says when it is given the calls one by
 *   one in call order: accepted, or refused with the code of the rule or of the invalid record.
 * - The log holds exactly the accepted records, in call order; for the file, every line parses
 *   and is the record's canonical line (no two appends' bytes interleave).
 * - The state, live and after a reopen, answers as the reference does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Action,
  decodeRecord,
  encodeRecord,
  faultyBackend,
  honchoCodec,
  type Item,
  isLedgerError,
  jsonlBackend,
  Ledger,
  memoryBackend,
  type Record,
  type Target,
} from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { seedFor } from '../support/fuzz-runner.js';
import { InjectingIO } from '../support/injecting-io.js';
import { Home } from '../support/ledger.js';
import { ReferenceLedger } from '../support/reference-ledger.js';
import { scaled } from '../support/scale.js';

const CALLERS = 50;

const TIME = '2026-09-28T10:00:00.000Z';
/** The calls made: 1,000 at `LEDGERSTORE_TORTURE=1`. */
const TOTAL = scaled(1000);
/**
 * The items the callers share, so that their records meet under the rules: few enough that
 * many records are refused (decided already, not waiting), enough that about half are accepted.
 */
const POOL: Item[] = Array.from(
  { length: Math.ceil(TOTAL / 3) },
  (_, n): Item =>
    n % 3 === 2
      ? { type: 'edit', id: `2026-09-28-${String(n % 7).padStart(4, '0')}`, part: n }
      : { type: 'turn', session: `s${n % 6}`, turn: n },
);

const ACTIONS: Action[] = [
  { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
  { type: 'conclude', workspace: 'untrusted', peer: 'sam', session: 'chat-1', text: 'Sam "likes" tea\n' },
  { type: 'unconclude', workspace: 'trusted', text: 'x' },
  { type: 'fleet', session: 's1', text: 'é' },
  { type: 'retract', session: 's2', text: '\u{1f600}' },
  { type: 'skip', why: 'nothing to send' },
];

/** Records that are not valid, each refused with LEDGER_INVALID_RECORD before anything is queued. */
const INVALID: unknown[] = [
  { type: 'decided', time: 'yesterday', item: POOL[0], action: ACTIONS[0] },
  { type: 'decided', time: TIME, item: { type: 'turn', session: '..', turn: 1 }, action: ACTIONS[0] },
  { type: 'sent', time: TIME, item: POOL[1], ids: ['\ud800'] },
  { type: 'sent', time: TIME, item: POOL[2], ids: [], extra: 1 },
  { type: 'failed', time: TIME, item: POOL[3], status: 70_000, kind: 'x' },
  { type: 'failed', time: TIME, item: { type: 'edit', id: 'e', part: -1 }, status: null, kind: 'x' },
  { type: 'decided', time: TIME, item: POOL[4] },
  { type: 'nope', time: TIME, item: POOL[5] },
  null,
  42,
];

interface Call {
  readonly record: unknown;
  readonly valid: boolean;
  readonly outcome: Promise<string>;
}

/** A record one caller makes: valid (most), or not. */
function makeRecord(random: (n: number) => number): { record: unknown; valid: boolean } {
  const roll = random(100);
  if (roll < 8) return { record: INVALID[random(INVALID.length)], valid: false };
  const item = POOL[random(POOL.length)] as Item;
  if (roll < 60)
    return { record: { type: 'decided', time: TIME, item, action: ACTIONS[random(ACTIONS.length)] }, valid: true };
  if (roll < 80)
    return {
      record: {
        type: 'sent',
        time: TIME,
        item,
        ids: Array.from({ length: random(3) }, (_, n) => `m${random(1000)}-${n}`),
      },
      valid: true,
    };
  return {
    record: { type: 'failed', time: TIME, item, status: random(3) === 0 ? null : 400 + random(200), kind: 'refused' },
    valid: true,
  };
}

/** 50 callers make `total` appends between them, interleaving; every call in call order. */
async function appendFromManyCallers(ledger: Ledger, total: number, seed: number): Promise<Call[]> {
  const calls: Call[] = [];
  const each = Math.ceil(total / CALLERS);
  const caller = async (index: number): Promise<void> => {
    const rng = new Random(seed + index);
    const random = (n: number): number => rng.below(n);
    let last: Promise<string> = Promise.resolve('');
    for (let made = 0; made < each && calls.length < total; ) {
      const move = random(100);
      if (move < 70) {
        const { record, valid } = makeRecord(random);
        // the call order is the order of these calls, whatever the promises do later
        last = ledger.append(record as Record).then(
          () => 'ok',
          (e: unknown) => (isLedgerError(e) ? e.code : `not a LedgerError: ${String(e)}`),
        );
        calls.push({ record, valid, outcome: last });
        made++;
      } else if (move < 80) {
        await Promise.resolve();
      } else if (move < 88) {
        await sleep(random(3));
      } else if (move < 94) {
        await immediate();
      } else {
        await last;
      }
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, (_, n) => caller(n)));
  await Promise.all(calls.map((c) => c.outcome));
  return calls;
}

/** What the ledger answers, to compare with the reference. */
async function answers(ledger: Ledger): Promise<unknown> {
  return {
    counts: await ledger.counts(),
    outbox: await ledger.outbox(),
    sentIds: await Promise.all(POOL.map((item) => ledger.sentIds(item))),
  };
}

function referenceAnswers(reference: ReferenceLedger): unknown {
  return {
    counts: reference.counts(),
    outbox: reference.outbox(),
    sentIds: POOL.map((item) => reference.sentIds(item)),
  };
}

interface Subject {
  readonly name: string;
  /** The ledger to open, and the file-system layer under it when it is a JSONL file (to count its writes). */
  readonly target: (home: Home, io: InjectingIO) => Target;
  readonly file?: (home: Home) => string;
}

const SUBJECTS: Subject[] = [
  {
    name: 'JSONL',
    target: (home, io) => jsonlBackend(home.path, { codec: honchoCodec, io }),
    file: (home) => home.path,
  },
  { name: 'LevelDB', target: (home) => `level:${join(home.dir, 'honcho.level')}` },
  { name: 'memory', target: () => memoryBackend({ codec: honchoCodec }) },
  {
    name: 'JSONL behind random delays',
    target: (home, io) =>
      faultyBackend(jsonlBackend(home.path, { codec: honchoCodec, io }), { delay: { min: 0, max: 4, seed: 7 } }),
    file: (home) => home.path,
  },
];

for (const subject of SUBJECTS) {
  test(`${subject.name}: 1,000 un-awaited appends from 50 callers land in call order, each with the outcome a sequential reference gives`, async () => {
    const home = new Home();
    const seed = seedFor(`concurrency ${subject.name}`);
    const where = `(seed ${seed})`;
    try {
      const io = new InjectingIO(); // no faults: it counts the writes
      const target = subject.target(home, io); // one backend object, opened twice: reopens see the same log
      const ledger = await Ledger.open(target);
      const calls = await appendFromManyCallers(ledger, TOTAL, seed);

      const reference = new ReferenceLedger();
      const outcomes = await Promise.all(calls.map((c) => c.outcome));
      const tally: { [outcome: string]: number } = {};
      calls.forEach((c, n) => {
        const expected = !c.valid ? 'LEDGER_INVALID_RECORD' : (reference.offer(c.record as Record)?.code ?? 'ok');
        assert.is(outcomes[n], expected, `call ${n} ${where}: ${JSON.stringify(c.record)}`);
        tally[expected] = (tally[expected] ?? 0) + 1;
      });
      const accepted = reference.records.map((r) => encodeRecord(r));
      assert.equal(await answers(ledger), referenceAnswers(reference), `the live state ${where}`);
      await ledger.close();

      if (subject.file !== undefined) {
        const bytes = readFileSync(subject.file(home));
        const lines = bytes.toString('utf8').split('\n');
        assert.is(lines.pop(), '', 'the file ends with a newline');
        for (const line of lines) decodeRecord(Buffer.from(line, 'utf8')); // every line parses
        assert.equal(lines, accepted, `the file holds the accepted records in call order ${where}`);
      }
      const reopened = await Ledger.open(target, { readOnly: subject.name === 'JSONL' });
      const read: string[] = [];
      for await (const record of reopened.records()) read.push(encodeRecord(record));
      assert.equal(read, accepted, `the log holds the accepted records in call order ${where}`);
      assert.equal(await answers(reopened), referenceAnswers(reference), `the state after a reopen ${where}`);
      await reopened.close();
      const counts = Object.entries(tally)
        .map(([outcome, n]) => `${outcome} ${n}`)
        .join(', ');
      const writes = subject.file === undefined ? '' : `; ${io.count('write')} writes, ${io.count('datasync')} syncs`;
      console.log(
        `  concurrency, ${subject.name}: ${calls.length} appends from ${CALLERS} callers: ${counts}${writes}`,
      );
    } finally {
      home.remove();
    }
  });
}

test.run();
