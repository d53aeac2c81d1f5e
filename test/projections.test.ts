/**
 * Projections as units (issue 14): a version bump rebuilds that projection alone; a build of a
 * long log runs in the background while the ledger answers, every answer that of a replay in
 * memory; a kill in the middle of one (a real process) leaves a read model the next open uses or
 * builds again; another process sees how far it is; and a user of the generic log gets the
 * checkpoint, the catch-up and the rebuild of a projection of their own.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AbstractClearOptions } from 'abstract-level';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import {
  encodeRecord,
  isLedgerError,
  jsonlBackend,
  Ledger,
  type LedgerOptions,
  type ProjectionDefinition,
  ProjectionSet,
  type Record,
  type RecordCodec,
} from '../lib/index.js';
import { ledgerstore } from './support/cli.js';
import { registryOf, servingOf } from './support/index-db.js';
import { collect, withHome } from './support/ledger.js';
import { exitingTurns, type TurnQueries, turnsPerSession } from './support/turns-projection.js';

/** What a ledger answers about `records`: every query of memoryd's, over every item. */
async function answers(ledger: Ledger, records: readonly Record[]): Promise<unknown> {
  return {
    size: ledger.size,
    counts: await ledger.counts(),
    outbox: await ledger.outbox(),
    decisions: await collect(ledger.decisions()),
    states: await Promise.all(records.map((r) => ledger.stateOf(r.item))),
    sentIds: await Promise.all(records.map((r) => ledger.sentIds(r.item))),
  };
}

/** What a replay in memory answers for the ledger at `path`. */
async function replayed(path: string, records: readonly Record[]): Promise<unknown> {
  const ledger = await Ledger.open(path, { readOnly: true });
  try {
    return await answers(ledger, records);
  } finally {
    await ledger.close();
  }
}

/** The turns decided per session, counted in memory. */
function turnsCounted(records: readonly Record[]): Map<string, number> {
  const counted = new Map<string, number>();
  for (const r of records)
    if (r.type === 'decided' && r.item.type === 'turn')
      counted.set(r.item.session, (counted.get(r.item.session) ?? 0) + 1);
  return counted;
}

/** What the turns projection answers for every session of `records`. */
async function turnsAnswered(ledger: Ledger, records: readonly Record[]): Promise<Map<string, number>> {
  const turns = ledger.projection<TurnQueries>(turnsPerSession);
  const answered = new Map<string, number>();
  for (const session of turnsCounted(records).keys()) answered.set(session, await turns.turnsOf(session));
  return answered;
}

async function withLedger<T>(
  path: string,
  options: LedgerOptions,
  body: (ledger: Ledger, notices: string[]) => Promise<T>,
): Promise<T> {
  const notices: string[] = [];
  const ledger = await Ledger.open(path, { ...options, onNotice: (m) => notices.push(m) });
  try {
    return await body(ledger, notices);
  } finally {
    await ledger.close();
  }
}

const records = [...workload({ records: 12_000, seed: 14 })];
const writeLog = (path: string, upTo: number): void =>
  writeFileSync(
    path,
    records
      .slice(0, upTo)
      .map((r) => `${encodeRecord(r)}\n`)
      .join(''),
  );

test("a version bump of one projection rebuilds that one alone; the others' rows are kept", async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    writeLog(home.path, 3000);
    await withLedger(home.path, { index, projections: [turnsPerSession] }, async (ledger) => {
      assert.equal(await turnsAnswered(ledger, records.slice(0, 3000)), turnsCounted(records.slice(0, 3000)));
    });
    const before = registryOf(index);
    const { worker: _, ...unversioned } = turnsPerSession;
    const bumped: ProjectionDefinition<Record, TurnQueries> = { ...unversioned, version: 2 };
    await withLedger(home.path, { index, projections: [bumped] }, async (ledger, notices) => {
      assert.equal(notices, [
        `${index}: rebuilding the projection turns from ${home.path}: it is of version 1, and this ledgerstore reads version 2`,
      ]);
      assert.equal(await turnsAnswered(ledger, records.slice(0, 3000)), turnsCounted(records.slice(0, 3000)));
      assert.equal(await answers(ledger, records.slice(0, 3000)), await replayed(home.path, records.slice(0, 3000)));
    });
    for (const name of ['items', 'outbox', 'counts', 'stacks'])
      assert.equal(
        servingOf(index, name),
        before.find((g) => g.projection === name && g.role === 'serving'),
        name,
      );
    const turns = servingOf(index, 'turns');
    assert.is(turns.version, 2);
    assert.is.not(turns.id, before.find((g) => g.projection === 'turns')?.id, 'new rows for the new version');
  });
});

test('Ledger.open does not wait for a build: it serves meanwhile, every answer as a replay gives it, then the rows take over', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    writeLog(home.path, 10_000);
    await withLedger(
      home.path,
      { index, projections: [turnsPerSession], backgroundFrom: 1000 },
      async (ledger, notices) => {
        assert.ok(
          ledger.projections().every((p) => p.state === 'building' && p.answering === 'memory' && p.total === 10_000),
          JSON.stringify(ledger.projections()),
        );
        assert.equal(notices, [`${index}: built the index of ${home.path} (10000 records) (in the background)`]);
        // appends are taken, and checked, while the build runs
        for (const record of records.slice(10_000, 11_000)) await ledger.append(record);
        assert.equal(
          await answers(ledger, records.slice(0, 11_000)),
          await replayed(home.path, records.slice(0, 11_000)),
        );
        assert.equal(await turnsAnswered(ledger, records.slice(0, 11_000)), turnsCounted(records.slice(0, 11_000)));
        await Promise.all(records.slice(11_000, 11_500).map((record) => ledger.append(record)));
        await ledger.whenReady();
        assert.ok(
          ledger.projections().every((p) => p.state === 'ready' && p.answering === 'rows'),
          JSON.stringify(ledger.projections()),
        );
        assert.equal(
          await answers(ledger, records.slice(0, 11_500)),
          await replayed(home.path, records.slice(0, 11_500)),
        );
        assert.equal(await turnsAnswered(ledger, records.slice(0, 11_500)), turnsCounted(records.slice(0, 11_500)));
        await ledger.append(records[11_500] as Record);
      },
    );
    // the next open finds the rows built, and reads nothing but what they lack
    await withLedger(
      home.path,
      { index, projections: [turnsPerSession], backgroundFrom: 1000 },
      async (ledger, notices) => {
        assert.equal(notices, []);
        assert.ok(ledger.projections().every((p) => p.state === 'ready'));
        assert.equal(
          await answers(ledger, records.slice(0, 11_501)),
          await replayed(home.path, records.slice(0, 11_501)),
        );
      },
    );
  });
});

test('a build whose thread exits fails with LEDGER_BUILD_FAILED, not a disk error: told, the rows before answer on', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    writeLog(home.path, 2000);
    await withLedger(home.path, { index, projections: [turnsPerSession] }, async () => undefined);
    // version 2 is built in the background (the rows are at 2000, past backgroundFrom); version 1 answers meanwhile
    const options = { index, projections: [exitingTurns], backgroundFrom: 1000 };
    await withLedger(home.path, options, async (ledger, notices) => {
      const failed = await ledger.whenReady().then(
        () => assert.unreachable('the build was ready'),
        (e: unknown) => e,
      );
      assert.ok(isLedgerError(failed, 'LEDGER_BUILD_FAILED'), String(failed));
      assert.is(failed.runbook, 'index-build-failed');
      assert.match(failed.message, 'its thread exited with code 3');
      assert.ok(
        notices.some((n) => n.includes('a build of') && n.includes('its thread exited with code 3')),
        notices.join('\n'),
      );
      const turns = ledger.projection<TurnQueries>(exitingTurns);
      for (const [session, count] of turnsCounted(records.slice(0, 2000)))
        assert.is(await turns.turnsOf(session), count, `session ${session}`);
    });
  });
});

const CHILD = fileURLToPath(new URL('./support/build-child.js', import.meta.url));

/** A child holding the ledger open with a gated build of the turns projection, and what it says. */
function buildChild(
  path: string,
  index: string,
  gate: string,
): { child: ChildProcessWithoutNullStreams; said: (line: string) => Promise<void> } {
  const child = spawn(process.execPath, [CHILD, path, index], { env: { ...process.env, LEDGERSTORE_TEST_GATE: gate } });
  let out = '';
  const waiting: { line: string; resolve: () => void }[] = [];
  child.stdout.on('data', (data: Buffer) => {
    out += data.toString();
    for (const w of [...waiting]) if (out.split('\n').some((l) => l.startsWith(w.line))) w.resolve();
  });
  const said = (line: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (out.split('\n').some((l) => l.startsWith(line))) return resolve();
      waiting.push({ line, resolve });
      child.once('exit', (code) => reject(new Error(`the child exited with ${String(code)} before saying ${line}`)));
    });
  return { child, said };
}

async function killed(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

test('another process sees how far a build is (index status), and then that it is done', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const gate = join(home.dir, 'gate');
    writeLog(home.path, 5000);
    await withLedger(home.path, { index, waitForIndex: true }, async () => undefined);
    const { child, said } = buildChild(home.path, index, gate);
    try {
      await said('open');
      const during = await ledgerstore(['index', 'status', home.path, '--index', index]);
      assert.is(during.code, 0, during.stderr);
      assert.match(
        during.stdout,
        new RegExp(`^open: {7}in process ${child.pid}, which keeps it up to date \\(its last word at [^)]+\\)$`, 'm'),
      );
      assert.match(
        during.stdout,
        /^projections: items 2 ready, outbox 1 ready, counts 1 ready, stacks 1 ready, turns 1 building \(0 of 5,000 records, 0 records\/s; answered from memory meanwhile\)$/m,
      );
      const json = JSON.parse(
        (await ledgerstore(['index', 'status', home.path, '--index', index, '--json'])).stdout,
      ) as {
        projections: { name: string; state: string; done?: number; total?: number }[];
        openIn: { pid: number } | null;
        rebuildsAtNextOpen: boolean | null;
      };
      assert.is(json.openIn?.pid, child.pid);
      assert.is(json.rebuildsAtNextOpen, null, 'unknown while another process holds it, not a rebuild');
      assert.equal(
        json.projections.map((p) => [p.name, p.state, p.total ?? null]),
        [
          ['items', 'ready', 0],
          ['outbox', 'ready', 0],
          ['counts', 'ready', 0],
          ['stacks', 'ready', 0],
          ['turns', 'building', 5000],
        ],
      );
      writeFileSync(gate, '');
      await said('ready');
      const after = await ledgerstore(['index', 'status', home.path, '--index', index]);
      assert.match(
        after.stdout,
        /^projections: items 2 ready, outbox 1 ready, counts 1 ready, stacks 1 ready, turns 1 ready$/m,
      );
    } finally {
      await killed(child);
    }
  });
});

test('a process killed while a build runs leaves a read model the next open uses, and the build is made again', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const gate = join(home.dir, 'gate');
    writeLog(home.path, 6000);
    const { child, said } = buildChild(home.path, index, gate);
    try {
      await said('open');
      assert.ok(
        registryOf(index).some((g) => g.role === 'building'),
        'the build is registered before it writes',
      );
    } finally {
      await killed(child);
    }
    writeFileSync(gate, '');
    await withLedger(home.path, { index, projections: [turnsPerSession] }, async (ledger, notices) => {
      assert.equal(notices, [`${index}: rebuilding the index from ${home.path}: an earlier build did not finish`]);
      assert.ok(ledger.projections().every((p) => p.state === 'ready'));
      assert.equal(await answers(ledger, records.slice(0, 6000)), await replayed(home.path, records.slice(0, 6000)));
      assert.equal(await turnsAnswered(ledger, records.slice(0, 6000)), turnsCounted(records.slice(0, 6000)));
    });
    assert.not.ok(
      registryOf(index).some((g) => g.role !== 'serving'),
      'nothing of the killed build is left',
    );
  });
});

/** A stock log of the generic event log, as `examples/generic-log.ts` has it: a line of JSON a record. */
interface Received {
  readonly sku: string;
  readonly quantity: number;
}
const receivedCodec: RecordCodec<Received> = {
  normalize: (value) => value as Received,
  encode: (r) => JSON.stringify(r),
  decode: (bytes, start, end) => JSON.parse(Buffer.from(bytes.subarray(start, end)).toString('utf8')) as Received,
};

/** A user's projection of it: the stock of each SKU. */
interface StockQueries {
  stockOf(sku: string): Promise<number>;
}
const stock = (version: number): ProjectionDefinition<Received, StockQueries> => ({
  name: 'stock',
  version,
  apply(received, rows) {
    for (const r of received) rows.put(r.sku, (rows.get<number>(r.sku) ?? 0) + r.quantity);
  },
  queries: (rows) => ({ stockOf: async (sku) => (await rows.get<number>(sku)) ?? 0 }),
});

test('a projection on the generic log: kept with its checkpoint, caught up at open, rebuilt at a version bump', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const file = join(home.dir, 'stock.jsonl');
    const backend = jsonlBackend(file, { codec: receivedCodec });
    const open = async (version: number, notices: string[] = []) =>
      ProjectionSet.open(backend, { index, projections: [stock(version)], onNotice: (m) => notices.push(m) });
    const first = await open(1);
    const batch: Received[] = [
      { sku: 'MUG-1', quantity: 12 },
      { sku: 'TEE-2', quantity: 5 },
    ];
    await first.log.append(batch);
    await first.set.apply(batch, () => first.log.resumePoint());
    assert.is(await first.set.queries(stock(1)).stockOf('MUG-1'), 12);
    await first.set.close();
    await first.log.close();
    // appended by another writer, behind the projection's back: caught up at the next open
    const writer = await backend.open();
    await writer.append([{ sku: 'MUG-1', quantity: 3 }]);
    await writer.close();
    const notices: string[] = [];
    const second = await open(1, notices);
    assert.equal(notices, []);
    assert.is(await second.set.queries(stock(1)).stockOf('MUG-1'), 15);
    await second.set.close();
    await second.log.close();
    const third = await open(2, notices);
    assert.equal(notices, [
      `${index}: rebuilding the index from ${file}: it is of version 1, and this ledgerstore reads version 2`,
    ]);
    assert.equal(
      [await third.set.queries(stock(2)).stockOf('MUG-1'), await third.set.queries(stock(2)).stockOf('TEE-2')],
      [15, 5],
    );
    await third.set.close();
    await third.log.close();
  });
});

/** A database in memory whose deletes of a range fail, as a failing disk's would, once armed: those of the rows it held then. */
class ClearFailing extends MemoryLevel<Uint8Array, Uint8Array> {
  private held: Buffer[] = [];
  constructor() {
    super({ keyEncoding: 'view', valueEncoding: 'view' });
  }
  /** From now on, a delete of a range that holds any key held now fails. */
  async failClearsOfHeld(): Promise<void> {
    this.held = (await this.keys({ keyEncoding: 'view' }).all()).map((key) => Buffer.from(key));
  }
  heal(): void {
    this.held = [];
  }
  /** How many keys of the generation `id`'s rows it holds. */
  async keysOf(id: string): Promise<number> {
    const prefix = `!${id}!`;
    const keys = await this.keys({ keyEncoding: 'view' }).all();
    return keys.filter((key) => Buffer.from(key).toString('utf8').startsWith(prefix)).length;
  }
  override async clear<K = Uint8Array>(options?: AbstractClearOptions<K>): Promise<void> {
    const { gte, lt } = (options ?? {}) as { gte?: Uint8Array; lt?: Uint8Array };
    const inRange = (key: Buffer): boolean =>
      (gte === undefined || Buffer.compare(key, gte) >= 0) && (lt === undefined || Buffer.compare(key, lt) < 0);
    if (this.held.some(inRange)) throw new Error('injected: the range could not be deleted');
    return options === undefined ? super.clear() : super.clear(options);
  }
}

test('rows retired at a version bump that cannot be deleted are told of, and deleted by the next open', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'stock.jsonl');
    const backend = jsonlBackend(file, { codec: receivedCodec });
    const db = new ClearFailing();
    const notices: string[] = [];
    const open = (version: number) =>
      ProjectionSet.open(backend, { index: db, projections: [stock(version)], onNotice: (m) => notices.push(m) });
    const first = await open(1);
    const batch: Received[] = [{ sku: 'MUG-1', quantity: 12 }];
    await first.log.append(batch);
    await first.set.apply(batch, () => first.log.resumePoint());
    await first.set.close();
    await first.log.close();
    await db.failClearsOfHeld();
    const second = await open(2);
    assert.is(await second.set.queries(stock(2)).stockOf('MUG-1'), 12);
    await second.set.close(); // after the release of version 1's rows
    await second.log.close();
    const told = notices.filter((n) => n.includes('could not be deleted'));
    assert.is(told.length, 1, notices.join('\n'));
    assert.match(
      told[0] as string,
      /: the rows of stock\.\d+, which nothing answers from any more, could not be deleted \(.*injected: the range could not be deleted\); they are left retired/,
    );
    const retired = (/the rows of (stock\.\d+)/.exec(told[0] as string) as RegExpExecArray)[1] as string;
    assert.ok((await db.keysOf(retired)) > 0, 'left retired');
    db.heal();
    notices.length = 0;
    const third = await open(2);
    await third.set.close();
    await third.log.close();
    assert.equal(notices, [], 'the retired rows deleted, without a word');
    assert.is(await db.keysOf(retired), 0, 'deleted by the next open');
    await db.close();
  });
});

test('a row deleted and put again in one batch of a build reads back put (a stack top undone, then concluded)', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'stock.jsonl');
    const backend = jsonlBackend(file, { codec: receivedCodec });
    const writer = await backend.open();
    await writer.append([
      { sku: 'MUG-1', quantity: 1 },
      { sku: 'MUG-1', quantity: 2 },
      { sku: 'TEE-2', quantity: 4 },
    ]);
    await writer.close();
    // a build from nothing knows which keys it wrote; a key first deleted, then put, is one of them
    const deliveries: ProjectionDefinition<Received, { deliveries(): Promise<number> }> = {
      name: 'deliveries',
      version: 1,
      apply(received, rows) {
        for (const _ of received) {
          const before = rows.get<number>('n') ?? 0;
          rows.del('n');
          rows.put('n', before + 1);
        }
      },
      queries: (rows) => ({ deliveries: async () => (await rows.get<number>('n')) ?? 0 }),
    };
    const { set, log } = await ProjectionSet.open(backend, {
      index: join(home.dir, 'index'),
      projections: [deliveries],
    });
    try {
      assert.is(await set.queries(deliveries).deliveries(), 3);
    } finally {
      await set.close();
      await log.close();
    }
  });
});

test.run();
