/**
 * The questions memoryd asks of its ledger, asked from the command line: `counts`, `outbox`,
 * `sent-ids` and `conclusion`. Each opens the ledger read-only and changes nothing.
 *
 * @module
 */
import { DecodeError } from '../../errors.js';
import { decodeItemText, encodeAction, encodeItem } from '../../honcho/codec.js';
import { type Item, WORKSPACES, type Workspace } from '../../honcho/record.js';
import { printableTarget } from '../../printable.js';
import { UsageError } from '../args.js';
import type { Command, Context } from '../context.js';
import { describeAction, describeItem, ITEM_COLUMN } from '../describe.js';
import { countsJson } from '../json.js';
import { reading } from '../open.js';
import { mapped } from '../output.js';

/** `counts <ledger> [--json]`. */
async function counts(context: Context): Promise<number> {
  const { switches, out } = context;
  return reading(context, async (ledger) => {
    const c = await ledger.counts();
    if (switches.has('json')) {
      out.line(countsJson(c));
    } else {
      const rows = [
        ['decided', c.decided],
        ['sent', c.sent],
        ['waiting', c.waiting],
        ['failed', c.failed],
        ['skipped', c.skipped],
      ] as const;
      const width = Math.max(...rows.map(([, n]) => String(n).length));
      for (const [name, n] of rows) out.line(`${name.padEnd(7)}  ${String(n).padStart(width)}`);
    }
    await out.flush();
    return 0;
  });
}

/** `outbox <ledger> [--json]`: every waiting item and its action, in decision order. */
async function outbox(context: Context): Promise<number> {
  const { switches, out } = context;
  return reading(context, async (ledger) => {
    const waiting = await ledger.outbox();
    if (switches.has('json')) {
      await out.lines(
        mapped(waiting, ({ item, action }) => `{"item":${encodeItem(item)},"action":${encodeAction(action)}}`),
      );
      return 0;
    }
    let width = 0;
    for (const { item } of waiting) width = Math.max(width, describeItem(item).length);
    width = Math.min(width, ITEM_COLUMN);
    await out.lines(
      mapped(waiting, ({ item, action }) => `${describeItem(item).padEnd(width)}  -> ${describeAction(action)}`),
    );
    return 0;
  });
}

/** The item argument, read as serde_json reads an `Item`; bad input is exit 2, with serde's verdict. */
function itemArgument(text: string): Item {
  try {
    return decodeItemText(text);
  } catch (e) {
    if (e instanceof DecodeError)
      throw new UsageError(`the item ${printableTarget(text)}: ${e.message}`, 'sent-ids', false);
    throw e;
  }
}

/** `sent-ids <ledger> <item-as-json> [--json]`: the ids of the item's `sent` record. */
async function sentIds(context: Context): Promise<number> {
  const {
    args: [, itemText = ''],
    switches,
    out,
  } = context;
  const item = itemArgument(itemText);
  return reading(context, async (ledger) => {
    const ids = await ledger.sentIds(item);
    if (switches.has('json')) out.line(ids === null ? 'null' : JSON.stringify(ids));
    else if (ids === null) {
      const state = await ledger.stateOf(item);
      out.line(
        `${describeItem(item)} has no sent record (${state === undefined ? 'it was never decided' : `it is ${state}`})`,
      );
    } else if (ids.length === 0) out.line(`${describeItem(item)} was sent, with no ids`);
    else for (const id of ids) out.line(id);
    await out.flush();
    return 0;
  });
}

/** `conclusion <ledger> <workspace> <text> [--json]`: the conclusion an undo must delete. */
async function conclusion(context: Context): Promise<number> {
  const {
    args: [, workspace = '', text = ''],
    switches,
    out,
  } = context;
  if (!WORKSPACES.includes(workspace as Workspace)) {
    throw new UsageError(
      `the workspace must be one of ${WORKSPACES.join(', ')}, not ${JSON.stringify(printableTarget(workspace))}`,
      'conclusion',
    );
  }
  return reading(context, async (ledger) => {
    const found = await ledger.conclusion(workspace as Workspace, text);
    if (switches.has('json'))
      out.line(found === null ? 'null' : `{"item":${encodeItem(found.item)},"id":${JSON.stringify(found.id)}}`);
    else if (found === null) out.line(`none: no conclusion of ${workspace} with that text is sent and not undone`);
    else out.line(`${found.id}  (${describeItem(found.item)})`);
    await out.flush();
    return 0;
  });
}

export const COUNTS: Command = {
  synopsis: '<ledger> [--json] [--index <folder>]',
  summary: 'how many items are decided, sent, waiting, failed, skipped',
  help: [
    'How many items the ledger has decided, and how many of them are sent, waiting, failed and',
    'skipped, one a line. With --json, one JSON object:',
    '  {"decided":7,"sent":2,"waiting":3,"failed":1,"skipped":1}',
  ],
  args: ['<ledger>'],
  flags: ['json', 'index'],
  run: counts,
};

export const OUTBOX: Command = {
  synopsis: '<ledger> [--json] [--index <folder>]',
  summary: 'every waiting item and its action, in decision order',
  help: [
    'Every item that is decided and waiting to be sent (the outbox), oldest decision first, one',
    'a line: the item and its action in words. With --json, JSON Lines: one JSON object a line,',
    'the item and the action in their canonical form:',
    '  {"item":{"type":"turn","session":"chat-1","turn":5},"action":{"type":"turn",...}}',
    'Nothing at all when the outbox is empty.',
  ],
  args: ['<ledger>'],
  flags: ['json', 'index'],
  run: outbox,
};

export const SENT_IDS: Command = {
  synopsis: '<ledger> <item-as-json> [--json] [--index <folder>]',
  summary: "the ids of the item's sent record",
  help: [
    "The ids Honcho gave the item's sent record, one a line; a sentence when it has no sent record",
    '(waiting, failed, skipped or unknown). The item is JSON, as memoryd writes it:',
    '  \'{"type":"turn","session":"chat-1","turn":3}\' or \'{"type":"edit","id":"2026-09-28-0001","part":0}\'',
    'With --json, one JSON value: the array of ids, or null.',
  ],
  args: ['<ledger>', '<item-as-json>'],
  flags: ['json', 'index'],
  run: sentIds,
};

export const CONCLUSION: Command = {
  synopsis: '<ledger> <workspace> <text> [--json] [--index <folder>]',
  summary: 'the conclusion an undo must delete (workspace: trusted, untrusted or fleet)',
  help: [
    'The conclusion that an unconclude of <text> in <workspace> (trusted, untrusted or fleet) must',
    'delete: the latest sent conclusion with that text that no sent unconclude has undone. Its id',
    'and item, or a sentence when there is none. With --json, one JSON value:',
    '  {"item":{"type":"edit","id":"2026-09-28-0001","part":0},"id":"concl-1"}, or null.',
    'A <text> that starts with - goes after --.',
  ],
  args: ['<ledger>', '<workspace>', '<text>'],
  flags: ['json', 'index'],
  run: conclusion,
};
