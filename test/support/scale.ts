/**
 * How hard the crash and fuzz harnesses try: `make test` runs them at 1, `make torture` at 10
 * (`LEDGERSTORE_TORTURE=10`). Every count of trials, crash states or fuzz runs is multiplied by it.
 */
const raw = process.env.LEDGERSTORE_TORTURE;
const parsed = raw === undefined ? 1 : Number(raw);
if (!Number.isInteger(parsed) || parsed < 1)
  throw new Error(`LEDGERSTORE_TORTURE must be a whole number from 1, not ${JSON.stringify(raw)}`);

/** The factor every harness multiplies its counts by. */
export const SCALE = parsed;

/** `n` times the scale. */
export const scaled = (n: number): number => n * SCALE;
