/**
 * The API a TypeScript user expects, at its edges: `await using` (the runtime's own
 * `Symbol.asyncDispose`, nothing defined globally), options of the wrong type refused by
 * `Ledger.open` before anything is opened, a projection the ledger was not opened with, and
 * `isLedgerError` telling an error of another copy of ledgerstore by its code. (Every backend's
 * closed and bad-argument refusals are the conformance suite's: `conformance/ledger-edges.ts`,
 * `conformance/traits/closed.ts`.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BadArgumentError,
  ClosedError,
  countsProjection,
  isLedgerError,
  Ledger,
  type LedgerOptions,
} from '../lib/index.js';
import { decided, turn, withHome } from './support/ledger.js';
import { turnsPerSession } from './support/turns-projection.js';

test("Symbol.asyncDispose is the runtime's own, and a ledger has it", async () => {
  // Node 20 defines it itself (its description is `nodejs.asyncDispose`); ledgerstore defines no global
  assert.is(typeof Symbol.asyncDispose, 'symbol');
  const ledger = await Ledger.open('memory:');
  assert.is(typeof ledger[Symbol.asyncDispose], 'function');
  await ledger[Symbol.asyncDispose]();
  assert.ok(isLedgerError(await ledger.counts().catch((e: unknown) => e), 'LEDGER_CLOSED'));
});

test('await using a JSONL ledger closes it at the end of its scope, its lock given up', async () => {
  await withHome(async (home) => {
    {
      await using ledger = await Ledger.open(home.path);
      await ledger.append(decided(turn('chat-1', 1)));
    }
    await using writer = await Ledger.open(home.path); // the lock is free
    assert.is(writer.size, 1);
  });
});

test('Ledger.open refuses an option of the wrong type, naming it, before anything is opened', async () => {
  await withHome(async (home) => {
    const folder = join(home.dir, 'ledger.level');
    const cases: [unknown, string, RegExp][] = [
      [{ index: 5 }, 'options.index', /options\.index must be a folder .* not 5$/],
      [{ index: '' }, 'options.index', /options\.index must be a folder/],
      [{ readOnly: 'yes' }, 'options.readOnly', /options\.readOnly must be a boolean, not "yes"$/],
      [{ waitForIndex: 1 }, 'options.waitForIndex', /must be a boolean, not 1$/],
      [{ onNotice: 'stderr' }, 'options.onNotice', /must be a function/],
      [{ projections: countsProjection }, 'options.projections', /must be an array/],
      [{ projections: [null] }, 'options.projections', /options\.projections\[0\] must be a projection definition/],
      [{ projections: [{ ...countsProjection, name: 'Counts!' }] }, 'options.projections', /name is 1 to 64/],
      [{ projections: [countsProjection, countsProjection] }, 'options.projections', /two projections are named/],
      [{ worker: 'jsonl' }, 'options.worker', /must be a module and an export/],
      [{ backgroundFrom: -1 }, 'options.backgroundFrom', /a whole number of at least 0, not -1$/],
      [null, 'options', /^Ledger\.open: options must be an object, not null$/],
      ['readOnly', 'options', /options must be an object, not "readOnly"$/],
    ];
    for (const [options, argument, words] of cases) {
      for (const target of [home.path, `level:${folder}`]) {
        const e = await Ledger.open(target, options as LedgerOptions).catch((error: unknown) => error);
        assert.instance(e, BadArgumentError, `${JSON.stringify(options)}: ${String(e)}`);
        assert.ok(isLedgerError(e, 'LEDGER_BAD_ARGUMENT'));
        assert.is((e as BadArgumentError).argument, argument);
        assert.is((e as BadArgumentError).call, 'Ledger.open');
        assert.match((e as Error).message, words);
      }
    }
    assert.not.ok(existsSync(home.path), 'no file was made');
    assert.not.ok(existsSync(folder), 'no folder was made');
    // an option given as undefined is its default
    await using ledger = await Ledger.open(home.path, { readOnly: undefined, index: undefined });
    assert.is(ledger.size, 0);
  });
});

test('projection() and whenReady() refuse a projection the ledger was not opened with', async () => {
  await withHome(async (home) => {
    const elsewhere = { ...turnsPerSession, name: 'elsewhere' };
    {
      await using ledger = await Ledger.open(home.path, { projections: [turnsPerSession] });
      await ledger.append(decided(turn('chat-1', 1)));
      assert.is(await ledger.projection(turnsPerSession).turnsOf('chat-1'), 1);
      assert.throws(
        () => ledger.projection(elsewhere),
        (e: unknown) => isLedgerError(e, 'LEDGER_BAD_ARGUMENT') && /, not "elsewhere"$/.test(e.message),
      );
      const e = await ledger.whenReady('elsewhere').catch((error: unknown) => error);
      assert.ok(isLedgerError(e, 'LEDGER_BAD_ARGUMENT'), String(e));
      await ledger.whenReady(turnsPerSession.name);
    }
    // a read model's own projections are the ledger's too
    await using indexed = await Ledger.open(home.path, {
      index: join(home.dir, 'index'),
      waitForIndex: true,
      onNotice: () => undefined,
    });
    assert.is((await indexed.projection(countsProjection).counts()).decided, 1);
    assert.throws(
      () => indexed.projection(elsewhere),
      (e: unknown) => isLedgerError(e, 'LEDGER_BAD_ARGUMENT'),
    );
  });
});

test("isLedgerError knows an error of another copy of ledgerstore by its code, and nothing else's", async () => {
  // a second instance of the module, as a backend in another package bringing its own copy makes
  const other = (await import(new URL('../lib/errors/state.js?another-copy', import.meta.url).href)) as {
    ClosedError: typeof ClosedError;
  };
  const foreign = new other.ClosedError('elsewhere.jsonl');
  assert.not.ok(foreign instanceof ClosedError, 'another class');
  assert.ok(isLedgerError(foreign));
  assert.ok(isLedgerError(foreign, 'LEDGER_CLOSED'));
  assert.not.ok(isLedgerError(foreign, 'LEDGER_IO'));
  assert.ok(isLedgerError(new ClosedError('here.jsonl'), 'LEDGER_CLOSED'));
  // not a ledger error: a system error, an unknown code, an object that is no Error
  assert.not.ok(isLedgerError(Object.assign(new Error('gone'), { code: 'ENOENT' })));
  assert.not.ok(isLedgerError(Object.assign(new Error('x'), { code: 'LEDGER_NO_SUCH_CODE' })));
  assert.not.ok(isLedgerError({ code: 'LEDGER_CLOSED', message: 'a plain object' }));
  assert.not.ok(isLedgerError(null));
  assert.not.ok(isLedgerError('LEDGER_CLOSED'));
});

test.run();
