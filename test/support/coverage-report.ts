/**
 * `make coverage`'s last step: reads what c8 wrote (`<dir>/coverage-final.json`, istanbul's
 * format, mapped back to the `.ts` sources) and prints the branch coverage of each backend
 * (`backends/*.ts`), then every branch of them that no test took, with its line.
 *
 * `node dist/test/support/coverage-report.js [coverage-dir]`
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

interface Position {
  readonly line: number;
  readonly column: number | null;
}
interface Range {
  readonly start: Position;
  readonly end: Position;
}
interface FileCoverage {
  readonly path: string;
  readonly branchMap: {
    readonly [id: string]: { readonly type: string; readonly loc: Range; readonly locations: readonly Range[] };
  };
  readonly b: { readonly [id: string]: readonly number[] };
}

const dir = process.argv[2] ?? 'coverage';
const coverage = JSON.parse(readFileSync(join(dir, 'coverage-final.json'), 'utf8')) as {
  readonly [path: string]: FileCoverage;
};
const root = process.cwd();

const backends = Object.values(coverage)
  .filter((file) => /(^|\/)backends\/[^/]+\.ts$/.test(relative(root, file.path)))
  .sort((a, b) => a.path.localeCompare(b.path));

let taken = 0;
let total = 0;
const missed: string[] = [];
console.log('Branch coverage of the backends (c8, every test):');
for (const file of backends) {
  const name = relative(root, file.path);
  const source = readFileSync(file.path, 'utf8').split('\n');
  let fileTaken = 0;
  let fileTotal = 0;
  for (const [id, branch] of Object.entries(file.branchMap)) {
    const counts = file.b[id] ?? [];
    branch.locations.forEach((location, arm) => {
      fileTotal++;
      if ((counts[arm] ?? 0) > 0) {
        fileTaken++;
        return;
      }
      const { line, column } = location.start.line > 0 ? location.start : branch.loc.start;
      const text = (source[line - 1] ?? '').slice(column ?? 0).trim();
      const arms = branch.locations.length === 1 ? '' : ` (arm ${arm + 1} of ${branch.locations.length})`;
      missed.push(
        `  ${name}:${line}:${(column ?? 0) + 1}${arms}: ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`,
      );
    });
  }
  taken += fileTaken;
  total += fileTotal;
  const pct = fileTotal === 0 ? 100 : (100 * fileTaken) / fileTotal;
  console.log(`  ${name.padEnd(22)} ${pct.toFixed(2).padStart(6)}% of branches (${fileTaken}/${fileTotal})`);
}
console.log(
  `  ${'all backends'.padEnd(22)} ${(total === 0 ? 100 : (100 * taken) / total).toFixed(2).padStart(6)}% of branches (${taken}/${total})`,
);
console.log(
  missed.length === 0
    ? 'Every branch of the backends was taken.'
    : `Branches of the backends no test took (${missed.length}):`,
);
for (const line of missed) console.log(line);
