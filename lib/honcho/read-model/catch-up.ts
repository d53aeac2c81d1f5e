/**
 * The catch-up at open: the records a log replays into the read model, from its checkpoint (or
 * its start), each checked against the rules and staged, written a batch at a time.
 *
 * @module
 */
import type { ResumePoint } from '../../log.js';
import { itemKey, type Record } from '../record.js';
import { refusal } from '../rules.js';
import { BloomFilter } from './caches.js';
import { BATCH, type Bytes, SCHEMA } from './layout.js';
import type { ReadModel } from './read-model.js';
import type { Stage } from './stage.js';

/**
 * The records a log replays into the read model at open: each checked against the rules and
 * staged, written a batch at a time (the first of several marks the read model `building`), the
 * checkpoint with the last.
 */
export class CatchUp {
  private stage: Stage;
  private wroteAny = false;
  /**
   * In a build from empty, every item with a row was written by this build: a filter of their
   * keys says of most undecided items that LevelDB need not be asked. `null` in a catch-up.
   */
  private readonly written: BloomFilter | null;
  private readonly absent: ((key: string) => boolean) | undefined;
  /** In a build from empty, the keys of every stack (see {@link Stage}); `null` in a catch-up. */
  private readonly held: Map<string, Bytes[]> | null;
  /** How many records it took in. */
  count = 0;

  constructor(
    private readonly model: ReadModel,
    private readonly log: string,
  ) {
    this.written = model.isNew ? new BloomFilter() : null;
    this.held = model.isNew ? new Map() : null;
    this.stage = model.stage(this.held);
    const written = this.written;
    this.absent = written === null ? undefined : (key) => !written.has(key);
  }

  /** Checks and stages one record (the log's `replay`). */
  async replay(record: Record): Promise<void> {
    const refused = refusal(record, await this.stage.stateOf(record.item, this.absent));
    if (refused !== null) throw refused;
    if (record.type === 'decided') this.written?.add(itemKey(record.item));
    await this.stage.add(record);
    this.count++;
    if (this.stage.size >= BATCH) {
      this.model.submit(this.stage, null, true);
      this.stage.written();
      this.wroteAny = true;
      this.stage = this.model.stage(this.held);
    }
  }

  /** Writes what is staged with the checkpoint at `point`, where the log now is. */
  async finish(point: ResumePoint): Promise<void> {
    if (
      this.stage.size === 0 &&
      !this.wroteAny &&
      this.model.checkpoint !== null &&
      samePoint(this.model.checkpoint.resume, point)
    )
      return;
    await this.model.write(this.stage, { schema: SCHEMA, resume: point, log: this.log }, false);
  }
}

function samePoint(a: ResumePoint, b: ResumePoint): boolean {
  return (
    a.position === b.position &&
    a.fingerprint === b.fingerprint &&
    JSON.stringify(a.cursor) === JSON.stringify(b.cursor)
  );
}
