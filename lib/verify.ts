/**
 * Comparing what two ledgers answer (`ledgerstore verify --index`): a read model against a
 * fresh replay of the same log. Each side is reduced to digests of its answers, so that the two
 * need not be open at once (a LevelDB log admits one open at a time) nor held side by side.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { encodeAction, encodeItem } from './honcho/codec.js';
import type { HonchoLedger } from './honcho/ledger.js';
import type { Workspace } from './honcho/record.js';

/** A digest (SHA-256, hex) of each kind of answer a ledger gives. */
export interface AnswerDigests {
  readonly size: number;
  readonly counts: string;
  readonly outbox: string;
  readonly decisions: string;
  /** The sent ids of every decided item. */
  readonly sentIds: string;
  /** The conclusion of every (workspace, text) that a `conclude` or `unconclude` names. */
  readonly conclusions: string;
  /** The state of every decided item, as the rules see it when they check an append. */
  readonly states: string;
}

const digest = (): ReturnType<typeof createHash> => createHash('sha256');

/**
 * The digests of everything `ledger` answers.
 * @param onProgress called now and then with how many of the decided items are digested, of how many
 */
export async function answerDigests(
  ledger: HonchoLedger,
  onProgress?: (done: number, total: number) => void,
): Promise<AnswerDigests> {
  const { decided } = await ledger.counts();
  let done = 0;
  const outbox = digest();
  for (const { item, action } of await ledger.outbox()) outbox.update(`${encodeItem(item)}${encodeAction(action)}\n`);
  const decisions = digest();
  const sentIds = digest();
  const states = digest();
  const stacks = new Map<string, [Workspace, string]>();
  for await (const { item, action } of ledger.decisions()) {
    decisions.update(`${encodeItem(item)}${encodeAction(action)}\n`);
    sentIds.update(`${JSON.stringify(await ledger.sentIds(item))}\n`);
    states.update(`${String(await ledger.stateOf(item))}\n`);
    if ((++done & 0xfff) === 0) onProgress?.(done, decided);
    if (action.type === 'conclude' || action.type === 'unconclude')
      stacks.set(`${action.workspace}\n${action.text}`, [action.workspace, action.text]);
  }
  const conclusions = digest();
  for (const key of [...stacks.keys()].sort()) {
    const [workspace, text] = stacks.get(key) as [Workspace, string];
    const found = await ledger.conclusion(workspace, text);
    conclusions.update(`${key}\n${found === null ? 'null' : `${encodeItem(found.item)}${found.id}`}\n`);
  }
  return {
    size: ledger.size,
    counts: digest()
      .update(JSON.stringify(await ledger.counts()))
      .digest('hex'),
    outbox: outbox.digest('hex'),
    decisions: decisions.digest('hex'),
    sentIds: sentIds.digest('hex'),
    conclusions: conclusions.digest('hex'),
    states: states.digest('hex'),
  };
}

/** The answers on which two sets of digests differ; empty when they agree. */
export function differingAnswers(a: AnswerDigests, b: AnswerDigests): (keyof AnswerDigests)[] {
  const names: (keyof AnswerDigests)[] = ['size', 'counts', 'outbox', 'decisions', 'sentIds', 'conclusions', 'states'];
  return names.filter((name) => a[name] !== b[name]);
}

/** What differs between two sets of digests, in words; empty when they agree. */
export function differences(a: AnswerDigests, b: AnswerDigests): string[] {
  return differingAnswers(a, b).map((name) =>
    name === 'size' ? `the number of records (${a.size} and ${b.size})` : `the ${name}`,
  );
}
