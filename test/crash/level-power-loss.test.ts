/**
 * Power loss under LevelDB (issue 10): what a power loss may leave of a write-ahead log that
 * LevelDB had not synced, opened by the real code. LevelDB syncs its tables and its manifest
 * (they are written once, synced, then named in a synced manifest), so what a power loss
 * leaves to chance is the write-ahead log: of a read model, all of it (its batches are never
 * synced); of a `level:` ledger, only the batch being written (each batch is synced before it is
 * acknowledged). The model is the one of `test/support/power-loss-io.ts`, on the write-ahead
 * log: its size is any it had (at a 512-byte sector, or the whole file), and each sector it had
 * written holds its bytes, or zeros (never written back), or garbage (a block written back with
 * what it held before), or its bytes up to a point and zeros after (written back when the page
 * held less). States enumerated: the file cut at every block (every sector under `make
 * torture`), each block (sector) alone zeros, and alone garbage; and `scaled(40)` states drawn at
 * random, every sector on its own.
 *
 * The promise in every state:
 * - a read model: the ledger opened with it answers as a fresh replay does and refuses every
 *   rule-breaking record offered (`test/support/index-promises.ts`): caught up from its
 *   checkpoint when what the loss left is a whole prefix of its batches, rebuilt with a notice
 *   when it is not (a hole in its write-ahead log), never trusted while wrong;
 * - a ledger: it opens (nothing refused), with every acknowledged record, and the batch that was
 *   being written whole or not at all.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import { encodeRecord, Ledger, type Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { recordsOf } from '../support/guarantees.js';
import { databaseOf } from '../support/index-db.js';
import { checkIndexPromise, replayDigests, ruleBreakers } from '../support/index-promises.js';
import { reportFigures } from '../support/level-figures.js';
import { SCALE, scaled } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

const SECTOR = 512;
const BLOCK = 4096;

/** What a power loss may leave in a sector: the bytes written, zeros, garbage, or the bytes written up to a point. */
type Sector = 'kept' | 'zeros' | 'garbage' | 'partly';

/** A state: the file's size, and what each sector of its unsynced part holds (kept unless said). */
interface State {
  readonly name: string;
  readonly size: number;
  readonly sectors: ReadonlyMap<number, Sector>;
}

/** The bytes a state leaves of `bytes`, whose first `synced` bytes were synced (and stay, in a sector that holds both). */
function materialize(bytes: Buffer, synced: number, state: State, rng: Random): Buffer {
  const out = Buffer.from(bytes.subarray(0, state.size));
  for (const [sector, kind] of state.sectors) {
    const from = Math.max(synced, sector * SECTOR);
    const to = Math.min(from + SECTOR, out.length);
    if (from >= to || kind === 'kept') continue;
    if (kind === 'zeros') out.fill(0, from, to);
    else if (kind === 'garbage') for (let n = from; n < to; n++) out[n] = rng.below(256);
    else out.fill(0, from + rng.below(to - from), to);
  }
  return out;
}

/** The states of a file of `length` bytes whose bytes before `synced` were synced. */
function statesOf(length: number, synced: number, rng: Random): State[] {
  const unit = SCALE >= 10 ? SECTOR : BLOCK;
  const first = Math.floor(synced / SECTOR);
  const last = Math.ceil(length / SECTOR);
  const states: State[] = [];
  if (synced > 0 && synced < length) states.push({ name: 'cut', size: synced, sectors: new Map() });
  for (let size = Math.ceil((synced + 1) / unit) * unit; size < length; size += unit)
    states.push({ name: 'cut', size, sectors: new Map() });
  states.push({ name: 'whole', size: length, sectors: new Map() });
  for (const kind of ['zeros', 'garbage'] as const) {
    for (let at = first; at < last; at += unit / SECTOR) {
      const sectors = new Map<number, Sector>();
      for (let s = at; s < Math.min(last, at + unit / SECTOR); s++) sectors.set(s, kind);
      states.push({ name: `a ${unit === SECTOR ? 'sector' : 'block'} of ${kind}`, size: length, sectors });
    }
  }
  for (let k = 0; k < scaled(40); k++) {
    const size = synced + rng.below(length - synced + 1);
    const sectors = new Map<number, Sector>();
    for (let s = first; s < Math.ceil(size / SECTOR); s++)
      sectors.set(s, rng.pick(['kept', 'kept', 'kept', 'zeros', 'garbage', 'partly'] as const));
    states.push({ name: 'random', size, sectors });
  }
  return states;
}

/** The newest write-ahead log of a folder. */
const newestLog = (folder: string): string =>
  readdirSync(folder)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .at(-1) as string;

test(`power loss in a read model's unsynced write-ahead log: caught up or rebuilt, never trusted while wrong`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-power-'));
  const rng = new Random(CRASH_SEED * 13 + 1);
  const outcomes = new Map<string, number>();
  let states = 0;
  let bytes = Buffer.alloc(0);
  try {
    const records = [...workload({ records: 1400, seed: CRASH_SEED })];
    const log = join(home, 'honcho.jsonl');
    const index = join(home, 'index');
    // rows in a table (the second open folds the first one's log), then 400 batches in the write-ahead log
    for (const session of [records.slice(0, 1000), records.slice(1000)]) {
      const ledger = await Ledger.open(log, { index, onNotice: () => undefined });
      for (const record of session) await ledger.append(record);
      await ledger.close();
    }
    const digests = await replayDigests(log);
    const breakers = ruleBreakers(records);
    // the write-ahead log of the database the rows are in, as a path inside the read model's folder
    const database = relative(index, databaseOf(index));
    const wal = join(database, newestLog(join(index, database)));
    bytes = readFileSync(join(index, wal));
    for (const state of statesOf(bytes.length, 0, rng)) {
      const dir = join(home, `state-${states++}`);
      cpSync(index, join(dir, 'index'), { recursive: true });
      cpSync(log, join(dir, 'honcho.jsonl'));
      writeFileSync(join(dir, 'index', wal), materialize(bytes, 0, state, rng));
      const context = `power-loss harness, read model (${state.name}, ${state.size} of ${bytes.length} bytes; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
      const outcome = await checkIndexPromise(
        join(dir, 'honcho.jsonl'),
        join(dir, 'index'),
        breakers,
        digests,
        context,
      );
      const key = `${state.name}: ${outcome}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures(
    'power-index',
    `${states} states of a write-ahead log of 400 batches (${Math.ceil(bytes.length / BLOCK)} blocks): ${[...outcomes].map(([key, n]) => `${key} ${n}`).join(', ')}; no failure`,
  );
});

test(`power loss while a level: ledger writes a batch: every acknowledged record kept, the batch whole or absent, never refused`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-power-'));
  const rng = new Random(CRASH_SEED * 13 + 2);
  const outcomes = new Map<string, number>();
  let states = 0;
  try {
    const records = [...workload({ records: 1300, seed: CRASH_SEED })];
    const folder = join(home, 'honcho.level');
    const first = await Ledger.open(`level:${folder}`);
    for (const record of records.slice(0, 1000)) await first.append(record);
    await first.close();
    // the next writer: 20 batches acknowledged, then one being written when the power goes
    const writer = await Ledger.open(`level:${folder}`);
    const acknowledged = records.slice(0, 1280);
    for (let from = 1000; from < 1280; from += 14)
      await Promise.all(records.slice(from, Math.min(from + 14, 1280)).map((record) => writer.append(record)));
    const wal = newestLog(folder);
    const synced = readFileSync(join(folder, wal)).length;
    await Promise.all(records.slice(1280).map((record) => writer.append(record)));
    const image = join(home, 'image');
    cpSync(folder, image, { recursive: true }); // the files as the dying writer left them
    await writer.close();
    const bytes = readFileSync(join(image, wal));
    for (const state of statesOf(bytes.length, synced, rng)) {
      const dir = join(home, `state-${states++}`);
      cpSync(image, dir, { recursive: true });
      writeFileSync(join(dir, wal), materialize(bytes, synced, state, rng));
      const context = `power-loss harness, ledger (${state.name}, ${state.size} of ${bytes.length} bytes, ${synced} synced; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
      let ledger: Ledger;
      try {
        ledger = await Ledger.open(`level:${dir}`);
      } catch (e) {
        assert.unreachable(`${context}: refused: ${String(e)}`);
        throw e;
      }
      const found = await recordsOf(ledger).finally(() => ledger.close());
      const expected: readonly Record[] = found.length === records.length ? records : acknowledged;
      assert.is(
        found.length,
        expected.length,
        `${context}: ${found.length} records, not the ${acknowledged.length} acknowledged (and the batch being written whole, or none of it)`,
      );
      found.forEach((record, n) =>
        assert.is(encodeRecord(record), encodeRecord(expected[n] as Record), `${context}: record ${n + 1}`),
      );
      const key = `${state.name}: ${found.length === records.length ? 'the batch kept' : 'the batch lost'}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures(
    'power-ledger',
    `${states} states of a batch of 20 records being written: ${[...outcomes].map(([key, n]) => `${key} ${n}`).join(', ')}; no failure`,
  );
});

test.run();
