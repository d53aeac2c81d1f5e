/**
 * The checks of what a caller hands the Honcho ledger (`ledger.ts`): an item, a workspace, a
 * text, a number, a signal (an open's options: `options.ts`). Each refuses with a {@link BadArgumentError}
 * naming the call and the argument, before anything is read or changed: from JavaScript (or
 * past a cast) a query would otherwise throw whatever a deeper call met (`TypeError: Cannot read
 * properties of null`), or answer as if the question made sense (`isDecided(null)`: `false`).
 *
 * @module
 */
import { BadArgumentError, InvalidRecordError } from '../errors.js';
import { normalizeItem } from './codec.js';
import { type Item, WORKSPACES, type Workspace } from './record.js';

/** `name` must be one of `opened`, the projections a ledger was opened with (its read model's own among them). */
export function projectionArgument(
  call: string,
  argument: string,
  name: unknown,
  opened: readonly { readonly name: string }[],
): void {
  const names = opened.map((projection) => projection.name);
  if (typeof name === 'string' && names.includes(name)) return;
  throw new BadArgumentError(
    call,
    argument,
    `${argument} must be a projection the ledger was opened with (${names.join(', ') || 'none'}), not ${JSON.stringify(name) ?? String(name)}`,
  );
}

/** How a message shows a value it refuses. */
export function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  return typeof value === 'object' ? 'an object' : typeof value === 'function' ? 'a function' : String(value);
}

/**
 * `value` as the item it is, checked as `append` checks a record's (a fresh object; a bigint turn
 * that a number holds becomes the number).
 * @throws {@link BadArgumentError} when it is no item
 */
export function itemArgument(call: string, value: unknown): Item {
  try {
    return normalizeItem(value, 'item');
  } catch (e) {
    if (e instanceof InvalidRecordError) throw new BadArgumentError(call, 'item', e.why);
    throw e;
  }
}

/** @throws {@link BadArgumentError} when `value` is no workspace */
export function workspaceArgument(call: string, value: unknown): Workspace {
  if (WORKSPACES.includes(value as Workspace)) return value as Workspace;
  throw new BadArgumentError(
    call,
    'workspace',
    `workspace must be one of ${WORKSPACES.join(', ')}, not ${shown(value)}`,
  );
}

/** @throws {@link BadArgumentError} when `value` is no string */
export function textArgument(call: string, name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  throw new BadArgumentError(call, name, `${name} must be a string, not ${shown(value)}`);
}

/** @throws {@link BadArgumentError} when `value` is given and is no `AbortSignal` */
export function signalArgument(call: string, value: unknown): void {
  if (value !== undefined && !(value instanceof AbortSignal))
    throw new BadArgumentError(call, 'signal', `signal must be an AbortSignal, not ${shown(value)}`);
}

/** @throws {@link BadArgumentError} when `value` is not a whole number from `least` to `most` */
export function wholeArgument(call: string, name: string, value: unknown, least: number, most: number): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= least && value <= most) return value;
  throw new BadArgumentError(
    call,
    name,
    `${name} must be a whole number from ${least} to ${most}, not ${shown(value)}`,
  );
}
