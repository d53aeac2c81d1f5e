/**
 * The programs of `examples/` work as another project's would: each is type-checked under this
 * project's strictness against the packed package it imports by name, run in a fresh folder, and
 * its output compared with what it must print. A new example needs its output here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { consumer, ROOT } from './support/packed.js';
import { compile, runProgram, type UserProgram } from './support/user-programs.js';

/** What each example prints, line for line: both are deterministic (no clock or path reaches the output). */
const EXPECTED: { readonly [example: string]: string } = {
  'generic-log': `${['jsonl', 'level']
    .map((log) =>
      [
        `${log}: refused, nothing written: a ledger record could not be encoded: sku "mug 1" is not 1 to 32 of A-Z 0-9 -`,
        `${log}: a second writer is refused (LEDGER_LOCKED)`,
        `${log}: read from position 1: {"type":"received","sku":"TEE-2","quantity":5}`,
        `${log}: read from position 1: {"type":"shipped","sku":"MUG-1","quantity":2,"order":"A-1001"}`,
        `${log}: reopened, 3 records; in stock: 10 MUG-1, 5 TEE-2`,
        `${log}: appended after the reopen; now 4 records`,
      ].join('\n'),
    )
    .join('\n')}
the JSONL file:
{"type":"received","sku":"MUG-1","quantity":12}
{"type":"received","sku":"TEE-2","quantity":5}
{"type":"shipped","sku":"MUG-1","quantity":2,"order":"A-1001"}
{"type":"received","sku":"TEE-2","quantity":10}
`,
  'memoryd-consumer': `run 1: decided 6 new items; the outbox holds 5
run 1: sent turn 1 of session chat-1: msg-1a, msg-1b
run 1: sent turn 3 of session chat-1: msg-2a, msg-2b
run 1: failed turn 4 of session chat-1: Honcho answered 503 (unavailable)
run 1: stops here, as a restart would
run 1: {"decided":6,"sent":2,"waiting":2,"failed":1,"skipped":1}
run 2: decided 0 new items; the outbox holds 2
run 2: sent turn 5 of session chat-1: msg-4a, msg-4b
run 2: sent part 0 of edit 2026-09-28-0001: obj-5
run 2: {"decided":6,"sent":4,"waiting":0,"failed":1,"skipped":1}
run 3: the outbox holds 0; waiting for work
run 3: a new turn finished; decided 1 new item
run 3: failed turn 6 of session chat-1: Honcho answered 503 (unavailable)
run 3: {"decided":7,"sent":4,"waiting":0,"failed":2,"skipped":1}
Honcho received 4 items, each once
the conclusion an undo would delete: obj-5, from part 0 of edit 2026-09-28-0001
`,
  'turns-per-session': `chat-1: 2 turns decided
chat-1: 3 turns decided, after the catch-up
notice: <dir>/index: rebuilding the projection turns from <dir>/honcho.jsonl: it is of version 1, and this ledgerstore reads version 2
chat-1: 2 turns decided, not skipped
items 2 ready, outbox 1 ready, counts 1 ready, stacks 1 ready, turns 2 ready
`,
};

function examples(): UserProgram[] {
  return readdirSync(join(ROOT, 'examples'))
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .map((file) => ({
      name: file.slice(0, -3),
      source: readFileSync(join(ROOT, 'examples', file), 'utf8'),
      origin: { path: `examples/${file}`, line: 1 },
    }));
}

const test = suite('examples');

test('each example type-checks against the packed package, runs in a fresh folder and prints what it must', () => {
  const programs = examples();
  assert.equal(
    programs.map((p) => p.name),
    Object.keys(EXPECTED).sort(),
    'the examples, and the outputs this test expects of them',
  );
  const project = consumer();
  try {
    const complaints = compile(project, programs);
    assert.is(complaints, '', `the examples do not type-check:\n${complaints}`);
    for (const program of programs) {
      const run = runProgram(project, program);
      assert.is(run.failure, null, `${program.origin.path}: ${run.failure}\n${run.stderr}`);
      assert.is(run.stdout, EXPECTED[program.name], program.origin.path);
    }
  } finally {
    project.remove();
  }
});

test.run();
