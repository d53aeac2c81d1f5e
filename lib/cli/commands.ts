/**
 * The command table, and the usage and help texts made from it.
 *
 * @module
 */
import type { Command } from './context.js';
import { APPEND } from './commands/append.js';
import { CHECK } from './commands/check.js';
import { GEN } from './commands/gen.js';
import { COPY, EXPORT } from './commands/move.js';
import { CONCLUSION, COUNTS, OUTBOX, SENT_IDS } from './commands/query.js';
import { INDEX } from './commands/read-model.js';
import { VERIFY } from './commands/verify.js';

/** Every command, by name, in the order the help lists them. */
export const COMMANDS = {
  verify: VERIFY,
  counts: COUNTS,
  outbox: OUTBOX,
  'sent-ids': SENT_IDS,
  conclusion: CONCLUSION,
  append: APPEND,
  check: CHECK,
  copy: COPY,
  export: EXPORT,
  index: INDEX,
  gen: GEN,
} satisfies { readonly [name: string]: Command };

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** `ledgerstore <name> <synopsis>`. */
export function synopsisOf(name: CommandName): string {
  const synopsis = COMMANDS[name].synopsis;
  return `ledgerstore ${name}${synopsis === '' ? '' : ` ${synopsis}`}`;
}

const NAMES = Object.keys(COMMANDS) as CommandName[];

/** The short usage, for a command line without a known command. */
export function usage(): string {
  return ['usage:', ...NAMES.map((name) => `  ${synopsisOf(name)}`), '  ledgerstore --help', ''].join('\n');
}

/** `--help`: every command and what it does. */
export function help(): string {
  return [
    "usage: ledgerstore <command> [arguments]: look into a Honcho ledger (memoryd's honcho.jsonl),",
    'append record lines to it, check record lines, write a synthetic one.',
    '',
    ...NAMES.flatMap((name) => [`  ${synopsisOf(name)}`, `      ${COMMANDS[name].summary}`]),
    '',
    "A <ledger> is a path to a JSONL file (memoryd's), jsonl:<path>, level:<folder> (LevelDB)",
    'or memory:. Only append, copy (its target) and gen write; the others never change a ledger.',
    'With --index <folder>, a ledger keeps its state in a LevelDB read model there (created if',
    'missing): an open reads only what was appended since, and the queries answer from it.',
    'Flags may come before or after the arguments; -- ends the flags.',
    'Exit status: 0 ok; 1 the ledger refused a record, or is damaged or unreadable; 2 usage.',
  ].join('\n');
}
