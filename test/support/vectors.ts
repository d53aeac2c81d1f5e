/**
 * The canonical vectors: 400 ledger lines written by serde_json itself (see
 * `test/fixtures/serde-json/README.md`). Read from the repository, so a fresh clone has them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The vectors file, in the source tree (the tests run from `dist/test`, two levels below the root). */
export const VECTORS = fileURLToPath(new URL('../../../test/fixtures/serde-json/canonical.jsonl', import.meta.url));

/** The vectors' bytes: 400 lines, each ending in a newline. */
export function vectorBytes(): Buffer {
  return readFileSync(VECTORS);
}
