/**
 * One writer (issue 5, "Single writer"), for the JSONL file and for LevelDB (`level:<folder>`),
 * between two processes (`test/support/contender.ts`):
 *
 * - Simultaneous opens: both processes are told to open the ledger for writing at the same
 *   moment, round after round. Exactly one wins; the other is refused with LEDGER_LOCKED, and
 *   its answer comes while the winner still holds the ledger (the winner closes only after
 *   that), so the refusal did not wait for the lock: an open that waited would never answer and
 *   the round would hit the hang guard.
 * - A race: both processes open as fast as they can, over and over; each that wins creates a
 *   marker file with O_EXCL, appends a record and removes the marker, so two holders at once
 *   would collide on the marker. No collision, every refusal LEDGER_LOCKED, and the ledger then
 *   holds exactly one record per win.
 * - A holder killed with SIGKILL: the other process's next open succeeds, on its first try.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type FileIO, honchoCodec, isLedgerError, jsonlBackend, Ledger, nodeFileIO } from '../../lib/index.js';
import type { Answer, Command } from '../support/contender.js';
import { decided, edit, Home, skip } from '../support/ledger.js';
import { SCALE, scaled } from '../support/scale.js';

const CONTENDER = fileURLToPath(new URL('../support/contender.js', import.meta.url));
/** How long an answer may take before the run is taken for hung: a hang guard only. */
const HANG_GUARD_MS = 60_000 * SCALE;

/** A contender process and the answers it owes, in order. */
class Contender {
  private readonly child: ChildProcess;
  private readonly waiting: ((answer: Answer) => void)[] = [];
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    target: string,
  ) {
    this.child = fork(CONTENDER, [target], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (answer: Answer) => this.waiting.shift()?.(answer));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  ask(command: Command): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const guard = setTimeout(
        () =>
          reject(
            new Error(
              `${this.name}: no answer to ${command.op} after ${HANG_GUARD_MS} ms: an open that waited for the lock?`,
            ),
          ),
        HANG_GUARD_MS,
      );
      this.waiting.push((answer) => {
        clearTimeout(guard);
        resolve(answer);
      });
      this.child.send(command);
    });
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

function opened(answer: Answer, who: string): void {
  assert.is(answer.op, 'opened', `${who}: ${JSON.stringify(answer)}`);
}

function locked(answer: Answer, who: string, target: string): void {
  assert.is(answer.op, 'refused', `${who}: ${JSON.stringify(answer)}`);
  if (answer.op !== 'refused') return;
  assert.is(answer.code, 'LEDGER_LOCKED', `${who}: ${answer.message}`);
  assert.ok(
    answer.message.includes(target.replace(/^level:/, '')),
    `${who}: the refusal names the ledger: ${answer.message}`,
  );
}

for (const backend of ['JSONL', 'LevelDB'] as const) {
  test(`${backend}: two processes open at once, round after round: exactly one wins, the other is refused at once; a race never has two holders; a killed holder frees it`, async () => {
    const home = new Home();
    const target = backend === 'JSONL' ? home.path : `level:${join(home.dir, 'honcho.level')}`;
    // a ledger with records in it: a missing JSONL file has nothing to lock until its first append
    const setup = await Ledger.open(target);
    for (let n = 0; n < 5; n++) await setup.append(decided(edit('setup', n), skip()));
    await setup.close();
    const a = new Contender('process A', target);
    const b = new Contender('process B', target);
    try {
      const rounds = scaled(50);
      const wins = { A: 0, B: 0 };
      for (let round = 0; round < rounds; round++) {
        const [fromA, fromB] = await Promise.all([a.ask({ op: 'open' }), b.ask({ op: 'open' })]);
        const winner = fromA.op === 'opened' ? 'A' : 'B';
        const [won, lost] = winner === 'A' ? [fromA, fromB] : [fromB, fromA];
        opened(won, `round ${round}, the winner`);
        locked(
          lost,
          `round ${round}, the loser (both opened? ${fromA.op === 'opened' && fromB.op === 'opened'})`,
          target,
        );
        wins[winner]++;
        assert.is((await (winner === 'A' ? a : b).ask({ op: 'close' })).op, 'closed');
      }

      const marker = join(home.dir, 'holder');
      const attempts = scaled(50);
      const [raceA, raceB] = await Promise.all([
        a.ask({ op: 'race', attempts, marker }),
        b.ask({ op: 'race', attempts, marker }),
      ]);
      assert.is(raceA.op, 'raced');
      assert.is(raceB.op, 'raced');
      if (raceA.op !== 'raced' || raceB.op !== 'raced') return;
      assert.equal([...raceA.problems, ...raceB.problems], [], 'no two holders at once, every refusal LEDGER_LOCKED');
      assert.is(raceA.won + raceA.refused, attempts);
      assert.is(raceB.won + raceB.refused, attempts);
      const check = await Ledger.open(target, { readOnly: backend === 'JSONL' });
      assert.is(check.size, 5 + raceA.won + raceB.won, 'one record per win, none lost, none doubled');
      await check.close();

      opened(await a.ask({ op: 'open' }), 'A holds');
      locked(await b.ask({ op: 'open' }), 'B, while A holds', target);
      await a.kill();
      opened(await b.ask({ op: 'open' }), 'B, on its first try after A was killed');
      assert.is((await b.ask({ op: 'close' })).op, 'closed');
      console.log(
        `  single writer, ${backend}: ${rounds} rounds of 2 simultaneous opens (A won ${wins.A}, B ${wins.B}, every loser LEDGER_LOCKED); ` +
          `race of ${2 * attempts} opens: ${raceA.won + raceB.won} won, ${raceA.refused + raceB.refused} refused, no overlap`,
      );
    } finally {
      await Promise.all([a.kill(), b.kill()]);
      home.remove();
    }
  });
}

test('JSONL, a missing file: an empty file made meanwhile (by hand) is taken by the first append; one another writer holds is refused', async () => {
  const home = new Home();
  try {
    const ledger = await Ledger.open(home.path);
    writeFileSync(home.path, ''); // made by hand after the open found it missing
    await ledger.append(decided(edit('adopted', 0), skip()));
    assert.is(readFileSync(home.path, 'utf8').split('\n').length, 2, 'one line, in the file made by hand');
    await ledger.close();

    // the lock refused right after this writer created the file: another process took it in between
    rmSync(home.path);
    const io: FileIO = { ...nodeFileIO, tryLock: () => false };
    const late = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    const e = await late.append(decided(edit('late', 0), skip())).then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(isLedgerError(e, 'LEDGER_LOCKED'), `not LEDGER_LOCKED: ${String(e)}`);
    await late.close();
    assert.is(readFileSync(home.path, 'utf8'), '', 'nothing was written');
  } finally {
    home.remove();
  }
});

test.run();
