/**
 * Where a read model's registry and databases are: a folder of its own (`folder.ts`: the registry
 * in its marker, a LevelDB database per `db-<n>/`), or one database a caller made (the registry
 * at a key of it, every generation's rows beside it). The engine (`set.ts`) asks a store for the
 * registry, for the database a generation is in, and for a new database to build in.
 *
 * @module
 */
import { LedgerIoError } from '../errors.js';
import { levelFailure } from '../level-failure.js';
import { Database, type Db } from './database.js';
import type { ModelFolder, StatusFile } from './folder.js';
import { cbor, REGISTRY_KEY, SCHEMA, seal, unseal } from './layout.js';
import { EMPTY_REGISTRY, type Registry, registryFrom } from './registry.js';

/** A read model's registry and databases. */
export interface Store {
  /** The folder, or the database's name, for messages. */
  readonly name: string;
  /** The folder, `null` for a caller's database (no worker thread can reach it). */
  readonly folder: string | null;
  /** Why everything it held was thrown away at open (another layout, a registry that does not read), or `null`. */
  readonly discarded: string | null;
  readonly registry: Registry;
  /** Writes the registry in one step (synced). */
  writeRegistry(registry: Registry): Promise<void>;
  /** The database `name` (`null` in a caller's database), opened once; and why its rows were thrown away at open, if they were. */
  database(name: string | null): Promise<{ readonly database: Database; readonly discarded: string | null }>;
  /** Where database `name` is on disk (a folder store only). */
  pathOf(name: string): string;
  /** Closes database `name` and removes it (a folder store: a database no generation uses any more). */
  removeDatabase(name: string): Promise<void>;
  writeStatus(status: StatusFile): void;
  close(): Promise<void>;
}

/** A read model in a folder of its own. */
export class FolderStore implements Store {
  private readonly opened = new Map<string, Promise<{ database: Database; discarded: string | null }>>();

  constructor(
    private readonly model: ModelFolder,
    readonly discarded: string | null,
  ) {}

  get name(): string {
    return this.model.folder;
  }

  get folder(): string {
    return this.model.folder;
  }

  get registry(): Registry {
    return this.model.registry;
  }

  async writeRegistry(registry: Registry): Promise<void> {
    this.model.writeRegistry(registry);
  }

  database(name: string | null): Promise<{ database: Database; discarded: string | null }> {
    const key = name ?? 'db-0';
    let opened = this.opened.get(key);
    if (opened === undefined) {
      opened = this.model.openDatabase(key);
      this.opened.set(key, opened);
      opened.catch(() => this.opened.delete(key));
    }
    return opened;
  }

  pathOf(name: string): string {
    return this.model.pathOf(name);
  }

  async removeDatabase(name: string): Promise<void> {
    const opened = this.opened.get(name);
    this.opened.delete(name);
    if (opened !== undefined) await (await opened).database.close();
    this.model.removeDatabase(name);
  }

  writeStatus(status: StatusFile): void {
    this.model.writeStatus(status);
  }

  async close(): Promise<void> {
    try {
      for (const opened of this.opened.values()) {
        const found = await opened.catch(() => null);
        await found?.database.close();
      }
    } finally {
      this.opened.clear();
      this.model.close();
    }
  }
}

/** Keys of a read model of ledgerstore's earlier layout (schema 2) in a caller's database. */
const LEGACY_KEYS = ['!meta!checkpoint', '!meta!totals'].map((key) => Buffer.from(key, 'latin1'));

/**
 * A read model in one database: a caller's (which it never closes), or a fresh one in memory (a
 * projection's copy while its rows are built, or the projections of a ledger without a folder).
 */
export class DatabaseStore implements Store {
  readonly folder = null;
  private current: Registry;

  private constructor(
    private readonly only: Database,
    registry: Registry,
    readonly discarded: string | null,
  ) {
    this.current = registry;
  }

  /**
   * Opens the store in `db` (opened if it is not). A read model of the earlier layout, or a
   * registry that does not read, is cleared, and why is given.
   */
  static async open(db: Db, name: string, owned: boolean): Promise<DatabaseStore> {
    try {
      await db.open();
    } catch (e) {
      throw levelFailure(name, e, 'index');
    }
    const database = new Database(name, db, null, owned);
    const stored = database.getSync(REGISTRY_KEY);
    const registry = stored === undefined ? null : registryFrom(unseal(REGISTRY_KEY, stored));
    let discarded: string | null = null;
    if (stored !== undefined && registry === null) discarded = 'its registry does not read; it was discarded';
    else if (stored === undefined && LEGACY_KEYS.some((key) => database.getSync(key) !== undefined))
      discarded = `it is of schema version 2, and this ledgerstore reads version ${SCHEMA}`;
    if (discarded !== null) {
      try {
        await db.clear();
      } catch (e) {
        throw database.failure(e);
      }
    }
    return new DatabaseStore(database, registry ?? EMPTY_REGISTRY, discarded);
  }

  get name(): string {
    return this.only.name;
  }

  get registry(): Registry {
    return this.current;
  }

  async writeRegistry(registry: Registry): Promise<void> {
    await this.only.submit((batch) => batch.put(REGISTRY_KEY, seal(REGISTRY_KEY, cbor(registry))), true);
    this.current = registry;
  }

  async database(): Promise<{ database: Database; discarded: null }> {
    return { database: this.only, discarded: null };
  }

  pathOf(name: string): string {
    throw new LedgerIoError(this.name, new Error(`a database's read model has no folder for ${name}`));
  }

  async removeDatabase(): Promise<void> {}

  writeStatus(): void {}

  close(): Promise<void> {
    return this.only.close();
  }
}
