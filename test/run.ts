/**
 * Runs every test file under `dist/test` (files ending in `.test.js`) in one uvu run, then prints
 * uvu's totals as one last line, `N passed, N failed`, for CI. Exits non-zero when a test failed.
 *
 * `node dist/test/run.js [pattern]` runs only the files whose path contains `pattern`.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from 'uvu/run';

const here = fileURLToPath(new URL('.', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return entry.name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

const pattern = process.argv[2] ?? '';
const files = testFiles(here).filter((file) => relative(here, file).includes(pattern));

// uvu prints its totals ("Total: N", "Passed: N") and sets the exit code; keep what it printed
// to read the totals back.
let printed = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  printed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

function totals(): { total: number; passed: number } | null {
  const plain = printed.replace(/\u001b\[[0-9;]*m/g, '');
  const total = /Total:\s+(\d+)/.exec(plain);
  const passed = /Passed:\s+(\d+)/.exec(plain);
  return total && passed ? { total: Number(total[1]), passed: Number(passed[1]) } : null;
}

process.on('exit', (code) => {
  const t = totals();
  if (t === null) {
    write(`0 passed, ${files.length === 0 ? 0 : 1} failed\n`);
    if (code === 0 && files.length > 0) process.exitCode = 1;
    return;
  }
  write(`${t.passed} passed, ${t.total - t.passed} failed\n`);
});

await run(files.map((file) => ({ name: relative(here, file), file })));
