/**
 * The projection of the counts: how many items are decided, sent, waiting, failed and skipped.
 * One row, `c`: `[decided, sent, waiting, failed, skipped]`, written once a batch. Each record is
 * one `decided`, `sent` or `failed`, so the counts say how many records the rows hold: counts that
 * do not add up to their checkpoint are damage, and the rows are built again.
 *
 * @module
 */
import type { ProjectionDefinition } from '../../projections/definition.js';
import type { Counts, Record } from '../record.js';

/** What the counts projection answers. */
export interface CountQueries {
  counts(): Promise<Counts>;
}

type Row = [decided: number, sent: number, waiting: number, failed: number, skipped: number];

const NONE: Row = [0, 0, 0, 0, 0];

/**
 * The counts projection (`counts()`): one row of the five counts, updated once a batch. Part of the
 * Honcho read model (`HONCHO_PROJECTIONS`).
 */
export const countsProjection: ProjectionDefinition<Record, CountQueries> = {
  name: 'counts',
  version: 1,
  worker: { module: import.meta.url, export: 'countsProjection' },

  reads: () => ['c'],

  apply(records, rows) {
    let [decided, sent, waiting, failed, skipped] = rows.get<Row>('c') ?? NONE;
    for (const record of records) {
      if (record.type === 'decided') {
        decided++;
        if (record.action.type === 'skip') skipped++;
        else waiting++;
      } else {
        waiting--;
        if (record.type === 'sent') sent++;
        else failed++;
      }
    }
    rows.put('c', [decided, sent, waiting, failed, skipped]);
  },

  queries: (rows) => ({
    async counts() {
      const [decided, sent, waiting, failed, skipped] = (await rows.get<Row>('c')) ?? NONE;
      return { decided, sent, waiting, failed, skipped };
    },
  }),

  async verify(rows, records) {
    const [decided, sent, , failed] = (await rows.get<Row>('c')) ?? NONE;
    return decided + sent + failed === records
      ? null
      : `its counts (${decided} decided, ${sent} sent, ${failed} failed) do not add up to its checkpoint's ${records} records`;
  },
};
