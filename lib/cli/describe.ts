/**
 * Items, actions, counts and numbers in words, for people (the `--json` forms are the codec's).
 *
 * @module
 */
import type { Action, Counts, Item, Record } from '../honcho/record.js';

/** `1 record`, `2 records`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `1,234,567`: for figures that a person reads, not for output a program parses. */
export function grouped(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A name or id as it is when it reads plainly, else quoted, so that a row stays one line. */
export function word(text: string): string {
  return /^[\p{L}\p{N}._@:+/'-]+$/u.test(text) ? text : JSON.stringify(text);
}

/** `turn 3 of session chat-1`, `part 0 of edit 2026-09-28-0001`: as the errors name items. */
export function describeItem(item: Item): string {
  return item.type === 'turn'
    ? `turn ${item.turn} of session ${item.session}`
    : `part ${item.part} of edit ${word(item.id)}`;
}

export function describeAction(action: Action): string {
  switch (action.type) {
    case 'turn':
      return `turn to ${action.workspace} as ${word(action.speaker)}`;
    case 'conclude':
      return `conclude in ${action.workspace} for ${word(action.peer)} (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'unconclude':
      return `unconclude in ${action.workspace}: ${JSON.stringify(action.text)}`;
    case 'fleet':
      return `fleet message (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'retract':
      return `retract fleet message (session ${action.session}): ${JSON.stringify(action.text)}`;
    case 'skip':
      return `skip: ${JSON.stringify(action.why)}`;
  }
}

/** `decided turn 3 of session chat-1 -> turn to trusted as kyle`, `sent ... (ids: m-1)`, `failed ...: timeout (status 503)`. */
export function describeRecord(record: Record): string {
  const item = describeItem(record.item);
  switch (record.type) {
    case 'decided':
      return `decided ${item} -> ${describeAction(record.action)}`;
    case 'sent':
      return `sent ${item} (ids: ${record.ids.length === 0 ? 'none' : record.ids.map(word).join(', ')})`;
    case 'failed':
      return `failed ${item}: ${word(record.kind)}${record.status === null ? '' : ` (status ${record.status})`}`;
  }
}

/** `(sent 2, waiting 3, failed 1, skipped 1)`: what became of the decided items. */
export function describeOutcomes(c: Counts): string {
  return `(sent ${c.sent}, waiting ${c.waiting}, failed ${c.failed}, skipped ${c.skipped})`;
}

/** The widest an item's column gets: one long edit id should not push every row right. */
export const ITEM_COLUMN = 40;

/**
 * `text` as one word for a POSIX shell: as it is when it holds only characters no shell reads
 * specially, else in single quotes (a quote in it as `'\''`), so that a command line suggested to
 * an operator can be pasted as it is, whatever the paths in it hold.
 */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
