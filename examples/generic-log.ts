/**
 * The generic event log, with records of one's own: a small stock-keeping log (goods received,
 * goods shipped), its `RecordCodec`, and the same program on two backends, a JSONL file and a
 * LevelDB folder. It appends, reads, reopens (rebuilding its state from the records), and shows
 * what the log refuses: a record its codec refuses, and a second writer.
 *
 * It imports the package by name, as another project would: `make test` type-checks and runs it
 * against the packed package (test/examples.test.ts); from a checkout, after `make build`,
 * `node dist/examples/generic-log.js`. It writes into a temporary folder and removes it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecodeError, InvalidRecordError, isLedgerError, type LogBackend, type RecordCodec } from 'ledgerstore';
import { jsonlBackend } from 'ledgerstore/backends/jsonl';
import { levelBackend } from 'ledgerstore/backends/level';

/** What happened to the stock: one record each. */
type StockEvent =
  | { readonly type: 'received'; readonly sku: string; readonly quantity: number }
  | { readonly type: 'shipped'; readonly sku: string; readonly quantity: number; readonly order: string };

const SKU = /^[A-Z0-9-]{1,32}$/;

function refuse(why: string): never {
  throw new InvalidRecordError(why);
}

/**
 * How stock events become lines and back. `normalize` is the one check, and all three run it:
 * a backend may take a caller's record through `normalize` (memory, LevelDB) or straight to
 * `encode` (a JSONL file), so `encode` must refuse what `normalize` refuses, and `decode` ends in
 * it, so that a line edited into something invalid is refused on reading as it would be on
 * writing. It builds a fresh object in a fixed key order, so that a caller who changes its value
 * later does not change the log; `JSON.stringify` writes no newline raw: one record, one line.
 */
const stockCodec: RecordCodec<StockEvent> = {
  normalize(value: unknown): StockEvent {
    if (typeof value !== 'object' || value === null) refuse('a stock event is an object');
    const { type, sku, quantity, order } = value as { [field: string]: unknown };
    if (typeof sku !== 'string' || !SKU.test(sku)) refuse(`sku ${JSON.stringify(sku)} is not 1 to 32 of A-Z 0-9 -`);
    if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity <= 0)
      refuse(`quantity ${JSON.stringify(quantity)} is not a whole number above 0`);
    if (type === 'received') return { type, sku, quantity };
    if (type !== 'shipped') refuse(`type ${JSON.stringify(type)} is neither "received" nor "shipped"`);
    if (typeof order !== 'string' || order === '') refuse(`order ${JSON.stringify(order)} is not an order number`);
    return { type, sku, quantity, order };
  },
  encode: (event: StockEvent): string => JSON.stringify(stockCodec.normalize(event)),
  decode(bytes: Uint8Array, start: number, end: number): StockEvent {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, end)));
    } catch (e) {
      throw new DecodeError(e instanceof Error ? e.message : String(e));
    }
    return stockCodec.normalize(value);
  },
};

/** Appends, reads and reopens one log; `label` names it in the output. */
async function keepStock(label: string, backend: LogBackend<StockEvent>): Promise<void> {
  const log = await backend.open();
  // A batch is durable when its promise resolves, and whole or not at all.
  await log.append([
    { type: 'received', sku: 'MUG-1', quantity: 12 },
    { type: 'received', sku: 'TEE-2', quantity: 5 },
  ]);
  await log.append([{ type: 'shipped', sku: 'MUG-1', quantity: 2, order: 'A-1001' }]);

  // One record the codec refuses refuses its whole batch: nothing of it is written.
  try {
    await log.append([
      { type: 'shipped', sku: 'TEE-2', quantity: 1, order: 'A-1002' },
      { type: 'shipped', sku: 'mug 1', quantity: 1, order: 'A-1002' },
    ]);
  } catch (e) {
    if (!isLedgerError(e, 'LEDGER_INVALID_RECORD')) throw e;
    console.log(`${label}: refused, nothing written: ${e.message}`);
  }

  // One writer at a time: a second writable open is refused while the first holds the log.
  await backend.open().then(
    (second) => second.close(),
    (e: unknown) => {
      if (!isLedgerError(e, 'LEDGER_LOCKED')) throw e;
      console.log(`${label}: a second writer is refused (${e.code})`);
    },
  );

  for await (const event of log.read(1)) console.log(`${label}: read from position 1: ${JSON.stringify(event)}`);
  await log.close();

  // Reopening reads every record through `replay`: the program's state is rebuilt from the log.
  const stock = new Map<string, number>();
  const again = await backend.open({
    replay: (event) => {
      const have = stock.get(event.sku) ?? 0;
      stock.set(event.sku, event.type === 'received' ? have + event.quantity : have - event.quantity);
    },
  });
  console.log(
    `${label}: reopened, ${again.head} records; in stock: ${[...stock].map(([sku, n]) => `${n} ${sku}`).join(', ')}`,
  );
  await again.append([{ type: 'received', sku: 'TEE-2', quantity: 10 }]);
  console.log(`${label}: appended after the reopen; now ${again.head} records`);
  await again.close();
}

const folder = mkdtempSync(join(tmpdir(), 'stock-'));
try {
  await keepStock('jsonl', jsonlBackend(join(folder, 'stock.jsonl'), { codec: stockCodec }));
  await keepStock('level', levelBackend(join(folder, 'stock.level'), { codec: stockCodec }));
  console.log(`the JSONL file:\n${readFileSync(join(folder, 'stock.jsonl'), 'utf8').trimEnd()}`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
