/**
 * The registry of a read model (`layout.ts`): which generation of rows answers each projection,
 * which is being built, which was taken over. A change to it is one atomic write (a folder's
 * marker, renamed into place and synced; a caller's database's key, in one batch), so that a
 * takeover happens in one step, and a crash leaves the registry before it or after it.
 *
 * @module
 */
import type { GenerationEntry, Role } from './generation.js';

/** The generations of a read model, and the next number for an id or a database. */
export interface Registry {
  readonly generations: readonly GenerationEntry[];
  readonly next: number;
}

export const EMPTY_REGISTRY: Registry = { generations: [], next: 1 };

const ROLES: readonly Role[] = ['serving', 'building', 'retired'];

/** `value` as a registry, or `null` when it is not one (a marker written by hand, or by another program). */
export function registryFrom(value: unknown): Registry | null {
  const r = value as { generations?: unknown; next?: unknown } | null;
  if (typeof r !== 'object' || r === null || !Array.isArray(r.generations) || !Number.isSafeInteger(r.next))
    return null;
  const generations: GenerationEntry[] = [];
  for (const g of r.generations as unknown[]) {
    const e = g as Partial<Record<keyof GenerationEntry, unknown>> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.id !== 'string' ||
      typeof e.projection !== 'string' ||
      !Number.isSafeInteger(e.version) ||
      !(e.db === null || typeof e.db === 'string') ||
      !ROLES.includes(e.role as Role)
    )
      return null;
    generations.push({
      id: e.id,
      projection: e.projection,
      version: e.version as number,
      db: e.db as string | null,
      role: e.role as Role,
    });
  }
  return { generations, next: r.next as number };
}

/** The generation of `projection` in `role`, if there is one. */
export function generationOf(registry: Registry, projection: string, role: Role): GenerationEntry | undefined {
  return registry.generations.find((g) => g.projection === projection && g.role === role);
}

/** The registry with `added` in it (ids numbered from `next`): gives it and the entries made. */
export function withGenerations(
  registry: Registry,
  added: readonly Omit<GenerationEntry, 'id'>[],
): { registry: Registry; entries: GenerationEntry[] } {
  let next = registry.next;
  const entries = added.map((g) => ({ ...g, id: `${g.projection}.${next++}` }));
  return { registry: { generations: [...registry.generations, ...entries], next }, entries };
}

/** A number for a new database (`db-<n>`), and the registry that has used it. */
export function newDatabase(registry: Registry): { registry: Registry; name: string } {
  return { registry: { ...registry, next: registry.next + 1 }, name: `db-${registry.next}` };
}

/** The registry with the generations `ids` in `role`. */
export function withRole(registry: Registry, ids: readonly string[], role: Role): Registry {
  return { ...registry, generations: registry.generations.map((g) => (ids.includes(g.id) ? { ...g, role } : g)) };
}

/** The registry without the generations `ids`. */
export function without(registry: Registry, ids: readonly string[]): Registry {
  return { ...registry, generations: registry.generations.filter((g) => !ids.includes(g.id)) };
}

/** The databases the registry names. */
export function databasesOf(registry: Registry): string[] {
  return [...new Set(registry.generations.flatMap((g) => (g.db === null ? [] : [g.db])))];
}
