/**
 * The harnesses' base seeds, each fixed unless its environment variable names another, so that a
 * failing run can be replayed: `LEDGERSTORE_CRASH_SEED` for the crash harnesses (test/crash/ and
 * the PostgreSQL processes), `LEDGERSTORE_FUZZ_SEED` for the fuzz properties (test/fuzz/).
 */

/** The integer in the environment variable `variable`, or `fallback` when it is not set. */
export function seedFrom(variable: string, fallback: number): number {
  const raw = process.env[variable];
  if (raw === undefined) return fallback;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`${variable} must be an integer, not ${JSON.stringify(raw)}`);
  return seed;
}

/** The base seed of the crash harnesses. */
export const CRASH_SEED = seedFrom('LEDGERSTORE_CRASH_SEED', 5);

/** The base seed of the fuzz properties, from which each property's own is derived. */
export const FUZZ_SEED = seedFrom('LEDGERSTORE_FUZZ_SEED', 20260928);
