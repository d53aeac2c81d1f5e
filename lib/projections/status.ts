/**
 * Where a read model stands, for `ledgerstore index status` and `index rebuild`, without opening
 * its log: its registry and the checkpoint of each projection's rows, read from its databases;
 * or, while another process has it open (and LevelDB lets no other open in), what that process
 * says of it in its status file.
 *
 * @module
 */
import { levelFolder } from '../leveldb/folder.js';
import { markerOf } from '../leveldb/marker.js';
import type { ProjectionDefinition, ProjectionProgress } from './definition.js';
import { heldElsewhere, ModelFolder, readStatus, type StatusFile } from './folder.js';
import { Generation } from './generation.js';
import { type Checkpoint, SCHEMA } from './layout.js';
import { FolderStore } from './store.js';

/** One projection's rows, as the read model holds them. */
export interface StoredProjection<R> {
  readonly name: string;
  /** The version of the rows that serve, or `null` when none do. */
  readonly version: number | null;
  readonly checkpoint: Checkpoint | null;
  /** Whether those rows are ready for this ledgerstore: its version, complete, not damaged. */
  readonly ready: boolean;
  /** Why they are not, or `null`. */
  readonly why: string | null;
  /** The definition, and its queries over the rows when they are ready. */
  readonly definition: ProjectionDefinition<R>;
  readonly queries: object | null;
}

/** What the folder holds: nothing, rows that can be read, or a read model another process has open. */
export type Standing<R> =
  | { readonly state: 'missing' }
  | { readonly state: 'empty' }
  | { readonly state: 'held'; readonly schema: number | null; readonly status: StatusFile | null }
  | { readonly state: 'open'; readonly schema: number; readonly projections: readonly StoredProjection<R>[] };

/**
 * Looks at the read model in `folder` for the projections `definitions`, and runs `body` while it
 * is open (its lock held: nothing changes it meanwhile). Makes nothing where there is none.
 */
export async function withStanding<R, T>(
  folder: string,
  definitions: readonly ProjectionDefinition<R>[],
  body: (standing: Standing<R>) => Promise<T>,
): Promise<T> {
  const there = levelFolder(folder);
  if (there === 'missing') return body({ state: 'missing' });
  if (there === 'empty') return body({ state: 'empty' });
  if (heldElsewhere(folder)) {
    const marker = markerOf(folder);
    const schema = typeof marker === 'object' && marker !== null ? Number(marker['schema']) : null;
    return body({ state: 'held', schema: Number.isSafeInteger(schema) ? schema : null, status: readStatus(folder) });
  }
  const { model, discarded } = await ModelFolder.open(folder);
  const store = new FolderStore(model, discarded);
  try {
    const registry = model.registry;
    const projections: StoredProjection<R>[] = [];
    for (const definition of definitions) {
      const entry = registry.generations.find((g) => g.projection === definition.name && g.role === 'serving');
      if (entry === undefined) {
        projections.push({
          name: definition.name,
          version: null,
          checkpoint: null,
          ready: false,
          why: discarded,
          definition,
          queries: null,
        });
        continue;
      }
      const { database, discarded: lost } = await store.database(entry.db);
      const generation = new Generation(entry, definition, database);
      if (lost !== null) generation.distrust = `${lost}; it was discarded`;
      else generation.load();
      const why =
        generation.distrust ??
        (generation.building
          ? 'an earlier build did not finish'
          : generation.checkpoint === null
            ? 'it has no checkpoint'
            : entry.version !== definition.version
              ? `it is of version ${entry.version}, and this ledgerstore reads version ${definition.version}`
              : null);
      projections.push({
        name: definition.name,
        version: entry.version,
        checkpoint: generation.checkpoint,
        ready: why === null,
        why,
        definition,
        queries: why === null ? generation.queries : null,
      });
    }
    return await body({ state: 'open', schema: SCHEMA, projections });
  } finally {
    await store.close();
  }
}

/**
 * Empties the read model in `folder` (making one there if there is none), for a build from the
 * log's start: every database removed, the registry emptied.
 */
export async function resetIndex(folder: string): Promise<void> {
  const { model, discarded } = await ModelFolder.open(folder);
  const store = new FolderStore(model, discarded);
  try {
    const names = [...new Set(model.registry.generations.flatMap((g) => (g.db === null ? [] : [g.db])))];
    model.writeRegistry({ generations: [], next: model.registry.next });
    for (const name of names) await store.removeDatabase(name);
  } finally {
    await store.close();
  }
}

export type { ProjectionProgress };
export { SCHEMA };
