/**
 * What the synthetic workload's records say (`synthetic.ts`): the peers, assistants, sessions'
 * topics, conclusions and fleet posts, with every class of text a real ledger holds (accents,
 * CJK, emoji, quotes, newlines), and Honcho's opaque ids. Deterministic for a given `Random`.
 *
 * @module
 */
import type { Random } from '../random.js';

export const PEERS = ['kyle', 'sam', 'priya', 'noah', 'amélie', 'jürgen', '李雷', 'zoë', "o'neil", 'mika 🦊'];
export const ASSISTANTS = ['assistant', 'bx', 'memoryd'];
export const DRINKS = [
  'black',
  'with oat milk',
  'with two sugars',
  'as a flat white',
  'au lait, très chaud',
  '加奶不加糖',
  'iced ☕',
];
export const TOPICS = [
  'the ledger',
  'memoryd',
  'Honcho',
  'the "outbox" rewrite',
  'C:\\dev\\bx',
  'tabs vs\tspaces',
  '中文 input methods',
  'résumé parsing',
  'emoji 🎉 reactions',
  'the JSONL format',
  'group commit',
  'the brokerd audit log',
];
export const CITIES = ['Lisbon', 'Zürich', 'São Paulo', '東京', 'Montréal', 'Reykjavík', 'Berlin', 'Nairobi'];
export const FOODS = ['ramen', 'crème brûlée', 'pão de queijo', '饺子', 'tacos 🌮', 'plain rice', 'anything "spicy"'];
export const QUOTES = ['ship it', 'not today', 'that\'s a "feature"', 'ça marche', '没问题', 'LGTM 👍', 'see\nabove'];
export const HOSTS = ['bx-1', 'bx-2', 'gw.lan', 'édge-3', 'build-α'];
export const TURN_SKIPS = [
  'nothing to send',
  'empty turn',
  'tool output only',
  'session is marked "private"',
  'assistant echo',
  'réponse vide',
  '会话已归档',
  'filtered:\tmatched rule \\secrets\\',
];
export const EDIT_SKIPS = [
  'memory edit is local only',
  'edit reverted before sending',
  'nothing to conclude',
  'note marked "draft"',
];
export const NETWORK_FAILURES = ['timeout', 'refused', 'reset', 'dns'];

export function conclusionText(random: Random, day: string): string {
  const p = random.pick(PEERS);
  switch (random.below(10)) {
    case 0:
      return `${p} takes their coffee ${random.pick(DRINKS)}.`;
    case 1:
      return `${p} works on ${random.pick(TOPICS)}.`;
    case 2:
      return `${p} lives in ${random.pick(CITIES)}.`;
    case 3:
      return `${p} prefers ${random.pick(TOPICS)} over ${random.pick(TOPICS)}.`;
    case 4:
      return `${p} said "${random.pick(QUOTES)}" about ${random.pick(TOPICS)}.`;
    case 5:
      return `Notes on ${p}:\n- lives in ${random.pick(CITIES)}\n- likes ${random.pick(FOODS)}`;
    case 6:
      return `${p}\tprefers\t${random.pick(DRINKS)}`;
    case 7:
      return `${p}'s checkout is in C:\\Users\\${p}\\src\\${random.pick(HOSTS)}`;
    case 8:
      return `${p} is in ${random.pick(CITIES)} until ${day}.`;
    default:
      return `${p} likes ${random.pick(FOODS)}.`;
  }
}

export function fleetText(random: Random, n: number): string {
  switch (random.below(5)) {
    case 0:
      return `deploy of memoryd v1.${n % 40}.${n % 7} finished on ${random.pick(HOSTS)}`;
    case 1:
      return `${random.pick(HOSTS)}: disk at ${50 + (n % 50)}%`;
    case 2:
      return `build "main" failed:\n  error[E0432]: unresolved import \`memoryd::honcho\``;
    case 3:
      return `${random.pick(PEERS)} joined the fleet 👋`;
    default:
      return `nightly backup #${n} done in ${random.pick(CITIES)}`;
  }
}

export const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

/** An opaque id as Honcho hands them out: a prefix and ten characters of a URL-safe alphabet. */
export function honchoId(random: Random, prefix: string): string {
  let id = prefix;
  for (let word = 0; word < 2; word++) {
    let bits = random.u32();
    for (let c = 0; c < 5; c++, bits >>>= 6) id += ID_ALPHABET[bits & 63] as string;
  }
  return id;
}
