/**
 * Damage of every kind to every file of a `level:` ledger's folder and of a read model's folder
 * (issue 10): each file deleted; cut to nothing, to half, by its last byte; a byte changed at
 * its start, middle and end and at `scaled(2)` places more, at random. Each on a fresh copy of a
 * folder that a workload left with tables, a manifest and a write-ahead log (and, for a ledger,
 * its writer's close in the marker file). The promise after each:
 *
 * - a ledger's folder: a read-only open and a writable one agree, and either hold exactly the
 *   acknowledged records (the damage was to a file that holds none: `LOG`, `LOCK`), with the log
 *   going on (an append, then a reopen that finds it), or refuse the folder as damage
 *   (`LEDGER_DAMAGED`) naming it and the runbook's entry, left byte for byte as it was;
 * - a read model's folder: opened with it, the ledger answers as a fresh replay does and refuses
 *   every rule-breaking record offered (caught up, or rebuilt with a notice;
 *   `test/support/index-promises.ts`), or refuses a folder it cannot tell for a read model's
 *   (its marker damaged), left as it was.
 *
 * The figures: per file and kind of damage, how many were refused, and how many opened whole.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import { encodeRecord, isLedgerError, Ledger, type Record } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { recordsOf } from '../support/guarantees.js';
import { checkIndexPromise, replayDigests, ruleBreakers } from '../support/index-promises.js';
import { filesOf } from '../support/level-db.js';
import { reportFigures } from '../support/level-figures.js';
import { scaled } from '../support/scale.js';
import { CRASH_SEED } from '../support/seed.js';

/** A kind of damage, done to one file of a folder. */
interface Damage {
  readonly name: string;
  readonly apply: (file: string) => void;
}

/** Every damage of the harness for a file of `size` bytes. */
function damagesOf(size: number, rng: Random): Damage[] {
  const damages: Damage[] = [{ name: 'deleted', apply: (file) => rmSync(file) }];
  if (size === 0) return damages;
  const cut = (name: string, to: number): Damage => ({ name, apply: (file) => truncateSync(file, to) });
  damages.push(cut('cut to nothing', 0));
  if (size > 1) damages.push(cut('cut to half', Math.floor(size / 2)), cut('cut by its last byte', size - 1));
  const change = (name: string, at: number): Damage => ({
    name,
    apply: (file) => {
      const bytes = readFileSync(file);
      bytes[at] = ((bytes[at] as number) ^ (1 + rng.below(255))) & 0xff;
      writeFileSync(file, bytes);
    },
  });
  damages.push(
    change('a byte changed at its start', 0),
    change('a byte changed in its middle', Math.floor(size / 2)),
    change('a byte changed at its end', size - 1),
  );
  for (let k = 0; k < scaled(2); k++) damages.push(change('a byte changed at random', rng.below(size)));
  return damages;
}

/** What a file of a LevelDB folder is, for the figures. */
function kindOf(name: string): string {
  if (/^\d+\.(ldb|sst)$/.test(name)) return 'table';
  if (/^\d+\.log$/.test(name)) return 'write-ahead log';
  if (name.startsWith('MANIFEST-')) return 'manifest';
  if (name === 'LEDGERSTORE') return 'marker';
  return name;
}

/** Counts of outcomes per file kind: `kind: outcome n, ...`. */
class Tally {
  private readonly counts = new Map<string, Map<string, number>>();
  add(kind: string, outcome: string): void {
    const of = this.counts.get(kind) ?? new Map<string, number>();
    of.set(outcome, (of.get(outcome) ?? 0) + 1);
    this.counts.set(kind, of);
  }
  get trials(): number {
    return [...this.counts.values()].reduce((all, of) => all + [...of.values()].reduce((a, b) => a + b, 0), 0);
  }
  toString(): string {
    return [...this.counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, of]) => `${kind} ${[...of].map(([outcome, n]) => `${n} ${outcome}`).join(', ')}`)
      .join('; ');
  }
}

/** A ledger's folder as a workload leaves it: two tables (from two opens' logs), then 30 batches in the write-ahead log. */
async function ledgerFolder(folder: string, records: readonly Record[]): Promise<void> {
  const sessions = [records.slice(0, 1500), records.slice(1500, 3000), records.slice(3000)];
  for (const [s, session] of sessions.entries()) {
    const ledger = await Ledger.open(`level:${folder}`);
    const size = s < 2 ? 500 : 10;
    for (let from = 0; from < session.length; from += size)
      await Promise.all(session.slice(from, from + size).map((record) => ledger.append(record)));
    await ledger.close();
  }
}

test(`every kind of damage to every file of a level: folder is refused with the folder left as it was, or opens whole`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-damage-'));
  const rng = new Random(CRASH_SEED * 17 + 3);
  const tally = new Tally();
  try {
    const records = [...workload({ records: 3301, seed: CRASH_SEED })];
    const acknowledged = records.slice(0, 3300);
    const base = join(home, 'base.level');
    await ledgerFolder(base, acknowledged);
    const names = readdirSync(base).sort();
    assert.ok(
      names.some((name) => name.endsWith('.ldb')) && names.some((name) => name.endsWith('.log')),
      `tables and a write-ahead log: ${names.join(', ')}`,
    );
    let trial = 0;
    for (const name of names) {
      for (const damage of damagesOf(statSync(join(base, name)).size, rng)) {
        const folder = join(home, `trial-${trial++}`);
        cpSync(base, folder, { recursive: true });
        damage.apply(join(folder, name));
        const context = `damage harness (${name}, ${damage.name}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
        const before = filesOf(folder);
        const outcomes: string[] = [];
        for (const readOnly of [true, false]) {
          let ledger: Ledger;
          try {
            ledger = await Ledger.open(`level:${folder}`, { readOnly });
          } catch (e) {
            assert.ok(isLedgerError(e, 'LEDGER_DAMAGED'), `${context}: refused otherwise than as damage: ${String(e)}`);
            assert.ok(
              (e as Error).message.startsWith(folder),
              `${context}: the refusal does not name the folder: ${(e as Error).message}`,
            );
            assert.match(
              (e as Error).message,
              /see docs\/runbook\.md#(level-folder-damaged|honcho-ledger-damaged)/,
              `${context}: the refusal names no runbook entry`,
            );
            assert.equal(filesOf(folder), before, `${context}: refused, and the folder was changed`);
            outcomes.push('refused');
            continue;
          }
          try {
            const found = await recordsOf(ledger);
            assert.is(
              found.length,
              acknowledged.length,
              `${context}: opened with ${found.length} records, not the ${acknowledged.length} acknowledged`,
            );
            found.forEach((record, n) =>
              assert.is(encodeRecord(record), encodeRecord(acknowledged[n] as Record), `${context}: record ${n + 1}`),
            );
            if (!readOnly) await ledger.append(records[3300] as Record);
          } finally {
            await ledger.close();
          }
          outcomes.push('opened whole');
        }
        assert.is(outcomes[0], outcomes[1], `${context}: a reader ${outcomes[0]} it, a writer ${outcomes[1]} it`);
        if (outcomes[1] === 'opened whole') {
          const again = await Ledger.open(`level:${folder}`, { readOnly: true });
          assert.is(again.size, 3301, `${context}: the append after the damage`);
          await again.close();
        }
        tally.add(kindOf(name), outcomes[0] as string);
        rmSync(folder, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures('damage-ledger', `${tally.trials} damaged copies: ${tally}; no failure`);
});

test(`every kind of damage to every file of a read model's folder: rebuilt or caught up, never a rule broken, or refused as it was`, async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-damage-'));
  const rng = new Random(CRASH_SEED * 17 + 4);
  const tally = new Tally();
  try {
    const records = [...workload({ records: 2000, seed: CRASH_SEED })];
    const log = join(home, 'honcho.jsonl');
    const index = join(home, 'index');
    // one open appending one record at a time, whose log the next folds into a table; then 500 more in the write-ahead log
    for (const session of [records.slice(0, 1500), records.slice(1500)]) {
      const ledger = await Ledger.open(log, { index, onNotice: () => undefined });
      for (const record of session) await ledger.append(record);
      await ledger.close();
    }
    const digests = await replayDigests(log);
    const breakers = ruleBreakers(
      await (async () => {
        const reader = await Ledger.open(log, { readOnly: true });
        return recordsOf(reader).finally(() => reader.close());
      })(),
    );
    // the folder's own files, and those of its databases (`db-<n>/`)
    const names = readdirSync(index, { recursive: true, encoding: 'utf8' })
      .filter((name) => statSync(join(index, name)).isFile())
      .sort();
    let trial = 0;
    for (const name of names) {
      for (const damage of damagesOf(statSync(join(index, name)).size, rng)) {
        const dir = join(home, `trial-${trial++}`);
        cpSync(index, join(dir, 'index'), { recursive: true });
        cpSync(log, join(dir, 'honcho.jsonl'));
        damage.apply(join(dir, 'index', name));
        const context = `damage harness, read model (${name}, ${damage.name}; LEDGERSTORE_CRASH_SEED=${CRASH_SEED})`;
        const before = filesOf(join(dir, 'index'));
        const outcome = await checkIndexPromise(
          join(dir, 'honcho.jsonl'),
          join(dir, 'index'),
          breakers,
          digests,
          context,
          true,
        );
        if (outcome === 'refused')
          assert.equal(filesOf(join(dir, 'index')), before, `${context}: refused, and the folder was changed`);
        tally.add(kindOf(basename(name)), outcome);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures('damage-index', `${tally.trials} damaged copies: ${tally}; no failure`);
});

test.run();
