/**
 * Loading what a worker thread needs by itself: a {@link Loadable}'s export, called with its
 * arguments when it is a function.
 *
 * @module
 */
import type { Loadable } from './definition.js';

/** The thing `loadable` names: its module's export, or what that export gives when called with `args`. */
export async function load<T>(loadable: Loadable): Promise<T> {
  const module = (await import(loadable.module)) as { readonly [name: string]: unknown };
  const exported = module[loadable.export];
  if (exported === undefined)
    throw new TypeError(`${loadable.module} has no export ${JSON.stringify(loadable.export)}`);
  return (
    typeof exported === 'function' ? (exported as (...args: unknown[]) => unknown)(...(loadable.args ?? [])) : exported
  ) as T;
}
