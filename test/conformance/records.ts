/**
 * The records the suite appends: builders (as memoryd's `tests/support/ledger.rs` has them, and
 * the project's tests use too), a small log of them, and the canonical vectors, 400 lines that
 * serde_json itself wrote (`test/fixtures/serde-json/`, shipped with the suite).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Action, decodeRecord, type Item, type Record, type Turn, type Workspace } from '../../lib/index.js';

export const TIME = '2026-09-28T10:00:00.000Z';

export const turn = (session: string, n: Turn): Item => ({ type: 'turn', session, turn: n });
export const edit = (id: string, part: number): Item => ({ type: 'edit', id, part });

export const turnTo = (workspace: Workspace = 'trusted', speaker = 'kyle'): Action => ({
  type: 'turn',
  workspace,
  speaker,
});
export const conclude = (workspace: Workspace, text: string, peer = 'kyle', session = 'chat-1'): Action => ({
  type: 'conclude',
  workspace,
  peer,
  session,
  text,
});
export const unconclude = (workspace: Workspace, text: string): Action => ({ type: 'unconclude', workspace, text });
export const fleet = (text: string, session = 'chat-1'): Action => ({ type: 'fleet', session, text });
export const retract = (text: string, session = 'chat-1'): Action => ({ type: 'retract', session, text });
export const skip = (why = 'nothing to send'): Action => ({ type: 'skip', why });

export const decided = (item: Item, action: Action = turnTo(), time = TIME): Record => ({
  type: 'decided',
  time,
  item,
  action,
});
export const sent = (item: Item, ids: readonly string[] = ['msg-1'], time = TIME): Record => ({
  type: 'sent',
  time,
  item,
  ids,
});
export const failed = (item: Item, status: number | null = null, kind = 'refused', time = TIME): Record => ({
  type: 'failed',
  time,
  item,
  status,
  kind,
});

/** Twenty records that keep the rules, in three sessions, every fourth a `skip`. */
export const RECORDS: readonly Record[] = Array.from({ length: 20 }, (_, n) =>
  decided(turn(`s${n % 3}`, n), n % 4 === 0 ? skip(`why ${n}`) : undefined),
);

/** A record that no codec takes: a time that is not one. */
export const INVALID = { ...(RECORDS[0] as Record), time: 'now' } as Record;

/** The vectors file: beside the suite in the source tree and in the package (the suite runs from `dist/test/conformance`). */
export const VECTORS = fileURLToPath(new URL('../../../test/fixtures/serde-json/canonical.jsonl', import.meta.url));

/** The vectors' bytes: 400 lines, each ending in a newline. */
export function vectorBytes(): Buffer {
  return readFileSync(VECTORS);
}

/** The vectors, as records. */
export function vectorRecords(): Record[] {
  const bytes = vectorBytes();
  const records: Record[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(10, start);
    records.push(decodeRecord(bytes, start, end));
    start = end + 1;
  }
  return records;
}
