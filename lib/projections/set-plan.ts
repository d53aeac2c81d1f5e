/**
 * What an open of a read model decides from the rows it finds, before it reads the log: per
 * projection, the rows to catch up or why and how it is built (`planOpen`), and the small rules
 * that decision and the open's commit share (which rows are usable, which queries older rows
 * still answer, how checkpoints and registries are compared). Pure: no I/O.
 *
 * @module
 */
import type { BackgroundBuild } from './background.js';
import type { Database } from './database.js';
import type { ProjectionDefinition, RowReader } from './definition.js';
import type { Generation } from './generation.js';
import type { Checkpoint } from './layout.js';
import { type Registry, withRole } from './registry.js';

/** One projection and the rows that answer it. */
export interface Slot<R> {
  readonly definition: ProjectionDefinition<R>;
  /** Rows of its version, caught up: they answer every query. */
  serving: Generation<R> | null;
  /** Rows of an older version, kept up to date while its version is built: they answer what they still answer right. */
  previous: Generation<R> | null;
  /** The engine's copy in memory while it is built (when the caller keeps none). */
  copy: Generation<R> | null;
  /** The build in a worker thread, while it runs. */
  build: BackgroundBuild<R> | null;
  /** Why it is built, while it is. */
  why: string | null;
  /** Settles once it is ready (rejects if its build fails or the set closes first). */
  readonly ready: Promise<void>;
  readonly settle: { resolve: () => void; reject: (e: Error) => void };
}

/** How a projection that must be built is built at this open: in the open, tried in the open (kept if the log is short), or in the background. */
export type Mode = 'open' | 'tried' | 'background';

/** What the open does with one projection. */
export interface Plan<R> {
  readonly slot: Slot<R>;
  /** Rows of its version to catch up (serving, or built and not taken over before a crash). */
  readonly current: Generation<R> | null;
  /** Rows of an older version that answer some queries while it is built. */
  readonly previous: Generation<R> | null;
  /** Rows found and not used: thrown away. */
  readonly unused: readonly Generation<R>[];
  readonly why: string | null;
  readonly mode: Mode | null;
}

/**
 * What the open does with each projection, from the rows found: the rows of its version to catch
 * up, or how it is built (in the open, tried there, or in the background), and what answers
 * meanwhile.
 */
export function planOpen<R>(
  slots: Iterable<Slot<R>>,
  generations: readonly Generation<R>[],
  how: {
    /** Why the store threw its rows away, if it did. */
    readonly discarded: string | null;
    /** Whether a build may run in a worker (a folder, a worker, no wait for the index). */
    readonly inWorker: (definition: ProjectionDefinition<R>) => boolean;
    readonly backgroundFrom: number;
  },
): Plan<R>[] {
  const found = [...slots].map((slot) => {
    const { definition } = slot;
    const mine = generations.filter((g) => g.entry.projection === definition.name);
    const serving = mine.find((g) => g.entry.role === 'serving');
    const building = mine.find((g) => g.entry.role === 'building');
    const lost = serving ?? building;
    const ofVersion = (g: Generation<R> | undefined): boolean =>
      g !== undefined && usable(g) && g.entry.version === definition.version;
    // built, and not taken over before a crash: it takes over now
    const current = ofVersion(building) ? building : ofVersion(serving) ? serving : undefined;
    const previous =
      current === undefined &&
      serving !== undefined &&
      usable(serving) &&
      answeredBy(definition, serving.entry.version).length > 0
        ? serving
        : undefined;
    return {
      slot,
      current: current ?? null,
      previous: previous ?? null,
      unused: mine.filter((g) => g !== current && g !== previous),
      why: current === undefined ? whyBuilt(lost, definition, how.discarded) : null,
    };
  });
  const known = Math.max(
    0,
    ...found.flatMap((p) => [p.current, p.previous].map((g) => g?.checkpoint?.resume.position ?? 0)),
  );
  return found.map((plan) => {
    if (plan.current !== null) return { ...plan, mode: null };
    const mode: Mode = !how.inWorker(plan.slot.definition)
      ? 'open'
      : known >= how.backgroundFrom
        ? 'background'
        : 'tried';
    return { ...plan, mode };
  });
}

/** Whether rows can be caught up from their checkpoint. */
export function usable<R>(g: Generation<R>): boolean {
  return g.distrust === null && !g.building && g.checkpoint !== null && g.storedVersion === g.entry.version;
}

/** Why a projection is built, from the rows it had (none: `discarded`, the store's reason, or a new read model). */
export function whyBuilt<R>(
  serving: Generation<R> | undefined,
  definition: ProjectionDefinition<R>,
  discarded: string | null,
): string | null {
  if (serving === undefined) return discarded;
  if (serving.entry.role === 'building' && serving.distrust === null) return 'an earlier build did not finish';
  if (serving.distrust !== null) return serving.distrust;
  if (serving.building) return 'an earlier build did not finish';
  if (serving.checkpoint === null) return 'it has no checkpoint';
  if (serving.entry.version !== definition.version)
    return `it is of version ${serving.entry.version}, and this ledgerstore reads version ${definition.version}`;
  return `its rows are of version ${String(serving.storedVersion)}, and its registry says ${serving.entry.version}`;
}

export const NO_ROWS: RowReader = {
  get: async () => undefined,
  range: async function* () {},
};

/** The names of a projection's queries. */
export function queriesOf<R>(definition: ProjectionDefinition<R>): string[] {
  return Object.keys(definition.queries(NO_ROWS));
}

/** The queries rows of `version` answer as `definition`'s version does. */
export function answeredBy<R>(definition: ProjectionDefinition<R>, version: number): string[] {
  const since = (definition.answersSince ?? {}) as { readonly [query: string]: number | undefined };
  return queriesOf(definition).filter((q) => {
    const from = since[q];
    return from !== undefined && from <= version && version < definition.version;
  });
}

/** What tells two checkpoints apart: the position and the fingerprint of the log there. */
export const pointKey = (c: Checkpoint): string => `${c.resume.position}:${c.resume.fingerprint}`;

/** The distinct checkpoints of a list (by position and fingerprint). */
export function distinct(checkpoints: readonly Checkpoint[]): Checkpoint[] {
  const seen = new Map<string, Checkpoint>();
  for (const c of checkpoints) seen.set(pointKey(c), c);
  return [...seen.values()];
}

/** Whether rows need a batch at the end of the read-through: staged records, or a checkpoint behind. */
export function changed<R>(g: Generation<R>, checkpoint: Checkpoint): boolean {
  const c = g.checkpoint;
  return (
    g.staged > 0 ||
    g.building ||
    c === null ||
    c.resume.position !== checkpoint.resume.position ||
    c.resume.fingerprint !== checkpoint.resume.fingerprint ||
    JSON.stringify(c.resume.cursor) !== JSON.stringify(checkpoint.resume.cursor)
  );
}

/** The registry with `generations` in it, in `role` (added when they are not in it). */
export function registryWith<R>(
  registry: Registry,
  generations: readonly Generation<R>[],
  role: 'serving' | 'building',
): Registry {
  const ids = new Set(registry.generations.map((g) => g.id));
  const added = generations.filter((g) => !ids.has(g.entry.id)).map((g) => ({ ...g.entry, role }));
  return withRole(
    { ...registry, generations: [...registry.generations, ...added] },
    generations.map((g) => g.entry.id),
    role,
  );
}

/** Generations by the database they are in. */
export function byDatabase<R>(generations: readonly Generation<R>[]): Map<Database, Generation<R>[]> {
  const grouped = new Map<Database, Generation<R>[]>();
  for (const generation of generations) {
    const list = grouped.get(generation.db);
    if (list === undefined) grouped.set(generation.db, [generation]);
    else list.push(generation);
  }
  return grouped;
}
