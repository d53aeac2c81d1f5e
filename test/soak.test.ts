/**
 * The soak (issue 14), short: memoryd's three consumers (`test/support/soak-child.ts`: the turn
 * walk, the mirror of journalled edits, the worker sending the outbox to a fake Honcho that
 * refuses some sends) on a ledger of synthetic records, in real processes killed at random
 * moments and restarted, while, from the third run on, a projection's version bump rebuilds it in
 * the background. `LEDGERSTORE_TORTURE` runs more kills.
 *
 * Checked: each run compares every answer with a replay in memory at the same position (a
 * mismatch fails it); an undo is sent with an id Honcho gave for that fact; no item is decided
 * twice; Honcho never receives an item again once its outcome was acknowledged; the outbox drains.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord, itemKey, Ledger } from '../lib/index.js';
import { Random } from '../lib/random.js';
import { collect, withHome } from './support/ledger.js';
import { scaled } from './support/scale.js';
import { CRASH_SEED } from './support/seed.js';
import { turnsPerSession } from './support/turns-projection.js';

const CHILD = fileURLToPath(new URL('./support/soak-child.js', import.meta.url));

/** Runs the consumers once: killed after `killAfter` ms, or to the end. Gives what it said and how it ended. */
function run(
  args: readonly string[],
  killAfter: number | null,
): Promise<{ out: string; code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (data: Buffer) => {
      out += data.toString();
    });
    const timer = killAfter === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfter);
    child.once('exit', (code, signal) => {
      if (timer !== null) clearTimeout(timer);
      resolve({ out, code, signal });
    });
  });
}

test('memoryd consumes while the read model is built and rebuilt, killed and restarted: every answer a replay gives', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const journal = join(home.dir, 'honcho-journal');
    writeFileSync(
      home.path,
      [...workload({ records: 20_000, seed: CRASH_SEED })].map((r) => `${encodeRecord(r)}\n`).join(''),
    );
    // the read model built first, as memoryd's would be: the kills then cut the rebuild of the
    // turns projection's version 2 (from the third run on), not the first build
    await (await Ledger.open(home.path, { index, projections: [turnsPerSession], waitForIndex: true })).close();
    const rng = new Random(CRASH_SEED * 7 + 14);
    const kills = scaled(5);
    for (let n = 0; n <= kills; n++) {
      const version = n < 2 ? '1' : '2';
      const { out, code, signal } = await run(
        [home.path, index, version, journal],
        n < kills ? 300 + rng.below(2500) : null,
      );
      const context = `run ${n} (turns version ${version}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
      assert.not.match(out, /mismatch/, `${context}: ${out}`);
      if (n === kills) assert.equal([code, out.trim().split('\n').at(-1)], [0, 'done'], `${context}: ${out}`);
      else assert.ok(signal === 'SIGKILL' || code === 0, `${context}: ended with ${String(code ?? signal)}: ${out}`);
    }
    const ledger = await Ledger.open(home.path, { index, onNotice: () => undefined });
    try {
      assert.equal(await ledger.outbox(), [], 'the outbox drained');
      const decided = new Map<string, number>();
      for (const record of await collect(ledger.records()))
        if (record.type === 'decided') decided.set(itemKey(record.item), (decided.get(itemKey(record.item)) ?? 0) + 1);
      assert.equal(
        [...decided].filter(([, times]) => times > 1),
        [],
        'no item decided twice',
      );
    } finally {
      await ledger.close();
    }
    const acked = new Set<string>();
    const given = new Map<string, string>();
    for (const line of readFileSync(journal, 'utf8')
      .split('\n')
      .filter((l) => l !== '')) {
      const [verb, rest] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
      if (verb === 'received')
        assert.not.ok(acked.has(rest), `Honcho received ${rest} after its outcome was acknowledged`);
      if (verb === 'acked') acked.add(rest);
      if (verb === 'gave') given.set(rest.slice(0, rest.indexOf(' ')), rest.slice(rest.indexOf(' ') + 1));
      if (verb === 'delete') {
        const [id, text] = [rest.slice(0, rest.indexOf(' ')), rest.slice(rest.indexOf(' ') + 1)];
        if (id !== '-') assert.is(given.get(id), text, `an undo of ${text} deletes ${id}`);
      }
    }
    assert.ok(acked.size > 0, 'Honcho was sent items');
  });
});

test.run();
