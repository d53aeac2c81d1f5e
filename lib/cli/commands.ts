/**
 * The command table, and the usage and help texts made from it.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { APPEND } from './commands/append.js';
import { CHECK } from './commands/check.js';
import { DROP } from './commands/drop.js';
import { FOLLOW } from './commands/follow.js';
import { GEN } from './commands/gen.js';
import { COPY, EXPORT } from './commands/move.js';
import { CONCLUSION, COUNTS, OUTBOX, SENT_IDS } from './commands/query.js';
import { INDEX } from './commands/read-model.js';
import { VERIFY } from './commands/verify.js';
import type { Command } from './context.js';

/** Every command, by name, in the order the help lists them. */
export const COMMANDS = {
  verify: VERIFY,
  counts: COUNTS,
  outbox: OUTBOX,
  'sent-ids': SENT_IDS,
  conclusion: CONCLUSION,
  follow: FOLLOW,
  append: APPEND,
  check: CHECK,
  copy: COPY,
  export: EXPORT,
  index: INDEX,
  gen: GEN,
  drop: DROP,
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

/** What a ledger argument is: every command's help says it. */
const LEDGER_WORDS = [
  "A <ledger> is a path to a JSONL file (memoryd's), jsonl:<path>, level:<folder> (LevelDB),",
  'memory: or a PostgreSQL URI (postgres://user@host/db?log=honcho). Only append, copy (its',
  'target), gen and drop write; the others never change a ledger.',
];
/** What --index does: the help of the commands that take it says it. */
const INDEX_WORDS = [
  'With --index <folder>, a ledger keeps its state in a LevelDB read model there (the folder is',
  'made if missing, not its parents): an open reads only what was appended since, and the',
  'queries answer from it.',
];
/** What --json does of a failure: the help of the commands that take --json says it. */
const JSON_WORDS = [
  'With --json, a failure (exit 1) is also one JSON object on stdout, after what went before:',
  '  {"ledger":"honcho.jsonl","ok":false,"error":{"code":"LEDGER_DAMAGED","message":"..."}}',
];
/** How flags are read, and the exit statuses: every command's help ends with it. */
const ENDING = [
  'Flags may come before or after the arguments; -- ends the flags.',
  'Exit status: 0 ok; 1 the ledger refused a record, or is damaged, unreadable or not there;',
  '2 usage; 130 or 143 stopped by Ctrl-C or SIGTERM.',
];

/** `--help`: every command and what it does. */
export function help(): string {
  return [
    "usage: ledgerstore <command> [arguments]: look into a Honcho ledger (memoryd's honcho.jsonl),",
    'append record lines to it, check record lines, write a synthetic one.',
    '',
    ...NAMES.flatMap((name) => [`  ${synopsisOf(name)}`, `      ${COMMANDS[name].summary}`]),
    '  ledgerstore --version (or -V, or ledgerstore version)',
    '',
    'ledgerstore <command> --help (or ledgerstore help <command>) says more of one command.',
    '--json makes a command write JSON for programs: one JSON value (counts, sent-ids, conclusion,',
    'verify, index status, append, copy, gen) or JSON Lines, one object a line (outbox, check,',
    'follow). A failure (exit 1) is then one JSON object on stdout too, after what went before:',
    '  {"ledger":"honcho.jsonl","ok":false,"error":{"code":"LEDGER_DAMAGED","message":"..."}}',
    '("ledger" when the command names one; "code" is null for a failure that is no ledger',
    'error); a usage error (exit 2) is on stderr only.',
    ...LEDGER_WORDS,
    ...INDEX_WORDS,
    ...ENDING,
  ].join('\n');
}

/** `<command> --help`: the command's usage, its own help, and what every command's help says. */
export function commandHelp(name: CommandName): string {
  const command = COMMANDS[name];
  const flags = command.flags as readonly string[];
  const index = flags.includes('index') ? INDEX_WORDS : [];
  const json = flags.includes('json') ? JSON_WORDS : [];
  return [`usage: ${synopsisOf(name)}`, '', ...command.help, '', ...LEDGER_WORDS, ...index, ...json, ...ENDING].join(
    '\n',
  );
}

/** `ledgerstore <version>`, from the package's own package.json (it ships with every install). */
export function version(): string {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `ledgerstore ${version}`;
}
