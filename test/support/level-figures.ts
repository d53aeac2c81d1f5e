/**
 * The figures of the LevelDB harnesses (`test/crash/level-*.test.ts`): each prints its own, and
 * with `LEDGERSTORE_WRITE_FIGURES=1` also writes them into `docs/reliability.md`, between the
 * markers of its section (`<!-- level:<harness>:start -->` ... `:end -->`), on the line of its
 * scale (`make test`, or `make torture` at `LEDGERSTORE_TORTURE=10`), keeping the other line and
 * the prose around it, as `bench/` writes `docs/benchmarks.md`. Without the variable, a run of
 * the tests changes no file of the repository.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packed.js';
import { SCALE } from './scale.js';

/** What a run at this scale is called in the document. */
const RUN = SCALE === 1 ? '`make test`' : SCALE === 10 ? '`make torture`' : `\`LEDGERSTORE_TORTURE=${SCALE}\``;

/** Prints `figures` for `harness`, and writes them into the document when asked to. */
export function reportFigures(harness: string, figures: string): void {
  console.log(`  ${harness} (SCALE ${SCALE}): ${figures}`);
  if (process.env.LEDGERSTORE_WRITE_FIGURES !== '1') return;
  const file = join(ROOT, 'docs', 'reliability.md');
  const start = `<!-- level:${harness}:start -->`;
  const end = `<!-- level:${harness}:end -->`;
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`docs/reliability.md has no section ${start} ... ${end}`);
  const lines = text
    .slice(from + start.length, to)
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith(`- ${RUN}:`));
  lines.push(`- ${RUN}: ${figures}`);
  lines.sort((a, b) => (a.includes('`make test`') ? -1 : b.includes('`make test`') ? 1 : 0));
  writeFileSync(file, `${text.slice(0, from + start.length)}\n${lines.join('\n')}\n${text.slice(to)}`);
}
