/**
 * A projection of one's own beside the Honcho ledger's: how many turns were decided per session,
 * kept in the read model without touching the engine. The projection says how a batch of records
 * changes its rows and how its queries read them; the engine gives it the rest: its rows beside
 * the ledger's own with a checkpoint in the same batch, the catch-up at open with what was
 * appended without it, and a rebuild from the log when its version changes.
 *
 * It imports the package by name, as another project would: `make test` type-checks and runs it
 * against the packed package (test/examples.test.ts). It writes into a temporary folder and
 * removes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger, type ProjectionDefinition, type Record } from 'ledgerstore';

/** What the projection answers. */
interface TurnQueries {
  /** How many turns of `session` were decided. */
  turnsOf(session: string): Promise<number>;
}

/** Version 1 counts every decided turn; version 2 leaves out the skipped ones. */
function turnsPerSession(version: 1 | 2): ProjectionDefinition<Record, TurnQueries> {
  return {
    name: 'turns',
    version,
    apply(records, rows) {
      for (const record of records) {
        if (record.type !== 'decided' || record.item.type !== 'turn') continue;
        if (version === 2 && record.action.type === 'skip') continue;
        const key = `s${record.item.session}`;
        rows.put(key, (rows.get<number>(key) ?? 0) + 1);
      }
    },
    queries: (rows) => ({
      turnsOf: async (session) => (await rows.get<number>(`s${session}`)) ?? 0,
    }),
  };
}

const time = '2026-09-28T10:00:00.000Z';
const turn = (session: string, n: number, skipped = false): Record => ({
  type: 'decided',
  time,
  item: { type: 'turn', session, turn: n },
  action: skipped ? { type: 'skip', why: 'small talk' } : { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
});

const dir = mkdtempSync(join(tmpdir(), 'turns-per-session-'));
try {
  const path = join(dir, 'honcho.jsonl');
  const index = join(dir, 'index');
  const said = (m: string): void => console.log(`notice: ${m.replaceAll(dir, '<dir>')}`);

  // the first open builds the read model, the user's projection with the ledger's own
  const v1 = turnsPerSession(1);
  let ledger = await Ledger.open(path, { index, projections: [v1], onNotice: said });
  for (const record of [turn('chat-1', 1), turn('chat-1', 2, true), turn('chat-2', 1)]) await ledger.append(record);
  console.log(`chat-1: ${await ledger.projection(v1).turnsOf('chat-1')} turns decided`);
  await ledger.close();

  // another writer, without the read model: the next open catches the projection up
  ledger = await Ledger.open(path);
  await ledger.append(turn('chat-1', 3));
  await ledger.close();
  ledger = await Ledger.open(path, { index, projections: [v1], onNotice: said });
  console.log(`chat-1: ${await ledger.projection(v1).turnsOf('chat-1')} turns decided, after the catch-up`);
  await ledger.close();

  // a new version of the projection: rebuilt from the log, alone; the ledger's own rows are kept
  const v2 = turnsPerSession(2);
  ledger = await Ledger.open(path, { index, projections: [v2], onNotice: said });
  console.log(`chat-1: ${await ledger.projection(v2).turnsOf('chat-1')} turns decided, not skipped`);
  console.log(
    ledger
      .projections()
      .map((p) => `${p.name} ${p.version} ${p.state}`)
      .join(', '),
  );
  await ledger.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
