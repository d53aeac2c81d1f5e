/**
 * Migration: `copyLedger` between any two backends, and export, byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../backends/jsonl-write-whole.js';
import { memoryBackend } from '../backends/memory.js';
import { type CopyPhase, copyLedger, fillLedger } from '../lib/copy.js';
import { syntheticLines, workload } from '../lib/honcho/synthetic.js';
import {
  backendFor,
  encodeRecord,
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  Ledger,
  type LogBackend,
  type Record,
} from '../lib/index.js';
import { decided, failure, sent, turn, withHome } from './support/ledger.js';

const CLI = fileURLToPath(new URL('../lib/cli.js', import.meta.url));

async function exported(backend: LogBackend<Record>): Promise<Buffer> {
  const ledger = await Ledger.open(backend, { readOnly: true });
  const lines: string[] = [];
  for await (const record of ledger.records()) lines.push(`${encodeRecord(record)}\n`);
  await ledger.close();
  return Buffer.from(lines.join(''));
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    return isLedgerError(e) ? e.code : String(e);
  }
}

test('a generated 35k-record ledger copies to LevelDB and back, and exports byte for byte', async () => {
  await withHome(async (home) => {
    // three whole batches of the copy (10,000 records each) and a part of one
    await writeJsonlWhole(home.path, syntheticLines({ records: 35_000, seed: 3 }));
    const original = readFileSync(home.path);
    const level = `level:${join(home.dir, 'level')}`;
    const progress: number[] = [];
    const copied = await copyLedger(backendFor(home.path), backendFor(level), {
      onProgress: (phase, n) => phase === 'copying' && progress.push(n),
    });
    assert.is(copied.records, 35_000);
    assert.is(progress[progress.length - 1], 35_000);
    assert.equal(await exported(backendFor(level)), original, 'export of the LevelDB copy is the source file');
    const back = join(home.dir, 'back.jsonl');
    await copyLedger(backendFor(level), backendFor(back));
    assert.equal(readFileSync(back), original, 'copied back to JSONL, byte for byte');
    const cli = spawnSync(process.execPath, [CLI, 'export', level], { maxBuffer: 64 << 20 });
    assert.is(cli.status, 0, cli.stderr.toString());
    assert.equal(cli.stdout, original, 'ledgerstore export of the copy');
  });
});

test('turns only a bigint holds copy JSONL -> LevelDB -> memory -> JSONL and export, byte for byte', async () => {
  await withHome(async (home) => {
    const line = (type: string, n: string, rest: string): string =>
      `{"type":"${type}","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"big","turn":${n}},${rest}}\n`;
    const turnTo = '"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}';
    const original = Buffer.from(
      [
        line('decided', '18446744073709551615', turnTo),
        line('decided', '9007199254740993', turnTo),
        line('decided', '9007199254740992', turnTo),
        line('sent', '18446744073709551615', '"ids":["h-1"]'),
        line('failed', '9007199254740992', '"status":503,"kind":"unavailable"'),
      ].join(''),
    );
    writeFileSync(home.path, original);
    const level = `level:${join(home.dir, 'level')}`;
    await copyLedger(backendFor(home.path), backendFor(level));
    assert.equal(await exported(backendFor(level)), original, 'export of the LevelDB copy is the source file');
    const memory = memoryBackend<Record>({ codec: honchoCodec });
    await copyLedger(backendFor(level), memory);
    const back = join(home.dir, 'back.jsonl');
    await copyLedger(memory, backendFor(back));
    assert.equal(readFileSync(back), original, 'copied back to JSONL, byte for byte');
    const cli = spawnSync(process.execPath, [CLI, 'export', level]);
    assert.is(cli.status, 0, cli.stderr.toString());
    assert.equal(cli.stdout, original, 'ledgerstore export of the copy');
  });
});

test('a copy into memory reads back as its source', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: 3000, seed: 4 }));
    const memory = memoryBackend({ codec: honchoCodec });
    const copied = await copyLedger(backendFor(home.path), memory);
    const source = await Ledger.open(home.path, { readOnly: true });
    assert.equal(copied.counts, await source.counts());
    await source.close();
    assert.equal(await exported(memory), readFileSync(home.path));
  });
});

test('a copy refuses a target that holds records, and writes nothing to it', async () => {
  await withHome(async (home) => {
    const target = join(home.dir, 'target.jsonl');
    writeFileSync(home.path, `${encodeRecord(decided(turn('a', 1)))}\n`);
    writeFileSync(target, `${encodeRecord(decided(turn('b', 1)))}\n`);
    const before = readFileSync(target);
    assert.is(await code(copyLedger(backendFor(home.path), backendFor(target))), 'LEDGER_NOT_EMPTY');
    assert.equal(readFileSync(target), before);
  });
});

test('a damaged source stops the copy before the target is touched', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, `${encodeRecord(sent(turn('a', 1)))}\n`);
    const target = memoryBackend({ codec: honchoCodec });
    assert.is(await code(copyLedger(backendFor(home.path), target)), 'LEDGER_DAMAGED');
    const opened = await target.open({ readOnly: true });
    assert.is(opened.head, 0);
    await opened.close();
  });
});

test('a copy that does not read back as its source is reported', async () => {
  await withHome(async (home) => {
    writeFileSync(
      home.path,
      [decided(turn('a', 1)), decided(turn('a', 2))].map((r) => `${encodeRecord(r)}\n`).join(''),
    );
    const inner = jsonlBackend(join(home.dir, 'lossy.jsonl'), { codec: honchoCodec });
    // a backend that loses the last record of every batch it is given, and says it kept it
    const lossy: LogBackend<Record> = {
      ...inner,
      open: async (options) => {
        const log = await inner.open(options);
        return {
          name: log.name,
          capabilities: log.capabilities,
          repaired: log.repaired,
          get head() {
            return log.head;
          },
          append: async (records: readonly Record[]) => {
            const from = log.head;
            await log.append(records.slice(0, -1));
            return { from, head: from + records.length };
          },
          read: (from?: number) => log.read(from),
          refresh: () => log.refresh(),
          lease: (name: string) => log.lease(name),
          resumePoint: () => log.resumePoint(),
          close: () => log.close(),
          [Symbol.asyncDispose]: () => log.close(),
        };
      },
    };
    assert.is(await code(copyLedger(backendFor(home.path), lossy)), 'LEDGER_COPY_MISMATCH');
  });
});

test('a copy whose records read back changed, in number and counts the same, is refused, naming where', async () => {
  await withHome(async (home) => {
    await fillLedger(backendFor(home.path), workload({ records: 25_000, seed: 4 }));
    const inner = memoryBackend({ codec: honchoCodec });
    // a backend that gives back one record changed: a skip's reason, which no count or rule sees
    let changed = false;
    const altering: LogBackend<Record> = {
      ...inner,
      open: async (options) => {
        const log = await inner.open(options);
        return {
          name: log.name,
          capabilities: log.capabilities,
          repaired: log.repaired,
          get head() {
            return log.head;
          },
          append: (records: readonly Record[], appendOptions) => log.append(records, appendOptions),
          read: async function* (from?: number) {
            let n = from ?? 0;
            for await (const record of log.read(from)) {
              if (n++ > 12_000 && !changed && record.type === 'decided' && record.action.type === 'skip') {
                changed = true;
                yield { ...record, action: { ...record.action, why: `${record.action.why}!` } };
              } else yield record;
            }
          },
          refresh: () => log.refresh(),
          lease: (name: string) => log.lease(name),
          resumePoint: () => log.resumePoint(),
          close: () => log.close(),
          [Symbol.asyncDispose]: () => log.close(),
        };
      },
    };
    const e = await failure(copyLedger(backendFor(home.path), altering));
    assert.ok(changed, 'a record was changed on its way back');
    assert.ok(isLedgerError(e, 'LEDGER_COPY_MISMATCH'), String(e));
    assert.match(
      (e as Error).message,
      /: the copy does not read back as its source: a record among 10001 to 20000 differs from the source's; remove the target before copying again$/,
    );
  });
});

test("a copy stops at its next batch when its signal is aborted, with the signal's reason", async () => {
  const source = memoryBackend({ codec: honchoCodec });
  await fillLedger(source, workload({ records: 45_000, seed: 6 }));
  const stop = new AbortController();
  const reason = new Error('stopped');
  const seen: number[] = [];
  const onProgress = (phase: CopyPhase, n: number): void => {
    if (phase !== 'copying') return;
    seen.push(n);
    if (n === 20_000) stop.abort(reason);
  };
  assert.is(
    await failure(copyLedger(source, memoryBackend({ codec: honchoCodec }), { onProgress, signal: stop.signal })),
    reason,
  );
  assert.equal(seen, [0, 10_000, 20_000]);
});

test.run();
