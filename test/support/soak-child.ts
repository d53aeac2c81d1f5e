/**
 * One run of the soak (`soak.ts`): memoryd's three consumers on the ledger at argv[2] with the
 * read model in argv[3] and the turns projection of version argv[4], until the parent kills it or
 * every item is decided and sent (then it says `done` and exits 0).
 *
 * - **The turn walk** (seed 003): every reported session, in order of its id, each undecided turn
 *   from 1 decided (a fifth of them skipped).
 * - **The mirror** (seed 004): each journalled edit's parts decided in order: a `conclude` of a
 *   fact, and for every third edit an undo of it (an `unconclude`) as its last part.
 * - **The worker**: the outbox a page at a time, sent to a fake Honcho that refuses some sends
 *   (`failed`) and gives ids for the others (`sent`). An undo is sent with the id `conclusion`
 *   finds, which Honcho must have given for that fact. Honcho's journal (argv[5]) is a file of
 *   lines it writes before each answer, and `acked` once the outcome is durable in the ledger.
 *
 * After each round it compares the ledger's answers with a replay of the log in memory at the
 * same position (a read-only ledger opened once, caught up before each comparison), says
 * `compared` when they agree, and says `mismatch` and exits 1 when one differs. With argv[6]
 * `every round` each comparison takes in every answer (the whole outbox and every decision);
 * with `bounded`, a round's takes the soak's items, the counts and the outbox's first page, and
 * the whole comparison is made once every item is done.
 *
 * It says `took <idle|rebuilding> <call> <ms>` for each call of the consumers (rebuilding while
 * a projection is being built), and `ready <ms>` when the projections have taken over, counted
 * from before its open.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { type Item, itemKey, Ledger, type Record } from '../../lib/index.js';
import type { SoakCall } from './soak.js';
import { type TurnQueries, turnsPerSession, turnsVersion2 } from './turns-projection.js';

const [path, index, version, journal, checks, page] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const turns = version === '2' ? turnsVersion2 : turnsPerSession;
const pageSize = Number(page);
const time = '2026-09-28T10:00:00.000Z';

const SESSIONS = 6;
const TURNS = 30;
const EDITS = 12;

const fact = (edit: number): string => `fact ${edit}`;
const partsOf = (edit: number): number => (edit % 3 === 2 ? 3 : 2);

/** The fake Honcho: refuses a seventh of the items, and checks that an undo deletes an id it gave for that fact. */
const honcho = {
  given: new Map<string, string>(),
  load(): void {
    if (!existsSync(journal)) return;
    for (const line of readFileSync(journal, 'utf8').split('\n')) {
      const [verb, id, ...text] = line.split(' ');
      if (verb === 'gave') this.given.set(id as string, text.join(' '));
    }
  },
  send(item: Item, action: Record & { type: 'decided' }): { ids: string[] } | { refused: number } {
    const key = itemKey(item);
    appendFileSync(journal, `received ${JSON.stringify(key)}\n`);
    if ([...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 7 === 0) return { refused: 503 };
    const a = action.action;
    const id = `h-${Buffer.from(key).toString('hex').slice(-16)}`;
    if (a.type === 'conclude') {
      appendFileSync(journal, `gave ${id} ${a.text}\n`);
      this.given.set(id, a.text);
    }
    return { ids: [id] };
  },
};

// the replay first: on a large ledger its open is long, and the consumers are to work while the
// ledger's build runs, not after it
const replay = await Ledger.open(path, { readOnly: true });
honcho.load();
const opening = performance.now();
const ledger = await Ledger.open(path, { index, projections: [turns], backgroundFrom: 500, onNotice: () => undefined });
void ledger.whenReady().then(() => process.stdout.write(`ready ${Math.round(performance.now() - opening)}\n`));
process.stdout.write('open\n');

/** Calls the ledger, and says how long it took and whether a projection was being built meanwhile. */
async function timed<T>(call: SoakCall, body: () => Promise<T>): Promise<T> {
  const state = ledger.projections().some((p) => p.state === 'building') ? 'rebuilding' : 'idle';
  const start = performance.now();
  const result = await body();
  process.stdout.write(`took ${state} ${call} ${(performance.now() - start).toFixed(3)}\n`);
  return result;
}

const decided = (item: Item, action: (Record & { type: 'decided' })['action']): Record => ({
  type: 'decided',
  time,
  item,
  action,
});

/** The turn walk: up to `budget` undecided turns of the reported sessions decided. */
async function walkTurns(budget: number): Promise<number> {
  let done = 0;
  for (let s = 0; s < SESSIONS; s++) {
    for (let t = 1; t <= TURNS && done < budget; t++) {
      const item: Item = { type: 'turn', session: `soak-${s}`, turn: t };
      if (await timed('isDecided', () => ledger.isDecided(item))) continue;
      await timed('append', () =>
        ledger.append(
          decided(
            item,
            t % 5 === 0 ? { type: 'skip', why: 'small talk' } : { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
          ),
        ),
      );
      done++;
    }
  }
  return done;
}

/** The mirror: up to `budget` parts of journalled edits decided, in order. */
async function mirrorEdits(budget: number): Promise<number> {
  let done = 0;
  for (let e = 0; e < EDITS; e++) {
    for (let part = 0; part < partsOf(e) && done < budget; part++) {
      const item: Item = { type: 'edit', id: `ed-${e}`, part };
      if (await timed('isDecided', () => ledger.isDecided(item))) continue;
      const undo = part === partsOf(e) - 1 && partsOf(e) === 3;
      await timed('append', () =>
        ledger.append(
          decided(
            item,
            undo
              ? { type: 'unconclude', workspace: 'trusted', text: fact(e) }
              : {
                  type: 'conclude',
                  workspace: 'trusted',
                  peer: 'kyle',
                  session: `soak-${e % SESSIONS}`,
                  text: part === 0 ? fact(e) : `${fact(e)} more`,
                },
          ),
        ),
      );
      done++;
    }
  }
  return done;
}

/** The worker: one page of the outbox (argv[7] items) sent, each outcome recorded. */
async function sendOutbox(): Promise<number> {
  const page = await timed('outboxPage', () => ledger.outboxPage(pageSize));
  for (const { item, action } of page.decisions) {
    const key = itemKey(item);
    // an undo of the soak's own facts (those of the synthetic records were sent by no Honcho of its)
    if (action.type === 'unconclude' && action.text.startsWith('fact ')) {
      const found = await timed('conclusion', () => ledger.conclusion(action.workspace, action.text));
      if (found !== null && honcho.given.get(found.id) !== action.text) {
        process.stdout.write(`mismatch: the undo of ${action.text} would delete ${found.id}\n`);
        process.exit(1);
      }
      appendFileSync(journal, `delete ${found?.id ?? '-'} ${action.text}\n`);
    }
    const outcome = honcho.send(item, { type: 'decided', time, item, action });
    if ('refused' in outcome)
      await timed('append', () =>
        ledger.append({ type: 'failed', time, item, status: outcome.refused, kind: 'unavailable' }),
      );
    else await timed('append', () => ledger.append({ type: 'sent', time, item, ids: outcome.ids }));
    appendFileSync(journal, `acked ${JSON.stringify(key)}\n`);
  }
  return page.decisions.length;
}

/** The answers about the soak's items and the counts; with `whole`, the whole outbox too, else its first page. */
async function answers(of: Ledger, whole: boolean): Promise<unknown> {
  const items: Item[] = [];
  for (let s = 0; s < SESSIONS; s++)
    for (let t = 1; t <= TURNS; t++) items.push({ type: 'turn', session: `soak-${s}`, turn: t });
  for (let e = 0; e < EDITS; e++)
    for (let p = 0; p < partsOf(e); p++) items.push({ type: 'edit', id: `ed-${e}`, part: p });
  return {
    size: of.size,
    counts: await of.counts(),
    outbox: whole ? await of.outbox() : (await of.outboxPage(100)).decisions,
    states: await Promise.all(items.map((i) => of.stateOf(i))),
    sentIds: await Promise.all(items.map((i) => of.sentIds(i))),
    conclusions: await Promise.all(
      Array.from({ length: EDITS }, (_, e) => [fact(e), `${fact(e)} more`])
        .flat()
        .map((t) => of.conclusion('trusted', t)),
    ),
  };
}

/** Whether the two ledgers give the same decisions in the same order (walked side by side: a large ledger's are many). */
async function sameDecisions(a: Ledger, b: Ledger): Promise<boolean> {
  const [left, right] = [a.decisions()[Symbol.asyncIterator](), b.decisions()[Symbol.asyncIterator]()];
  for (;;) {
    const [l, r] = await Promise.all([left.next(), right.next()]);
    if (!isDeepStrictEqual(l, r)) return false;
    if (l.done === true) return true;
  }
}

/** The turns decided per session, from the ledger's own answers. */
async function turnsCounted(of: Ledger): Promise<number[]> {
  const counted: number[] = [];
  for (let s = 0; s < SESSIONS; s++) {
    let n = 0;
    for (let t = 1; t <= TURNS; t++) if (await of.isDecided({ type: 'turn', session: `soak-${s}`, turn: t })) n++;
    counted.push(n);
  }
  return counted;
}

async function check(whole: boolean): Promise<void> {
  await replay.catchUp();
  const [got, want] = [await answers(ledger, whole), await answers(replay, whole)];
  const queries = ledger.projection<TurnQueries>(turns);
  const perSession = await Promise.all(Array.from({ length: SESSIONS }, (_, s) => queries.turnsOf(`soak-${s}`)));
  if (
    !isDeepStrictEqual(got, want) ||
    !isDeepStrictEqual(perSession, await turnsCounted(replay)) ||
    (whole && !(await sameDecisions(ledger, replay)))
  ) {
    process.stdout.write(`mismatch at ${ledger.size}: ${JSON.stringify(ledger.projections())}\n`);
    process.exit(1);
  }
  process.stdout.write(`compared ${ledger.size}\n`);
}

for (;;) {
  const work = (await walkTurns(8)) + (await mirrorEdits(3)) + (await sendOutbox());
  await check(checks === 'every round');
  if (work === 0) break;
  // memoryd waits for the next report between walks: the background build goes on meanwhile
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await ledger.whenReady();
await check(true);
await Promise.all([ledger.close(), replay.close()]);
process.stdout.write('done\n');
